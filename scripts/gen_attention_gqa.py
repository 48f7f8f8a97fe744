#!/usr/bin/env python3
"""Grouped-query attention with PyTorch's outputs, for tests/attention_gqa.rs: Llama's and
Qwen2's attention as the zoo exports it (key and value heads repeated through `expand` +
`reshape`, a float mask, `scaled_dot_product_attention`), batch and sequence dynamic, exported
once per head layout and run at several bindings: one key (sequence 1), sequences no work-group
size divides (5, 19), and Llama's own 12.

    /opt/torchenv/bin/python scripts/gen_attention_gqa.py [OUTDIR]

OUTDIR defaults to tests/data/attention_gqa. Same layout as scripts/gen_matmul_blocks.py (one
gzipped stored zip per op holding K.pt2, K.inI.npy, K.outI.npy; index.json listing every case),
so the OpInfo loader reads it. Head layouts: 4 query heads over 2 key/value heads (Llama's
zoo sample) and over 1 (multi-query), head dim 8. Values from a fixed seed; outputs are
PyTorch's eager CPU results, compared with assert_close's float32 tolerances.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/attention_gqa"
TOL = (1.3e-6, 1e-5)
HQ, E = 4, 8


class Gqa(torch.nn.Module):
    """transformers' `repeat_kv` then SDPA: key/value [B, Hk, S, E] → [B, Hq, S, E]."""

    def __init__(self, hk):
        super().__init__()
        self.hk = hk

    def forward(self, q, k, v, mask):
        b, _, s, e = k.shape
        g = HQ // self.hk
        k = k[:, :, None, :, :].expand(b, self.hk, g, s, e).reshape(b, HQ, s, e)
        v = v[:, :, None, :, :].expand(b, self.hk, g, s, e).reshape(b, HQ, s, e)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def inputs(g, hk, b, s):
    mask = torch.randn(b, 1, s, s, generator=g)
    # A masked-out key per row where there is more than one, as a padding mask makes them.
    if s > 1:
        mask[:, :, :, 0] = torch.finfo(torch.float32).min
    return [torch.randn(b, HQ, s, E, generator=g), torch.randn(b, hk, s, E, generator=g),
            torch.randn(b, hk, s, E, generator=g), mask]


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    batch, seq = torch.export.Dim("batch", min=1, max=64), torch.export.Dim("seq", min=1, max=512)
    dims = ({0: batch, 2: seq}, {0: batch, 2: seq}, {0: batch, 2: seq}, {0: batch, 2: seq, 3: seq})
    cases = []
    for hk in (2, 1):
        m = Gqa(hk)
        ep = torch.export.export(m, tuple(inputs(g, hk, 2, 7)), dynamic_shapes=dims, strict=False)
        for b, s in ((3, 12), (1, 1), (2, 5), (1, 19)):
            cases.append((f"gqa_{HQ}q_{hk}kv_{b}x{s}", m, inputs(g, hk, b, s), ep))
    index = {"torch": torch.__version__, "cases": []}
    members = []
    for name, m, args, ep in cases:
        y = m(*args)
        n = len(members)
        files = {f"{n}.pt2": slim_pt2(ep), f"{n}.out0.npy": npy_bytes(y)}
        for i, a in enumerate(args):
            files[f"{n}.in{i}.npy"] = npy_bytes(a)
        members.append(files)
        targets = sorted({str(t.target).replace("torch.ops.", "") for t in ep.graph.nodes if t.op == "call_function"})
        index["cases"].append({
            "name": name, "op": "scaled_dot_product_attention", "dtype": "float32", "file": "sdpa.zip.gz", "case": n,
            "targets": targets,
            "inputs": [["float32", list(a.shape)] for a in args],
            "outputs": [["float32", list(y.shape)]],
            "rtol": [TOL[0]], "atol": [TOL[1]],
        })
    write_zip_gz(os.path.join(OUT, "sdpa.zip.gz"), {nm: data for files in members for nm, data in files.items()})
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=0)
    print(f"{len(index['cases'])} cases in {OUT} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
