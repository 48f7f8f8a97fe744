//! The rest of the elementwise ops: OpenCL's float built-ins, rounding, predicates,
//! comparisons and selects, logical and bitwise ops, the binary float functions, factories
//! (`full`, `ones_like`, `new_zeros`, …) and index-remapping ops (`pad`, `flip`, `roll`,
//! `repeat`, `tril`/`triu`, `.mT`) that read their input at computed coordinates.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, Ty, UnOp};
use super::super::LowerError;
use super::pointwise::{arg, num, out_sizes, out_ty};
use crate::ir::{Arg, Node, ValueId};

type R = Result<ExprId, LowerError>;

/// A float-only function: operands become f32 (an integer input gives a float32 output).
fn float1(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], f: impl FnOnce(&mut KernelBuilder, ExprId) -> R) -> R {
    let x = arg(cx, node, "self", idx)?;
    if !cx.kb.ty(x).is_float() {
        return Err(cx.err(node, "expected a float result"));
    }
    f(&mut cx.kb, x)
}

macro_rules! float_unary {
    ($($name:ident => $op:ident;)*) => {
        $(pub fn $name(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
            float1(cx, node, idx, |kb, x| Ok(kb.unary(UnOp::$op, x)))
        })*
    };
}

float_unary! {
    sin => Sin;
    cos => Cos;
    tan => Tan;
    asin => Asin;
    acos => Acos;
    atan => Atan;
    sinh => Sinh;
    cosh => Cosh;
    asinh => Asinh;
    acosh => Acosh;
    atanh => Atanh;
    exp2 => Exp2;
    expm1 => Expm1;
    log2 => Log2;
    log10 => Log10;
    log1p => Log1p;
    erfc => Erfc;
    lgamma => Lgamma;
}

/// Rounding: the identity on integers and bool.
fn rounding(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], op: UnOp) -> R {
    let x = arg(cx, node, "self", idx)?;
    if !cx.kb.ty(x).is_float() {
        return Ok(x);
    }
    Ok(cx.kb.unary(op, x))
}

pub fn floor(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    rounding(cx, node, idx, UnOp::Floor)
}

pub fn ceil(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    rounding(cx, node, idx, UnOp::Ceil)
}

pub fn trunc(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    rounding(cx, node, idx, UnOp::Trunc)
}

/// `round(x, decimals)`: half to even, scaled by 10^decimals.
pub fn round(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let d = cx.int_or(node, "decimals", 0)?;
    let x = arg(cx, node, "self", idx)?;
    if !cx.kb.ty(x).is_float() {
        return Ok(x);
    }
    if d == 0 {
        return Ok(cx.kb.unary(UnOp::Rint, x));
    }
    let s = cx.kb.f32(10f32.powi(d as i32));
    let y = cx.kb.binary(BinOp::Mul, x, s)?;
    let y = cx.kb.unary(UnOp::Rint, y);
    Ok(cx.kb.binary(BinOp::Div, y, s)?)
}

pub fn frac(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    float1(cx, node, idx, |kb, x| {
        let t = kb.unary(UnOp::Trunc, x);
        Ok(kb.binary(BinOp::Sub, x, t)?)
    })
}

pub fn positive(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    arg(cx, node, "self", idx)
}

pub fn square(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = arg(cx, node, "self", idx)?;
    Ok(cx.kb.binary(BinOp::Mul, x, x)?)
}

/// `sign`: -1, 0 or 1 (NaN stays NaN).
pub fn sign(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = arg(cx, node, "self", idx)?;
    let kb = &mut cx.kb;
    let (zero, one) = (num(kb, 0.0, x), num(kb, 1.0, x));
    let minus = num(kb, -1.0, x);
    let pos = kb.cmp(CmpOp::Gt, x, zero)?;
    let neg = kb.cmp(CmpOp::Lt, x, zero)?;
    let r = kb.select(neg, minus, x)?;
    let r = kb.select(pos, one, r)?;
    let is_zero = kb.cmp(CmpOp::Eq, x, zero)?;
    Ok(kb.select(is_zero, zero, r)?)
}

fn scale(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], k: f32) -> R {
    float1(cx, node, idx, |kb, x| {
        let c = kb.f32(k);
        Ok(kb.binary(BinOp::Mul, x, c)?)
    })
}

pub fn deg2rad(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    scale(cx, node, idx, std::f32::consts::PI / 180.0)
}

pub fn rad2deg(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    scale(cx, node, idx, 180.0 / std::f32::consts::PI)
}

/// `log(1 + exp(βx)) / β`, linear above the threshold.
pub fn softplus(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (beta, th) = (cx.float_or(node, "beta", 1.0)? as f32, cx.float_or(node, "threshold", 20.0)? as f32);
    float1(cx, node, idx, |kb, x| softplus_of(kb, x, beta, th))
}

fn softplus_of(kb: &mut KernelBuilder, x: ExprId, beta: f32, th: f32) -> R {
    let (b, t) = (kb.f32(beta), kb.f32(th));
    let bx = kb.binary(BinOp::Mul, x, b)?;
    let e = kb.unary(UnOp::Exp, bx);
    let l = kb.unary(UnOp::Log1p, e);
    let l = kb.binary(BinOp::Div, l, b)?;
    let big = kb.cmp(CmpOp::Gt, bx, t)?;
    Ok(kb.select(big, x, l)?)
}

pub fn mish(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    float1(cx, node, idx, |kb, x| {
        let s = softplus_of(kb, x, 1.0, 20.0)?;
        let t = kb.unary(UnOp::Tanh, s);
        Ok(kb.binary(BinOp::Mul, x, t)?)
    })
}

pub fn log_sigmoid(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    // -softplus(-x), computed stably: min(x, 0) - log1p(exp(-|x|)).
    float1(cx, node, idx, |kb, x| {
        let zero = kb.f32(0.0);
        let m = kb.binary(BinOp::Min, x, zero)?;
        let a = kb.unary(UnOp::Abs, x);
        let na = kb.unary(UnOp::Neg, a);
        let e = kb.unary(UnOp::Exp, na);
        let l = kb.unary(UnOp::Log1p, e);
        Ok(kb.binary(BinOp::Sub, m, l)?)
    })
}

/// `scale·x` above 0, `scale·α·(exp(x·input_scale) − 1)` below (elu, and selu's constants).
fn elu_of(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], alpha: f32, scale: f32, input_scale: f32) -> R {
    float1(cx, node, idx, |kb, x| {
        let (a, s, is, zero) = (kb.f32(alpha), kb.f32(scale), kb.f32(input_scale), kb.f32(0.0));
        let xi = kb.binary(BinOp::Mul, x, is)?;
        let e = kb.unary(UnOp::Expm1, xi);
        let neg = kb.binary(BinOp::Mul, a, e)?;
        let pos = kb.cmp(CmpOp::Gt, x, zero)?;
        let r = kb.select(pos, x, neg)?;
        Ok(kb.binary(BinOp::Mul, s, r)?)
    })
}

pub fn elu(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (a, s, is) = (cx.float_or(node, "alpha", 1.0)?, cx.float_or(node, "scale", 1.0)?, cx.float_or(node, "input_scale", 1.0)?);
    elu_of(cx, node, idx, a as f32, s as f32, is as f32)
}

pub fn selu(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    elu_of(cx, node, idx, 1.673_263_2, 1.050_701, 1.0)
}

pub fn celu(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let a = cx.float_or(node, "alpha", 1.0)? as f32;
    elu_of(cx, node, idx, a, 1.0, 1.0 / a)
}

pub fn leaky_relu(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let slope = cx.float_or(node, "negative_slope", 0.01)? as f32;
    float1(cx, node, idx, |kb, x| {
        let (s, zero) = (kb.f32(slope), kb.f32(0.0));
        let y = kb.binary(BinOp::Mul, x, s)?;
        let pos = kb.cmp(CmpOp::Gt, x, zero)?;
        Ok(kb.select(pos, x, y)?)
    })
}

pub fn hardshrink(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let l = cx.float_or(node, "lambd", 0.5)? as f32;
    float1(cx, node, idx, |kb, x| {
        let (lo, hi, zero) = (kb.f32(-l), kb.f32(l), kb.f32(0.0));
        let a = kb.cmp(CmpOp::Ge, x, lo)?;
        let b = kb.cmp(CmpOp::Le, x, hi)?;
        let inside = kb.and(a, b)?;
        Ok(kb.select(inside, zero, x)?)
    })
}

pub fn softshrink(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let l = cx.float_or(node, "lambd", 0.5)? as f32;
    float1(cx, node, idx, |kb, x| {
        let (lo, hi, zero) = (kb.f32(-l), kb.f32(l), kb.f32(0.0));
        let above = kb.cmp(CmpOp::Gt, x, hi)?;
        let below = kb.cmp(CmpOp::Lt, x, lo)?;
        let down = kb.binary(BinOp::Sub, x, hi)?;
        let up = kb.binary(BinOp::Sub, x, lo)?;
        let r = kb.select(below, up, zero)?;
        Ok(kb.select(above, down, r)?)
    })
}

pub fn threshold(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (th, v) = (cx.float_or(node, "threshold", 0.0)? as f32, cx.float_or(node, "value", 0.0)? as f32);
    let x = arg(cx, node, "self", idx)?;
    let kb = &mut cx.kb;
    let (t, val) = (num(kb, th, x), num(kb, v, x));
    let le = kb.cmp(CmpOp::Le, x, t)?;
    Ok(kb.select(le, val, x)?)
}

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

fn is_inf(kb: &mut KernelBuilder, x: ExprId) -> R {
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

/// A constant of the output's dtype: `full`, `zeros`, `ones`, `*_like`, `new_*`, `empty`
/// (zeros, as the interpreter gives), `fill`, `scalar_tensor`.
fn constant(cx: &mut Ctx<'_>, node: &Node, v: f64) -> R {
    Ok(match out_ty(cx, node)? {
        Ty::I64 => cx.kb.i64(v as i64),
        Ty::F64 => cx.kb.f64(v),
        t => {
            let c = cx.kb.f32(v as f32);
            cx.kb.cast(c, t)
        }
    })
}

fn fill_value(cx: &Ctx<'_>, node: &Node, name: &str) -> Result<f64, LowerError> {
    match node.arg(name) {
        Some(Arg::Bool(b)) => Ok(*b as i32 as f64),
        _ => cx.float_or(node, name, 0.0),
    }
}

pub fn zeros(cx: &mut Ctx<'_>, node: &Node, _: usize, _: &[ExprId]) -> R {
    constant(cx, node, 0.0)
}

pub fn ones(cx: &mut Ctx<'_>, node: &Node, _: usize, _: &[ExprId]) -> R {
    constant(cx, node, 1.0)
}

pub fn full(cx: &mut Ctx<'_>, node: &Node, _: usize, _: &[ExprId]) -> R {
    let v = fill_value(cx, node, "fill_value")?;
    constant(cx, node, v)
}

pub fn fill(cx: &mut Ctx<'_>, node: &Node, _: usize, _: &[ExprId]) -> R {
    let v = fill_value(cx, node, "value")?;
    constant(cx, node, v)
}

/// `fill.Tensor(self, value)`: every element the 0-dim `value`, in `self`'s dtype.
pub fn fill_tensor(cx: &mut Ctx<'_>, node: &Node, _: usize, _: &[ExprId]) -> R {
    let v = cx.tensor(node, "value")?;
    if !cx.sizes(v)?.is_empty() {
        return Err(cx.err(node, "fill takes a 0-dim value tensor"));
    }
    let x = cx.read(v, &[])?;
    let ty = out_ty(cx, node)?;
    Ok(cx.kb.cast(x, ty))
}

pub fn scalar_tensor(cx: &mut Ctx<'_>, node: &Node, _: usize, _: &[ExprId]) -> R {
    let v = fill_value(cx, node, "s")?;
    constant(cx, node, v)
}

fn input(cx: &Ctx<'_>, node: &Node) -> Result<ValueId, LowerError> {
    cx.tensor(node, "self")
}

/// `tril`/`triu`: the element where `col − row` is on the kept side of `diagonal`, else 0.
fn triangle(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], upper: bool) -> R {
    let v = input(cx, node)?;
    let k = cx.int_or(node, "diagonal", 0)?;
    let n = idx.len();
    if n < 2 {
        return Err(cx.err(node, "needs at least 2 dims"));
    }
    let x = cx.read(v, idx)?;
    let kb = &mut cx.kb;
    let d = kb.binary(BinOp::Sub, idx[n - 1], idx[n - 2])?;
    let k = kb.i64(k);
    let keep = if upper { kb.cmp(CmpOp::Ge, d, k)? } else { kb.cmp(CmpOp::Le, d, k)? };
    let zero = num(kb, 0.0, x);
    Ok(kb.select(keep, x, zero)?)
}

pub fn tril(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    triangle(cx, node, idx, false)
}

pub fn triu(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    triangle(cx, node, idx, true)
}

/// `pad(self, pad, mode, value)` / `constant_pad_nd(self, pad, value)`: the output coordinate
/// minus the leading pad, mapped back into range by the mode (constant: out of range is `value`).
pub fn pad(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    // Core ATen spells two of the modes as ops of their own, with `padding` for `pad`.
    let (pads, mode) = if node.target.starts_with("aten.reflection_pad") {
        (cx.ints_or(node, "padding", &[])?, "reflect".to_string())
    } else if node.target.starts_with("aten.replication_pad") {
        (cx.ints_or(node, "padding", &[])?, "replicate".to_string())
    } else {
        (cx.ints_or(node, "pad", &[])?, cx.str_or(node, "mode", "constant")?.to_string())
    };
    let value = cx.float_or(node, "value", 0.0)? as f32;
    let sizes = cx.sizes(v)?;
    let nd = sizes.len();
    if pads.len() % 2 != 0 || pads.len() / 2 > nd {
        return Err(cx.err(node, format!("pad {pads:?} does not fit rank {nd}")));
    }
    let mut in_idx = idx.to_vec();
    let mut inside: Option<ExprId> = None;
    let (zero, one) = (cx.kb.i64(0), cx.kb.i64(1));
    for (k, pair) in pads.chunks(2).enumerate() {
        let d = nd - 1 - k;
        let n = cx.kb.size(&sizes[d]);
        let lo = cx.kb.i64(pair[0]);
        let i = cx.kb.binary(BinOp::Sub, idx[d], lo)?;
        let last = cx.kb.binary(BinOp::Sub, n, one)?;
        let kb = &mut cx.kb;
        in_idx[d] = match mode.as_str() {
            "constant" => {
                let ge = kb.cmp(CmpOp::Ge, i, zero)?;
                let lt = kb.cmp(CmpOp::Lt, i, n)?;
                let ok = kb.and(ge, lt)?;
                inside = Some(match inside {
                    None => ok,
                    Some(p) => kb.and(p, ok)?,
                });
                let c = kb.binary(BinOp::Max, i, zero)?;
                kb.binary(BinOp::Min, c, last)?
            }
            "reflect" => {
                // |i|, then mirror past the end: 2(n−1) − i.
                let neg = kb.cmp(CmpOp::Lt, i, zero)?;
                let ni = kb.binary(BinOp::Sub, zero, i)?;
                let a = kb.select(neg, ni, i)?;
                let two = kb.i64(2);
                let m = kb.binary(BinOp::Mul, two, last)?;
                let mirrored = kb.binary(BinOp::Sub, m, a)?;
                let past = kb.cmp(CmpOp::Gt, a, last)?;
                kb.select(past, mirrored, a)?
            }
            "replicate" => {
                let c = kb.binary(BinOp::Max, i, zero)?;
                kb.binary(BinOp::Min, c, last)?
            }
            "circular" => {
                // Wrapped around the part left after cropping: it starts at `-lo` (when cropped)
                // and is `n - crop` long; ((j mod m) + m) mod m, as s_rem keeps the dividend's sign.
                let start = (-pair[0]).max(0);
                let crop = kb.i64(start + (-pair[1]).max(0));
                let m = kb.binary(BinOp::Sub, n, crop)?;
                let at = kb.i64(pair[0].max(0));
                let j = kb.binary(BinOp::Sub, idx[d], at)?;
                let r = kb.binary(BinOp::Rem, j, m)?;
                let r = kb.binary(BinOp::Add, r, m)?;
                let r = kb.binary(BinOp::Rem, r, m)?;
                let start = kb.i64(start);
                kb.binary(BinOp::Add, r, start)?
            }
            m => return Err(cx.err(node, format!("padding mode `{m}` is not supported"))),
        };
    }
    let x = cx.read(v, &in_idx)?;
    match inside {
        None => Ok(x),
        Some(ok) => {
            let c = num(&mut cx.kb, value, x);
            Ok(cx.kb.select(ok, x, c)?)
        }
    }
}

/// `flip(dims)`: `n − 1 − i` along each flipped dim.
fn flip_dims(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], dims: &[usize]) -> R {
    let v = input(cx, node)?;
    let sizes = cx.sizes(v)?;
    let one = cx.kb.i64(1);
    let mut in_idx = idx.to_vec();
    // Rank 0 accepts dim 0 and flips nothing.
    for &d in dims.iter().filter(|&&d| d < sizes.len() && d < idx.len()) {
        let n = cx.kb.size(&sizes[d]);
        let last = cx.kb.binary(BinOp::Sub, n, one)?;
        in_idx[d] = cx.kb.binary(BinOp::Sub, last, idx[d])?;
    }
    cx.read(v, &in_idx)
}

pub fn flip(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let dims = cx.ints_or(node, "dims", &[])?;
    if dims.is_empty() {
        return cx.read(input(cx, node)?, idx);
    }
    let dims = wrap_dims(&dims, idx.len()).map_err(|m| cx.err(node, m))?;
    flip_dims(cx, node, idx, &dims)
}

pub fn fliplr(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    flip_dims(cx, node, idx, &[1])
}

pub fn flipud(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    flip_dims(cx, node, idx, &[0])
}

/// `roll(shifts, dims)` along given dims: `(i − shift) mod n`.
pub fn roll(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let shifts = cx.ints_or(node, "shifts", &[])?;
    let dims = cx.ints_or(node, "dims", &[])?;
    let sizes = cx.sizes(v)?;
    if dims.is_empty() {
        return roll_flat(cx, node, v, &sizes, &shifts, idx);
    }
    if dims.len() != shifts.len() {
        return Err(cx.err(node, format!("{} shifts for {} dims", shifts.len(), dims.len())));
    }
    let mut in_idx = idx.to_vec();
    for (&d, &s) in dims.iter().zip(&shifts) {
        let d = wrap_dims(&[d], idx.len()).map_err(|m| cx.err(node, m))?[0];
        if d >= sizes.len() {
            continue;
        }
        let n = cx.kb.size(&sizes[d]);
        let s = cx.kb.i64(s);
        let i = cx.kb.binary(BinOp::Sub, in_idx[d], s)?;
        let r = cx.kb.binary(BinOp::Rem, i, n)?;
        let r = cx.kb.binary(BinOp::Add, r, n)?;
        in_idx[d] = cx.kb.binary(BinOp::Rem, r, n)?;
    }
    cx.read(v, &in_idx)
}

/// `roll(shifts=[s])` without dims: the flattened tensor rolled by `s`, then viewed back, so
/// output position `p` (row-major) reads input position `(p - s) mod numel`.
fn roll_flat(cx: &mut Ctx<'_>, node: &Node, v: ValueId, sizes: &[crate::sym::Expr], shifts: &[i64], idx: &[ExprId]) -> R {
    let &[shift] = shifts else {
        return Err(cx.err(node, format!("roll without dims takes one shift, got {}", shifts.len())));
    };
    if idx.is_empty() {
        return cx.read(v, idx);
    }
    let ks: Vec<ExprId> = sizes.iter().map(|s| cx.kb.size(s)).collect();
    let mut p = cx.kb.i64(0);
    let mut n = cx.kb.i64(1);
    for (&i, &k) in idx.iter().zip(&ks) {
        p = cx.kb.binary(BinOp::Mul, p, k)?;
        p = cx.kb.binary(BinOp::Add, p, i)?;
        n = cx.kb.binary(BinOp::Mul, n, k)?;
    }
    let s = cx.kb.i64(shift);
    let q = cx.kb.binary(BinOp::Sub, p, s)?;
    let q = cx.kb.binary(BinOp::Rem, q, n)?;
    let q = cx.kb.binary(BinOp::Add, q, n)?;
    let mut rest = cx.kb.binary(BinOp::Rem, q, n)?;
    let mut at = vec![rest; ks.len()];
    for d in (1..ks.len()).rev() {
        at[d] = cx.kb.binary(BinOp::Rem, rest, ks[d])?;
        rest = cx.kb.binary(BinOp::Div, rest, ks[d])?;
    }
    at[0] = rest;
    cx.read(v, &at)
}

/// `repeat(repeats)` / `tile(dims)`: `i mod n` per input dim (leading new dims dropped).
pub fn repeat(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let sizes = cx.sizes(v)?;
    let lead = idx.len().checked_sub(sizes.len()).ok_or_else(|| cx.err(node, "repeat to fewer dims"))?;
    let mut in_idx = Vec::with_capacity(sizes.len());
    for (d, s) in sizes.iter().enumerate() {
        let n = cx.kb.size(s);
        in_idx.push(cx.kb.binary(BinOp::Rem, idx[lead + d], n)?);
    }
    cx.read(v, &in_idx)
}

/// `.mT` (and `.mH`, `adjoint` on real tensors): the last two dims swapped.
pub fn mt(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let n = idx.len();
    if n < 2 {
        return Err(cx.err(node, "needs at least 2 dims"));
    }
    let mut in_idx = idx.to_vec();
    in_idx.swap(n - 1, n - 2);
    cx.read(v, &in_idx)
}

/// `.T`: every dim reversed.
pub fn numpy_t(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let in_idx: Vec<ExprId> = idx.iter().rev().copied().collect();
    cx.read(v, &in_idx)
}

/// `broadcast_tensors(tensors)`: output `k` is input `k` read broadcast.
pub fn broadcast_tensors(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let inputs = match node.arg("tensors") {
        Some(Arg::Tensors(v)) => v.clone(),
        _ => return Err(cx.err(node, "expected a tensor list")),
    };
    let v = *inputs.get(out).ok_or_else(|| cx.err(node, "more outputs than inputs"))?;
    let sizes = cx.sizes(node.outputs[out])?;
    cx.read_broadcast(v, idx, &sizes)
}

/// `unbind(dim)`: output `k` is the slice at `k` along `dim`.
pub fn unbind(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let rank = cx.sizes(v)?.len();
    let d = wrap_dims(&[cx.int_or(node, "dim", 0)?], rank).map_err(|m| cx.err(node, m))?[0];
    let mut in_idx = idx.to_vec();
    let k = cx.kb.i64(out as i64);
    in_idx.insert(d, k);
    cx.read(v, &in_idx)
}

/// `meshgrid(tensors, indexing)`: output `k` reads 1-D input `k` at its own grid coordinate.
pub fn meshgrid(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let inputs = match node.arg("tensors") {
        Some(Arg::Tensors(v)) => v.clone(),
        _ => return Err(cx.err(node, "expected a tensor list")),
    };
    let xy = cx.str_or(node, "indexing", "ij")? == "xy";
    let v = *inputs.get(out).ok_or_else(|| cx.err(node, "more outputs than inputs"))?;
    let d = if xy && inputs.len() >= 2 && out < 2 { 1 - out } else { out };
    let i = *idx.get(d).ok_or_else(|| cx.err(node, "grid rank"))?;
    let rank = cx.sizes(v)?.len();
    let coords = if rank == 0 { vec![] } else { vec![i] };
    cx.read(v, &coords)
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

/// An index read from tensor `ix` at `at`, wrapped if negative and clamped into `0..n` (the
/// interpreter rejects out-of-range indices; a kernel must not read out of bounds).
fn index_at(cx: &mut Ctx<'_>, ix: ValueId, at: &[ExprId], n: &crate::sym::Expr) -> R {
    let i = cx.read(ix, at)?;
    let i = cx.kb.cast(i, Ty::I64);
    let kb = &mut cx.kb;
    let n = kb.size(n);
    let zero = kb.i64(0);
    let one = kb.i64(1);
    let neg = kb.cmp(CmpOp::Lt, i, zero)?;
    let wrapped = kb.binary(BinOp::Add, i, n)?;
    let i = kb.select(neg, wrapped, i)?;
    let last = kb.binary(BinOp::Sub, n, one)?;
    let i = kb.binary(BinOp::Min, i, last)?;
    Ok(kb.binary(BinOp::Max, i, zero)?)
}

fn dim_arg(cx: &Ctx<'_>, node: &Node, rank: usize) -> Result<usize, LowerError> {
    wrap_dims(&[cx.int_or(node, "dim", 0)?], rank).map(|d| d[0]).map_err(|m| cx.err(node, m))
}

pub fn index_select(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let ix = cx.tensor(node, "index")?;
    let sizes = cx.sizes(v)?;
    if sizes.is_empty() {
        return cx.read(v, idx);
    }
    let d = dim_arg(cx, node, sizes.len())?;
    let at = if cx.sizes(ix)?.is_empty() { vec![] } else { vec![idx[d]] };
    let mut in_idx = idx.to_vec();
    in_idx[d] = index_at(cx, ix, &at, &sizes[d])?;
    cx.read(v, &in_idx)
}

pub fn gather(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let ix = cx.tensor(node, "index")?;
    let sizes = cx.sizes(v)?;
    if sizes.is_empty() {
        // A 0-dim input gathers its one element (every index must be 0).
        return cx.read(v, &[]);
    }
    if idx.len() != sizes.len() {
        // PyTorch accepts an index of another rank only when it is empty: no element is read.
        if !out_sizes(cx, node)?.iter().any(|s| s.as_int() == Some(0)) {
            return Err(cx.err(node, format!("index of rank {} for a rank-{} input", idx.len(), sizes.len())));
        }
        let zero = cx.kb.i64(0);
        return cx.read(v, &vec![zero; sizes.len()]);
    }
    let d = dim_arg(cx, node, sizes.len())?;
    let mut in_idx = idx.to_vec();
    in_idx[d] = index_at(cx, ix, idx, &sizes[d])?;
    cx.read(v, &in_idx)
}

/// `embedding(weight, indices)`: row `indices[..]` of `weight`.
pub fn embedding(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let w = cx.tensor(node, "weight")?;
    let ix = cx.tensor(node, "indices")?;
    let rows = cx.sizes(w)?.first().cloned().ok_or_else(|| cx.err(node, "weight must be 2-D"))?;
    let n = idx.len();
    let row = index_at(cx, ix, &idx[..n - 1], &rows)?;
    cx.read(w, &[row, idx[n - 1]])
}

/// `stack(tensors, dim)`: the input chosen by the coordinate along `dim`.
pub fn stack(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let inputs = match node.arg("tensors") {
        Some(Arg::Tensors(v)) if !v.is_empty() => v.clone(),
        _ => return Err(cx.err(node, "stack needs a non-empty tensor list")),
    };
    let d = dim_arg(cx, node, idx.len())?;
    let ty = out_ty(cx, node)?;
    let mut at = idx.to_vec();
    let k = at.remove(d);
    let mut picked: Option<ExprId> = None;
    for (i, v) in inputs.iter().enumerate().rev() {
        let x = cx.read(*v, &at)?;
        let x = cx.kb.cast(x, ty);
        picked = Some(match picked {
            None => x,
            Some(rest) => {
                let here = cx.kb.i64(i as i64);
                let is = cx.kb.cmp(CmpOp::Eq, k, here)?;
                cx.kb.select(is, x, rest)?
            }
        });
    }
    picked.ok_or_else(|| cx.err(node, "stack of nothing"))
}

/// `diagonal(offset, dim1, dim2)` (and `linalg_diagonal`): the diagonal becomes the last dim.
pub fn diagonal(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self").or_else(|_| cx.tensor(node, "A"))?;
    let rank = cx.sizes(v)?.len();
    let linalg = node.target.starts_with("aten.linalg_diagonal");
    let (d1, d2) = (cx.int_or(node, "dim1", if linalg { -2 } else { 0 })?, cx.int_or(node, "dim2", if linalg { -1 } else { 1 })?);
    let dims = [wrap_dims(&[d1], rank).map_err(|m| cx.err(node, m))?[0], wrap_dims(&[d2], rank).map_err(|m| cx.err(node, m))?[0]];
    let off = cx.int_or(node, "offset", 0)?;
    let i = *idx.last().ok_or_else(|| cx.err(node, "diagonal of nothing"))?;
    let kb = &mut cx.kb;
    let o = kb.i64(off.abs());
    let shifted = kb.binary(BinOp::Add, i, o)?;
    let (r, c) = if off >= 0 { (i, shifted) } else { (shifted, i) };
    let zero = kb.i64(0);
    let mut in_idx = vec![zero; rank];
    let mut rest = idx[..idx.len() - 1].iter();
    for (d, slot) in in_idx.iter_mut().enumerate() {
        *slot = if d == dims[0] {
            r
        } else if d == dims[1] {
            c
        } else {
            *rest.next().ok_or_else(|| LowerError::Internal("diagonal rank".into()))?
        };
    }
    cx.read(v, &in_idx)
}

/// `copy(self, src)`: `src` broadcast to `self` (the store converts to `self`'s dtype).
pub fn copy(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    arg(cx, node, "src", idx)
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

/// `fft_fftshift`/`fft_ifftshift(self, dim)`: a roll by half of each dim (up or down).
fn shift(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], inverse: bool) -> R {
    let v = input(cx, node)?;
    let sizes = cx.sizes(v)?;
    let dims = match node.arg("dim") {
        None | Some(Arg::None) => (0..sizes.len()).collect(),
        _ => wrap_dims(&cx.ints_or(node, "dim", &[])?, sizes.len()).map_err(|m| cx.err(node, m))?,
    };
    let mut in_idx = idx.to_vec();
    for d in dims.into_iter().filter(|&d| d < sizes.len()) {
        let n = cx.kb.size(&sizes[d]);
        let two = cx.kb.i64(2);
        let half = cx.kb.binary(BinOp::Div, n, two)?;
        // fftshift reads (i - n/2) mod n; ifftshift reads (i + n/2) mod n.
        let s = if inverse { cx.kb.binary(BinOp::Add, idx[d], half)? } else {
            let t = cx.kb.binary(BinOp::Add, idx[d], n)?;
            cx.kb.binary(BinOp::Sub, t, half)?
        };
        in_idx[d] = cx.kb.binary(BinOp::Rem, s, n)?;
    }
    cx.read(v, &in_idx)
}

pub fn fftshift(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    shift(cx, node, idx, false)
}

pub fn ifftshift(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    shift(cx, node, idx, true)
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
