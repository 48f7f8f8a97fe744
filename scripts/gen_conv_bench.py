#!/usr/bin/env python3
"""Real-size convolutions of the corpus convnets (issue 28), one torch.export archive each, for
`xpu-workbench profile FILE --device opencl`, and torch's own time for the same convolution
(eager oneDNN and torch.compile, 2 threads) printed beside them.

    /opt/torchenv/bin/python scripts/gen_conv_bench.py OUTDIR [--time] [--corpus | --tiny]

Archives go to OUTDIR (not committed: the weights are parameters, resident as in a model, and
the larger ones are several MB). Each shape is one that the costliest kernels of
tv_resnet34 / timm_darknet17 / timm_ecaresnext26t_32x4d / tv_efficientnet_b3 run at batch 2,
with the epilogue the models fuse (ReLU).
"""
import os
import sys
import time

import torch
import torch.nn.functional as F

# (name, input shape, out channels, kernel, stride, padding, groups)
CASES = [
    ("dense3x3_256_14", (2, 256, 14, 14), 256, 3, 1, 1, 1),
    ("dense3x3_128_28", (2, 128, 28, 28), 128, 3, 1, 1, 1),
    ("pointwise_512_256_28", (2, 512, 28, 28), 256, 1, 1, 0, 1),
    ("grouped32_256_28", (2, 256, 28, 28), 256, 3, 1, 1, 32),
    ("depthwise3x3_144_75", (2, 144, 75, 75), 144, 3, 1, 1, 144),
    ("small_zoo_64_8", (1, 64, 8, 8), 64, 3, 1, 1, 1),
    # The corpus exports' own sizes (batch 3 of 64×64 images; `--corpus` makes only these):
    # tv_resnet34's stages, efficientnet-style 1×1 expand / project and depthwise 3×3 / 5×5 / 7×7.
    ("c_dense3x3_64_16", (3, 64, 16, 16), 64, 3, 1, 1, 1),
    ("c_dense3x3_128_8", (3, 128, 8, 8), 128, 3, 1, 1, 1),
    ("c_dense3x3_256_4", (3, 256, 4, 4), 256, 3, 1, 1, 1),
    ("c_dense3x3_512_2", (3, 512, 2, 2), 512, 3, 1, 1, 1),
    # Dense 3×3 stride 2 into a 16×16 map (resnet34's layer2 entry), and a 32×32 map.
    ("c_dense3x3s2_64_128_32", (3, 64, 32, 32), 128, 3, 2, 1, 1),
    ("c_dense3x3_32_32", (3, 32, 32, 32), 32, 3, 1, 1, 1),
    ("c_expand1x1_32_192_16", (3, 32, 16, 16), 192, 1, 1, 0, 1),
    ("c_project1x1_192_32_16", (3, 192, 16, 16), 32, 1, 1, 0, 1),
    ("c_depthwise3x3_144_32", (3, 144, 32, 32), 144, 3, 1, 1, 144),
    ("c_depthwise3x3s2_144_32", (3, 144, 32, 32), 144, 3, 2, 1, 144),
    ("c_depthwise5x5_240_8", (3, 240, 8, 8), 240, 5, 1, 2, 240),
    # timm_convformer_s18's SepConv (7×7 depthwise over its first stage's 128 channels) and a
    # mixnet / efficientnet-style 5×5 depthwise with stride 2.
    ("c_depthwise7x7_128_16", (3, 128, 16, 16), 128, 7, 1, 3, 128),
    ("c_depthwise5x5s2_240_16", (3, 240, 16, 16), 240, 5, 2, 2, 240),
    # Tiny maps (`--tiny` makes only these): output channels across the work-items
    # (`lower::tiny_map`) against the blocked pixels, to find the crossover by map and batch.
    ("t_dense3x3_512_2_b1", (1, 512, 2, 2), 512, 3, 1, 1, 1),
    ("t_dense3x3_512_1", (3, 512, 1, 1), 512, 3, 1, 1, 1),
    ("t_dense3x3_256_4_b1", (1, 256, 4, 4), 256, 3, 1, 1, 1),
    ("t_dense3x3_128_8_b1", (1, 128, 8, 8), 128, 3, 1, 1, 1),
    ("t_dense3x3s2_256_512_4", (3, 256, 4, 4), 512, 3, 2, 1, 1),
    ("t_pointwise_1024_128_2", (3, 1024, 2, 2), 128, 1, 1, 0, 1),
    ("t_pointwise_512_2048_2", (3, 512, 2, 2), 2048, 1, 1, 0, 1),
]


class Conv(torch.nn.Module):
    def __init__(self, cin, cout, k, stride, pad, groups):
        super().__init__()
        self.conv = torch.nn.Conv2d(cin, cout, k, stride, pad, groups=groups, bias=True)

    def forward(self, x):
        return torch.relu(self.conv(x))


def median_ms(f, x, reps=20):
    for _ in range(3):
        f(x)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f(x)
        ts.append((time.perf_counter() - t) * 1e3)
    return sorted(ts)[len(ts) // 2]


def main():
    out = sys.argv[1]
    timing = "--time" in sys.argv
    torch.set_num_threads(2)
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    corpus = "--corpus" in sys.argv
    for name, shape, cout, k, stride, pad, groups in CASES:
        if corpus and not name.startswith("c_"):
            continue
        if ("--tiny" in sys.argv) != name.startswith("t_"):
            continue
        m = Conv(shape[1], cout, k, stride, pad, groups).eval()
        x = torch.randn(shape)
        ep = torch.export.export(m, (x,), strict=False)
        torch.export.save(ep, os.path.join(out, f"{name}.pt2"))
        macs = m.conv.weight.numel() * m(x).shape[-1] * m(x).shape[-2] * shape[0]
        line = f"{name}: {macs / 1e6:.2f} M multiply-adds"
        if timing:
            with torch.no_grad():
                eager = median_ms(m, x)
                # Each case is a new module of one class: without a reset, dynamo's
                # recompile limit (8) sends the later cases back to eager.
                torch._dynamo.reset()
                comp = torch.compile(m)
                compiled = median_ms(comp, x)
            line += f", eager {eager:.3f} ms, torch.compile {compiled:.3f} ms"
        print(line, flush=True)


if __name__ == "__main__":
    main()
