#!/usr/bin/env python3
"""Matrix products whose row operand is read through a view, with PyTorch's outputs, for
tests/view_products.rs: a small decoder's output projection (attention's `[B, H, S, E]` output
transposed to `[B, S, H, E]` and reshaped to `[B, S, H·E]`, an RMS norm after it) and its language-model head (a
`[B, S, D]` hidden state sliced as transformers' `logits_to_keep` does and projected), batch
and sequence dynamic, exported once and run at several bindings: sequence 1, the corpus
exports' 3 × 12, and sequences no block of rows divides (5, 19).

    /opt/torchenv/bin/python scripts/gen_view_products.py [OUTDIR]

OUTDIR defaults to tests/data/view_products. Same layout as scripts/gen_attention_gqa.py (one
gzipped stored zip holding K.pt2, K.inI.npy, K.outI.npy; index.json listing every case), so
the OpInfo loader reads it. Sizes are half the corpus's tiny decoders' (hf_ernie4_5_causal_lm:
4 heads of 16, hidden 64, vocabulary 128; here 2 heads of 16, vocabulary 48, so the weights in
each case's archive stay small) with the same views. Values from a fixed seed; outputs are
PyTorch's eager CPU results, compared with assert_close's float32 tolerances.
"""
import json
import os
import sys

import torch

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/view_products"
TOL = (1.3e-6, 1e-5)
H, E, VOCAB = 2, 16, 48


class DecoderTail(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.o_proj = torch.nn.Linear(H * E, H * E, bias=False)
        self.lm_head = torch.nn.Linear(H * E, VOCAB, bias=False)

    def forward(self, attn, hidden):
        b, _, s, _ = attn.shape
        o = self.o_proj(attn.transpose(1, 2).reshape(b, s, H * E))
        # An RMS norm after it, as a decoder's residual norm reads the projection: the product
        # is realized on its own (`[B·S, D]` rows) instead of in the epilogue of a view.
        o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + 1e-6)
        # transformers' `hidden_states[:, slice(-logits_to_keep, None), :]` with logits_to_keep
        # 0, as the corpus's exports keep it: whole-range slices of dims 0 and 1, written out
        # because `torch.export` drops the Python slice here.
        end = 9223372036854775807
        kept = torch.ops.aten.slice.Tensor(torch.ops.aten.slice.Tensor(hidden, 0, 0, end), 1, 0, end)
        logits = self.lm_head(kept)
        return o, logits


def inputs(g, b, s):
    return [torch.randn(b, H, s, E, generator=g), torch.randn(b, s, H * E, generator=g)]


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    m = DecoderTail()
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.125)
    batch, seq = torch.export.Dim("batch", min=1, max=64), torch.export.Dim("seq", min=1, max=512)
    dims = ({0: batch, 2: seq}, {0: batch, 1: seq})
    ep = torch.export.export(m, tuple(inputs(g, 2, 7)), dynamic_shapes=dims, strict=False)
    index = {"torch": torch.__version__, "cases": []}
    members = []
    for b, s in ((3, 12), (1, 1), (2, 5), (1, 19)):
        args = inputs(g, b, s)
        with torch.no_grad():
            ys = m(*args)
        n = len(members)
        files = {f"{n}.pt2": slim_pt2(ep)}
        for i, y in enumerate(ys):
            files[f"{n}.out{i}.npy"] = npy_bytes(y)
        for i, a in enumerate(args):
            files[f"{n}.in{i}.npy"] = npy_bytes(a)
        members.append(files)
        targets = sorted({str(t.target).replace("torch.ops.", "") for t in ep.graph.nodes if t.op == "call_function"})
        index["cases"].append({
            "name": f"decoder_tail_{b}x{s}", "op": "nn.functional.linear", "dtype": "float32",
            "file": "view_products.zip.gz", "case": n, "targets": targets,
            "inputs": [["float32", list(a.shape)] for a in args],
            "outputs": [["float32", list(y.shape)] for y in ys],
            "rtol": [TOL[0]] * len(ys), "atol": [TOL[1]] * len(ys),
        })
    write_zip_gz(os.path.join(OUT, "view_products.zip.gz"), {nm: data for files in members for nm, data in files.items()})
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=0)
    print(f"{len(index['cases'])} cases in {OUT} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
