//! Batch and instance normalisation, kept whole: inference `batch_norm` from the running
//! statistics, training-mode `batch_norm` and its native forms (`native_batch_norm`,
//! `_native_batch_norm_legit`, `_batch_norm_with_update`) from the batch's own per-channel
//! statistics, and `instance_norm` per sample and channel. The running-statistics updates of
//! training mode are side effects on the inputs; the outputs here are the op's return values.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, Elem, ExprId, RedOp, UnOp};
use super::super::LowerError;
use super::norm::rstd_of;
use crate::ir::{Node, ValueId};

type R = Result<ExprId, LowerError>;

/// Mean and rstd over `dims` of `v` at `base` (a batch's or one sample's statistics, biased
/// variance), rounded where PyTorch's CPU kernel rounds them for a 16-bit float input: the mean
/// and invstd to the input's dtype; the sum of squared deviations and the variance too for
/// bfloat16, while float16 keeps them in float32 (`exec::ops::batch_stats::StatRounding`).
fn stats_over(cx: &mut Ctx<'_>, node: &Node, v: ValueId, base: Vec<ExprId>, dims: &[usize]) -> Result<(ExprId, ExprId), LowerError> {
    let sizes = cx.sizes(v)?;
    let ty = super::pointwise::out_ty(cx, node)?;
    let sum = cx.reduce_dims(RedOp::Sum, &sizes, dims, &base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        Ok(cx.kb.cast(x, ty))
    })?;
    let n = cx.count(&sizes, dims)?;
    let mean = cx.kb.binary(BinOp::Div, sum, n)?;
    let ss = cx.reduce_dims(RedOp::Sum, &sizes, dims, &base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        let x = cx.kb.cast(x, ty);
        let d = cx.kb.binary(BinOp::Sub, x, mean)?;
        Ok(cx.kb.binary(BinOp::Mul, d, d)?)
    })?;
    let storage = Elem::from_dtype(cx.meta(v)?.dtype);
    let var = if storage == Some(Elem::BF16) {
        let ss = cx.kb.round_to(ss, Elem::BF16);
        let var = cx.kb.binary(BinOp::Div, ss, n)?;
        cx.kb.round_to(var, Elem::BF16)
    } else {
        cx.kb.binary(BinOp::Div, ss, n)?
    };
    let rstd = rstd_of(cx, node, var, 1e-5)?;
    Ok((cx.round_as(v, mean)?, cx.round_as(v, rstd)?))
}

/// The batch's statistics of channel `c`: over every dim but the channels.
fn channel_stats(cx: &mut Ctx<'_>, node: &Node, v: ValueId, c: ExprId) -> Result<(ExprId, ExprId), LowerError> {
    let rank = cx.sizes(v)?.len();
    let zero = cx.kb.i64(0);
    let mut base = vec![zero; rank];
    base[1] = c;
    let dims: Vec<usize> = (0..rank).filter(|&d| d != 1).collect();
    stats_over(cx, node, v, base, &dims)
}

/// Mean and rstd of channel `c`: the batch's in training, else the running statistics.
fn stats(cx: &mut Ctx<'_>, node: &Node, v: ValueId, c: ExprId, training: bool) -> Result<(ExprId, ExprId), LowerError> {
    if training {
        return channel_stats(cx, node, v, c);
    }
    let (Some(rm), Some(rv)) = (cx.opt_tensor(node, "running_mean"), cx.opt_tensor(node, "running_var")) else {
        return Err(cx.err(node, "inference batch norm needs running_mean and running_var"));
    };
    let mean = cx.read(rm, &[c])?;
    let var = cx.read(rv, &[c])?;
    Ok((mean, rstd_of(cx, node, var, 1e-5)?))
}

/// `(x - mean) · rstd · weight[c] + bias[c]` at `idx` (channel `idx[1]`), as PyTorch's CPU
/// kernel evaluates it: `x · alpha + beta` with `alpha = rstd · weight[c]` and
/// `beta = bias[c] - mean · alpha`.
fn normed(cx: &mut Ctx<'_>, node: &Node, v: ValueId, idx: &[ExprId], mean: ExprId, rstd: ExprId) -> R {
    let c = [idx[1]];
    let x = cx.read(v, idx)?;
    let mut alpha = rstd;
    if let Some(w) = cx.opt_tensor(node, "weight") {
        let w = cx.read(w, &c)?;
        alpha = cx.kb.binary(BinOp::Mul, alpha, w)?;
    }
    let shift = cx.kb.binary(BinOp::Mul, mean, alpha)?;
    let beta = match cx.opt_tensor(node, "bias") {
        Some(b) => {
            let b = cx.read(b, &c)?;
            cx.kb.binary(BinOp::Sub, b, shift)?
        }
        None => cx.kb.unary(UnOp::Neg, shift),
    };
    let y = cx.kb.binary(BinOp::Mul, x, alpha)?;
    Ok(cx.kb.binary(BinOp::Add, y, beta)?)
}

fn training(cx: &Ctx<'_>, node: &Node) -> Result<bool, LowerError> {
    // `_batch_norm_with_update` is the training form and has no flag.
    cx.bool_or(node, "training", node.target.contains("with_update"))
}

/// `batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)`.
pub fn batch_norm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "input")?;
    if cx.sizes(v)?.iter().any(|s| s.as_int() == Some(0)) {
        // No elements, so nothing to compute (PyTorch accepts an empty 1-D input).
        return Ok(cx.kb.i64(0));
    }
    if idx.len() < 2 {
        return Err(cx.err(node, "batch_norm needs an input of rank >= 2"));
    }
    let (mean, rstd) = stats(cx, node, v, idx[1], training(cx, node)?)?;
    normed(cx, node, v, idx, mean, rstd)
}

/// The native forms: output 0 normalised, outputs 1 and 2 the per-channel mean and rstd
/// (empty outside training), `_batch_norm_with_update`'s output 3 an empty reserve.
pub fn native_batch_norm(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "input")?;
    let training = training(cx, node)?;
    match out {
        0 => batch_norm(cx, node, out, idx),
        1 | 2 if training => {
            let (mean, rstd) = channel_stats(cx, node, v, idx[0])?;
            Ok(if out == 1 { mean } else { rstd })
        }
        // Empty outputs: nothing is stored.
        _ => Ok(cx.kb.i64(0)),
    }
}

/// `instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, ...)`: with
/// input statistics, a group norm with one channel per group; without, inference batch norm.
pub fn instance_norm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "input")?;
    if idx.len() < 2 {
        return Err(cx.err(node, "instance_norm needs an input of rank >= 2"));
    }
    if !cx.bool_or(node, "use_input_stats", true)? {
        let (mean, rstd) = stats(cx, node, v, idx[1], false)?;
        return normed(cx, node, v, idx, mean, rstd);
    }
    // PyTorch normalises the input viewed as (1, N·C, *) with batch norm: per sample and
    // channel, rounded as batch norm rounds.
    let rank = idx.len();
    let zero = cx.kb.i64(0);
    let mut base = vec![zero; rank];
    base[..2].copy_from_slice(&idx[..2]);
    let dims: Vec<usize> = (2..rank).collect();
    let (mean, rstd) = stats_over(cx, node, v, base, &dims)?;
    normed(cx, node, v, idx, mean, rstd)
}
