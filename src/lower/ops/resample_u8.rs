//! uint8 bilinear and bicubic upsampling, as PyTorch's CPU kernel computes it: Pillow's
//! separable fixed-point resampling, width first into a uint8 image, then height (see
//! `exec::ops::resample_u8`, which this follows step for step). Per output coordinate the
//! kernel recomputes the float64 taps (as ATen does, in double) and scales them to int16 with
//! the axis's precision, which depends on the largest weight of the whole axis and so is worked
//! out here, from the static sizes, by the interpreter's own function.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, Ty, UnOp};
use super::super::LowerError;
use super::pointwise::out_sizes;
use crate::exec::ops::resample_u8::{axis_scale, axis_taps, Filter};
use crate::ir::{Arg, Node, ValueId};

type R = Result<ExprId, LowerError>;

/// One axis: sizes, scale and the fixed-point precision of its weights.
struct Axis {
    input: i64,
    scale: f64,
    precision: u32,
}

/// The fixed-point taps of output coordinate `o`: first input position (unclamped to the last
/// tap) and the int16 weights, zero past the taps that fall inside the input.
fn taps_at(cx: &mut Ctx<'_>, axis: &Axis, o: ExprId, align: bool, filter: Filter) -> Result<(ExprId, Vec<ExprId>), LowerError> {
    let kb = &mut cx.kb;
    let n = match filter {
        Filter::Linear => 2,
        Filter::Cubic => 4,
    };
    let delta = if align { 0.5 } else { 0.0 };
    let support = n as f64 * 0.5;
    let of = kb.cast(o, Ty::F64);
    let shift = kb.f64(0.5 - delta);
    let t = kb.binary(BinOp::Add, of, shift)?;
    let scale = kb.f64(axis.scale);
    let center = kb.binary(BinOp::Mul, scale, t)?;
    // C's truncating casts, in the same order of operations as ATen.
    let edge = |kb: &mut super::super::kernel::KernelBuilder, s: f64| -> R {
        let c = kb.f64(s);
        let e = kb.binary(BinOp::Add, center, c)?;
        let half = kb.f64(0.5);
        let e = kb.binary(BinOp::Add, e, half)?;
        let d = kb.f64(delta);
        let e = kb.binary(BinOp::Add, e, d)?;
        Ok(kb.cast(e, Ty::I64))
    };
    let zero = kb.i64(0);
    let first = edge(kb, -support)?;
    let first = kb.binary(BinOp::Max, first, zero)?;
    let end = edge(kb, support)?;
    let input = kb.i64(axis.input);
    let end = kb.binary(BinOp::Min, end, input)?;
    let size = kb.binary(BinOp::Sub, end, first)?;
    let mut w = Vec::with_capacity(n);
    let mut total = kb.f64(0.0);
    for j in 0..n {
        let ji = kb.i64(j as i64);
        let p = kb.binary(BinOp::Add, ji, first)?;
        let x = kb.cast(p, Ty::F64);
        let x = kb.binary(BinOp::Sub, x, center)?;
        let h = kb.f64(0.5);
        let x = kb.binary(BinOp::Add, x, h)?;
        let d = kb.f64(delta);
        let x = kb.binary(BinOp::Sub, x, d)?;
        let v = filter_at(kb, filter, x)?;
        let inside = kb.cmp(CmpOp::Lt, ji, size)?;
        let z = kb.f64(0.0);
        let v = kb.select(inside, v, z)?;
        total = kb.binary(BinOp::Add, total, v)?;
        w.push(v);
    }
    let z = kb.f64(0.0);
    let nonzero = kb.cmp(CmpOp::Ne, total, z)?;
    let one = kb.f64(1.0);
    let div = kb.select(nonzero, total, one)?;
    let unit = kb.f64(f64::from(1u32 << axis.precision));
    let mut fixed = Vec::with_capacity(n);
    for v in w {
        let v = kb.binary(BinOp::Div, v, div)?;
        let v = kb.binary(BinOp::Mul, v, unit)?;
        // Half away from zero, as `(int)(v ± 0.5)`.
        let neg = kb.cmp(CmpOp::Lt, v, z)?;
        let (up, down) = (kb.f64(0.5), kb.f64(-0.5));
        let bias = kb.select(neg, down, up)?;
        let v = kb.binary(BinOp::Add, v, bias)?;
        fixed.push(kb.cast(v, Ty::I64));
    }
    Ok((first, fixed))
}

/// ATen's `aa_filter` of the interpolation (cubic with A = -0.75), at `x` (f64).
fn filter_at(kb: &mut super::super::kernel::KernelBuilder, filter: Filter, x: ExprId) -> R {
    let x = kb.unary(UnOp::Abs, x);
    let c = |kb: &mut super::super::kernel::KernelBuilder, v: f64| kb.f64(v);
    match filter {
        Filter::Linear => {
            let one = c(kb, 1.0);
            let v = kb.binary(BinOp::Sub, one, x)?;
            let z = c(kb, 0.0);
            let inside = kb.cmp(CmpOp::Lt, x, one)?;
            Ok(kb.select(inside, v, z)?)
        }
        Filter::Cubic => {
            const A: f64 = -0.75;
            let (a2, a3, one) = (c(kb, A + 2.0), c(kb, A + 3.0), c(kb, 1.0));
            let near = kb.binary(BinOp::Mul, a2, x)?;
            let near = kb.binary(BinOp::Sub, near, a3)?;
            let near = kb.binary(BinOp::Mul, near, x)?;
            let near = kb.binary(BinOp::Mul, near, x)?;
            let near = kb.binary(BinOp::Add, near, one)?;
            let (ka, k5, k8, k4) = (c(kb, A), c(kb, 5.0 * A), c(kb, 8.0 * A), c(kb, 4.0 * A));
            let far = kb.binary(BinOp::Mul, ka, x)?;
            let far = kb.binary(BinOp::Sub, far, k5)?;
            let far = kb.binary(BinOp::Mul, far, x)?;
            let far = kb.binary(BinOp::Add, far, k8)?;
            let far = kb.binary(BinOp::Mul, far, x)?;
            let far = kb.binary(BinOp::Sub, far, k4)?;
            let two = c(kb, 2.0);
            let z = c(kb, 0.0);
            let (lt1, lt2) = (kb.cmp(CmpOp::Lt, x, one)?, kb.cmp(CmpOp::Lt, x, two)?);
            let v = kb.select(lt2, far, z)?;
            Ok(kb.select(lt1, near, v)?)
        }
    }
}

/// `clamp((2^(p-1) + acc) >> p, 0, 255)`.
fn combine(cx: &mut Ctx<'_>, acc: ExprId, precision: u32) -> R {
    let kb = &mut cx.kb;
    let bias = kb.i64(if precision > 0 { 1 << (precision - 1) } else { 0 });
    let acc = kb.binary(BinOp::Add, acc, bias)?;
    let p = kb.i64(i64::from(precision));
    let v = kb.binary(BinOp::Shr, acc, p)?;
    let (lo, hi) = (kb.i64(0), kb.i64(255));
    let v = kb.binary(BinOp::Max, v, lo)?;
    Ok(kb.binary(BinOp::Min, v, hi)?)
}

/// `Σ_k w[k] · at(first + k)`, positions clamped into `0..input` (a clamped tap has weight 0).
fn weighted(cx: &mut Ctx<'_>, first: ExprId, w: &[ExprId], input: i64, at: &mut dyn FnMut(&mut Ctx<'_>, ExprId) -> R) -> R {
    let mut acc = cx.kb.i64(0);
    for (k, &wk) in w.iter().enumerate() {
        let off = cx.kb.i64(k as i64);
        let p = cx.kb.binary(BinOp::Add, first, off)?;
        let last = cx.kb.i64(input - 1);
        let p = cx.kb.binary(BinOp::Min, p, last)?;
        let v = at(cx, p)?;
        let t = cx.kb.binary(BinOp::Mul, wk, v)?;
        acc = cx.kb.binary(BinOp::Add, acc, t)?;
    }
    Ok(acc)
}

/// A static size, or the reason this lowering needs one.
fn static_size(cx: &Ctx<'_>, node: &Node, e: &crate::sym::Expr) -> Result<i64, LowerError> {
    e.as_int().ok_or_else(|| cx.err(node, "uint8 resampling needs static sizes: the precision of its fixed-point weights depends on the whole axis"))
}

/// Output element `idx` ([N, C, H, W]) of a 2-D uint8 upsampling with `filter`.
pub(super) fn upsample_u8(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], filter: Filter) -> R {
    let v: ValueId = cx.tensor(node, "input")?;
    let (ins, outs) = (cx.sizes(v)?, out_sizes(cx, node)?);
    if idx.len() != 4 || ins.len() != 4 || outs.len() != 4 {
        return Err(cx.err(node, "uint8 resampling takes [N, C, H, W] images"));
    }
    let align = cx.bool_or(node, "align_corners", false)?;
    let given = |d: usize| match node.arg("scale_factors") {
        Some(Arg::Floats(f)) if !f.is_empty() => Some(f[d.min(f.len() - 1)]),
        _ => None,
    };
    let mut axes = Vec::with_capacity(2);
    for d in 0..2 {
        let (i, o) = (static_size(cx, node, &ins[2 + d])?, static_size(cx, node, &outs[2 + d])?);
        let (iu, ou) = (i.max(0) as usize, o.max(0) as usize);
        let scale = axis_scale(iu, ou, align, given(d));
        let precision = axis_taps(iu, ou, scale, align, filter).precision;
        axes.push((Axis { input: i, scale, precision }, i != o));
    }
    let (n, c, oy, ox) = (idx[0], idx[1], idx[2], idx[3]);
    let (h, w) = (axes[0].0.input, axes[1].0.input);
    // The width pass at input row `y` (or the pixel itself when the width does not change).
    let horizontal = if axes[1].1 { Some(taps_at(cx, &axes[1].0, ox, align, filter)?) } else { None };
    let px = axes[1].0.precision;
    let mut row = |cx: &mut Ctx<'_>, y: ExprId| -> R {
        match &horizontal {
            None => {
                let x = cx.read(v, &[n, c, y, ox])?;
                Ok(cx.kb.cast(x, Ty::I64))
            }
            Some((first, wts)) => {
                let acc = weighted(cx, *first, wts, w, &mut |cx: &mut Ctx<'_>, p: ExprId| {
                    let x = cx.read(v, &[n, c, y, p])?;
                    Ok(cx.kb.cast(x, Ty::I64))
                })?;
                combine(cx, acc, px)
            }
        }
    };
    if !axes[0].1 {
        return row(cx, oy);
    }
    let (first, wts) = taps_at(cx, &axes[0].0, oy, align, filter)?;
    let acc = weighted(cx, first, &wts, h, &mut row)?;
    combine(cx, acc, axes[0].0.precision)
}
