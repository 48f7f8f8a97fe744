#!/usr/bin/env python3
"""EfficientFormer's Meta4D block and its parts with PyTorch's outputs, for
tests/metaformer_blocks.rs: the pooling token mixer `x + ls · (avg_pool(x) − x)` and the MLP of
1×1 convolutions with batch norm, GELU and layer scale, which full mode computes in one kernel
each (the pool inside its epilogue, the batch norm + GELU inside the first convolution's store;
issue 28, timm_efficientformer_l1).

    /opt/torchenv/bin/python scripts/gen_metaformer_blocks.py [OUTDIR]

OUTDIR defaults to tests/data/metaformer_blocks. Same layout as scripts/gen_conv_blocks.py (one
gzipped stored zip per op holding K.pt2, K.inI.npy, K.outI.npy; index.json listing every case).
The modules are timm's own (`timm.models.efficientformer`), in eval mode, with running
statistics, affine parameters and layer scales drawn from a fixed seed (timm's init leaves
the statistics at 0/1 and the layer scale at 1e-5, which would hide the branches' errors
behind the residual). Cases:

- `meta4d_block`: `MetaBlock2d(12)` on [2, 12, 9, 11] (the border of an odd map: the pool's
  divisor without the padding, `count_include_pad=False`).
- `pool_mixer`: `x + ls · Pooling(3)(x)` on [2, 20, 7, 7], the block's first half alone.
- `conv_bn_gelu`: `GELU(BN(fc1(x)))` of `ConvMlpWithNorm(16, 64)` on [2, 16, 6, 6], the
  output read twice by the GELU, as the graph's output.

Outputs are PyTorch's eager CPU results, compared with assert_close's float32 defaults (the
kernels sum in another order).
"""
import json
import os
import sys

import torch
from timm.models.efficientformer import ConvMlpWithNorm, MetaBlock2d, Pooling

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/metaformer_blocks"
TOL = (1.3e-6, 1e-5)


class PoolMixer(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.token_mixer = Pooling(3)
        self.gamma = torch.nn.Parameter(torch.ones(dim, 1, 1))

    def forward(self, x):
        return x + self.gamma * self.token_mixer(x)


class ConvBnGelu(torch.nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.mlp = ConvMlpWithNorm(dim, hidden)

    def forward(self, x):
        return self.mlp.act(self.mlp.norm1(self.mlp.fc1(x)))


def randomize(m, g):
    """Every parameter and running statistic drawn from `g` (variances positive)."""
    with torch.no_grad():
        for name, t in list(m.named_parameters()) + list(m.named_buffers()):
            if t.dtype != torch.float32:
                continue
            r = torch.randn(t.shape, generator=g)
            t.copy_(r.abs() + 0.5 if name.endswith("running_var") else r * 0.5)
    return m.eval()


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    cases = [
        ("meta4d_block", MetaBlock2d(12), (2, 12, 9, 11)),
        ("pool_mixer", PoolMixer(20), (2, 20, 7, 7)),
        ("conv_bn_gelu", ConvBnGelu(16, 64), (2, 16, 6, 6)),
    ]
    index = {"torch": torch.__version__, "cases": []}
    members = {}
    for n, (name, m, shape) in enumerate(cases):
        randomize(m, g)
        x = torch.randn(shape, generator=g)
        with torch.no_grad():
            y = m(x)
        # The batch dynamic, as the corpus exports it (`Dim.AUTO`): the kernels take it as a size argument.
        ep = torch.export.export(m, (x.clone(),), dynamic_shapes=({0: torch.export.Dim.AUTO},), strict=False)
        members.update({f"{n}.pt2": slim_pt2(ep), f"{n}.in0.npy": npy_bytes(x), f"{n}.out0.npy": npy_bytes(y)})
        targets = sorted({str(t.target).replace("torch.ops.", "") for t in ep.graph.nodes if t.op == "call_function"})
        index["cases"].append({
            "name": name, "op": name, "dtype": "float32", "file": "metaformer.zip.gz", "case": n, "targets": targets,
            "inputs": [["float32", list(x.shape)]],
            "outputs": [["float32", list(y.shape)]],
            "rtol": [TOL[0]], "atol": [TOL[1]],
        })
    write_zip_gz(os.path.join(OUT, "metaformer.zip.gz"), members)
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=0)
    print(f"{len(index['cases'])} cases in {OUT} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
