//! `_upsample_bilinear2d_aa`: antialiased bilinear resizing, ATen's separable CPU algorithm
//! (`UpSampleKernel.cpp`, after Pillow): one 1-D pass per spatial dim whose size changes, the
//! width first, then the height, each output position a normalized triangle filter over the
//! input positions within `support` of its centre. The filter widens with the scale when
//! downsampling, which is what antialiases.
//!
//! Numerics follow ATen's types: float32 tensors compute the weights and sums in float32
//! (with the same double-precision steps C++'s promotions take), float64 ones in float64, and
//! uint8 images convert the (double) weights to int16 fixed point with a per-axis precision,
//! sum in integers, and round and saturate every pass to uint8.
//!
//! The weight formulas live here once; the kernel lowering (`lower::ops::antialias`) builds the
//! same arithmetic as kernel expressions and takes the fixed-point precision from
//! [`int16_precision`].

use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// The bilinear filter's tap count before widening.
const INTERP_SIZE: f64 = 2.0;

/// How one axis's weights are computed: in float32 (`narrow`) or float64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Axis {
    pub input: usize,
    pub output: usize,
    /// Input positions per output position (`area_pixel_compute_scale`).
    pub scale: f64,
    /// Half-width of the filter in input positions.
    pub support: f64,
    /// The filter's argument scale: `1 / scale` when downsampling, else 1.
    pub invscale: f64,
    /// Most taps one output position takes.
    pub max_taps: usize,
    pub narrow: bool,
}

impl Axis {
    /// `input → output` along one dim, `given` the scale factor argument (if any).
    pub(crate) fn new(input: usize, output: usize, align: bool, given: Option<f64>, narrow: bool) -> Axis {
        let f = |x: f64| if narrow { x as f32 as f64 } else { x };
        let scale = if align {
            if output > 1 {
                f(f(input as f64 - 1.0) / (output as f64 - 1.0))
            } else {
                0.0
            }
        } else {
            match given {
                Some(s) if s > 0.0 => f(1.0 / s),
                _ => f(f(input as f64) / output as f64),
            }
        };
        let support = f(if scale >= 1.0 { INTERP_SIZE * 0.5 * scale } else { INTERP_SIZE * 0.5 });
        let invscale = if scale >= 1.0 { f(1.0 / scale) } else { 1.0 };
        Axis { input, output, scale, support, invscale, max_taps: support.ceil() as usize * 2 + 1, narrow }
    }

    fn f(&self, x: f64) -> f64 {
        if self.narrow {
            x as f32 as f64
        } else {
            x
        }
    }

    /// The first input position and the normalized weights of output position `i`
    /// (`_compute_indices_min_size_weights_aa`).
    pub(crate) fn taps(&self, i: usize) -> (usize, Vec<f64>) {
        let center = self.f(self.scale * (i as f64 + 0.5));
        let xmin = ((self.f(center - self.support) + 0.5) as i64).max(0);
        let xmax = ((self.f(center + self.support) + 0.5) as i64).min(self.input as i64);
        let size = (xmax - xmin).clamp(0, self.max_taps as i64) as usize;
        let mut w: Vec<f64> = (0..size).map(|j| self.filter(self.f((self.f((j as i64 + xmin) as f64 - center) + 0.5) * self.invscale))).collect();
        let total = w.iter().fold(0.0, |t, &x| self.f(t + x));
        if total != 0.0 {
            w.iter_mut().for_each(|x| *x = self.f(*x / total));
        }
        (xmin as usize, w)
    }

    /// The triangle filter `1 - |x|` on `(-1, 1)`.
    fn filter(&self, x: f64) -> f64 {
        let x = self.f(x).abs();
        if x < 1.0 {
            self.f(1.0 - x)
        } else {
            0.0
        }
    }
}

/// The fixed-point precision of an axis's int16 weights for uint8 images: the most fraction
/// bits that keep the largest weight below 2^15 (`_compute_index_ranges_int16_weights`).
pub(crate) fn int16_precision(axis: &Axis) -> u32 {
    let wt_max = (0..axis.output).flat_map(|i| axis.taps(i).1).fold(0.0f64, f64::max);
    let mut p = 0;
    while p < 22 {
        if (0.5 + wt_max * (1u64 << (p + 1)) as f64) as i64 >= 1 << 15 {
            break;
        }
        p += 1;
    }
    p
}

/// A weight in int16 fixed point with `p` fraction bits, rounded half away from zero.
pub(crate) fn fixed(w: f64, p: u32) -> i64 {
    let v = w * (1u64 << p) as f64;
    if v < 0.0 {
        (-0.5 + v) as i64
    } else {
        (0.5 + v) as i64
    }
}

/// One pass along `dim` (2 or 3) of an `[N, C, H, W]` buffer.
fn pass(v: &[f64], shape: &[usize], dim: usize, axis: &Axis, dtype: DType) -> (Vec<f64>, Vec<usize>) {
    let mut out_shape = shape.to_vec();
    out_shape[dim] = axis.output;
    let (outer, len, inner): (usize, usize, usize) = (shape[..dim].iter().product(), shape[dim], shape[dim + 1..].iter().product());
    let taps: Vec<(usize, Vec<f64>)> = (0..axis.output).map(|i| axis.taps(i)).collect();
    let precision = (dtype == DType::U8).then(|| int16_precision(axis));
    let mut out = vec![0.0; outer * axis.output * inner];
    for o in 0..outer {
        for (i, (xmin, w)) in taps.iter().enumerate() {
            for k in 0..inner {
                let at = |j: usize| v[(o * len + xmin + j) * inner + k];
                out[(o * axis.output + i) * inner + k] = match precision {
                    Some(p) => {
                        let acc = w.iter().enumerate().fold(1i64 << (p.max(1) - 1), |a, (j, &wj)| a + at(j) as i64 * fixed(wj, p));
                        (acc >> p).clamp(0, 255) as f64
                    }
                    None => w.iter().enumerate().fold(0.0, |a, (j, &wj)| axis.f(a + axis.f(at(j) * wj))),
                };
            }
        }
    }
    (out, out_shape)
}

/// `_upsample_bilinear2d_aa.vec(input, output_size, align_corners, scale_factors)` and
/// `.default(self, output_size, align_corners, scales_h, scales_w)`.
pub fn upsample_bilinear2d_aa(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor(if cx.arg("input").is_some() { "input" } else { "self" })?;
    let dtype = x.dtype();
    if !matches!(dtype, DType::F32 | DType::F64 | DType::U8) {
        return Err(OpError::DType(dtype));
    }
    if x.ndim() != 4 {
        return shape_err(format!("antialiased bilinear resizing takes [N, C, H, W], got {:?}", x.shape()));
    }
    let align = cx.bool_or("align_corners", false)?;
    let scales: Option<Vec<f64>> = match (cx.arg("scale_factors"), cx.opt_float("scales_h")?, cx.opt_float("scales_w")?) {
        (Some(crate::ir::Arg::Floats(v)), _, _) if v.len() == 2 => Some(v.clone()),
        (_, Some(h), Some(w)) => Some(vec![h, w]),
        _ => None,
    };
    let shape = x.shape().to_vec();
    let out_hw: Vec<usize> = match cx.opt_ints("output_size")? {
        Some(o) if o.len() == 2 && o.iter().all(|&s| s > 0) => o.iter().map(|&s| s as usize).collect(),
        Some(o) => return shape_err(format!("output size {o:?}")),
        None => match &scales {
            Some(s) => (0..2).map(|d| (shape[2 + d] as f64 * s[d]).floor() as usize).collect(),
            None => return shape_err("needs output_size or scale_factors"),
        },
    };
    let narrow = dtype == DType::F32;
    let (mut v, mut cur) = (x.to_f64_vec(), shape.clone());
    // Width first, then height; a dim whose size does not change is not resampled.
    for d in [1usize, 0] {
        if out_hw[d] != shape[2 + d] {
            let axis = Axis::new(shape[2 + d], out_hw[d], align, scales.as_ref().map(|s| s[d]), narrow);
            (v, cur) = pass(&v, &cur, 2 + d, &axis, dtype);
        }
    }
    let t = Tensor::from_vec(&cur, v).ok_or_else(|| OpError::Shape(format!("{cur:?}")))?;
    one(super::dtype_ok(t.cast(dtype))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_normalized_and_widen_when_downsampling() {
        let down = Axis::new(20, 3, false, None, false);
        assert!(down.support > 6.0 && down.max_taps == 2 * 7 + 1);
        for i in 0..3 {
            let (_, w) = down.taps(i);
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(w.len() > 2);
        }
        // Upsampling keeps the plain two-tap triangle.
        let up = Axis::new(3, 6, false, None, false);
        assert!(up.taps(2).1.len() <= 3);
        assert_eq!(fixed(0.5, 14), 8192);
        assert_eq!(fixed(-0.5, 1), -1);
        assert!(int16_precision(&down) >= 14);
    }
}
