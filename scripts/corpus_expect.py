"""What a torch.export'ed model is expected to be, written next to it: shared by gen_zoo.py and gen_corpus.py.

`save_export(out, name, source, model, ep, args_list)` writes, for the exported program `ep` of
`model` traced from real inputs,
  NAME.pt2               torch.export.save() of `ep`, re-packed with deflate
  NAME.b{i}.in{j}.npy    the inputs of each binding i (`args_list[i]`)
  NAME.b{i}.out{j}.npy   PyTorch's eager outputs for them
  NAME.expect.json       torch version, schema version, symbols and ranges (null = int_oo), the
                         bindings, every guard of `guards_code` as torch evaluates it on the real
                         inputs of each binding, every tensor's shape/strides at each binding (sympy),
                         and the op multisets of the exported graph (`none`), of
                         `ep.run_decompositions()` (`core`) and of
                         `ep.run_decompositions(select_decomp_table())` (`inductor`), each with its
                         nodes `[target, name, original node]` (from `from_node`) for node-level diffs;
                         `core_merged_symbols`/`inductor_merged_symbols`: input dims whose symbol the
                         decomposition replaced by another's (then it is of a narrower program).
tests/zoo.rs reads exactly these files; nothing about a model is hard-coded there.
"""
import json
import os
import types
from collections import Counter

import numpy as np
import sympy
import torch
import torch._inductor.lowering  # noqa: F401  Inductor's max_pool2d decomposition reads it, and
# select_decomp_table() does not import it (2.11 and 2.15 raise AttributeError)


def schema_version():
    from torch._export.serde.schema import SCHEMA_VERSION

    return ".".join(map(str, SCHEMA_VERSION))


def bound(v):
    """A range end as an int, or None for `int_oo` / `oo` (unbounded)."""
    try:
        return int(v) if v.is_integer and v.is_finite is not False and abs(v) < 2**63 else None
    except (TypeError, AttributeError, OverflowError):
        return None


def fx_target(n):
    """The node's target as the archive names it. A Python function (`torch.sym_min`) prints as
    `<function sym_min at 0x7f...>`, an address that differs per process; torch.export serializes
    it by module path, which is also how the workbench names it. Builtins keep their printed name
    (`<built-in function mul>`), which readers already map to `_operator.mul`."""
    t = n.target
    if isinstance(t, types.FunctionType):
        return f"{t.__module__}.{t.__qualname__}"
    return str(t)


def origin(n):
    """The original exported node a decomposed node came from (the root of `from_node`)."""
    src = n.meta.get("from_node")
    name = None
    while src:
        s = src[0] if isinstance(src, list) else src
        name = s.name
        src = getattr(s, "from_node", None)
    return name


def op_nodes(ep):
    return [[fx_target(n), n.name, origin(n)] for n in ep.graph.nodes if n.op == "call_function"]


def hist(nodes):
    return dict(sorted(Counter(t for t, _, _ in nodes).items()))


def flat(v):
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from flat(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from flat(x)
    else:
        yield v


def sym_int(e, subs):
    if isinstance(e, torch.SymInt):
        e = e.node.expr
    if isinstance(e, int):
        return e
    return int(sympy.sympify(e).xreplace(subs))


def binding_of(ep, args):
    """Symbol → value, read off the placeholders' symbolic shapes and the real inputs."""
    bind = {}
    user = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    by_name = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    for name, t in zip(user, flat(args)):
        val = by_name[name].meta["val"]
        for d, real in zip(val.shape, t.shape):
            if isinstance(d, torch.SymInt) and isinstance(d.node.expr, sympy.Symbol):
                bind[str(d.node.expr)] = int(real)
    return bind


def shapes_at(ep, bind):
    syms = {str(s): s for s in ep.range_constraints}
    subs = {syms[k]: sympy.Integer(v) for k, v in bind.items() if k in syms}
    out = {}
    for n in ep.graph.nodes:
        val = n.meta.get("val")
        if val is None:
            continue
        items = list(flat(val))
        if len(items) == 1 and isinstance(items[0], torch.Tensor):
            t = items[0]
            out[n.name] = {
                "dtype": str(t.dtype).replace("torch.", ""),
                "shape": [sym_int(d, subs) for d in t.shape],
                "strides": [sym_int(d, subs) for d in t.stride()],
            }
        elif len(items) == 1 and isinstance(items[0], torch.SymInt):
            out[n.name] = {"int": sym_int(items[0], subs)}
    return out


def guards_at(ep, model, args):
    """Each `guards_code` line as Python evaluates it on the real inputs (`L` = forward's arguments)."""
    import inspect

    code = list(getattr(ep, "_guards_code", []) or [])
    params = list(inspect.signature(model.forward).parameters)
    L = dict(zip(params, args))
    vals = []
    for g in code:
        try:
            vals.append(bool(eval(g, {"L": L, "torch": torch, "math": __import__("math")})))
        except Exception as e:  # recorded, not hidden
            vals.append(f"error: {e!r}")
    return code, vals


def deflate(path):
    """Re-packs torch's stored (uncompressed) archive with deflate: same entries, same bytes,
    about 40 % of the size (model.json is most of it)."""
    import zipfile

    tmp = path + ".tmp"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    os.replace(tmp, path)


def save_npy(prefix, tensors):
    for i, t in enumerate(tensors):
        np.save(f"{prefix}{i}.npy", t.detach().cpu().numpy())


# The corpus tier's tolerance (tests/common/stages.rs: TOL, rel_err).
TOL = 1e-4


def exported_differs(ep, args, outs):
    """(why, the exported program's outputs) where running the exported program on `args` does not
    give eager's `outs` within TOL; None where it does, or where it cannot run (the tier's eval
    stage then meets the same error in the interpreter's terms)."""
    try:
        with torch.no_grad():
            got = ep.module()(*args)
    except Exception:
        return None
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    if len(got) != len(outs):
        return f"the exported program gives {len(got)} outputs, eager {len(outs)}", got
    for j, (g, w) in enumerate(zip(got, outs)):
        if not (isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor)) or g.shape != w.shape:
            return f"out{j}: the exported program's output differs in kind or shape from eager's", got
        g64, w64 = g.detach().double(), w.detach().double()
        scale = max(1e-6, float(w64.abs().max())) if w64.numel() else 1.0
        err = float((g64 - w64).abs().max()) / scale if w64.numel() else 0.0
        if not err < TOL:
            return f"out{j}: the exported program differs from eager by relative error {err:.3e}", got
    return None


def symbols_merged(path, dep):
    """Input dims whose symbol a decomposition `dep` of the archive at `path` replaced by another
    one: the archive's `tensor_values` name one symbol, the decomposed placeholder another (torch
    2.15's `run_decompositions` re-traces CLIP-likes with the image batch `s99` of `pixel_values`
    as the text batch `s72`, equal hints, and writes that back into the original's metadata too;
    2.11 keeps them apart). The decomposed program is then narrower than the archive's (both
    batches equal) and shares size nodes the archive's cannot: a torch failure, recorded."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        entry = next((n for n in z.namelist() if n.endswith("models/model.json")), None)
        if entry is None:
            return []
        saved = json.loads(z.read(entry))["graph_module"]["graph"]["tensor_values"]
    merged = []
    for n in dep.graph.nodes:
        val = n.meta.get("val")
        if n.op != "placeholder" or n.name not in saved or not hasattr(val, "shape"):
            continue
        for d, (now, was) in enumerate(zip(val.shape, saved[n.name]["sizes"])):
            expr = was.get("as_expr", {}).get("expr_str") if isinstance(was, dict) else None
            if expr is not None and str(sympy.sympify(expr)) != str(now):
                merged.append(f"{n.name}[{d}]: {sympy.sympify(expr)} became {now}")
    return merged


def save_export(out, name, source, model, ep, args_list, note=None):
    """Writes NAME.pt2, the bindings' npy files and NAME.expect.json; returns (expect dict, pt2 bytes)."""
    path = f"{out}/{name}.pt2"
    torch.export.save(ep, path)
    ep = torch.export.load(path)  # expectations from the archive as the workbench reads it
    deflate(path)
    exp = {
        "name": name,
        "source": source,
        "torch_version": torch.__version__,
        "schema_version": schema_version(),
        "symbols": {
            str(s): {"min": bound(vr.lower), "max": bound(vr.upper)} for s, vr in ep.range_constraints.items()
        },
        "bindings": [],
    }
    if note:
        exp["export_note"] = note
    for i, args in enumerate(args_list):
        with torch.no_grad():
            out_ = model(*args)
        outs = list(out_) if isinstance(out_, (tuple, list)) else [out_]
        save_npy(f"{out}/{name}.b{i}.in", args)
        save_npy(f"{out}/{name}.b{i}.out", outs)
        differs = exported_differs(ep, args, outs)
        if differs:
            # torch's own graph computes something else than eager (UMT5 under torch 2.11): its
            # outputs are kept too, so the interpreter is still checked, against the graph.
            save_npy(f"{out}/{name}.b{i}.epout", differs[1])
            exp.setdefault("export_differs", f"binding {i}: {differs[0]}")
        bind = binding_of(ep, args)
        code, vals = guards_at(ep, model, args)
        exp["bindings"].append({"bindings": bind, "guards": vals, "values": shapes_at(ep, bind)})
        exp["guards_code"] = code
    nodes = {"none": op_nodes(ep)}
    try:
        core = ep.run_decompositions()
        nodes["core"] = op_nodes(core)
        exp["core_merged_symbols"] = symbols_merged(path, core)
    except Exception as e:  # recorded, not hidden (gpt2: torch's SDPA decomposition vs a view)
        exp["core_error"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    try:
        from torch._inductor.decomposition import select_decomp_table

        inductor = torch.export.load(path).run_decompositions(select_decomp_table())
        nodes["inductor"] = op_nodes(inductor)
        exp["inductor_merged_symbols"] = symbols_merged(path, inductor)
    except Exception as e:  # recorded, not hidden
        exp["inductor_error"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    exp["ops"] = {k: hist(v) for k, v in nodes.items()}
    exp["nodes"] = nodes
    with open(f"{out}/{name}.expect.json", "w") as f:
        json.dump(exp, f, indent=0, sort_keys=True)
    return exp, os.path.getsize(path)
