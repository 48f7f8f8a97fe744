#!/usr/bin/env python3
"""Small real exports of corpus patterns whose whole architecture is over the sample budget.

    /opt/torchenv/bin/python scripts/gen_corpus_gaps.py samples/corpus/torch-2.15

hf_bridgetower_text_embeddings: BridgeTower's text embeddings (transformers'
`BridgeTowerTextEmbeddings`, a tiny config), whose `create_position_ids_from_input_ids` casts an
int64 `cumsum` to the int32 mask with `type_as` — the call the whole BridgeTowerModel (1.6 MB)
failed on in the corpus. Exported with a dynamic batch and sequence like scripts/gen_corpus.py
does, written by scripts/corpus_expect.py (tests/corpus_slice.rs reads the files).
"""
import os
import sys

import torch
from torch.export import Dim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_expect import save_export  # noqa: E402


class Embeddings(torch.nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import BridgeTowerTextConfig
        from transformers.models.bridgetower.modeling_bridgetower import BridgeTowerTextEmbeddings

        cfg = BridgeTowerTextConfig(vocab_size=40, hidden_size=16, max_position_embeddings=40, type_vocab_size=1, pad_token_id=1)
        self.inner = BridgeTowerTextEmbeddings(cfg).eval()

    def forward(self, input_ids):
        return self.inner(input_ids=input_ids)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = Embeddings().eval()
    # Padding (id 1) inside the rows: positions restart the count, as the cast's use does.
    ids1 = torch.randint(2, 40, (3, 9))
    ids1[0, 6:] = 1
    ids1[2, 4:] = 1
    ids0 = ids1[:2, :5].clone()
    dyn = {"input_ids": {0: Dim.AUTO, 1: Dim.AUTO}}
    with torch.no_grad():
        ep = torch.export.export(model, (ids1,), dynamic_shapes=dyn)
    source = "transformers:BridgeTowerTextEmbeddings"
    save_export(out, "hf_bridgetower_text_embeddings", source, model, ep, [(ids0,), (ids1,)])


if __name__ == "__main__":
    main()
