#!/usr/bin/env python3
"""Matrix products with PyTorch's outputs, for tests/matmul_blocks.rs: the shapes that pick (or
must not pick) the small-product schedule of `lower::schedule::small_product` (a product too
small for 16×16 tiles runs on the column schedule, output rows blocked per work-item).

    /opt/torchenv/bin/python scripts/gen_matmul_blocks.py [OUTDIR]

OUTDIR defaults to tests/data/matmul_blocks. Same layout as scripts/gen_conv_blocks.py (one
gzipped stored zip per op holding K.pt2, K.inI.npy, K.outI.npy; index.json listing every case),
so the OpInfo loader reads it. Operands are graph inputs (not parameters), so the archives stay
small. The cases: the transformer_block sample's up-projection (2×7×32 · 32×128 with bias and
GELU), sizes no tile divides (13×23 · 23×19; 5×40 · 40×10 with a bias; a batch of 3 of
9×17 · 17×33), a 128³ product (tiled when written, blocked under `SMALL_ROW`; small integers, so its archive stays small), and a linear layer whose
row count is dynamic, exported once and run at 1, 5, 8, 13 and 37 rows, the up-projection
with dynamic batch and sequence at three bindings, and a dynamic-row product whose row is too
long to leave the tiles under the former limit. Values from a fixed
seed; outputs are PyTorch's eager CPU results, compared with assert_close's float32 defaults
(the kernels sum in another order).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/matmul_blocks"
TOL = (1.3e-6, 1e-5)


class Linear(torch.nn.Module):
    def __init__(self, gelu):
        super().__init__()
        self.gelu = gelu

    def forward(self, x, w, b):
        y = F.linear(x, w, b)
        return F.gelu(y) if self.gelu else y


class ParamLinear(torch.nn.Module):
    """`nn.Linear` (weight and bias parameters, exported into the archive) with small-integer
    weights, and GELU after it when `gelu`."""

    def __init__(self, k, n, gelu, g):
        super().__init__()
        self.fc = torch.nn.Linear(k, n)
        with torch.no_grad():
            self.fc.weight.copy_(small_ints(g, n, k))
            self.fc.bias.copy_(small_ints(g, n))
        self.gelu = gelu

    def forward(self, x):
        y = self.fc(x)
        return F.gelu(y) if self.gelu else y


class Mm(torch.nn.Module):
    # `torch.mm`, not `@`: mode none keeps `aten.matmul` whole, which the lowering does not tile.
    def forward(self, a, b):
        return torch.mm(a, b)


class Addmm(torch.nn.Module):
    def forward(self, c, a, b):
        return torch.addmm(c, a, b)


class Bmm(torch.nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b)


def rand(g, *shape):
    return torch.randn(shape, generator=g) * 0.5


def small_ints(g, *shape):
    """Integers in [-2, 2] as float32: the large case's products are exact and its archive
    compresses to a few KB."""
    return torch.randint(-2, 3, shape, generator=g).float()


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    rows = torch.export.Dim("rows", min=1, max=4096)
    dyn = torch.export.export(Linear(False), (rand(g, 8, 32), rand(g, 64, 32), rand(g, 64)),
                              dynamic_shapes=({0: rows}, None, None), strict=False)
    dyn_w, dyn_b = rand(g, 64, 32), rand(g, 64)
    # (name, op, module, inputs, exported program or None to export on the inputs)
    cases = [
        ("linear_gelu_2x7x32_128", "linear", Linear(True), [rand(g, 2, 7, 32), rand(g, 128, 32), rand(g, 128)], None),
        ("mm_13x23_23x19", "mm", Mm(), [rand(g, 13, 23), rand(g, 23, 19)], None),
        ("addmm_5x40_40x10", "addmm", Addmm(), [rand(g, 10), rand(g, 5, 40), rand(g, 40, 10)], None),
        ("bmm_3x9x17_17x33", "bmm", Bmm(), [rand(g, 3, 9, 17), rand(g, 3, 17, 33)], None),
        ("mm_large_128", "mm", Mm(), [small_ints(g, 128, 128), small_ints(g, 128, 128)], None),
        ("linear_dynamic_rows_5", "linear", Linear(False), [rand(g, 5, 32), dyn_w, dyn_b], dyn),
        ("linear_dynamic_rows_37", "linear", Linear(False), [rand(g, 37, 32), dyn_w, dyn_b], dyn),
    ]
    # The same dynamic-row linear at more row counts: one row (a lone, ragged block), a whole
    # block of 8, and 13 (one block and a ragged one).
    cases += [(f"linear_dynamic_rows_{n}", "linear", Linear(False), [rand(g, n, 32), dyn_w, dyn_b], dyn) for n in (1, 8, 13)]
    # The transformer_block sample's up-projection with batch and sequence dynamic (its rows
    # are blocked along the sequence), exported once and run at three bindings.
    batch, seq = torch.export.Dim("batch", min=1, max=64), torch.export.Dim("seq", min=1, max=512)
    up_w, up_b = rand(g, 128, 32), rand(g, 128)
    up = torch.export.export(Linear(True), (rand(g, 2, 7, 32), up_w, up_b), dynamic_shapes=({0: batch, 1: seq}, None, None), strict=False)
    cases += [(f"linear_gelu_dynamic_{b}x{s}", "linear", Linear(True), [rand(g, b, s, 32), up_w, up_b], up) for b, s in ((2, 7), (1, 1), (3, 10))]
    # A dynamic row count over a long row (K · N = 128 · 160, above `SMALL_DYNAMIC_ROW`): a
    # large product (`lower::gemm`), rows blocked like the small ones.
    wide = torch.export.export(Mm(), (small_ints(g, 4, 128), small_ints(g, 128, 160)), dynamic_shapes=({0: rows}, None), strict=False)
    cases.append(("mm_dynamic_rows_wide_3", "mm", Mm(), [small_ints(g, 3, 128), small_ints(g, 128, 160)], wide))
    # Large products whose weight is a parameter (as in a model: resident, so the runtime
    # stores it transposed for the product, `lower::gemm`): static sizes with a ragged last
    # block of rows (70 = 8 · 8 + 6), a batched input with a long contraction (512) and GELU,
    # and a dynamic row count over a row above `SMALL_DYNAMIC_ROW` (64 · 272) run at 1, 19 and
    # 44 rows. Small integers (exact products) keep the archives small.
    cases += [
        ("linear_param_70x64_240", "linear", ParamLinear(64, 240, False, g), [small_ints(g, 70, 64)], None),
        ("linear_param_gelu_2x33x512_32", "linear", ParamLinear(512, 32, True, g), [small_ints(g, 2, 33, 512)], None),
    ]
    resident = ParamLinear(64, 272, False, g)
    resident_ep = torch.export.export(resident, (small_ints(g, 8, 64),), dynamic_shapes=({0: rows},), strict=False)
    cases += [(f"linear_param_dynamic_rows_{n}", "linear", resident, [small_ints(g, n, 64)], resident_ep) for n in (1, 19, 44)]
    index = {"torch": torch.__version__, "cases": []}
    by_op = {}
    for name, op, m, args, ep in cases:
        with torch.no_grad():
            y = m(*args)
        if ep is None:
            ep = torch.export.export(m, tuple(a.clone() for a in args), strict=False)
        members = by_op.setdefault(op, [])
        n = len(members)
        files = {f"{n}.pt2": slim_pt2(ep), f"{n}.out0.npy": npy_bytes(y)}
        for i, a in enumerate(args):
            files[f"{n}.in{i}.npy"] = npy_bytes(a)
        members.append(files)
        targets = sorted({str(t.target).replace("torch.ops.", "") for t in ep.graph.nodes if t.op == "call_function"})
        index["cases"].append({
            "name": name, "op": op, "dtype": "float32", "file": f"{op}.zip.gz", "case": n, "targets": targets,
            "inputs": [["float32", list(a.shape)] for a in args],
            "outputs": [["float32", list(y.shape)]],
            "rtol": [TOL[0]], "atol": [TOL[1]],
        })
    for op, members in by_op.items():
        write_zip_gz(os.path.join(OUT, f"{op}.zip.gz"), {nm: data for files in members for nm, data in files.items()})
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=0)
    print(f"{len(index['cases'])} cases in {OUT} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
