#!/usr/bin/env python3
"""Convolutions on tiny output maps with PyTorch's outputs, for tests/tiny_maps.rs: the shapes
that pick (or must not pick) `lower::schedule::Schedule::Spread` (`lower::tiny_map`: output
channels across the work-items, batch × pixels unrolled per work-item, the weight read from a
copy stored transposed at upload).

    /opt/torchenv/bin/python scripts/gen_tiny_maps.py [OUTDIR]

OUTDIR defaults to tests/data/tiny_maps. Same layout as scripts/gen_conv_blocks.py (one gzipped
stored zip per op, index.json listing every case), but the convolution's weight and bias are
*parameters* of the module, as in a model: only a resident weight is stored transposed. To keep
the committed archives small the values are multiples of 1/16 in [-1, 1] (a few distinct float
patterns gzip well); the products and sums are still PyTorch's float32 results. Cases: stride 2,
padding, with and without bias, a residual add and ReLU fused after the convolution, output
channels no group of 16 divides (72), batch 1, 2 and 3, 1×1 and 4×4 maps, a 1-D convolution; a
5×5 map that must keep the blocked-pixel schedule; a batch of 5 (20 lanes: too many) and a
dynamic batch (as the corpus exports have), both left on the grid's rows with the map as lanes.
"""
import json
import os
import sys

import torch

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/tiny_maps"

# (name, input shape, out channels, kernel, stride, padding, bias, residual)
CASES = [
    ("s2_bias_relu_b3", (3, 16, 4, 4), 64, 3, 2, 1, True, False),
    ("pad_no_bias_b1", (1, 16, 2, 2), 64, 3, 1, 1, False, False),
    ("residual_ragged_72_b3", (3, 16, 2, 2), 72, 3, 1, 1, True, True),
    ("map_1x1_b2", (2, 32, 1, 1), 64, 3, 1, 1, True, False),
    ("conv1d_map_4_b2", (2, 32, 4), 64, 5, 1, 2, True, False),
    ("map_4x4_b1", (1, 16, 4, 4), 64, 3, 1, 1, True, False),
    ("map_5x5_stays_blocked", (1, 16, 5, 5), 64, 3, 1, 1, True, False),
    ("batch_5_rows_on_the_grid", (5, 16, 2, 2), 64, 3, 1, 1, True, False),
    ("dynamic_batch_b3", (3, 16, 2, 2), 64, 3, 1, 1, True, True),
]

# Cases exported with a dynamic batch (as the corpus exports are): the batch stays on the grid,
# only the map is unrolled.
DYNAMIC = {"dynamic_batch_b3"}

TOL = (1.3e-6, 1e-5)


def coarse(shape, g):
    """Values in {-1, -15/16, …, 1}: exact in float32, few distinct bytes."""
    return torch.randint(-16, 17, shape, generator=g).float() / 16


class Block(torch.nn.Module):
    def __init__(self, sd, cin, cout, k, stride, pad, bias, residual):
        super().__init__()
        conv = torch.nn.Conv1d if sd == 1 else torch.nn.Conv2d
        self.conv = conv(cin, cout, k, stride, pad, bias=bias)
        self.residual = residual

    def forward(self, x, r=None):
        y = self.conv(x)
        if self.residual:
            y = y + r
        return torch.relu(y)


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    index = {"torch": torch.__version__, "cases": []}
    by_op = {}
    for name, shape, cout, k, stride, pad, bias, residual in CASES:
        sd = len(shape) - 2
        m = Block(sd, shape[1], cout, k, stride, pad, bias, residual).eval()
        with torch.no_grad():
            m.conv.weight.copy_(coarse(m.conv.weight.shape, g) / 4)
            if bias:
                m.conv.bias.copy_(coarse(m.conv.bias.shape, g))
        x = coarse(shape, g)
        args = [x]
        with torch.no_grad():
            if residual:
                args.append(coarse(m.conv(x).shape, g))
            y = m(*args)
        dynamic = None
        if name in DYNAMIC:
            b = torch.export.Dim("b", min=2)
            dynamic = ({0: b},) + (({0: b},) if residual else ())
        ep = torch.export.export(m, tuple(a.clone() for a in args), dynamic_shapes=dynamic, strict=False)
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
