//! Bessel functions of the first and second kind (`special_bessel_j0/j1/y0/y1`), the modified
//! `K0`/`K1` (plain and scaled), the spherical `j0` and Airy `Ai`, as PyTorch evaluates them (Cephes' rational approximations: a rational
//! function of `x²` up to 5, the Hankel asymptotic form beyond), branch-free like the rest of
//! `special`.

// Cephes' zeros of J0/J1, with more digits than an f64 holds.
#![allow(clippy::excessive_precision)]

use super::super::ctx::Ctx;
use super::super::kernel::{CmpOp, ExprId, KernelError, UnOp};
use super::super::LowerError;
use super::special::{scaled_i, unary, unary_ops, F};
use crate::ops::cephes::{
    AIRY_AD, AIRY_AFD, AIRY_AFN, AIRY_AGD, AIRY_AGN, AIRY_AN, AIRY_C1, AIRY_C2, AIRY_ISPI, AIRY_NEG, AIRY_POS, AIRY_ZERO,
    Hankel, I0E_A, I0E_B, I1E_A, I1E_B, J0_RP, J0_RQ, J1_RP, J1_RQ, K0_A, K0_B, K1_A, K1_B, ORDER0, ORDER1, PI3_4, PI_4, SQ2OPI,
    TWOOPI, Y0_YP, Y0_YQ, Y1_YP, Y1_YQ,
};
use crate::ir::Node;

type K = Result<ExprId, KernelError>;
type R = Result<ExprId, LowerError>;

/// The Hankel form at `x > 5` (`x` clamped to at least 5 so the unused branch stays finite):
/// `(P cos(x − φ) ∓ (5/x) Q sin(x − φ)) · √(2/π) / √x`, with sin and cos swapped for `Y`.
fn hankel(m: &mut F<'_>, x: ExprId, h: &Hankel, phase: f64, second_kind: bool) -> K {
    let five = m.c(5.0);
    let big = m.cmpc(CmpOp::Gt, x, 5.0)?;
    let x = m.sel(big, x, five)?;
    let xx = m.mul(x, x)?;
    let z = m.rdivc(25.0, xx)?;
    let pp = m.polevl(z, &h.pp)?;
    let pq = m.polevl(z, &h.pq)?;
    let qp = m.polevl(z, &h.qp)?;
    let qq = m.polevl(z, &h.qq)?;
    let p = m.div(pp, pq)?;
    let q = m.div(qp, qq)?;
    let w = m.rdivc(5.0, x)?;
    let q = m.mul(w, q)?;
    let xn = m.addc(x, -phase)?;
    let (s, c) = (m.un(UnOp::Sin, xn), m.un(UnOp::Cos, xn));
    let r = if second_kind {
        let a = m.mul(p, s)?;
        let b = m.mul(q, c)?;
        m.add(a, b)?
    } else {
        let a = m.mul(p, c)?;
        let b = m.mul(q, s)?;
        m.sub(a, b)?
    };
    let r = m.mulc(r, SQ2OPI)?;
    let sq = m.un(UnOp::Sqrt, x);
    m.div(r, sq)
}

/// J0 of `ax = |x|`.
fn j0_abs(m: &mut F<'_>, ax: ExprId) -> K {
    let z = m.mul(ax, ax)?;
    let rp = m.polevl(z, &J0_RP)?;
    let rq = m.polevl(z, &J0_RQ)?;
    let a = m.addc(z, -5.78318596294678452118e+00)?;
    let b = m.addc(z, -3.04712623436620863991e+01)?;
    let near = m.mul(a, b)?;
    let near = m.mul(near, rp)?;
    let near = m.div(near, rq)?;
    let q = m.mulc(z, 0.25)?;
    let tiny = m.rsubc(1.0, q)?;
    let is_tiny = m.cmpc(CmpOp::Lt, ax, 1.0e-5)?;
    let near = m.sel(is_tiny, tiny, near)?;
    let far = hankel(m, ax, &ORDER0, PI_4, false)?;
    let small = m.cmpc(CmpOp::Le, ax, 5.0)?;
    m.sel(small, near, far)
}

/// J1 of `ax = |x|` (odd: the caller restores the sign).
fn j1_abs(m: &mut F<'_>, ax: ExprId) -> K {
    let z = m.mul(ax, ax)?;
    let rp = m.polevl(z, &J1_RP)?;
    let rq = m.polevl(z, &J1_RQ)?;
    let a = m.addc(z, -1.46819706421238932572e+01)?;
    let b = m.addc(z, -4.92184563216946036703e+01)?;
    let near = m.div(rp, rq)?;
    let near = m.mul(near, ax)?;
    let near = m.mul(near, a)?;
    let near = m.mul(near, b)?;
    let far = hankel(m, ax, &ORDER1, PI3_4, false)?;
    let small = m.cmpc(CmpOp::Le, ax, 5.0)?;
    m.sel(small, near, far)
}

fn j0_of(m: &mut F<'_>, x: ExprId) -> K {
    let ax = m.un(UnOp::Abs, x);
    j0_abs(m, ax)
}

fn j1_of(m: &mut F<'_>, x: ExprId) -> K {
    let ax = m.un(UnOp::Abs, x);
    let r = j1_abs(m, ax)?;
    let neg = m.cmpc(CmpOp::Lt, x, 0.0)?;
    let n = m.un(UnOp::Neg, r);
    m.sel(neg, n, r)
}

/// Y0, Y1: defined for x > 0 (−inf at 0, NaN below).
fn y_edges(m: &mut F<'_>, x: ExprId, r: ExprId) -> K {
    let neg = m.cmpc(CmpOp::Lt, x, 0.0)?;
    let r = m.selc(neg, f64::NAN, r)?;
    let zero = m.cmpc(CmpOp::Eq, x, 0.0)?;
    m.selc(zero, f64::NEG_INFINITY, r)
}

fn y0_of(m: &mut F<'_>, x: ExprId) -> K {
    let z = m.mul(x, x)?;
    let yp = m.polevl(z, &Y0_YP)?;
    let yq = m.polevl(z, &Y0_YQ)?;
    let l = m.un(UnOp::Log, x);
    let j = j0_abs(m, x)?;
    let lj = m.mul(l, j)?;
    let lj = m.mulc(lj, TWOOPI)?;
    let r = m.div(yp, yq)?;
    let near = m.add(r, lj)?;
    let far = hankel(m, x, &ORDER0, PI_4, true)?;
    let small = m.cmpc(CmpOp::Le, x, 5.0)?;
    let r = m.sel(small, near, far)?;
    y_edges(m, x, r)
}

fn y1_of(m: &mut F<'_>, x: ExprId) -> K {
    let z = m.mul(x, x)?;
    let yp = m.polevl(z, &Y1_YP)?;
    let yq = m.polevl(z, &Y1_YQ)?;
    let r = m.div(yp, yq)?;
    let r = m.mul(x, r)?;
    let l = m.un(UnOp::Log, x);
    let j = j1_abs(m, x)?;
    let lj = m.mul(j, l)?;
    let inv = m.rdivc(1.0, x)?;
    let t = m.sub(lj, inv)?;
    let t = m.mulc(t, TWOOPI)?;
    let near = m.add(r, t)?;
    let far = hankel(m, x, &ORDER1, PI3_4, true)?;
    let small = m.cmpc(CmpOp::Le, x, 5.0)?;
    let r = m.sel(small, near, far)?;
    y_edges(m, x, r)
}

/// Spherical j0: `sin(x)/x`, by its Taylor series below 1/2, 0 at ±inf.
fn spherical_j0_of(m: &mut F<'_>, x: ExprId) -> K {
    let xx = m.mul(x, x)?;
    let mut t = m.c(1.0 / 6227020800.0);
    for c in [-1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0] {
        t = m.mul(xx, t)?;
        t = m.addc(t, c)?;
    }
    let t = m.mul(xx, t)?;
    let series = m.addc(t, 1.0)?;
    let s = m.un(UnOp::Sin, x);
    let direct = m.div(s, x)?;
    let ax = m.un(UnOp::Abs, x);
    let small = m.cmpc(CmpOp::Lt, ax, 0.5)?;
    let r = m.sel(small, series, direct)?;
    let inf = m.cmpc(CmpOp::Eq, ax, f64::INFINITY)?;
    m.selc(inf, 0.0, r)
}

/// K0 or K1 (times `e^x` when `scaled`), as PyTorch's `modified_bessel_k*_forward`: a
/// series in `x² − 2` plus the `log(x/2)·I` term up to 2, the inverted series beyond.
fn k_of(m: &mut F<'_>, x: ExprId, order1: bool, scaled: bool) -> K {
    let (a, b) = if order1 { (&K1_A[..], &K1_B[..]) } else { (&K0_A[..], &K0_B[..]) };
    let xx = m.mul(x, x)?;
    let y = m.addc(xx, -2.0)?;
    let series = m.chbevl(y, a)?;
    let ax = m.un(UnOp::Abs, x);
    let i_scaled = if order1 { scaled_i(m, ax, &I1E_A, &I1E_B, true)? } else { scaled_i(m, ax, &I0E_A, &I0E_B, false)? };
    let e = m.un(UnOp::Exp, x);
    let i = m.mul(e, i_scaled)?;
    let h = m.mulc(x, 0.5)?;
    let l = m.un(UnOp::Log, h);
    let li = m.mul(l, i)?;
    let near = if order1 {
        let s = m.div(series, x)?;
        m.add(li, s)?
    } else {
        m.sub(series, li)?
    };
    let near = if scaled { m.mul(near, e)? } else { near };
    let two = m.c(2.0);
    let big = m.cmpc(CmpOp::Gt, x, 2.0)?;
    let xf = m.sel(big, x, two)?;
    let z = m.rdivc(8.0, xf)?;
    let z = m.addc(z, -2.0)?;
    let far = m.chbevl(z, b)?;
    let sq = m.un(UnOp::Sqrt, xf);
    let far = m.div(far, sq)?;
    let far = if scaled {
        far
    } else {
        let nx = m.un(UnOp::Neg, xf);
        let en = m.un(UnOp::Exp, nx);
        m.mul(en, far)?
    };
    let r = m.sel(big, far, near)?;
    let neg = m.cmpc(CmpOp::Lt, x, 0.0)?;
    let r = m.selc(neg, f64::NAN, r)?;
    let zero = m.cmpc(CmpOp::Eq, x, 0.0)?;
    m.selc(zero, f64::INFINITY, r)
}

fn k0_of(m: &mut F<'_>, x: ExprId) -> K {
    k_of(m, x, false, false)
}

fn k1_of(m: &mut F<'_>, x: ExprId) -> K {
    k_of(m, x, true, false)
}

fn k0e_of(m: &mut F<'_>, x: ExprId) -> K {
    k_of(m, x, false, true)
}

fn k1e_of(m: &mut F<'_>, x: ExprId) -> K {
    k_of(m, x, true, true)
}

unary_ops! {
    bessel_j0 => j0_of;
    bessel_j1 => j1_of;
    bessel_y0 => y0_of;
    bessel_y1 => y1_of;
    modified_bessel_k0 => k0_of;
    modified_bessel_k1 => k1_of;
}

/// Airy `Ai`: the three forms of `ops::cephes::airy_ai`, each on its argument clamped into its
/// own range; the power series as a state loop of 30 steps (it converges in fewer on |x| < 2.09).
fn airy_of(m: &mut F<'_>, x: ExprId) -> K {
    let lo = m.c(AIRY_NEG);
    let hi = m.c(AIRY_POS);
    // Below −2.09.
    let is_neg = m.cmpc(CmpOp::Lt, x, AIRY_NEG)?;
    let xn = m.sel(is_neg, x, lo)?;
    let nx = m.un(UnOp::Neg, xn);
    let s = m.un(UnOp::Sqrt, nx);
    let zeta = m.mul(nx, s)?;
    let zeta = m.mulc(zeta, 2.0 / 3.0)?;
    let z = m.rdivc(1.0, zeta)?;
    let zz = m.mul(z, z)?;
    let afn = m.polevl(zz, &AIRY_AFN)?;
    let afd = m.polevl(zz, &AIRY_AFD)?;
    let a = m.div(afn, afd)?;
    let a = m.mul(zz, a)?;
    let a = m.addc(a, 1.0)?;
    let agn = m.polevl(zz, &AIRY_AGN)?;
    let agd = m.polevl(zz, &AIRY_AGD)?;
    let b = m.div(agn, agd)?;
    let b = m.mul(z, b)?;
    let t = m.addc(zeta, std::f64::consts::FRAC_PI_4)?;
    let (st, ct) = (m.un(UnOp::Sin, t), m.un(UnOp::Cos, t));
    let sa = m.mul(st, a)?;
    let cb = m.mul(ct, b)?;
    let osc = m.sub(sa, cb)?;
    let q = m.un(UnOp::Sqrt, s);
    let neg = m.div(osc, q)?;
    let neg = m.mulc(neg, AIRY_ISPI)?;
    // From 2.09.
    let is_pos = m.cmpc(CmpOp::Ge, x, AIRY_POS)?;
    let xp = m.sel(is_pos, x, hi)?;
    let sp = m.un(UnOp::Sqrt, xp);
    let zeta = m.mul(xp, sp)?;
    let zeta = m.mulc(zeta, 2.0 / 3.0)?;
    let iz = m.rdivc(1.0, zeta)?;
    let an = m.polevl(iz, &AIRY_AN)?;
    let ad = m.polevl(iz, &AIRY_AD)?;
    let r = m.div(an, ad)?;
    let r = m.mulc(r, AIRY_ISPI)?;
    let e = m.un(UnOp::Exp, zeta);
    let q = m.un(UnOp::Sqrt, sp);
    let d = m.mul(q, e)?;
    let d = m.mulc(d, 2.0)?;
    let pos = m.div(r, d)?;
    // Between: Σ over (m, n, f, g) with k = 3j + 2, 3j + 3, 3j + 4 at step j.
    let xx = m.mul(x, x)?;
    let z3 = m.mul(xx, x)?;
    let var = m.kb.fresh_var()?;
    let (mm, nn, f, g) = (m.kb.carried(var, 0, m.ty), m.kb.carried(var, 1, m.ty), m.kb.carried(var, 2, m.ty), m.kb.carried(var, 3, m.ty));
    let j = m.kb.var(var);
    let j = m.kb.cast(j, m.ty);
    let j3 = m.mulc(j, 3.0)?;
    let (k1, k2, k3) = (m.addc(j3, 2.0)?, m.addc(j3, 3.0)?, m.addc(j3, 4.0)?);
    let m1 = m.mul(mm, z3)?;
    let k12 = m.mul(k1, k2)?;
    let m1 = m.div(m1, k12)?;
    let n1 = m.mul(nn, z3)?;
    let k23 = m.mul(k2, k3)?;
    let n1 = m.div(n1, k23)?;
    let f1 = m.add(f, m1)?;
    let g1 = m.add(g, n1)?;
    let one = m.c(1.0);
    let steps = m.kb.i64(30);
    let r = m.kb.iterate(var, steps, vec![one, x, one, x], vec![m1, n1, f1, g1])?;
    let fa = m.mulc(r[2], AIRY_C1)?;
    let ga = m.mulc(r[3], AIRY_C2)?;
    let mid = m.sub(fa, ga)?;
    let mut out = m.sel(is_pos, pos, mid)?;
    out = m.sel(is_neg, neg, out)?;
    let far = m.cmpc(CmpOp::Gt, x, AIRY_ZERO)?;
    out = m.selc(far, 0.0, out)?;
    let ax = m.un(UnOp::Abs, x);
    let inf = m.cmpc(CmpOp::Eq, ax, f64::INFINITY)?;
    m.selc(inf, f64::NAN, out)
}

pub fn airy_ai(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    unary_x(cx, node, idx, airy_of)
}

/// The ops whose argument is named `x` rather than `self`.
pub fn spherical_bessel_j0(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    unary_x(cx, node, idx, spherical_j0_of)
}

pub fn scaled_modified_bessel_k0(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    unary_x(cx, node, idx, k0e_of)
}

pub fn scaled_modified_bessel_k1(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    unary_x(cx, node, idx, k1e_of)
}

fn unary_x(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], f: fn(&mut F<'_>, ExprId) -> K) -> R {
    let x = super::pointwise::arg(cx, node, "x", idx)?;
    let ty = cx.kb.ty(x);
    if !ty.is_float() {
        return Err(cx.err(node, "expected a float result"));
    }
    Ok(f(&mut F { kb: &mut cx.kb, ty }, x)?)
}
