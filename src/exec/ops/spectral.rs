//! The Core ATen FFTs (`_fft_r2c`, `_fft_c2r`) and `_fft_c2c`, with the ops that carry their
//! complex values from and back to real tensors (`view_as_real`, `view_as_complex`, `abs`).
//! Complex values exist only between nodes ([`crate::exec::complex`]). Transforms are direct
//! DFTs in `f64` (`fft`), scaled by ATen's `normalization` enum: 0 none, 1 `1/√n`, 2 `1/n`,
//! with `n` the signal's size over the transformed dims.

use super::fft::{c2r, C};
use super::fvec::{need_float, F};
use super::{one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::complex::ComplexTensor;
use crate::exec::value::RtValue;

fn dims(cx: &OpCx, ndim: usize) -> OpResult<Vec<usize>> {
    let d: Vec<usize> = cx.ints("dim")?.iter().map(|&d| wrap_dim(d, ndim)).collect::<OpResult<_>>()?;
    if d.is_empty() {
        return Err(OpError::Arg { arg: "dim".into(), message: "names no dim to transform".into() });
    }
    Ok(d)
}

/// The factor `normalization` applies to a signal of `n` points.
fn norm_scale(cx: &OpCx, n: usize) -> OpResult<f64> {
    let n = n as f64;
    match cx.int("normalization")? {
        0 => Ok(1.0),
        1 => Ok(1.0 / n.sqrt()),
        2 => Ok(1.0 / n),
        m => Err(OpError::Arg { arg: "normalization".into(), message: format!("expected 0 (none), 1 (by √n) or 2 (by n), got {m}") }),
    }
}

fn complex_value(dtype: crate::ir::DType, z: C, scale: f64) -> Vec<RtValue> {
    let (re, im) = (z.re.iter().map(|v| v * scale).collect(), z.im.iter().map(|v| v * scale).collect());
    vec![RtValue::Complex(ComplexTensor { dtype, shape: z.shape, re, im })]
}

/// A complex argument as transform input (a real tensor reads as imaginary parts of zero).
fn complex_input(cx: &OpCx) -> OpResult<(C, crate::ir::DType)> {
    match cx.complex_or_real("self")? {
        Ok(c) => Ok((C { shape: c.shape.clone(), re: c.re.clone(), im: c.im.clone() }, c.part_dtype())),
        Err(t) => {
            need_float(t)?;
            Ok((C { shape: t.shape().to_vec(), re: t.to_f64_vec(), im: vec![0.0; t.numel()] }, t.dtype()))
        }
    }
}

/// `_fft_r2c(self, dim, normalization, onesided)`: the forward transform of a real input over
/// `dim`; one-sided keeps the last dim's first `n/2 + 1` bins (the rest are their conjugates).
pub fn fft_r2c(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let dtype = ComplexTensor::dtype_of(x.dtype()).ok_or(OpError::DType(x.dtype()))?;
    let ds = dims(cx, x.ndim())?;
    let mut z = C { shape: x.shape().to_vec(), re: x.to_f64_vec(), im: vec![0.0; x.numel()] };
    for &d in &ds {
        z = z.dft(d, -1.0, 1.0);
    }
    let n = ds.iter().map(|&d| x.shape()[d]).product();
    let scale = norm_scale(cx, n)?;
    if cx.bool_or("onesided", true)? {
        let last = ds[ds.len() - 1];
        z = z.resize(last, x.shape()[last] / 2 + 1);
    }
    Ok(complex_value(dtype, z, scale))
}

/// `_fft_c2r(self, dim, normalization, last_dim_size)`: the inverse transform of a Hermitian
/// half spectrum to `last_dim_size` real points along the last of `dim`.
pub fn fft_c2r(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (mut z, dtype) = complex_input(cx)?;
    let ds = dims(cx, z.shape.len())?;
    let n_last = usize::try_from(cx.int("last_dim_size")?).ok().filter(|&n| n > 0).ok_or_else(|| OpError::Arg {
        arg: "last_dim_size".into(),
        message: "must be positive".into(),
    })?;
    let last = ds[ds.len() - 1];
    for &d in &ds[..ds.len() - 1] {
        z = z.dft(d, 1.0, 1.0);
    }
    z = z.resize(last, n_last / 2 + 1);
    let out = c2r(&z, last, n_last, 1.0);
    let n = ds.iter().map(|&d| out.shape[d]).product();
    let scale = norm_scale(cx, n)?;
    one(F::new(out.shape, out.v.iter().map(|v| v * scale).collect()).to(dtype)?)
}

/// `_fft_c2c(self, dim, normalization, forward)`.
pub fn fft_c2c(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (mut z, part) = complex_input(cx)?;
    let dtype = ComplexTensor::dtype_of(part).ok_or(OpError::DType(part))?;
    let ds = dims(cx, z.shape.len())?;
    let sign = if cx.bool_or("forward", true)? { -1.0 } else { 1.0 };
    for &d in &ds {
        z = z.dft(d, sign, 1.0);
    }
    let n = ds.iter().map(|&d| z.shape[d]).product();
    let scale = norm_scale(cx, n)?;
    Ok(complex_value(dtype, z, scale))
}

/// `view_as_real`: `[*]` complex as `[*, 2]` (real, imaginary) of the parts' dtype.
pub fn view_as_real(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let c = match cx.complex_or_real("self")? {
        Ok(c) => c,
        Err(t) => return Err(OpError::Arg { arg: "self".into(), message: format!("view_as_real takes a complex tensor, got {}", t.dtype()) }),
    };
    let mut shape = c.shape.clone();
    shape.push(2);
    let v = c.re.iter().zip(&c.im).flat_map(|(r, i)| [*r, *i]).collect();
    one(F::new(shape, v).to(c.part_dtype())?)
}

/// `real`: a complex tensor's real parts (FNet: `fft_fftn(x).real`), a real tensor itself.
pub fn real(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    match cx.complex_or_real("self")? {
        Ok(c) => one(F::new(c.shape.clone(), c.re.clone()).to(c.part_dtype())?),
        Err(t) => one(t.clone()),
    }
}

/// `view_as_complex`: `[*, 2]` real pairs as `[*]` complex.
pub fn view_as_complex(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let dtype = ComplexTensor::dtype_of(x.dtype()).ok_or(OpError::DType(x.dtype()))?;
    let Some((&2, lead)) = x.shape().split_last() else {
        return shape_err(format!("view_as_complex takes a last dim of 2, got {:?}", x.shape()));
    };
    let v = x.to_f64_vec();
    let (re, im) = v.chunks(2).map(|p| (p[0], p[1])).unzip();
    Ok(vec![RtValue::Complex(ComplexTensor { dtype, shape: lead.to_vec(), re, im })])
}

/// `polar(abs, angle)`: `abs·(cos angle + i·sin angle)`, complex of the inputs' float dtype
/// (Llama-4's rotary frequencies, `torch.polar(ones_like(freqs), freqs)`). Operands of equal shape.
pub fn polar(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (r, theta) = (cx.tensor("abs")?, cx.tensor("angle")?);
    if r.shape() != theta.shape() {
        return shape_err(format!("polar of shapes {:?} and {:?}", r.shape(), theta.shape()));
    }
    let dtype = ComplexTensor::dtype_of(r.dtype()).ok_or(OpError::DType(r.dtype()))?;
    let (re, im) = r.to_f64_vec().iter().zip(theta.to_f64_vec()).map(|(m, a)| (m * a.cos(), m * a.sin())).unzip();
    Ok(vec![RtValue::Complex(ComplexTensor { dtype, shape: r.shape().to_vec(), re, im })])
}

/// `abs`: a complex tensor's magnitudes in its parts' dtype; real tensors as `pointwise::abs`.
pub fn abs(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    match cx.complex_or_real("self")? {
        Ok(c) => one(F::new(c.shape.clone(), c.re.iter().zip(&c.im).map(|(r, i)| r.hypot(*i)).collect()).to(c.part_dtype())?),
        Err(_) => super::pointwise::abs(cx),
    }
}

/// `stft(self, n_fft, hop_length, win_length, window, normalized, onesided, return_complex)`:
/// the DFT of each frame `x[t·hop .. t·hop + n_fft]` times the window (`win_length` long,
/// centred in `n_fft`; ones when absent), frames `1 + (L − n_fft) / hop`, `hop` defaulting to
/// `n_fft / 4`. Output `[batch?, freq, frames]`, complex, or with `return_complex=False` real
/// with a trailing `[re, im]` dim; one-sided (the default for real input) keeps `n_fft/2 + 1`
/// bins; `normalized` scales by `1/√n_fft`. The centre padding `torch.stft` adds is a `pad`
/// node of its own in exported graphs.
pub fn stft(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let (batch, len) = match x.shape() {
        [l] => (None, *l),
        [b, l] => (Some(*b), *l),
        s => return shape_err(format!("stft takes a 1-D or 2-D signal, got {s:?}")),
    };
    let n_fft = usize::try_from(cx.int("n_fft")?).ok().filter(|&n| n > 0 && n <= len).ok_or_else(|| OpError::Arg {
        arg: "n_fft".into(),
        message: format!("must lie in 1..={len} (the signal's length)"),
    })?;
    let positive = |name: &str, default: usize| -> OpResult<usize> {
        match cx.opt_int(name)? {
            None => Ok(default),
            Some(v) if v > 0 => Ok(v as usize),
            Some(v) => Err(OpError::Arg { arg: name.into(), message: format!("must be positive, got {v}") }),
        }
    };
    let hop = positive("hop_length", (n_fft / 4).max(1))?;
    let win_length = positive("win_length", n_fft)?;
    if win_length > n_fft {
        return shape_err(format!("win_length {win_length} exceeds n_fft {n_fft}"));
    }
    let mut window = vec![0.0; n_fft];
    let left = (n_fft - win_length) / 2;
    match cx.opt_tensor("window")? {
        Some(w) if w.numel() == win_length => window[left..left + win_length].copy_from_slice(&w.to_f64_vec()),
        Some(w) => return shape_err(format!("window of {} values for win_length {win_length}", w.numel())),
        None => window[left..left + win_length].iter_mut().for_each(|v| *v = 1.0),
    }
    let onesided = cx.opt_scalar("onesided")?.is_none_or(|s| s.to_f64() != 0.0);
    let bins = if onesided { n_fft / 2 + 1 } else { n_fft };
    let frames = 1 + (len - n_fft) / hop;
    let scale = if cx.bool_or("normalized", false)? { 1.0 / (n_fft as f64).sqrt() } else { 1.0 };
    let signal = x.to_f64_vec();
    let b = batch.unwrap_or(1);
    let (mut re, mut im) = (vec![0.0; b * bins * frames], vec![0.0; b * bins * frames]);
    for s in 0..b {
        for t in 0..frames {
            let frame = &signal[s * len + t * hop..s * len + t * hop + n_fft];
            for f in 0..bins {
                let (mut a, mut c) = (0.0, 0.0);
                for (k, (&v, &w)) in frame.iter().zip(&window).enumerate() {
                    let angle = -2.0 * std::f64::consts::PI * ((f * k) % n_fft) as f64 / n_fft as f64;
                    a += v * w * angle.cos();
                    c += v * w * angle.sin();
                }
                let o = (s * bins + f) * frames + t;
                (re[o], im[o]) = (a * scale, c * scale);
            }
        }
    }
    let mut shape: Vec<usize> = batch.into_iter().chain([bins, frames]).collect();
    if cx.bool_or("return_complex", true)? {
        let dtype = ComplexTensor::dtype_of(x.dtype()).ok_or(OpError::DType(x.dtype()))?;
        return Ok(complex_value(dtype, C { shape, re, im }, 1.0));
    }
    shape.push(2);
    let pairs = re.iter().zip(&im).flat_map(|(&a, &c)| [a, c]).collect();
    one(F::new(shape, pairs).to(x.dtype())?)
}
