//! `im2col` (`nn.functional.unfold`) and its adjoint `col2im` (`nn.functional.fold`) over 2-D
//! windows. A column row `r` is (channel, tap row, tap column) = `(r / (kh·kw), r / kw % kh,
//! r % kw)`; a column `l` is the window at `(l / ow, l % ow)`, which reads input pixel
//! `window · stride - pad + tap · dilation`. `col2im` gathers, per pixel, the taps of every
//! window that lands on it, so no two work-items write one element.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId};
use super::super::LowerError;
use super::conv::{constant, in_range, read_masked, spatial, tap};
use crate::ir::Node;

type R = Result<ExprId, LowerError>;

/// Kernel size, dilation, padding and stride (2 values each).
struct Window {
    ks: [i64; 2],
    dil: [i64; 2],
    pad: [i64; 2],
    stride: [i64; 2],
}

impl Window {
    fn of(cx: &Ctx<'_>, node: &Node) -> Result<Window, LowerError> {
        let two = |name: &str, default: i64| -> Result<[i64; 2], LowerError> {
            let v = spatial(cx, node, name, default, 2)?;
            Ok([v[0], v[1]])
        };
        let w = Window { ks: two("kernel_size", 1)?, dil: two("dilation", 1)?, pad: two("padding", 0)?, stride: two("stride", 1)? };
        if w.ks.iter().chain(&w.dil).chain(&w.stride).any(|&v| v <= 0) || w.pad.iter().any(|&p| p < 0) {
            return Err(cx.err(node, "kernel size, dilation and stride must be positive, padding non-negative"));
        }
        Ok(w)
    }

    /// Windows along dim `d` of an image of extent `n`: `(n + 2·pad - dil·(k-1) - 1) / stride + 1`.
    fn count(&self, cx: &mut Ctx<'_>, d: usize, n: ExprId) -> R {
        let span = 2 * self.pad[d] - self.dil[d] * (self.ks[d] - 1) - 1;
        let span = cx.kb.i64(span);
        let a = cx.kb.binary(BinOp::Add, n, span)?;
        let s = cx.kb.i64(self.stride[d]);
        let q = cx.kb.binary(BinOp::Div, a, s)?;
        let one = cx.kb.i64(1);
        Ok(cx.kb.binary(BinOp::Add, q, one)?)
    }
}

/// `im2col(self, kernel_size, dilation, padding, stride)`: `[N, C, H, W] → [N, C·kh·kw, L]`
/// (unbatched `[C, H, W]` too), zeros where a window reaches into the padding.
pub fn im2col(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = cx.tensor(node, "self")?;
    let xs = cx.ksizes(x)?;
    let lead = match (xs.len(), idx.len()) {
        (4, 3) => 1,
        (3, 2) => 0,
        _ => return Err(cx.err(node, format!("im2col takes a 3- or 4-D image, got rank {}", xs.len()))),
    };
    let win = Window::of(cx, node)?;
    let (h, w) = (xs[lead + 1], xs[lead + 2]);
    let ow = win.count(cx, 1, w)?;
    let (r, l) = (idx[lead], idx[lead + 1]);
    let kw = cx.kb.i64(win.ks[1]);
    let khw = cx.kb.i64(win.ks[0] * win.ks[1]);
    let kh = cx.kb.i64(win.ks[0]);
    let ch = cx.kb.binary(BinOp::Div, r, khw)?;
    let i = cx.kb.binary(BinOp::Div, r, kw)?;
    let i = cx.kb.binary(BinOp::Rem, i, kh)?;
    let j = cx.kb.binary(BinOp::Rem, r, kw)?;
    let y = cx.kb.binary(BinOp::Div, l, ow)?;
    let z = cx.kb.binary(BinOp::Rem, l, ow)?;
    let py = tap(cx, y, i, win.stride[0], win.pad[0], win.dil[0])?;
    let pz = tap(cx, z, j, win.stride[1], win.pad[1], win.dil[1])?;
    let (iy, iz) = (in_range(cx, py, h)?, in_range(cx, pz, w)?);
    let mask = cx.kb.and(iy, iz)?;
    let mut at = idx[..lead].to_vec();
    at.extend([ch, py, pz]);
    let ty = super::pointwise::out_ty(cx, node)?;
    let zero = constant(cx, 0.0, ty);
    read_masked(cx, x, &at, mask, zero)
}

/// `col2im(self, output_size, kernel_size, dilation, padding, stride)`: `[N, C·kh·kw, L] →
/// [N, C, H, W]`, each pixel the sum over taps `(i, j)` of the column entry of the window that
/// puts that tap on it, when there is one: `p + pad - tap·dilation` a non-negative multiple of
/// the stride that indexes a window.
pub fn col2im(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = cx.tensor(node, "self")?;
    let xs = cx.ksizes(x)?;
    let lead = match (xs.len(), idx.len()) {
        (3, 4) => 1,
        (2, 3) => 0,
        _ => return Err(cx.err(node, format!("col2im takes a 2- or 3-D column tensor, got rank {}", xs.len()))),
    };
    let win = Window::of(cx, node)?;
    let out_sizes = super::pointwise::out_sizes(cx, node)?;
    let (h, w) = (cx.kb.size(&out_sizes[lead + 1]), cx.kb.size(&out_sizes[lead + 2]));
    let (oh, ow) = (win.count(cx, 0, h)?, win.count(cx, 1, w)?);
    let ty = super::pointwise::out_ty(cx, node)?;
    let (ch, py, pz) = (idx[lead], idx[lead + 1], idx[lead + 2]);
    // One loop over the taps (i, j), row-major: the order ATen's CPU col2im adds them in, which
    // matters where a half-precision image rounds every partial sum.
    let kw = cx.kb.i64(win.ks[1]);
    let khw = cx.kb.i64(win.ks[0] * win.ks[1]);
    let vt = cx.kb.fresh_var()?;
    let t = cx.kb.var(vt);
    let (i, j) = (cx.kb.binary(BinOp::Div, t, kw)?, cx.kb.binary(BinOp::Rem, t, kw)?);
    let zero = cx.kb.i64(0);
    let mut mask = cx.kb.bool(true);
    let mut window = Vec::with_capacity(2);
    for (d, (p, k, n)) in [(py, i, oh), (pz, j, ow)].into_iter().enumerate() {
        let (pad, dil, s) = (cx.kb.i64(win.pad[d]), cx.kb.i64(win.dil[d]), cx.kb.i64(win.stride[d]));
        let t = cx.kb.binary(BinOp::Add, p, pad)?;
        let kd = cx.kb.binary(BinOp::Mul, k, dil)?;
        let t = cx.kb.binary(BinOp::Sub, t, kd)?;
        let q = cx.kb.binary(BinOp::Div, t, s)?;
        let r = cx.kb.binary(BinOp::Rem, t, s)?;
        let on_grid = cx.kb.cmp(CmpOp::Eq, r, zero)?;
        let inside = cx.kb.cmp(CmpOp::Ge, t, zero)?;
        let below = cx.kb.cmp(CmpOp::Lt, q, n)?;
        for ok in [on_grid, inside, below] {
            mask = cx.kb.and(mask, ok)?;
        }
        window.push(q);
    }
    let row = cx.kb.binary(BinOp::Mul, ch, khw)?;
    let row = cx.kb.binary(BinOp::Add, row, t)?;
    let col = cx.kb.binary(BinOp::Mul, window[0], ow)?;
    let col = cx.kb.binary(BinOp::Add, col, window[1])?;
    let mut at = idx[..lead].to_vec();
    at.extend([row, col]);
    let zero_v = constant(cx, 0.0, ty);
    let v = read_masked(cx, x, &at, mask, zero_v)?;
    let dtype = cx.meta(x)?.dtype;
    let elem = Elem::from_dtype(dtype).ok_or_else(|| cx.err(node, format!("col2im of {}", dtype.name())))?;
    Ok(cx.kb.sum_in(vt, khw, v, elem)?)
}
