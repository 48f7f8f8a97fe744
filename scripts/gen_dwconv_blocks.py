#!/usr/bin/env python3
"""Depthwise convolutions with PyTorch's outputs, for tests/dwconv_blocks.rs: the shapes that pick
(or must not pick) `lower::schedule::Schedule::Depthwise`.

    /opt/torchenv/bin/python scripts/gen_dwconv_blocks.py [OUTDIR]

OUTDIR defaults to tests/data/dwconv_blocks. Same layout as scripts/gen_conv_blocks.py (one
gzipped stored zip per op holding K.pt2, K.inI.npy, K.outI.npy; index.json listing every case).
Covered: 3×3, 5×5 and 7×7 kernels, stride 1 and 2, dilation, output widths no column group
divides (14, 30), a channel multiplier of 2, with and without bias, and epilogues (ReLU, an
inference batch norm with SiLU, hardswish), and a map too narrow for the schedule (8 wide).
Input, weight, bias and the norm's statistics are graph inputs (not parameters), so the
committed archives stay small. Values from a fixed seed; outputs are PyTorch's eager CPU
results, compared with assert_close's float32 defaults (the kernels sum in another order).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/dwconv_blocks"

# (name, input shape, multiplier, kernel, stride, padding, dilation, bias, epilogue)
CASES = [
    ("dw3x3_w32_bias", (2, 4, 6, 32), 1, 3, 1, 1, 1, True, None),
    ("dw3x3_stride2_w14", (1, 4, 6, 27), 1, 3, 2, 1, 1, True, "relu"),
    ("dw5x5_w30_nobias", (1, 6, 9, 30), 1, 5, 1, 2, 1, False, None),
    ("dw7x7_16x16_relu", (1, 4, 16, 16), 1, 7, 1, 3, 1, True, "relu"),
    ("dw5x5_stride2_w16", (1, 4, 10, 31), 1, 5, 2, 2, 1, True, None),
    ("dw3x3_multiplier2", (1, 4, 8, 24), 2, 3, 1, 1, 1, True, None),
    ("dw3x3_dilated_w24", (1, 4, 10, 24), 1, 3, 1, 2, 2, False, None),
    ("dw3x3_bn_silu", (2, 4, 6, 16), 1, 3, 1, 1, 1, True, "bn_silu"),
    ("dw5x5_hardswish", (1, 4, 8, 16), 1, 5, 1, 2, 1, True, "hardswish"),
    ("dw5x5_narrow_8x8", (1, 16, 8, 8), 1, 5, 1, 2, 1, True, "relu"),
]

TOL = (1.3e-6, 1e-5)


class DwConv(torch.nn.Module):
    def __init__(self, stride, padding, dilation, groups, epilogue):
        super().__init__()
        self.args, self.epilogue = (stride, padding, dilation, groups), epilogue

    def forward(self, x, w, b=None, mean=None, var=None, gamma=None, beta=None):
        y = F.conv2d(x, w, b, *self.args)
        if self.epilogue == "relu":
            return torch.relu(y)
        if self.epilogue == "hardswish":
            return F.hardswish(y)
        if self.epilogue == "bn_silu":
            return F.silu(F.batch_norm(y, mean, var, gamma, beta, False, 0.1, 1e-3))
        return y


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    index = {"torch": torch.__version__, "cases": []}
    members = []
    for name, shape, mult, k, stride, pad, dil, bias, epilogue in CASES:
        cin = shape[1]
        cout = cin * mult
        x = torch.randn(shape, generator=g)
        w = torch.randn((cout, 1, k, k), generator=g) * 0.3
        args = [x, w, torch.randn(cout, generator=g) if bias else None]
        if epilogue == "bn_silu":
            args += [torch.randn(cout, generator=g) * 0.1, torch.rand(cout, generator=g) + 0.5,
                     torch.randn(cout, generator=g), torch.randn(cout, generator=g)]
        while args and args[-1] is None:
            args.pop()
        if any(a is None for a in args):
            raise SystemExit(f"{name}: a bias-less case with a norm needs the bias slot filled")
        m = DwConv(stride, pad, dil, cin, epilogue)
        y = m(*args)
        ep = torch.export.export(m, tuple(a.clone() for a in args), strict=False)
        n = len(members)
        files = {f"{n}.pt2": slim_pt2(ep), f"{n}.out0.npy": npy_bytes(y)}
        for i, a in enumerate(args):
            files[f"{n}.in{i}.npy"] = npy_bytes(a)
        members.append(files)
        targets = sorted({str(t.target).replace("torch.ops.", "") for t in ep.graph.nodes if t.op == "call_function"})
        index["cases"].append({
            "name": name, "op": "conv2d", "dtype": "float32", "file": "conv2d.zip.gz", "case": n, "targets": targets,
            "inputs": [["float32", list(a.shape)] for a in args],
            "outputs": [["float32", list(y.shape)]],
            "rtol": [TOL[0]], "atol": [TOL[1]],
        })
    write_zip_gz(os.path.join(OUT, "conv2d.zip.gz"), {nm: data for files in members for nm, data in files.items()})
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=0)
    print(f"{len(index['cases'])} cases in {OUT} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
