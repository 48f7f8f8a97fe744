//! uint8 bilinear and bicubic upsampling as PyTorch's CPU kernels compute it: not the float
//! formula rounded at the end, but Pillow's separable resampling (ATen `UpSampleKernel.cpp`,
//! `upsample_avx_bilinear_bicubic_uint8` and `separable_upsample_generic_Nd_kernel_impl`):
//!
//! - one pass along the width, into a uint8 image, then one along the height (a pass is
//!   skipped when that size does not change);
//! - per output position, the float path's taps (`_compute_indices_min_size_weights`): the
//!   source index `area_pixel_compute_source_index` gives, split into a whole part (through C's
//!   `floorf`, in single precision) and a fraction `λ`; the filter at each tap's distance from
//!   `λ`, a tap outside the image adding its weight to the edge pixel it is clamped to (as the
//!   float kernels clamp the index); no normalisation;
//! - the weights scaled to int16 with `precision` fraction bits, the most that keep the largest
//!   weight of the whole axis (the largest running sum, as ATen tracks it) below 2^15
//!   (`_compute_index_ranges_int16_weights`);
//! - each output `clamp((2^(precision-1) + Σ w·x) >> precision, 0, 255)`.
//!
//! Bicubic uses the cubic convolution kernel with a = -0.75, as the float path does. (Older
//! PyTorch's uint8 path took Pillow's antialiasing taps instead, renormalised, with the
//! sample centres shifted half a pixel under `align_corners`; they agree with these on most
//! sizes, not on upsampling with `align_corners` or downsampling without it.)

/// The interpolation filter of an axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Filter {
    Linear,
    Cubic,
}

impl Filter {
    /// Taps of the filter's support (`interp_size`).
    fn taps(self) -> usize {
        match self {
            Filter::Linear => 2,
            Filter::Cubic => 4,
        }
    }

    fn at(self, x: f64) -> f64 {
        let x = x.abs();
        match self {
            Filter::Linear => (1.0 - x).max(0.0),
            Filter::Cubic => {
                const A: f64 = -0.75;
                // ATen's `cubic_convolution1/2`, term for term (the rounding is part of it).
                if x < 1.0 {
                    ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
                } else if x < 2.0 {
                    ((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A
                } else {
                    0.0
                }
            }
        }
    }
}

/// The fixed-point taps of one axis: per output position the first input position and the
/// int16 weights, and the number of fraction bits they carry.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Taps {
    pub first: Vec<usize>,
    pub weights: Vec<Vec<i64>>,
    pub precision: u32,
}

pub(crate) use crate::ops::resample::area_pixel_scale as axis_scale;

/// PyTorch's `area_pixel_compute_source_index`: where output position `i` samples the input.
pub(crate) fn source_index(scale: f64, i: usize, align_corners: bool, filter: Filter) -> f64 {
    if align_corners {
        scale * i as f64
    } else {
        let src = scale * (i as f64 + 0.5) - 0.5;
        // Linear clamps below 0; cubic reads past the edge (the taps are clamped instead).
        if filter == Filter::Linear && src < 0.0 {
            0.0
        } else {
            src
        }
    }
}

/// The float taps of output position `i`: the first input position, the weights of the input
/// positions from there, and the largest running sum of a weight on the way
/// (`_compute_indices_min_size_weights`, antialias off).
pub(crate) fn float_taps(i: usize, input: usize, scale: f64, align_corners: bool, filter: Filter) -> (usize, Vec<f64>, f64) {
    let n = filter.taps() as i64;
    let input = input as i64;
    let src = source_index(scale, i, align_corners, filter);
    // `guard_index_and_lambda`: C's `floorf` rounds the double to float first.
    let index = ((src as f32).floor() as i64).min(input - 1);
    let lambda = (src - index as f64).clamp(0.0, 1.0);
    let support = n / 2;
    let (lo, hi) = (index - support + 1, index + support + 1);
    let first = lo.max(0);
    let size = (hi.min(input) - first).clamp(0, n) as usize;
    let mut w = vec![0.0f64; n as usize];
    let mut max = 0.0f64;
    let mut at = 0usize;
    for j in 0..n {
        let v = filter.at((j + 1 - support) as f64 - lambda);
        // A tap past an edge adds its weight to the edge pixel.
        if lo + j <= 0 {
            at = 0;
        } else if lo + j >= input - 1 {
            at = size.saturating_sub(1);
        }
        if let Some(slot) = w.get_mut(at) {
            *slot += v;
            max = max.max(*slot);
        }
        at += 1;
    }
    w.truncate(size);
    (first as usize, w, max)
}

/// The most fraction bits (below 22) with which `max_weight` still rounds below 2^15.
pub(crate) fn precision(max_weight: f64) -> u32 {
    (0..22).find(|p| (0.5 + max_weight * f64::from(1u32 << (p + 1))) as i64 >= 1 << 15).unwrap_or(22)
}

/// A weight in fixed point: rounded half away from zero (C's `(int)(v ± 0.5)`).
pub(crate) fn fixed(w: f64, precision: u32) -> i64 {
    let v = w * f64::from(1u32 << precision);
    if v < 0.0 {
        (v - 0.5) as i64
    } else {
        (v + 0.5) as i64
    }
}

/// The taps of an axis from `input` to `output` positions.
pub(crate) fn axis_taps(input: usize, output: usize, scale: f64, align_corners: bool, filter: Filter) -> Taps {
    let float: Vec<(usize, Vec<f64>, f64)> = (0..output).map(|i| float_taps(i, input, scale, align_corners, filter)).collect();
    let max = float.iter().map(|(_, _, m)| *m).fold(0.0, f64::max);
    let precision = precision(max);
    Taps {
        first: float.iter().map(|(f, _, _)| *f).collect(),
        weights: float.iter().map(|(_, w, _)| w.iter().map(|&x| fixed(x, precision)).collect()).collect(),
        precision,
    }
}

/// One fixed-point output: `clamp((2^(p-1) + Σ w·x) >> p, 0, 255)`.
pub(crate) fn combine(acc: i64, precision: u32) -> f64 {
    let bias = if precision > 0 { 1i64 << (precision - 1) } else { 0 };
    ((acc + bias) >> precision).clamp(0, 255) as f64
}

/// Resamples `planes` images of `h × w` uint8 values (as f64) to `oh × ow`; `scales` are the
/// height and width scales of [`axis_scale`].
pub(crate) fn resample(x: &[f64], planes: usize, (h, w): (usize, usize), (oh, ow): (usize, usize), scales: (f64, f64), align_corners: bool, filter: Filter) -> Vec<f64> {
    let horizontal = (ow != w).then(|| axis_taps(w, ow, scales.1, align_corners, filter));
    let vertical = (oh != h).then(|| axis_taps(h, oh, scales.0, align_corners, filter));
    let mut out = Vec::with_capacity(planes * oh * ow);
    for p in 0..planes {
        let img = &x[p * h * w..(p + 1) * h * w];
        // Width first, into a uint8 image of h rows.
        let mid: Vec<f64> = match &horizontal {
            None => img.to_vec(),
            Some(t) => (0..h)
                .flat_map(|y| {
                    (0..ow).map(move |o| {
                        let acc: i64 = t.weights[o].iter().enumerate().map(|(k, wt)| wt * img[y * w + t.first[o] + k] as i64).sum();
                        combine(acc, t.precision)
                    })
                })
                .collect(),
        };
        match &vertical {
            None => out.extend(mid),
            Some(t) => {
                for o in 0..oh {
                    for xx in 0..ow {
                        let acc: i64 = t.weights[o].iter().enumerate().map(|(k, wt)| wt * mid[(t.first[o] + k) * ow + xx] as i64).sum();
                        out.push(combine(acc, t.precision));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two of the six 4×4 planes of PyTorch 2.15's uint8 OpInfo cases, resized to 3×3 with
    /// align_corners, and PyTorch's recorded outputs.
    const PLANES: [[f64; 16]; 2] = [
        [5., 1., 6., 5., 6., 4., 2., 5., 5., 9., 3., 1., 4., 2., 3., 2.],
        [6., 8., 2., 2., 8., 2., 0., 4., 9., 2., 1., 9., 2., 2., 9., 4.],
    ];

    fn resize(filter: Filter) -> Vec<f64> {
        let x: Vec<f64> = PLANES.iter().flatten().copied().collect();
        let s = axis_scale(4, 3, true, None);
        resample(&x, 2, (4, 4), (3, 3), (s, s), true, filter)
    }

    #[test]
    fn bilinear_matches_pytorch_uint8() {
        assert_eq!(resize(Filter::Linear), vec![5., 4., 5., 6., 5., 3., 4., 3., 2., 6., 5., 2., 9., 2., 7., 2., 6., 4.]);
    }

    #[test]
    fn bicubic_matches_pytorch_uint8() {
        assert_eq!(resize(Filter::Cubic), vec![5., 3., 5., 6., 5., 3., 4., 2., 2., 6., 5., 2., 9., 0., 7., 2., 6., 4.]);
    }

    #[test]
    fn precision_keeps_the_largest_weight_below_int16() {
        assert_eq!(precision(1.0), 14);
        assert_eq!(precision(0.75), 15);
        assert_eq!(precision(0.5), 15);
        assert_eq!(fixed(0.5, 15), 16384);
        assert_eq!(fixed(-0.0703125, 15), -2304);
        assert_eq!(combine(-5, 14), 0.0);
        assert_eq!(combine(300 << 14, 14), 255.0);
    }
}
