//! The interpreter's orthogonal polynomials and special functions: Chebyshev/Hermite/Laguerre/
//! Legendre recurrences, polygamma, digamma, the Hurwitz zeta, erfinv, the modified Bessel
//! functions, `ndtr` and the incomplete gamma, as scalar `f64` code after PyTorch and Cephes.
//! Apart from `math` because they are numerical algorithms rather than one-line maps; re-exported
//! from `math`.

use super::fvec::round_to;
use super::pointwise::{map_float, result_type, zip2};
use super::{dtype_ok, one, OpCx, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;
use crate::ops::cephes;
use std::f64::consts::PI;

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

pub(super) fn digamma_f(x: f64) -> f64 {
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
pub(super) fn hurwitz_zeta(s: f64, q: f64) -> f64 {
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
pub(super) fn erfinv_f(y: f64) -> f64 {
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
pub(super) fn i0_f(x: f64) -> f64 {
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

pub(super) fn i1_f(x: f64) -> f64 {
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
pub(super) fn float_out(t: &Tensor) -> DType {
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
pub(super) fn log_ndtr_f(x: f64) -> f64 {
    let t = x * std::f64::consts::FRAC_1_SQRT_2;
    if x < -1.0 {
        (erfcx_f(-t) / 2.0).ln() - t * t
    } else {
        (-libm::erfc(t) / 2.0).ln_1p()
    }
}

/// `exp(x²)·erfc(x)`, by a continued fraction where `erfc` underflows.
pub(super) fn erfcx_f(x: f64) -> f64 {
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
pub(super) fn gamma_p(a: f64, x: f64) -> f64 {
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
