#!/usr/bin/env python3
"""Tiny real artifacts with ops of each XPU readiness class, for `xpu-workbench readiness`.

    python3 scripts/gen_xpu_readiness_samples.py OUTDIR [export|log|blocks ...]   # e.g. samples/xpu; all by default

Writes, for the torch it runs under (CPU is enough: the statuses are XPU's, read from the tables):
  fallback_ops.pt2           torch.export of a function calling
                               torch.cholesky_inverse   aten.cholesky_inverse: in torch-xpu-ops' CPU-fallback
                                                        list of every release 2.9 ... main
                               torch.linalg.matrix_exp  aten.linalg_matrix_exp: the same
                               torch.dot                aten.dot: in the list up to release/2.10, an XPU
                                                        kernel from 2.11 on
                               torch.linalg.lu          aten.linalg_lu: only its out= overload is listed
                               torchvision.ops.nms      torchvision::nms: torch-xpu-ops' own kernel
                               F.rms_norm, add, relu    composite / native
  fallback_ops_lite_<torch>.log.gz
                             TORCH_TRACE of torch.compile(mode="lite") of the same function without nms
                             (its data-dependent output would split the graph), slimmed by
                             scripts/slim_trace_log.py.
  fallback_blocks.pt2        torch.export of a model whose submodules hold one readiness class each, for the
                             app's module boxes: `solve` (cholesky_inverse, linalg_matrix_exp: CPU fallbacks),
                             `factor` (linalg_lu: not implemented, only its out= overload is listed), `norm`
                             (relu, add, mean: native); dot at the top level.
The log is made in a child process, since TORCH_TRACE is read when torch is imported.
"""
import glob
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

FUNCTION = r'''
import torch
import torch.nn.functional as F


def body(a, b, l, x):
    ci = torch.cholesky_inverse(l)
    e = torch.linalg.matrix_exp(x)
    d = torch.dot(a, b)
    p, lo, u = torch.linalg.lu(x)
    y = F.rms_norm(torch.relu(x + 1), [x.shape[-1]])
    return ci + e + d, p + lo + u, y


def inputs():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(8, generator=g)
    b = torch.randn(8, generator=g)
    m = torch.randn(4, 4, generator=g)
    l = torch.linalg.cholesky(m @ m.T + 4 * torch.eye(4))
    x = 0.1 * torch.randn(4, 4, generator=g)
    return a, b, l, x
'''

CHILD = FUNCTION + r'''
import sys
compiled = torch.compile(body, mode="lite")
with torch.no_grad():
    compiled(*inputs())
print(torch.__version__)
'''


def export(out_dir):
    import torch
    import torchvision

    ns = {}
    exec(FUNCTION, ns)

    class M(torch.nn.Module):
        def forward(self, a, b, l, x, boxes, scores):
            out = ns["body"](a, b, l, x)
            keep = torchvision.ops.nms(boxes, scores, 0.5)
            return out + (keep,)

    boxes = torch.tensor([[0.0, 0.0, 1.0, 1.0], [0.1, 0.1, 1.1, 1.1], [2.0, 2.0, 3.0, 3.0]])
    scores = torch.tensor([0.9, 0.8, 0.7])
    ep = torch.export.export(M(), ns["inputs"]() + (boxes, scores))
    path = os.path.join(out_dir, "fallback_ops.pt2")
    torch.export.save(ep, path)
    ops = sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})
    print(path, os.path.getsize(path), "bytes;", ", ".join(ops))
    return torch.__version__.split("+")[0]


def log(out_dir, version):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TORCH_TRACE=tmp)
        subprocess.run([sys.executable, "-c", CHILD], env=env, check=True)
        logs = sorted(glob.glob(os.path.join(tmp, "*.log")))
        if not logs:
            sys.exit("torch wrote no TORCH_TRACE log")
        raw = os.path.join(tmp, "raw.log.gz")
        with open(logs[0], "rb") as f, gzip.open(raw, "wb") as g:
            shutil.copyfileobj(f, g)
        out = os.path.join(out_dir, f"fallback_ops_lite_{version}.log.gz")
        subprocess.run([sys.executable, os.path.join(HERE, "slim_trace_log.py"), raw, out], check=True)
        print(out, os.path.getsize(out), "bytes")


BLOCKS = r'''
import torch


class Solve(torch.nn.Module):
    def forward(self, l, x):
        return torch.cholesky_inverse(l) + torch.linalg.matrix_exp(x)


class Factor(torch.nn.Module):
    def forward(self, x):
        p, lo, u = torch.linalg.lu(x)
        return p + lo + u


class Norm(torch.nn.Module):
    def forward(self, x):
        h = torch.relu(x + 1)
        return h * h.mean(-1, keepdim=True)


class Blocks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.solve = Solve()
        self.factor = Factor()
        self.norm = Norm()

    def forward(self, l, x, a, b):
        return self.solve(l, x) + torch.dot(a, b), self.factor(x), self.norm(x)
'''


def blocks(out_dir):
    import torch

    ns = {}
    exec(FUNCTION + BLOCKS, ns)
    a, b, l, x = ns["inputs"]()
    ep = torch.export.export(ns["Blocks"](), (l, x, a, b))
    path = os.path.join(out_dir, "fallback_blocks.pt2")
    torch.export.save(ep, path)
    print(path, os.path.getsize(path), "bytes")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    parts = sys.argv[2:] or ["export", "log", "blocks"]
    os.makedirs(out_dir, exist_ok=True)
    import torch

    version = torch.__version__.split("+")[0]
    if "export" in parts:
        export(out_dir)
    if "log" in parts:
        log(out_dir, version)
    if "blocks" in parts:
        blocks(out_dir)


if __name__ == "__main__":
    main()
