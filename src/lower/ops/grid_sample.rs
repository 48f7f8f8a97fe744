//! `grid_sampler` (2-D and 3-D; `grid_sampler_2d`/`_3d` and the generic entry point): bilinear,
//! nearest and (2-D) bicubic sampling with zeros, border or reflection padding, following
//! ATen's `GridSampler.h` step by step as the interpreter (`exec::ops::sample`) does, including
//! its rounding of every intermediate to the input's dtype for float16/bfloat16 (a grid
//! coordinate rounded differently moves the sample by up to a pixel's worth of gradient).
//!
//! Each output element computes its source position from the grid and reads the taps around
//! it, masked outside the input.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId, Ty, UnOp};
use super::super::LowerError;
use crate::ir::{Node, ValueId};

type R = Result<ExprId, LowerError>;

/// What every tap computation needs: the input, its storage (for rounding) and compute type,
/// the padding mode and `align_corners`.
struct Sampler {
    x: ValueId,
    elem: Elem,
    ty: Ty,
    pad: i64,
    align: bool,
}

impl Sampler {
    fn c(&self, cx: &mut Ctx<'_>, v: f64) -> ExprId {
        if self.ty == Ty::F64 {
            cx.kb.f64(v)
        } else {
            cx.kb.f32(v as f32)
        }
    }

    /// `a op b`, rounded to the input's dtype.
    fn op(&self, cx: &mut Ctx<'_>, op: BinOp, a: ExprId, b: ExprId) -> R {
        let v = cx.kb.binary(op, a, b)?;
        Ok(cx.kb.round_to(v, self.elem))
    }

    /// Grid coordinate `g` in [-1, 1] to a pixel position over `size` pixels.
    fn unnormalize(&self, cx: &mut Ctx<'_>, g: ExprId, size: ExprId) -> R {
        let (one, two) = (self.c(cx, 1.0), self.c(cx, 2.0));
        let sf = cx.kb.cast(size, self.ty);
        let p1 = self.op(cx, BinOp::Add, g, one)?;
        if self.align {
            let s1 = cx.kb.binary(BinOp::Sub, sf, one)?;
            let h = self.op(cx, BinOp::Div, p1, two)?;
            self.op(cx, BinOp::Mul, h, s1)
        } else {
            let a = self.op(cx, BinOp::Mul, p1, sf)?;
            let a = self.op(cx, BinOp::Sub, a, one)?;
            self.op(cx, BinOp::Div, a, two)
        }
    }

    /// ATen's `clip_coordinates`: `min(size - 1, max(x, 0))` with `std::min`/`std::max`'s
    /// comparisons (a NaN position clips to the last pixel).
    fn clip(&self, cx: &mut Ctx<'_>, x: ExprId, size: ExprId) -> R {
        let (zero, one) = (self.c(cx, 0.0), self.c(cx, 1.0));
        let sf = cx.kb.cast(size, self.ty);
        let lim = cx.kb.binary(BinOp::Sub, sf, one)?;
        let neg = cx.kb.cmp(CmpOp::Lt, x, zero)?;
        let v = cx.kb.select(neg, zero, x)?;
        let below = cx.kb.cmp(CmpOp::Lt, v, lim)?;
        Ok(cx.kb.select(below, v, lim)?)
    }

    /// ATen's `reflect_coordinates(x, twice_low, twice_high)`: `x` folded into
    /// `[low, high]` by reflections at its ends.
    fn reflect(&self, cx: &mut Ctx<'_>, x: ExprId, twice_low: ExprId, twice_high: ExprId) -> R {
        let (half, zero, two) = (self.c(cx, 0.5), self.c(cx, 0.0), self.c(cx, 2.0));
        let kb = &mut cx.kb;
        let degenerate = kb.cmp(CmpOp::Eq, twice_low, twice_high)?;
        let min = kb.binary(BinOp::Mul, twice_low, half)?;
        let span = kb.binary(BinOp::Sub, twice_high, twice_low)?;
        let span = kb.binary(BinOp::Mul, span, half)?;
        let d = kb.binary(BinOp::Sub, x, min)?;
        let d = kb.unary(UnOp::Abs, d);
        let extra = kb.binary(BinOp::Rem, d, span)?;
        let flips = kb.binary(BinOp::Div, d, span)?;
        let flips = kb.unary(UnOp::Floor, flips);
        let parity = kb.binary(BinOp::Rem, flips, two)?;
        let even = kb.cmp(CmpOp::Eq, parity, zero)?;
        let fwd = kb.binary(BinOp::Add, extra, min)?;
        let back = kb.binary(BinOp::Sub, span, extra)?;
        let back = kb.binary(BinOp::Add, back, min)?;
        let r = kb.select(even, fwd, back)?;
        Ok(kb.select(degenerate, zero, r)?)
    }

    /// The padding mode applied to a pixel position (`compute_coordinates`).
    fn pad_coord(&self, cx: &mut Ctx<'_>, x: ExprId, size: ExprId) -> R {
        match self.pad {
            1 => self.clip(cx, x, size),
            2 => {
                let sf = cx.kb.cast(size, self.ty);
                let (one, two) = (self.c(cx, 1.0), self.c(cx, 2.0));
                let hi = cx.kb.binary(BinOp::Mul, sf, two)?;
                let (lo, hi) = if self.align {
                    let hi = cx.kb.binary(BinOp::Sub, hi, two)?;
                    (self.c(cx, 0.0), hi)
                } else {
                    let m1 = self.c(cx, -1.0);
                    (m1, cx.kb.binary(BinOp::Sub, hi, one)?)
                };
                let r = self.reflect(cx, x, lo, hi)?;
                self.clip(cx, r, size)
            }
            _ => Ok(x),
        }
    }

    /// ATen's `safe_downgrade_to_int_range`: a position no integer holds (infinite, NaN,
    /// beyond i32) becomes -100, outside every image, so it reads nothing.
    fn safe(&self, cx: &mut Ctx<'_>, x: ExprId) -> R {
        let (lo, hi, out) = (self.c(cx, i32::MIN as f64), self.c(cx, (i32::MAX - 1) as f64), self.c(cx, -100.0));
        let kb = &mut cx.kb;
        let ge = kb.cmp(CmpOp::Ge, x, lo)?;
        let le = kb.cmp(CmpOp::Le, x, hi)?;
        let ok = kb.and(ge, le)?;
        Ok(kb.select(ok, x, out)?)
    }

    /// The input at integer pixel `p` (x, y[, z] order) of image `(n, c)`, zero outside.
    fn value(&self, cx: &mut Ctx<'_>, n: ExprId, c: ExprId, p: &[ExprId], sp: &[ExprId]) -> R {
        let mut mask = cx.kb.bool(true);
        for (&q, &s) in p.iter().zip(sp) {
            let ok = super::conv::in_range(cx, q, s)?;
            mask = cx.kb.and(mask, ok)?;
        }
        let mut at = vec![n, c];
        at.extend(p.iter().rev());
        let zero = self.c(cx, 0.0);
        super::conv::read_masked(cx, self.x, &at, mask, zero)
    }
}

/// `grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)`: modes 0
/// bilinear, 1 nearest, 2 bicubic (2-D only); padding 0 zeros, 1 border, 2 reflection.
pub fn grid_sampler(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (mode, pad, align) = (cx.int_or(node, "interpolation_mode", 0)?, cx.int_or(node, "padding_mode", 0)?, cx.bool_or(node, "align_corners", false)?);
    if !(0..=2).contains(&mode) || !(0..=2).contains(&pad) {
        return Err(cx.err(node, format!("interpolation mode {mode} with padding mode {pad} (modes are 0..=2)")));
    }
    let (x, grid) = (cx.tensor(node, "input")?, cx.tensor(node, "grid")?);
    let xs = cx.ksizes(x)?;
    let k = match xs.len().checked_sub(2) {
        Some(k @ 2..=3) if idx.len() == xs.len() => k,
        _ => return Err(cx.err(node, format!("grid sampling of a {}-D input", xs.len()))),
    };
    if mode == 2 && k == 3 {
        return Err(cx.err(node, "bicubic grid sampling of a 5-D (volumetric) input: F.grid_sample refuses it, and what aten.grid_sampler computes for it is not reproduced here"));
    }
    let dtype = cx.meta(x)?.dtype;
    let elem = Elem::from_dtype(dtype).ok_or_else(|| cx.err(node, format!("grid sampling of {}", dtype.name())))?;
    let ty = match elem.ty() {
        Ty::F64 => Ty::F64,
        Ty::F32 => Ty::F32,
        t => return Err(cx.err(node, format!("grid sampling of {t:?} values (it takes floats)"))),
    };
    let s = Sampler { x, elem, ty, pad, align };
    let (n, c) = (idx[0], idx[1]);
    // Spatial sizes in (x, y, z) order: the grid's last dim lists x (width) first.
    let sp: Vec<ExprId> = xs[2..].iter().rev().copied().collect();
    let mut raw = Vec::with_capacity(k);
    let mut src = Vec::with_capacity(k);
    for (d, &size) in sp.iter().enumerate().take(k) {
        let mut at = vec![n];
        at.extend(&idx[2..]);
        at.push(cx.kb.i64(d as i64));
        let g = cx.read(grid, &at)?;
        let g = cx.kb.cast(g, ty);
        let r = s.unnormalize(cx, g, size)?;
        let p = s.pad_coord(cx, r, size)?;
        src.push(s.safe(cx, p)?);
        raw.push(r);
    }
    match mode {
        1 => {
            // nearbyint: round half to even.
            let p: Vec<ExprId> = src.iter().map(|&v| {
                let r = cx.kb.unary(UnOp::Rint, v);
                cx.kb.cast(r, Ty::I64)
            }).collect();
            s.value(cx, n, c, &p, &sp)
        }
        2 => bicubic(cx, &s, n, c, &raw, &sp),
        _ => {
            let base: Vec<ExprId> = src.iter().map(|&v| cx.kb.unary(UnOp::Floor, v)).collect();
            let one = s.c(cx, 1.0);
            let mut acc = s.c(cx, 0.0);
            for corner in 0..(1usize << k) {
                let mut w = s.c(cx, 1.0);
                let mut p = Vec::with_capacity(k);
                for d in 0..k {
                    let hi = (corner >> d) & 1 == 1;
                    let t = s.op(cx, BinOp::Sub, src[d], base[d])?;
                    let f = if hi { t } else { s.op(cx, BinOp::Sub, one, t)? };
                    w = s.op(cx, BinOp::Mul, w, f)?;
                    let b = cx.kb.cast(base[d], Ty::I64);
                    let off = cx.kb.i64(i64::from(hi));
                    p.push(cx.kb.binary(BinOp::Add, b, off)?);
                }
                let v = s.value(cx, n, c, &p, &sp)?;
                let wv = s.op(cx, BinOp::Mul, w, v)?;
                acc = s.op(cx, BinOp::Add, acc, wv)?;
            }
            Ok(acc)
        }
    }
}

/// Bicubic sampling: Keys' cubic convolution (A = -0.75) over the 4×4 taps around the
/// unpadded source position, each tap's position padded on its own (`get_value_bounded`).
fn bicubic(cx: &mut Ctx<'_>, s: &Sampler, n: ExprId, c: ExprId, raw: &[ExprId], sp: &[ExprId]) -> R {
    let mut floors = Vec::with_capacity(2);
    let mut coeffs = Vec::with_capacity(2);
    for &r in &raw[..2] {
        let f = cx.kb.unary(UnOp::Floor, r);
        let t = cx.kb.binary(BinOp::Sub, r, f)?;
        floors.push(f);
        coeffs.push(cubic_coeffs(cx, s, t)?);
    }
    let mut acc = s.c(cx, 0.0);
    for (j, &wy) in coeffs[1].clone().iter().enumerate() {
        for (i, &wx) in coeffs[0].clone().iter().enumerate() {
            let mut p = Vec::with_capacity(2);
            for (d, off) in [(0, i), (1, j)] {
                let o = s.c(cx, off as f64 - 1.0);
                let q = cx.kb.binary(BinOp::Add, floors[d], o)?;
                let q = s.pad_coord(cx, q, sp[d])?;
                p.push(cx.kb.cast(q, Ty::I64));
            }
            let v = s.value(cx, n, c, &p, sp)?;
            let t = cx.kb.binary(BinOp::Mul, v, wx)?;
            let t = cx.kb.binary(BinOp::Mul, t, wy)?;
            acc = cx.kb.binary(BinOp::Add, acc, t)?;
        }
    }
    Ok(acc)
}

/// The weights of the taps at distances `t + 1`, `t`, `1 - t`, `2 - t`.
fn cubic_coeffs(cx: &mut Ctx<'_>, s: &Sampler, t: ExprId) -> Result<[ExprId; 4], LowerError> {
    const A: f64 = -0.75;
    let (one, two) = (s.c(cx, 1.0), s.c(cx, 2.0));
    let d0 = cx.kb.binary(BinOp::Add, t, one)?;
    let d2 = cx.kb.binary(BinOp::Sub, one, t)?;
    let d3 = cx.kb.binary(BinOp::Sub, two, t)?;
    // ((A + 2)·x - (A + 3))·x² + 1 near, ((A·x - 5A)·x + 8A)·x - 4A far.
    let near = |cx: &mut Ctx<'_>, x: ExprId| -> R {
        let (a2, a3, one) = (s.c(cx, A + 2.0), s.c(cx, A + 3.0), s.c(cx, 1.0));
        let p = cx.kb.binary(BinOp::Mul, a2, x)?;
        let p = cx.kb.binary(BinOp::Sub, p, a3)?;
        let p = cx.kb.binary(BinOp::Mul, p, x)?;
        let p = cx.kb.binary(BinOp::Mul, p, x)?;
        Ok(cx.kb.binary(BinOp::Add, p, one)?)
    };
    let far = |cx: &mut Ctx<'_>, x: ExprId| -> R {
        let (a, a5, a8, a4) = (s.c(cx, A), s.c(cx, 5.0 * A), s.c(cx, 8.0 * A), s.c(cx, 4.0 * A));
        let p = cx.kb.binary(BinOp::Mul, a, x)?;
        let p = cx.kb.binary(BinOp::Sub, p, a5)?;
        let p = cx.kb.binary(BinOp::Mul, p, x)?;
        let p = cx.kb.binary(BinOp::Add, p, a8)?;
        let p = cx.kb.binary(BinOp::Mul, p, x)?;
        Ok(cx.kb.binary(BinOp::Sub, p, a4)?)
    };
    Ok([far(cx, d0)?, near(cx, t)?, near(cx, d2)?, far(cx, d3)?])
}
