"""Cases for Core ATen ops that op_db never leaves in an exported graph, for scripts/gen_opinfo.py.

OpInfo exports forward graphs of public functions, so the backward ops of the Core ATen opset
(`convolution_backward`, `native_layer_norm_backward`, ...) and the `_`-prefixed ops composites
reach only after decomposition (`_cdist_forward`, `_native_batch_norm_legit_no_training`, ...)
get no case from it. Each case here calls the aten op itself, so the exported graph holds that
node with the arguments given: strides, paddings, dilations, groups, transposition, ceil mode,
output masks, missing weights. Inputs a backward op reads from its forward (mean and rstd, max
indices) come from running that forward op. Every sample of these ops becomes a case
(`every=True`): the samples are the test matrix.
"""
import torch
from torch.testing._internal.opinfo.core import SampleInput

aten = torch.ops.aten
FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
WIDE = (torch.float32, torch.float64)


def masked(outs, mask):
    """The outputs `output_mask` asks for. The graph records the others as None; eager may still
    compute them (CPU convolution does), so the case compares only those asked for."""
    return tuple(o for o, m in zip(outs, mask) if m)


def conv_backward(g, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, mask):
    outs = aten.convolution_backward(g, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, mask)
    return masked(outs, mask)


def layer_norm_backward(g, x, normalized_shape, mean, rstd, w, b, mask):
    return masked(aten.native_layer_norm_backward(g, x, normalized_shape, mean, rstd, w, b, mask), mask)


def group_norm_backward(g, x, mean, rstd, w, n, c, hxw, group, mask):
    return masked(aten.native_group_norm_backward(g, x, mean, rstd, w, n, c, hxw, group, mask), mask)


def core_aten_ops(mk, T, ints):
    """OpInfos (made with gen_opinfo's `mk`) whose samples call Core ATen ops directly."""

    def conv_samples(d):
        # (input, weight, stride, padding, dilation, transposed, output_padding, groups, bias, mask)
        specs = [
            ((2, 3, 6, 6), (4, 3, 3, 3), [1, 1], [1, 1], [1, 1], False, [0, 0], 1, True, [True, True, True]),
            ((2, 3, 7, 7), (4, 3, 3, 3), [2, 2], [0, 0], [2, 2], False, [0, 0], 1, False, [True, True, False]),
            ((1, 4, 5, 7), (6, 2, 3, 2), [2, 1], [1, 0], [1, 1], False, [0, 0], 2, True, [True, True, True]),
            ((2, 4, 9), (6, 2, 3), [2], [1], [1], False, [0], 2, True, [False, True, True]),
            ((1, 2, 4, 4, 4), (3, 2, 2, 2, 2), [1, 1, 1], [0, 1, 0], [1, 1, 1], False, [0, 0, 0], 1, True, [True, True, True]),
            ((1, 4, 5, 5), (4, 3, 3, 3), [2, 2], [1, 1], [1, 1], True, [1, 1], 1, True, [True, True, True]),
            ((2, 4, 6), (4, 1, 3), [1], [0], [2], True, [0], 2, False, [True, True, False]),
            ((2, 3, 5, 5), (3, 1, 3, 3), [1, 1], [1, 1], [1, 1], False, [0, 0], 3, True, [True, False, True]),
        ]
        out = []
        for xs, ws, st, pad, dil, tr, opad, groups, bias, mask in specs:
            x, w = T(*xs, dtype=d), T(*ws, dtype=d)
            y = aten.convolution(x.float(), w.float(), None, st, pad, dil, tr, opad, groups)
            bias_sizes = [y.shape[1]] if bias else None
            out.append(SampleInput(T(*y.shape, dtype=d), args=(x, w, bias_sizes, st, pad, dil, tr, opad, groups, mask)))
        return out

    def layer_norm_samples(d):
        out = []
        for shape, ns, has_w, has_b, mask in [
            ((3, 4, 5), [5], True, True, [True, True, True]),
            ((2, 3, 4), [3, 4], True, False, [True, True, False]),
            ((4, 6), [6], False, False, [True, False, False]),
            ((2, 3, 4), [3, 4], False, True, [False, False, True]),
            ((5,), [5], True, True, [True, True, True]),
        ]:
            x = T(*shape, dtype=d)
            w = T(*ns, dtype=d) if has_w else None
            b = T(*ns, dtype=d) if has_b else None
            _, mean, rstd = aten.native_layer_norm(x, ns, w, b, 1e-5)
            out.append(SampleInput(T(*shape, dtype=d), args=(x, ns, mean, rstd, w, b, mask)))
        return out

    def group_norm_samples(d):
        out = []
        for shape, group, has_w, mask in [
            ((2, 6, 3, 3), 3, True, [True, True, True]),
            ((2, 4, 5), 2, False, [True, False, True]),
            ((3, 4), 2, True, [True, True, True]),
            ((1, 6, 2, 2, 2), 6, True, [True, True, False]),
            ((2, 6, 3, 3), 1, True, [False, True, True]),
        ]:
            x = T(*shape, dtype=d)
            n, c = shape[0], shape[1]
            hxw = 1
            for s in shape[2:]:
                hxw *= s
            w = T(c, dtype=d) if has_w else None
            _, mean, rstd = aten.native_group_norm(x, w, T(c, dtype=d), n, c, hxw, group, 1e-5)
            out.append(SampleInput(T(*shape, dtype=d), args=(x, mean, rstd, w, n, c, hxw, group, mask)))
        return out

    def embedding_backward_samples(d):
        out = []
        for gshape, idx, num, pad, freq in [
            ((2, 5, 4), ints(0, 10, 2, 5), 10, -1, False),
            ((7, 3), ints(0, 4, 7).int(), 6, 0, False),
            ((2, 5, 4), ints(0, 4, 2, 5), 8, -1, True),
            ((4, 3), torch.tensor([2, 0, 2, 1]), 5, 2, True),
        ]:
            out.append(SampleInput(T(*gshape, dtype=d), args=(idx, num, pad, freq)))
        return out

    def avg_pool_backward_samples(d):
        out = []
        for shape, k, st, pad, ceil, cip, div in [
            ((2, 3, 6, 6), [2, 2], [2, 2], [0, 0], False, True, None),
            ((1, 2, 7, 5), [3, 3], [2, 2], [1, 1], True, False, None),
            ((2, 5, 5), [3, 2], [1, 2], [1, 0], False, True, 3),
            ((1, 1, 4, 6), [2, 2], [1, 1], [1, 1], True, True, None),
            ((1, 2, 5, 5), [3, 3], [], [0, 0], False, True, None),
        ]:
            x = T(*shape, dtype=d)
            y = aten.avg_pool2d(x.float(), k, st, pad, ceil, cip, div)
            out.append(SampleInput(T(*y.shape, dtype=d), args=(x, k, st, pad, ceil, cip, div)))
        return out

    def adaptive_backward_samples(d):
        out = []
        for shape, size in [((2, 3, 7, 5), [3, 2]), ((3, 6, 6), [4, 4]), ((1, 2, 5, 5), [5, 5]), ((1, 1, 4, 4), [1, 1]), ((2, 2, 10, 7), [3, 4])]:
            x = T(*shape, dtype=d)
            y = aten._adaptive_avg_pool2d(x, size)
            out.append(SampleInput(T(*y.shape, dtype=d), args=(x,)))
        return out

    def max_pool_backward_samples(forward, specs):
        def samples(d):
            out = []
            for shape, k, st, pad, dil, ceil in specs:
                x = T(*shape, dtype=d)
                y, idx = forward(x, k, st, pad, dil, ceil)
                out.append(SampleInput(T(*y.shape, dtype=d), args=(x, k, st, pad, dil, ceil, idx)))
            return out
        return samples

    pool2d = [
        ((2, 3, 6, 6), [2, 2], [2, 2], [0, 0], [1, 1], False),
        ((1, 2, 7, 5), [3, 3], [2, 2], [1, 1], [1, 1], True),
        ((2, 5, 5), [3, 2], [1, 2], [1, 0], [1, 2], False),
        ((1, 1, 6, 6), [3, 3], [1, 1], [1, 1], [1, 1], False),
        ((1, 2, 8, 8), [2, 2], [2, 2], [0, 0], [2, 2], False),
    ]
    pool3d = [
        ((1, 2, 4, 4, 4), [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False),
        ((2, 3, 5, 5), [2, 3, 2], [1, 1, 1], [1, 1, 0], [1, 1, 1], False),
        ((1, 1, 5, 6, 5), [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], True),
        ((1, 1, 6, 6, 6), [2, 2, 2], [1, 1, 1], [0, 0, 0], [2, 2, 2], False),
    ]

    def cdist_samples(d):
        return [
            SampleInput(T(5, 3, dtype=d), args=(T(4, 3, dtype=d), 2.0, None)),
            SampleInput(T(2, 5, 3, dtype=d), args=(T(2, 4, 3, dtype=d), 1.0, None)),
            SampleInput(T(5, 3, dtype=d), args=(T(4, 3, dtype=d), 0.0, None)),
            SampleInput(T(5, 3, dtype=d), args=(T(4, 3, dtype=d), float("inf"), None)),
            SampleInput(T(2, 1, 5, 3, dtype=d), args=(T(3, 4, 3, dtype=d), 3.0, None)),
            SampleInput(T(5, 3, dtype=d), args=(T(4, 3, dtype=d), 2.0, 1)),
            SampleInput(T(30, 3, dtype=d), args=(T(27, 3, dtype=d), 2.0, 2)),
            SampleInput(T(4, 1, dtype=d), args=(T(4, 1, dtype=d), 0.5, None)),
        ]

    def pdist_samples(d):
        return [SampleInput(T(*s, dtype=d), args=(p,)) for s, p in
                [((5, 3), 2.0), ((6, 4), 1.0), ((4, 2), 0.0), ((5, 3), float("inf")), ((4, 3), 0.5), ((1, 3), 2.0)]]

    def batch_norm_samples(d):
        out = []
        for shape, has_w, has_b, eps in [((2, 3, 4, 4), True, True, 1e-5), ((4, 3), False, False, 1e-5),
                                         ((2, 5, 6), False, True, 1e-3), ((1, 2, 2, 2, 2), True, True, 1e-5)]:
            c = shape[1]
            w = T(c, dtype=d) if has_w else None
            b = T(c, dtype=d) if has_b else None
            mean, var = T(c, dtype=d), (torch.rand(c) + 0.5).to(d)
            out.append(SampleInput(T(*shape, dtype=d), args=(w, b, mean, var, 0.1, eps)))
        return out

    def col2im_samples(d):
        out = []
        for batch, c, size, k, dil, pad, st in [
            (2, 3, [4, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
            (None, 2, [5, 5], [3, 3], [1, 1], [1, 1], [2, 2]),
            (1, 1, [6, 6], [2, 2], [2, 2], [0, 0], [1, 1]),
            (1, 2, [5, 4], [2, 3], [1, 1], [1, 0], [2, 1]),
        ]:
            blocks = 1
            for i in range(2):
                blocks *= (size[i] + 2 * pad[i] - dil[i] * (k[i] - 1) - 1) // st[i] + 1
            shape = (c * k[0] * k[1], blocks) if batch is None else (batch, c * k[0] * k[1], blocks)
            out.append(SampleInput(T(*shape, dtype=d), args=(size, k, dil, pad, st)))
        return out

    def embedding_bag_samples(d):
        idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
        return [
            SampleInput(T(10, 3, dtype=d), args=(idx, torch.tensor([0, 3, 5]), False, 0, False, None, False, -1)),
            SampleInput(T(10, 3, dtype=d), args=(idx, torch.tensor([0, 2, 5, 8]), False, 1, False, None, True, -1)),
            SampleInput(T(10, 3, dtype=d), args=(idx, torch.tensor([0, 3, 5]), False, 2, False, None, False, -1)),
            SampleInput(T(10, 3, dtype=d), args=(idx, torch.tensor([0, 4]), False, 0, False, T(8, dtype=d), False, -1)),
            SampleInput(T(10, 3, dtype=d), args=(idx, torch.tensor([0, 3, 5]), False, 1, False, None, False, 2)),
            SampleInput(T(10, 3, dtype=d), args=(idx, torch.tensor([0, 3, 3]), False, 1, False, None, False, -1)),
            SampleInput(T(10, 3, dtype=d), args=(idx.int(), torch.tensor([0, 3, 3], dtype=torch.int32), False, 2, False, None, False, -1)),
        ]

    def fft_samples(d):
        return [SampleInput(T(3, 8, dtype=d)), SampleInput(T(2, 5, 6, dtype=d))]

    every = dict(every=True)
    return [
        mk("x_convolution_backward", conv_backward, conv_samples, FLOATS, **every),
        mk("x_native_layer_norm_backward", layer_norm_backward, layer_norm_samples, FLOATS, **every),
        mk("x_native_group_norm_backward", group_norm_backward, group_norm_samples, FLOATS, **every),
        mk("x_embedding_dense_backward", aten.embedding_dense_backward, embedding_backward_samples, FLOATS, **every),
        mk("x_avg_pool2d_backward", aten.avg_pool2d_backward, avg_pool_backward_samples, FLOATS, **every),
        mk("x_adaptive_avg_pool2d_backward", aten._adaptive_avg_pool2d_backward, adaptive_backward_samples, FLOATS, **every),
        mk("x_max_pool2d_with_indices_backward", aten.max_pool2d_with_indices_backward,
           max_pool_backward_samples(aten.max_pool2d_with_indices, pool2d), FLOATS, **every),
        mk("x_max_pool3d_with_indices_backward", aten.max_pool3d_with_indices_backward,
           max_pool_backward_samples(aten.max_pool3d_with_indices, pool3d), FLOATS, **every),
        mk("x_cdist_forward", aten._cdist_forward, cdist_samples, WIDE, **every),
        mk("x_pdist_forward", aten._pdist_forward, pdist_samples, WIDE, **every),
        mk("x_native_batch_norm_legit_no_training", aten._native_batch_norm_legit_no_training, batch_norm_samples, FLOATS, **every),
        mk("x_col2im", aten.col2im, col2im_samples, FLOATS, **every),
        mk("x_embedding_bag", aten._embedding_bag, embedding_bag_samples, FLOATS, **every),
        # Complex values that stay inside the graph: a real-to-complex FFT read back as real.
        mk("x_fft_r2c_c2r", lambda x: aten._fft_c2r(aten._fft_r2c(x, [x.dim() - 1], 0, True), [x.dim() - 1], 2, x.shape[-1]),
           fft_samples, WIDE, **every),
        mk("x_fft_r2c_view_as_real", lambda x: torch.view_as_real(aten._fft_r2c(x, [x.dim() - 1], 1, True)), fft_samples, WIDE, **every),
        mk("x_fft_r2c_abs", lambda x: aten._fft_r2c(x, [0, x.dim() - 1], 0, False).abs(), fft_samples, WIDE, **every),
    ]
