#!/usr/bin/env python3
"""Small modules that hold one construct each of what the corpus tier (issue 25) found our passes
get wrong, exported by torch as the corpus exports its architectures (`Dim.AUTO`, two bindings).

    /opt/torchenv/bin/python scripts/gen_construct_samples.py [OUT] [--only NAME,..]

OUT defaults to samples/corpus/torch-<major.minor>/; each NAME gets the files of
scripts/corpus_expect.py (NAME.pt2, NAME.b{0,1}.{in,out}{i}.npy, NAME.expect.json), which
tests/corpus_constructs.rs reads. The constructs, each as a transformers model spells it:
  tensor_detach  `torch.tensor(...)` in forward (lift_fresh_copy + detach_) and `.detach()`
                 (Bloom's alibi slopes, BERT-likes' buffers)
  sym_min_max    `min(seq, n)` / `max(seq, n)` of a dynamic size (HYV4, MPT, MiniMax)
  pad_symint     `F.pad` by `-len % block`, a SymInt (LongT5, Pegasus-X blocks)
  aranges        `arange` with a negative step from a dynamic start (Parakeet), with a float step
                 (XLNet, Parakeet) and from a start (`arange.start`)
  factories      `zeros_like`, `empty_like` of a product of sizes, `floor_divide` by a number,
                 `linalg.norm` over one dim, a `padding="same"` convolution
  repeat_norm    `repeat_interleave(n, dim=1)` (grouped-query attention's key/value repeat) and
                 `linalg.vector_norm` over the last dim (CLIP-likes' embedding norms) and over
                 dims of size 1 (ConvNeXt-V2's GRN on a 1x1 map: `abs`); exported by
                 torch 2.11 too (`/work/torch211`-style venv), whose export table keeps the norm
  pool_split     `AvgPool1d` (SEW, Qwen2-Audio), `MaxPool1d` (CANINE), `adaptive_avg_pool1d` of a
                 transposed (channels-last) tensor (FocalNet), `split` into chunks of a size (GPT-J, OpenAI-GPT,
                 ImageGPT), `torch.concat` (Phi-MoE), and DeBERTa-likes' 0-dim
                 `torch.tensor(k).type_as(relative_pos)` (SEW-D, LongT5, Pegasus-X, ProphetNet)
  grid_all       `meshgrid(indexing="xy")` and `"ij"` of coordinates (DINOv3) and `all(dim)` of a
                 boolean mask (LASR)
  select_write   a write into a strided slice of a `select` (Cosmos3's and Qwen3-VL's interleaved
                 rotary sections): functionalization's `select_scatter`, which export's table
                 makes `arange`/`eq`/`expand`/`where`
  reshape_infer  `reshape` with a `-1` of a tensor that is not contiguous: after a transpose (Bloom,
                 MVP, TrOCR, XGLM attention heads), of a slice (viewable, and not), with a
                 quotient that is a number, and of a contiguous tensor
  matmul_fold    a batch of rows times a matrix: a parameter (folded into one `mm`, the rows copied
                 where they do not merge: HaloNet's relative positions), an input that
                 requires no grad, and `F.linear`'s weight (its `weight.t()` is made below
                 autograd and requires none): `bmm`
  mask_fill      CPM-Ant's `masked_fill(mask, torch.tensor(..))` with a 0-dim tensor value and a
                 `|` of two boolean masks of different ranks, and `where(mask, 0.5, x)`
  resize         `F.interpolate`: bicubic of an NHWC-permuted parameter (ViTDet's, YOLOS's and
                 Pixio's position embeddings), bilinear by a scale factor and with aligned
                 corners (DPT, MobileViT), linear 1-D (SAM's relative positions), bicubic by a
                 fractional factor; only the batch is dynamic, as in the vision models
  conv_same      `padding="same"` with an even kernel (LASR's depthwise Conv1d, kernel 32):
                 ATen pads the input on the right first (`constant_pad_nd`), 1-D and 2-D
  rotary_complex Llama 4's rotary embedding in complex numbers: `polar(ones_like(f), f)` times the
                 attention scaling, `view_as_complex` of the query, a complex `mul` by a slice and
                 `unsqueeze` of the frequencies, `view_as_real(..).flatten(3)`, and a complex
                 `add`/`sub`/`div` and `cat` beside it
  chunk_dynamic  `chunk(3)` of a `3*s` dim made by `cat` of three streams (ProphetNet's main and
                 n-gram streams), along dims 1 and 2
  spellings      ops the tables rewrite one for one: `torch.max(x, y)` (XGLM), `argsort` (ViT-MAE),
                 `1.0 - x` (XLNet), `fft.fftn(..).real` (FNet), `clamp(x, min=tensor)` (Phi-MoE),
                 `logsumexp` (Inkling), `adaptive_avg_pool2d` to 7×7 (CSATv2), `diff` with a
                 prepended frame (Voxtral-Realtime)
  unfold_span    ConvBERT's `F.unfold` of a `[b, c, s, 1]` sequence (`im2col`: torch/_decomp's
                 `arange`s, `index` and the `s + 2*pad` size it traces), and a strided, dilated one
  float_step_arange  XLNet's `arange(klen, -qlen, -1.0, dtype=int64)`: a float step between dynamic
                 bounds, whose length Inductor's table traces as SymFloat arithmetic
  layout_clones  where `.contiguous()`/`reshape` copy (a `clone`) after layouts ATen computes:
                 `rms_norm` of a transposed tensor (timm AIMv2), attention pooling by a
                 parameter query expanded over the batch (AIMv2), one key/value head against
                 two query heads (Falcon: 2.11 broadcasts, 2.15 repeats), heads from `expand` +
                 `reshape` (GPT-BigCode), `masked_fill` of an expanded tensor (Doge); exported by
                 torch 2.11 too
  small_rules    composite ops the traced table had no variant for, and factories Inductor lays
                 out: `reshape_as` of a transposed tensor into another rank (LeViT, RoFormer),
                 `expand_as` (GPT-NeoX-Japanese), `new_empty(..)` copied into (HY-V4),
                 `zeros_like(.., memory_format=contiguous_format)` (GroupViT), `ones_like` of a
                 transposed and `zeros_like` of an expanded tensor (ProphetNet), `group_norm` of a
                 channels-last and of a transposed input (CPUBone), an int32 `arange` (Bloom, MPT)
  matmul_layouts matmul and linear on the layouts torch's re-trace sees: a 2-D parameter times a
                 batch (Mamba's `A @ x`, folded through the transposed batch), a batch whose rows
                 merge but whose columns are strided (`bmm`: Python's should_fold wants it
                 contiguous), sdpa's output transposed back, gated and projected (Afmoe's,
                 BitNet's, Data2Vec-Vision's non-contiguous `linear` input after the math
                 attention's `[L, N, H, E]` layout), and `bmm` of row×column and column×row
                 batches (Inductor's CPU table: `mul`/`sum`, and from 2.15 one `mul`)
  conv_nhwc      a convolution of a token grid seen as NCHW with NHWC strides
                 (`x.transpose(1, 2).reshape(b, c, h, w)`, FocalNet's patch embeddings): CPU
                 convolution writes a channels-last output, so `flatten(2).transpose(1, 2)`
                 is contiguous and Inductor's LayerNorm copies nothing; beside it the same
                 on a contiguous input (a copy); only the batch is dynamic
  inplace_views  in-place adds into what PyTorch's functionalization sees as views: a
                 `view(..).detach().to(same dtype)` (Kosmos-2.5's segment embeddings), a 3-D
                 `matmul`'s result (MobileBERT's decoder bias, an `mm` reshaped) and a 4-D one
                 (Nystromformer's `context += conv(v)`, a `bmm` reshaped), each read afterwards
  attn_contiguous  `sdpa(q, k, v).transpose(1, 2).contiguous()` (Phi-3, MiniMax): a copy under
                 export's table (attention math, `[B, H, L, E]`); under Inductor's, CPU flash
                 attention lays its output out as the query (`empty_like`), so a copy for a
                 contiguous query and none for a fused projection's (`[B, L, H, E]` in memory)
  linear_layouts `F.linear` that ATen does not fold into `addmm`: of a `mul` laid out as its
                 transposed first operand (ConvBERT's span convolution gate: `matmul` + `add`),
                 of a 1-D input with and without a bias (Gradium), and `matmul` of 1-D operands
  where_numbers  `torch.where(mask, 0.0, -1e10)` and `where(mask, 1, 0)`: `where.Scalar` (LongT5)
  pad_multiple   Bailing-hybrid's chunked attention: a length padded up to a multiple of the chunk
                 (`(chunk - len % chunk) % chunk`), viewed as chunks of `n // (n // chunk)`, a
                 chunk × chunk mask filled into each chunk's scores
  reduction_chain  DeepSeek-V4's Sinkhorn normalisation: row and column sums alternating, 30
                 times, a chain of small reductions each read by the next
  batch_stats_norm  timm NF-Nets' `ScaledStdConv2d`: the weight standardised by `F.batch_norm`
                 in training mode without running statistics, then the convolution
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.export import Dim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_expect import save_export  # noqa: E402


class TensorDetach(torch.nn.Module):
    def forward(self, x):
        slope = torch.tensor(0.5, dtype=torch.float32)  # lift_fresh_copy, then detach_
        y = x.detach() * slope
        return y + x.detach().sum(-1, keepdim=True)


class SymMinMax(torch.nn.Module):
    def forward(self, x):
        n = torch.sym_min(x.shape[1], 5)
        m = torch.sym_max(x.shape[1], 3)
        return x[:, :n] * 2, torch.zeros(x.shape[0], m)


class PadSymInt(torch.nn.Module):
    block = 4

    def forward(self, x):
        pad = -x.shape[1] % self.block
        y = F.pad(x, (0, 0, 0, pad), value=0.0)
        return y.reshape(x.shape[0], -1, self.block, x.shape[2]).sum(2)


class Aranges(torch.nn.Module):
    def forward(self, x):
        n = x.shape[1]
        rel = torch.arange(n - 1, -n, -1)  # Parakeet's relative positions: a negative step
        freq = torch.arange(0, 8, 2.0, dtype=torch.int64).float()  # XLNet: a float step, int dtype
        inv = torch.arange(0, 8, 2, dtype=torch.float) / 8  # Parakeet's inverse frequencies
        tail = torch.arange(2, n)  # arange.start
        return x.sum(-1, keepdim=True) + rel[:n].float(), freq * inv, tail * 3


class Factories(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(3, 4, 3, padding="same")

    def forward(self, x):
        z = torch.zeros_like(x) + x  # T5's position bias
        y = x.reshape(-1) * 2
        e = torch.empty_like(y)  # the MoE routers' scratch buffers
        e.copy_(y)
        idx = torch.arange(x.shape[0] * x.shape[1]) // 2  # their `index // 2`
        n = torch.linalg.norm(x, dim=-1, keepdim=True)  # OWL-ViT's embedding norms
        return z / n, e[idx], self.conv(x.transpose(1, 2))


class RepeatNorm(torch.nn.Module):
    def forward(self, x):
        kv = x.repeat_interleave(2, dim=1)  # repeat_kv of a [batch, heads, seq, dim] tensor
        flat = x.reshape(-1).repeat_interleave(3)  # no dim: the flattened tensor
        n = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        corner = x[:, :, :1, :1]  # ConvNeXt-V2's GRN on a 1x1 map: a norm over size-1 dims is abs
        ones = torch.linalg.vector_norm(corner, dim=(2, 3), keepdim=True) + torch.linalg.vector_norm(corner, dim=(2, 3))[..., None, None]
        return kv * 2, flat, x / n + ones


class PoolSplit(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = torch.nn.AvgPool1d(2)
        self.max_pool = torch.nn.MaxPool1d(2)  # CANINE's downsampling
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x, y):
        pooled = self.pool(x.transpose(1, 2))
        a, b, c = self.proj(x).split(3, dim=-1)  # a projection's static 8 = 3 + 3 + 2 (GPT-J's qkv)
        rel = torch.arange(x.shape[1])[None, :] - torch.arange(x.shape[1])[:, None]
        mid = torch.tensor(2).type_as(rel)
        rel = torch.where(rel.abs() < mid, mid, rel)
        pooled = pooled.sum(-1) + F.adaptive_avg_pool1d(x.transpose(1, 2), 1)[..., 0]  # FocalNet's head
        return pooled, self.max_pool(y), torch.concat([c, a], dim=-1) * b.sum(-1, keepdim=True), rel


class GridAll(torch.nn.Module):
    def forward(self, x):
        h = torch.arange(x.shape[1], dtype=torch.float32)
        w = torch.arange(x.shape[2], dtype=torch.float32)
        gx, gy = torch.meshgrid(h, w, indexing="xy")
        gi, gj = torch.meshgrid(h, w, indexing="ij")
        mask = x > 0
        return gx + gy.sum(), gi * gj, mask.all(dim=-1), (x + gi.sum() + gx.sum())


class SelectWrite(torch.nn.Module):
    def forward(self, x):
        f = x * 2
        f[0][..., 1::3] = f[1][..., 1::3]
        f[0][..., 2::3] = f[2][..., 2::3]
        return f[0] + 1, f


class MaskFill(torch.nn.Module):
    def forward(self, x, y):
        mask = (x[:, None, :, :] > 1) | (y > 0)  # [b, 1, s, s] | [s, s]
        neg = torch.scalar_tensor(-1e4)  # not -inf: a row all masked would be NaN
        z = x[:, None, :, :].expand(-1, 2, -1, -1) * 2
        filled = torch.where(mask, 0.5, z)  # a scalar `self`: where.ScalarSelf (Gemma-4's masks)
        return torch.masked_fill(z, mask, neg).softmax(-1) + filled, mask ^ (y < 0)


class ReshapeInfer(torch.nn.Module):
    def forward(self, x):
        b, s = x.shape[0], x.shape[1]
        heads = x.view(b, s, 2, 3, 4)[:, :, :, 0].transpose(1, 2)
        copied = heads.reshape(b * 2, -1, 4)
        viewed = x[:, :, :8].reshape(-1, 8)
        split = x[:, :, :8].reshape(b, -1, 4)
        number = heads.reshape(b, -1, s, 4)
        whole = x.reshape(-1, 24)
        return copied.sum(0), viewed.sum(0), split.sum(1), number.sum(2), whole.sum(0)


class MatmulFold(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 6))
        self.v = torch.nn.Parameter(torch.randn(6, 8))

    def forward(self, x, y):
        rows = x.transpose(0, 1)
        return x @ self.w, rows @ self.w, rows @ y, F.linear(rows, self.v)


class Resize(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = torch.nn.Parameter(torch.randn(1, 16, 8))
        self.rel = torch.nn.Parameter(torch.randn(7, 4))

    def forward(self, x):
        p = self.pos.reshape(1, 4, 4, 8).permute(0, 3, 1, 2)
        p = F.interpolate(p, size=(6, 6), mode="bicubic", align_corners=False)
        a = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        c = F.interpolate(x, size=(5, 9), mode="bilinear", align_corners=True)
        r = F.interpolate(self.rel.reshape(1, 7, -1).permute(0, 2, 1), size=11, mode="linear")
        b = F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=True)
        return x + p, a, c, r, b


class ConvSame(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv1d(4, 4, 4, padding="same", groups=4, bias=False)
        self.c2 = torch.nn.Conv2d(4, 3, (2, 3), padding="same", dilation=(1, 2))

    def forward(self, x):
        y = self.c1(x)
        return y, self.c2(y.unsqueeze(-1).expand(-1, -1, -1, 5))


class Spellings(torch.nn.Module):
    def forward(self, x, y):
        order = torch.argsort(x, dim=-1, descending=True)
        m = torch.max(x, y) + (1.0 - x)
        f = torch.fft.fftn(x, dim=(1, 2)).real
        c = torch.clamp(x, min=y.mean(-1, keepdim=True))
        p = F.adaptive_avg_pool2d(x.unsqueeze(1), (7, 7))
        d = torch.diff(x, dim=-1, prepend=y[..., :1])
        return order, m, f, c, torch.logsumexp(x, -1), p, d



class RotaryComplex(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, 8, 2, dtype=torch.float) / 8)), persistent=False)

    def forward(self, xq, position_ids):
        freqs = position_ids[..., None].float() * self.inv_freq
        freqs_cis = torch.polar(torch.ones_like(freqs), freqs) * 0.5
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        out = torch.view_as_real(xq_ * freqs_cis[:, :, None, :]).flatten(3)
        mixed = torch.cat([xq_ + freqs_cis[:, :, None, :], xq_ - xq_ / (freqs_cis[:, :, None, :] + 2)], dim=-1)
        return out.type_as(xq), torch.view_as_real(mixed.transpose(1, 2).contiguous())


class ChunkDynamic(torch.nn.Module):
    def forward(self, x):
        y = torch.cat([x, x * 2, x + 1], dim=1)
        a, b, c = y.chunk(3, dim=1)
        p, q, r = y.transpose(1, 2).unsqueeze(1).chunk(3, dim=3)
        return a + b * c, p - q * r

class UnfoldSpan(torch.nn.Module):
    """ConvBERT's span-based dynamic convolution: `F.unfold` of the transposed sequence as a
    `[b, c, s, 1]` image, a kernel padded to keep the length, and one strided and dilated."""

    def forward(self, x):
        y = x.transpose(1, 2).contiguous().unsqueeze(-1)
        a = F.unfold(y, kernel_size=[3, 1], padding=[1, 0])
        b = F.unfold(y, kernel_size=[2, 1], dilation=[2, 1], stride=[2, 1])
        return a, b


class FloatStepArange(torch.nn.Module):
    """XLNet's relative positions: `arange(klen, -qlen, -1.0, dtype=int64)` (attn_type "bi") and
    `arange(klen, -1, -1.0, ...)` ("uni"), dynamic bounds with a float step, and the same with a
    float dtype."""

    def forward(self, x):
        klen = qlen = x.shape[1]
        inv_freq = 1 / torch.pow(10000, torch.arange(0, 8, 2.0, dtype=torch.int64).float() / 8)
        fwd = torch.arange(klen, -qlen, -1.0, dtype=torch.int64).float()
        uni = torch.arange(klen, -1, -1.0, dtype=torch.int64).float()
        flt = torch.arange(klen, -qlen, -1.0)
        sinusoid = fwd[:, None] * inv_freq[None, :]
        pos = torch.cat([torch.sin(sinusoid), torch.cos(sinusoid)], dim=-1)
        return x.sum(0) + pos[:qlen, :4], uni * 2, flt + 1


class LayoutClones(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.probe = torch.nn.Parameter(torch.randn(1, 2, 1, 4))
        self.weight = torch.nn.Parameter(torch.randn(8))

    def forward(self, x, m):
        b, _, p = x.shape
        t = x.transpose(1, 2)
        n = F.rms_norm(t, (8,), self.weight, 1e-6)
        heads = n.view(b, p, 2, 4).transpose(1, 2)
        pooled = F.scaled_dot_product_attention(self.probe.expand(b, -1, -1, -1), heads, heads)
        kv = heads[:, :1]
        mqa = F.scaled_dot_product_attention(heads, kv, kv)
        kx = kv.unsqueeze(2).expand(b, 1, 2, p, 4).reshape(b, 2, p, 4)
        big = F.scaled_dot_product_attention(heads, kx, kx, scale=0.5)
        keep = (m[:, None, :, None] * m[:, None, None, :]) != 0
        filled = n[..., :2].transpose(1, 2)[:, :, None, :].expand(b, 2, p, p).masked_fill(~keep, -1e4)
        return n, pooled, mqa, big, filled


class SmallRules(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.GroupNorm(1, 4)
        self.norm3 = torch.nn.GroupNorm(2, 4)

    def forward(self, x, img):
        b, s, c = x.shape
        heads = x.transpose(1, 2)
        r = heads.reshape_as(x.unsqueeze(1))
        e = x[:, :1].expand_as(x)
        k = x.new_empty(b, s, c).copy_(x * 2)
        z = torch.zeros_like(heads, memory_format=torch.contiguous_format).scatter_(1, (heads[:, :1] * 0).long(), 1.0)
        o = torch.ones_like(heads) * heads
        w = torch.zeros_like(x[:, :, None, :1].expand(b, s, 2, c)) + 1
        nhwc = (img.permute(0, 2, 3, 1) * 2).permute(0, 3, 1, 2)
        g = self.norm(nhwc) + self.norm3(heads).sum()
        p = torch.pow(torch.tensor(0.5), torch.arange(1, 5, dtype=torch.int32))
        return r, e, k, z, o, w, g * p.view(1, 4, 1, 1)


class MatmulLayouts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(6, 8))
        self.q, self.k, self.v, self.g = (torch.nn.Linear(16, 16) for _ in range(4))
        self.o = torch.nn.Linear(16, 16, bias=False)
        self.p = torch.nn.Linear(16, 4)

    def forward(self, x, z, w):
        b, t, _ = z.shape
        heads = lambda y: y.view(b, t, 2, 8).transpose(1, 2)
        att = F.scaled_dot_product_attention(heads(self.q(z)), heads(self.k(z)), heads(self.v(z)))
        att = att.transpose(1, 2).reshape(b, t, 16)
        col = x[:, :, :1]
        return (
            self.a @ x,
            z[..., ::2] @ w,
            self.o(att * torch.sigmoid(self.g(z))),
            self.p(att),
            torch.bmm(col.transpose(1, 2), col),
            torch.bmm(col, z[:, :1, :6]),
        )


class ConvNhwc(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.down = torch.nn.Conv2d(8, 16, 2, stride=2)
        self.norm = torch.nn.LayerNorm(16)

    def forward(self, tokens, image):
        b = tokens.shape[0]
        grid = tokens.transpose(1, 2).reshape(b, 8, 4, 4)
        nhwc = self.norm(self.down(grid).flatten(2).transpose(1, 2))
        nchw = self.norm(self.down(image).flatten(2).transpose(1, 2))
        return nhwc, nchw


class InplaceViews(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 6))
        self.bias = torch.nn.Parameter(torch.randn(6))

    def forward(self, x):
        b, s, _ = x.shape
        e = (x * 2).view(b * s, 4).detach().to(torch.float32)
        e += self.bias[:4]
        h = x.matmul(self.w)
        h += self.bias
        q = x.view(b, s, 2, 2).transpose(1, 2)
        a = torch.matmul(q, q.transpose(-1, -2))
        a += q.sum(-1, keepdim=True)
        return e * 3, h, a


class AttnContiguous(torch.nn.Module):
    def forward(self, q, k, v, x):
        b, _, s, _ = q.shape
        o = F.scaled_dot_product_attention(q, k, v)
        # A fused projection's query, [B, L, H, E] in memory (Phi-3's qkv_proj).
        qx = x.view(x.shape[0], x.shape[1], 2, 8).transpose(1, 2)
        ox = F.scaled_dot_product_attention(qx, k, v)
        return o.transpose(1, 2).contiguous().reshape(b, s, -1), ox.transpose(1, 2).contiguous().reshape(x.shape)


class AttnMathGates(torch.nn.Module):
    """Attention that ATen's CPU backend choice sends to the math kernel, not the flash one."""

    def forward(self, x, y):
        # CPUBone's q, k, v: [B, H, L, E] views of an [B, H, E, L] buffer (last-dim stride L).
        q = x.transpose(-1, -2)
        a = F.scaled_dot_product_attention(q, q, q)
        # A value head dim other than the query's (check_head_dim_size_cpp).
        b = F.scaled_dot_product_attention(y, y, y[..., :4])
        return a, b


class SoftmaxUpsampleLayouts(torch.nn.Module):
    """CoaT's copies under Inductor's table: a softmax of a permuted tensor, an upsampling of an
    NHWC token grid with a symbolic batch."""

    def forward(self, x, y):
        b = x.shape[0]
        # The class token sliced off, the tokens as an NCHW view of NHWC memory.
        grid = x[:, 1:, :].transpose(1, 2).reshape(b, 8, 2, 2)
        up = F.interpolate(grid, scale_factor=2.0, mode="bilinear", align_corners=False)
        k = y.permute(0, 2, 1, 3)
        return up, k.softmax(dim=2), k.log_softmax(dim=2)


class LinearLayouts(torch.nn.Module):
    """`F.linear` where ATen's `linear` does not fold the bias into `addmm`: of a `mul` whose
    first operand is transposed (ConvBERT's `key_conv(x.transpose(1, 2)).transpose(1, 2) * q`,
    laid out as the transposed operand, not contiguous: `matmul` + `add`), of a 1-D input
    without and with a bias (Gradium's conditioning projections: `matmul` of a vector), and
    `matmul` of 1-D operands (`dot`, vector × matrix, matrix × vector)."""

    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(8, 8)
        self.k = torch.nn.Linear(8, 6)
        self.v = torch.nn.Linear(8, 6, bias=False)

    def forward(self, x, c):
        kt = x.transpose(1, 2).contiguous().transpose(1, 2)
        vec = c[0]
        return (
            self.k(kt * self.q(x)),
            self.v(vec),
            self.k(vec),
            vec @ vec,
            vec @ self.q.weight,
            self.k.weight @ vec,
        )


class WhereNumbers(torch.nn.Module):
    """`torch.where` of a mask between two Python numbers (`where.Scalar`): LongT5's local
    attention bias `where(mask > 0, 0.0, -1e10)` (float32 scalar tensors) and integer numbers
    (int64)."""

    def forward(self, x):
        return torch.where(x > 0, 0.0, -1e10), torch.where(x < 0, 1, 0)


class PadMultiple(torch.nn.Module):
    chunk = 4

    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.triu(torch.ones(self.chunk, self.chunk, dtype=torch.bool), 1))

    def forward(self, x):
        b, s, d = x.shape
        pad = (self.chunk - s % self.chunk) % self.chunk
        y = F.pad(x, (0, 0, 0, pad))
        n = y.shape[1]
        chunks = n // self.chunk
        y = y.reshape(b, chunks, n // chunks, d)
        scores = y @ y.transpose(-1, -2)
        return scores.masked_fill(self.mask, 0.0)


class ReductionChain(torch.nn.Module):
    def forward(self, x):
        m = x.exp()
        for _ in range(30):
            m = m / (m.sum(-1, keepdim=True) + 1e-6)
            m = m / (m.sum(-2, keepdim=True) + 1e-6)
        return m


class BatchStatsNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(6, 3, 3, 3))
        self.gain = torch.nn.Parameter(1 + 0.1 * torch.randn(6))

    def forward(self, x):
        w = F.batch_norm(self.weight.reshape(1, 6, -1), None, None, weight=self.gain * 27 ** -0.5, training=True, momentum=0.0, eps=1e-6)
        return F.conv2d(x, w.reshape_as(self.weight), padding=1)


# A case: (module, inputs of binding b, [dims made Dim.AUTO; all when left out]). resize keeps
# its spatial sizes static (torch's decomposition turns them into Python-float scales),
# spellings the dim `diff` runs along.
CASES = {
    "tensor_detach": (TensorDetach, lambda b: (torch.randn(1 + 2 * b, 6),)),
    "sym_min_max": (SymMinMax, lambda b: (torch.randn(2, 2 + 3 * b, 3),)),
    "pad_symint": (PadSymInt, lambda b: (torch.randn(2, 5 + 2 * b, 3),)),
    "aranges": (Aranges, lambda b: (torch.randn(2, 4 + 3 * b, 3),)),
    "factories": (Factories, lambda b: (torch.randn(1 + b, 4 + 3 * b, 3),)),
    "repeat_norm": (RepeatNorm, lambda b: (torch.randn(1 + b, 2, 3 + 2 * b, 4),)),
    "pool_split": (PoolSplit, lambda b: (torch.randn(1 + b, 4 + 2 * b, 8), torch.randn(1 + b, 4, 6))),
    "grid_all": (GridAll, lambda b: (torch.randn(1 + b, 3 + b, 4 + 2 * b),)),
    "select_write": (SelectWrite, lambda b: (torch.randn(3, 1 + b, 2 + b, 8),)),
    "reshape_infer": (ReshapeInfer, lambda b: (torch.randn(1 + b, 4 + 3 * b, 24),)),
    "matmul_fold": (MatmulFold, lambda b: (torch.randn(1 + b, 2 + b, 8), torch.randn(8, 6))),
    "mask_fill": (MaskFill, lambda b: (torch.randn(1 + b, 3 + b, 3 + b), torch.randn(3 + b, 3 + b))),
    "conv_same": (ConvSame, lambda b: (torch.randn(1 + b, 4, 6 + 2 * b),)),
    "spellings": (Spellings, lambda b: (torch.randn(1 + b, 3 + b, 5), torch.randn(1 + b, 3 + b, 5)), [0, 1]),
    "rotary_complex": (RotaryComplex, lambda b: (torch.randn(1 + b, 3 + 2 * b, 2, 8), torch.arange(3 + 2 * b).expand(1 + b, -1).clone())),
    "chunk_dynamic": (ChunkDynamic, lambda b: (torch.randn(1 + b, 2 + 3 * b, 4),)),
    "resize": (Resize, lambda b: (torch.randn(1 + b, 8, 6, 6),), [0]),
    "unfold_span": (UnfoldSpan, lambda b: (torch.randn(1 + b, 5 + 2 * b, 4),)),
    "float_step_arange": (FloatStepArange, lambda b: (torch.randn(1 + b, 3 + 2 * b, 4),), [0, 1]),
    "layout_clones": (LayoutClones, lambda b: (torch.randn(1 + b, 8, 3 + b), (torch.rand(1 + b, 3 + b) > 0.3).float())),
    "small_rules": (SmallRules, lambda b: (torch.randn(1 + b, 3 + 2 * b, 4), torch.randn(1 + b, 4, 3, 3))),
    "matmul_layouts": (MatmulLayouts, lambda b: (torch.randn(1 + b, 8, 3 + b), torch.randn(1 + b, 3 + 2 * b, 16), torch.randn(8, 3))),
    "inplace_views": (InplaceViews, lambda b: (torch.randn(1 + b, 3 + 2 * b, 4),)),
    "attn_contiguous": (AttnContiguous, lambda b: (*(torch.randn(1 + b, 2, 3 + 2 * b, 8) for _ in range(3)), torch.randn(1 + b, 4 + b, 16))),
    "conv_nhwc": (ConvNhwc, lambda b: (torch.randn(1 + b, 16, 8), torch.randn(1 + b, 8, 4, 4)), [0]),
    "softmax_upsample_layouts": (SoftmaxUpsampleLayouts, lambda b: (torch.randn(1 + b, 5, 8), torch.randn(1 + b, 6, 2, 4)), [0]),
    "attn_math_gates": (AttnMathGates, lambda b: (torch.randn(1 + b, 2, 8, 5), torch.randn(1 + b, 2, 5, 8)), [0]),
    "linear_layouts": (LinearLayouts, lambda b: (torch.randn(1 + b, 3 + 2 * b, 8), torch.randn(2, 8))),
    "where_numbers": (WhereNumbers, lambda b: (torch.randn(1 + b, 3 + 2 * b, 4),)),
    "pad_multiple": (PadMultiple, lambda b: (torch.randn(1 + b, 3 + 2 * b, 8),)),
    "reduction_chain": (ReductionChain, lambda b: (torch.randn(1 + b, 4, 4),), [0]),
    "batch_stats_norm": (BatchStatsNorm, lambda b: (torch.randn(1 + b, 3, 8, 8),), [0]),
}



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default=None)
    ap.add_argument("--only", default="")
    o = ap.parse_args()
    ver = ".".join(torch.__version__.split(".")[:2])
    out = o.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples", "corpus", f"torch-{ver}")
    os.makedirs(out, exist_ok=True)
    for name, (cls, make, *dims) in CASES.items():
        if o.only and name not in o.only.split(","):
            continue
        torch.manual_seed(0)  # per case, so that --only regenerates the same files
        model = cls().eval()
        args1, args0 = make(2), make(1)
        dyn = tuple({d: Dim.AUTO for d in (dims[0] if dims else range(a.dim()))} for a in args1)
        ep = torch.export.export(model, args1, dynamic_shapes=dyn)
        exp, size = save_export(out, f"construct_{name}", f"scripts/gen_construct_samples.py:{cls.__name__}", model, ep, [args0, args1])
        print(f"{name}: {size} bytes, ops {exp['ops']}")


if __name__ == "__main__":
    main()
