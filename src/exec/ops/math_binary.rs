//! The interpreter's binary elementwise math: the float functions of two operands (`atan2`,
//! `hypot`, `xlogy`, `fmod`, `remainder`, `fmin`/`fmax`, `heaviside`, …), bitwise and logical
//! ops, `isclose`, the tensor-bound clamps, `addcdiv`, `lerp` and `not_equal`. Apart from `math`
//! because each reads two operands and broadcasts them; re-exported from `math`.

use super::math_special::{gamma_p, hurwitz_zeta};
use super::pointwise::{arith, compare, result_type, zip2, Arith, Operand, Scalar};
use super::{dtype_ok, one, OpCx, OpError, OpResult};
use crate::exec::value::RtValue;
use crate::ir::DType;

/// A binary function computed in float: integer operands promote to float32, as `atan2` does.
fn float_binary(cx: &OpCx, b_name: &str, f: fn(f64, f64) -> f64) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.operand("self")?, cx.operand(b_name)?);
    let promoted = result_type(&[a, b])?;
    let out = if promoted.is_floating() { promoted } else { DType::F32 };
    one(arith(a, b, out, &Arith { float: f, int: |_, _| None })?)
}

/// A binary function that keeps integer dtypes.
fn keep_binary(cx: &OpCx, b_name: &str, op: &Arith) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.operand("self")?, cx.operand(b_name)?);
    let out = result_type(&[a, b])?;
    one(arith(a, b, out, op)?)
}

macro_rules! float_binary {
    ($($name:ident($b:literal) => $f:expr;)*) => {
        $(pub fn $name(cx: &OpCx) -> OpResult<Vec<RtValue>> {
            float_binary(cx, $b, $f)
        })*
    };
}

float_binary! {
    atan2("other") => f64::atan2;
    hypot("other") => f64::hypot;
    copysign("other") => f64::copysign;
    logaddexp("other") => |a, b| { let m = a.max(b); if m.is_infinite() { m } else { m + ((a - m).exp() + (b - m).exp()).ln() } };
    logaddexp2("other") => |a, b| { let m = a.max(b); if m.is_infinite() { m } else { m + ((a - m).exp2() + (b - m).exp2()).log2() } };
    xlogy("other") => |x, y| if y.is_nan() { f64::NAN } else if x == 0.0 { 0.0 } else { x * y.ln() };
    xlog1py("other") => |x, y| if y.is_nan() { f64::NAN } else if x == 0.0 { 0.0 } else { x * y.ln_1p() };
    nextafter("other") => libm::nextafter;
    special_zeta("other") => hurwitz_zeta;
    igamma("other") => gamma_p;
    igammac("other") => |a, x| 1.0 - gamma_p(a, x);
}

pub fn ldexp(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    float_binary(cx, "other", |a, b| a * 2f64.powf(b))
}

pub fn float_power(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.operand("self")?, cx.operand("exponent")?);
    one(arith(a, b, DType::F64, &Arith { float: f64::powf, int: |_, _| None })?)
}

pub fn fmod(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    keep_binary(cx, "other", &Arith { float: |a, b| a % b, int: |a, b| a.checked_rem(b) })
}

pub fn remainder(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    keep_binary(
        cx,
        "other",
        &Arith {
            float: |a, b| {
                let r = a % b;
                if r != 0.0 && (r < 0.0) != (b < 0.0) {
                    r + b
                } else {
                    r
                }
            },
            int: super::scalar::py_mod,
        },
    )
}

pub fn floor_divide(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    keep_binary(cx, "other", &Arith { float: |a, b| (a / b).floor(), int: super::scalar::floor_div })
}

pub fn fmax(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    keep_binary(cx, "other", &Arith { float: f64::max, int: |a, b| Some(a.max(b)) })
}

pub fn fmin(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    keep_binary(cx, "other", &Arith { float: f64::min, int: |a, b| Some(a.min(b)) })
}

pub fn heaviside(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    keep_binary(
        cx,
        "values",
        &Arith {
            float: |x, v| if x.is_nan() { x } else if x == 0.0 { v } else if x > 0.0 { 1.0 } else { 0.0 },
            int: |x, v| Some(if x == 0 { v } else { i64::from(x > 0) }),
        },
    )
}

fn bitwise(cx: &OpCx, f: fn(i64, i64) -> i64) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.operand("self")?, cx.operand("other")?);
    let out = result_type(&[a, b])?;
    if out.is_floating() {
        return Err(OpError::Unsupported("bitwise ops of float tensors".into()));
    }
    let (x, y) = (dtype_ok(a.cast(out)?.cast(DType::I64))?, dtype_ok(b.cast(out)?.cast(DType::I64))?);
    one(dtype_ok(zip2::<i64, i64>(&x, &y, f)?.cast(out))?)
}

pub fn bitwise_and(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    bitwise(cx, |a, b| a & b)
}

pub fn bitwise_or(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    bitwise(cx, |a, b| a | b)
}

pub fn bitwise_xor(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    bitwise(cx, |a, b| a ^ b)
}

pub fn bitwise_left_shift(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    bitwise(cx, |a, b| if (0..64).contains(&b) { a.wrapping_shl(b as u32) } else { 0 })
}

pub fn bitwise_right_shift(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    bitwise(cx, |a, b| if (0..64).contains(&b) { a >> b } else if a < 0 { -1 } else { 0 })
}

fn logical(cx: &OpCx, f: fn(bool, bool) -> bool) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("other")?);
    let (x, y) = (dtype_ok(a.cast(DType::Bool))?, dtype_ok(b.cast(DType::Bool))?);
    one(zip2::<bool, bool>(&x, &y, f)?)
}

pub fn logical_and(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    logical(cx, |a, b| a && b)
}

pub fn logical_or(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    logical(cx, |a, b| a || b)
}

pub fn logical_xor(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    logical(cx, |a, b| a != b)
}

/// `|a - b| <= atol + rtol·|b|`, NaN equal only with `equal_nan`.
pub fn isclose(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("other")?);
    let (rtol, atol, nan_eq) = (cx.float_or("rtol", 1e-5)?, cx.float_or("atol", 1e-8)?, cx.bool_or("equal_nan", false)?);
    let (x, y) = (dtype_ok(a.cast(DType::F64))?, dtype_ok(b.cast(DType::F64))?);
    one(zip2::<f64, bool>(&x, &y, move |p, q| {
        if p.is_nan() || q.is_nan() {
            nan_eq && p.is_nan() && q.is_nan()
        } else if p == q {
            true
        } else {
            p.is_finite() && q.is_finite() && (p - q).abs() <= atol + rtol * q.abs()
        }
    })?)
}

/// `torch.clamp` with tensor bounds.
pub fn clamp_tensor(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let (lo, hi) = (cx.opt_tensor("min")?, cx.opt_tensor("max")?);
    let mut ops = vec![Operand::Tensor(t)];
    ops.extend(lo.map(Operand::Tensor));
    ops.extend(hi.map(Operand::Tensor));
    let out = result_type(&ops)?;
    let mut r = dtype_ok(t.cast(out))?;
    let f_lo = Arith { float: |x, l| if x.is_nan() || l.is_nan() { f64::NAN } else { x.max(l) }, int: |x, l| Some(x.max(l)) };
    let f_hi = Arith { float: |x, h| if x.is_nan() || h.is_nan() { f64::NAN } else { x.min(h) }, int: |x, h| Some(x.min(h)) };
    if let Some(lo) = lo {
        r = arith(Operand::Tensor(&r), Operand::Tensor(lo), out, &f_lo)?;
    }
    if let Some(hi) = hi {
        r = arith(Operand::Tensor(&r), Operand::Tensor(hi), out, &f_hi)?;
    }
    one(r)
}

pub fn clamp_min_tensor(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.operand("self")?, cx.operand("min")?);
    one(arith(a, b, result_type(&[a, b])?, &Arith { float: |x, l| if x.is_nan() || l.is_nan() { f64::NAN } else { x.max(l) }, int: |x, l| Some(x.max(l)) })?)
}

pub fn clamp_max_tensor(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.operand("self")?, cx.operand("max")?);
    one(arith(a, b, result_type(&[a, b])?, &Arith { float: |x, h| if x.is_nan() || h.is_nan() { f64::NAN } else { x.min(h) }, int: |x, h| Some(x.min(h)) })?)
}

/// `self + value * tensor1 / tensor2`.
pub fn addcdiv(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (s, t1, t2) = (cx.tensor("self")?, cx.tensor("tensor1")?, cx.tensor("tensor2")?);
    let value = cx.scalar_or("value", Scalar::Int(1))?.to_f64();
    let out = result_type(&[Operand::Tensor(s), Operand::Tensor(t1), Operand::Tensor(t2)])?;
    let q = arith(Operand::Tensor(t1), Operand::Tensor(t2), DType::F64, &Arith { float: |a, b| a / b, int: |_, _| None })?;
    let sq = super::pointwise::map_float(&q, move |x| x * value)?;
    one(arith(Operand::Tensor(s), Operand::Tensor(&sq), DType::F64, &super::pointwise::ADD)?.cast(out).map_err(OpError::DType)?)
}

/// `self + weight * (end - self)`.
pub fn lerp(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (s, e) = (cx.tensor("self")?, cx.tensor("end")?);
    let w = cx.operand("weight")?;
    let out = result_type(&[Operand::Tensor(s), Operand::Tensor(e)])?;
    let wt = w.cast(DType::F64)?;
    let (s64, e64) = (dtype_ok(s.cast(DType::F64))?, dtype_ok(e.cast(DType::F64))?);
    let d = arith(Operand::Tensor(&e64), Operand::Tensor(&s64), DType::F64, &super::pointwise::SUB)?;
    let wd = arith(Operand::Tensor(&wt), Operand::Tensor(&d), DType::F64, &super::pointwise::MUL)?;
    one(dtype_ok(arith(Operand::Tensor(&s64), Operand::Tensor(&wd), DType::F64, &super::pointwise::ADD)?.cast(out))?)
}

/// `eq` etc. under other names.
pub fn not_equal(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    compare(cx, |a, b| a != b, |a, b| a != b)
}
