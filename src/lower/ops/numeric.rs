//! Integer and float-format helpers: `gcd`/`lcm` (Euclid's algorithm as a state loop) and
//! `frexp` (mantissa and exponent, with exact power-of-two scaling).

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, KernelError, Ty, UnOp};
use super::super::LowerError;
use super::pointwise::{arg, out_ty};
use crate::ir::Node;

type R = Result<ExprId, LowerError>;

/// Steps Euclid's algorithm may take on operands of `bits` bits: by Lamé's theorem at most
/// `log_φ(2^bits) + 2` (consecutive Fibonacci numbers are the worst case), rounded up.
fn euclid_steps(bits: usize) -> i64 {
    (bits as f64 * std::f64::consts::LN_2 / 1.618_033_988_749_895_f64.ln()).ceil() as i64 + 3
}

/// `gcd(|a|, |b|)` of two i64 values by Euclid's algorithm, a fixed number of remainder steps
/// that stand still once the divisor is 0 (a zero divisor is never divided by: both sides of a
/// select run).
fn euclid(kb: &mut KernelBuilder, a: ExprId, b: ExprId, steps: i64) -> Result<ExprId, KernelError> {
    let (a, b) = (kb.unary(UnOp::Abs, a), kb.unary(UnOp::Abs, b));
    let var = kb.fresh_var()?;
    let (x, y) = (kb.carried(var, 0, Ty::I64), kb.carried(var, 1, Ty::I64));
    let (zero, one) = (kb.i64(0), kb.i64(1));
    let done = kb.cmp(CmpOp::Eq, y, zero)?;
    let divisor = kb.select(done, one, y)?;
    let r = kb.binary(BinOp::Rem, x, divisor)?;
    let nx = kb.select(done, x, y)?;
    let ny = kb.select(done, zero, r)?;
    let n = kb.i64(steps);
    Ok(kb.iterate(var, n, vec![a, b], vec![nx, ny])?[0])
}

/// The two integer operands of `gcd`/`lcm` and the step bound of the output's integer type.
fn int_pair(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<(ExprId, ExprId, i64), LowerError> {
    if out_ty(cx, node)? != Ty::I64 {
        return Err(cx.err(node, "gcd and lcm take integer tensors"));
    }
    let (a, b) = (arg(cx, node, "self", idx)?, arg(cx, node, "other", idx)?);
    let out = *node.outputs.first().ok_or_else(|| cx.err(node, "has no outputs"))?;
    let bits = 8 * cx.meta(out)?.dtype.size_bytes();
    Ok((a, b, euclid_steps(bits)))
}

/// `gcd(self, other)`: non-negative, `gcd(0, 0) = 0`.
pub fn gcd(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (a, b, steps) = int_pair(cx, node, idx)?;
    Ok(euclid(&mut cx.kb, a, b, steps)?)
}

/// `lcm(self, other) = |a / gcd · b|` (0 when both are 0), wrapping as PyTorch's does.
pub fn lcm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (a, b, steps) = int_pair(cx, node, idx)?;
    let kb = &mut cx.kb;
    let g = euclid(kb, a, b, steps)?;
    let (zero, one) = (kb.i64(0), kb.i64(1));
    let none = kb.cmp(CmpOp::Eq, g, zero)?;
    let safe = kb.select(none, one, g)?;
    let q = kb.binary(BinOp::Div, a, safe)?;
    let p = kb.binary(BinOp::Mul, q, b)?;
    let p = kb.unary(UnOp::Abs, p);
    Ok(kb.select(none, zero, p)?)
}

/// `x · 2^-e` for an integer `e` with `|e| < 2^bits` (`bits >= 2`), exactly: one select per bit of `|e|`
/// multiplies by the constant power of two of that bit. Every factor scales the same way, so
/// the running value moves monotonically towards the (representable) result and never
/// overflows or underflows on the way, where `exp2(-e)` itself could (2^149 for a float32
/// subnormal) and need not be exact.
fn scale_by_pow2(kb: &mut KernelBuilder, x: ExprId, e: ExprId, bits: u32) -> Result<ExprId, KernelError> {
    let zero = kb.i64(0);
    let down = kb.cmp(CmpOp::Gt, e, zero)?;
    let mag = kb.unary(UnOp::Abs, e);
    let mut m = x;
    for k in 0..bits {
        let bit = kb.i64(1 << k);
        let set = kb.binary(BinOp::BitAnd, mag, bit)?;
        let set = kb.cmp(CmpOp::Ne, set, zero)?;
        // The top bit's power (2^128, 2^1024) is out of range: two multiplications by its root.
        let (p, reps) = if k + 1 == bits { (1 << (k - 1), 2) } else { (1 << k, 1) };
        let shrink = kb.float_like(2f64.powi(-p), x);
        let grow = kb.float_like(2f64.powi(p), x);
        let factor = kb.select(down, shrink, grow)?;
        let mut scaled = m;
        for _ in 0..reps {
            scaled = kb.binary(BinOp::Mul, scaled, factor)?;
        }
        m = kb.select(set, scaled, m)?;
    }
    Ok(m)
}

/// `frexp(self)`: `x = m · 2^e` with `0.5 <= |m| < 1`; zero, infinities and NaN give `m = x`,
/// `e = 0`. The exponent starts from `floor(log2 |x|) + 1`, which may land one off next to a
/// power of two; one halving or doubling step corrects it.
pub fn frexp(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let x = cx.read(v, idx)?;
    let ty = match cx.kb.ty(x) {
        Ty::F64 => Ty::F64,
        Ty::F32 => Ty::F32,
        t => return Err(cx.err(node, format!("frexp of a {t:?} tensor (it takes floats)"))),
    };
    let kb = &mut cx.kb;
    let ax = kb.unary(UnOp::Abs, x);
    let (zero, one, inf) = (kb.float_like(0.0, x), kb.float_like(1.0, x), kb.float_like(f64::INFINITY, x));
    let is_zero = kb.cmp(CmpOp::Eq, x, zero)?;
    let finite = kb.cmp(CmpOp::Lt, ax, inf)?;
    let not_finite = kb.unary(UnOp::Not, finite);
    let special = kb.binary(BinOp::Or, is_zero, not_finite)?;
    // Subnormals are scaled into the normal range first (exactly), so that no step depends on
    // how a device treats them; their exponent is taken back at the end.
    let (min_normal, lift) = if ty == Ty::F64 { (2f64.powi(-1022), 128) } else { (2f64.powi(-126), 64) };
    let (min_normal, lift_f) = (kb.float_like(min_normal, x), kb.float_like(2f64.powi(lift), x));
    let sub = kb.cmp(CmpOp::Lt, ax, min_normal)?;
    let lifted = kb.binary(BinOp::Mul, x, lift_f)?;
    let sx = kb.select(sub, lifted, x)?;
    let sx = kb.select(special, one, sx)?;
    let ax = kb.unary(UnOp::Abs, sx);
    let l = kb.unary(UnOp::Log2, ax);
    let l = kb.unary(UnOp::Floor, l);
    let l = kb.cast(l, Ty::I64);
    let i1 = kb.i64(1);
    let e = kb.binary(BinOp::Add, l, i1)?;
    // Exponents of finite normal values lie within ±1025 (f64) or ±129 (f32).
    let bits = if ty == Ty::F64 { 11 } else { 8 };
    let m = scale_by_pow2(kb, sx, e, bits)?;
    let (lift_i, zero_i) = (kb.i64(lift as i64), kb.i64(0));
    let back = kb.select(sub, lift_i, zero_i)?;
    let am = kb.unary(UnOp::Abs, m);
    let (half, two) = (kb.float_like(0.5, x), kb.float_like(2.0, x));
    let big = kb.cmp(CmpOp::Ge, am, one)?;
    let small = kb.cmp(CmpOp::Lt, am, half)?;
    let halved = kb.binary(BinOp::Mul, m, half)?;
    let doubled = kb.binary(BinOp::Mul, m, two)?;
    let m = kb.select(big, halved, m)?;
    let m = kb.select(small, doubled, m)?;
    let up = kb.binary(BinOp::Add, e, i1)?;
    let down = kb.binary(BinOp::Sub, e, i1)?;
    let e = kb.select(big, up, e)?;
    let e = kb.select(small, down, e)?;
    let e = kb.binary(BinOp::Sub, e, back)?;
    if out == 1 {
        let z = kb.i64(0);
        return Ok(kb.select(special, z, e)?);
    }
    Ok(kb.select(special, x, m)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn euclid_step_bounds_cover_the_worst_case() {
        // Consecutive Fibonacci numbers below 2^bits need the most steps.
        for bits in [8usize, 16, 32, 63] {
            let (mut a, mut b) = (1u128, 1u128);
            while a + b < 1u128 << bits {
                (a, b) = (b, a + b);
            }
            let (mut x, mut y, mut steps) = (b, a, 0);
            while y != 0 {
                (x, y) = (y, x % y);
                steps += 1;
            }
            assert!(steps <= euclid_steps(bits), "{bits} bits: {steps} steps");
            let _ = x;
        }
    }
}
