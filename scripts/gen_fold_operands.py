#!/usr/bin/env python3
"""A fold over a broadcast product whose operands are costly pointwise cones, shrunk from
Bailing-hybrid's chunked linear attention (transformers' `torch_chunk_gated_delta_rule`), with
PyTorch's outputs, for tests/fold_operands.rs: it checks that the operands' cones are computed
once in kernels of their own (`lower::fold_operands`), not once per output they are broadcast
across inside the fold's loop, and the results against PyTorch on OpenCL.

    /opt/torchenv/bin/python scripts/gen_fold_operands.py [OUTDIR]

OUTDIR defaults to tests/data/fold_operands. Same layout as scripts/gen_norm_reductions.py
(one gzipped stored zip per op holding K.pt2, K.inI.npy, K.outI.npy; index.json listing every
case). The case, exported once with the batch dynamic and run at two bindings:

- `decay_masked_kk`: `key = l2norm(silu(k))`, `k_beta = key * sigmoid(b)`, `g` a cumulative sum
  of log-decays, and `-(k_beta.unsqueeze(-2) * key.unsqueeze(-3) * decay).sum(-1)` with
  `decay = exp(g_i - g_j)` masked above the diagonal: each element of `key` and `k_beta` is read
  by all 32 positions of its chunk, inside the loop over the head dim.

Values from a fixed seed; outputs are PyTorch's eager CPU results, compared with assert_close's
float32 defaults (the kernels sum in another order).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/fold_operands"
TOL = (1.3e-6, 1e-5)
CHUNK = 32


class DecayMaskedKK(torch.nn.Module):
    """The intra-chunk `attn` of the gated delta rule, before its row-by-row triangle update."""

    def forward(self, k, b, a):
        key = F.silu(k)
        key = key / torch.sqrt((key * key).sum(-1, keepdim=True) + 1e-6)
        k_beta = key * torch.sigmoid(b).unsqueeze(-1)
        g = (-torch.exp(a)).cumsum(-2)
        strict = torch.triu(torch.ones(CHUNK, CHUNK, dtype=torch.bool), diagonal=1)
        decay = (g.unsqueeze(-2) - g.unsqueeze(-3)).masked_fill(strict[..., None], float("-inf")).exp()
        return -(k_beta.unsqueeze(-2) * key.unsqueeze(-3) * decay).sum(-1)


def rand(g, *shape):
    return torch.randn(shape, generator=g)


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=64)
    heads, dim = 2, 32
    cases = [("decay_masked_kk", DecayMaskedKK(),
              [[rand(g, n, heads, CHUNK, dim), rand(g, n, heads, CHUNK), rand(g, n, heads, CHUNK, dim) - 2] for n in (2, 1)],
              ({0: batch}, {0: batch}, {0: batch}))]
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
