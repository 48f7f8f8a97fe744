#!/usr/bin/env python3
"""Every CompositeImplicitAutograd ATen overload traced into the ATen graph it expands to, as data
the workbench embeds (assets/ops/composite-<torch>.json.gz, issue 25).

    python3 scripts/gen_composite_graphs.py OUT.json.gz [--only NAME,NAME] [--shard I/N]
    python3 scripts/gen_composite_graphs.py OUT.json.gz --merge SHARD.json.gz.jsonl...
    python3 scripts/gen_composite_graphs.py OUT.json.gz --only type_as,fft_fftn --into TABLE.json.gz
                                             (re-trace some overloads into an existing table)

For each overload the dispatcher says has a CompositeImplicitAutograd kernel (functional ones: the
workbench functionalizes in-place and out= overloads first), sample arguments are made from its
schema (tensors of rank 1 to 4, float32, and for two-tensor ops float32 against the other float and
integer dtypes and tensors of two ranks; two integer dtypes, bool against float32; integer and
boolean tensors for an op that takes no float; other arguments their schema default, else a small
legal value, and optional `dim` lists also given) and the call is
traced by `make_fx(tracing_mode="symbolic")` with no decomposition table and no duck shaping (each
size its own symbol): the graph torch's own tracing (run_decompositions(), AOT autograd) makes of
the op. A trace that guards on a size (a branch on a symbol) is left out: it would not hold for
every size; two sizes required equal (`linear`'s inner dims) are the op's precondition, which every
graph torch exported meets, and are kept (`requires`).

Each recorded variant is valid for the arguments it was traced with: per tensor argument its
dtype and rank (sizes are symbolic), every other argument its value. Its graph is a list of nodes
(`target`, `args` as [name, value]) whose values are

  {"in": NAME}          the overload's tensor (or tensor-list element [NAME, i]) argument
  {"node": I, "out": K} output K of node I (a tensor or a SymInt)
  {"i"|"f"|"b"|"s": V}  an int, float, bool, string constant; null for None
  {"dtype"|"layout"|"device"|"mf": V}   torch constants, spelled as the workbench's importer does
  [..]                  a list of these

and `outputs` lists the overload's results in the same spelling.
"""
import argparse
import functools
import glob
import gzip
import json
import math
import operator
import os
import sys
import time
import warnings

import torch
from torch.fx.experimental import _config as fx_config
from torch.fx.experimental.proxy_tensor import make_fx

warnings.filterwarnings("ignore")

DTYPE_NAMES = {v: k for k, v in vars(torch).items() if isinstance(v, torch.dtype)}
MIXED = [torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.bool]
SYM_OPS = {operator.mul: "_operator.mul", operator.add: "_operator.add", operator.sub: "_operator.sub",
           operator.floordiv: "_operator.floordiv", operator.neg: "_operator.neg", operator.mod: "_operator.mod"}


def dtype_name(d):
    return str(d).replace("torch.", "")


def composite_overloads(only):
    for qual in sorted(torch._C._dispatch_get_all_op_names()):
        if not qual.startswith("aten::"):
            continue
        name, _, overload = qual[len("aten::"):].partition(".")
        if only and name not in only:
            continue
        if not torch._C._dispatch_has_kernel_for_dispatch_key(qual, "CompositeImplicitAutograd"):
            continue
        packet = getattr(torch.ops.aten, name, None)
        op = getattr(packet, overload or "default", None) if packet is not None else None
        if op is None:
            continue
        schema = op._schema
        if schema.is_mutable or overload.startswith("out") or any(a.alias_info and a.alias_info.is_write for a in schema.arguments):
            continue
        yield f"aten.{name}.{overload or 'default'}", op


def shape_of(rank, i):
    # Sizes apart from each other (3, 4, 5, 6) so that no two dims are equal by accident; a
    # negative rank asks for a square shape (4, 4, 4), for products (`bmm` of equal shapes).
    if rank < 0:
        return [4] * -rank
    return [3 + ((k + i) % 4) for k in range(rank)]


@functools.lru_cache(maxsize=None)
def schema_types(schema_str):
    """Argument name → its type as native_functions.yaml writes it (`Scalar`, `ScalarType?`,
    `SymInt[]`); the C++ schema object spells these as Python types (`number`, `Optional[int]`)."""
    from torchgen.model import FunctionSchema

    f = FunctionSchema.parse(schema_str.split("::", 1)[1])
    return {a.name: str(a.type) for a in f.arguments.flat_all}


def ty(arg, schema):
    return schema_types(str(schema)).get(arg.name, str(arg.type))


def sample_value(arg, rank, dtype, i, schema):
    t = ty(arg, schema)
    if t == "Tensor":
        if dtype == torch.bool:
            return torch.rand(shape_of(rank, 0)) > 0.5
        if not dtype.is_floating_point:
            return torch.randint(0, 3, shape_of(rank, 0), dtype=dtype)
        return torch.randn(shape_of(rank, 0), dtype=dtype)
    if arg.has_default_value():
        return arg.default_value
    if t.endswith("?"):
        return None
    if t in ("int", "SymInt"):
        return 1
    if t in ("float", "Scalar"):
        return 0.5
    if t == "bool":
        return False
    if t.startswith(("int[", "SymInt[")):
        return [1]
    if t == "ScalarType":
        return torch.float32
    if t == "str":
        return "none"
    raise ValueError(f"no sample for {t}")


def tensor_args(schema):
    """The arguments a sample passes a tensor for: optional tensors are left out (None)."""
    return [a for a in schema.arguments if ty(a, schema) == "Tensor"]


def candidates(schema, dtype=torch.float32):
    """(ranks, dtypes) samples, one rank and dtype per tensor: every rank in `dtype`, then for
    two-tensor ops float32 against each other dtype (ranks 2 and 3) and tensors of different
    ranks (`matmul` of a batch of rows by a matrix is `view` + `mm`, of equal ranks `bmm`);
    square shapes only where no other sample fit (`trace_all`)."""
    tensors = tensor_args(schema)
    if not tensors:
        yield (), []
        return
    for rank in (2, 3, 4, 1):
        yield (rank,) * len(tensors), [dtype] * len(tensors)
    if len(tensors) == 2 and dtype == torch.float32:
        for rank in (2, 3):
            for d in (MIXED[:4] if rank == 2 else MIXED[:1]):
                yield (rank, rank), [torch.float32, d]
                yield (rank, rank), [d, torch.float32]
        # Two integer dtypes, equal and apart, and a bool against float32 (`position_ids.type_as(ids32)`,
        # `mask.type_as(x)`): float samples never rename to these (`renaming` in
        # src/decomp/rules/traced.rs keeps floating apart from integer and bool).
        for rank in (2, 3, 4, 1):
            for pair in ([torch.int64, torch.int64], [torch.int64, torch.int32], [torch.bool, torch.float32],
                         [torch.float32, torch.bool]):
                yield (rank, rank), pair
    if len(tensors) == 2:
        # Broadcasting operands of two ranks, a 0-dim one included (`mask | flag`).
        for ranks in ((3, 2), (4, 2), (2, 3), (2, 4), (1, 2), (2, 1), (4, 3), (3, 4), (3, 1), (4, 1), (2, 0), (0, 2)):
            yield ranks, [dtype] * 2


def encode_const(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return {"b": v}
    if isinstance(v, int):
        return {"i": v}
    if isinstance(v, float):
        return {"f": v}
    if isinstance(v, str):
        return {"s": v}
    if isinstance(v, torch.dtype):
        return {"dtype": dtype_name(v)}
    if isinstance(v, torch.layout):
        return {"layout": str(v).replace("torch.", "")}
    if isinstance(v, torch.device):
        return {"device": str(v)}
    if isinstance(v, torch.memory_format):
        return {"mf": str(v).replace("torch.", "")}
    if isinstance(v, (list, tuple)):
        return [encode_const(x) for x in v]
    raise ValueError(f"constant {v!r}")


def encode_graph(gm, names):
    """The traced graph as data; `names`: placeholder order → (argument name, index or None)."""
    refs, nodes, out = {}, [], None
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    sizes = {}
    for n, (arg, idx) in zip(placeholders, names):
        refs[n] = {"in": arg} if idx is None else {"in": [arg, idx]}
        sizes[arg] = [str(d) for d in n.meta["val"].shape]

    def enc(a):
        if isinstance(a, torch.fx.Node):
            return refs[a]
        if isinstance(a, (list, tuple)):
            return [enc(x) for x in a]
        return encode_const(a)

    for n in gm.graph.nodes:
        if n.op == "call_function":
            if n.target is operator.getitem:
                src, k = n.args
                refs[n] = dict(refs[src], out=k) if "node" in refs[src] else None
                if refs[n] is None:
                    raise ValueError("getitem of a non-node")
                continue
            if isinstance(n.target, torch._ops.OpOverload):
                target = "aten." + n.target._schema.name.split("::", 1)[1] + "." + (n.target._overloadname or "default")
                if not n.target._schema.name.startswith("aten::"):
                    target = str(n.target)
                schema_args = n.target._schema.arguments
                args = []
                for i, a in enumerate(n.args):
                    args.append([schema_args[i].name, enc(a)])
                for k, a in n.kwargs.items():
                    args.append([k, enc(a)])
            elif n.target in SYM_OPS:
                target = SYM_OPS[n.target]
                args = [[k, enc(a)] for k, a in zip("ab", n.args)]
            else:
                raise ValueError(f"call of {n.target}")
            refs[n] = {"node": len(nodes), "out": 0}
            nodes.append({"target": target, "args": args, "meta": meta_of(n.meta.get("val"))})
        elif n.op == "output":
            outs = n.args[0]
            out = [enc(o) for o in (outs if isinstance(outs, (list, tuple)) else [outs])]
        elif n.op != "placeholder":
            raise ValueError(f"node kind {n.op}")
    return nodes, out, sizes


def meta_of(val):
    """torch's own metadata of a node's outputs, sizes and strides in the inputs' size symbols:
    what the workbench uses for ops it has no meta function of (`acos`, `norm.ScalarOpt_dim`)."""
    vals = val if isinstance(val, (list, tuple)) else [val]
    out = []
    for v in vals:
        if isinstance(v, torch.Tensor):
            out.append({"dtype": dtype_name(v.dtype), "sizes": [str(d) for d in v.shape], "strides": [str(d) for d in v.stride()]})
        elif isinstance(v, torch.SymInt):
            out.append({"sym": str(v)})
        else:
            out.append(None)
    return out


class Mismatch(Exception):
    pass


def perturbed(v):
    """Another legal-looking value of a non-tensor argument, to see where the trace reads it."""
    if isinstance(v, bool) or v is None:
        return []
    if isinstance(v, int):
        return [v + 1, v - 1]
    if isinstance(v, float):
        return [v + 0.25, v - 0.25]
    if isinstance(v, torch.dtype) and v.is_floating_point:
        return [torch.float64 if v != torch.float64 else torch.float32]
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return [[x + 1 for x in v], [x - 1 for x in v]]
    return []


def wire(a, b, name, v1, v2):
    """Merges two traces that differ only where they read argument `name` (`v1` vs `v2`): each
    differing constant becomes a reference to the argument (or to one element of it)."""
    if a == b:
        return a
    if a == encode_const(v1) and b == encode_const(v2):
        return {"arg": name}
    if isinstance(v1, list):
        for i, (x1, x2) in enumerate(zip(v1, v2)):
            if a == encode_const(x1) and b == encode_const(x2):
                return {"arg": [name, i]}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [wire(x, y, name, v1, v2) for x, y in zip(a, b)]
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        # Metadata follows the values; it is dropped from a variant with wired arguments.
        return {k: a[k] if k == "meta" else wire(a[k], b[k], name, v1, v2) for k in a}
    raise Mismatch(name)


def overlay(merged, wired, base):
    """`merged` with the references `wired` put where `base` had constants."""
    if wired == base:
        return merged
    if isinstance(wired, dict) and "arg" in wired:
        return wired
    if isinstance(wired, list):
        return [overlay(m, w, b) for m, w, b in zip(merged, wired, base)]
    if isinstance(wired, dict):
        return {k: overlay(merged[k], wired[k], base[k]) for k in wired}
    return merged


def trace_once(op, schema, values, decomp):
    tensor_pos = [i for i, v in enumerate(values) if isinstance(v, torch.Tensor)]
    kwarg_only = [a.kwarg_only for a in schema.arguments]

    def call(*ts):
        vals = list(values)
        for p, t in zip(tensor_pos, ts):
            vals[p] = t
        pos = [v for v, k in zip(vals, kwarg_only) if not k]
        kw = {a.name: v for a, v, k in zip(schema.arguments, vals, kwarg_only) if k}
        return op(*pos, **kw)

    call(*[values[p] for p in tensor_pos])  # the eager call must work on these samples
    table = {op: decomp} if decomp is not None else None
    gm = make_fx(call, decomposition_table=table, tracing_mode="symbolic")(*[values[p] for p in tensor_pos])
    shape_env = None
    for n in gm.graph.nodes:
        v = n.meta.get("val")
        if isinstance(v, torch.Tensor) and v.dim() > 0 and isinstance(v.shape[0], torch.SymInt):
            shape_env = v.shape[0].node.shape_env
            break
    # Two sizes that must be equal (`linear`'s inner dims) are the op's precondition, which a
    # graph torch exported already meets; any other guard is a branch on a size.
    guards = [g.expr for g in (shape_env.guards if shape_env is not None else [])]
    conj = [c for g in guards for c in (g.args if g.func.__name__ == "And" else [g])]
    # A disjunction of such equalities and sizes of 1 (`Eq(s1, s3) | Eq(s3, 1)`) is broadcasting's
    # precondition (`expand_as`, `matmul`'s batch dims): met by any exported graph as well, and the
    # graph is the same whichever side holds.
    def size_eq(g):
        return g.func.__name__ == "Equality" and all(x.is_Symbol or x == 1 for x in g.args) and any(x.is_Symbol for x in g.args)

    branch = [g for g in conj if not (size_eq(g) and all(x.is_Symbol for x in g.args))
              and not (g.func.__name__ == "Or" and all(size_eq(x) for x in g.args))]
    if branch:
        raise ValueError("guards on sizes: " + "; ".join(map(str, branch[:3])))
    names = [(schema.arguments[p].name, None) for p in tensor_pos]
    nodes, outs, sizes = encode_graph(gm, names)
    return {"nodes": nodes, "outputs": outs, "sizes": sizes}, [str(g) for g in guards]


OPTIONAL_SET = {"ScalarType?": torch.float32, "Layout?": torch.strided, "Device?": torch.device("cpu"), "bool?": False,
                "int[1]?": [1], "int[]?": [1]}


def dims_sample(rank):
    """A given `dim` list for an op whose schema defaults it to None (`fft_fftn(x, dim=(1, 2))`):
    the last two dims (one of a vector)."""
    return list(range(max(abs(rank) - 2, 0), abs(rank)))


def trace(op, schema, ranks, dtypes, float_scalars, decomp, optionals=(), generic=(), dims=()):
    values, guard = [], {}
    ti = 0
    for i, a in enumerate(schema.arguments):
        t = ty(a, schema)
        if t == "Tensor":
            v = sample_value(a, ranks[ti], dtypes[ti], i, schema)
            guard[a.name] = {"dtype": dtype_name(v.dtype), "rank": v.dim()}
            ti += 1
        else:
            v = sample_value(a, 0, None, i, schema)
            default = a.has_default_value() or t.endswith("?")
            if t == "Scalar" and not a.has_default_value() and not float_scalars:
                v = 1
            if a.name in generic and isinstance(v, (int, float)) and not isinstance(v, bool):
                v, default = 0.5, False  # not the default: a decomposition skipping `alpha == 1` work traces it here
            if a.name in optionals and v is None and t in OPTIONAL_SET:
                v, default = OPTIONAL_SET[t], False
            if a.name in dims and v is None:
                v, default = dims_sample(ranks[0] if ranks else 0), False
            if isinstance(v, torch.Tensor) or (isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v)):
                raise ValueError("tensor list")
            guard[a.name] = {"value": encode_const(v), "default": default}
        values.append(v)
    base, requires = trace_once(op, schema, values, decomp)
    graph = base
    # Where the trace reads a number or a size list, the argument is wired through (any value of
    # its kind and length); where it branches on it, the variant holds for this value only.
    for i, a in enumerate(schema.arguments):
        if isinstance(values[i], torch.Tensor):
            continue
        for v2 in perturbed(values[i]):
            other = list(values)
            other[i] = v2
            try:
                g2, _ = trace_once(op, schema, other, decomp)
                graph = overlay(graph, wire(base, g2, a.name, values[i], v2), base)
                break
            except Exception:
                continue
        else:
            continue
        v1 = values[i]
        kind = "list" if isinstance(v1, list) else "f" if isinstance(v1, float) else "dtype" if isinstance(v1, torch.dtype) else "i"
        guard[a.name] = {"wired": kind, "sample": encode_const(v1), "default": guard[a.name]["default"]}
        if kind == "list" and f'"arg": ["{a.name}"' in json.dumps(graph):
            guard[a.name]["len"] = len(v1)  # read element by element: holds for this length
    if any("wired" in g for g in guard.values()):
        # The recorded metadata holds for the sample's values only.
        for n in graph["nodes"]:
            n.pop("meta", None)
    v = {"guard": guard, **graph}
    if requires:
        v["requires"] = requires
    return v


def trace_all(target, op, decomp):
    schema = op._schema
    variants, seen, last_err = [], set(), None
    scalars = any(ty(a, schema) == "Scalar" and not a.has_default_value() for a in schema.arguments)
    # Factory arguments (`dtype`, `layout`, `device`, `pin_memory`): left out, all given, all but
    # `layout`, or all but `layout` and `dtype` (what torch.export writes for `torch.zeros(n)`).
    optional = [a.name for a in schema.arguments if ty(a, schema) in OPTIONAL_SET]
    opt_sets = [()] + ([tuple(optional), tuple(n for n in optional if n != "layout"),
                        tuple(n for n in optional if n not in ("layout", "dtype"))] if optional else [])
    # An optional dim list given alone (`fft_fftn(x, dim=[1, 2])`).
    opt_sets += [(n,) for n in optional if ty(next(a for a in schema.arguments if a.name == n), schema).startswith("int[")]
    opt_sets = list(dict.fromkeys(opt_sets))
    numbers = [a.name for a in schema.arguments if ty(a, schema) in ("Scalar", "float") and a.has_default_value()][:3]
    subsets = [tuple(n for k, n in enumerate(numbers) if m >> k & 1) for m in range(1 << len(numbers))]
    # Optional dim lists left out (the whole tensor) and given (`fft_fftn(x, dim=(1, 2))`).
    dim_lists = [a.name for a in schema.arguments if ty(a, schema).startswith("int[") and ty(a, schema).endswith("?")]
    dim_sets = [()] + ([tuple(dim_lists)] if dim_lists else [])
    flags = [(f, o, g, d) for f in ([False, True] if scalars else [False]) for o in opt_sets for g in subsets for d in dim_sets]
    fitted = set()  # (arguments, ranks) some sample fitted; square shapes are tried for the others
    # Float samples first; integer and boolean ones only for an op no float sample fitted
    # (`__or__`, `bitwise_and` have no float kernel).
    passes = [(False, torch.float32), (True, torch.float32), (False, torch.int64), (False, torch.bool)]
    float_fit = False
    for square, dtype in passes:
        float_fit = float_fit or (dtype == torch.float32 and bool(variants))
        if dtype != torch.float32 and float_fit:
            break
        for float_scalars, optionals, generic, dims in flags:
            for ranks, dtypes in candidates(schema, dtype):
                key = (float_scalars, optionals, generic, dims, ranks)
                if square and (max(ranks, default=0) < 2 or key in fitted or any(d != torch.float32 for d in dtypes)):
                    continue
                try:
                    v = trace(op, schema, tuple(-r for r in ranks) if square else ranks, dtypes, float_scalars, decomp, optionals, generic, dims)
                except Exception as e:  # the sample does not fit the op, or the trace guards
                    last_err = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
                    if "tensor list" in last_err or "no sample for" in last_err:
                        break
                    continue
                fitted.add(key)
                key = json.dumps(v["guard"], sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    variants.append(v)
    print(f"{target}: {len(variants)} variants" + ("" if variants else f" ({last_err})"), file=sys.stderr, flush=True)
    return variants, last_err


def trace_isolated(target, op, decomp):
    """[`trace_all`] in a forked child: sample arguments crash some internal ops (a segfault in
    `_thnn_differentiable_gru_cell_backward`), which must not end the whole run."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = json.dumps(trace_all(target, op, decomp)).encode()
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            out = json.dumps([[], f"{type(e).__name__}: {e}"[:200]]).encode()
        with os.fdopen(w, "wb") as f:
            f.write(out)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        print(f"{target}: crashed (status {status})", file=sys.stderr, flush=True)
        return [], f"crashed (status {status})"
    variants, err = json.loads(data)
    return variants, err


def core_table_overloads(only):
    """Overloads `run_decompositions()` decomposes with a Python decomposition (not a composite
    body): export's default table, `detach`, `zeros`, `arange.start`, `baddbmm`, ..."""
    from torch._decomp import core_aten_decompositions

    table = core_aten_decompositions()
    for op, fn in sorted(table.items(), key=lambda kv: str(kv[0])):
        if not isinstance(op, torch._ops.OpOverload) or op.namespace != "aten":
            continue
        name = op._schema.name.split("::", 1)[1]
        if only and name not in only:
            continue
        if torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd"):
            continue
        schema = op._schema
        if schema.is_mutable or op._overloadname.startswith("out"):
            continue
        yield f"aten.{name}.{op._overloadname}", op, fn


def core_in_inductor(targets):
    """Of the export-table overloads `targets`, those Inductor's table decomposes with the same
    function, so their traces hold for `run_decompositions(select_decomp_table())` too."""
    import torch._inductor.lowering  # noqa: F401  (select_decomp_table needs it loaded)
    from torch._decomp import core_aten_decompositions
    from torch._inductor.decomposition import select_decomp_table

    core, ind = core_aten_decompositions(), select_decomp_table()
    named = {f"aten.{op._schema.name.split('::', 1)[1]}.{op._overloadname}": op for op in core if isinstance(op, torch._ops.OpOverload)}
    return sorted(t for t in targets if t in named and ind.get(named[t]) is core[named[t]])


def finite(x):
    """JSON has no inf or nan: such a float constant is written as its Python string."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, list):
        return [finite(y) for y in x]
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    return x


def merge(out, parts):
    """Merges the `.jsonl` progress files of shards into one table, later files over earlier ones."""
    doc = {"torch": torch.__version__.split("+")[0], "torch_build": torch.__version__,
           "made_by": "scripts/gen_composite_graphs.py", "ops": {}, "not_traced": {}, "core": {}, "core_not_traced": {}}
    for p in parts:
        with open(p) as f:
            for line in f:
                r = json.loads(line)
                ok, bad = ("ops", "not_traced") if r["section"] == "ops" else ("core", "core_not_traced")
                # A later part (a rerun of some overloads) replaces what an earlier one said.
                doc[ok].pop(r["target"], None)
                doc[bad].pop(r["target"], None)
                if r["variants"]:
                    doc[ok][r["target"]] = r["variants"]
                else:
                    doc[bad][r["target"]] = r["error"]
    doc["core_in_inductor"] = core_in_inductor(doc["core"])
    with gzip.open(out, "wt") as f:
        json.dump(finite(doc), f, sort_keys=True, separators=(",", ":"), allow_nan=False)
    print(f"{len(doc['ops'])} composite overloads traced, {len(doc['core'])} of export's table", file=sys.stderr)


def updated(path, doc):
    """The table at `path` with the overloads `doc` traced (or failed to) replaced by `doc`'s."""
    with gzip.open(path, "rt") as f:
        base = json.load(f)
    if base["torch"] != doc["torch"]:
        raise SystemExit(f"{path} was traced with torch {base['torch']}, this is {doc['torch']}")
    for ok, bad in (("ops", "not_traced"), ("core", "core_not_traced")):
        for target in list(doc[ok]) + list(doc[bad]):
            base[ok].pop(target, None)
            base[bad].pop(target, None)
        base[ok].update(doc[ok])
        base[bad].update(doc[bad])
    return base


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    ap.add_argument("--shard", default="0/1", help="I/N: trace every N-th overload from the I-th (merge with --merge)")
    ap.add_argument("--merge", nargs="*", default=[], help="shard outputs to merge into OUT")
    ap.add_argument("--first-from", nargs="*", default=[], help="folders of *.expect.json (scripts/gen_zoo.py): "
                    "the overloads their exported graphs call are traced first")
    ap.add_argument("--into", default="", help="an existing table (of this torch) to update: the overloads traced "
                    "now replace their entries, every other entry is kept (a run with --only on top of a long one)")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    if a.merge:
        merge(a.out, a.merge)
        return
    shard, shards = map(int, a.shard.split("/"))
    fx_config.use_duck_shape = False
    ops, failures, t0 = {}, {}, time.time()
    core, core_failures = {}, {}
    work = [("core", t, op, fn) for t, op, fn in core_table_overloads(only)]
    work += [("ops", t, op, None) for t, op in composite_overloads(only)]
    # A run cut short (`--merge` of what is done) covers what real graphs call first.
    called = set()
    for d in a.first_from:
        for f in glob.glob(os.path.join(d, "**", "*.expect.json"), recursive=True):
            with open(f) as fh:
                called.update(json.load(fh).get("ops", {}).get("none", {}).keys())
    work.sort(key=lambda w: w[1] not in called)
    # One JSON line per overload as it is done, so a long run can be merged while it goes on.
    with open(a.out + ".jsonl", "a") as log:
        for k, (section, target, op, fn) in enumerate(work):
            if k % shards != shard:
                continue
            variants, err = trace_isolated(target, op, fn)
            log.write(json.dumps({"section": section, "target": target, "variants": variants, "error": err}) + "\n")
            log.flush()
            into, failed = (ops, failures) if section == "ops" else (core, core_failures)
            if variants:
                into[target] = variants
            else:
                failed[target] = err
    doc = {
        "torch": torch.__version__.split("+")[0],
        "torch_build": torch.__version__,
        "made_by": "scripts/gen_composite_graphs.py",
        "ops": ops,
        "not_traced": failures,
        "core": core,
        "core_not_traced": core_failures,
        "core_in_inductor": core_in_inductor(core),
    }
    if a.into:
        doc = updated(a.into, doc)
    with gzip.open(a.out, "wt") as f:
        json.dump(finite(doc), f, sort_keys=True, separators=(",", ":"), allow_nan=False)
    print(f"core table: {len(core)} traced, {len(core_failures)} not", file=sys.stderr)
    print(f"{len(ops)} overloads traced, {len(failures)} not, {time.time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
