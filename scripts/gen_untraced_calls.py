#!/usr/bin/env python3
"""TORCH_TRACE logs with calls the embedded tables have no trace of (check-lite --python).

    python3 scripts/gen_untraced_calls.py OUTDIR

One CPU compile (torch.compile(dynamic=True), eval, no_grad) in lite and in default mode of a model
that calls `torch.as_tensor` and `Tensor.new_tensor` (no table holds a trace of either: OpInfo has
no sample, and no corpus model called them when the tables were made) besides `F.batch_norm` in eval
mode, `torch.tensor` and `Tensor.type_as` (once unknown too; the corpus's logs taught the tables
them). Writes
OUTDIR/untraced_calls_cpu_{lite,default}_<torch>.log.gz. tests/untraced_calls.rs reads them.
"""
import glob
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

CHILD = r"""
import sys, torch, torch.nn as nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(16)
        self.lin = nn.Linear(16, 16)
    def forward(self, x, y):
        h = self.bn(x)
        s = torch.tensor([0.5, 2.0]).sum()
        t = torch.as_tensor([1.5, 0.25]).sum() + x.new_tensor([3.0]).sum()
        return self.lin(h).type_as(y) * s + t
torch.manual_seed(0)
m = M().eval()
x, y = torch.randn(4, 16), torch.randn(4, 16, dtype=torch.float64)
torch._dynamo.mark_dynamic(x, 0)
kw = {"mode": "lite"} if sys.argv[1] == "lite" else {}
with torch.no_grad():
    torch.compile(m, dynamic=True, **kw)(x, y)
"""


def main():
    import torch

    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    version = torch.__version__.split("+")[0]
    for mode in ["lite", "default"]:
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, TORCH_TRACE=d)
            subprocess.run([sys.executable, "-c", CHILD, mode], env=env, check=True, timeout=900)
            [log] = glob.glob(os.path.join(d, "*.log"))
            dest = os.path.join(out, f"untraced_calls_cpu_{mode}_{version}.log.gz")
            with open(log, "rb") as src, gzip.open(dest, "wb", compresslevel=9) as dst:
                shutil.copyfileobj(src, dst)
            print(dest)


if __name__ == "__main__":
    main()
