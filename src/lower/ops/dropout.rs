//! The dropout family as kernels: `dropout`, `feature_dropout`, `alpha_dropout`,
//! `feature_alpha_dropout` (`crate::exec::ops::dropout` says what each computes), drawing their
//! noise as the interpreter does (one draw per element, or per (batch, channel) plane, indexed
//! by it), and `native_dropout_backward`.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId};
use super::super::rng::uniform as std_uniform;
use super::super::LowerError;
use super::pointwise::{arg, num, out_sizes, out_ty};
use super::random::{draw, float, linear};
use crate::exec::ops::dropout::{probability, SELU_ALPHA};
use crate::ir::Node;

type R = Result<ExprId, LowerError>;

pub fn dropout(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    lower(cx, node, idx, false, false)
}

pub fn feature_dropout(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    lower(cx, node, idx, true, false)
}

pub fn alpha_dropout(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    lower(cx, node, idx, false, true)
}

pub fn feature_alpha_dropout(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    lower(cx, node, idx, true, true)
}

fn lower(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], feature: bool, alpha: bool) -> R {
    let x = arg(cx, node, "input", idx)?;
    let p = probability(cx.float_or(node, "p", 0.5)?).map_err(|m| cx.err(node, m))?;
    if !cx.bool_or(node, "train", false)? || p == 0.0 {
        return Ok(x);
    }
    if p == 1.0 {
        let zero = num(&mut cx.kb, 0.0, x);
        return Ok(cx.kb.binary(BinOp::Mul, x, zero)?);
    }
    let ty = out_ty(cx, node)?;
    if !ty.is_float() {
        return Err(cx.err(node, "training-mode dropout takes a float input"));
    }
    let index = if feature {
        if idx.len() < 2 {
            return Err(cx.err(node, format!("feature dropout needs at least 2 dimensions, got {}", idx.len())));
        }
        let channels = out_sizes(cx, node)?[1].clone();
        let channels = cx.kb.size(&channels);
        let plane = cx.kb.binary(BinOp::Mul, idx[0], channels)?;
        cx.kb.binary(BinOp::Add, plane, idx[1])?
    } else {
        linear(cx, node, idx)?
    };
    let words = draw(cx, node, index)?;
    let u = std_uniform(&mut cx.kb, &words, ty)?;
    let keep = float(&mut cx.kb, 1.0 - p, ty);
    let kept = cx.kb.cmp(CmpOp::Lt, u, keep)?;
    let noise = cx.kb.cast(kept, ty);
    if !alpha {
        let scale = float(&mut cx.kb, 1.0 / (1.0 - p), ty);
        let scaled = cx.kb.binary(BinOp::Mul, noise, scale)?;
        return Ok(cx.kb.binary(BinOp::Mul, x, scaled)?);
    }
    // input·noise·a + ((noise − 1)·α·a + α·a·p)
    let a = 1.0 / ((SELU_ALPHA * SELU_ALPHA * p + 1.0) * (1.0 - p)).sqrt();
    let (a_c, one, scale, shift) = (float(&mut cx.kb, a, ty), float(&mut cx.kb, 1.0, ty), float(&mut cx.kb, SELU_ALPHA * a, ty), float(&mut cx.kb, SELU_ALPHA * a * p, ty));
    let na = cx.kb.binary(BinOp::Mul, noise, a_c)?;
    let kept_x = cx.kb.binary(BinOp::Mul, x, na)?;
    let less = cx.kb.binary(BinOp::Sub, noise, one)?;
    let b = cx.kb.binary(BinOp::Mul, less, scale)?;
    let b = cx.kb.binary(BinOp::Add, b, shift)?;
    Ok(cx.kb.binary(BinOp::Add, kept_x, b)?)
}

/// The gradient of training-mode `native_dropout` (it draws nothing: the mask carries the
/// draws): `grad · mask · scale`, broadcast.
pub fn native_dropout_backward(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let ty = out_ty(cx, node)?;
    if !ty.is_float() {
        return Err(cx.err(node, "takes float gradients"));
    }
    let g = arg(cx, node, "grad_output", idx)?;
    let m = arg(cx, node, "mask", idx)?;
    let kept = cx.kb.binary(BinOp::Mul, g, m)?;
    let scale = cx.float_or(node, "scale", 1.0)?;
    let scale = float(&mut cx.kb, scale, ty);
    Ok(cx.kb.binary(BinOp::Mul, kept, scale)?)
}
