//! Resampling: `grid_sampler` (2-D and 3-D; bilinear, nearest and 2-D bicubic; zeros, border
//! and reflection padding) and bicubic upsampling, following the index arithmetic of PyTorch's
//! `GridSampler.h` and `UpSample.h` (cubic convolution with A = -0.75).

use super::fvec::{need_float, F};
use super::resample_u8;
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::value::RtValue;

/// Grid coordinate in [-1, 1] to a pixel position, each step rounded by `r` (PyTorch computes
/// it in the tensor's dtype).
fn unnormalize(c: f64, size: usize, align: bool, r: &impl Fn(f64) -> f64) -> f64 {
    if align {
        r(r(r(c + 1.0) / 2.0) * (size as f64 - 1.0))
    } else {
        r(r(r(r(c + 1.0) * size as f64) - 1.0) / 2.0)
    }
}

fn reflect(x: f64, twice_low: f64, twice_high: f64) -> f64 {
    if twice_low == twice_high {
        return 0.0;
    }
    let (min, span) = (twice_low / 2.0, (twice_high - twice_low) / 2.0);
    let x = (x - min).abs();
    let extra = x % span;
    let flips = (x / span).floor();
    if flips % 2.0 == 0.0 {
        extra + min
    } else {
        span - extra + min
    }
}

/// Applies the padding mode to a pixel position (`0` zeros, `1` border, `2` reflection).
/// Clipping is ATen's `min(size - 1, max(x, 0))` with `std::min`/`std::max`'s comparisons, so
/// a NaN position clips to the last pixel.
fn pad_coord(x: f64, size: usize, mode: i64, align: bool) -> f64 {
    let clip = |x: f64| {
        let lim = size as f64 - 1.0;
        let v = if x < 0.0 { 0.0 } else { x };
        if v < lim {
            v
        } else {
            lim
        }
    };
    match mode {
        1 => clip(x),
        2 => {
            let r = if align { reflect(x, 0.0, 2.0 * (size as f64 - 1.0)) } else { reflect(x, -1.0, 2.0 * size as f64 - 1.0) };
            clip(r)
        }
        _ => x,
    }
}

/// ATen's `safe_downgrade_to_int_range`: a source position no `int` holds (infinite, NaN,
/// beyond i32) becomes -100, outside every image, so it samples nothing.
fn safe_downgrade(x: f64) -> f64 {
    if x >= i32::MIN as f64 && x <= (i32::MAX - 1) as f64 {
        x
    } else {
        -100.0
    }
}

fn cubic1(x: f64) -> f64 {
    const A: f64 = -0.75;
    ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
}

fn cubic2(x: f64) -> f64 {
    const A: f64 = -0.75;
    ((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A
}

fn cubic_coeffs(t: f64) -> [f64; 4] {
    [cubic2(t + 1.0), cubic1(t), cubic1(1.0 - t), cubic2(2.0 - t)]
}

pub fn grid_sampler(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (x, grid) = (cx.tensor("input")?, cx.tensor("grid")?);
    need_float(x)?;
    let (mode, pad, align) = (cx.int_or("interpolation_mode", 0)?, cx.int_or("padding_mode", 0)?, cx.bool_or("align_corners", false)?);
    let k = x.ndim().checked_sub(2).filter(|k| (2..=3).contains(k)).ok_or_else(|| OpError::Shape(format!("grid_sampler input {:?}", x.shape())))?;
    let (xs, gs) = (x.shape(), grid.shape());
    if gs.len() != k + 2 || gs[0] != xs[0] || gs[k + 1] != k {
        return shape_err(format!("grid {gs:?} does not fit input {xs:?}"));
    }
    if mode == 2 && k == 3 {
        return Err(OpError::Unsupported("bicubic grid sampling of a 5-D (volumetric) input: F.grid_sample refuses it, and what aten.grid_sampler computes for it is not reproduced here".into()));
    }
    let (n, c) = (xs[0], xs[1]);
    // Spatial sizes in (x, y, z) order: the grid's last dim lists x (width) first.
    let sp: Vec<usize> = xs[2..].iter().rev().copied().collect();
    let out_sp = &gs[1..k + 1];
    let npos: usize = out_sp.iter().product();
    let plane: usize = sp.iter().product();
    let (xv, gv) = (x.to_f64_vec(), grid.to_f64_vec());
    let r = super::fvec::round_to(x.dtype());
    // Flat offset of (x, y[, z]) in a plane stored as [z][y][x].
    let flat = |p: &[i64]| -> Option<usize> {
        let mut off = 0usize;
        for d in (0..k).rev() {
            if p[d] < 0 || p[d] >= sp[d] as i64 {
                return None;
            }
            off = off * sp[d] + p[d] as usize;
        }
        Some(off)
    };
    let mut out = vec![0.0; n * c * npos];
    for b in 0..n {
        for pos in 0..npos {
            let g = &gv[(b * npos + pos) * k..(b * npos + pos + 1) * k];
            let raw: Vec<f64> = (0..k).map(|d| unnormalize(g[d], sp[d], align, &r)).collect();
            let src: Vec<f64> = (0..k).map(|d| safe_downgrade(pad_coord(raw[d], sp[d], pad, align))).collect();
            for ch in 0..c {
                let img = &xv[(b * c + ch) * plane..(b * c + ch + 1) * plane];
                let at = |p: &[i64]| flat(p).map_or(0.0, |o| img[o]);
                let v = match mode {
                    1 => at(&src.iter().map(|s| s.round_ties_even() as i64).collect::<Vec<_>>()),
                    2 => {
                        let (fx, fy) = (raw[0].floor(), raw[1].floor());
                        let (cx_, cy) = (cubic_coeffs(raw[0] - fx), cubic_coeffs(raw[1] - fy));
                        let mut acc = 0.0;
                        for (j, wy) in cy.iter().enumerate() {
                            for (i, wx) in cx_.iter().enumerate() {
                                let px = pad_coord(fx - 1.0 + i as f64, sp[0], pad, align);
                                let py = pad_coord(fy - 1.0 + j as f64, sp[1], pad, align);
                                acc += at(&[px as i64, py as i64]) * wx * wy;
                            }
                        }
                        acc
                    }
                    _ => {
                        let base: Vec<f64> = src.iter().map(|s| s.floor()).collect();
                        let mut acc = 0.0;
                        for corner in 0..(1usize << k) {
                            let mut w = 1.0;
                            let mut p = vec![0i64; k];
                            for d in 0..k {
                                let hi = (corner >> d) & 1 == 1;
                                let t = r(src[d] - base[d]);
                                w = r(w * if hi { t } else { r(1.0 - t) });
                                p[d] = base[d] as i64 + i64::from(hi);
                            }
                            acc = r(acc + r(w * at(&p)));
                        }
                        acc
                    }
                };
                out[(b * c + ch) * npos + pos] = v;
            }
        }
    }
    let mut shape = vec![n, c];
    shape.extend(out_sp);
    one(F::new(shape, out).to(x.dtype())?)
}

/// `upsample_bicubic2d.vec`: cubic convolution over the 4×4 neighbourhood, indices clamped.
pub fn upsample_bicubic2d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("input")?;
    if x.ndim() != 4 || x.dtype() == crate::ir::DType::Bool {
        return shape_err(format!("bicubic upsampling takes a 4-D input, got {:?}", x.shape()));
    }
    let align = cx.bool_or("align_corners", false)?;
    let s = x.shape();
    let (h, w) = (s[2], s[3]);
    let scales = match cx.arg("scale_factors") {
        Some(crate::ir::Arg::Floats(f)) if f.len() == 2 => Some((f[0], f[1])),
        _ => None,
    };
    let (oh, ow) = match cx.opt_ints("output_size")? {
        Some(o) if o.len() == 2 => (o[0].max(0) as usize, o[1].max(0) as usize),
        _ => match scales {
            Some((a, b)) => ((h as f64 * a).floor() as usize, (w as f64 * b).floor() as usize),
            None => return shape_err("bicubic upsampling needs output_size or scale_factors"),
        },
    };
    let scale = |inp: usize, out: usize, given: Option<f64>| resample_u8::axis_scale(inp, out, align, given);
    let (sh, sw) = (scale(h, oh, scales.map(|s| s.0)), scale(w, ow, scales.map(|s| s.1)));
    if x.dtype() == crate::ir::DType::U8 {
        // uint8 images take PyTorch's separable fixed-point path.
        let r = resample_u8::resample(&x.to_f64_vec(), s[0] * s[1], (h, w), (oh, ow), (sh, sw), align, resample_u8::Filter::Cubic);
        return one(F::new(vec![s[0], s[1], oh, ow], r).to(x.dtype())?);
    }
    let src = |o: usize, s: f64| if align { s * o as f64 } else { s * (o as f64 + 0.5) - 0.5 };
    let xv = x.to_f64_vec();
    let planes = s[0] * s[1];
    let mut out = Vec::with_capacity(planes * oh * ow);
    let int = !x.dtype().is_floating();
    for p in 0..planes {
        let img = &xv[p * h * w..(p + 1) * h * w];
        let at = |yy: f64, xx: f64| img[(yy.clamp(0.0, h as f64 - 1.0) as usize) * w + xx.clamp(0.0, w as f64 - 1.0) as usize];
        for oy in 0..oh {
            let ry = src(oy, sh);
            let fy = ry.floor();
            let cy = cubic_coeffs(ry - fy);
            for ox in 0..ow {
                let rx = src(ox, sw);
                let fx = rx.floor();
                let cxs = cubic_coeffs(rx - fx);
                let mut acc = 0.0;
                for (j, wy) in cy.iter().enumerate() {
                    for (i, wx) in cxs.iter().enumerate() {
                        acc += at(fy - 1.0 + j as f64, fx - 1.0 + i as f64) * wx * wy;
                    }
                }
                out.push(if int { acc.round().clamp(0.0, 255.0) } else { acc });
            }
        }
    }
    one(F::new(vec![s[0], s[1], oh, ow], out).to(x.dtype())?)
}
