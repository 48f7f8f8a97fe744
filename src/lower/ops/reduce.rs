//! Reductions over some dims (keepdim or not): each output element folds a serial loop nest
//! over the reduced coordinates. Two-pass variance, as PyTorch computes it.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, ExprId, RedOp, UnOp};
use super::super::LowerError;
use crate::ir::{Arg, Node, ValueId};
use crate::sym;

/// The reduced input, its sizes, the reduced dims, and the input coordinates of output `idx`
/// (reduced dims left at 0, to be bound by the reduction).
pub(super) struct Red {
    pub v: ValueId,
    pub sizes: Vec<sym::Expr>,
    pub dims: Vec<usize>,
    pub base: Vec<ExprId>,
}

pub(super) fn setup(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], dims: Option<Vec<i64>>, keepdim: bool) -> Result<Red, LowerError> {
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    let dims = wrap_dims(&dims.unwrap_or_default(), sizes.len()).map_err(|m| cx.err(node, m))?;
    let zero = cx.kb.i64(0);
    let mut base = Vec::with_capacity(sizes.len());
    let mut k = 0;
    for d in 0..sizes.len() {
        if dims.contains(&d) {
            base.push(zero);
            if keepdim {
                k += 1;
            }
        } else {
            base.push(*idx.get(k).ok_or_else(|| cx.err(node, "output rank does not match the reduction"))?);
            k += 1;
        }
    }
    Ok(Red { v, sizes, dims, base })
}

fn dims_arg(cx: &Ctx<'_>, node: &Node) -> Result<Option<Vec<i64>>, LowerError> {
    match node.arg("dim") {
        None | Some(Arg::None) => Ok(None),
        _ => cx.ints_or(node, "dim", &[]).map(Some),
    }
}

fn simple(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], op: RedOp) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    let v = r.v;
    cx.reduce_dims(op, &r.sizes, &r.dims, &r.base, &mut |cx, i| cx.read(v, i))
}

pub fn sum(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    simple(cx, node, idx, RedOp::Sum)
}

pub fn amax(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    simple(cx, node, idx, RedOp::Max)
}

pub fn amin(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    simple(cx, node, idx, RedOp::Min)
}

/// Mean of `r`'s input over its reduced dims.
pub(super) fn mean_of(cx: &mut Ctx<'_>, r: &Red) -> Result<ExprId, LowerError> {
    let v = r.v;
    let s = cx.reduce_dims(RedOp::Sum, &r.sizes, &r.dims, &r.base, &mut |cx, i| cx.read(v, i))?;
    let n = cx.count(&r.sizes, &r.dims)?;
    Ok(cx.kb.binary(BinOp::Div, s, n)?)
}

/// Σ (x - mean)² / (n - correction).
pub(super) fn var_of(cx: &mut Ctx<'_>, r: &Red, mean: ExprId, correction: f64) -> Result<ExprId, LowerError> {
    let v = r.v;
    let ss = cx.reduce_dims(RedOp::Sum, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        let d = cx.kb.binary(BinOp::Sub, x, mean)?;
        Ok(cx.kb.binary(BinOp::Mul, d, d)?)
    })?;
    let n = cx.count(&r.sizes, &r.dims)?;
    let c = cx.kb.f32(correction as f32);
    let denom = cx.kb.binary(BinOp::Sub, n, c)?;
    let zero = cx.kb.f32(0.0);
    let denom = cx.kb.binary(BinOp::Max, denom, zero)?;
    Ok(cx.kb.binary(BinOp::Div, ss, denom)?)
}

pub fn mean(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    mean_of(cx, &r)
}

fn correction(cx: &Ctx<'_>, node: &Node) -> Result<f64, LowerError> {
    if node.target.ends_with(".dim") {
        return Ok(if cx.bool_or(node, "unbiased", true)? { 1.0 } else { 0.0 });
    }
    cx.float_or(node, "correction", 1.0)
}

pub fn var(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    let m = mean_of(cx, &r)?;
    var_of(cx, &r, m, correction(cx, node)?)
}

pub fn std(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = var(cx, node, out, idx)?;
    Ok(cx.kb.unary(UnOp::Sqrt, v))
}

pub fn var_mean(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    let m = mean_of(cx, &r)?;
    if out == 1 {
        return Ok(m);
    }
    var_of(cx, &r, m, correction(cx, node)?)
}
