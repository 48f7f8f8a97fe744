#!/usr/bin/env python3
"""Generate samples/mutation/: a model that writes tensors in place, for functionalization.

    python3 scripts/gen_mutation_sample.py [OUTDIR]

`Mutating` writes a buffer (`count.add_`), a user input through views (`x[:, 1:3].mul_`,
`x.permute(1, 0)[0].fill_`), a fresh mask through two slices (`mask[:2, 1:].fill_`), and reads a
view taken before a write after it (`early`, a `view` of `x`, sees the `mul_`). Exported with a
dynamic batch; torch.export keeps the in-place ops (its graph is not functional).

Writes
  mutating.pt2                 torch.export.save() of the exported program
  mutating.in0.npy             the input
  mutating.out0.npy            PyTorch's eager output
  mutating.x_after.npy         the input after the call (PyTorch wrote into it)
  mutating.count_after.npy     the buffer after the call
  mutating.expect.json         op multisets of the exported graph (`none`), of
                               `run_decompositions()` (`core`) and of Inductor's table
                               (`inductor`), and the graph signature's mutation outputs
"""
import json
import os
import sys
from collections import Counter

import numpy as np
import torch
import torch._inductor.lowering  # noqa: F401  (select_decomp_table needs it loaded)
from torch.export import Dim

OUT = sys.argv[1] if len(sys.argv) > 1 else "samples/mutation"
os.makedirs(OUT, exist_ok=True)


class Mutating(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(4))

    def forward(self, x):
        self.count.add_(1.0)
        early = x.view(-1)
        x[:, 1:3].mul_(2.0)
        x.permute(1, 0)[0].fill_(-1.0)
        mask = x.new_zeros((3, 4))
        mask[:2, 1:].fill_(0.5)
        s = early.sum() + mask.sum()
        return x * self.count + s


def hist(ep):
    return dict(sorted(Counter(str(n.target) for n in ep.graph.nodes if n.op == "call_function").items()))


def main():
    torch.manual_seed(0)
    model = Mutating().eval()
    x = torch.randn(5, 4)
    ep = torch.export.export(Mutating().eval(), (x.clone(),), dynamic_shapes={"x": {0: Dim("b", min=2, max=64)}})
    path = f"{OUT}/mutating.pt2"
    torch.export.save(ep, path)
    ep = torch.export.load(path)
    np.save(f"{OUT}/mutating.in0.npy", x.numpy())
    x_run = x.clone()
    with torch.no_grad():
        out = model(x_run)
    np.save(f"{OUT}/mutating.out0.npy", out.numpy())
    np.save(f"{OUT}/mutating.x_after.npy", x_run.numpy())
    np.save(f"{OUT}/mutating.count_after.npy", model.count.numpy())
    from torch._inductor.decomposition import select_decomp_table

    core = ep.run_decompositions()
    ind = ep.run_decompositions(select_decomp_table())
    exp = {
        "torch_version": torch.__version__,
        "ops": {"none": hist(ep), "core": hist(core), "inductor": hist(ind)},
        "mutations": [[str(o.kind).split(".")[-1], o.target] for o in core.graph_signature.output_specs
                      if "MUTATION" in str(o.kind)],
    }
    with open(f"{OUT}/mutating.expect.json", "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
    print(ep.graph)
    print(core.graph)
    print(json.dumps(exp, indent=1))


if __name__ == "__main__":
    main()
