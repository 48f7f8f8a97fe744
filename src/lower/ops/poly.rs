//! Orthogonal polynomials `P_n(x)` whose degree `n` is a tensor (`special_chebyshev_polynomial_t`
//! and friends): the three-term recurrence runs as a state loop of `n − 1` steps per element,
//! carrying `(P_{k−1}, P_k)`. A negative degree gives 0, a NaN degree NaN.

use super::super::ctx::Ctx;
use super::super::kernel::{CmpOp, ExprId, Ty, UnOp};
use super::super::LowerError;
use super::pointwise::arg;
use super::special::F;
use crate::ir::Node;

type R = Result<ExprId, LowerError>;
type K = Result<ExprId, super::super::kernel::KernelError>;

/// Which polynomial family, and whether its argument is shifted to `2x − 1`.
#[derive(Clone, Copy)]
enum Family {
    ChebyshevT,
    ChebyshevU,
    ChebyshevV,
    ChebyshevW,
    HermiteH,
    HermiteHe,
    Laguerre,
    Legendre,
}

impl Family {
    /// `P_0`, `P_1` at `x`.
    fn start(self, m: &mut F<'_>, x: ExprId) -> Result<(ExprId, ExprId), super::super::kernel::KernelError> {
        let one = m.c(1.0);
        let p1 = match self {
            Family::ChebyshevT | Family::HermiteHe | Family::Legendre => x,
            Family::ChebyshevU | Family::HermiteH => m.mulc(x, 2.0)?,
            Family::ChebyshevV => {
                let t = m.mulc(x, 2.0)?;
                m.addc(t, -1.0)?
            }
            Family::ChebyshevW => {
                let t = m.mulc(x, 2.0)?;
                m.addc(t, 1.0)?
            }
            Family::Laguerre => m.rsubc(1.0, x)?,
        };
        Ok((one, p1))
    }

    /// `P_{k+1}` from `a = P_{k−1}`, `b = P_k` and `k` (as a float).
    fn step(self, m: &mut F<'_>, x: ExprId, a: ExprId, b: ExprId, k: ExprId) -> K {
        match self {
            Family::ChebyshevT | Family::ChebyshevU | Family::ChebyshevV | Family::ChebyshevW => {
                let t = m.mulc(x, 2.0)?;
                let t = m.mul(t, b)?;
                m.sub(t, a)
            }
            Family::HermiteH => {
                let t = m.mulc(x, 2.0)?;
                let t = m.mul(t, b)?;
                let u = m.mulc(k, 2.0)?;
                let u = m.mul(u, a)?;
                m.sub(t, u)
            }
            Family::HermiteHe => {
                // PyTorch's CPU build contracts `x·q − k·p` into `fma(x, q, −k·p)`.
                let u = m.mul(k, a)?;
                let u = m.un(UnOp::Neg, u);
                m.kb.mul_add(x, b, u)
            }
            Family::Laguerre => {
                let c = m.mulc(k, 2.0)?;
                let c = m.addc(c, 1.0)?;
                let c = m.sub(c, x)?;
                let t = m.mul(c, b)?;
                let u = m.mul(k, a)?;
                let t = m.sub(t, u)?;
                let d = m.addc(k, 1.0)?;
                m.div(t, d)
            }
            Family::Legendre => {
                let c = m.mulc(k, 2.0)?;
                let c = m.addc(c, 1.0)?;
                let c = m.mul(c, x)?;
                let t = m.mul(c, b)?;
                let u = m.mul(k, a)?;
                let t = m.sub(t, u)?;
                let d = m.addc(k, 1.0)?;
                m.div(t, d)
            }
        }
    }
}

fn poly(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], family: Family, shifted: bool) -> R {
    let x = arg(cx, node, "x", idx)?;
    let n = arg(cx, node, "n", idx)?;
    let ty = cx.kb.ty(x);
    if !ty.is_float() {
        return Err(cx.err(node, "expected a float result"));
    }
    let n_nan = match cx.kb.ty(n) {
        t if t.is_float() => Some(cx.kb.cmp(CmpOp::Ne, n, n)?),
        _ => None,
    };
    let m = &mut F { kb: &mut cx.kb, ty };
    let x = if shifted {
        let t = m.mulc(x, 2.0)?;
        m.addc(t, -1.0)?
    } else {
        x
    };
    let (p0, p1) = family.start(m, x)?;
    // The degree as an integer (NaN handled apart; a huge one would loop as long in PyTorch).
    let ni = match n_nan {
        Some(nan) => {
            let zero = m.c(0.0);
            let safe = m.sel(nan, zero, n)?;
            m.kb.cast(safe, Ty::I64)
        }
        None => n,
    };
    let var = m.kb.fresh_var()?;
    let (a, b) = (m.kb.carried(var, 0, ty), m.kb.carried(var, 1, ty));
    let j = m.kb.var(var);
    let one_i = m.kb.i64(1);
    let k = m.kb.binary(super::super::kernel::BinOp::Add, j, one_i)?;
    let k = m.kb.cast(k, ty);
    let c = family.step(m, x, a, b, k)?;
    let steps = m.kb.binary(super::super::kernel::BinOp::Sub, ni, one_i)?;
    let zero_i = m.kb.i64(0);
    let steps = m.kb.binary(super::super::kernel::BinOp::Max, steps, zero_i)?;
    let r = m.kb.iterate(var, steps, vec![p0, p1], vec![b, c])?;
    let zero = m.c(0.0);
    let is0 = m.kb.cmp(CmpOp::Eq, ni, zero_i)?;
    let mut out = m.sel(is0, p0, r[1])?;
    let neg = m.kb.cmp(CmpOp::Lt, ni, zero_i)?;
    out = m.sel(neg, zero, out)?;
    if let Some(nan) = n_nan {
        out = m.selc(nan, f64::NAN, out)?;
    }
    Ok(out)
}

macro_rules! polys {
    ($($name:ident => $family:ident, $shifted:expr;)*) => {
        $(pub fn $name(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
            poly(cx, node, idx, Family::$family, $shifted)
        })*
    };
}

polys! {
    chebyshev_t => ChebyshevT, false;
    chebyshev_u => ChebyshevU, false;
    chebyshev_v => ChebyshevV, false;
    chebyshev_w => ChebyshevW, false;
    shifted_chebyshev_t => ChebyshevT, true;
    shifted_chebyshev_u => ChebyshevU, true;
    shifted_chebyshev_v => ChebyshevV, true;
    shifted_chebyshev_w => ChebyshevW, true;
    hermite_h => HermiteH, false;
    hermite_he => HermiteHe, false;
    laguerre_l => Laguerre, false;
    legendre_p => Legendre, false;
}
