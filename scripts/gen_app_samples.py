"""Small real transformers for the app's tests and screenshots (random weights, < 1 MB each).

    python3 scripts/gen_app_samples.py OUTDIR
    python3 scripts/gen_app_samples.py OUTDIR --deep 180   # llama180.pt2: 13,753 nodes, for bench frame

Made with torch 2.15 (CPU) and transformers 5.23: `tiny_llama_auto.pt2` (LlamaForCausalLM, 2 layers,
batch and sequence `Dim.AUTO`, so both ranges are [2, ∞)), `tiny_gpt2.pt2` (GPT2LMHeadModel, 2 layers,
batch in [1, 8], sequence in [2, 128]) and `guarded.pt2` (a reshape by 4 under `torch._check`, whose
14 guards include three over `torch.sym_max` that the workbench lists but cannot evaluate).
`--deep N` writes only `llamaN.pt2`, an N-layer Llama with hidden size 16 (29 MB stored, 2.5 MB
after `scripts/repack_deflate.py`; not committed): the real 12,000-node graph with a module
hierarchy that docs/PERFORMANCE.md measures frames on.
"""
import os
import sys

import torch
from torch.export import Dim, export
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM


class Guarded(torch.nn.Module):
    def forward(self, x, y):
        torch._check(x.shape[1] % 4 == 0)
        return x.reshape(x.shape[0], -1, 4).sum(-1) + y[:, : x.shape[1] // 4]


def save(out, name, model, kwargs, dynamic_shapes):
    model.eval()
    ep = export(model, (), kwargs, dynamic_shapes=dynamic_shapes, strict=False)
    torch.export.save(ep, os.path.join(out, f"{name}.pt2"))
    print(name, len(ep.graph.nodes), "nodes", ep.range_constraints)


def deep(out, layers):
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=layers, num_attention_heads=2,
                      num_key_value_heads=1, max_position_embeddings=128, use_cache=False)
    ids = torch.randint(0, 64, (2, 16))
    save(out, f"llama{layers}", LlamaForCausalLM(cfg), {"input_ids": ids}, {"input_ids": {0: Dim.AUTO, 1: Dim.AUTO}})


def main(out):
    os.makedirs(out, exist_ok=True)
    if "--deep" in sys.argv:
        return deep(out, int(sys.argv[sys.argv.index("--deep") + 1]))
    torch.manual_seed(0)
    ids = torch.randint(0, 128, (2, 16))
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                                         use_cache=False))
    save(out, "tiny_llama_auto", llama, {"input_ids": ids}, {"input_ids": {0: Dim.AUTO, 1: Dim.AUTO}})
    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=128, n_positions=128, n_embd=64, n_layer=2, n_head=4, use_cache=False))
    save(out, "tiny_gpt2", gpt2, {"input_ids": ids},
         {"input_ids": {0: Dim("batch", min=1, max=8), 1: Dim("seq", min=2, max=128)}})
    x, y = torch.randn(2, 8), torch.randn(2, 8)
    ep = export(Guarded(), (x, y), dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO}, {0: Dim.AUTO, 1: Dim.AUTO}))
    torch.export.save(ep, os.path.join(out, "guarded.pt2"))
    print("guarded", len(ep.graph.nodes), "nodes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "samples")
