//! The kept (fallback) forms of normalisations: softmax, log_softmax, layer_norm in one kernel
//! each (statistics recomputed per element by serial loops), and inference batch_norm.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, ExprId, RedOp, UnOp};
use super::super::LowerError;
use super::reduce::{mean_of, var_of, Red};
use crate::ir::{Node, ValueId};

/// (max over `dim`, Σ exp(x - max) over `dim`) for the row through `idx`.
fn softmax_stats(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<(ValueId, ExprId, ExprId), LowerError> {
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    let dim = wrap_dims(&[cx.int_or(node, "dim", -1)?], sizes.len()).map_err(|m| cx.err(node, m))?;
    let m = cx.reduce_dims(RedOp::Max, &sizes, &dim, idx, &mut |cx, i| cx.read(v, i))?;
    let s = cx.reduce_dims(RedOp::Sum, &sizes, &dim, idx, &mut |cx, i| {
        let x = cx.read(v, i)?;
        let d = cx.kb.binary(BinOp::Sub, x, m)?;
        Ok(cx.kb.unary(UnOp::Exp, d))
    })?;
    Ok((v, m, s))
}

pub fn softmax(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let (v, m, s) = softmax_stats(cx, node, idx)?;
    let x = cx.read(v, idx)?;
    let d = cx.kb.binary(BinOp::Sub, x, m)?;
    let e = cx.kb.unary(UnOp::Exp, d);
    Ok(cx.kb.binary(BinOp::Div, e, s)?)
}

pub fn log_softmax(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let (v, m, s) = softmax_stats(cx, node, idx)?;
    let x = cx.read(v, idx)?;
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

pub fn batch_norm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    if cx.bool_or(node, "training", false)? {
        return Err(cx.err(node, "batch_norm in training mode is not supported (statistics of the batch)"));
    }
    if idx.len() < 2 {
        return Err(cx.err(node, "batch_norm needs an input of rank >= 2"));
    }
    let v = cx.tensor(node, "input")?;
    let c = [idx[1]];
    let x = cx.read(v, idx)?;
    let (Some(rm), Some(rv)) = (cx.opt_tensor(node, "running_mean"), cx.opt_tensor(node, "running_var")) else {
        return Err(cx.err(node, "inference batch_norm needs running_mean and running_var"));
    };
    let mean = cx.read(rm, &c)?;
    let var = cx.read(rv, &c)?;
    let eps = cx.kb.f32(cx.float_or(node, "eps", 1e-5)? as f32);
    let ve = cx.kb.binary(BinOp::Add, var, eps)?;
    let rstd = cx.kb.unary(UnOp::Rsqrt, ve);
    let d = cx.kb.binary(BinOp::Sub, x, mean)?;
    let mut y = cx.kb.binary(BinOp::Mul, d, rstd)?;
    if let Some(w) = cx.opt_tensor(node, "weight") {
        let w = cx.read(w, &c)?;
        y = cx.kb.binary(BinOp::Mul, y, w)?;
    }
    if let Some(b) = cx.opt_tensor(node, "bias") {
        let b = cx.read(b, &c)?;
        y = cx.kb.binary(BinOp::Add, y, b)?;
    }
    Ok(y)
}
