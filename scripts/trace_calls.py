#!/usr/bin/env python3
"""Trace torch-level calls into ATen ops with the user's own torch (check-lite --python).

    PYTHON scripts/trace_calls.py REQUEST.json > RESPONSE.json

The workbench embeds this file and runs it with the interpreter the user names; it is also the
`base_name` that scripts/gen_backend_tables.py folds ATen targets with, so a call traced here and a
call traced there name their ops alike.

REQUEST: {"calls": [{"key": K, "target": T, "device": D, "args": [A...], "kwargs": {name: A}}]}
  T  the call as dynamo writes it in a graph: `Tensor.type_as`, `torch.tensor`,
     `torch.nn.functional.batch_norm`, `torch._C._nn.pad`, `_operator.add`, `aten.add.Tensor`
  S  (optional "source") the file the call was made from: a custom op's namespace is imported from
     it when the op is not registered yet (`transformers/integrations/moe.py` registers
     `torch.ops.transformers.grouped_mm_fallback`)
  D  the device of the call's tensors in the log (`cpu`, `cuda`, `xpu`): CPU calls are traced on real
     tensors, others on fake tensors of that device (no GPU needed); a device this build cannot make
     fake tensors for is reported as an error for that call
  A  {"tensor": {"dtype": "float32", "sizes": [..], "strides": [..]}} (the log's example value, sizes at
     their hints) | {"int": 3} | {"float": 0.5} | {"bool": true} | {"str": "mean"} | {"none": null}
     | {"list": [A...]} | {"dtype": "float32"} | {"device": "cpu"} | {"memory_format": "contiguous_format"}
     | {"layout": "strided"}
RESPONSE: {"torch": VERSION, "results": [{"key": K, "ops": [ATen op names] | null, "error": MSG | null}]}

ops are what make_fx records with no decomposition table, dead code dropped (the dispatcher's own choice: an op with a
kernel on the device stays, a CompositeImplicitAutograd op without one is expanded), folded to
functional names without overload (`add_.Tensor` -> `add`), sorted and unique.
"""
import functools
import json
import operator
import sys
import warnings


def base_name(target):
    """`aten.add_.Tensor` -> `add` (in-place and overload folded: functionalization removes both)."""
    s = str(target)
    if not s.startswith("aten."):
        return None
    n = s.split(".")[1]
    if n.endswith("_") and not n.endswith("__"):
        n = n[:-1]
    if n.startswith("sym_") or n in ("_assert_tensor_metadata",):
        return None
    return n


def import_source(path):
    """Imports the module a source file is: found under an entry of sys.path, or by the part after
    `site-packages/` (a log made on another machine names that machine's paths)."""
    import importlib
    import os

    if not path or not path.endswith(".py"):
        return
    rel = None
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            rel = path.rsplit(marker, 1)[1]
    if rel is None:
        real = os.path.realpath(path)
        for root in sorted((os.path.realpath(p) for p in sys.path if p), key=len, reverse=True):
            if real.startswith(root + os.sep):
                rel = real[len(root) + 1 :]
                break
    if rel is None:
        return
    module = rel[: -len(".py")].replace("/", ".").replace(os.sep, ".")
    module = module[: -len(".__init__")] if module.endswith(".__init__") else module
    try:
        importlib.import_module(module)
    except Exception:
        pass


def resolve(target, source=None):
    """The Python callable a dynamo graph's target names."""
    import torch

    for prefix in ("_operator.", "operator."):
        if target.startswith(prefix):
            return getattr(operator, target[len(prefix):])
    if target.startswith("Tensor."):
        return getattr(torch.Tensor, target[len("Tensor."):])
    if target.startswith("aten."):
        parts = target.split(".")
        op = getattr(torch.ops.aten, parts[1])
        return getattr(op, parts[2]) if len(parts) > 2 else op
    if target.startswith("torch."):
        parts = target.split(".")
        obj = torch
        for i, p in enumerate(parts[1:], start=1):
            if not hasattr(obj, p):
                # A submodule not imported yet (`torch.nn.functional` is; `torch._refs` may not be).
                import importlib

                importlib.import_module(".".join(parts[: i + 1]))
            obj = getattr(obj, p)
        return obj
    if target.startswith("torch_") and "." not in target:
        # FX names a function it cannot import by path with the path's dots made underscores
        # (`torch__dynamo_utils_wrapped_sqrt` is torch._dynamo.utils.wrapped_sqrt).
        found = mangled(torch, target[len("torch_"):])
        if found is not None:
            return found
        # Dynamo wraps a NumPy function it traces into torch._dynamo.utils.numpy_to_tensor_wrapper,
        # named `wrapped_<function>` (`np.sqrt` in CTRL's attention scale).
        prefix = "torch__dynamo_utils_wrapped_"
        if target.startswith(prefix):
            import numpy
            from torch._dynamo.utils import numpy_to_tensor_wrapper

            f = getattr(numpy, target[len(prefix):], None)
            if callable(f):
                return numpy_to_tensor_wrapper(f)
    ns, _, name = target.partition(".")
    if name and "." not in name:
        # A custom op (`torch.ops.transformers.grouped_mm_fallback`, printed without `torch.ops.`):
        # its package registers it on import.
        import importlib

        try:
            importlib.import_module(ns)
        except ImportError:
            pass
        if not hasattr(getattr(torch.ops, ns), name):
            import_source(source)
        op = getattr(getattr(torch.ops, ns), name, None)
        if op is not None:
            return op
    raise ValueError(f"`{target}` is not a torch, Tensor, operator or custom-op call this tracer knows how to name")


def mangled(obj, rest):
    """The attribute path of `obj` whose names joined by `_` spell `rest`, or None."""
    import importlib
    import types

    if rest == "":
        return obj
    if not rest.startswith("_"):
        return None
    rest = rest[1:]
    for end in range(len(rest), 0, -1):
        if end < len(rest) and rest[end] != "_":
            continue
        name = rest[:end]
        child = getattr(obj, name, None)
        if child is None and isinstance(obj, types.ModuleType):
            try:
                child = importlib.import_module(f"{obj.__name__}.{name}")
            except ImportError:
                child = None
        if child is not None:
            found = mangled(child, rest[end:])
            if found is not None:
                return found
    return None


def dtype_of(name):
    import torch

    d = getattr(torch, name, None)
    if not isinstance(d, torch.dtype):
        raise ValueError(f"unknown dtype `{name}`")
    return d


def make_tensor(spec, device, fake_mode):
    import torch

    dtype = dtype_of(spec["dtype"])
    sizes, strides = spec["sizes"], spec.get("strides") or None
    # Indices, masks and counts stay in range at zero; floats get values so no path sees a constant.
    if strides is not None and len(strides) == len(sizes):
        t = torch.empty_strided(sizes, strides, dtype=dtype)
    else:
        t = torch.empty(sizes, dtype=dtype)
    if dtype.is_floating_point or dtype.is_complex:
        t.normal_()
    else:
        t.zero_()
    if fake_mode is None:
        return t
    with fake_mode:
        return fake_mode.from_tensor(t).to(device)


def build(arg, device, fake_mode):
    import torch

    (kind, v), = arg.items()
    if kind == "tensor":
        return make_tensor(v, device, fake_mode)
    if kind in ("int", "float", "bool", "str"):
        return v
    if kind == "none":
        return None
    if kind == "list":
        return [build(a, device, fake_mode) for a in v]
    if kind == "dtype":
        return dtype_of(v)
    if kind == "device":
        return torch.device(v)
    if kind == "memory_format":
        return getattr(torch, v)
    if kind == "layout":
        return getattr(torch, v)
    raise ValueError(f"unknown argument kind `{kind}`")


def trace_one(call):
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch._subclasses.fake_tensor import FakeTensorMode

    fn = resolve(call["target"], call.get("source"))
    device = call.get("device") or "cpu"
    fake_mode = None if device.split(":")[0] == "cpu" else FakeTensorMode(allow_non_fake_inputs=True)
    args = [build(a, device, fake_mode) for a in call.get("args", [])]
    kwargs = {k: build(a, device, fake_mode) for k, a in call.get("kwargs", {}).items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fake_mode is None:
            g = make_fx(lambda *a: fn(*a, **kwargs))(*args)
        else:
            with fake_mode:
                g = make_fx(lambda *a: fn(*a, **kwargs), tracing_mode="real")(*args)
    # AOT autograd drops what nothing reads (the `empty` a batch norm's unused statistics start as).
    g.graph.eliminate_dead_code()
    return sorted({b for n in g.graph.nodes if n.op == "call_function" for b in [base_name(n.target)] if b})


def main():
    import torch

    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        request = json.load(f)
    results = []
    for call in request.get("calls", []):
        try:
            results.append({"key": call.get("key"), "ops": trace_one(call), "error": None})
        except Exception as e:  # one call's failure is that call's answer, never the whole run's
            first = (str(e).strip().splitlines() or [""])[0]
            results.append({"key": call.get("key"), "ops": None, "error": f"{type(e).__name__}: {first}"[:500]})
    json.dump({"torch": torch.__version__.split("+")[0], "results": results}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
