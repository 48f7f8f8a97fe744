//! Lowerings of the bool-valued and selecting elementwise ops: `isnan` and friends, comparisons,
//! logical and bitwise ops, `where`, `masked_fill`, `one_hot`, the tensor-bound clamps and
//! `isclose`. Apart from `math` because they share the common-compute-type helper and none of
//! them needs a float built-in; re-exported from `math`.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, Ty, UnOp};
use super::super::LowerError;
use super::math::R;
use super::pointwise::{arg, out_sizes};
use crate::ir::{Arg, Node};

/// `isnan` and friends: bool results from the float (or integer) input.
fn predicate(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], f: impl FnOnce(&mut KernelBuilder, ExprId) -> R) -> R {
    let sizes = out_sizes(cx, node)?;
    let x = cx.operand(node, "self", idx, &sizes)?;
    if !cx.kb.ty(x).is_float() {
        // Integers are finite and never NaN: every predicate here is false on them but isfinite.
        return Ok(cx.kb.bool(node.target == "aten.isfinite.default"));
    }
    f(&mut cx.kb, x)
}

pub fn isnan(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    predicate(cx, node, idx, |kb, x| Ok(kb.cmp(CmpOp::Ne, x, x)?))
}

pub(super) fn is_inf(kb: &mut KernelBuilder, x: ExprId) -> R {
    let a = kb.unary(UnOp::Abs, x);
    let inf = kb.f32(f32::INFINITY);
    Ok(kb.cmp(CmpOp::Eq, a, inf)?)
}

pub fn isinf(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    predicate(cx, node, idx, is_inf)
}

pub fn isfinite(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    predicate(cx, node, idx, |kb, x| {
        let a = kb.unary(UnOp::Abs, x);
        let inf = kb.f32(f32::INFINITY);
        Ok(kb.cmp(CmpOp::Lt, a, inf)?)
    })
}

pub fn isposinf(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    predicate(cx, node, idx, |kb, x| {
        let inf = kb.f32(f32::INFINITY);
        Ok(kb.cmp(CmpOp::Eq, x, inf)?)
    })
}

pub fn isneginf(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    predicate(cx, node, idx, |kb, x| {
        let inf = kb.f32(f32::NEG_INFINITY);
        Ok(kb.cmp(CmpOp::Eq, x, inf)?)
    })
}

/// Two operands in their common compute type: f32 if either is float, else i64.
fn common(cx: &mut Ctx<'_>, node: &Node, a: &str, b: &str, idx: &[ExprId]) -> Result<(ExprId, ExprId), LowerError> {
    let sizes = out_sizes(cx, node)?;
    let x = cx.operand(node, a, idx, &sizes)?;
    let y = cx.operand(node, b, idx, &sizes)?;
    // A Python number next to an integer tensor compares as the tensor's type.
    let y_is_number = cx.opt_tensor(node, b).is_none();
    let t = match (cx.kb.ty(x), cx.kb.ty(y)) {
        (Ty::F64, _) | (_, Ty::F64) => Ty::F64,
        (Ty::F32, _) => Ty::F32,
        (_, Ty::F32) if !y_is_number => Ty::F32,
        (_, Ty::F32) if matches!(node.arg(b), Some(Arg::Float(f)) if f.fract() != 0.0 || !f.is_finite()) => Ty::F32,
        _ => Ty::I64,
    };
    Ok((cx.kb.cast(x, t), cx.kb.cast(y, t)))
}

fn compare(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], op: CmpOp) -> R {
    let (x, y) = common(cx, node, "self", "other", idx)?;
    Ok(cx.kb.cmp(op, x, y)?)
}

macro_rules! comparisons {
    ($($name:ident => $op:ident;)*) => {
        $(pub fn $name(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
            compare(cx, node, idx, CmpOp::$op)
        })*
    };
}

comparisons! {
    eq => Eq;
    ne => Ne;
    lt => Lt;
    le => Le;
    gt => Gt;
    ge => Ge;
}

fn as_bool(cx: &mut Ctx<'_>, node: &Node, name: &str, idx: &[ExprId]) -> R {
    let sizes = out_sizes(cx, node)?;
    let x = cx.operand(node, name, idx, &sizes)?;
    Ok(cx.kb.cast(x, Ty::Bool))
}

pub fn logical_not(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = as_bool(cx, node, "self", idx)?;
    Ok(cx.kb.unary(UnOp::Not, x))
}

fn logical(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], op: BinOp) -> R {
    let x = as_bool(cx, node, "self", idx)?;
    let y = as_bool(cx, node, "other", idx)?;
    Ok(cx.kb.binary(op, x, y)?)
}

pub fn logical_and(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    logical(cx, node, idx, BinOp::BitAnd)
}

pub fn logical_or(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    logical(cx, node, idx, BinOp::BitOr)
}

pub fn logical_xor(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    logical(cx, node, idx, BinOp::BitXor)
}

fn bitwise(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], op: BinOp) -> R {
    let x = arg(cx, node, "self", idx)?;
    let y = arg(cx, node, "other", idx)?;
    if cx.kb.ty(x) != Ty::I64 {
        return Err(cx.err(node, "bitwise ops take integers or bool"));
    }
    Ok(cx.kb.binary(op, x, y)?)
}

pub fn bitwise_and(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    bitwise(cx, node, idx, BinOp::BitAnd)
}

pub fn bitwise_or(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    bitwise(cx, node, idx, BinOp::BitOr)
}

pub fn bitwise_xor(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    bitwise(cx, node, idx, BinOp::BitXor)
}

pub fn bitwise_not(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let sizes = out_sizes(cx, node)?;
    let x = cx.operand(node, "self", idx, &sizes)?;
    match cx.kb.ty(x) {
        Ty::Bool => Ok(cx.kb.unary(UnOp::Not, x)),
        Ty::I64 | Ty::U32 => Ok(cx.kb.unary(UnOp::BitNot, x)),
        Ty::F32 | Ty::F64 => Err(cx.err(node, "bitwise_not of a float tensor")),
    }
}

/// `where(condition, self, other)`.
pub fn where_(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let c = as_bool(cx, node, "condition", idx)?;
    let x = arg(cx, node, "self", idx)?;
    let y = arg(cx, node, "other", idx)?;
    Ok(cx.kb.select(c, x, y)?)
}

/// `one_hot(self, num_classes)`: element `[..., c]` is 1 where `self[...] == c` (int64). With
/// `num_classes` -1 the class count depends on the data, and the plan refuses the node for want
/// of a size kernel before this runs. A value out of range gives a row of zeros here (a kernel
/// cannot raise); the interpreter reports it as PyTorch does.
pub fn one_hot(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let Some((class, at)) = idx.split_last() else { return Err(cx.err(node, "one_hot output has no class dim")) };
    let x = cx.read(v, at)?;
    let hit = cx.kb.cmp(CmpOp::Eq, x, *class)?;
    Ok(cx.kb.cast(hit, Ty::I64))
}

/// `masked_fill(self, mask, value)`.
pub fn masked_fill(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let m = as_bool(cx, node, "mask", idx)?;
    let x = arg(cx, node, "self", idx)?;
    let v = arg(cx, node, "value", idx)?;
    Ok(cx.kb.select(m, v, x)?)
}
pub fn clamp_min_tensor(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = arg(cx, node, "self", idx)?;
    let lo = arg(cx, node, "min", idx)?;
    let below = cx.kb.cmp(CmpOp::Lt, x, lo)?;
    Ok(cx.kb.select(below, lo, x)?)
}

pub fn clamp_max_tensor(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = arg(cx, node, "self", idx)?;
    let hi = arg(cx, node, "max", idx)?;
    let above = cx.kb.cmp(CmpOp::Gt, x, hi)?;
    Ok(cx.kb.select(above, hi, x)?)
}

/// `isclose(self, other, rtol, atol, equal_nan)`.
pub fn isclose(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (rtol, atol, nan_eq) = (cx.float_or(node, "rtol", 1e-5)?, cx.float_or(node, "atol", 1e-8)?, cx.bool_or(node, "equal_nan", false)?);
    let (x, y) = common(cx, node, "self", "other", idx)?;
    let kb = &mut cx.kb;
    let eq = kb.cmp(CmpOp::Eq, x, y)?;
    if !kb.ty(x).is_float() {
        return Ok(eq);
    }
    let d = kb.binary(BinOp::Sub, x, y)?;
    let d = kb.unary(UnOp::Abs, d);
    let ay = kb.unary(UnOp::Abs, y);
    let (r, a) = (kb.float_like(rtol, ay), kb.float_like(atol, ay));
    let tol = kb.binary(BinOp::Mul, r, ay)?;
    let tol = kb.binary(BinOp::Add, a, tol)?;
    let close = kb.cmp(CmpOp::Le, d, tol)?;
    let r = kb.binary(BinOp::Or, eq, close)?;
    if !nan_eq {
        return Ok(r);
    }
    let (xn, yn) = (kb.cmp(CmpOp::Ne, x, x)?, kb.cmp(CmpOp::Ne, y, y)?);
    let both = kb.and(xn, yn)?;
    Ok(kb.binary(BinOp::Or, r, both)?)
}
/// `clamp(self, min, max)` with tensor (or absent) bounds.
pub fn clamp_tensor(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let mut x = arg(cx, node, "self", idx)?;
    if cx.opt_tensor(node, "min").is_some() || matches!(node.arg("min"), Some(Arg::Float(_) | Arg::Int(_))) {
        let lo = arg(cx, node, "min", idx)?;
        let below = cx.kb.cmp(CmpOp::Lt, x, lo)?;
        x = cx.kb.select(below, lo, x)?;
    }
    if cx.opt_tensor(node, "max").is_some() || matches!(node.arg("max"), Some(Arg::Float(_) | Arg::Int(_))) {
        let hi = arg(cx, node, "max", idx)?;
        let above = cx.kb.cmp(CmpOp::Gt, x, hi)?;
        x = cx.kb.select(above, hi, x)?;
    }
    Ok(x)
}
