//! The normal distribution and the error function as kernel expressions: `ndtr`, `log_ndtr`,
//! `erfcx`, `erfinv` and `ndtri`, with Cephes' rational approximations. Apart from `special`
//! because they share the 16-bit rounding of intermediates ([`out_elem`]) and the long `ndtri`
//! coefficient tables; `special` re-exports them.

// Constants as Cephes publishes them, with more digits than an f64 holds.
#![allow(clippy::excessive_precision)]

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId, Ty, UnOp};
use super::super::LowerError;
use super::pointwise::arg;
use super::special::{F, K, PI, R};
use crate::ir::Node;

// ---- the normal distribution and the error function ----

const SQRT1_2: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// The storage of the node's (first) output: where PyTorch's 16-bit float kernels round their
/// intermediates.
pub(super) fn out_elem(cx: &Ctx<'_>, node: &Node) -> Result<Option<Elem>, LowerError> {
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
pub(super) fn log_ndtr_of(m: &mut F<'_>, x: ExprId) -> K {
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
pub(super) fn erfcx_of(m: &mut F<'_>, x: ExprId) -> K {
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
pub(super) fn erfinv_of(m: &mut F<'_>, y: ExprId) -> K {
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
pub(super) fn ndtri_of(m: &mut F<'_>, y0: ExprId) -> K {
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
