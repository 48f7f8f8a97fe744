#!/usr/bin/env python3
"""Generate TORCH_TRACE logs of real torch.compile runs and ONNX exports under OUTDIR.

    python3 scripts/gen_traces.py OUTDIR [--only=trace_default,trace_lite,trace_lite_annotated,onnx]

  trace_default/   torch.compile(dynamic=True) of the transformer block, three input shapes
               (batch 1 specializes, so a recompile appears)
  trace_lite/      the same with mode="lite" (PyTorch >= 2.11): nothing marked, nothing decomposed
  trace_lite_annotated/  lite mode on the block whose layer_norm is annotated compile_with_inductor
  NAME.onnx        torch.onnx.export(dynamo=True) with dynamic dims; mlp_ext.onnx + data: external data
Each log is the raw dedicated log file that TORCH_TRACE writes.
"""
import os
import subprocess
import sys
import traceback

OUT = sys.argv[1] if len(sys.argv) > 1 else "samples"
HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import sys, torch
sys.path.insert(0, %(here)r)
from gen_samples import Block, Annotated
torch.manual_seed(0)
dev = "cuda" if torch.cuda.is_available() else "cpu"
model = (Annotated() if %(annotated)r else Block()).to(dev).eval()
kw = {"dynamic": True}
if %(mode)r:
    kw["mode"] = %(mode)r
fn = torch.compile(model, **kw)
import torch.fx.traceback as fx_traceback
# preserve_node_meta() carries fx_traceback.annotate() marks into the traced graphs.
with torch.no_grad(), fx_traceback.preserve_node_meta():
    for b, s in [(2, 7), (3, 9), (1, 5)]:
        fn(torch.randn(b, s, 32, device=dev))
print("compiled ok", kw)
"""


def trace(kind, mode, annotated):
    d = os.path.join(OUT, kind)
    os.makedirs(d, exist_ok=True)
    env = dict(os.environ, TORCH_TRACE=os.path.abspath(d))
    src = CHILD % {"here": HERE, "mode": mode, "annotated": annotated}
    r = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True, timeout=400)
    print(kind, "rc", r.returncode, r.stdout[-500:], r.stderr[-3000:])


def onnx_exports():
    import torch
    from torch.export import Dim
    sys.path.insert(0, HERE)
    from gen_samples import MLP, Block, CNN

    batch = Dim("batch", min=1, max=1024)
    seq = Dim("seq", min=2, max=512)
    cases = [
        ("mlp", MLP(), (torch.randn(4, 32),), {"x": {0: batch}}, False),
        ("transformer_block", Block(), (torch.randn(2, 7, 32),), {"x": {0: batch, 1: seq}}, False),
        ("cnn", CNN(), (torch.randn(2, 3, 16, 16),), {"x": {0: batch}}, False),
        ("mlp_ext", MLP(), (torch.randn(4, 32),), {"x": {0: batch}}, True),
    ]
    for name, m, args, dyn, ext in cases:
        try:
            m.eval()
            path = os.path.join(OUT, name + ".onnx")
            prog = torch.onnx.export(m, args, dynamic_shapes=dyn, dynamo=True)
            prog.save(path, external_data=ext)
            print("onnx", name, os.path.getsize(path))
        except Exception:
            print("FAILED onnx", name)
            traceback.print_exc()


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    only = [a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--only=")]
    jobs = {
        "trace_default": lambda: trace("trace_default", None, False),
        "trace_lite": lambda: trace("trace_lite", "lite", False),
        "trace_lite_annotated": lambda: trace("trace_lite_annotated", "lite", True),
        "onnx": onnx_exports,
    }
    for name, job in jobs.items():
        if not only or name in only[0]:
            job()
