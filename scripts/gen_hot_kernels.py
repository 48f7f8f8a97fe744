#!/usr/bin/env python3
"""The hot kernels of issue 28's corpus sample, shrunk to small cases with PyTorch's outputs, for
tests/hot_kernels.rs: each checks the schedule a rule of `lower::schedule` picks for that shape,
and the kernels' results against PyTorch on OpenCL.

    /opt/torchenv/bin/python scripts/gen_hot_kernels.py [OUTDIR]

OUTDIR defaults to tests/data/hot_kernels. Same layout as scripts/gen_matmul_blocks.py (one
gzipped stored zip per op holding K.pt2, K.inI.npy, K.outI.npy; index.json listing every case).
Operands are graph inputs (not parameters) so that the large cases can be small integers
throughout (exact products, outputs that compress like their inputs): the archive stays under
100 KB. The cases:

- Bridgetower's MLP (`linear` 64 → 256 then QuickGELU, `x · sigmoid(1.702 x)`, on
  `[17, s, 64]`), shrunk to 16 → 64: its rows are blocked along the static 17, whose last block
  is ragged, so the lanes' row clamps are in the kernel (they were an `s_min` the OpenCL CPU
  runtime vectorized as a gather). Exported once, run at s = 3 and s = 1.
- AltCLIP's text projection (`linear` 64 → 768 on `[s72, s53, 64]`, batch and sequence
  dynamic), shrunk to 64 → 320: a row of 20,480 multiply-adds (AltCLIP's has 49,152), which
  kept the tiles under the former limit of 2¹⁴ a row. Run at 3×12 (the corpus bench's binding)
  and 1×5.
- A linear layer of 65 static rows over 128 → 128 (1.06 M multiply-adds, more than
  `SMALL_PRODUCT`), with a ReLU: blocked for its short row.

Values from a fixed seed; outputs are PyTorch's eager CPU results, compared with assert_close's
float32 defaults (the kernels sum in another order).
"""
import json
import os
import sys

import torch

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/hot_kernels"
TOL = (1.3e-6, 1e-5)


class QuickGeluMlp(torch.nn.Module):
    def forward(self, x, w, b):
        y = torch.nn.functional.linear(x, w, b)
        return y * torch.sigmoid(1.702 * y)


class Linear(torch.nn.Module):
    def __init__(self, relu):
        super().__init__()
        self.relu = relu

    def forward(self, x, w, b):
        y = torch.nn.functional.linear(x, w, b)
        return torch.relu(y) if self.relu else y


def rand(g, *shape):
    return torch.randn(shape, generator=g) * 0.5


def small_ints(g, *shape):
    """Integers in [-2, 2] as float32: large weights compress to a few KB."""
    return torch.randint(-2, 3, shape, generator=g).float()


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    cases = []
    # (name, op, module, inputs, exported program or None to export on the inputs)
    s = torch.export.Dim("s", min=1, max=64)
    mlp_w, mlp_b = rand(g, 64, 16), rand(g, 64)
    mlp = torch.export.export(QuickGeluMlp(), (rand(g, 17, 3, 16), mlp_w, mlp_b), dynamic_shapes=({1: s}, None, None), strict=False)
    cases += [(f"quick_gelu_mlp_17x{n}x16_64", "linear", QuickGeluMlp(), [rand(g, 17, n, 16), mlp_w, mlp_b], mlp) for n in (3, 1)]
    batch, seq = torch.export.Dim("batch", min=1, max=64), torch.export.Dim("seq", min=1, max=512)
    proj_w, proj_b = small_ints(g, 320, 64), small_ints(g, 320)
    proj = torch.export.export(Linear(False), (small_ints(g, 2, 7, 64), proj_w, proj_b), dynamic_shapes=({0: batch, 1: seq}, None, None), strict=False)
    cases += [(f"linear_dynamic_{b}x{n}x64_320", "linear", Linear(False), [small_ints(g, b, n, 64), proj_w, proj_b], proj) for b, n in ((3, 12), (1, 5))]
    cases.append(("linear_relu_65x128_128", "linear", Linear(True), [small_ints(g, 65, 128), small_ints(g, 128, 128), small_ints(g, 128)], None))
    index = {"torch": torch.__version__, "cases": []}
    by_op = {}
    for name, op, m, args, ep in cases:
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
