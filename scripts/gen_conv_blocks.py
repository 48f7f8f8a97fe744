#!/usr/bin/env python3
"""Convolutions with PyTorch's outputs, for tests/conv_blocks.rs: the shapes that pick (or must
not pick) the output-channel blocking of `lower::schedule::Schedule::Channels`.

    /opt/torchenv/bin/python scripts/gen_conv_blocks.py [OUTDIR]

OUTDIR defaults to tests/data/conv_blocks. Same layout as scripts/gen_long_lines.py (one gzipped
stored zip per op holding K.pt2, K.inI.npy, K.outI.npy; index.json listing every case), so the
OpInfo loader reads it. Input, weight and bias are graph inputs (not parameters), so the
committed archives stay small. Each case's `name` says what it covers: output channel counts
the block divides and ones it does not (19, 17, 33), stride, padding, dilation, groups whose
channels per group that take a smaller block (6), depthwise (not blocked), fewer channels
than a block (5),
1-, 2- and 3-D, output maps too small for a column group of 64 (3×3, 5×5), a fused ReLU
epilogue, deep folds blocked by 16 with the channel loop innermost.
Values from a fixed seed; outputs are PyTorch's eager
CPU results, compared with assert_close's float32 defaults (the kernels sum in another order).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/conv_blocks"

CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}

# (name, input shape, out channels, kernel, stride, padding, dilation, groups, bias, relu)
CASES = [
    ("odd_channels_3x3", (2, 5, 8, 8), 19, 3, 1, 1, 1, 1, True, False),
    ("stem_7x7_stride2", (1, 3, 20, 20), 16, 7, 2, 3, 1, 1, False, False),
    ("dilated_groups_of_16", (1, 8, 10, 10), 32, 3, 1, 2, 2, 2, True, False),
    ("groups_of_6", (1, 8, 8, 8), 24, 3, 1, 1, 1, 4, True, False),
    ("few_channels", (1, 3, 16, 16), 5, 3, 1, 1, 1, 1, True, False),
    ("depthwise_unblocked", (1, 16, 8, 8), 16, 3, 1, 1, 1, 16, True, False),
    ("pointwise_7x7_map", (1, 32, 7, 7), 33, 1, 1, 0, 1, 1, True, True),
    ("strided_padded_relu", (2, 4, 11, 13), 17, (3, 2), (2, 1), (1, 2), 1, 1, True, True),
    ("small_map_3x3", (2, 32, 3, 3), 64, 3, 1, 1, 1, 1, True, True),
    ("small_map_5x5_stride2", (1, 16, 10, 10), 24, 3, 2, 1, 1, 1, True, False),
    ("conv1d_stride2", (2, 4, 128), 20, 5, 2, 2, 1, 1, True, False),
    ("conv3d_odd", (1, 2, 8, 8, 8), 17, 3, 1, 1, 1, 1, True, False),
    # Deep folds (input channels per group × taps ≥ 128) take blocks of 16 output channels, and
    # with ≥ 16 channels per group the channel loop innermost: the real-size convnets' shapes
    # at a small map (the choice reads only channel and kernel sizes; issue 28).
    ("deep_3x3_ragged_16", (1, 16, 8, 8), 20, 3, 1, 1, 1, 1, True, True),
    ("deep_pointwise_1x1", (1, 128, 8, 8), 20, 1, 1, 0, 1, 1, True, True),
    ("deep_groups_of_16", (1, 32, 8, 8), 32, 3, 1, 1, 1, 2, True, True),
    # A deep stage's 2×2 map (the corpus convnets at 64×64 inputs): blocked in groups of 4.
    ("deep_2x2_map", (2, 24, 2, 2), 20, 3, 1, 1, 1, 1, True, True),
]

TOL = (1.3e-6, 1e-5)


class Conv(torch.nn.Module):
    def __init__(self, sd, stride, padding, dilation, groups, relu):
        super().__init__()
        self.conv, self.args, self.relu = CONV[sd], (stride, padding, dilation, groups), relu

    def forward(self, x, w, b=None):
        y = self.conv(x, w, b, *self.args)
        return torch.relu(y) if self.relu else y


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    index = {"torch": torch.__version__, "cases": []}
    by_op = {}
    for name, shape, cout, k, stride, pad, dil, groups, bias, relu in CASES:
        sd = len(shape) - 2
        ks = k if isinstance(k, tuple) else (k,) * sd
        x = torch.randn(shape, generator=g)
        w = torch.randn((cout, shape[1] // groups) + ks, generator=g) * 0.3
        args = [x, w] + ([torch.randn(cout, generator=g)] if bias else [])
        m = Conv(sd, stride, pad, dil, groups, relu)
        y = m(*args)
        ep = torch.export.export(m, tuple(a.clone() for a in args), strict=False)
        op = f"conv{sd}d"
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
