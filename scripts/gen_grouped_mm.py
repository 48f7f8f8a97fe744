#!/usr/bin/env python3
"""Grouped matrix products as mixture-of-experts layers run them, with PyTorch's outputs, for
tests/grouped_mm.rs (the device kernel of `lower::ops::grouped` against torch's own results).

    /opt/torchenv/bin/python scripts/gen_grouped_mm.py [OUTDIR]

OUTDIR defaults to tests/data/grouped_mm. Same layout as scripts/gen_hot_kernels.py (one gzipped
stored zip per op holding K.pt2, K.inI.npy, K.outI.npy; index.json listing every case). The
offsets are a graph input, as in the models (the router's histogram, cumulated), so one export
runs every split; the cases:

- `torch._grouped_mm(x, w, offs=offs)` (aten._grouped_mm), float32, 2-D × 3-D, offsets int32:
  four groups over 24 rows split evenly, with an empty group in the middle, with empty first and
  last groups, and all rows in one group. torch leaves rows past the last offset uninitialised,
  so these splits end at the last row.
- The same with the weight read transposed (`w.transpose(-1, -2)` of `[G, N, K]`), as
  transformers' MoE experts pass `gate_up_proj` and `down_proj`, with a dynamic row count
  (exported once, run at 24 and 7 rows).
- transformers' `grouped_mm_fallback` (the custom op the corpus exports call), whose rows past
  the last offset are zero.
- `torch._grouped_mm` 3-D × 3-D without offsets (a batched product).
- transformers' experts as the corpus exports hold them (`Experts`): the weights are
  parameters (resident, stored transposed per expert by the runtime), gate/up and down read
  transposed, SiLU · mul between; rows dynamic, splits with empty groups, a group of one row,
  rows past the last offset. And `_grouped_mm` of a parameter stored `[G, K, N]`.
- transformers' MoE block in miniature (`MoeBlock`: router `topk`, `sort` of the routed expert
  ids, `histc`, `cumsum`, two grouped products, the scatter back), tokens dynamic, with random
  router logits and with small-integer ones full of ties; its outputs are the block's result
  and the sort's values and the ids through its permutation.

The products' operands are small integers as float32, so every product is exact whatever the
order of the sums, and the archive stays a few KB; the MoE block's are random floats.
"""
import json
import os
import sys

import torch
import transformers.integrations.moe  # noqa: F401  registers torch.ops.transformers.grouped_mm_fallback

from case_files import npy_bytes, slim_pt2, write_zip_gz

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/data/grouped_mm"
TOL = (1.3e-6, 1e-5)


class Grouped(torch.nn.Module):
    def forward(self, x, w, offs):
        return torch._grouped_mm(x, w, offs=offs)


class GroupedTransposed(torch.nn.Module):
    def forward(self, x, w, offs):
        return torch._grouped_mm(x, w.transpose(-1, -2), offs=offs)


class Fallback(torch.nn.Module):
    def forward(self, x, w, offs):
        return torch.ops.transformers.grouped_mm_fallback(x, w.transpose(-1, -2), offs)


class Batched(torch.nn.Module):
    def forward(self, a, b):
        return torch._grouped_mm(a, b)


class MoeBlock(torch.nn.Module):
    """transformers' MoE experts in miniature (integrations/moe.py, grouped_mm_experts_forward):
    route, sort the routed expert ids, count them, one grouped product per projection, scatter
    back. Returns the block's output, the sort's values, and the ids read through the sort's
    permutation: `torch.sort` is unstable, and on CPU it orders equal int64 ids of a line of
    72 otherwise than by position (the op defines no order among equal values), so the
    permutation itself is checked by what it must do — sort the ids, and (through the block's
    output, which scatters the rows back by it) visit every row once."""

    def forward(self, x, router_w, gate_up, down):
        experts = gate_up.shape[0]
        top_v, top_i = torch.topk(x @ router_w.t(), 2, dim=-1)
        weights = torch.softmax(top_v, dim=-1)
        ids = top_i.reshape(-1)
        sorted_ids, perm = torch.sort(ids)
        xs = x[perm // 2]
        counts = torch.histc(ids.float(), bins=experts, min=0, max=experts - 1)
        offs = torch.cumsum(counts, 0).to(torch.int32)
        h = torch._grouped_mm(xs, gate_up.transpose(-1, -2), offs=offs)
        gate, up = h.chunk(2, dim=-1)
        y = torch._grouped_mm(torch.nn.functional.silu(gate) * up, down.transpose(-1, -2), offs=offs)
        out = torch.empty_like(y)
        out[perm] = y
        return (out.view(x.shape[0], 2, -1) * weights.unsqueeze(-1)).sum(1), sorted_ids, ids[perm]


class Experts(torch.nn.Module):
    """transformers' experts as the corpus exports run them (integrations/moe.py): the expert
    weights are parameters (resident: the runtime stores them transposed per expert at upload,
    `lower::ops::grouped_columns`), `gate_up_proj` `[E, 2I, H]` and `down_proj` `[E, H, I]`
    read transposed by `grouped_mm_fallback`, SiLU(gate) · up between the two products."""

    def __init__(self, g, experts, hidden, inner):
        super().__init__()
        self.gate_up_proj = torch.nn.Parameter(torch.randn(experts, 2 * inner, hidden, generator=g) * 0.3)
        self.down_proj = torch.nn.Parameter(torch.randn(experts, hidden, inner, generator=g) * 0.3)

    def forward(self, x, offs):
        h = torch.ops.transformers.grouped_mm_fallback(x, self.gate_up_proj.transpose(-1, -2), offs)
        gate, up = h.chunk(2, dim=-1)
        return torch.ops.transformers.grouped_mm_fallback(torch.nn.functional.silu(gate) * up, self.down_proj.transpose(-1, -2), offs)


class ExpertsPlain(torch.nn.Module):
    """`torch._grouped_mm` with a parameter stored `[G, K, N]`: neighbouring output columns read
    neighbouring elements already, so no transposed copy."""

    def __init__(self, g, experts, depth, columns):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(experts, depth, columns, generator=g) * 0.3)

    def forward(self, x, offs):
        return torch._grouped_mm(x, self.w, offs=offs)


def small_ints(g, *shape):
    return torch.randint(-2, 3, shape, generator=g).float()


def offsets(ends):
    return torch.tensor(ends, dtype=torch.int32)


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    cases = []
    # (name, op file, module, inputs, exported program or None to export on the inputs)
    w = small_ints(g, 4, 16, 32)
    x = small_ints(g, 24, 16)
    ep = torch.export.export(Grouped(), (x, w, offsets([6, 12, 18, 24])), strict=False)
    for name, ends in [("even", [6, 12, 18, 24]), ("empty_middle", [5, 5, 13, 24]), ("empty_ends", [0, 9, 24, 24]), ("one_group", [0, 0, 0, 24])]:
        cases.append((f"grouped_mm_24x16_4x16x32_{name}", "grouped_mm", Grouped(), [x, w, offsets(ends)], ep))
    # [G, N, K] read transposed, rows dynamic: the MoE experts' form.
    rows = torch.export.Dim("rows", min=2, max=4096)
    wt = small_ints(g, 4, 48, 16)
    ep = torch.export.export(GroupedTransposed(), (x, wt, offsets([6, 12, 18, 24])), dynamic_shapes=({0: rows}, None, None), strict=False)
    cases.append(("grouped_mm_transposed_24x16_4x48x16", "grouped_mm", GroupedTransposed(), [x, wt, offsets([3, 3, 20, 24])], ep))
    cases.append(("grouped_mm_transposed_7x16_4x48x16", "grouped_mm", GroupedTransposed(), [small_ints(g, 7, 16), wt, offsets([2, 2, 2, 7])], ep))
    # transformers' fallback: rows past the last offset (here 20..24) stay zero.
    ep = torch.export.export(Fallback(), (x, wt, offsets([6, 12, 18, 24])), strict=False)
    for name, ends in [("all_rows", [6, 12, 18, 24]), ("rows_past_the_end", [4, 4, 11, 20])]:
        cases.append((f"grouped_mm_fallback_24x16_4x48x16_{name}", "grouped_mm_fallback", Fallback(), [x, wt, offsets(ends)], ep))
    cases.append(("grouped_mm_batched_3x5x16_3x16x8", "grouped_mm", Batched(), [small_ints(g, 3, 5, 16), small_ints(g, 3, 16, 8)], None))
    # The whole routed block, tokens dynamic: random logits (distinct: topk by rank) and
    # small-integer ones (ties: PyTorch's selection replayed; the sort's ties by position).
    tokens = torch.export.Dim("tokens", min=2, max=4096)
    router, gate_up, down = torch.randn(8, 16, generator=g), torch.randn(8, 32, 16, generator=g) * 0.3, torch.randn(8, 16, 16, generator=g) * 0.3
    ep = torch.export.export(MoeBlock(), (torch.randn(12, 16, generator=g), router, gate_up, down), dynamic_shapes=({0: tokens}, None, None, None), strict=False)
    cases.append(("moe_block_36x16_8_experts", "moe_block", MoeBlock(), [torch.randn(36, 16, generator=g), router, gate_up, down], ep))
    cases.append(("moe_block_5x16_8_experts", "moe_block", MoeBlock(), [torch.randn(5, 16, generator=g), router, gate_up, down], ep))
    ties = small_ints(g, 8, 16)
    cases.append(("moe_block_36x16_8_experts_tied_logits", "moe_block", MoeBlock(), [small_ints(g, 36, 16), ties, gate_up, down], ep))
    # Expert weights as parameters, rows dynamic: 4 experts, hidden 20 (no column group divides
    # it: idle work-items), inner 12 (gate/up's 24 columns in a group of 32). Splits with empty
    # groups, a group of one row, rows past the last offset (zero), all rows in the last group.
    experts = Experts(g, 4, 20, 12)
    xe = torch.randn(30, 20, generator=g)
    ep = torch.export.export(experts, (xe, offsets([8, 16, 24, 30])), dynamic_shapes=({0: rows}, None), strict=False)
    for name, xs, ends in [
        ("even", xe, [8, 16, 24, 30]),
        ("empty_and_one_row", xe, [0, 1, 1, 30]),
        ("rows_past_the_end", xe, [3, 10, 10, 17]),
        ("last_group_only", xe, [0, 0, 0, 30]),
        ("three_rows", xe[:3].clone(), [1, 2, 2, 3]),
    ]:
        cases.append((f"experts_{xs.shape[0]}x20_4x24x20_4x20x12_{name}", "experts", experts, [xs, offsets(ends)], ep))
    plain = ExpertsPlain(g, 3, 16, 40)
    xp = torch.randn(11, 16, generator=g)
    ep = torch.export.export(plain, (xp, offsets([4, 8, 11])), strict=False)
    for name, ends in [("even", [4, 8, 11]), ("empty_first", [0, 10, 11])]:
        cases.append((f"experts_plain_11x16_3x16x40_{name}", "experts", plain, [xp, offsets(ends)], ep))
    index = {"torch": torch.__version__, "cases": []}
    by_op = {}
    for name, op, m, args, ep in cases:
        with torch.no_grad():
            ys = m(*args)
        ys = list(ys) if isinstance(ys, tuple) else [ys]
        if ep is None:
            ep = torch.export.export(m, tuple(a.clone() for a in args), strict=False)
        members = by_op.setdefault(op, [])
        n = len(members)
        files = {f"{n}.pt2": slim_pt2(ep)}
        for i, y in enumerate(ys):
            files[f"{n}.out{i}.npy"] = npy_bytes(y)
        for i, a in enumerate(args):
            files[f"{n}.in{i}.npy"] = npy_bytes(a)
        members.append(files)
        targets = sorted({str(t.target).replace("torch.ops.", "") for t in ep.graph.nodes if t.op == "call_function"})
        dtype = lambda t: str(t.dtype).replace("torch.", "")
        index["cases"].append({
            "name": name, "op": op, "dtype": "float32", "file": f"{op}.zip.gz", "case": n, "targets": targets,
            "inputs": [[dtype(a), list(a.shape)] for a in args],
            "outputs": [[dtype(y), list(y.shape)] for y in ys],
            "rtol": [TOL[0]] * len(ys), "atol": [TOL[1]] * len(ys),
        })
    for op, members in by_op.items():
        write_zip_gz(os.path.join(OUT, f"{op}.zip.gz"), {nm: data for files in members for nm, data in files.items()})
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=0)
    print(f"{len(index['cases'])} cases in {OUT} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
