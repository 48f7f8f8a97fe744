//! Lowerings of the binary float functions (`atan2`, `hypot`, `copysign`, `logaddexp`, `xlogy`,
//! `fmod`/`remainder`, `fmin`/`fmax`, `float_power`, `heaviside`, `ldexp`, `xlog1py`): two
//! operands promoted to a float type, then one formula. Apart from `math` so the two-operand
//! helpers sit with their only users; re-exported from `math`.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, Ty, UnOp};
use super::math::R;
use super::math_logic::is_inf;
use super::pointwise::{arg, num, out_sizes};
use crate::ir::{Arg, Node};

fn float2(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], f: impl FnOnce(&mut KernelBuilder, ExprId, ExprId) -> R) -> R {
    let x = arg(cx, node, "self", idx)?;
    let y = arg(cx, node, "other", idx)?;
    if !cx.kb.ty(x).is_float() {
        return Err(cx.err(node, "expected a float result"));
    }
    f(&mut cx.kb, x, y)
}

pub fn atan2(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    float2(cx, node, idx, |kb, x, y| Ok(kb.binary(BinOp::Atan2, x, y)?))
}

pub fn hypot(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    float2(cx, node, idx, |kb, x, y| Ok(kb.binary(BinOp::Hypot, x, y)?))
}

pub fn copysign(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    float2(cx, node, idx, |kb, x, y| Ok(kb.binary(BinOp::CopySign, x, y)?))
}

pub fn logaddexp(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    float2(cx, node, idx, |kb, x, y| {
        let m = kb.binary(BinOp::Max, x, y)?;
        let (dx, dy) = (kb.binary(BinOp::Sub, x, m)?, kb.binary(BinOp::Sub, y, m)?);
        let (ex, ey) = (kb.unary(UnOp::Exp, dx), kb.unary(UnOp::Exp, dy));
        let s = kb.binary(BinOp::Add, ex, ey)?;
        let l = kb.unary(UnOp::Log, s);
        let r = kb.binary(BinOp::Add, m, l)?;
        // Both -inf (or the same infinity): the max itself.
        let inf = is_inf(kb, m)?;
        Ok(kb.select(inf, m, r)?)
    })
}

pub fn xlogy(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    float2(cx, node, idx, |kb, x, y| {
        let zero = kb.f32(0.0);
        let l = kb.unary(UnOp::Log, y);
        let p = kb.binary(BinOp::Mul, x, l)?;
        let x0 = kb.cmp(CmpOp::Eq, x, zero)?;
        let ynan = kb.cmp(CmpOp::Ne, y, y)?;
        let r = kb.select(x0, zero, p)?;
        Ok(kb.select(ynan, y, r)?)
    })
}

/// `fmod` (sign of the dividend) and `remainder` (sign of the divisor).
fn modulo(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], python: bool) -> R {
    let x = arg(cx, node, "self", idx)?;
    let y = arg(cx, node, "other", idx)?;
    let kb = &mut cx.kb;
    let r = kb.binary(BinOp::Rem, x, y)?;
    if !python {
        return Ok(r);
    }
    let zero = num(kb, 0.0, r);
    let nz = kb.cmp(CmpOp::Ne, r, zero)?;
    let (rn, yn) = (kb.cmp(CmpOp::Lt, r, zero)?, kb.cmp(CmpOp::Lt, y, zero)?);
    let (ri, yi) = (kb.cast(rn, Ty::I64), kb.cast(yn, Ty::I64));
    let differ = kb.cmp(CmpOp::Ne, ri, yi)?;
    let fix = kb.and(nz, differ)?;
    let ry = kb.binary(BinOp::Add, r, y)?;
    Ok(kb.select(fix, ry, r)?)
}

pub fn fmod(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    modulo(cx, node, idx, false)
}

pub fn remainder(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    modulo(cx, node, idx, true)
}

/// `fmax`/`fmin` ignore NaN, as OpenCL's built-ins do.
pub fn fmax(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (x, y) = (arg(cx, node, "self", idx)?, arg(cx, node, "other", idx)?);
    Ok(cx.kb.binary(BinOp::Max, x, y)?)
}

pub fn fmin(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (x, y) = (arg(cx, node, "self", idx)?, arg(cx, node, "other", idx)?);
    Ok(cx.kb.binary(BinOp::Min, x, y)?)
}
/// `float_power`: both operands as float64.
pub fn float_power(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let sizes = out_sizes(cx, node)?;
    let x = cx.operand(node, "self", idx, &sizes)?;
    let y = match node.arg("exponent") {
        Some(Arg::Float(f)) => cx.kb.f64(*f),
        _ => cx.operand(node, "exponent", idx, &sizes)?,
    };
    let (x, y) = (cx.kb.cast(x, Ty::F64), cx.kb.cast(y, Ty::F64));
    Ok(cx.kb.binary(BinOp::Pow, x, y)?)
}

/// `heaviside(self, values)`: 0 below zero, 1 above, `values` at zero (NaN stays NaN).
pub fn heaviside(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = arg(cx, node, "self", idx)?;
    let v = arg(cx, node, "values", idx)?;
    let kb = &mut cx.kb;
    let (zero, one) = (num(kb, 0.0, x), num(kb, 1.0, x));
    let pos = kb.cmp(CmpOp::Gt, x, zero)?;
    let is_zero = kb.cmp(CmpOp::Eq, x, zero)?;
    let r = kb.select(pos, one, zero)?;
    let r = kb.select(is_zero, v, r)?;
    if kb.ty(x).is_float() {
        let nan = kb.cmp(CmpOp::Ne, x, x)?;
        return Ok(kb.select(nan, x, r)?);
    }
    Ok(r)
}

/// `ldexp(self, other)`: `self · 2^other`.
pub fn ldexp(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    float2(cx, node, idx, |kb, x, y| {
        let u = kb.unary(UnOp::Exp2, y);
        Ok(kb.binary(BinOp::Mul, x, u)?)
    })
}

/// `special_xlog1py(self, other)`: `x · log1p(y)`, 0 where x is 0 (unless y is NaN).
pub fn xlog1py(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    float2(cx, node, idx, |kb, x, y| {
        let zero = kb.float_like(0.0, x);
        let l = kb.unary(UnOp::Log1p, y);
        let p = kb.binary(BinOp::Mul, x, l)?;
        let x0 = kb.cmp(CmpOp::Eq, x, zero)?;
        let ynan = kb.cmp(CmpOp::Ne, y, y)?;
        let r = kb.select(x0, zero, p)?;
        Ok(kb.select(ynan, y, r)?)
    })
}
