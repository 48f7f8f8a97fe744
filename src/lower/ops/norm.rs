//! The kept (fallback) forms of normalisations: softmax, log_softmax, layer_norm, rms_norm and
//! group_norm in one kernel each (statistics recomputed per element by serial loops).

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, UnOp};
use super::super::LowerError;
use super::reduce::{mean_of, var_of, Red};
use crate::ir::{Node, ValueId};
use crate::sym;

/// (the row's input in the output's compute type, max over `dim`, Σ exp(x - max) over `dim`)
/// for the row through `idx`: a `dtype` argument converts the input before anything else.
fn softmax_stats(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<(ExprId, ExprId, ExprId), LowerError> {
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    let ty = super::pointwise::out_ty(cx, node)?;
    if !ty.is_float() {
        return Err(cx.err(node, "softmax computes in a float dtype"));
    }
    let dim = wrap_dims(&[cx.int_or(node, "dim", -1)?], sizes.len()).map_err(|m| cx.err(node, m))?;
    let m = cx.reduce_dims(RedOp::Max, &sizes, &dim, idx, &mut |cx, i| {
        let x = cx.read(v, i)?;
        Ok(cx.kb.cast(x, ty))
    })?;
    let s = cx.reduce_dims(RedOp::Sum, &sizes, &dim, idx, &mut |cx, i| {
        let x = cx.read(v, i)?;
        let x = cx.kb.cast(x, ty);
        let d = cx.kb.binary(BinOp::Sub, x, m)?;
        Ok(cx.kb.unary(UnOp::Exp, d))
    })?;
    let x = cx.read(v, idx)?;
    Ok((cx.kb.cast(x, ty), m, s))
}

pub fn softmax(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let (x, m, s) = softmax_stats(cx, node, idx)?;
    let d = cx.kb.binary(BinOp::Sub, x, m)?;
    let e = cx.kb.unary(UnOp::Exp, d);
    Ok(cx.kb.binary(BinOp::Div, e, s)?)
}

/// `_safe_softmax`: softmax whose fully masked rows (max -inf) are zeros rather than NaN.
pub fn safe_softmax(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let y = softmax(cx, node, out, idx)?;
    let (_, m, _) = softmax_stats(cx, node, idx)?;
    let ninf = cx.kb.float_like(f64::NEG_INFINITY, m);
    let masked = cx.kb.cmp(CmpOp::Eq, m, ninf)?;
    let zero = cx.kb.float_like(0.0, y);
    Ok(cx.kb.select(masked, zero, y)?)
}

pub fn log_softmax(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let (x, m, s) = softmax_stats(cx, node, idx)?;
    let d = cx.kb.binary(BinOp::Sub, x, m)?;
    let l = cx.kb.unary(UnOp::Log, s);
    Ok(cx.kb.binary(BinOp::Sub, d, l)?)
}

/// The trailing dims `normalized_shape` names (1..=rank of them).
fn normalized_dims(cx: &Ctx<'_>, node: &Node, rank: usize) -> Result<Vec<usize>, LowerError> {
    let k = cx.ints_or(node, "normalized_shape", &[])?.len();
    if k == 0 || k > rank {
        return Err(cx.err(node, "normalized_shape must name 1..=rank trailing dims"));
    }
    Ok((rank - k..rank).collect())
}

pub fn layer_norm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = cx.tensor(node, "input")?;
    let sizes = cx.sizes(v)?;
    let dims = normalized_dims(cx, node, sizes.len())?;
    let k = dims.len();
    let r = Red { v, sizes: sizes.clone(), dims, base: idx.to_vec() };
    let mean = mean_of(cx, &r)?;
    let var = var_of(cx, &r, mean, 0.0)?;
    let eps = cx.kb.f32(cx.float_or(node, "eps", 1e-5)? as f32);
    let ve = cx.kb.binary(BinOp::Add, var, eps)?;
    let rstd = cx.kb.unary(UnOp::Rsqrt, ve);
    let x = cx.read(v, idx)?;
    let c = cx.kb.binary(BinOp::Sub, x, mean)?;
    let mut y = cx.kb.binary(BinOp::Mul, c, rstd)?;
    let tail = &idx[sizes.len() - k..];
    if let Some(w) = cx.opt_tensor(node, "weight") {
        let w = cx.read(w, tail)?;
        y = cx.kb.binary(BinOp::Mul, y, w)?;
    }
    if let Some(b) = cx.opt_tensor(node, "bias") {
        let b = cx.read(b, tail)?;
        y = cx.kb.binary(BinOp::Add, y, b)?;
    }
    Ok(y)
}

/// `rms_norm` / `_fused_rms_norm` kept whole: output 0 is `x * rsqrt(mean(x²) + eps) [* weight]`,
/// output 1 (`_fused_rms_norm` only) is `rstd`, its normalised dims kept as 1. `eps` None is the
/// float32 epsilon (kernels compute in float32).
pub fn rms_norm(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = cx.tensor(node, "input")?;
    let sizes = cx.sizes(v)?;
    let dims = normalized_dims(cx, node, sizes.len())?;
    let k = dims.len();
    let ss = cx.reduce_dims(RedOp::Sum, &sizes, &dims, idx, &mut |cx, i| {
        let x = cx.read(v, i)?;
        Ok(cx.kb.binary(BinOp::Mul, x, x)?)
    })?;
    let n = cx.count(&sizes, &dims)?;
    let ms = cx.kb.binary(BinOp::Div, ss, n)?;
    let eps = match node.arg("eps") {
        None | Some(crate::ir::Arg::None) => f32::EPSILON,
        _ => cx.float_or(node, "eps", f32::EPSILON as f64)? as f32,
    };
    let eps = cx.kb.f32(eps);
    let me = cx.kb.binary(BinOp::Add, ms, eps)?;
    let rstd = cx.kb.unary(UnOp::Rsqrt, me);
    if out == 1 {
        return Ok(rstd);
    }
    let x = cx.read(v, idx)?;
    let mut y = cx.kb.binary(BinOp::Mul, x, rstd)?;
    if let Some(w) = cx.opt_tensor(node, "weight") {
        let w = cx.read(w, &idx[sizes.len() - k..])?;
        y = cx.kb.binary(BinOp::Mul, y, w)?;
    }
    Ok(y)
}

/// `rsqrt(var + eps)` with `eps` a constant of the type of `var`.
pub(super) fn rstd_of(cx: &mut Ctx<'_>, node: &Node, var: ExprId, default_eps: f64) -> Result<ExprId, LowerError> {
    let eps = cx.float_or(node, "eps", default_eps)?;
    let eps = cx.kb.float_like(eps, var);
    let ve = cx.kb.binary(BinOp::Add, var, eps)?;
    Ok(cx.kb.unary(UnOp::Rsqrt, ve))
}

/// `native_layer_norm(input, normalized_shape, weight, bias, eps)`: output 0 is `layer_norm`,
/// outputs 1 and 2 the mean and rstd, of the input's shape with the normalised dims kept as 1.
pub fn native_layer_norm(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    if out == 0 {
        return layer_norm(cx, node, out, idx);
    }
    let v = cx.tensor(node, "input")?;
    let sizes = cx.sizes(v)?;
    let dims = normalized_dims(cx, node, sizes.len())?;
    let r = Red { v, sizes, dims, base: idx.to_vec() };
    let mean = mean_of(cx, &r)?;
    if out == 1 {
        return Ok(mean);
    }
    let var = var_of(cx, &r, mean, 0.0)?;
    rstd_of(cx, node, var, 1e-5)
}

/// Mean and rstd of group `g` of sample `n` of an `[N, C, *]` input in `groups` groups: the
/// statistics over the group's `C / groups` channels and every spatial position.
fn group_stats(cx: &mut Ctx<'_>, node: &Node, v: ValueId, n: ExprId, g: ExprId, groups: i64) -> Result<(ExprId, ExprId), LowerError> {
    let sizes = cx.sizes(v)?;
    if sizes.len() < 2 || groups <= 0 {
        return Err(cx.err(node, "group norm needs an [N, C, *] input and a positive group count"));
    }
    let ty = super::pointwise::out_ty(cx, node)?;
    let per = sym::Expr::floordiv(sizes[1].clone(), sym::Expr::int(groups));
    // The group's elements as a [per, *spatial] block at channel offset g·per.
    let mut block = vec![per.clone()];
    block.extend(sizes[2..].iter().cloned());
    let dims: Vec<usize> = (0..block.len()).collect();
    let per_k = cx.kb.size(&per);
    let c0 = cx.kb.binary(BinOp::Mul, g, per_k)?;
    let zero = cx.kb.i64(0);
    let base = vec![zero; block.len()];
    let mut read = |cx: &mut Ctx<'_>, i: &[ExprId]| -> Result<ExprId, LowerError> {
        let mut at = vec![n, cx.kb.binary(BinOp::Add, c0, i[0])?];
        at.extend_from_slice(&i[1..]);
        let x = cx.read(v, &at)?;
        Ok(cx.kb.cast(x, ty))
    };
    let sum = cx.reduce_dims(RedOp::Sum, &block, &dims, &base, &mut read)?;
    let count = cx.count(&block, &dims)?;
    let mean = cx.kb.binary(BinOp::Div, sum, count)?;
    let ss = cx.reduce_dims(RedOp::Sum, &block, &dims, &base, &mut |cx, i| {
        let x = read(cx, i)?;
        let d = cx.kb.binary(BinOp::Sub, x, mean)?;
        Ok(cx.kb.binary(BinOp::Mul, d, d)?)
    })?;
    let var = cx.kb.binary(BinOp::Div, ss, count)?;
    Ok((mean, rstd_of(cx, node, var, 1e-5)?))
}

/// `(x - mean) · rstd · weight[c] + bias[c]` of a group norm's input element at `idx`.
pub(super) fn group_normed(cx: &mut Ctx<'_>, node: &Node, v: ValueId, idx: &[ExprId], groups: i64) -> Result<ExprId, LowerError> {
    let sizes = cx.sizes(v)?;
    if idx.len() < 2 {
        return Err(cx.err(node, "group norm needs an [N, C, *] input"));
    }
    let c = cx.kb.size(&sizes[1]);
    let gk = cx.kb.i64(groups.max(1));
    let per = cx.kb.binary(BinOp::Div, c, gk)?;
    let g = cx.kb.binary(BinOp::Div, idx[1], per)?;
    let (mean, rstd) = group_stats(cx, node, v, idx[0], g, groups)?;
    let x = cx.read(v, idx)?;
    let x = cx.kb.cast(x, cx.kb.ty(mean));
    let d = cx.kb.binary(BinOp::Sub, x, mean)?;
    let mut y = cx.kb.binary(BinOp::Mul, d, rstd)?;
    if let Some(w) = cx.opt_tensor(node, "weight") {
        let w = cx.read(w, &idx[1..2])?;
        y = cx.kb.binary(BinOp::Mul, y, w)?;
    }
    if let Some(b) = cx.opt_tensor(node, "bias") {
        let b = cx.read(b, &idx[1..2])?;
        y = cx.kb.binary(BinOp::Add, y, b)?;
    }
    Ok(y)
}

/// `group_norm(input, num_groups, weight, bias, eps)`.
pub fn group_norm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = cx.tensor(node, "input")?;
    let groups = cx.int_or(node, "num_groups", 1)?;
    group_normed(cx, node, v, idx, groups)
}

/// `native_group_norm(input, weight, bias, N, C, HxW, group, eps)`: the normalised input, and
/// the `[N, group]` mean and rstd.
pub fn native_group_norm(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = cx.tensor(node, "input")?;
    let groups = cx.int_or(node, "group", 1)?;
    if out == 0 {
        return group_normed(cx, node, v, idx, groups);
    }
    let (mean, rstd) = group_stats(cx, node, v, idx[0], idx[1], groups)?;
    Ok(if out == 1 { mean } else { rstd })
}
