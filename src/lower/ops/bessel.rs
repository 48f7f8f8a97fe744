//! Bessel functions of the first and second kind (`special_bessel_j0/j1/y0/y1`) and the
//! spherical `j0`, as PyTorch evaluates them (Cephes' rational approximations: a rational
//! function of `x²` up to 5, the Hankel asymptotic form beyond), branch-free like the rest of
//! `special`.

use super::super::ctx::Ctx;
use super::super::kernel::{CmpOp, ExprId, KernelError, UnOp};
use super::super::LowerError;
use super::special::{scaled_i, unary, F};
use crate::ops::cephes::{I0E_A, I0E_B, I1E_A, I1E_B, K0_A, K0_B, K1_A, K1_B};
use crate::ir::Node;

type K = Result<ExprId, KernelError>;
type R = Result<ExprId, LowerError>;

/// sqrt(2/π).
const SQ2OPI: f64 = 0.797884560802865355879892119868763737;
/// 2/π.
const TWOOPI: f64 = 0.636619772367581343075535053490057448;

/// The asymptotic (P, Q) rational pairs of order 0 and order 1.
struct Hankel {
    pp: [f64; 7],
    pq: [f64; 7],
    qp: [f64; 8],
    qq: [f64; 7],
}

const ORDER0: Hankel = Hankel {
    pp: [
        7.96936729297347051624e-04,
        8.28352392107440799803e-02,
        1.23953371646414299388e+00,
        5.44725003058768775090e+00,
        8.74716500199817011941e+00,
        5.30324038235394892183e+00,
        9.99999999999999997821e-01,
    ],
    pq: [
        9.24408810558863637013e-04,
        8.56288474354474431428e-02,
        1.25352743901058953537e+00,
        5.47097740330417105182e+00,
        8.76190883237069594232e+00,
        5.30605288235394617618e+00,
        1.00000000000000000218e+00,
    ],
    qp: [
        -1.13663838898469149931e-02,
        -1.28252718670509318512e+00,
        -1.95539544257735972385e+01,
        -9.32060152123768231369e+01,
        -1.77681167980488050595e+02,
        -1.47077505154951170175e+02,
        -5.14105326766599330220e+01,
        -6.05014350600728481186e+00,
    ],
    qq: [
        6.43178256118178023184e+01,
        8.56430025976980587198e+02,
        3.88240183605401609683e+03,
        7.24046774195652478189e+03,
        5.93072701187316984827e+03,
        2.06209331660327847417e+03,
        2.42005740240291393179e+02,
    ],
};

const ORDER1: Hankel = Hankel {
    pp: [
        7.62125616208173112003e-04,
        7.31397056940917570436e-02,
        1.12719608129684925192e+00,
        5.11207951146807644818e+00,
        8.42404590141772420927e+00,
        5.21451598682361504063e+00,
        1.00000000000000000254e+00,
    ],
    pq: [
        5.71323128072548699714e-04,
        6.88455908754495404082e-02,
        1.10514232634061696926e+00,
        5.07386386128601488557e+00,
        8.39985554327604159757e+00,
        5.20982848682361821619e+00,
        9.99999999999999997461e-01,
    ],
    qp: [
        5.10862594750176621635e-02,
        4.98213872951233449420e+00,
        7.58238284132545283818e+01,
        3.66779609360150777800e+02,
        7.10856304998926107277e+02,
        5.97489612400613639965e+02,
        2.11688757100572135698e+02,
        2.52070205858023719784e+01,
    ],
    qq: [
        7.42373277035675149943e+01,
        1.05644886038262816351e+03,
        4.98641058337653607651e+03,
        9.56231892404756170795e+03,
        7.99704160447350683650e+03,
        2.82619278517639096600e+03,
        3.36093607810698293419e+02,
    ],
};

const J0_RP: [f64; 4] = [-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14, 9.70862251047306323952e+15];
const J0_RQ: [f64; 8] = [
    4.99563147152651017219e+02,
    1.73785401676374683123e+05,
    4.84409658339962045305e+07,
    1.11855537045356834862e+10,
    2.11277520115489217587e+12,
    3.10518229857422583814e+14,
    3.18121955943204943306e+16,
    1.71086294081043136091e+18,
];
const J1_RP: [f64; 4] = [-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13, 3.68295732863852883286e+15];
const J1_RQ: [f64; 8] = [
    6.20836478118054335476e+02,
    2.56987256757748830383e+05,
    8.35146791431949253037e+07,
    2.21511595479792499675e+10,
    4.74914122079991414898e+12,
    7.84369607876235854894e+14,
    8.95222336184627338078e+16,
    5.32278620332680085395e+18,
];
const Y0_YP: [f64; 8] = [
    1.55924367855235737965e+04,
    -1.46639295903971606143e+07,
    5.43526477051876500413e+09,
    -9.82136065717911466409e+11,
    8.75906394395366999549e+13,
    -3.46628303384729719441e+15,
    4.42733268572569800351e+16,
    -1.84950800436986690637e+16,
];
const Y0_YQ: [f64; 7] = [
    1.04128353664259848412e+03,
    6.26107330137134956842e+05,
    2.68919633393814121987e+08,
    8.64002487103935000337e+10,
    2.02979612750105546709e+13,
    3.17157752842975028269e+15,
    2.50596256172653059228e+17,
];
const Y1_YP: [f64; 6] = [
    1.26320474790178026440e+09,
    -6.47355876379160291031e+11,
    1.14509511541823727583e+14,
    -8.12770255501325109621e+15,
    2.02439475713594898196e+17,
    -7.78877196265950026825e+17,
];
const Y1_YQ: [f64; 8] = [
    5.94301592346128195359e+02,
    2.35564092943068577943e+05,
    7.34811944459721705660e+07,
    1.87601316108706159478e+10,
    3.88231277496238566008e+12,
    6.20557727146953693363e+14,
    6.87141087355300489866e+16,
    3.97270608116560655612e+18,
];

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

const PI_4: f64 = std::f64::consts::FRAC_PI_4;
const PI3_4: f64 = 3.0 * std::f64::consts::FRAC_PI_4;

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

macro_rules! unary_ops {
    ($($name:ident => $f:path;)*) => {
        $(pub fn $name(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
            unary(cx, node, idx, $f)
        })*
    };
}

unary_ops! {
    bessel_j0 => j0_of;
    bessel_j1 => j1_of;
    bessel_y0 => y0_of;
    bessel_y1 => y1_of;
    modified_bessel_k0 => k0_of;
    modified_bessel_k1 => k1_of;
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
