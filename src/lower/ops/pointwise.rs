//! Elementwise ops: each output element is a function of the broadcast input elements at the
//! same coordinates.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId, KernelBuilder, KernelError, Ty, UnOp};
use super::super::LowerError;
use crate::ir::Node;
use crate::sym;

pub(super) fn out_sizes(cx: &Ctx<'_>, node: &Node) -> Result<Vec<sym::Expr>, LowerError> {
    let v = *node.outputs.first().ok_or_else(|| cx.err(node, "has no outputs"))?;
    cx.sizes(v)
}

/// The type an elementwise op computes in: its output's compute type, with bool arithmetic
/// done on integers (the store turns nonzero into true).
pub(super) fn out_ty(cx: &Ctx<'_>, node: &Node) -> Result<Ty, LowerError> {
    let v = *node.outputs.first().ok_or_else(|| cx.err(node, "has no outputs"))?;
    Ok(match Elem::from_dtype(cx.meta(v)?.dtype).map(Elem::ty) {
        Some(Ty::Bool) => Ty::I64,
        Some(t) => t,
        None => Ty::F32,
    })
}

/// Operand `name` broadcast to the output and converted to the op's compute type (PyTorch's
/// type promotion already decided the output dtype).
pub(super) fn arg(cx: &mut Ctx<'_>, node: &Node, name: &str, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let ty = out_ty(cx, node)?;
    // A Python number in a float64 op keeps its double value.
    if ty == Ty::F64 {
        if let Some(crate::ir::Arg::Float(f)) = node.arg(name) {
            return Ok(cx.kb.f64(*f));
        }
    }
    let sizes = out_sizes(cx, node)?;
    let e = cx.operand(node, name, idx, &sizes)?;
    Ok(cx.kb.cast(e, ty))
}

/// The constant `v` in the type of `like`.
pub(super) fn num(kb: &mut KernelBuilder, v: f32, like: ExprId) -> ExprId {
    let c = kb.float_like(v as f64, like);
    let t = kb.ty(like);
    kb.cast(c, t)
}

fn map1(
    cx: &mut Ctx<'_>,
    node: &Node,
    idx: &[ExprId],
    f: impl FnOnce(&mut KernelBuilder, ExprId) -> Result<ExprId, KernelError>,
) -> Result<ExprId, LowerError> {
    let x = arg(cx, node, "self", idx)?;
    Ok(f(&mut cx.kb, x)?)
}

fn scaled(cx: &mut Ctx<'_>, node: &Node, name: &str, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let y = arg(cx, node, name, idx)?;
    match cx.opt_number(node, "alpha")? {
        Some(a) => {
            let t = cx.kb.ty(y);
            let a = cx.kb.cast(a, t);
            Ok(cx.kb.binary(BinOp::Mul, a, y)?)
        }
        None => Ok(y),
    }
}

pub fn add(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = arg(cx, node, "self", idx)?;
    let y = scaled(cx, node, "other", idx)?;
    Ok(cx.kb.binary(BinOp::Add, x, y)?)
}

pub fn sub(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = arg(cx, node, "self", idx)?;
    let y = scaled(cx, node, "other", idx)?;
    Ok(cx.kb.binary(BinOp::Sub, x, y)?)
}

pub fn rsub(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = scaled(cx, node, "self", idx)?;
    let y = arg(cx, node, "other", idx)?;
    Ok(cx.kb.binary(BinOp::Sub, y, x)?)
}

pub fn mul(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = arg(cx, node, "self", idx)?;
    let y = arg(cx, node, "other", idx)?;
    Ok(cx.kb.binary(BinOp::Mul, x, y)?)
}

pub fn div(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let mode = cx.str_or(node, "rounding_mode", "none")?.to_string();
    div_mode(cx, node, idx, &mode)
}

/// `floor_divide(self, other)`: division rounded down, integers kept.
pub fn floor_divide(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    div_mode(cx, node, idx, "floor")
}

fn div_mode(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], mode: &str) -> Result<ExprId, LowerError> {
    let x = arg(cx, node, "self", idx)?;
    let y = arg(cx, node, "other", idx)?;
    let q = cx.kb.binary(BinOp::Div, x, y)?;
    let int = cx.kb.ty(q) == Ty::I64;
    match mode {
        "none" => Ok(q),
        // Integer division truncates; floor steps down when the signs differ and it was inexact.
        "floor" if int => {
            let r = cx.kb.binary(BinOp::Rem, x, y)?;
            let zero = cx.kb.i64(0);
            let inexact = cx.kb.cmp(CmpOp::Ne, r, zero)?;
            let (xn, yn) = (cx.kb.cmp(CmpOp::Lt, x, zero)?, cx.kb.cmp(CmpOp::Lt, y, zero)?);
            let (xi, yi) = (cx.kb.cast(xn, Ty::I64), cx.kb.cast(yn, Ty::I64));
            let differ = cx.kb.cmp(CmpOp::Ne, xi, yi)?;
            let step = cx.kb.and(inexact, differ)?;
            let one = cx.kb.i64(1);
            let q1 = cx.kb.binary(BinOp::Sub, q, one)?;
            Ok(cx.kb.select(step, q1, q)?)
        }
        "trunc" if int => Ok(q),
        "floor" => Ok(cx.kb.unary(UnOp::Floor, q)),
        "trunc" => {
            let zero = cx.kb.float_like(0.0, q);
            let neg = cx.kb.cmp(CmpOp::Lt, q, zero)?;
            let (c, f) = (cx.kb.unary(UnOp::Ceil, q), cx.kb.unary(UnOp::Floor, q));
            Ok(cx.kb.select(neg, c, f)?)
        }
        other => Err(cx.err(node, format!("rounding_mode `{other}` is not supported"))),
    }
}

pub fn pow(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = arg(cx, node, "self", idx)?;
    if let Some(crate::ir::Arg::Int(2)) | Some(crate::ir::Arg::Float(2.0)) = node.arg("exponent") {
        return Ok(cx.kb.binary(BinOp::Mul, x, x)?);
    }
    let y = arg(cx, node, "exponent", idx)?;
    if cx.kb.ty(x) == Ty::I64 {
        return Ok(super::special::int_pow(&mut cx.kb, x, y)?);
    }
    Ok(cx.kb.binary(BinOp::Pow, x, y)?)
}

pub fn maximum(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = arg(cx, node, "self", idx)?;
    let y = arg(cx, node, "other", idx)?;
    Ok(cx.kb.binary(BinOp::Max, x, y)?)
}

pub fn minimum(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = arg(cx, node, "self", idx)?;
    let y = arg(cx, node, "other", idx)?;
    Ok(cx.kb.binary(BinOp::Min, x, y)?)
}

macro_rules! unary {
    ($name:ident, $op:ident) => {
        pub fn $name(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
            map1(cx, node, idx, |kb, x| Ok(kb.unary(UnOp::$op, x)))
        }
    };
}
unary!(neg, Neg);
unary!(abs, Abs);
unary!(exp, Exp);
unary!(log, Log);
unary!(sqrt, Sqrt);
unary!(rsqrt, Rsqrt);
unary!(erf, Erf);
unary!(tanh, Tanh);

pub fn reciprocal(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    map1(cx, node, idx, |kb, x| {
        let one = kb.f32(1.0);
        kb.binary(BinOp::Div, one, x)
    })
}

pub(super) fn sigmoid_of(kb: &mut KernelBuilder, x: ExprId) -> Result<ExprId, KernelError> {
    let one = kb.f32(1.0);
    let nx = kb.unary(UnOp::Neg, x);
    let e = kb.unary(UnOp::Exp, nx);
    let d = kb.binary(BinOp::Add, one, e)?;
    kb.binary(BinOp::Div, one, d)
}

pub fn sigmoid(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    map1(cx, node, idx, sigmoid_of)
}

pub fn silu(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    map1(cx, node, idx, |kb, x| {
        let s = sigmoid_of(kb, x)?;
        kb.binary(BinOp::Mul, x, s)
    })
}

/// `max(x, 0)` that keeps NaN, as `torch.relu` does.
fn relu_of(kb: &mut KernelBuilder, x: ExprId) -> Result<ExprId, KernelError> {
    let zero = num(kb, 0.0, x);
    let neg = kb.cmp(CmpOp::Lt, x, zero)?;
    kb.select(neg, zero, x)
}

pub fn relu(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    map1(cx, node, idx, relu_of)
}

fn clamp_of(kb: &mut KernelBuilder, x: ExprId, lo: Option<ExprId>, hi: Option<ExprId>) -> Result<ExprId, KernelError> {
    let mut y = x;
    let t = kb.ty(x);
    let (lo, hi) = (lo.map(|l| kb.cast(l, t)), hi.map(|h| kb.cast(h, t)));
    if let Some(lo) = lo {
        let c = kb.cmp(CmpOp::Lt, y, lo)?;
        y = kb.select(c, lo, y)?;
    }
    if let Some(hi) = hi {
        let c = kb.cmp(CmpOp::Gt, y, hi)?;
        y = kb.select(c, hi, y)?;
    }
    Ok(y)
}

pub fn relu6(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    map1(cx, node, idx, |kb, x| {
        let (lo, hi) = (num(kb, 0.0, x), num(kb, 6.0, x));
        clamp_of(kb, x, Some(lo), Some(hi))
    })
}

pub fn hardtanh(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let lo = cx.number_or(node, "min_val", -1.0)?;
    let hi = cx.number_or(node, "max_val", 1.0)?;
    map1(cx, node, idx, |kb, x| clamp_of(kb, x, Some(lo), Some(hi)))
}

fn hardsigmoid_of(kb: &mut KernelBuilder, x: ExprId) -> Result<ExprId, KernelError> {
    let (three, zero, six) = (kb.f32(3.0), kb.f32(0.0), kb.f32(6.0));
    let y = kb.binary(BinOp::Add, x, three)?;
    let y = clamp_of(kb, y, Some(zero), Some(six))?;
    kb.binary(BinOp::Div, y, six)
}

pub fn hardsigmoid(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    map1(cx, node, idx, hardsigmoid_of)
}

pub fn hardswish(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    map1(cx, node, idx, |kb, x| {
        let (three, zero, six) = (kb.f32(3.0), kb.f32(0.0), kb.f32(6.0));
        let y = kb.binary(BinOp::Add, x, three)?;
        let y = clamp_of(kb, y, Some(zero), Some(six))?;
        let y = kb.binary(BinOp::Mul, x, y)?;
        kb.binary(BinOp::Div, y, six)
    })
}

pub fn clamp(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let lo = cx.opt_number(node, "min")?;
    let hi = cx.opt_number(node, "max")?;
    map1(cx, node, idx, |kb, x| clamp_of(kb, x, lo, hi))
}

pub fn clamp_min(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let lo = cx.opt_number(node, "min")?;
    map1(cx, node, idx, |kb, x| clamp_of(kb, x, lo, None))
}

pub fn clamp_max(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let hi = cx.opt_number(node, "max")?;
    map1(cx, node, idx, |kb, x| clamp_of(kb, x, None, hi))
}

/// The `value` multiplier of `addcmul`/`addcdiv` in compute type `ty`.
fn value_of(cx: &mut Ctx<'_>, node: &Node, ty: Ty) -> Result<ExprId, LowerError> {
    if ty == Ty::F64 {
        if let Some(crate::ir::Arg::Float(f)) = node.arg("value") {
            return Ok(cx.kb.f64(*f));
        }
    }
    let v = cx.number_or(node, "value", 1.0)?;
    Ok(cx.kb.cast(v, ty))
}

/// `self + value · t1 · t2` (`addcmul`) or `self + value · t1 / t2` (`addcdiv`).
fn addc(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], op: BinOp) -> Result<ExprId, LowerError> {
    let x = arg(cx, node, "self", idx)?;
    let a = arg(cx, node, "tensor1", idx)?;
    let b = arg(cx, node, "tensor2", idx)?;
    let v = value_of(cx, node, cx.kb.ty(x))?;
    let p = cx.kb.binary(op, a, b)?;
    let p = cx.kb.binary(BinOp::Mul, v, p)?;
    Ok(cx.kb.binary(BinOp::Add, x, p)?)
}

pub fn addcmul(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    addc(cx, node, idx, BinOp::Mul)
}

pub fn addcdiv(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    addc(cx, node, idx, BinOp::Div)
}

/// `lerp(self, end, weight)` as PyTorch evaluates it: from `self` for |weight| < 0.5, from
/// `end` otherwise (exact at both ends).
pub fn lerp(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = arg(cx, node, "self", idx)?;
    let e = arg(cx, node, "end", idx)?;
    let w = arg(cx, node, "weight", idx)?;
    let kb = &mut cx.kb;
    let d = kb.binary(BinOp::Sub, e, x)?;
    let lo = kb.binary(BinOp::Mul, w, d)?;
    let lo = kb.binary(BinOp::Add, x, lo)?;
    let one = num(kb, 1.0, w);
    let rest = kb.binary(BinOp::Sub, one, w)?;
    let hi = kb.binary(BinOp::Mul, d, rest)?;
    let hi = kb.binary(BinOp::Sub, e, hi)?;
    let aw = kb.unary(UnOp::Abs, w);
    let half = num(kb, 0.5, w);
    let near = kb.cmp(CmpOp::Lt, aw, half)?;
    Ok(kb.select(near, lo, hi)?)
}

/// `nan_to_num(self, nan, posinf, neginf)`: NaN and infinities replaced, by default with 0 and
/// the output dtype's largest finite values (integers and bool pass through).
pub fn nan_to_num(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = arg(cx, node, "self", idx)?;
    if !cx.kb.ty(x).is_float() {
        return Ok(x);
    }
    let dtype = cx.meta(node.outputs[0])?.dtype;
    let big = match dtype {
        crate::ir::DType::F16 => 65504.0,
        crate::ir::DType::BF16 => 3.389_531_389_251_535_5e38,
        crate::ir::DType::F64 => f64::MAX,
        _ => f32::MAX as f64,
    };
    let nan = cx.float_or(node, "nan", 0.0)?;
    let pos = cx.float_or(node, "posinf", big)?;
    let neg = cx.float_or(node, "neginf", -big)?;
    let kb = &mut cx.kb;
    let (nan, pos, neg) = (kb.float_like(nan, x), kb.float_like(pos, x), kb.float_like(neg, x));
    let inf = kb.float_like(f64::INFINITY, x);
    let ninf = kb.float_like(f64::NEG_INFINITY, x);
    let is_pos = kb.cmp(CmpOp::Eq, x, inf)?;
    let is_neg = kb.cmp(CmpOp::Eq, x, ninf)?;
    let is_nan = kb.cmp(CmpOp::Ne, x, x)?;
    let y = kb.select(is_pos, pos, x)?;
    let y = kb.select(is_neg, neg, y)?;
    Ok(kb.select(is_nan, nan, y)?)
}

pub fn gelu(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let approximate = cx.str_or(node, "approximate", "none")?.to_string();
    map1(cx, node, idx, |kb, x| {
        let (half, one) = (kb.f32(0.5), kb.f32(1.0));
        let inner = if approximate == "tanh" {
            let (k0, k1) = (kb.f32(0.797_884_6), kb.f32(0.044_715));
            let x3 = kb.binary(BinOp::Mul, x, x)?;
            let x3 = kb.binary(BinOp::Mul, x3, x)?;
            let t = kb.binary(BinOp::Mul, k1, x3)?;
            let t = kb.binary(BinOp::Add, x, t)?;
            let t = kb.binary(BinOp::Mul, k0, t)?;
            kb.unary(UnOp::Tanh, t)
        } else {
            let k = kb.f32(std::f32::consts::FRAC_1_SQRT_2);
            let t = kb.binary(BinOp::Mul, x, k)?;
            kb.unary(UnOp::Erf, t)
        };
        let t = kb.binary(BinOp::Add, one, inner)?;
        let hx = kb.binary(BinOp::Mul, half, x)?;
        kb.binary(BinOp::Mul, hx, t)
    })
}
