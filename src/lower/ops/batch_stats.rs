//! Batch normalisation with the batch's own statistics, kept whole (`native_batch_norm`,
//! `_native_batch_norm_legit` (with or without running stats), `_batch_norm_with_update`):
//! output 0 normalises each element by its channel's mean and variance over every other dim,
//! outputs 1 and 2 are the per-channel mean and `1/sqrt(var + eps)`. In inference mode the
//! running statistics are used and outputs 1 and 2 are empty.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, ExprId, UnOp};
use super::super::LowerError;
use super::reduce::{mean_of, var_of, Red};
use crate::ir::Node;

/// Whether the node normalises with batch statistics.
fn training(cx: &Ctx<'_>, node: &Node) -> Result<bool, LowerError> {
    let target = node.target.as_str();
    if target.ends_with("no_stats") || target.starts_with("aten._batch_norm_with_update") {
        return Ok(true);
    }
    cx.bool_or(node, "training", false)
}

pub fn batch_norm_stats(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = cx.tensor(node, "input")?;
    let sizes = cx.sizes(v)?;
    if sizes.len() < 2 {
        return Err(cx.err(node, "batch norm needs an input of rank >= 2"));
    }
    let train = training(cx, node)?;
    let eps = cx.kb.f32(cx.float_or(node, "eps", 1e-5)? as f32);
    let ch = match out {
        0 => idx[1],
        1 | 2 if train => idx[0],
        // Inference statistics and the (uint8) reserve buffer are empty: any element expression
        // of the right type will do, none is ever stored.
        3 => return Ok(cx.kb.i64(0)),
        _ => return Ok(cx.kb.f32(0.0)),
    };
    let (mean, rstd) = if train {
        let mut base = vec![cx.kb.i64(0); sizes.len()];
        base[1] = ch;
        let r = Red { v, sizes: sizes.clone(), dims: (0..sizes.len()).filter(|&d| d != 1).collect(), base };
        let mean = mean_of(cx, &r)?;
        let var = var_of(cx, &r, mean, 0.0)?;
        let ve = cx.kb.binary(BinOp::Add, var, eps)?;
        (mean, cx.kb.unary(UnOp::Rsqrt, ve))
    } else {
        let (Some(rm), Some(rv)) = (cx.opt_tensor(node, "running_mean"), cx.opt_tensor(node, "running_var")) else {
            return Err(cx.err(node, "inference batch norm needs running_mean and running_var"));
        };
        let mean = cx.read(rm, &[ch])?;
        let var = cx.read(rv, &[ch])?;
        let ve = cx.kb.binary(BinOp::Add, var, eps)?;
        (mean, cx.kb.unary(UnOp::Rsqrt, ve))
    };
    match out {
        1 => return Ok(mean),
        2 => return Ok(rstd),
        _ => {}
    }
    let x = cx.read(v, idx)?;
    let d = cx.kb.binary(BinOp::Sub, x, mean)?;
    let mut y = cx.kb.binary(BinOp::Mul, d, rstd)?;
    if let Some(w) = cx.opt_tensor(node, "weight") {
        let w = cx.read(w, &[ch])?;
        y = cx.kb.binary(BinOp::Mul, y, w)?;
    }
    if let Some(b) = cx.opt_tensor(node, "bias") {
        let b = cx.read(b, &[ch])?;
        y = cx.kb.binary(BinOp::Add, y, b)?;
    }
    Ok(y)
}
