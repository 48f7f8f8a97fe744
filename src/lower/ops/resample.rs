//! Resampling of the spatial dims (every dim after batch and channel): nearest and
//! nearest-exact upsampling, and (bi/tri)linear interpolation, with PyTorch's source-index
//! formulas (`UpSample.h`: `nearest_idx`, `area_pixel_compute_source_index`) evaluated in the
//! same float precision (float32 for every dtype but float64). Integer outputs round to nearest.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, Ty, UnOp};
use super::super::LowerError;
use super::pointwise::out_sizes;
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

/// `upsample_linear1d` / `upsample_bilinear2d` / `upsample_trilinear3d`: the weighted sum of the
/// 2^d corners around the source position.
pub fn linear(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "input")?;
    let align = cx.bool_or(node, "align_corners", false)?;
    let ty = index_ty(cx, node)?;
    let out_ty = super::pointwise::out_ty(cx, node)?;
    if idx.len() < 3 {
        return Err(cx.err(node, "interpolation needs [N, C, *spatial] tensors"));
    }
    let sd = idx.len() - 2;
    // Per spatial dim: lower and upper source index and the upper one's weight.
    let mut taps = Vec::with_capacity(sd);
    for d in 0..sd {
        let (ins, outs) = extents(cx, node, d)?;
        let o = cx.kb.cast(idx[2 + d], ty);
        let one_i = cx.kb.i64(1);
        let zero = cx.kb.float_like(0.0, o);
        let src = if align {
            // (in - 1) / (out - 1), or 0 for a single output.
            let (i1, o1) = (cx.kb.binary(BinOp::Sub, ins, one_i)?, cx.kb.binary(BinOp::Sub, outs, one_i)?);
            let zero_i = cx.kb.i64(0);
            let single = cx.kb.cmp(CmpOp::Le, o1, zero_i)?;
            let o1 = cx.kb.binary(BinOp::Max, o1, one_i)?;
            let (fi, fo) = (cx.kb.cast(i1, ty), cx.kb.cast(o1, ty));
            let s = cx.kb.binary(BinOp::Div, fi, fo)?;
            let s = cx.kb.select(single, zero, s)?;
            cx.kb.binary(BinOp::Mul, s, o)?
        } else {
            let s = scale(cx, node, d, ins, outs, ty)?;
            let half = cx.kb.float_like(0.5, o);
            let c = cx.kb.binary(BinOp::Add, o, half)?;
            let c = cx.kb.binary(BinOp::Mul, s, c)?;
            let c = cx.kb.binary(BinOp::Sub, c, half)?;
            let neg = cx.kb.cmp(CmpOp::Lt, c, zero)?;
            cx.kb.select(neg, zero, c)?
        };
        let fl = cx.kb.unary(UnOp::Floor, src);
        let lo = cx.kb.cast(fl, Ty::I64);
        let last = cx.kb.binary(BinOp::Sub, ins, one_i)?;
        let lo = cx.kb.binary(BinOp::Min, lo, last)?;
        let up = cx.kb.binary(BinOp::Add, lo, one_i)?;
        let hi = cx.kb.binary(BinOp::Min, up, last)?;
        let flo = cx.kb.cast(lo, ty);
        let w = cx.kb.binary(BinOp::Sub, src, flo)?;
        let one = cx.kb.float_like(1.0, w);
        let w = cx.kb.binary(BinOp::Min, w, one)?;
        let w = cx.kb.binary(BinOp::Max, w, zero)?;
        taps.push((lo, hi, w));
    }
    let mut acc: Option<ExprId> = None;
    for corner in 0..(1usize << sd) {
        let mut at = idx[..2].to_vec();
        let mut weight: Option<ExprId> = None;
        for (d, &(lo, hi, w)) in taps.iter().enumerate() {
            let upper = corner >> d & 1 == 1;
            at.push(if upper { hi } else { lo });
            let f = if upper {
                w
            } else {
                let one = cx.kb.float_like(1.0, w);
                cx.kb.binary(BinOp::Sub, one, w)?
            };
            weight = Some(match weight {
                None => f,
                Some(p) => cx.kb.binary(BinOp::Mul, p, f)?,
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
    let y = acc.ok_or_else(|| cx.err(node, "interpolation of no corners"))?;
    Ok(if out_ty == Ty::I64 { cx.kb.unary(UnOp::Rint, y) } else { y })
}
