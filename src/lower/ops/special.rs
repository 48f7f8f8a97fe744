//! Special functions as kernel expressions: the Cephes-style series and rational approximations
//! PyTorch's `ATen/native/Math.h` evaluates (digamma, zeta, modified Bessel functions, ndtri,
//! erfinv, …), written branch-free: every branch is computed and a select keeps the one the
//! scalar code would have taken. Data-dependent loop counts (the Hurwitz zeta's leading sum,
//! orthogonal polynomials of a tensor degree) are state loops.
//!
//! Float32 inputs compute in f32 and float64 in f64, as PyTorch's kernels do.

// Constants as Cephes publishes them, with more digits than an f64 holds.
#![allow(clippy::excessive_precision)]

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId, KernelBuilder, KernelError, Ty, UnOp};
use super::super::LowerError;
use super::pointwise::{arg, out_ty};
use crate::ir::Node;
use crate::ops::cephes::{I0E_A, I0E_B, I1E_A, I1E_B, ZETA_A};

type K = Result<ExprId, KernelError>;
type R = Result<ExprId, LowerError>;

const PI: f64 = std::f64::consts::PI;

/// Arithmetic in one float type, so the formulas below read like the scalar code.
pub(super) struct F<'k> {
    pub kb: &'k mut KernelBuilder,
    pub ty: Ty,
}

impl F<'_> {
    pub fn c(&mut self, v: f64) -> ExprId {
        if self.ty == Ty::F64 {
            self.kb.f64(v)
        } else {
            self.kb.f32(v as f32)
        }
    }
    pub fn add(&mut self, a: ExprId, b: ExprId) -> K {
        self.kb.binary(BinOp::Add, a, b)
    }
    pub fn sub(&mut self, a: ExprId, b: ExprId) -> K {
        self.kb.binary(BinOp::Sub, a, b)
    }
    pub fn mul(&mut self, a: ExprId, b: ExprId) -> K {
        self.kb.binary(BinOp::Mul, a, b)
    }
    pub fn div(&mut self, a: ExprId, b: ExprId) -> K {
        self.kb.binary(BinOp::Div, a, b)
    }
    pub fn addc(&mut self, a: ExprId, v: f64) -> K {
        let c = self.c(v);
        self.add(a, c)
    }
    pub fn mulc(&mut self, a: ExprId, v: f64) -> K {
        let c = self.c(v);
        self.mul(a, c)
    }
    /// `v - a`.
    pub fn rsubc(&mut self, v: f64, a: ExprId) -> K {
        let c = self.c(v);
        self.sub(c, a)
    }
    /// `v / a`.
    pub fn rdivc(&mut self, v: f64, a: ExprId) -> K {
        let c = self.c(v);
        self.div(c, a)
    }
    pub fn un(&mut self, op: UnOp, a: ExprId) -> ExprId {
        self.kb.unary(op, a)
    }
    pub fn cmp(&mut self, op: CmpOp, a: ExprId, b: ExprId) -> K {
        self.kb.cmp(op, a, b)
    }
    pub fn cmpc(&mut self, op: CmpOp, a: ExprId, v: f64) -> K {
        let c = self.c(v);
        self.kb.cmp(op, a, c)
    }
    pub fn sel(&mut self, c: ExprId, a: ExprId, b: ExprId) -> K {
        self.kb.select(c, a, b)
    }
    /// `c ? v : b`.
    pub fn selc(&mut self, c: ExprId, v: f64, b: ExprId) -> K {
        let k = self.c(v);
        self.kb.select(c, k, b)
    }
    pub fn and(&mut self, a: ExprId, b: ExprId) -> K {
        self.kb.and(a, b)
    }
    pub fn or(&mut self, a: ExprId, b: ExprId) -> K {
        self.kb.binary(BinOp::Or, a, b)
    }
    pub fn is_nan(&mut self, a: ExprId) -> K {
        self.kb.cmp(CmpOp::Ne, a, a)
    }
    /// Cephes `polevl`: coefficients from the highest power down, by Horner's rule.
    pub fn polevl(&mut self, x: ExprId, coef: &[f64]) -> K {
        let mut r = self.c(coef[0]);
        for &c in &coef[1..] {
            r = self.mul(r, x)?;
            r = self.addc(r, c)?;
        }
        Ok(r)
    }
    /// Cephes `chbevl`: a Chebyshev series (zero-order term last) at `x`, by Clenshaw's rule.
    pub fn chbevl(&mut self, x: ExprId, coef: &[f64]) -> K {
        let mut b0 = self.c(coef[0]);
        let mut b1 = self.c(0.0);
        let mut b2 = b1;
        for &c in &coef[1..] {
            b2 = b1;
            b1 = b0;
            let t = self.mul(x, b1)?;
            let t = self.sub(t, b2)?;
            b0 = self.addc(t, c)?;
        }
        let d = self.sub(b0, b2)?;
        self.mulc(d, 0.5)
    }
}

/// A float function of `self` (integer inputs give a float32 output, as PyTorch promotes).
pub(super) fn unary(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], f: fn(&mut F<'_>, ExprId) -> K) -> R {
    let x = arg(cx, node, "self", idx)?;
    let ty = cx.kb.ty(x);
    if !ty.is_float() {
        return Err(cx.err(node, "expected a float result"));
    }
    Ok(f(&mut F { kb: &mut cx.kb, ty }, x)?)
}

/// A float function of two operands.
fn binary(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], a: &str, b: &str, f: fn(&mut F<'_>, ExprId, ExprId) -> K) -> R {
    let x = arg(cx, node, a, idx)?;
    let y = arg(cx, node, b, idx)?;
    let ty = cx.kb.ty(x);
    if !ty.is_float() {
        return Err(cx.err(node, "expected a float result"));
    }
    Ok(f(&mut F { kb: &mut cx.kb, ty }, x, y)?)
}

/// One kernel entry point per unary special function: `name => its expression builder`. The
/// names (`Ctx`, `Node`, `R`, `unary`) resolve where it expands; `bessel` uses it too.
macro_rules! unary_ops {
    ($($name:ident => $f:path;)*) => {
        $(pub fn $name(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
            unary(cx, node, idx, $f)
        })*
    };
}
pub(super) use unary_ops;

unary_ops! {
    digamma => digamma_of;
    i0 => i0_of;
    i0e => i0e_of;
    i1 => i1_of;
    i1e => i1e_of;
    log_ndtr => log_ndtr_of;
    erfcx => erfcx_of;
    erfinv => erfinv_of;
    ndtri => ndtri_of;
    sinc => sinc_of;
    entr => entr_of;
}

// ---- the gamma family ----

/// Cephes' asymptotic digamma coefficients (`psi`).
const PSI_A: [f64; 7] = [
    8.33333333333333333333E-2,
    -2.10927960927960927961E-2,
    7.57575757575757575758E-3,
    -4.16666666666666666667E-3,
    3.96825396825396825397E-3,
    -8.33333333333333333333E-3,
    8.33333333333333333333E-2,
];

/// digamma: reflection for negative `x`, ten upward steps to `x ≥ 10`, then the asymptotic
/// series; ±0 gives ∓inf, negative integers NaN.
pub(super) fn digamma_of(m: &mut F<'_>, x: ExprId) -> K {
    let neg = m.cmpc(CmpOp::Lt, x, 0.0)?;
    let t = m.un(UnOp::Trunc, x);
    let is_int = m.cmp(CmpOp::Eq, x, t)?;
    let r = m.sub(x, t)?;
    let pr = m.mulc(r, PI)?;
    let tan = m.un(UnOp::Tan, pr);
    let refl = m.rdivc(PI, tan)?;
    let flipped = m.rsubc(1.0, x)?;
    let mut y = m.sel(neg, flipped, x)?;
    let mut acc = m.c(0.0);
    for _ in 0..10 {
        let small = m.cmpc(CmpOp::Lt, y, 10.0)?;
        let inv = m.rdivc(1.0, y)?;
        let dec = m.sub(acc, inv)?;
        acc = m.sel(small, dec, acc)?;
        let up = m.addc(y, 1.0)?;
        y = m.sel(small, up, y)?;
    }
    let yy = m.mul(y, y)?;
    let z = m.rdivc(1.0, yy)?;
    let p = m.polevl(z, &PSI_A)?;
    let p = m.mul(z, p)?;
    let l = m.un(UnOp::Log, y);
    let h = m.rdivc(0.5, y)?;
    let mut out = m.add(acc, l)?;
    out = m.sub(out, h)?;
    out = m.sub(out, p)?;
    let ten = m.cmpc(CmpOp::Eq, y, 10.0)?;
    let psi10 = m.addc(acc, 2.25175258906672110764)?;
    out = m.sel(ten, psi10, out)?;
    let reflected = m.sub(out, refl)?;
    out = m.sel(neg, reflected, out)?;
    let pole = m.and(neg, is_int)?;
    out = m.selc(pole, f64::NAN, out)?;
    let zero = m.cmpc(CmpOp::Eq, x, 0.0)?;
    let inf = m.c(f64::INFINITY);
    let minus_x = m.un(UnOp::Neg, x);
    let signed = m.kb.binary(BinOp::CopySign, inf, minus_x)?;
    m.sel(zero, signed, out)
}

/// trigamma (polygamma of order 1): reflection below 1/2, six upward steps, asymptotic series.
fn trigamma_of(m: &mut F<'_>, x: ExprId) -> K {
    let small = m.cmpc(CmpOp::Lt, x, 0.5)?;
    let px = m.mulc(x, PI)?;
    let s = m.un(UnOp::Sin, px);
    let ss = m.mul(s, s)?;
    let refl = m.rdivc(-PI * PI, ss)?;
    let zero = m.c(0.0);
    let mut acc = m.sel(small, refl, zero)?;
    let flipped = m.rsubc(1.0, x)?;
    let mut y = m.sel(small, flipped, x)?;
    for _ in 0..6 {
        let yy = m.mul(y, y)?;
        let inv = m.rdivc(1.0, yy)?;
        acc = m.add(acc, inv)?;
        y = m.addc(y, 1.0)?;
    }
    let yy = m.mul(y, y)?;
    let ixx = m.rdivc(1.0, yy)?;
    let t = m.mulc(ixx, 1.0 / 42.0)?;
    let t = m.rsubc(1.0 / 30.0, t)?;
    let t = m.mul(ixx, t)?;
    let t = m.rsubc(1.0 / 6.0, t)?;
    let t = m.mul(ixx, t)?;
    let y2 = m.mulc(y, 2.0)?;
    let h = m.rdivc(1.0, y2)?;
    let t = m.add(t, h)?;
    let t = m.addc(t, 1.0)?;
    let t = m.div(t, y)?;
    acc = m.add(acc, t)?;
    let negated = m.un(UnOp::Neg, acc);
    m.sel(small, negated, acc)
}

/// Hurwitz zeta `ζ(x, q)` as Cephes sums it: `Σ (q+i)^-x` until `i ≥ 9` and `q + i > 9` (a
/// state loop whose count follows `q`), then twelve Euler–Maclaurin terms.
pub(super) fn zeta_of(m: &mut F<'_>, x: ExprId, q: ExprId) -> K {
    let machep = 1.11022302462515654042E-16;
    // Steps of the leading sum: max(9, ⌊9 − q⌋ + 1); a q too large or small (or NaN) to count
    // steps is given 9, and its result comes out inf or NaN regardless.
    let lo = m.cmpc(CmpOp::Ge, q, -1.0e6)?;
    let hi = m.cmpc(CmpOp::Le, q, 1.0e6)?;
    let sane = m.and(lo, hi)?;
    let nine = m.c(9.0);
    let qq = m.sel(sane, q, nine)?;
    let need = m.rsubc(9.0, qq)?;
    let need = m.un(UnOp::Floor, need);
    let need = m.addc(need, 1.0)?;
    let need = m.kb.cast(need, Ty::I64);
    let nine_i = m.kb.i64(9);
    let steps = m.kb.binary(BinOp::Max, need, nine_i)?;

    let neg_x = m.un(UnOp::Neg, x);
    let s0 = m.kb.binary(BinOp::Pow, q, neg_x)?;
    let var = m.kb.fresh_var()?;
    let (a, s) = (m.kb.carried(var, 0, m.ty), m.kb.carried(var, 1, m.ty));
    let a1 = m.addc(a, 1.0)?;
    let b = m.kb.binary(BinOp::Pow, a1, neg_x)?;
    let s1 = m.add(s, b)?;
    let out = m.kb.iterate(var, steps, vec![q, s0], vec![a1, s1])?;
    let (w, mut s) = (out[0], out[1]);
    let mut b = m.kb.binary(BinOp::Pow, w, neg_x)?;
    // The leading sum converged before the tail: Cephes returns there.
    let tiny = m.mulc(s, machep)?;
    let mut done = m.cmp(CmpOp::Lt, b, tiny)?;

    let xm1 = m.addc(x, -1.0)?;
    let t = m.mul(b, w)?;
    let t = m.div(t, xm1)?;
    let mut tail = m.add(s, t)?;
    let hb = m.mulc(b, 0.5)?;
    tail = m.sub(tail, hb)?;
    s = m.sel(done, s, tail)?;
    let mut fac = m.c(1.0);
    let mut k = 0.0;
    for coef in ZETA_A {
        let xk = m.addc(x, k)?;
        fac = m.mul(fac, xk)?;
        b = m.div(b, w)?;
        let t = m.mul(fac, b)?;
        let t = m.mulc(t, 1.0 / coef)?;
        let next = m.add(s, t)?;
        s = m.sel(done, s, next)?;
        let rel = m.div(t, s)?;
        let rel = m.un(UnOp::Abs, rel);
        let small = m.cmpc(CmpOp::Lt, rel, machep)?;
        done = m.or(done, small)?;
        k += 1.0;
        let xk = m.addc(x, k)?;
        fac = m.mul(fac, xk)?;
        b = m.div(b, w)?;
        k += 1.0;
    }
    // Domain: x = 1 is a pole, x < 1 undefined; a non-positive integer q is a pole, and a
    // negative q needs an integer x.
    let q_pos = m.cmpc(CmpOp::Gt, q, 0.0)?;
    let fq = m.un(UnOp::Floor, q);
    let q_int = m.cmp(CmpOp::Eq, q, fq)?;
    let fx = m.un(UnOp::Floor, x);
    let x_frac = m.cmp(CmpOp::Ne, x, fx)?;
    let q_np = m.un(UnOp::Not, q_pos);
    let q_pole = m.and(q_np, q_int)?;
    let q_bad = m.and(q_np, x_frac)?;
    s = m.selc(q_bad, f64::NAN, s)?;
    s = m.selc(q_pole, f64::INFINITY, s)?;
    let x_lt1 = m.cmpc(CmpOp::Lt, x, 1.0)?;
    s = m.selc(x_lt1, f64::NAN, s)?;
    let x_is1 = m.cmpc(CmpOp::Eq, x, 1.0)?;
    m.selc(x_is1, f64::INFINITY, s)
}

pub fn zeta(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    binary(cx, node, idx, "self", "other", zeta_of)
}

/// `polygamma(n, self)`: digamma, trigamma, else `(-1)^(n+1) n! ζ(n+1, x)`.
pub fn polygamma(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let n = cx.int_or(node, "n", 0)?;
    let x = arg(cx, node, "self", idx)?;
    let ty = cx.kb.ty(x);
    if !ty.is_float() {
        return Err(cx.err(node, "expected a float result"));
    }
    let m = &mut F { kb: &mut cx.kb, ty };
    Ok(match n {
        0 => digamma_of(m, x)?,
        1 => trigamma_of(m, x)?,
        n if n > 1 => {
            let fact: f64 = (1..=n).map(|k| k as f64).product();
            let s = m.c(n as f64 + 1.0);
            let z = zeta_of(m, s, x)?;
            let sign = if n % 2 == 1 { 1.0 } else { -1.0 };
            m.mulc(z, sign * fact)?
        }
        _ => return Err(cx.err(node, format!("polygamma of negative order {n}"))),
    })
}

/// `mvlgamma(self, p)`: `Σ_j lgamma(x − j/2) + p(p−1)/4 · log π`.
pub fn mvlgamma(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let p = cx.int_or(node, "p", 1)?;
    let x = arg(cx, node, "self", idx)?;
    let ty = cx.kb.ty(x);
    if !ty.is_float() {
        return Err(cx.err(node, "expected a float result"));
    }
    let m = &mut F { kb: &mut cx.kb, ty };
    let mut acc = m.c((p * (p - 1)) as f64 / 4.0 * PI.ln());
    for j in 0..p {
        let xj = m.addc(x, -(j as f64) / 2.0)?;
        let l = m.un(UnOp::Lgamma, xj);
        acc = m.add(acc, l)?;
    }
    Ok(acc)
}

// ---- modified Bessel functions of the first kind (Cephes' Chebyshev expansions) ----

/// `e^-|x| I_ν(|x|)` (ν = 0 or 1, before the sign): the [0, 8] series, else the inverted one.
pub(super) fn scaled_i(m: &mut F<'_>, ax: ExprId, a: &[f64], b: &[f64], times_x: bool) -> K {
    let y = m.mulc(ax, 0.5)?;
    let y = m.addc(y, -2.0)?;
    let near = m.chbevl(y, a)?;
    let near = if times_x { m.mul(near, ax)? } else { near };
    let big = m.cmpc(CmpOp::Gt, ax, 8.0)?;
    // The far series at 32/x − 2 (x clamped into its range so the unused branch stays finite).
    let eight = m.c(8.0);
    let xf = m.sel(big, ax, eight)?;
    let z = m.rdivc(32.0, xf)?;
    let z = m.addc(z, -2.0)?;
    let far = m.chbevl(z, b)?;
    let sq = m.un(UnOp::Sqrt, ax);
    let far = m.div(far, sq)?;
    m.sel(big, far, near)
}

fn i0e_of(m: &mut F<'_>, x: ExprId) -> K {
    let ax = m.un(UnOp::Abs, x);
    scaled_i(m, ax, &I0E_A, &I0E_B, false)
}

fn i0_of(m: &mut F<'_>, x: ExprId) -> K {
    let ax = m.un(UnOp::Abs, x);
    let s = scaled_i(m, ax, &I0E_A, &I0E_B, false)?;
    let e = m.un(UnOp::Exp, ax);
    m.mul(e, s)
}

fn odd(m: &mut F<'_>, x: ExprId, v: ExprId) -> K {
    let neg = m.cmpc(CmpOp::Lt, x, 0.0)?;
    let n = m.un(UnOp::Neg, v);
    m.sel(neg, n, v)
}

fn i1e_of(m: &mut F<'_>, x: ExprId) -> K {
    let ax = m.un(UnOp::Abs, x);
    let s = scaled_i(m, ax, &I1E_A, &I1E_B, true)?;
    odd(m, x, s)
}

fn i1_of(m: &mut F<'_>, x: ExprId) -> K {
    let ax = m.un(UnOp::Abs, x);
    let s = scaled_i(m, ax, &I1E_A, &I1E_B, true)?;
    let e = m.un(UnOp::Exp, ax);
    let v = m.mul(e, s)?;
    odd(m, x, v)
}

// ---- the normal distribution and the error function ----

const SQRT1_2: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// The storage of the node's (first) output: where PyTorch's 16-bit float kernels round their
/// intermediates.
fn out_elem(cx: &Ctx<'_>, node: &Node) -> Result<Option<Elem>, LowerError> {
    let v = *node.outputs.first().ok_or_else(|| cx.err(node, "has no outputs"))?;
    Ok(Elem::from_dtype(cx.meta(v)?.dtype))
}

/// `special_ndtr`: Φ(x) as PyTorch composes it from tensor ops, `(1 + erf(x · √½)) · ½`, each
/// step rounded to the result's dtype (the store rounds the last).
pub fn ndtr(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let store = out_elem(cx, node)?;
    let x = arg(cx, node, "self", idx)?;
    let ty = cx.kb.ty(x);
    if !ty.is_float() {
        return Err(cx.err(node, "expected a float result"));
    }
    let m = &mut F { kb: &mut cx.kb, ty };
    let step = |m: &mut F<'_>, e: ExprId| store.map_or(e, |s| m.kb.round_to(e, s));
    let t = m.mulc(x, SQRT1_2)?;
    let t = step(m, t);
    let e = m.un(UnOp::Erf, t);
    let e = step(m, e);
    let u = m.addc(e, 1.0)?;
    let u = step(m, u);
    Ok(m.mulc(u, 0.5)?)
}

/// log Φ(x): `log(erfcx(−t)/2) − t²` below −1, `log1p(−erfc(t)/2)` above.
fn log_ndtr_of(m: &mut F<'_>, x: ExprId) -> K {
    let t = m.mulc(x, SQRT1_2)?;
    let nt = m.un(UnOp::Neg, t);
    let cx = erfcx_of(m, nt)?;
    let h = m.mulc(cx, 0.5)?;
    let l = m.un(UnOp::Log, h);
    let tt = m.mul(t, t)?;
    let low = m.sub(l, tt)?;
    let c = m.un(UnOp::Erfc, t);
    let c = m.mulc(c, -0.5)?;
    let high = m.un(UnOp::Log1p, c);
    let below = m.cmpc(CmpOp::Lt, x, -1.0)?;
    m.sel(below, low, high)
}

/// `exp(x²)·erfc(x)`: directly where `erfc` has not underflowed (with `x²` split so that
/// `exp` sees it exactly), by its asymptotic series beyond.
fn erfcx_of(m: &mut F<'_>, x: ExprId) -> K {
    let cut = if m.ty == Ty::F64 { 26.0 } else { 9.0 };
    let big = m.cmpc(CmpOp::Ge, x, cut)?;
    let hi = m.mulc(x, 256.0)?;
    let hi = m.un(UnOp::Trunc, hi);
    let hi = m.mulc(hi, 1.0 / 256.0)?;
    let lo = m.sub(x, hi)?;
    let hh = m.mul(hi, hi)?;
    let xh = m.add(x, hi)?;
    let rest = m.mul(lo, xh)?;
    let e1 = m.un(UnOp::Exp, hh);
    let e2 = m.un(UnOp::Exp, rest);
    let c = m.un(UnOp::Erfc, x);
    let direct = m.mul(e1, e2)?;
    let direct = m.mul(direct, c)?;
    // 1/(x√π) · Σ (−1)^k (2k−1)!! / (2x²)^k.
    let xx = m.mul(x, x)?;
    let inv = m.rdivc(0.5, xx)?;
    let mut series = m.c(1.0);
    let mut term = m.c(1.0);
    for k in 1..=7 {
        term = m.mul(term, inv)?;
        term = m.mulc(term, -(2.0 * k as f64 - 1.0))?;
        series = m.add(series, term)?;
    }
    let d = m.mulc(x, PI.sqrt())?;
    let asym = m.div(series, d)?;
    let inf = m.cmpc(CmpOp::Eq, x, f64::INFINITY)?;
    let asym = m.selc(inf, 0.0, asym)?;
    m.sel(big, asym, direct)
}

/// erfinv: PyTorch's rational first guess (central range |y| ≤ 0.7, tail beyond) and two
/// Newton steps.
fn erfinv_of(m: &mut F<'_>, y: ExprId) -> K {
    const A: [f64; 4] = [-0.140543331, 0.914624893, -1.645349621, 0.886226899];
    const B: [f64; 5] = [0.012229801, -0.329097515, 1.442710462, -2.118377725, 1.0];
    const C: [f64; 4] = [1.641345311, 3.429567803, -1.624906493, -1.970840454];
    const D: [f64; 3] = [1.637067800, 3.543889200, 1.0];
    let ay = m.un(UnOp::Abs, y);
    let z = m.mul(y, y)?;
    let num = m.polevl(z, &A)?;
    let den = m.polevl(z, &B)?;
    let central = m.mul(y, num)?;
    let central = m.div(central, den)?;
    let one_minus = m.rsubc(1.0, ay)?;
    let half = m.mulc(one_minus, 0.5)?;
    let l = m.un(UnOp::Log, half);
    let l = m.un(UnOp::Neg, l);
    let zt = m.un(UnOp::Sqrt, l);
    let num = m.polevl(zt, &C)?;
    let den = m.polevl(zt, &D)?;
    let signed = m.kb.binary(BinOp::CopySign, num, y)?;
    let tail = m.div(signed, den)?;
    let is_central = m.cmpc(CmpOp::Le, ay, 0.7)?;
    let mut x = m.sel(is_central, central, tail)?;
    for _ in 0..2 {
        let e = m.un(UnOp::Erf, x);
        let e = m.sub(e, y)?;
        let xx = m.mul(x, x)?;
        let nxx = m.un(UnOp::Neg, xx);
        let g = m.un(UnOp::Exp, nxx);
        let g = m.mulc(g, 2.0 / PI.sqrt())?;
        let step = m.div(e, g)?;
        x = m.sub(x, step)?;
    }
    let inf = m.c(f64::INFINITY);
    let edge = m.kb.binary(BinOp::CopySign, inf, y)?;
    let at_one = m.cmpc(CmpOp::Eq, ay, 1.0)?;
    x = m.sel(at_one, edge, x)?;
    let outside = m.cmpc(CmpOp::Gt, ay, 1.0)?;
    m.selc(outside, f64::NAN, x)
}

const NDTRI_P0: [f64; 5] = [
    -5.99633501014107895267E1,
    9.80010754185999661536E1,
    -5.66762857469070293439E1,
    1.39312609387279679503E1,
    -1.23916583867381258016E0,
];
const NDTRI_Q0: [f64; 9] = [
    1.00000000000000000000E0,
    1.95448858338141759834E0,
    4.67627912898881538453E0,
    8.63602421390890590575E1,
    -2.25462687854119370527E2,
    2.00260212380060660359E2,
    -8.20372256168333339912E1,
    1.59056225126211695515E1,
    -1.18331621121330003142E0,
];
const NDTRI_P1: [f64; 9] = [
    4.05544892305962419923E0,
    3.15251094599893866154E1,
    5.71628192246421288162E1,
    4.40805073893200834700E1,
    1.46849561928858024014E1,
    2.18663306850790267539E0,
    -1.40256079171354495875E-1,
    -3.50424626827848203418E-2,
    -8.57456785154685413611E-4,
];
const NDTRI_Q1: [f64; 9] = [
    1.00000000000000000000E0,
    1.57799883256466749731E1,
    4.53907635128879210584E1,
    4.13172038254672030440E1,
    1.50425385692907503408E1,
    2.50464946208309415979E0,
    -1.42182922854787788574E-1,
    -3.80806407691578277194E-2,
    -9.33259480895457427372E-4,
];
const NDTRI_P2: [f64; 9] = [
    3.23774891776946035970E0,
    6.91522889068984211695E0,
    3.93881025292474443415E0,
    1.33303460815807542389E0,
    2.01485389549179081538E-1,
    1.23716634817820021358E-2,
    3.01581553508235416007E-4,
    2.65806974686737550832E-6,
    6.23974539184983293730E-9,
];
const NDTRI_Q2: [f64; 9] = [
    1.00000000000000000000E0,
    6.02427039364742014255E0,
    3.67983563856160859403E0,
    1.37702099489081330271E0,
    2.16236993594496635890E-1,
    1.34204006088543189037E-2,
    3.28014464682127739104E-4,
    2.89247864745380683936E-6,
    6.79019408009981274425E-9,
];

/// Φ⁻¹(p), as Cephes' `ndtri`: a rational function of `p − 1/2` in the middle, of
/// `1/√(−2 log p)` in the tails (upper tail by symmetry).
fn ndtri_of(m: &mut F<'_>, y0: ExprId) -> K {
    let e2 = 0.13533528323661269189;
    let upper = m.cmpc(CmpOp::Gt, y0, 1.0 - e2)?;
    let flipped = m.rsubc(1.0, y0)?;
    let y = m.sel(upper, flipped, y0)?;
    // Middle: |y − 1/2| ≤ 3/8.
    let c = m.addc(y, -0.5)?;
    let c2 = m.mul(c, c)?;
    let p = m.polevl(c2, &NDTRI_P0)?;
    let q = m.polevl(c2, &NDTRI_Q0)?;
    let r = m.mul(c2, p)?;
    let r = m.div(r, q)?;
    let r = m.mul(c, r)?;
    let mid = m.add(c, r)?;
    let mid = m.mulc(mid, 2.50662827463100050242)?;
    // Tails.
    let l = m.un(UnOp::Log, y);
    let l = m.mulc(l, -2.0)?;
    let x = m.un(UnOp::Sqrt, l);
    let lx = m.un(UnOp::Log, x);
    let lx = m.div(lx, x)?;
    let x0 = m.sub(x, lx)?;
    let z = m.rdivc(1.0, x)?;
    let p1 = m.polevl(z, &NDTRI_P1)?;
    let q1 = m.polevl(z, &NDTRI_Q1)?;
    let r1 = m.div(p1, q1)?;
    let p2 = m.polevl(z, &NDTRI_P2)?;
    let q2 = m.polevl(z, &NDTRI_Q2)?;
    let r2 = m.div(p2, q2)?;
    let near = m.cmpc(CmpOp::Lt, x, 8.0)?;
    let r = m.sel(near, r1, r2)?;
    let x1 = m.mul(z, r)?;
    let tail = m.sub(x0, x1)?;
    let neg_tail = m.un(UnOp::Neg, tail);
    let tail = m.sel(upper, tail, neg_tail)?;
    let middle = m.cmpc(CmpOp::Gt, y, e2)?;
    let mut out = m.sel(middle, mid, tail)?;
    let bad_lo = m.cmpc(CmpOp::Lt, y0, 0.0)?;
    let bad_hi = m.cmpc(CmpOp::Gt, y0, 1.0)?;
    let bad = m.or(bad_lo, bad_hi)?;
    out = m.selc(bad, f64::NAN, out)?;
    let one = m.cmpc(CmpOp::Eq, y0, 1.0)?;
    out = m.selc(one, f64::INFINITY, out)?;
    let zero = m.cmpc(CmpOp::Eq, y0, 0.0)?;
    m.selc(zero, f64::NEG_INFINITY, out)
}

// ---- small elementwise functions ----

/// sinc: `sin(πx)/(πx)`, 1 at 0.
fn sinc_of(m: &mut F<'_>, x: ExprId) -> K {
    let p = m.mulc(x, PI)?;
    let s = m.un(UnOp::Sin, p);
    let r = m.div(s, p)?;
    let zero = m.cmpc(CmpOp::Eq, x, 0.0)?;
    m.selc(zero, 1.0, r)
}

/// entr: `−x log x` for x > 0, 0 at 0, −inf below, NaN kept.
fn entr_of(m: &mut F<'_>, x: ExprId) -> K {
    let l = m.un(UnOp::Log, x);
    let p = m.mul(x, l)?;
    let r = m.un(UnOp::Neg, p);
    let zero = m.cmpc(CmpOp::Eq, x, 0.0)?;
    let r = m.selc(zero, 0.0, r)?;
    let neg = m.cmpc(CmpOp::Lt, x, 0.0)?;
    m.selc(neg, f64::NEG_INFINITY, r)
}

/// `logit(self, eps)`: `log(x / (1 − x))` of `x` clamped to `[eps, 1 − eps]` when eps is given,
/// each step rounded to the result's dtype as PyTorch's CPU kernel computes in it (the bounds
/// too: a float16 `1 − eps` is a float16).
pub fn logit(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let eps = match node.arg("eps") {
        None | Some(crate::ir::Arg::None) => None,
        _ => Some(cx.float_or(node, "eps", 0.0)?).filter(|e| !e.is_nan()),
    };
    let store = out_elem(cx, node)?;
    let x = arg(cx, node, "self", idx)?;
    let ty = cx.kb.ty(x);
    if !ty.is_float() {
        return Err(cx.err(node, "expected a float result"));
    }
    let m = &mut F { kb: &mut cx.kb, ty };
    let step = |m: &mut F<'_>, e: ExprId| store.map_or(e, |s| m.kb.round_to(e, s));
    let mut z = x;
    if let Some(e) = eps {
        let lo = m.c(e);
        let lo = step(m, lo);
        let one = m.c(1.0);
        let hi = m.sub(one, lo)?;
        let hi = step(m, hi);
        let below = m.cmp(CmpOp::Lt, z, lo)?;
        let above = m.cmp(CmpOp::Gt, z, hi)?;
        let clamped = m.sel(above, hi, z)?;
        z = m.sel(below, lo, clamped)?;
    }
    let d = m.rsubc(1.0, z)?;
    let d = step(m, d);
    let q = m.div(z, d)?;
    let q = step(m, q);
    Ok(m.un(UnOp::Log, q))
}

/// `logaddexp2(a, b)`: `m + log2(1 + 2^−|a−b|)`; equal infinities give themselves.
pub fn logaddexp2(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    binary(cx, node, idx, "self", "other", |m, a, b| {
        let mx = m.kb.binary(BinOp::Max, a, b)?;
        let d = m.sub(a, b)?;
        let d = m.un(UnOp::Abs, d);
        let nd = m.un(UnOp::Neg, d);
        let e = m.un(UnOp::Exp2, nd);
        let l = m.un(UnOp::Log1p, e);
        let l = m.mulc(l, std::f64::consts::LOG2_E)?;
        let r = m.add(mx, l)?;
        let same = m.cmp(CmpOp::Eq, a, b)?;
        let inf = m.un(UnOp::Abs, a);
        let inf = m.cmpc(CmpOp::Eq, inf, f64::INFINITY)?;
        let both = m.and(same, inf)?;
        let nan = m.is_nan(a)?;
        let nb = m.is_nan(b)?;
        let any_nan = m.or(nan, nb)?;
        let r = m.sel(both, a, r)?;
        let sum = m.add(a, b)?;
        m.sel(any_nan, sum, r)
    })
}

/// `signbit`: the sign bit (−0.0 and −NaN included) of floats, `x < 0` of integers.
pub fn signbit(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let x = cx.read(v, idx)?;
    let kb = &mut cx.kb;
    match kb.ty(x) {
        Ty::Bool | Ty::U32 => Ok(kb.bool(false)),
        Ty::I64 => {
            let z = kb.i64(0);
            Ok(kb.cmp(CmpOp::Lt, x, z)?)
        }
        _ => {
            let one = kb.float_like(1.0, x);
            let s = kb.binary(BinOp::CopySign, one, x)?;
            let z = kb.float_like(0.0, x);
            Ok(kb.cmp(CmpOp::Lt, s, z)?)
        }
    }
}

/// `angle` of a real number: π below 0, else 0; NaN kept.
pub fn angle(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let ty = out_ty(cx, node)?;
    let v = cx.tensor(node, "self")?;
    let x = cx.read(v, idx)?;
    let x = cx.kb.cast(x, ty);
    let m = &mut F { kb: &mut cx.kb, ty };
    let neg = m.cmpc(CmpOp::Lt, x, 0.0)?;
    let zero = m.c(0.0);
    let r = m.selc(neg, PI, zero)?;
    let nan = m.is_nan(x)?;
    Ok(m.sel(nan, x, r)?)
}

/// `nextafter(self, other)`: OpenCL's built-in.
pub fn nextafter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    binary(cx, node, idx, "self", "other", |m, a, b| m.kb.binary(BinOp::NextAfter, a, b))
}

/// Bit shifts of integers: a left shift by a negative or ≥ 64 count gives 0, a right shift the
/// sign (narrower types wrap or keep the sign on store, matching their own limits).
fn shift(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], left: bool) -> R {
    let x = arg(cx, node, "self", idx)?;
    let y = arg(cx, node, "other", idx)?;
    let kb = &mut cx.kb;
    if kb.ty(x) != Ty::I64 {
        return Err(cx.err(node, "bit shifts need integer operands"));
    }
    let (zero, top) = (kb.i64(0), kb.i64(63));
    let neg = kb.cmp(CmpOp::Lt, y, zero)?;
    let over = kb.cmp(CmpOp::Gt, y, top)?;
    let out = kb.binary(BinOp::Or, neg, over)?;
    let safe = kb.select(out, zero, y)?;
    if left {
        let s = kb.binary(BinOp::Shl, x, safe)?;
        Ok(kb.select(out, zero, s)?)
    } else {
        let s = kb.binary(BinOp::Shr, x, safe)?;
        let sign = kb.binary(BinOp::Shr, x, top)?;
        Ok(kb.select(out, sign, s)?)
    }
}

pub fn bitwise_left_shift(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    shift(cx, node, idx, true)
}

pub fn bitwise_right_shift(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    shift(cx, node, idx, false)
}

/// Integer `x^y` as PyTorch computes it: by squaring (wrapping), over the exponent's 63 bits
/// in a state loop; a negative exponent gives 1 for base 1, ±1 for base −1, else 0.
pub(super) fn int_pow(kb: &mut KernelBuilder, x: ExprId, y: ExprId) -> K {
    let var = kb.fresh_var()?;
    let (acc, base, e) = (kb.carried(var, 0, Ty::I64), kb.carried(var, 1, Ty::I64), kb.carried(var, 2, Ty::I64));
    let (zero, one, two) = (kb.i64(0), kb.i64(1), kb.i64(2));
    let bit = kb.binary(BinOp::BitAnd, e, one)?;
    let odd = kb.cmp(CmpOp::Ne, bit, zero)?;
    let times = kb.binary(BinOp::Mul, acc, base)?;
    let next_acc = kb.select(odd, times, acc)?;
    let next_base = kb.binary(BinOp::Mul, base, base)?;
    let next_e = kb.binary(BinOp::Div, e, two)?;
    let steps = kb.i64(63);
    let r = kb.iterate(var, steps, vec![one, x, y], vec![next_acc, next_base, next_e])?;
    let neg = kb.cmp(CmpOp::Lt, y, zero)?;
    let minus = kb.i64(-1);
    let is_one = kb.cmp(CmpOp::Eq, x, one)?;
    let is_minus = kb.cmp(CmpOp::Eq, x, minus)?;
    let ybit = kb.binary(BinOp::BitAnd, y, one)?;
    let y_odd = kb.cmp(CmpOp::Ne, ybit, zero)?;
    let sign = kb.select(y_odd, minus, one)?;
    let small = kb.select(is_minus, sign, zero)?;
    let small = kb.select(is_one, one, small)?;
    kb.select(neg, small, r[0])
}

/// Regularised incomplete gamma `P(a, x)` and `Q = 1 − P`: the power series below `x < a + 1`,
/// Lentz's continued fraction for `Q` above, each a state loop of a fixed 200 steps (both
/// converge well before; extra steps add nothing), then PyTorch's boundary values.
fn incomplete_gamma(m: &mut F<'_>, a: ExprId, x: ExprId, upper: bool) -> K {
    let steps = m.kb.i64(200);
    let one = m.c(1.0);
    // Series: sum of x^k / (a (a+1) … (a+k)).
    let var = m.kb.fresh_var()?;
    let (ap, del, sum) = (m.kb.carried(var, 0, m.ty), m.kb.carried(var, 1, m.ty), m.kb.carried(var, 2, m.ty));
    let ap1 = m.addc(ap, 1.0)?;
    let r = m.div(x, ap1)?;
    let del1 = m.mul(del, r)?;
    let sum1 = m.add(sum, del1)?;
    let inv_a = m.rdivc(1.0, a)?;
    let s = m.kb.iterate(var, steps, vec![a, inv_a, inv_a], vec![ap1, del1, sum1])?;
    // exp(−x + a log x − lgamma(a)).
    let lx = m.un(UnOp::Log, x);
    let t = m.mul(a, lx)?;
    let t = m.sub(t, x)?;
    let lg = m.un(UnOp::Lgamma, a);
    let t = m.sub(t, lg)?;
    let front = m.un(UnOp::Exp, t);
    let p_series = m.mul(s[2], front)?;
    // Continued fraction (modified Lentz), for Q.
    let tiny = m.c(if m.ty == Ty::F64 { 1e-300 } else { 1e-30 });
    let var = m.kb.fresh_var()?;
    let (b, c, d, h) = (
        m.kb.carried(var, 0, m.ty),
        m.kb.carried(var, 1, m.ty),
        m.kb.carried(var, 2, m.ty),
        m.kb.carried(var, 3, m.ty),
    );
    let i = m.kb.var(var);
    let one_i = m.kb.i64(1);
    let i = m.kb.binary(BinOp::Add, i, one_i)?;
    let i = m.kb.cast(i, m.ty);
    let ima = m.sub(i, a)?;
    let an = m.mul(i, ima)?;
    let an = m.un(UnOp::Neg, an);
    let b1 = m.addc(b, 2.0)?;
    let ad = m.mul(an, d)?;
    let d1 = m.add(ad, b1)?;
    let ad1 = m.un(UnOp::Abs, d1);
    let small = m.cmp(CmpOp::Lt, ad1, tiny)?;
    let d1 = m.sel(small, tiny, d1)?;
    let ac = m.div(an, c)?;
    let c1 = m.add(b1, ac)?;
    let ac1 = m.un(UnOp::Abs, c1);
    let small = m.cmp(CmpOp::Lt, ac1, tiny)?;
    let c1 = m.sel(small, tiny, c1)?;
    let d1 = m.div(one, d1)?;
    let dl = m.mul(d1, c1)?;
    let h1 = m.mul(h, dl)?;
    let xp1 = m.addc(x, 1.0)?;
    let b0 = m.sub(xp1, a)?;
    let c0 = m.div(one, tiny)?;
    let d0 = m.div(one, b0)?;
    let f = m.kb.iterate(var, steps, vec![b0, c0, d0, d0], vec![b1, c1, d1, h1])?;
    let q_cf = m.mul(f[3], front)?;
    let ap1x = m.addc(a, 1.0)?;
    let below = m.cmp(CmpOp::Lt, x, ap1x)?;
    let p_cf = m.rsubc(1.0, q_cf)?;
    let q_series = m.rsubc(1.0, p_series)?;
    let (mut r, v_one, v_zero) = if upper { (m.sel(below, q_series, q_cf)?, 0.0, 1.0) } else { (m.sel(below, p_series, p_cf)?, 1.0, 0.0) };
    // Boundaries, as SciPy and PyTorch: x = ∞ → P = 1; a = ∞ → P = 0 (NaN with x = ∞);
    // x = 0 → P = 0; a = 0 → P = 1 for x > 0 (NaN at x = 0); negative arguments NaN.
    let x_inf = m.cmpc(CmpOp::Eq, x, f64::INFINITY)?;
    r = m.selc(x_inf, v_one, r)?;
    let a_inf = m.cmpc(CmpOp::Eq, a, f64::INFINITY)?;
    let both_inf = m.and(a_inf, x_inf)?;
    r = m.selc(a_inf, v_zero, r)?;
    r = m.selc(both_inf, f64::NAN, r)?;
    let x0 = m.cmpc(CmpOp::Eq, x, 0.0)?;
    r = m.selc(x0, v_zero, r)?;
    let a0 = m.cmpc(CmpOp::Eq, a, 0.0)?;
    let xpos = m.cmpc(CmpOp::Gt, x, 0.0)?;
    let a0x = m.and(a0, xpos)?;
    let a0nan = m.and(a0, x0)?;
    r = m.selc(a0x, v_one, r)?;
    r = m.selc(a0nan, f64::NAN, r)?;
    let xn = m.cmpc(CmpOp::Lt, x, 0.0)?;
    let an_ = m.cmpc(CmpOp::Lt, a, 0.0)?;
    let bad = m.or(xn, an_)?;
    m.selc(bad, f64::NAN, r)
}

pub fn igamma(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    binary(cx, node, idx, "self", "other", |m, a, x| incomplete_gamma(m, a, x, false))
}

pub fn igammac(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    binary(cx, node, idx, "self", "other", |m, a, x| incomplete_gamma(m, a, x, true))
}
