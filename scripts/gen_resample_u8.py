#!/usr/bin/env python3
"""Writes tests/data/resample_u8/: PyTorch's uint8 bilinear and bicubic resizing (the fixed-point
CPU kernels) on small images, for tests/resample_u8.rs.

    /opt/torchenv/bin/python scripts/gen_resample_u8.py

index.json lists the cases: mode, input shape, output size or scale factors, align_corners;
K.in.npy and K.out.npy hold each case's image and PyTorch's result. Three channels (the layout
OpInfo samples and most images have, which PyTorch's AVX kernel takes); sizes up and down,
square and not, both align_corners, scale factors given and not.
"""
import json
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "resample_u8")

CASES = [
    # (input H, W, output size or None, scale factors or None, align_corners)
    (4, 4, (5, 5), None, True),
    (4, 4, (2, 2), None, False),
    (4, 4, None, (0.6, 0.6), False),
    (4, 4, (3, 3), None, True),
    (5, 7, (9, 3), None, False),
    (5, 7, (9, 3), None, True),
    (3, 6, None, (1.7, 0.5), False),
    (6, 3, (12, 7), None, True),
    (2, 9, (1, 4), None, False),
    (7, 5, (7, 11), None, False),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    index = {"torch": torch.__version__, "cases": []}
    k = 0
    for mode in ("bilinear", "bicubic"):
        for h, w, size, scale, align in CASES:
            x = torch.randint(0, 256, (2, 3, h, w), dtype=torch.uint8)
            y = torch.nn.functional.interpolate(x, size=size, scale_factor=scale, mode=mode, align_corners=align)
            np.save(os.path.join(OUT, f"{k}.in.npy"), x.numpy())
            np.save(os.path.join(OUT, f"{k}.out.npy"), y.numpy())
            index["cases"].append({"case": k, "mode": mode, "input": list(x.shape), "output": list(y.shape),
                                   "output_size": list(size) if size else None,
                                   "scale_factors": list(scale) if scale else None, "align_corners": align})
            k += 1
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()
