#!/usr/bin/env python3
"""Reductions over a norm's output, and norms over a dim that is not the last, shrunk from issue
28's costliest reduction kernels, with PyTorch's outputs, for tests/norm_reductions.rs: each
checks that the norm's statistics are folded in one kernel (not once per output of their
consumer) and the results against PyTorch on OpenCL.

    /opt/torchenv/bin/python scripts/gen_norm_reductions.py [OUTDIR]

OUTDIR defaults to tests/data/norm_reductions. Same layout as scripts/gen_hot_kernels.py (one
gzipped stored zip per op holding K.pt2, K.inI.npy, K.outI.npy; index.json listing every case).
The cases, each exported once with its dynamic dims and run at two bindings:

- `channel_norm_pool`: timm's `LayerNorm2d` (a layer norm over the channels of an NCHW map,
  through `permute`) and a global average pool, MaxxViT's and CoAtNet's heads: the norm's
  statistics were folded once per channel of the pool's output. Batch dynamic.
- `channel_norm`: the same norm written as ConvNeXt's `channels_first` one (`mean(1)`,
  `pow(2).mean(1)`), alone: its elementwise consumer folded the statistics once per channel.
  Height and width dynamic, so the statistics' kernel has no static column.
- `token_mean_layer_norm`: `layer_norm(x).mean(1)` over `[B, N, C]`, EfficientFormer's head: the
  norm's row statistics were folded once per output channel. Tokens dynamic.
- `token_mean_rms_norm`: the same over an RMS norm (AIMv2's head). Batch and tokens dynamic.

Values from a fixed seed; outputs are PyTorch's eager CPU results, compared with assert_close's
float32 defaults (the kernels sum in another order).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/norm_reductions"
TOL = (1.3e-6, 1e-5)


class ChannelNormPool(torch.nn.Module):
    """timm's LayerNorm2d, then the head's global average pool."""

    def forward(self, x, w, b):
        y = F.layer_norm(x.permute(0, 2, 3, 1), (x.shape[1],), w, b, 1e-5).permute(0, 3, 1, 2)
        return y.mean((2, 3))


class ChannelNorm(torch.nn.Module):
    """ConvNeXt's LayerNorm with data_format="channels_first"."""

    def forward(self, x, w, b):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        y = (x - u) / torch.sqrt(s + 1e-6)
        return w[:, None, None] * y + b[:, None, None]


class TokenMeanLayerNorm(torch.nn.Module):
    def forward(self, x, w, b):
        return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5).mean(1)


class TokenMeanRmsNorm(torch.nn.Module):
    def forward(self, x, w):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        return y.mean(1)


def rand(g, *shape):
    return torch.randn(shape, generator=g)


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=64)
    tokens = torch.export.Dim("tokens", min=2, max=1024)
    h, w_ = torch.export.Dim("h", min=2, max=256), torch.export.Dim("w", min=2, max=256)
    cases = []  # (name, op, module, [inputs per binding], dynamic_shapes)
    cw, cb = rand(g, 32), rand(g, 32)
    cases.append(("channel_norm_pool", ChannelNormPool(), [[rand(g, n, 32, 8, 8), cw, cb] for n in (2, 1)], ({0: batch}, None, None)))
    nw, nb = rand(g, 24), rand(g, 24)
    cases.append(("channel_norm", ChannelNorm(), [[rand(g, 2, 24, hh, ww), nw, nb] for hh, ww in ((6, 10), (3, 5))], ({2: h, 3: w_}, None, None)))
    tw, tb = rand(g, 48), rand(g, 48)
    cases.append(("token_mean_layer_norm", TokenMeanLayerNorm(), [[rand(g, 3, n, 48), tw, tb] for n in (49, 7)], ({1: tokens}, None, None)))
    rw = rand(g, 40)
    cases.append(("token_mean_rms_norm", TokenMeanRmsNorm(), [[rand(g, b, n, 40), rw] for b, n in ((2, 17), (1, 4))], ({0: batch, 1: tokens}, None)))
    index = {"torch": torch.__version__, "cases": []}
    by_op = {}
    for op, m, bindings, dyn in cases:
        ep = torch.export.export(m, tuple(a.clone() for a in bindings[0]), dynamic_shapes=dyn, strict=False)
        members = by_op.setdefault(op, [])
        for args in bindings:
            y = m(*args)
            n = len(members)
            files = {f"{n}.pt2": slim_pt2(ep), f"{n}.out0.npy": npy_bytes(y)}
            for i, a in enumerate(args):
                files[f"{n}.in{i}.npy"] = npy_bytes(a)
            members.append(files)
            targets = sorted({str(t.target).replace("torch.ops.", "") for t in ep.graph.nodes if t.op == "call_function"})
            shape = "x".join(str(d) for d in args[0].shape)
            index["cases"].append({
                "name": f"{op}_{shape}", "op": op, "dtype": "float32", "file": f"{op}.zip.gz", "case": n, "targets": targets,
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
