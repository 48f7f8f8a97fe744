//! float32 `erf` as polynomials instead of `OpenCL.std`'s `erf`.
//!
//! Why: on the OpenCL CPU runtime the library `erf` is the most expensive operation of a GELU
//! kernel (about three times an `exp`) and is the less accurate of the two: at most 4 ulp from
//! float64 `erf`, where these polynomials are at most 1.5 ulp (both measured on every third
//! float32 in [0, 4.5]). Both pieces are straight-line FMAs that the runtime vectorises across
//! work-items; a select picks the piece per element. float64 keeps the library function.
//!
//! Coefficients come from `scripts/fit_erf.py` (weighted least squares on Chebyshev nodes).

use rspirv::spirv::{CLOp, Word};

use super::writer::Writer;
use super::CodegenError;
use crate::lower::kernel::Ty;

/// R(s), lowest degree first: erf(x) = x + x·R(x²) for |x| < 1 (the exact leading `x` leaves
/// only R's small correction to round).
const SMALL: [f32; 7] = [
    0.12837916612625122,
    -0.3761262595653534,
    0.11283610016107559,
    -0.026855407282710075,
    0.005192275159060955,
    -0.0008051759214140475,
    8.010511373868212e-05,
];
/// P(t), lowest degree first: erf(a) = P(a − 2.5) for 1 ≤ a < 3.92.
const LARGE: [f32; 13] = [
    0.9995930790901184,
    0.002178097376599908,
    -0.005446695256978273,
    0.008353048004209995,
    -0.008615144528448582,
    0.006103823892772198,
    -0.0028183835092931986,
    0.0005696547450497746,
    0.0002865576243493706,
    -0.0002785154792945832,
    6.192934233695269e-05,
    2.0965837393305264e-05,
    -9.141928785538767e-06,
];
/// From here on float32 erf is 1 (erf(3.92) = 1 − 1.2e-8, below half an ulp of 1).
const SATURATES: f32 = 3.92;
const LARGE_CENTER: f32 = 2.5;

impl Writer<'_> {
    /// `erf(x)` of a float32 value: ±1 beyond [`SATURATES`], NaN for NaN.
    pub(super) fn erf_f32(&mut self, x: Word) -> Result<Word, CodegenError> {
        let f32t = self.ty_word(Ty::F32);
        let boolt = self.ty_word(Ty::Bool);
        let a = self.cl(f32t, CLOp::fabs, &[x])?;
        let x2 = self.b.f_mul(f32t, None, x, x)?;
        let r = self.horner(&SMALL, x2)?;
        let small = self.cl(f32t, CLOp::fma, &[x, r, x])?;
        // fmin keeps `t` finite for ±inf (and returns 3.92 for NaN, which the last select undoes).
        let sat = self.types.f32(&mut self.b, SATURATES);
        let clamped = self.cl(f32t, CLOp::fmin, &[a, sat])?;
        let center = self.types.f32(&mut self.b, LARGE_CENTER);
        let t = self.b.f_sub(f32t, None, clamped, center)?;
        let p = self.horner(&LARGE, t)?;
        let one = self.types.f32(&mut self.b, 1.0);
        let saturated = self.b.f_ord_greater_than_equal(boolt, None, a, sat)?;
        let p = self.b.select(f32t, None, saturated, one, p)?;
        let large = self.cl(f32t, CLOp::copysign, &[p, x])?;
        let is_small = self.b.f_ord_less_than(boolt, None, a, one)?;
        let y = self.b.select(f32t, None, is_small, small, large)?;
        let nan = self.b.is_nan(boolt, None, x)?;
        Ok(self.b.select(f32t, None, nan, x, y)?)
    }

    /// c[0] + t·(c[1] + t·(…)) with one `fma` per coefficient.
    fn horner(&mut self, c: &[f32], t: Word) -> Result<Word, CodegenError> {
        let f32t = self.ty_word(Ty::F32);
        let (last, rest) = c.split_last().expect("a polynomial has a coefficient");
        let mut acc = self.types.f32(&mut self.b, *last);
        for &ci in rest.iter().rev() {
            let k = self.types.f32(&mut self.b, ci);
            acc = self.cl(f32t, CLOp::fma, &[acc, t, k])?;
        }
        Ok(acc)
    }
}
