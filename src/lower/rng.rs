//! Philox4x32-10 as kernel expressions: the same rounds, constants and word layout as the
//! interpreter's reference (`crate::ops::philox`), built from 32-bit word arithmetic
//! ([`Ty::U32`]: `MulHi`, wrapping `Mul` and `Add`, `BitXor`). A draw depends on the launch's
//! seed, the node's stream and the element's index only, never on the work-item that computes
//! it. Uniforms and normals from the words follow `crate::ops::sample`.

use super::kernel::{BinOp, ExprId, KernelBuilder, KernelError, RngArg, Ty, UnOp};
use crate::ops::philox::{M, ROUNDS, W};

type R<T> = Result<T, KernelError>;

/// The low and high words of an i64.
fn words(kb: &mut KernelBuilder, x: ExprId) -> R<[ExprId; 2]> {
    let lo = kb.cast(x, Ty::U32);
    let thirty_two = kb.i64(32);
    // The arithmetic shift's sign bits fall above the truncated word.
    let hi = kb.binary(BinOp::Shr, x, thirty_two)?;
    Ok([lo, kb.cast(hi, Ty::U32)])
}

fn xor3(kb: &mut KernelBuilder, a: ExprId, b: ExprId, c: ExprId) -> R<ExprId> {
    let ab = kb.binary(BinOp::BitXor, a, b)?;
    kb.binary(BinOp::BitXor, ab, c)
}

/// The four words of draw `index` of stream `stream` (both i64) under the launch's seed.
pub fn philox(kb: &mut KernelBuilder, index: ExprId, stream: ExprId) -> R<[ExprId; 4]> {
    let seed = kb.rng(RngArg::Seed);
    let mut key = words(kb, seed)?;
    let [i0, i1] = words(kb, index)?;
    let [s0, s1] = words(kb, stream)?;
    let mut c = [i0, i1, s0, s1];
    let (m0, m1) = (kb.u32(M[0]), kb.u32(M[1]));
    let (w0, w1) = (kb.u32(W[0]), kb.u32(W[1]));
    for round in 0..ROUNDS {
        if round > 0 {
            key = [kb.binary(BinOp::Add, key[0], w0)?, kb.binary(BinOp::Add, key[1], w1)?];
        }
        let (hi0, lo0) = (kb.binary(BinOp::MulHi, m0, c[0])?, kb.binary(BinOp::Mul, m0, c[0])?);
        let (hi1, lo1) = (kb.binary(BinOp::MulHi, m1, c[2])?, kb.binary(BinOp::Mul, m1, c[2])?);
        c = [xor3(kb, hi1, c[1], key[0])?, lo1, xor3(kb, hi0, c[3], key[1])?, lo0];
    }
    Ok(c)
}

/// `x >> n` of a word, as `ty` (exact: at most 32 bits).
fn top(kb: &mut KernelBuilder, x: ExprId, n: u32, ty: Ty) -> R<ExprId> {
    let n = kb.u32(n);
    let s = kb.binary(BinOp::Shr, x, n)?;
    Ok(kb.cast(s, ty))
}

/// Uniform in `[0, 1)` of float type `ty` from the words `b`: 24 bits of word 0 in f32, 53 bits
/// of words 0 and 1 in f64 (`ops::sample::uniform`).
pub fn uniform(kb: &mut KernelBuilder, b: &[ExprId; 4], ty: Ty) -> R<ExprId> {
    if ty == Ty::F64 {
        let hi = kb.cast(b[0], Ty::F64);
        let lo = top(kb, b[1], 11, Ty::F64)?;
        let shift = kb.f64((1u64 << 21) as f64);
        let hi = kb.binary(BinOp::Mul, hi, shift)?;
        let sum = kb.binary(BinOp::Add, hi, lo)?;
        let scale = kb.f64(1.0 / (1u64 << 53) as f64);
        kb.binary(BinOp::Mul, sum, scale)
    } else {
        let x = top(kb, b[0], 8, Ty::F32)?;
        let scale = kb.f32(1.0 / (1u32 << 24) as f32);
        kb.binary(BinOp::Mul, x, scale)
    }
}

/// Uniform in the open interval `(0, 1)` (`ops::sample::open_uniform`): an odd multiple of
/// 2⁻²⁴ from word 0's top 23 bits in f32, of 2⁻⁵³ from 52 bits of words 0 and 1 in f64; exact.
pub fn open_uniform(kb: &mut KernelBuilder, b: &[ExprId; 4], ty: Ty) -> R<ExprId> {
    let (k, bits) = if ty == Ty::F64 {
        let hi = kb.cast(b[0], Ty::F64);
        let lo = top(kb, b[1], 12, Ty::F64)?;
        let shift = kb.f64((1u64 << 20) as f64);
        let hi = kb.binary(BinOp::Mul, hi, shift)?;
        (kb.binary(BinOp::Add, hi, lo)?, 53)
    } else {
        (top(kb, b[0], 9, Ty::F32)?, 24)
    };
    let two = kb.float_like(2.0, k);
    let even = kb.binary(BinOp::Mul, k, two)?;
    let one = kb.float_like(1.0, k);
    let odd = kb.binary(BinOp::Add, even, one)?;
    let scale = kb.float_like(1.0 / (1u64 << bits) as f64, k);
    kb.binary(BinOp::Mul, odd, scale)
}

/// A standard normal by Box–Muller (`ops::sample::normal`): `√(−2 ln(1 − u₁)) · cos(2π u₂)`.
pub fn normal(kb: &mut KernelBuilder, b: &[ExprId; 4], ty: Ty) -> R<ExprId> {
    let (u1, u2) = if ty == Ty::F64 {
        (uniform(kb, b, ty)?, uniform(kb, &[b[2], b[3], b[2], b[3]], ty)?)
    } else {
        (uniform(kb, b, ty)?, uniform(kb, &[b[1], b[1], b[1], b[1]], ty)?)
    };
    let one = kb.float_like(1.0, u1);
    let q = kb.binary(BinOp::Sub, one, u1)?;
    let ln = kb.unary(UnOp::Log, q);
    let m2 = kb.float_like(-2.0, u1);
    let r2 = kb.binary(BinOp::Mul, m2, ln)?;
    let r = kb.unary(UnOp::Sqrt, r2);
    let tau = kb.float_like(2.0 * std::f64::consts::PI, u2);
    let angle = kb.binary(BinOp::Mul, tau, u2)?;
    let c = kb.unary(UnOp::Cos, angle);
    kb.binary(BinOp::Mul, r, c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::KExpr;

    /// Evaluates word expressions of a kernel whose only free inputs are the seed argument and
    /// constants: the builder's Philox against the reference, without a device.
    fn eval(kb: &KernelBuilder, e: ExprId, seed: i64) -> i128 {
        match kb.get(e).clone() {
            KExpr::U32(v) => i128::from(v),
            KExpr::I64(v) => i128::from(v),
            KExpr::Rng(RngArg::Seed) => i128::from(seed),
            KExpr::Cast(a, Ty::U32) => eval(kb, a, seed) & 0xffff_ffff,
            KExpr::Binary(op, a, b) => {
                let (x, y) = (eval(kb, a, seed), eval(kb, b, seed));
                let word = kb.ty(e) == Ty::U32;
                let r = match op {
                    BinOp::Add => x + y,
                    BinOp::Mul => x * y,
                    BinOp::MulHi => (x * y) >> 32,
                    BinOp::BitXor => x ^ y,
                    BinOp::Shr => x >> y,
                    other => panic!("{other:?} in a Philox expression"),
                };
                if word { r & 0xffff_ffff } else { r }
            }
            other => panic!("{other:?} in a Philox expression"),
        }
    }

    #[test]
    fn the_kernel_rounds_compute_the_reference_philox() {
        for (seed, index, stream) in [(0i64, 0i64, 0i64), (-1, 0x1_2345_6789, 3), (0x0123_4567_89ab_cdef, 77, 0x7fff_ffff_ffff)] {
            let mut kb = KernelBuilder::new(0);
            let (i, s) = (kb.i64(index), kb.i64(stream));
            let out = philox(&mut kb, i, s).unwrap();
            let got: Vec<u32> = out.iter().map(|e| eval(&kb, *e, seed) as u32).collect();
            let want = crate::ops::philox::philox4x32_10(crate::ops::philox::counter(index as u64, stream as u64), crate::ops::philox::key(seed as u64));
            assert_eq!(got, want, "seed {seed:#x} index {index:#x} stream {stream:#x}");
        }
    }

    #[test]
    fn words_are_typed() {
        let mut kb = KernelBuilder::new(1);
        let i = kb.var(crate::lower::kernel::VarId(0));
        let s = kb.rng(RngArg::Offset);
        let out = philox(&mut kb, i, s).unwrap();
        assert!(out.iter().all(|e| kb.ty(*e) == Ty::U32));
        // Word arithmetic refuses float ops, and `MulHi` refuses non-words.
        let f = kb.f32(1.0);
        assert!(kb.binary(BinOp::MulHi, i, i).is_err());
        assert!(kb.binary(BinOp::Pow, out[0], out[1]).is_err());
        assert!(kb.binary(BinOp::Add, out[0], f).is_err());
        let (u, n) = (uniform(&mut kb, &out, Ty::F32).unwrap(), normal(&mut kb, &out, Ty::F64).unwrap());
        assert_eq!((kb.ty(u), kb.ty(n)), (Ty::F32, Ty::F64));
    }
}
