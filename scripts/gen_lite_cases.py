#!/usr/bin/env python3
"""The lite-mode / backend case as real artifacts: PyTorch's own `test_lite_mode_not_decompose`.

    python3 scripts/gen_lite_cases.py OUTDIR [--devices cuda,cpu]
    python3 scripts/gen_lite_cases.py --recheck DIR   # recompute output_code_calls_op from the logs

PyTorch's test compiles `aten._fused_rms_norm(x + 1, [n], None, None)` with `mode="lite"` and asserts
the generated code still calls `aten._fused_rms_norm`. The op has a CUDA kernel (and, from torch 2.12,
an XPU one) but no CPU kernel, so on CPU tracing expands its CompositeImplicitAutograd body before
lite mode decides anything. This script writes, for the torch it runs under (version in the names):

  fused_rms_norm.pt2 / fused_rms_norm_marked.pt2   torch.export of the function (dynamic batch and
      sequence; the marked variant wraps the op in fx_traceback.annotate({"compile_with_inductor": 0}))
  fused_rms_norm.in0.npy / .out0.npy               seeded input and eager output (CPU, float32)
  rms_<dev>_<mode>[_marked]_<torch>.log.gz         TORCH_TRACE of torch.compile(dynamic=True), two shapes
  rms_expect_<torch>.json                          what torch says about the op on this machine: schema,
      dispatch keys with a kernel, whether each log's output code still calls the op
  symviews_<dev>_<mode>[_marked]_<torch>.log.gz    the dynamic-shape lite case: views on products of
      dynamic dims, linear + silu, a layer norm marked or not, softmax (run from a file: located)
  rmsfn_<dev>_lite_<torch>.log.gz                  F.rms_norm(x + 1, [16], w, 1e-6) in lite mode (located)
--sym-only makes only the symviews and rmsfn logs; --rmsfn-only only the rmsfn ones.
Each log is made in a child process, since TORCH_TRACE is read when torch is imported.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HIDDEN = 16
SHAPES = [(2, 5, HIDDEN), (3, 7, HIDDEN)]

CHILD = r"""
import sys, torch
import torch.fx.traceback as fx_traceback
dev, mode, marked = %(dev)r, %(mode)r, %(marked)r

def fused(x):
    return torch.ops.aten._fused_rms_norm(x + 1, [%(hidden)d], None, None)

def fused_marked(x):
    y = x + 1
    with fx_traceback.annotate({"compile_with_inductor": 0}):
        out = torch.ops.aten._fused_rms_norm(y, [%(hidden)d], None, None)
    return out

fn = fused_marked if marked else fused
kw = {"dynamic": True}
if mode != "default":
    kw["mode"] = mode
from torch._inductor.utils import run_and_get_code
compiled = torch.compile(fn, **kw)
codes = []
with torch.no_grad(), fx_traceback.preserve_node_meta():
    for shape in %(shapes)r:
        x = torch.randn(*shape, device=dev)
        out, code = run_and_get_code(compiled, x)
        ref = fn(x)
        torch.testing.assert_close(out[0], ref[0], rtol=1e-4, atol=1e-5)
        codes.extend(code)
# A call, not the "Original ATen: [...]" comments Inductor writes above fused kernels.
print("KEEPS_OP", any("aten._fused_rms_norm.default(" in c for c in codes))
"""


def output_code_calls_op(log_gz):
    """Whether the log's inductor_output_code still calls the op (as PyTorch's test checks)."""
    with gzip.open(log_gz, "rt", errors="replace") as f:
        return "aten._fused_rms_norm.default(" in f.read()


def recheck(folder):
    """Recomputes `output_code_calls_op` of every rms_expect_*.json in `folder` from its logs."""
    for name in sorted(os.listdir(folder)):
        if not (name.startswith("rms_expect_") and name.endswith(".json")):
            continue
        path = os.path.join(folder, name)
        with open(path) as f:
            expect = json.load(f)
        for log, facts in expect["logs"].items():
            facts["output_code_calls_op"] = output_code_calls_op(os.path.join(folder, log + ".log.gz"))
        with open(path, "w") as f:
            json.dump(expect, f, indent=1, sort_keys=True)
        print(path, {k: v["output_code_calls_op"] for k, v in expect["logs"].items()})


SYM_CHILD = r"""
import sys, torch
import torch.nn.functional as F
import torch.fx.traceback as fx_traceback
dev, mode, marked = %(dev)r, %(mode)r, %(marked)r


class SymViews(torch.nn.Module):
    # Views whose sizes are products of dynamic dims, a linear + silu, a layer norm (the node a
    # user marks), and a softmax over the view back to three dims.
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)
        self.ln = torch.nn.LayerNorm(16)

    def forward(self, x):
        b, t = x.size(0), x.size(1)
        h = x.view(b * t, 16)
        h = F.silu(self.fc(h))
        if marked:
            with fx_traceback.annotate({"compile_with_inductor": 0}):
                h = self.ln(h)
        else:
            h = self.ln(h)
        return h.view(b, t, 16).softmax(-1)


torch.manual_seed(0)
model = SymViews().to(dev).eval()
kw = {"dynamic": True}
if mode != "default":
    kw["mode"] = mode
compiled = torch.compile(model, **kw)
with torch.no_grad(), fx_traceback.preserve_node_meta():
    for shape in [(2, 5, 16), (3, 7, 16)]:
        x = torch.randn(*shape, device=dev)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
print("ok")
"""


RMSFN_CHILD = r"""
import torch
import torch.nn.functional as F
dev, mode = %(dev)r, %(mode)r
w = torch.linspace(0.5, 1.5, 16, device=dev)


def rms(x):
    # F.rms_norm as models write it: aten.rms_norm, composite everywhere, becomes _fused_rms_norm.
    return F.rms_norm(x + 1, [16], w, 1e-6)


kw = {"dynamic": True}
if mode != "default":
    kw["mode"] = mode
compiled = torch.compile(rms, **kw)
with torch.no_grad():
    for shape in [(2, 5, 16), (3, 7, 16)]:
        x = torch.randn(*shape, device=dev)
        torch.testing.assert_close(compiled(x), rms(x), rtol=1e-4, atol=1e-5)
print("ok")
"""


def sym_log(out, dev, mode, marked, family="symviews"):
    """The dynamic-shape lite case: views on products of symbols, one node marked or not (and,
    family `rmsfn`, F.rms_norm in lite mode). Run from a file, so every node carries its source
    location (the `rms_*` logs, made with `python -c`, carry none)."""
    tag = torch_tag()
    name = f"{family}_{dev}_{mode}{'_marked' if marked else ''}_{tag}"
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "sym_views_case.py" if family == "symviews" else f"{family}_case.py")
        with open(script, "w") as f:
            template = SYM_CHILD if family == "symviews" else RMSFN_CHILD
            f.write(template % {"dev": dev, "mode": mode, "marked": marked})
        trace_dir = os.path.join(d, "trace")
        env = dict(os.environ, TORCH_TRACE=trace_dir)
        r = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, timeout=600)
        print(name, "rc", r.returncode, r.stderr[-2000:] if r.returncode else "")
        logs = sorted(f for f in os.listdir(trace_dir) if f.endswith(".log")) if os.path.isdir(trace_dir) else []
        if r.returncode != 0 or len(logs) != 1:
            return
        with open(os.path.join(trace_dir, logs[0]), "rb") as src_f, gzip.open(os.path.join(out, name + ".log.gz"), "wb") as dst:
            shutil.copyfileobj(src_f, dst)


def torch_tag():
    import torch
    return torch.__version__.split("+")[0]


def one_log(out, dev, mode, marked):
    tag = torch_tag()
    name = f"rms_{dev}_{mode}{'_marked' if marked else ''}_{tag}"
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TORCH_TRACE=d)
        src = CHILD % {"dev": dev, "mode": mode, "marked": marked, "hidden": HIDDEN, "shapes": SHAPES}
        r = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True, timeout=600)
        print(name, "rc", r.returncode, r.stdout.strip()[-300:], r.stderr[-2000:] if r.returncode else "")
        logs = sorted(f for f in os.listdir(d) if f.endswith(".log"))
        if r.returncode != 0 or len(logs) != 1:
            return name, None
        with open(os.path.join(d, logs[0]), "rb") as src_f, gzip.open(os.path.join(out, name + ".log.gz"), "wb") as dst:
            shutil.copyfileobj(src_f, dst)
    keeps = "KEEPS_OP True" in r.stdout
    return name, keeps


def export_archives(out):
    import numpy as np
    import torch
    import torch.fx.traceback as fx_traceback
    from torch.export import Dim

    class Fused(torch.nn.Module):
        def forward(self, x):
            return torch.ops.aten._fused_rms_norm(x + 1, [HIDDEN], None, None)

    class FusedMarked(torch.nn.Module):
        def forward(self, x):
            y = x + 1
            with fx_traceback.annotate({"compile_with_inductor": 0}):
                out = torch.ops.aten._fused_rms_norm(y, [HIDDEN], None, None)
            return out

    class RmsNormModule(torch.nn.Module):
        # F.rms_norm, as models write it: export keeps aten.rms_norm, composite everywhere, which
        # becomes _fused_rms_norm when traced.
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, HIDDEN))

        def forward(self, x):
            return torch.nn.functional.rms_norm(x, [HIDDEN], self.weight, 1e-6) * 2

    dyn = {"x": {0: Dim("batch", min=1, max=1024), 1: Dim("seq", min=2, max=4096)}}
    torch.manual_seed(0)
    x = torch.randn(*SHAPES[0])
    models = [("fused_rms_norm", Fused()), ("fused_rms_norm_marked", FusedMarked()), ("rms_norm_module", RmsNormModule())]
    for name, m in models:
        with fx_traceback.preserve_node_meta():
            ep = torch.export.export(m, (x,), dynamic_shapes=dyn)
        torch.export.save(ep, os.path.join(out, f"{name}.pt2"))
    ref = Fused()(x)
    np.save(os.path.join(out, "fused_rms_norm.in0.npy"), x.numpy())
    for i, t in enumerate(ref):
        np.save(os.path.join(out, f"fused_rms_norm.out{i}.npy"), t.numpy())
    with torch.no_grad():
        np.save(os.path.join(out, "rms_norm_module.out0.npy"), models[2][1](x).numpy())


def dispatcher_facts():
    import torch
    keys = ["CPU", "CUDA", "XPU", "MPS", "Meta", "CompositeImplicitAutograd", "CompositeExplicitAutograd"]
    facts = {}
    for op in ["aten::_fused_rms_norm", "aten::rms_norm", "aten::add.Tensor", "aten::native_layer_norm"]:
        facts[op] = {k: torch._C._dispatch_has_kernel_for_dispatch_key(op, k) for k in keys}
    return {"torch": torch.__version__, "schema": str(torch.ops.aten._fused_rms_norm.default._schema), "has_kernel": facts}


def main():
    if sys.argv[1:2] == ["--recheck"]:
        return recheck(sys.argv[2])
    out = sys.argv[1] if len(sys.argv) > 1 else "samples/lite"
    devices = ["cuda", "cpu"]
    for a in sys.argv[2:]:
        if a.startswith("--devices="):
            devices = [d for d in a.split("=", 1)[1].split(",") if d]
    os.makedirs(out, exist_ok=True)
    import torch
    if "cuda" in devices and not torch.cuda.is_available():
        devices.remove("cuda")
    if "--rmsfn-only" in sys.argv:
        sys.argv.append("--sym-only")
    if "--sym-only" not in sys.argv:
        export_archives(out)
    expect = dispatcher_facts()
    expect["logs"] = {}
    for dev in devices:
        for mode, marked in [("lite", False), ("default", False), ("lite", True)]:
            if "--sym-only" not in sys.argv:
                name, keeps = one_log(out, dev, mode, marked)
                expect["logs"][name] = {"device": dev, "mode": mode, "marked": marked, "output_code_calls_op": keeps}
            if "--rmsfn-only" not in sys.argv:
                sym_log(out, dev, mode, marked)
            if mode == "lite" and not marked:
                sym_log(out, dev, mode, marked, family="rmsfn")
    if "--sym-only" in sys.argv:
        return
    with open(os.path.join(out, f"rms_expect_{torch_tag()}.json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
    print(json.dumps(expect, indent=1))


if __name__ == "__main__":
    main()
