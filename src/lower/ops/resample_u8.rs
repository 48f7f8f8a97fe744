//! uint8 bilinear and bicubic upsampling, as PyTorch's CPU kernel computes it: separable
//! fixed-point resampling, width first into a uint8 image, then height (see
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

/// The fixed-point taps of output coordinate `o`: the first input position and the int16
/// weights of the positions from there (`exec::ops::resample_u8::float_taps`, step for step):
/// tap `j` reads input `clamp(lo + j, 0, input - 1)`, so a tap past an edge adds its weight to
/// the edge pixel's; the weights of one position add up in tap order, as ATen's do.
fn taps_at(cx: &mut Ctx<'_>, axis: &Axis, o: ExprId, align: bool, filter: Filter) -> Result<(ExprId, Vec<ExprId>), LowerError> {
    let kb = &mut cx.kb;
    let n: i64 = match filter {
        Filter::Linear => 2,
        Filter::Cubic => 4,
    };
    let support = n / 2;
    // `area_pixel_compute_source_index`.
    let of = kb.cast(o, Ty::F64);
    let scale = kb.f64(axis.scale);
    let src = if align {
        kb.binary(BinOp::Mul, scale, of)?
    } else {
        let half = kb.f64(0.5);
        let t = kb.binary(BinOp::Add, of, half)?;
        let t = kb.binary(BinOp::Mul, scale, t)?;
        let src = kb.binary(BinOp::Sub, t, half)?;
        if filter == Filter::Linear {
            let z = kb.f64(0.0);
            let below = kb.cmp(CmpOp::Lt, src, z)?;
            kb.select(below, z, src)?
        } else {
            src
        }
    };
    // `guard_index_and_lambda`: C's `floorf` rounds the double to float first.
    let s32 = kb.cast(src, Ty::F32);
    let fl = kb.unary(UnOp::Floor, s32);
    let index = kb.cast(fl, Ty::I64);
    let last = kb.i64(axis.input - 1);
    let index = kb.binary(BinOp::Min, index, last)?;
    let ix = kb.cast(index, Ty::F64);
    let lambda = kb.binary(BinOp::Sub, src, ix)?;
    let (z, one) = (kb.f64(0.0), kb.f64(1.0));
    let lambda = kb.binary(BinOp::Max, lambda, z)?;
    let lambda = kb.binary(BinOp::Min, lambda, one)?;
    let shift = kb.i64(1 - support);
    let lo = kb.binary(BinOp::Add, index, shift)?;
    let zero = kb.i64(0);
    let first = kb.binary(BinOp::Max, lo, zero)?;
    // Per tap: its weight and the offset from `first` of the input position it reads.
    let mut taps = Vec::with_capacity(n as usize);
    for j in 0..n {
        let d = kb.f64((j + 1 - support) as f64);
        let x = kb.binary(BinOp::Sub, d, lambda)?;
        let w = filter_at(kb, filter, x)?;
        let jj = kb.i64(j);
        let p = kb.binary(BinOp::Add, lo, jj)?;
        let p = kb.binary(BinOp::Max, p, zero)?;
        let p = kb.binary(BinOp::Min, p, last)?;
        let at = kb.binary(BinOp::Sub, p, first)?;
        taps.push((w, at));
    }
    let unit = kb.f64(f64::from(1u32 << axis.precision));
    let mut fixed = Vec::with_capacity(n as usize);
    for k in 0..n {
        let kk = kb.i64(k);
        let mut v = kb.f64(0.0);
        for &(w, at) in &taps {
            let here = kb.cmp(CmpOp::Eq, at, kk)?;
            let add = kb.select(here, w, z)?;
            v = kb.binary(BinOp::Add, v, add)?;
        }
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
