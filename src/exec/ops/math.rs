//! The rest of the elementwise math: trigonometric, hyperbolic, exponential and special
//! functions, rounding, predicates, bitwise and logical ops, and the binary float functions.
//! Float results are computed in `f64` and rounded once to the result dtype, as in
//! [`pointwise`](super::pointwise); integer inputs of float-only functions become float32.
//!
//! The binary float, bitwise, logical and clamp ops live in `math_binary`, the orthogonal
//! polynomials and special functions in `math_special`; both are re-exported here, so the op
//! registry keeps naming them `math::…`.

use super::fvec::round_to;
use super::math_special::{digamma_f, erfcx_f, erfinv_f, float_out, i0_f, i1_f, log_ndtr_f};
use super::pointwise::{map_float, map_keep};
use super::{dtype_ok, one, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;
use crate::ops::cephes;
use std::f64::consts::PI;

pub use super::math_binary::{
    addcdiv, atan2, bitwise_and, bitwise_left_shift, bitwise_or, bitwise_right_shift, bitwise_xor, clamp_max_tensor,
    clamp_min_tensor, clamp_tensor, copysign, float_power, floor_divide, fmax, fmin, fmod, heaviside, hypot, igamma,
    igammac, isclose, ldexp, lerp, logaddexp, logaddexp2, logical_and, logical_or, logical_xor, nextafter, not_equal,
    remainder, special_zeta, xlog1py, xlogy,
};
pub use super::math_special::{
    chebyshev_t, chebyshev_u, chebyshev_v, chebyshev_w, hermite_h, hermite_he, laguerre_l, legendre_p, mvlgamma, ndtr,
    polygamma, shifted_chebyshev_t, shifted_chebyshev_u, shifted_chebyshev_v, shifted_chebyshev_w, special_polygamma,
};

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
