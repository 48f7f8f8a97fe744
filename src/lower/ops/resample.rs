//! Resampling of the spatial dims (every dim after batch and channel): nearest and
//! nearest-exact upsampling, (bi/tri)linear and bicubic interpolation, with PyTorch's source-index
//! formulas (`UpSample.h`: `nearest_idx`, `area_pixel_compute_source_index`) evaluated in the
//! same float precision (float32 for every dtype but float64). uint8 outputs round and saturate;
//! 2-D uint8 images follow PyTorch's own fixed-point path (`resample_u8`).

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, Ty, UnOp};
use super::super::LowerError;
use super::pointwise::out_sizes;
use super::resample_u8::upsample_u8;
use crate::exec::ops::resample_u8::Filter;
use crate::ir::{Arg, Node};

type R = Result<ExprId, LowerError>;

/// `scale_factors[d]`, one value standing for every dim.
fn scale_factor(node: &Node, d: usize) -> Option<f64> {
    match node.arg("scale_factors") {
        Some(Arg::Floats(v)) if !v.is_empty() => Some(v[d.min(v.len() - 1)]),
        Some(Arg::Float(f)) => Some(*f),
        _ => None,
    }
}

/// A float constant of type `ty`.
fn fconst(cx: &mut Ctx<'_>, v: f64, ty: Ty) -> ExprId {
    if ty == Ty::F64 {
        cx.kb.f64(v)
    } else {
        cx.kb.f32(v as f32)
    }
}

/// Input positions per output position along spatial dim `d` (PyTorch's
/// `compute_scales_value`): `1 / scale_factor` when given, else `in / out`.
fn scale(cx: &mut Ctx<'_>, node: &Node, d: usize, ins: ExprId, outs: ExprId, ty: Ty) -> R {
    match scale_factor(node, d) {
        Some(f) if f > 0.0 => Ok(fconst(cx, 1.0 / f, ty)),
        _ => {
            let (i, o) = (cx.kb.cast(ins, ty), cx.kb.cast(outs, ty));
            Ok(cx.kb.binary(BinOp::Div, i, o)?)
        }
    }
}

/// The float type index arithmetic runs in: float64 for float64 tensors, else float32.
fn index_ty(cx: &Ctx<'_>, node: &Node) -> Result<Ty, LowerError> {
    Ok(if super::pointwise::out_ty(cx, node)? == Ty::F64 { Ty::F64 } else { Ty::F32 })
}

/// The input and output extents of spatial dim `d` (coordinate `2 + d`).
fn extents(cx: &mut Ctx<'_>, node: &Node, d: usize) -> Result<(ExprId, ExprId), LowerError> {
    let v = cx.tensor(node, "input")?;
    let (ins, outs) = (cx.sizes(v)?, out_sizes(cx, node)?);
    Ok((cx.kb.size(&ins[2 + d]), cx.kb.size(&outs[2 + d])))
}

/// `upsample_nearest{1,2,3}d` and `_upsample_nearest_exact{1,2,3}d`: source index
/// `min(floor(o · scale), in - 1)`, or `floor((o + 0.5) · scale)` for the exact variant.
pub fn nearest(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "input")?;
    let exact = node.target.contains("exact");
    // `nearest_idx` computes in float32 whatever the dtype.
    let ty = Ty::F32;
    if idx.len() < 3 {
        return Err(cx.err(node, "upsampling needs [N, C, *spatial] tensors"));
    }
    let mut at = idx[..2].to_vec();
    for d in 0..idx.len() - 2 {
        let (ins, outs) = extents(cx, node, d)?;
        let s = scale(cx, node, d, ins, outs, ty)?;
        let o = cx.kb.cast(idx[2 + d], ty);
        let o = if exact {
            let half = cx.kb.float_like(0.5, o);
            cx.kb.binary(BinOp::Add, o, half)?
        } else {
            o
        };
        let src = cx.kb.binary(BinOp::Mul, o, s)?;
        let src = cx.kb.unary(UnOp::Floor, src);
        let src = cx.kb.cast(src, Ty::I64);
        let one = cx.kb.i64(1);
        let last = cx.kb.binary(BinOp::Sub, ins, one)?;
        let mut i = cx.kb.binary(BinOp::Min, src, last)?;
        if !exact {
            // `nearest_idx`'s fast paths, whatever the scale factor: equal sizes copy, exact
            // doubling halves the index.
            let two = cx.kb.i64(2);
            let double = cx.kb.binary(BinOp::Mul, ins, two)?;
            let doubled = cx.kb.cmp(CmpOp::Eq, outs, double)?;
            let halved = cx.kb.binary(BinOp::Div, idx[2 + d], two)?;
            i = cx.kb.select(doubled, halved, i)?;
            let same = cx.kb.cmp(CmpOp::Eq, outs, ins)?;
            i = cx.kb.select(same, idx[2 + d], i)?;
        }
        at.push(i);
    }
    cx.read(v, &at)
}

/// PyTorch's `area_pixel_compute_source_index` for output coordinate `o` of spatial dim `d`:
/// `o · (in-1)/(out-1)` with `align_corners`, else `(o + 0.5) · scale - 0.5`, clamped at 0
/// except for cubic filters.
fn source(cx: &mut Ctx<'_>, node: &Node, d: usize, o: ExprId, ty: Ty, cubic: bool) -> R {
    let align = cx.bool_or(node, "align_corners", false)?;
    let (ins, outs) = extents(cx, node, d)?;
    let o = cx.kb.cast(o, ty);
    let zero = fconst(cx, 0.0, ty);
    if align {
        let one = cx.kb.i64(1);
        let (i1, o1) = (cx.kb.binary(BinOp::Sub, ins, one)?, cx.kb.binary(BinOp::Sub, outs, one)?);
        let zero_i = cx.kb.i64(0);
        let single = cx.kb.cmp(CmpOp::Le, o1, zero_i)?;
        let o1 = cx.kb.binary(BinOp::Max, o1, one)?;
        let (fi, fo) = (cx.kb.cast(i1, ty), cx.kb.cast(o1, ty));
        let s = cx.kb.binary(BinOp::Div, fi, fo)?;
        let s = cx.kb.select(single, zero, s)?;
        return Ok(cx.kb.binary(BinOp::Mul, s, o)?);
    }
    let s = scale(cx, node, d, ins, outs, ty)?;
    let half = fconst(cx, 0.5, ty);
    let c = cx.kb.binary(BinOp::Add, o, half)?;
    let c = cx.kb.binary(BinOp::Mul, s, c)?;
    let c = cx.kb.binary(BinOp::Sub, c, half)?;
    if cubic {
        return Ok(c);
    }
    let neg = cx.kb.cmp(CmpOp::Lt, c, zero)?;
    Ok(cx.kb.select(neg, zero, c)?)
}

/// `i` clamped into `0..n`.
fn clamp_index(cx: &mut Ctx<'_>, i: ExprId, n: ExprId) -> R {
    let (zero, one) = (cx.kb.i64(0), cx.kb.i64(1));
    let last = cx.kb.binary(BinOp::Sub, n, one)?;
    let i = cx.kb.binary(BinOp::Min, i, last)?;
    Ok(cx.kb.binary(BinOp::Max, i, zero)?)
}

/// Σ over every combination of one tap per spatial dim of (product of the taps' weights) ·
/// input at their indices: a separable filter. Integer outputs round to nearest.
fn separable(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], taps: &[Vec<(ExprId, ExprId)>], ty: Ty) -> R {
    let v = cx.tensor(node, "input")?;
    let combos: usize = taps.iter().map(Vec::len).product();
    let mut acc: Option<ExprId> = None;
    for mut c in 0..combos {
        let mut at = idx[..2].to_vec();
        let mut weight: Option<ExprId> = None;
        for dim_taps in taps {
            let (i, w) = dim_taps[c % dim_taps.len()];
            c /= dim_taps.len();
            at.push(i);
            weight = Some(match weight {
                None => w,
                Some(p) => cx.kb.binary(BinOp::Mul, p, w)?,
            });
        }
        let x = cx.read(v, &at)?;
        let x = cx.kb.cast(x, ty);
        let t = match weight {
            Some(w) => cx.kb.binary(BinOp::Mul, w, x)?,
            None => x,
        };
        acc = Some(match acc {
            None => t,
            Some(a) => cx.kb.binary(BinOp::Add, a, t)?,
        });
    }
    let y = acc.ok_or_else(|| cx.err(node, "interpolation of no taps"))?;
    if super::pointwise::out_ty(cx, node)? != Ty::I64 {
        return Ok(y);
    }
    // uint8 images (the only integer dtype PyTorch interpolates) round and saturate; cubic
    // weights can overshoot either end.
    let y = cx.kb.unary(UnOp::Rint, y);
    if cx.meta(node.outputs[0])?.dtype != crate::ir::DType::U8 {
        return Ok(y);
    }
    let (lo, hi) = (fconst(cx, 0.0, ty), fconst(cx, 255.0, ty));
    let y = cx.kb.binary(BinOp::Max, y, lo)?;
    Ok(cx.kb.binary(BinOp::Min, y, hi)?)
}

/// uint8 images take PyTorch's separable fixed-point path (`resample_u8`).
fn is_u8(cx: &Ctx<'_>, node: &Node) -> Result<bool, LowerError> {
    let v = cx.tensor(node, "input")?;
    Ok(cx.meta(v)?.dtype == crate::ir::DType::U8)
}

fn spatial_rank(cx: &Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<usize, LowerError> {
    idx.len().checked_sub(2).filter(|&s| s > 0).ok_or_else(|| cx.err(node, "interpolation needs [N, C, *spatial] tensors"))
}

/// `upsample_linear1d` / `upsample_bilinear2d` / `upsample_trilinear3d`: per spatial dim the
/// two source indices around the source position, weighted by distance.
pub fn linear(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let ty = index_ty(cx, node)?;
    let sd = spatial_rank(cx, node, idx)?;
    if sd == 2 && is_u8(cx, node)? {
        return upsample_u8(cx, node, idx, Filter::Linear);
    }
    let mut taps = Vec::with_capacity(sd);
    for d in 0..sd {
        let src = source(cx, node, d, idx[2 + d], ty, false)?;
        let (ins, _) = extents(cx, node, d)?;
        let fl = cx.kb.unary(UnOp::Floor, src);
        let lo = cx.kb.cast(fl, Ty::I64);
        let lo = clamp_index(cx, lo, ins)?;
        let one_i = cx.kb.i64(1);
        let up = cx.kb.binary(BinOp::Add, lo, one_i)?;
        let hi = clamp_index(cx, up, ins)?;
        let flo = cx.kb.cast(lo, ty);
        let w = cx.kb.binary(BinOp::Sub, src, flo)?;
        let (zero, one) = (fconst(cx, 0.0, ty), fconst(cx, 1.0, ty));
        let w = cx.kb.binary(BinOp::Min, w, one)?;
        let w = cx.kb.binary(BinOp::Max, w, zero)?;
        let w0 = cx.kb.binary(BinOp::Sub, one, w)?;
        taps.push(vec![(lo, w0), (hi, w)]);
    }
    separable(cx, node, idx, &taps, ty)
}

/// `upsample_bicubic2d`: Keys' cubic convolution (A = -0.75) over the 4 source indices around
/// the source position, indices clamped into the input, as PyTorch's CPU kernel.
pub fn bicubic(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    const A: f64 = -0.75;
    let ty = index_ty(cx, node)?;
    let sd = spatial_rank(cx, node, idx)?;
    if sd == 2 && is_u8(cx, node)? {
        return upsample_u8(cx, node, idx, Filter::Cubic);
    }
    let mut taps = Vec::with_capacity(sd);
    for d in 0..sd {
        let src = source(cx, node, d, idx[2 + d], ty, true)?;
        let (ins, _) = extents(cx, node, d)?;
        let fl = cx.kb.unary(UnOp::Floor, src);
        let t = cx.kb.binary(BinOp::Sub, src, fl)?;
        let base = cx.kb.cast(fl, Ty::I64);
        // Weights of the taps at base-1, base, base+1, base+2: distances t+1, t, 1-t, 2-t.
        let mut dim_taps = Vec::with_capacity(4);
        for k in 0..4i64 {
            let dist = match k {
                0 | 1 => {
                    let c = fconst(cx, (1 - k) as f64, ty);
                    cx.kb.binary(BinOp::Add, t, c)?
                }
                _ => {
                    let c = fconst(cx, (k - 1) as f64, ty);
                    cx.kb.binary(BinOp::Sub, c, t)?
                }
            };
            let w = if k == 1 || k == 2 { cubic_near(cx, dist, A, ty)? } else { cubic_far(cx, dist, A, ty)? };
            let off = cx.kb.i64(k - 1);
            let i = cx.kb.binary(BinOp::Add, base, off)?;
            dim_taps.push((clamp_index(cx, i, ins)?, w));
        }
        taps.push(dim_taps);
    }
    separable(cx, node, idx, &taps, ty)
}

/// `((A + 2)·x - (A + 3))·x² + 1`, the kernel for |x| <= 1.
fn cubic_near(cx: &mut Ctx<'_>, x: ExprId, a: f64, ty: Ty) -> R {
    let (a2, a3, one) = (fconst(cx, a + 2.0, ty), fconst(cx, a + 3.0, ty), fconst(cx, 1.0, ty));
    let p = cx.kb.binary(BinOp::Mul, a2, x)?;
    let p = cx.kb.binary(BinOp::Sub, p, a3)?;
    let p = cx.kb.binary(BinOp::Mul, p, x)?;
    let p = cx.kb.binary(BinOp::Mul, p, x)?;
    Ok(cx.kb.binary(BinOp::Add, p, one)?)
}

/// `((A·x - 5A)·x + 8A)·x - 4A`, the kernel for 1 < |x| < 2.
fn cubic_far(cx: &mut Ctx<'_>, x: ExprId, a: f64, ty: Ty) -> R {
    let (ka, k5, k8, k4) = (fconst(cx, a, ty), fconst(cx, 5.0 * a, ty), fconst(cx, 8.0 * a, ty), fconst(cx, 4.0 * a, ty));
    let p = cx.kb.binary(BinOp::Mul, ka, x)?;
    let p = cx.kb.binary(BinOp::Sub, p, k5)?;
    let p = cx.kb.binary(BinOp::Mul, p, x)?;
    let p = cx.kb.binary(BinOp::Add, p, k8)?;
    let p = cx.kb.binary(BinOp::Mul, p, x)?;
    Ok(cx.kb.binary(BinOp::Sub, p, k4)?)
}
