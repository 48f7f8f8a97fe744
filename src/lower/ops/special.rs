//! Special functions as kernel expressions: the Cephes-style series and rational approximations
//! PyTorch's `ATen/native/Math.h` evaluates (digamma, zeta, modified Bessel functions, ndtri,
//! erfinv, …), written branch-free: every branch is computed and a select keeps the one the
//! scalar code would have taken. Data-dependent loop counts (the Hurwitz zeta's leading sum,
//! orthogonal polynomials of a tensor degree) are state loops.
//!
//! Float32 inputs compute in f32 and float64 in f64, as PyTorch's kernels do.
//!
//! The gamma family lives in `special_gamma` and the normal distribution and error function in
//! `special_erf`; both are re-exported here, so the op registry and `bessel` keep naming them
//! `special::…`.

// Constants as Cephes publishes them, with more digits than an f64 holds.
#![allow(clippy::excessive_precision)]

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, KernelError, Ty, UnOp};
use super::super::LowerError;
use super::pointwise::{arg, out_ty};
use super::special_erf::{erfcx_of, erfinv_of, log_ndtr_of, ndtri_of, out_elem};
use crate::ir::Node;
use crate::ops::cephes::{I0E_A, I0E_B, I1E_A, I1E_B};

pub use super::special_gamma::{igamma, igammac, mvlgamma, polygamma, zeta};
pub(super) use super::special_gamma::digamma_of;
pub use super::special_erf::ndtr;

pub(super) type K = Result<ExprId, KernelError>;
pub(super) type R = Result<ExprId, LowerError>;

pub(super) const PI: f64 = std::f64::consts::PI;

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
pub(super) fn binary(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], a: &str, b: &str, f: fn(&mut F<'_>, ExprId, ExprId) -> K) -> R {
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
