//! The rest of the elementwise math: trigonometric, hyperbolic, exponential and special
//! functions, rounding, predicates, bitwise and logical ops, and the binary float functions.
//! Float results are computed in `f64` and rounded once to the result dtype, as in
//! [`pointwise`](super::pointwise); integer inputs of float-only functions become float32.

use super::fvec::round_to;
use super::pointwise::{arith, compare, map_float, map_keep, result_type, zip2, Arith, Operand, Scalar};
use super::{dtype_ok, one, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;
use crate::ops::cephes;
use std::f64::consts::PI;

macro_rules! float_unary {
    ($($name:ident => $f:expr;)*) => {
        $(pub fn $name(cx: &OpCx) -> OpResult<Vec<RtValue>> {
            one(map_float(cx.tensor("self")?, $f)?)
        })*
    };
}

float_unary! {
    sin => f64::sin;
    cos => f64::cos;
    tan => f64::tan;
    asin => f64::asin;
    acos => f64::acos;
    atan => f64::atan;
    sinh => f64::sinh;
    cosh => f64::cosh;
    asinh => f64::asinh;
    acosh => f64::acosh;
    atanh => f64::atanh;
    exp2 => f64::exp2;
    expm1 => f64::exp_m1;
    log2 => f64::log2;
    log10 => f64::log10;
    log1p => f64::ln_1p;
    erfc => libm::erfc;
    erfinv => erfinv_f;
    lgamma => libm::lgamma;
    digamma => digamma_f;
    i0 => i0_f;
    i0e => |x| i0_f(x) * (-x.abs()).exp();
    i1 => i1_f;
    i1e => |x| i1_f(x) * (-x.abs()).exp();
    log_ndtr => log_ndtr_f;
    ndtri => |p| std::f64::consts::SQRT_2 * erfinv_f(2.0 * p - 1.0);
    erfcx => erfcx_f;
    bessel_j0 => cephes::j0;
    bessel_j1 => cephes::j1;
    bessel_y0 => cephes::y0;
    bessel_y1 => cephes::y1;
    modified_bessel_k0 => |x| cephes::k0(x, i0_f(x), false);
    modified_bessel_k1 => |x| cephes::k1(x, i1_f(x), false);
    entr => |x| if x.is_nan() { x } else if x > 0.0 { -x * x.ln() } else if x == 0.0 { 0.0 } else { f64::NEG_INFINITY };
    sinc => |x| if x == 0.0 { 1.0 } else { (PI * x).sin() / (PI * x) };
    deg2rad => |x| x * (PI / 180.0);
    rad2deg => |x| x * (180.0 / PI);
    log_sigmoid => |x| -(if x > 0.0 { (-x).exp().ln_1p() } else { -x + x.exp().ln_1p() });
    frac => |x| x - x.trunc();
    mish => |x| x * softplus_f(x, 1.0, 20.0).tanh();
    selu => |x| 1.050_700_987_355_480_5 * if x > 0.0 { x } else { 1.673_263_242_354_377_3 * x.exp_m1() };
}

/// The special functions whose argument is named `x`.
macro_rules! float_unary_x {
    ($($name:ident => $f:expr;)*) => {
        $(pub fn $name(cx: &OpCx) -> OpResult<Vec<RtValue>> {
            one(map_float(cx.tensor("x")?, $f)?)
        })*
    };
}

float_unary_x! {
    spherical_bessel_j0 => |x| if x == 0.0 { 1.0 } else if x.is_infinite() { 0.0 } else { x.sin() / x };
    airy_ai => cephes::airy_ai;
    scaled_modified_bessel_k0 => |x| cephes::k0(x, i0_f(x), true);
    scaled_modified_bessel_k1 => |x| cephes::k1(x, i1_f(x), true);
}

/// Functions that keep integer dtypes (rounding is the identity on integers).
macro_rules! keep_unary {
    ($($name:ident => $f:expr, $i:expr;)*) => {
        $(pub fn $name(cx: &OpCx) -> OpResult<Vec<RtValue>> {
            let t = cx.tensor("self")?;
            if t.dtype() == DType::Bool {
                return one(t.clone());
            }
            one(map_keep(t, $f, $i)?)
        })*
    };
}

keep_unary! {
    floor => f64::floor, |x| x;
    ceil => f64::ceil, |x| x;
    trunc => f64::trunc, |x| x;
    positive => |x| x, |x| x;
    sign => |x: f64| if x.is_nan() { x } else if x > 0.0 { 1.0 } else if x < 0.0 { -1.0 } else { 0.0 }, i64::signum;
}

/// `square` is `pow(self, 2)`: a bool tensor with the integer exponent promotes to int64 (its
/// values are 0 and 1, their own squares); other dtypes keep theirs.
pub fn square(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.dtype() == DType::Bool {
        return one(dtype_ok(t.cast(DType::I64))?);
    }
    one(map_keep(t, |x| x * x, |x| x.wrapping_mul(x))?)
}

/// `round(x, decimals)`: half to even, as `torch.round`.
pub fn round(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let d = cx.int_or("decimals", 0)?;
    if !t.dtype().is_floating() {
        return one(t.clone());
    }
    let s = 10f64.powi(d as i32);
    one(map_float(t, move |x| if d == 0 { x.round_ties_even() } else { (x * s).round_ties_even() / s })?)
}

/// `logit(x, eps)`: PyTorch's CPU kernel evaluates `log(x / (1 - x))` in the tensor's dtype,
/// each step rounded to it (a float16 `1 - x` is a float16), after clamping `x` to
/// `[eps, 1 - eps]` (both in that dtype) when `eps` is given and not NaN.
pub fn logit(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let r = round_to(float_out(t));
    let bounds = cx.opt_float("eps")?.filter(|e| !e.is_nan()).map(|e| (r(e), r(1.0 - r(e))));
    one(map_float(t, move |x| {
        // Compared as PyTorch does (`x < lo ? lo : x > hi ? hi : x`): NaN stays NaN, and an
        // eps above 1/2 leaves `lo > hi` without failing.
        let x = match bounds {
            Some((lo, _)) if x < lo => lo,
            Some((_, hi)) if x > hi => hi,
            _ => x,
        };
        r(x / r(1.0 - x)).ln()
    })?)
}

pub(crate) fn softplus_f(x: f64, beta: f64, threshold: f64) -> f64 {
    if x * beta > threshold {
        x
    } else {
        (x * beta).exp().ln_1p() / beta
    }
}

pub fn softplus(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (beta, th) = (cx.float_or("beta", 1.0)?, cx.float_or("threshold", 20.0)?);
    one(map_float(cx.tensor("self")?, move |x| softplus_f(x, beta, th))?)
}

pub fn elu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (alpha, scale, input_scale) = (cx.float_or("alpha", 1.0)?, cx.float_or("scale", 1.0)?, cx.float_or("input_scale", 1.0)?);
    one(map_float(cx.tensor("self")?, move |x| if x > 0.0 { scale * x } else { scale * alpha * (x * input_scale).exp_m1() })?)
}

pub fn celu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let alpha = cx.float_or("alpha", 1.0)?;
    one(map_float(cx.tensor("self")?, move |x| x.max(0.0) + (alpha * (x / alpha).exp_m1()).min(0.0))?)
}

pub fn leaky_relu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let slope = cx.float_or("negative_slope", 0.01)?;
    one(map_float(cx.tensor("self")?, move |x| if x > 0.0 { x } else { x * slope })?)
}

pub fn hardshrink(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let l = cx.float_or("lambd", 0.5)?;
    one(map_float(cx.tensor("self")?, move |x| if x >= -l && x <= l { 0.0 } else { x })?)
}

pub fn softshrink(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let l = cx.float_or("lambd", 0.5)?;
    one(map_float(cx.tensor("self")?, move |x| if x > l { x - l } else if x < -l { x + l } else { 0.0 })?)
}

pub fn threshold(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let (th, v) = (cx.float_or("threshold", 0.0)?, cx.float_or("value", 0.0)?);
    one(map_keep(t, move |x| if x <= th { v } else { x }, move |x| if (x as f64) <= th { v as i64 } else { x })?)
}

pub fn nan_to_num(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if !t.dtype().is_floating() {
        return one(t.clone());
    }
    let (lo, hi) = match t.dtype() {
        DType::F16 => (-65504.0, 65504.0),
        DType::BF16 => (-3.389_531_389_251_535_5e38, 3.389_531_389_251_535_5e38),
        DType::F32 => (f32::MIN as f64, f32::MAX as f64),
        _ => (f64::MIN, f64::MAX),
    };
    let nan = cx.float_or("nan", 0.0)?;
    let pos = cx.opt_float("posinf")?.unwrap_or(hi);
    let neg = cx.opt_float("neginf")?.unwrap_or(lo);
    one(map_float(t, move |x| if x.is_nan() { nan } else if x == f64::INFINITY { pos } else if x == f64::NEG_INFINITY { neg } else { x })?)
}

/// Predicates: bool results.
macro_rules! predicate {
    ($($name:ident => $f:expr;)*) => {
        $(pub fn $name(cx: &OpCx) -> OpResult<Vec<RtValue>> {
            let t = cx.tensor("self")?;
            let f: fn(f64) -> bool = $f;
            let v: Vec<bool> = t.to_f64_vec().into_iter().map(f).collect();
            one(Tensor::from_vec(t.shape(), v).ok_or_else(|| OpError::Shape("predicate".into()))?)
        })*
    };
}

predicate! {
    isnan => f64::is_nan;
    isinf => f64::is_infinite;
    isfinite => f64::is_finite;
    isposinf => |x| x == f64::INFINITY;
    isneginf => |x| x == f64::NEG_INFINITY;
    signbit => f64::is_sign_negative;
    isreal => |_| true;
}

pub fn bitwise_not(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.dtype() == DType::Bool {
        return super::pointwise::logical_not(cx);
    }
    if t.dtype().is_floating() {
        return Err(OpError::Unsupported("bitwise_not of a float tensor".into()));
    }
    one(map_keep(t, |x| x, |x| !x)?)
}

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

/// Orthogonal polynomials `P_n(x)` by their three-term recurrences (`n < 0` gives 0).
fn poly(cx: &OpCx, f: fn(f64, i64) -> f64) -> OpResult<Vec<RtValue>> {
    poly_in(cx, |x, n, _| f(x, n))
}

/// [`poly`] with the result dtype handed to `f`.
fn poly_in(cx: &OpCx, f: impl Fn(f64, i64, DType) -> f64) -> OpResult<Vec<RtValue>> {
    let (x, n) = (cx.operand("x")?, cx.operand("n")?);
    let promoted = result_type(&[x, n])?;
    let out = if promoted.is_floating() { promoted } else { DType::F32 };
    let (xt, nt) = (x.cast(DType::F64)?, n.cast(DType::F64)?);
    let r = zip2::<f64, f64>(&xt, &nt, move |x, n| if n.is_nan() { f64::NAN } else { f(x, n as i64, out) })?;
    one(dtype_ok(r.cast(out))?)
}

/// `special_hermite_polynomial_he`: `r = x·q − k·p`, which PyTorch's CPU build compiles to a
/// fused multiply-add `fma(x, q, −k·p)`, in the result's precision (float32 for float32): only
/// that way do float32 results come out as PyTorch's do.
pub fn hermite_he(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    poly_in(cx, |x, n, out| {
        if out == DType::F64 {
            recurrence(n, 1.0, x, |a, b, k| x.mul_add(b, -(k as f64 * a)))
        } else {
            f64::from(hermite_he_f32(n, x as f32))
        }
    })
}

fn hermite_he_f32(n: i64, x: f32) -> f32 {
    if n < 0 {
        return 0.0;
    }
    let (mut p, mut q) = (1.0f32, x);
    if n == 0 {
        return p;
    }
    for k in 1..n {
        let r = x.mul_add(q, -(k as f32 * p));
        p = q;
        q = r;
    }
    q
}

fn recurrence(n: i64, p0: f64, p1: f64, next: impl Fn(f64, f64, i64) -> f64) -> f64 {
    if n < 0 {
        return 0.0;
    }
    if n == 0 {
        return p0;
    }
    let (mut a, mut b) = (p0, p1);
    for k in 1..n {
        let c = next(a, b, k);
        a = b;
        b = c;
    }
    b
}

macro_rules! polys {
    ($($name:ident => $f:expr;)*) => {
        $(pub fn $name(cx: &OpCx) -> OpResult<Vec<RtValue>> { poly(cx, $f) })*
    };
}

polys! {
    chebyshev_t => |x, n| recurrence(n, 1.0, x, |a, b, _| 2.0 * x * b - a);
    chebyshev_u => |x, n| recurrence(n, 1.0, 2.0 * x, |a, b, _| 2.0 * x * b - a);
    chebyshev_v => |x, n| recurrence(n, 1.0, 2.0 * x - 1.0, |a, b, _| 2.0 * x * b - a);
    chebyshev_w => |x, n| recurrence(n, 1.0, 2.0 * x + 1.0, |a, b, _| 2.0 * x * b - a);
    shifted_chebyshev_t => |x, n| { let y = 2.0 * x - 1.0; recurrence(n, 1.0, y, |a, b, _| 2.0 * y * b - a) };
    shifted_chebyshev_u => |x, n| { let y = 2.0 * x - 1.0; recurrence(n, 1.0, 2.0 * y, |a, b, _| 2.0 * y * b - a) };
    shifted_chebyshev_v => |x, n| { let y = 2.0 * x - 1.0; recurrence(n, 1.0, 2.0 * y - 1.0, |a, b, _| 2.0 * y * b - a) };
    shifted_chebyshev_w => |x, n| { let y = 2.0 * x - 1.0; recurrence(n, 1.0, 2.0 * y + 1.0, |a, b, _| 2.0 * y * b - a) };
    hermite_h => |x, n| recurrence(n, 1.0, 2.0 * x, |a, b, k| 2.0 * x * b - 2.0 * k as f64 * a);
    laguerre_l => |x, n| recurrence(n, 1.0, 1.0 - x, |a, b, k| ((2.0 * k as f64 + 1.0 - x) * b - k as f64 * a) / (k as f64 + 1.0));
    legendre_p => |x, n| recurrence(n, 1.0, x, |a, b, k| ((2.0 * k as f64 + 1.0) * x * b - k as f64 * a) / (k as f64 + 1.0));
}

/// `polygamma(n, self)`: digamma for n = 0, else `(-1)^(n+1) n! ζ(n+1, x)`; trigamma of a tensor that computes in float32 (or narrower) follows
/// PyTorch's single-precision `calc_trigamma` step by step ([`trigamma_f32`]).
pub fn polygamma(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (n, t) = (cx.int("n")?, cx.tensor("self")?);
    let single = float_out(t) != DType::F64;
    one(map_float(t, move |x| if n == 1 && single { f64::from(trigamma_f32(x as f32)) } else { polygamma_f(n, x) })?)
}

pub fn special_polygamma(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    polygamma(cx)
}

/// PyTorch's `calc_trigamma(float)` in f32 arithmetic: reflection below 1/2 through
/// `sinf(π·x)`, six upward steps, then the asymptotic series. Its roundings matter: next to a
/// negative integer `π·x` is off by an ulp, and at one `sinf` is tiny but not zero, so PyTorch
/// answers a huge finite number (2.0e13 at -8) where the exact function has a pole.
fn trigamma_f32(x: f32) -> f32 {
    use std::f32::consts::PI;
    let (mut x, mut sign, mut result) = (x, 1.0f32, 0.0f32);
    if x < 0.5 {
        sign = -1.0;
        let s = (PI * x).sin();
        result -= PI * PI / (s * s);
        x = 1.0 - x;
    }
    for _ in 0..6 {
        result += 1.0 / (x * x);
        x += 1.0;
    }
    let ixx = 1.0 / (x * x);
    result += (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6.0 - ixx * (1.0 / 30.0 - ixx * (1.0 / 42.0)))) / x;
    sign * result
}

/// `polygamma(n, x)` in f64.
fn polygamma_f(n: i64, x: f64) -> f64 {
    if n == 0 {
        return digamma_f(x);
    }
    let fact: f64 = (1..=n).map(|k| k as f64).product();
    let sign = if n % 2 == 1 { 1.0 } else { -1.0 };
    sign * fact * hurwitz_zeta(n as f64 + 1.0, x)
}

/// Multivariate log-gamma of order `p`.
pub fn mvlgamma(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let p = cx.int("p")?;
    one(map_float(cx.tensor("self")?, move |x| {
        (p * (p - 1)) as f64 / 4.0 * PI.ln() + (0..p).map(|j| libm::lgamma(x - j as f64 / 2.0)).sum::<f64>()
    })?)
}

// ---- special functions, in f64 ----

fn digamma_f(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x == 0.0 {
        return if x.is_sign_negative() { f64::INFINITY } else { f64::NEG_INFINITY };
    }
    if x < 0.0 {
        if x == x.floor() {
            return f64::NAN;
        }
        return digamma_f(1.0 - x) - PI / (PI * x).tan();
    }
    let mut r = 0.0;
    let mut x = x;
    while x < 6.0 {
        r -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    r + x.ln() - 0.5 / x
        - f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f * (1.0 / 132.0)))))
}

/// Hurwitz zeta `Σ (k + q)^-s` by Euler–Maclaurin summation (as Cephes' `zeta`).
fn hurwitz_zeta(s: f64, q: f64) -> f64 {
    if s == 1.0 {
        return f64::INFINITY;
    }
    if s < 1.0 {
        return f64::NAN;
    }
    // As PyTorch's zeta: a non-positive integer q is a pole; other negative q are fine for an
    // integer s (polygamma's case), where q^-s is defined.
    if q <= 0.0 {
        if q == q.floor() {
            return f64::INFINITY;
        }
        if s != s.floor() {
            return f64::NAN;
        }
    }
    let mut sum = q.powf(-s);
    let mut a = q;
    let mut i = 0;
    let mut b = 0.0;
    while i < 9 || a <= 9.0 {
        i += 1;
        a += 1.0;
        b = a.powf(-s);
        sum += b;
        if (b / sum).abs() < 1e-17 {
            return sum;
        }
    }
    let w = a;
    sum += b * w / (s - 1.0);
    sum -= 0.5 * b;
    let mut fac = 1.0;
    let mut k = 0.0;
    for coef in cephes::ZETA_A {
        fac *= s + k;
        b /= w;
        let t = fac * b / coef;
        sum += t;
        if (t / sum).abs() < 1e-17 {
            break;
        }
        k += 1.0;
        fac *= s + k;
        b /= w;
        k += 1.0;
    }
    sum
}

/// Inverse error function: Giles' single-precision approximation, polished by two Newton steps.
fn erfinv_f(y: f64) -> f64 {
    if y.is_nan() || !(-1.0..=1.0).contains(&y) {
        return f64::NAN;
    }
    if y == 1.0 {
        return f64::INFINITY;
    }
    if y == -1.0 {
        return f64::NEG_INFINITY;
    }
    let w = -((1.0 - y) * (1.0 + y)).ln();
    let mut x = if w < 5.0 {
        let w = w - 2.5;
        let mut p = 2.81022636e-08;
        for c in [3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941] {
            p = c + p * w;
        }
        p * y
    } else {
        let w = w.sqrt() - 3.0;
        let mut p = -0.000200214257;
        for c in [0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682] {
            p = c + p * w;
        }
        p * y
    };
    for _ in 0..2 {
        let err = libm::erf(x) - y;
        x -= err / (2.0 / PI.sqrt() * (-x * x).exp());
    }
    x
}

/// Modified Bessel functions by their power series (plenty for OpInfo's arguments), and the
/// asymptotic form for large `|x|`.
fn i0_f(x: f64) -> f64 {
    let ax = x.abs();
    if ax > 30.0 {
        return ax.exp() / (2.0 * PI * ax).sqrt() * (1.0 + 1.0 / (8.0 * ax) + 9.0 / (128.0 * ax * ax));
    }
    let q = x * x / 4.0;
    let (mut term, mut sum, mut k) = (1.0, 1.0, 0.0);
    while term > sum * 1e-17 {
        k += 1.0;
        term *= q / (k * k);
        sum += term;
    }
    sum
}

fn i1_f(x: f64) -> f64 {
    let ax = x.abs();
    if ax > 30.0 {
        return x.signum() * ax.exp() / (2.0 * PI * ax).sqrt() * (1.0 - 3.0 / (8.0 * ax) - 15.0 / (128.0 * ax * ax));
    }
    let q = x * x / 4.0;
    let (mut term, mut sum, mut k) = (x / 2.0, x / 2.0, 0.0);
    while term.abs() > sum.abs() * 1e-17 && term != 0.0 {
        k += 1.0;
        term *= q / (k * (k + 1.0));
        sum += term;
    }
    sum
}

/// The dtype a float op on `t` computes and answers in: its own when it is a float, float32
/// (PyTorch's default) for integers and bool.
fn float_out(t: &Tensor) -> DType {
    if t.dtype().is_floating() {
        t.dtype()
    } else {
        DType::F32
    }
}

/// `special_ndtr`: PyTorch computes `(1 + erf(x · √½)) · ½` as a chain of tensor ops, each
/// rounded to the result's dtype (so float16 rounds four times, and the lower tail cancels to
/// 0 as PyTorch's does).
pub fn ndtr(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let r = round_to(float_out(t));
    one(map_float(t, move |x| r(1.0 + r(libm::erf(r(x * std::f64::consts::FRAC_1_SQRT_2)))) * 0.5)?)
}

/// `log Φ(x)` as PyTorch computes it: through `erfcx` below −1 (no underflow, no cancellation),
/// `log1p(−erfc(t)/2)` above.
fn log_ndtr_f(x: f64) -> f64 {
    let t = x * std::f64::consts::FRAC_1_SQRT_2;
    if x < -1.0 {
        (erfcx_f(-t) / 2.0).ln() - t * t
    } else {
        (-libm::erfc(t) / 2.0).ln_1p()
    }
}

/// `exp(x²)·erfc(x)`, by a continued fraction where `erfc` underflows.
fn erfcx_f(x: f64) -> f64 {
    if x < 25.0 {
        return (x * x).exp() * libm::erfc(x);
    }
    if x.is_infinite() {
        return 0.0;
    }
    let x2 = x * x;
    1.0 / (x * PI.sqrt()) * (1.0 - 1.0 / (2.0 * x2) + 3.0 / (4.0 * x2 * x2) - 15.0 / (8.0 * x2 * x2 * x2))
}

/// Regularised lower incomplete gamma `P(a, x)` (series / continued fraction, as Numerical Recipes).
fn gamma_p(a: f64, x: f64) -> f64 {
    if x.is_nan() || a.is_nan() || x < 0.0 || a < 0.0 {
        return f64::NAN;
    }
    if a == 0.0 {
        return if x > 0.0 { 1.0 } else { f64::NAN };
    }
    if x == 0.0 {
        return 0.0;
    }
    if x.is_infinite() {
        return 1.0;
    }
    let gln = libm::lgamma(a);
    if x < a + 1.0 {
        let (mut ap, mut sum) = (a, 1.0 / a);
        let mut del = sum;
        for _ in 0..10000 {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        sum * (-x + a * x.ln() - gln).exp()
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        1.0 - (-x + a * x.ln() - gln).exp() * h
    }
}
