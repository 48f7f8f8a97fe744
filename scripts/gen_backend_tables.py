#!/usr/bin/env python3
"""Backend kernel tables and composite expansions, as data the workbench embeds (assets/ops/).

    python3 scripts/gen_backend_tables.py OUT.json [--xpu-ops-yaml DIR] [--xpu-ops-ref NAME]
                                         [--from-dispatcher] [--no-expansions] [--samples N]
    python3 scripts/gen_backend_tables.py OUT.json --yaml WHEEL_YAML --version V --inductor-from T.json.gz
                                         [--xpu-ops-yaml DIR --xpu-ops-ref NAME]

For the torch this runs under, per ATen overload:
  kernels     dense backends with a kernel of their own (CPU, CUDA, XPU, MPS), from the
              native_functions.yaml the torch wheel ships (torchgen/packaged), structured delegates
              followed, CompositeExplicitAutograd counted as every backend. XPU: the same yaml from
              torch 2.14 on; for older torch the torch-xpu-ops release branch's yaml/ folder
              (--xpu-ops-yaml DIR holding native/native_functions.yaml and xpu_functions.yaml).
  composite   a CompositeImplicitAutograd kernel exists: where no backend kernel is found the op is
              expanded while tracing, before lite mode or Inductor's tables decide anything.
  inductor    Inductor's default decomposition table (select_decomp_table()) has the overload.
  core        tagged `core` (the Core ATen opset).
--from-dispatcher reads `kernels`/`composite` of the backends this build has from its dispatcher
(`torch._C._dispatch_has_kernel_for_dispatch_key`), the yaml for the rest: the refresh a user runs
with their own build, which is the only way to see an XPU build's registrations. On an XPU build the
overloads whose XPU kernel is torch-xpu-ops' CPU fallback (registered from XPUFallback.*) are listed in
`sources.xpu_cpu_fallback`; readiness reads that list instead of the embedded one.

expansions: what a torch-level call (as dynamo writes it in a graph: `torch.nn.functional.layer_norm`,
`Tensor.softmax`, `_operator.add`) becomes in ATen ops after tracing with no decomposition table,
per device: make_fx of PyTorch's OpInfo sample inputs (op_db). CUDA is traced on the GPU when there is
one, else on fake CUDA tensors (recorded in `sources`); several alternatives where sizes or arguments
choose different paths.
"""
import argparse
import collections
import functools
import json
import os
import sys
import warnings

BACKENDS = ["CPU", "CUDA", "XPU", "MPS"]
EXPLICIT = {"CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"}


def overload_key(func_schema: str) -> str:
    """`add.Tensor(Tensor self, ...)` -> `add.Tensor`; `relu(Tensor self)` -> `relu`."""
    return func_schema.split("(", 1)[0].strip()


def dispatch_keys(entry):
    keys = set()
    for k in (entry.get("dispatch") or {}).keys():
        keys.update(s.strip() for s in k.split(","))
    return keys


def parse_yaml(path):
    import yaml

    with open(path) as f:
        entries = yaml.safe_load(f)
    out = {}
    for e in entries:
        if "func" not in e:
            continue
        out[overload_key(e["func"])] = e
    return out


def table_from_yaml(yaml_path, xpu_dir):
    entries = parse_yaml(yaml_path)
    xpu_keys = collections.defaultdict(set)
    if xpu_dir:
        for name, e in parse_yaml(os.path.join(xpu_dir, "native", "native_functions.yaml")).items():
            xpu_keys[name] |= dispatch_keys(e)
        import yaml

        with open(os.path.join(xpu_dir, "xpu_functions.yaml")) as f:
            for name in yaml.safe_load(f).get("supported") or []:
                xpu_keys[name].add("XPU")

    def keys_of(name, seen=()):
        e = entries.get(name)
        if e is None:
            return set(), False
        keys = dispatch_keys(e) | xpu_keys.get(name, set())
        if e.get("ufunc_inner_loop"):
            # Kernels generated from the ufunc loop by torchgen: CPU and CUDA.
            keys |= {"CPU", "CUDA"}
        delegate = e.get("structured_delegate")
        if delegate and delegate not in seen:
            dkeys, _ = keys_of(delegate, seen + (name,))
            keys |= dkeys
        no_dispatch = not e.get("dispatch") and not delegate
        return keys, no_dispatch

    ops = {}
    for name, e in entries.items():
        keys, no_dispatch = keys_of(name)
        composite = no_dispatch or "CompositeImplicitAutograd" in keys
        kernels = sorted(BACKENDS if keys & EXPLICIT else [b for b in BACKENDS if b in keys])
        tags = e.get("tags") or []
        if isinstance(tags, str):
            tags = [t.strip() for t in tags.split(",")]
        returns = e["func"].rsplit("->", 1)[-1]
        # A view returns an alias of its input (`-> Tensor(a)`): shape plumbing, never a decomposition.
        view = "(a)" in returns.replace(" ", "") and "!" not in returns
        ops[name] = {"kernels": kernels, "composite": composite, "core": "core" in tags, "view": view}
    return ops


def built_backends():
    """The dense backends this torch build registers kernels for: only those the dispatcher can
    speak about (a CUDA build knows nothing of XPU's kernels)."""
    import torch

    built = ["CPU"]
    if torch.backends.cuda.is_built():
        built.append("CUDA")
    if getattr(torch, "xpu", None) is not None and torch.xpu._is_compiled():
        built.append("XPU")
    if torch.backends.mps.is_built():
        built.append("MPS")
    return built


def table_from_dispatcher(base):
    """`base` (from the yaml) with each backend this build has replaced by what its dispatcher
    registered; ops only the dispatcher knows (custom builds) are added."""
    import torch

    built = built_backends()
    ops = {k: dict(v) for k, v in base.items()}
    xpu_cpu_fallback = []
    for full in torch._C._dispatch_get_all_op_names():
        if not full.startswith("aten::"):
            continue
        name = full[len("aten::"):]
        has = lambda k: torch._C._dispatch_has_kernel_for_dispatch_key(full, k)  # noqa: E731
        explicit = any(has(k) for k in EXPLICIT)
        mine = {b for b in built if explicit or has(b)}
        if "XPU" in built and has("XPU") and xpu_kernel_is_cpu_fallback(full):
            xpu_cpu_fallback.append(name)
        if name in ops:
            others = {b for b in ops[name]["kernels"] if b not in built}
            ops[name]["kernels"] = sorted(mine | others)
            ops[name]["composite"] = has("CompositeImplicitAutograd")
            continue
        op_name, _, overload = name.partition(".")
        schema = str(torch._C._get_schema("aten::" + op_name, overload))
        returns = schema.rsplit("->", 1)[-1]
        view = "(a)" in returns.replace(" ", "") and "!" not in returns
        ops[name] = {"kernels": sorted(mine), "composite": has("CompositeImplicitAutograd"), "core": False, "view": view}
    return ops, built, sorted(xpu_cpu_fallback)


def xpu_kernel_is_cpu_fallback(full):
    """torch-xpu-ops registers its CPU-fallback list as XPU kernels, so the dispatcher says "XPU has a
    kernel" for them; only the registration's source file (XPUFallback.template / .cpp) tells them apart."""
    import torch

    try:
        dump = torch._C._dispatch_dump(full)
    except RuntimeError:
        return False
    return any(line.startswith("XPU:") and "XPUFallback" in line for line in dump.splitlines())


def mark_inductor_and_core(ops):
    import torch
    from torch._inductor.decomposition import select_decomp_table

    for overload in select_decomp_table().keys():
        if not isinstance(overload, torch._ops.OpOverload) or overload.namespace != "aten":
            continue
        name = overload._schema.name.split("::", 1)[1]
        if overload._overloadname and overload._overloadname != "default":
            name += "." + overload._overloadname
        if name in ops:
            ops[name]["inductor"] = True
            if torch.Tag.core in overload.tags:
                ops[name]["core"] = True
    for v in ops.values():
        v.setdefault("inductor", False)


def cross_check(ops):
    """How often the yaml's CPU/CUDA answer disagrees with this torch's dispatcher (should be ~0)."""
    import torch

    bad = []
    for name, v in ops.items():
        full = "aten::" + name
        for b in ["CPU", "CUDA"]:
            try:
                d = torch._C._dispatch_has_kernel_for_dispatch_key(full, b) or any(
                    torch._C._dispatch_has_kernel_for_dispatch_key(full, k) for k in EXPLICIT
                )
            except RuntimeError:
                continue
            if d != (b in v["kernels"]):
                bad.append(f"{name}:{b}")
    return bad


def expansions(samples_per_op, devices):
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.node import _get_qualified_name
    from torch.testing._internal.common_methods_invocations import op_db
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._pytree import tree_map

    # One folding of ATen targets for both tracers. Imported here, not at the top: `backends
    # --refresh` pipes this file into python alone (--no-expansions), with no trace_calls.py beside it.
    from trace_calls import base_name

    def keys_for(info):
        keys = []
        # OpInfo's `op` is sometimes a wrapper (a lambda around the real function): the OpInfo's name
        # says which torch function it tests (`nn.functional.scaled_dot_product_attention`).
        named = None
        try:
            named = functools.reduce(getattr, info.name.split("."), torch)
            keys.append("torch." + info.name)
        except AttributeError:
            pass
        for fn in [named, info.op, getattr(info, "operator_variant", None)] + [a.op for a in info.aliases]:
            if fn is None or not callable(fn):
                continue
            try:
                q = _get_qualified_name(fn)
            except Exception:
                continue
            keys.append(q.replace("torch._C._VariableFunctions.", "torch."))
        for m in [info.method_variant] + [a.method_variant for a in info.aliases]:
            if m is not None:
                keys.append("Tensor." + m.__name__)
        inplace = getattr(info, "inplace_operator_variant", None)
        if inplace is not None:
            keys.append(_get_qualified_name(inplace))
        return sorted(set(keys))

    result = collections.defaultdict(lambda: collections.defaultdict(set))
    for info in op_db:
        keys = keys_for(info)
        if not keys:
            continue
        for dev in devices:
            real_dev = "cuda" if dev.startswith("cuda") else "cpu"
            fake = dev == "cuda-fake"
            dtypes = info.supported_dtypes(real_dev if not fake else "cuda")
            dtype = next((d for d in [torch.float32, torch.int64, torch.bool] if d in dtypes), None)
            if dtype is None:
                continue
            try:
                samples = list(info.sample_inputs("cpu" if fake else real_dev, dtype))[:samples_per_op]
            except Exception:
                continue
            for s in samples:
                args = (s.input,) + tuple(s.args)
                kwargs = dict(s.kwargs)
                try:
                    if fake:
                        mode = FakeTensorMode(allow_non_fake_inputs=True)
                        with mode:
                            args = tree_map(lambda t: mode.from_tensor(t).to("cuda") if isinstance(t, torch.Tensor) else t, args)
                            kwargs = tree_map(lambda t: mode.from_tensor(t).to("cuda") if isinstance(t, torch.Tensor) else t, kwargs)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        g = make_fx(lambda *a: info.op(*a, **kwargs))(*args)
                except Exception:
                    continue
                ops = sorted({b for n in g.graph.nodes if n.op == "call_function" for b in [base_name(n.target)] if b})
                for k in keys:
                    result[k][dev.replace("-fake", "")].add(tuple(ops))
    return {k: {d: [list(alt) for alt in sorted(alts)] for d, alts in per.items()} for k, per in sorted(result.items())}


def from_wheel_yaml(a):
    """A kernels-only table for a torch version that is not installed: its wheel's yaml, the
    torch-xpu-ops yaml of the same release, and Inductor's flags borrowed from a nearby version."""
    import gzip

    if not (a.version and a.inductor_from):
        sys.exit("--yaml needs --version and --inductor-from")
    ops = table_from_yaml(a.yaml, a.xpu_ops_yaml)
    opener = gzip.open if a.inductor_from.endswith(".gz") else open
    with opener(a.inductor_from, "rt") as f:
        near = json.load(f)
    for name, v in ops.items():
        v["inductor"] = bool(near["ops"].get(name, {}).get("inductor", False))
    sources = {
        "torch": a.version,
        "kernels": f"native_functions.yaml of the torch {a.version} wheel",
        "xpu": ("torch-xpu-ops yaml/ " + a.xpu_ops_ref) if a.xpu_ops_yaml else "XPU dispatch entries of the same native_functions.yaml",
        "inductor": f"Inductor's table of torch {near['torch']} (borrowed)",
    }
    doc = {"torch": a.version, "sources": sources, "ops": dict(sorted(ops.items()))}
    with open(a.out, "w") as f:
        json.dump(doc, f, separators=(",", ":"), sort_keys=True)
    print(a.out, len(ops), "ops", json.dumps(sources))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--xpu-ops-yaml", help="torch-xpu-ops yaml/ folder of the matching release branch")
    p.add_argument("--xpu-ops-ref", default="", help="where --xpu-ops-yaml came from (recorded)")
    p.add_argument("--from-dispatcher", action="store_true")
    p.add_argument("--no-expansions", action="store_true")
    p.add_argument("--samples", type=int, default=4)
    p.add_argument("--yaml", help="a native_functions.yaml taken from another torch wheel (no torch import): "
                   "kernels only, no traced expansions; needs --version and --inductor-from")
    p.add_argument("--version", help="the torch version --yaml came from")
    p.add_argument("--inductor-from", help="a table (.json or .json.gz) whose Inductor flags to borrow")
    a = p.parse_args()
    if a.yaml:
        return from_wheel_yaml(a)

    import torch
    import torchgen

    yaml_path = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml")
    sources = {"torch": torch.__version__}
    if a.from_dispatcher:
        ops, built, xpu_cpu_fallback = table_from_dispatcher(table_from_yaml(yaml_path, a.xpu_ops_yaml))
        sources["kernels"] = "dispatcher of this torch build for " + ", ".join(built) + "; native_functions.yaml for the rest"
        if "XPU" in built:
            # Read by the workbench's readiness in place of the embedded torch-xpu-ops lists.
            sources["xpu_cpu_fallback"] = xpu_cpu_fallback
    else:
        ops = table_from_yaml(yaml_path, a.xpu_ops_yaml)
        sources["kernels"] = "torchgen/packaged/ATen/native/native_functions.yaml of this torch"
        if a.xpu_ops_yaml:
            sources["xpu"] = "torch-xpu-ops yaml/ " + a.xpu_ops_ref
        else:
            sources["xpu"] = "XPU dispatch entries of the same native_functions.yaml"
        mismatch = cross_check(ops)
        sources["dispatcher_mismatches"] = len(mismatch)
        sources["dispatcher_mismatch_examples"] = mismatch[:20]
    mark_inductor_and_core(ops)
    doc = {"torch": torch.__version__.split("+")[0], "sources": sources, "ops": dict(sorted(ops.items()))}
    if not a.no_expansions:
        devices = ["cpu", "cuda" if torch.cuda.is_available() else "cuda-fake"]
        sources["expansions"] = "make_fx of op_db samples on " + ", ".join(devices)
        doc["expansions"] = expansions(a.samples, devices)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, separators=(",", ":"), sort_keys=True)
    print(a.out, len(ops), "ops;", len(doc.get("expansions", {})), "expansion keys;", json.dumps(sources)[:600])


if __name__ == "__main__":
    main()
