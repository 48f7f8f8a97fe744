#!/usr/bin/env python3
"""Generate samples/grad_blocks/: a model whose forward holds the blocks torch.export keeps as
higher-order ops with a body, for the importer's inlining (src/import/pt2/inline.rs).

    python3 scripts/gen_grad_blocks_sample.py [OUTDIR]

`GradBlocks` computes rotary-style cos/sin under `torch.no_grad()` (exported as
`wrap_with_set_grad_enabled`), a scaling under `torch.autocast("cpu", enabled=False)` (exported
as `wrap_with_autocast` with enabled=False) and a second no_grad block, around linear layers that need
grad; exported non-strict with a dynamic batch and sequence. Runs in training mode so torch
keeps the grad-mode switches (in eval under no_grad they vanish).

Writes
  grad_blocks.pt2            torch.export.save() of the exported program
  grad_blocks.in0.npy        the input
  grad_blocks.out0.npy       PyTorch's eager output
  grad_blocks.expect.json    torch version, the exported graph's op multiset (the wrappers
                             counted whole) and the multiset with every wrapper's body inlined
"""
import json
import os
import sys
from collections import Counter

import numpy as np
import torch
from torch.export import Dim

OUT = sys.argv[1] if len(sys.argv) > 1 else "samples/grad_blocks"
os.makedirs(OUT, exist_ok=True)


class GradBlocks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(8, 8)
        self.out = torch.nn.Linear(8, 8)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8)))

    def forward(self, x):
        h = self.inp(x)
        pos = torch.arange(x.shape[1], dtype=torch.float32)
        with torch.no_grad():
            freqs = pos[:, None] * self.inv_freq[None, :]
            emb = torch.cat([freqs, freqs], dim=-1)
            cos, sin = emb.cos(), emb.sin()
        with torch.autocast("cpu", enabled=False):
            scaled = h.float() * 0.5
        with torch.no_grad():
            bias = scaled.mean(dim=-1, keepdim=True)
        return self.out(scaled * cos + h * sin - bias)


def hist(graph, inline):
    c = Counter()
    for n in graph.nodes:
        if n.op != "call_function":
            continue
        name = str(n.target)
        if inline and "wrap_with" in name:
            sub = getattr(graph.owning_module, n.args[1 if "set_grad" in name else 4].target)
            c.update(hist(sub.graph, True))
        else:
            c[name] += 1
    return c


def main():
    torch.manual_seed(0)
    model = GradBlocks().train()
    x = torch.randn(3, 5, 8)
    dims = {"x": {0: Dim("b", min=1, max=16), 1: Dim("s", min=2, max=64)}}
    ep = torch.export.export(model, (x,), dynamic_shapes=dims, strict=False)
    path = f"{OUT}/grad_blocks.pt2"
    torch.export.save(ep, path)
    ep = torch.export.load(path)
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert any("wrap_with_set_grad_enabled" in t for t in targets), targets
    assert any("wrap_with_autocast" in t for t in targets), targets
    np.save(f"{OUT}/grad_blocks.in0.npy", x.numpy())
    out = model(x).detach()
    np.save(f"{OUT}/grad_blocks.out0.npy", out.numpy())
    exp = {
        "torch_version": torch.__version__,
        "ops": {"exported": dict(sorted(hist(ep.graph, False).items())), "inlined": dict(sorted(hist(ep.graph, True).items()))},
    }
    with open(f"{OUT}/grad_blocks.expect.json", "w") as f:
        json.dump(exp, f, indent=1)
        f.write("\n")
    print(json.dumps(exp, indent=1))


if __name__ == "__main__":
    main()
