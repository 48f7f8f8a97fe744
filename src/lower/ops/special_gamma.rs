//! The gamma family as kernel expressions: digamma, trigamma, the Hurwitz zeta, polygamma,
//! mvlgamma and the regularised incomplete gamma (`igamma`/`igammac`), after Cephes and PyTorch's
//! `ATen/native/Math.h`. Apart from `special` because these are the state-loop series (the zeta's
//! leading sum, the incomplete gamma's series and continued fraction); `special` re-exports them.

// Constants as Cephes publishes them, with more digits than an f64 holds.
#![allow(clippy::excessive_precision)]

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, Ty, UnOp};
use super::pointwise::arg;
use super::special::{binary, F, K, PI, R};
use crate::ir::Node;
use crate::ops::cephes::ZETA_A;

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
