#!/usr/bin/env python3
"""Sorts and scans of lines longer than OpInfo's samples, with PyTorch's outputs, for
tests/long_lines.rs.

    /opt/torchenv/bin/python scripts/gen_long_lines.py [OUTDIR]

OUTDIR defaults to tests/data/long_lines. Same layout as scripts/gen_opinfo.py writes (one
gzipped stored zip per op holding K.pt2, K.inI.npy, K.outI.npy; index.json listing every case),
so the OpInfo loader reads it. gen_opinfo.py keeps samples at or under 4,096 elements; these
cases exercise what it leaves out: `argsort` of 8,000 float32 values (stable, with ties and
NaN), long lines of several dtypes, ascending and descending, NaN, ±0.0 and repeated values,
sorted along inner and outer dims, `topk` of lines longer than 16 (distinct values: see CASES),
and `cumsum`/`cumprod`/`logcumsumexp`/`cummax`/`cummin` of lines long enough to be scanned in
blocks. Inputs come from a fixed seed; outputs are PyTorch's
eager CPU results. Sorts and running extremes are compared exactly (tolerance 0); float sums
with PyTorch's default `assert_close` tolerances (a blocked scan adds in another order than
eager's loop).
"""
import json
import os
import sys

import numpy as np
import torch

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/long_lines"


def messy(shape, dtype, g):
    """Values with many ties, NaN, ±0.0 and infinities (floats), or few distinct values (ints)."""
    n = int(np.prod(shape))
    if dtype == torch.bool:
        return torch.rand(n, generator=g).lt(0.5).reshape(shape)
    if not dtype.is_floating_point:
        return torch.randint(-5, 6, (n,), generator=g).to(dtype).reshape(shape)
    x = torch.randn(n, generator=g, dtype=torch.float64)
    x = torch.where(torch.rand(n, generator=g) < 0.3, torch.round(x * 4) / 4, x)  # ties
    specials = torch.tensor([float("nan"), 0.0, -0.0, float("inf"), -float("inf")], dtype=torch.float64)
    pick = torch.rand(n, generator=g) < 0.05
    x = torch.where(pick, specials[torch.randint(0, 5, (n,), generator=g)], x)
    return x.to(dtype).reshape(shape)


def distinct(shape, dtype, g):
    """Distinct values (no ties), one NaN."""
    x = torch.randn(int(np.prod(shape)), generator=g, dtype=torch.float64)
    x[7] = float("nan")
    return x.to(dtype).reshape(shape)


# (op, dtype, shape, call[, "distinct"]): `call(x)` returns the outputs.
CASES = [
    ("argsort", torch.float32, (8000,), lambda x: (torch.argsort(x, stable=True),)),
    ("argsort", torch.float32, (3, 300), lambda x: (torch.argsort(x, dim=1, descending=True, stable=True),)),
    ("argsort", torch.bfloat16, (129,), lambda x: (torch.argsort(x, stable=True),)),
    ("sort", torch.float32, (3, 37), lambda x: torch.sort(x, dim=-1, stable=True)),
    ("sort", torch.float32, (3, 37), lambda x: torch.sort(x, dim=-1, descending=True, stable=True)),
    ("sort", torch.float64, (100, 5), lambda x: torch.sort(x, dim=0, stable=True)),
    ("sort", torch.float16, (2, 33, 2), lambda x: torch.sort(x, dim=1, stable=True)),
    ("sort", torch.int64, (4, 50), lambda x: torch.sort(x, dim=1, descending=True, stable=True)),
    ("sort", torch.int32, (1000,), lambda x: torch.sort(x, stable=True)),
    ("sort", torch.uint8, (65,), lambda x: torch.sort(x, stable=True)),
    ("sort", torch.bool, (65,), lambda x: torch.sort(x, stable=True)),
    ("msort", torch.float32, (40, 3), lambda x: (torch.msort(x),)),
    # topk: PyTorch picks among equal values by its own selection, which the kernels follow on
    # lines of up to 16 only (longer ones pick by position): distinct values here, one NaN.
    ("topk", torch.float32, (3, 100), lambda x: torch.topk(x, 7, dim=1), "distinct"),
    ("topk", torch.float64, (100, 3), lambda x: torch.topk(x, 5, dim=0, largest=False), "distinct"),
    ("sort", torch.float32, (3, 37), lambda x: torch.sort(x, dim=-1, descending=True)),
]

# Scans: (op, dtype, shape, call, input); the inputs stay finite so that sums compare by tolerance.
SCANS = [
    ("cumsum", torch.float32, (3, 500), lambda x: (torch.cumsum(x, dim=1),), lambda g: torch.randn(3, 500, generator=g)),
    ("cumsum", torch.float64, (8000,), lambda x: (torch.cumsum(x, dim=0),), lambda g: torch.randn(8000, generator=g, dtype=torch.float64)),
    ("cumsum", torch.int64, (200, 3), lambda x: (torch.cumsum(x, dim=0),), lambda g: torch.randint(-100, 100, (200, 3), generator=g)),
    ("cumprod", torch.float64, (2, 100), lambda x: (torch.cumprod(x, dim=1),),
     lambda g: 1 + 0.05 * torch.randn(2, 100, generator=g, dtype=torch.float64)),
    ("logcumsumexp", torch.float32, (3, 500), lambda x: (torch.logcumsumexp(x, dim=1),), lambda g: with_neg_inf(torch.randn(3, 500, generator=g))),
    ("logcumsumexp", torch.float64, (8000,), lambda x: (torch.logcumsumexp(x, dim=0),), lambda g: 10 * torch.randn(8000, generator=g, dtype=torch.float64)),
]

# With a pointwise producer and consumer: lowered in full mode too (tests/long_lines.rs), where
# they are kernels of their own around the staged ones.
FUSED = [
    ("argsort", torch.float32, (3, 300), lambda x: (torch.argsort(torch.abs(x) - 1.0, dim=1, stable=True) + 1,)),
    ("cummax", torch.float32, (2, 700), lambda x: tuple(t * 2 for t in torch.cummax(torch.neg(x), dim=1))),
]

# Running extremes pick values and positions: compared exactly, on data with ties and NaN.
EXTREMES = [
    ("cummax", torch.float32, (8000,), lambda x: torch.cummax(x, dim=0)),
    ("cummin", torch.float32, (300, 3), lambda x: torch.cummin(x, dim=0)),
    ("cummax", torch.int64, (3, 300), lambda x: torch.cummax(x, dim=1)),
]


def with_neg_inf(x):
    """Row 0 starts with a run of -inf (a block of -inf only), row 1 holds one +inf."""
    x[0, :40] = -float("inf")
    x[1, 250] = float("inf")
    return x

# PyTorch's assert_close defaults.
TOL = {torch.float32: (1.3e-6, 1e-5), torch.float64: (1e-7, 1e-7)}


class Call(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    index = {"torch": torch.__version__, "cases": [], "skipped": []}
    by_op = {}
    cases = [(c[0], c[1], c[2], c[3], (distinct if c[4:] == ("distinct",) else messy)(c[2], c[1], g), False) for c in CASES]
    cases += [(op, dtype, shape, fn, make(g).to(dtype), True) for op, dtype, shape, fn, make in SCANS]
    cases += [(op, dtype, shape, fn, messy(shape, dtype, g), False) for op, dtype, shape, fn in EXTREMES]
    cases += [(op, dtype, shape, fn, messy(shape, dtype, g), False) for op, dtype, shape, fn in FUSED]
    for op, dtype, shape, fn, x, scan in cases:
        outs = tuple(fn(x))
        rtol, atol = TOL.get(dtype, (0.0, 0.0)) if scan else (0.0, 0.0)
        ep = torch.export.export(Call(fn), (x.clone(),), strict=False)
        members = by_op.setdefault(op, [])
        k = len(members)
        files = {f"{k}.pt2": slim_pt2(ep), f"{k}.in0.npy": npy_bytes(x)}
        for i, o in enumerate(outs):
            files[f"{k}.out{i}.npy"] = npy_bytes(o)
        members.append(files)
        targets = sorted({str(n.target).replace("torch.ops.", "") for n in ep.graph.nodes if n.op == "call_function"})
        index["cases"].append({
            "op": op, "dtype": str(dtype).replace("torch.", ""), "file": f"{op}.zip.gz", "case": k, "targets": targets,
            "inputs": [[str(x.dtype).replace("torch.", ""), list(x.shape)]],
            "outputs": [[str(o.dtype).replace("torch.", ""), list(o.shape)] for o in outs],
            "rtol": [rtol] * len(outs), "atol": [atol] * len(outs),
        })
    for op, members in by_op.items():
        write_zip_gz(os.path.join(OUT, f"{op}.zip.gz"), {name: data for files in members for name, data in files.items()})
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=0)
    print(f"{len(index['cases'])} cases in {OUT} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
