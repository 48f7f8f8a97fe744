"""Decompose a torch.export archive with the user's own torch, for `decompose --against-torch`.

    python3 against_torch.py IN.pt2 core|full OUT.pt2

Exit 0 with OUT.pt2 written; 3 when torch cannot be imported; 1 when torch fails (its message on
stderr). Shipped inside the xpu-workbench binary and written to a temporary folder when used.
"""
import sys

try:
    import torch
except Exception as e:  # no torch: the caller says so and exits 2
    print(f"cannot import torch: {e}", file=sys.stderr)
    sys.exit(3)

src, mode, dst = sys.argv[1], sys.argv[2], sys.argv[3]
ep = torch.export.load(src)
if mode == "core":
    out = ep.run_decompositions()
else:
    import torch._inductor.lowering  # noqa: F401  (Inductor's max_pool2d decomposition reads it)
    from torch._inductor.decomposition import select_decomp_table

    out = ep.run_decompositions(select_decomp_table())
torch.export.save(out, dst)
print(torch.__version__)
