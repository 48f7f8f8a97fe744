//! The rest of the elementwise ops: OpenCL's float built-ins, rounding, activations and
//! factories (`full`, `ones_like`, `new_zeros`, …). Predicates, comparisons and selects live in
//! `math_logic`, the binary float functions in `math_binary`, and the index-remapping ops in
//! `math_remap`; they are re-exported here so the op registry names every one as `math::…`.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, Ty, UnOp};
use super::super::LowerError;
use super::pointwise::{arg, num, out_ty};
use crate::ir::{Arg, Node};

pub use super::math_logic::{
    bitwise_and, bitwise_not, bitwise_or, bitwise_xor, clamp_max_tensor, clamp_min_tensor, clamp_tensor, eq, ge, gt,
    isclose, isfinite, isinf, isnan, isneginf, isposinf, le, logical_and, logical_not, logical_or, logical_xor, lt,
    masked_fill, ne, one_hot, where_,
};
pub use super::math_binary::{
    atan2, copysign, float_power, fmax, fmin, fmod, heaviside, hypot, ldexp, logaddexp, remainder, xlog1py, xlogy,
};
pub use super::math_remap::{
    broadcast_tensors, copy, diagonal, embedding, fftshift, flip, fliplr, flipud, gather, ifftshift, index_select,
    meshgrid, mt, numpy_t, pad, repeat, roll, stack, tril, triu, unbind,
};

pub(super) type R = Result<ExprId, LowerError>;

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
