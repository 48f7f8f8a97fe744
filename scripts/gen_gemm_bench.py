#!/usr/bin/env python3
"""Exports of the matrix products of a ViT-sized transformer, for timing our schedules with
`profile` (docs/PERFORMANCE.md, "Issue 28: large matrix products"): timm's deit_tiny at batch 2
(197 tokens each, so 394 rows; width 192: qkv 192 → 576, proj 192 → 192, fc1 192 → 768, fc2
768 → 192), a batched product of attention scores' size (6 × 197×32 · 32×197), deit_small's fc2 (1536 →
384), and a few small shapes. Nothing here is committed but this script.

    /opt/torchenv/bin/python scripts/gen_gemm_bench.py OUTDIR
    /opt/torchenv/bin/python scripts/gen_gemm_bench.py --torch

Each product is one `nn.Linear` (weight and bias are parameters, as in a real model, so the
weight is resident across forwards), exported once with static sizes and once with the row
count dynamic, or one `torch.bmm` of two inputs. `--torch` times the same products with torch
on 2 threads (eager `F.linear` is oneDNN/MKL's sgemm, what `torch.compile` calls for them too).
"""
import os
import sys
import time

import torch

LINEARS = [(394, 192, 576), (394, 192, 768), (394, 768, 192), (394, 192, 192), (394, 1536, 384), (3, 128, 160), (64, 128, 128)]
BMM = (6, 197, 32, 197)


class Lin(torch.nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.fc = torch.nn.Linear(k, n)

    def forward(self, x):
        return self.fc(x)


class Bmm(torch.nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b)


def export_all(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    rows = torch.export.Dim("rows", min=1, max=8192)
    for m, k, n in LINEARS:
        mod = Lin(k, n).eval()
        x = torch.randn(m, k)
        torch.export.save(torch.export.export(mod, (x,)), f"{out}/linear_{m}x{k}_{n}.pt2")
        ep = torch.export.export(mod, (x,), dynamic_shapes=({0: rows},))
        torch.export.save(ep, f"{out}/linear_dyn_{m}x{k}_{n}.pt2")
    b, m, k, n = BMM
    ep = torch.export.export(Bmm(), (torch.randn(b, m, k), torch.randn(b, k, n)))
    torch.export.save(ep, f"{out}/bmm_{b}x{m}x{k}_{n}.pt2")


def time_torch():
    torch.set_num_threads(2)
    for m, k, n in LINEARS:
        x, w, bias = torch.randn(m, k), torch.randn(n, k), torch.randn(n)
        report(f"linear {m}x{k} -> {n}", lambda: torch.nn.functional.linear(x, w, bias), m * k * n)
    b, m, k, n = BMM
    x, y = torch.randn(b, m, k), torch.randn(b, k, n)
    report(f"bmm {b}x{m}x{k} . {k}x{n}", lambda: torch.bmm(x, y), b * m * k * n)


def report(name, f, macs):
    for _ in range(20):
        f()
    times = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(20):
            f()
        times.append((time.perf_counter() - t) / 20)
    times.sort()
    med, best = times[len(times) // 2], times[0]
    print(f"{name}: median {med * 1e6:.0f} us ({macs / med / 1e9:.1f} G multiply-adds/s), fastest {best * 1e6:.0f} us ({macs / best / 1e9:.1f} G/s)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--torch"]:
        time_torch()
    else:
        export_all(sys.argv[1])
