//! Ops that create values from coordinates (`arange`, `iota`), casts, and `cat`.
//!
//! Ramps are computed in i64 and converted to the output dtype (float32 ramps are exact for
//! values below 2^24).

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId};
use super::super::LowerError;
use super::pointwise::out_sizes;
use crate::ir::{Arg, Node};

/// `start + step * i` at coordinate `i`, as f32.
fn ramp(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let i = *idx.first().ok_or_else(|| cx.err(node, "a ramp has one dimension"))?;
    let (start, step) = (cx.int_or(node, "start", 0)?, cx.int_or(node, "step", 1)?);
    let (start, step) = (cx.kb.i64(start), cx.kb.i64(step));
    let scaled = cx.kb.binary(BinOp::Mul, i, step)?;
    let v = cx.kb.binary(BinOp::Add, scaled, start)?;
    let ty = super::pointwise::out_ty(cx, node)?;
    Ok(cx.kb.cast(v, ty))
}

pub fn arange(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    ramp(cx, node, idx)
}

pub fn iota(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    ramp(cx, node, idx)
}

/// `prims.convert_element_type`: values are already f32 in kernels; only float targets lower.
pub fn convert_element_type(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let to = match node.arg("dtype") {
        Some(Arg::ScalarType(d)) => *d,
        _ => return Err(cx.err(node, "missing dtype")),
    };
    let ty = Elem::from_dtype(to).ok_or_else(|| cx.err(node, format!("kernels do not store {to}")))?.ty();
    let v = cx.tensor(node, "a")?;
    let r = cx.read(v, idx)?;
    Ok(cx.kb.cast(r, ty))
}

/// `cat(tensors, dim)`: each output element comes from the input whose slice along `dim` holds
/// it. Every input is read at a coordinate clamped into its own range (so no load is out of
/// bounds), and a select picks the right one.
pub fn cat(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let inputs = match node.arg("tensors") {
        Some(Arg::Tensors(v)) if !v.is_empty() => v.clone(),
        _ => return Err(cx.err(node, "cat needs a non-empty tensor list")),
    };
    let rank = out_sizes(cx, node)?.len();
    let d = match node.arg("dim") {
        Some(Arg::Int(d)) => wrap_dims(&[*d], rank).map_err(|m| cx.err(node, m))?[0],
        _ => 0,
    };
    let (zero, one) = (cx.kb.i64(0), cx.kb.i64(1));
    let mut offset = zero;
    let mut picked: Option<ExprId> = None;
    let mut parts = Vec::new();
    for v in &inputs {
        let n = cx.sizes(*v)?[d].clone();
        let n = cx.kb.size(&n);
        let local = cx.kb.binary(BinOp::Sub, idx[d], offset)?;
        let last = cx.kb.binary(BinOp::Sub, n, one)?;
        let clamped = cx.kb.binary(BinOp::Min, local, last)?;
        let clamped = cx.kb.binary(BinOp::Max, clamped, zero)?;
        let mut at = idx.to_vec();
        at[d] = clamped;
        let value = cx.read(*v, &at)?;
        let end = cx.kb.binary(BinOp::Add, offset, n)?;
        parts.push((end, value));
        offset = end;
    }
    // Innermost first: the last input is the default, earlier ones win below their end.
    for (end, value) in parts.into_iter().rev() {
        picked = Some(match picked {
            None => value,
            Some(rest) => {
                let inside = cx.kb.cmp(CmpOp::Lt, idx[d], end)?;
                cx.kb.select(inside, value, rest)?
            }
        });
    }
    picked.ok_or_else(|| cx.err(node, "cat of nothing"))
}
