//! Real-output FFTs of (real) inputs: `fft_irfft`, `fft_irfft2`, `fft_irfftn` and their
//! Hermitian forward counterparts `fft_hfft*`, as `aten/src/ATen/native/SpectralOps.cpp`
//! composes them: resize the input, a complex-to-complex transform over every dim but the last
//! (inverse for irfft, forward then conjugate for hfft), then complex-to-real over the last.
//! Direct DFTs in `f64`; the sizes OpInfo uses are small.

use std::f64::consts::PI;

use super::fvec::{around, float_type, F};
use super::{one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::value::RtValue;
use crate::ir::Arg;

/// Complex values of some shape, row-major.
pub(super) struct C {
    pub shape: Vec<usize>,
    pub re: Vec<f64>,
    pub im: Vec<f64>,
}

impl C {
    /// Truncates or zero-pads `dim` to `len`.
    pub fn resize(&self, dim: usize, len: usize) -> C {
        let (outer, old, inner) = around(&self.shape, dim);
        let mut shape = self.shape.clone();
        shape[dim] = len;
        let n = outer * len * inner;
        let (mut re, mut im) = (vec![0.0; n], vec![0.0; n]);
        for o in 0..outer {
            for i in 0..len.min(old) {
                for k in 0..inner {
                    re[(o * len + i) * inner + k] = self.re[(o * old + i) * inner + k];
                    im[(o * len + i) * inner + k] = self.im[(o * old + i) * inner + k];
                }
            }
        }
        C { shape, re, im }
    }

    /// Complex DFT along `dim` with sign `-1` (forward) or `+1` (inverse), scaled by `scale`.
    pub fn dft(&self, dim: usize, sign: f64, scale: f64) -> C {
        let (outer, n, inner) = around(&self.shape, dim);
        let (mut re, mut im) = (vec![0.0; self.re.len()], vec![0.0; self.im.len()]);
        for o in 0..outer {
            for k in 0..inner {
                for f in 0..n {
                    let (mut sr, mut si) = (0.0, 0.0);
                    for j in 0..n {
                        let th = sign * 2.0 * PI * (f * j % n) as f64 / n as f64;
                        let (a, b) = (self.re[(o * n + j) * inner + k], self.im[(o * n + j) * inner + k]);
                        sr += a * th.cos() - b * th.sin();
                        si += a * th.sin() + b * th.cos();
                    }
                    re[(o * n + f) * inner + k] = sr * scale;
                    im[(o * n + f) * inner + k] = si * scale;
                }
            }
        }
        C { shape: self.shape.clone(), re, im }
    }
}

/// The scale of a transform of `n` points: `forward` transforms are unscaled under `backward`
/// normalisation, inverse ones divide by `n` (`ortho` divides both by `√n`).
fn scale(norm: &str, forward: bool, n: usize) -> OpResult<f64> {
    let n = n as f64;
    Ok(match (norm, forward) {
        ("backward", true) | ("forward", false) => 1.0,
        ("backward", false) | ("forward", true) => 1.0 / n,
        ("ortho", _) => 1.0 / n.sqrt(),
        (o, _) => return Err(OpError::Arg { arg: "norm".into(), message: format!("unknown normalisation `{o}`") }),
    })
}

/// Hermitian half-spectrum `a` (length ≥ n/2+1 along `dim`) to `n` real points: the imaginary
/// parts of the zero and Nyquist bins are ignored, as pocketfft does.
pub(super) fn c2r(a: &C, dim: usize, n: usize, s: f64) -> F {
    let (outer, m, inner) = around(&a.shape, dim);
    let mut shape = a.shape.clone();
    shape[dim] = n;
    let mut v = vec![0.0; outer * n * inner];
    for o in 0..outer {
        for k in 0..inner {
            let at = |j: usize| ((o * m + j) * inner + k, j < m);
            for t in 0..n {
                let mut acc = 0.0;
                for j in 0..n {
                    // X[j] for j > n/2 is conj(X[n - j]).
                    let (src, conj) = if j <= n / 2 { (j, false) } else { (n - j, true) };
                    let (i, ok) = at(src);
                    if !ok {
                        continue;
                    }
                    let (re, im) = if src == 0 || (n.is_multiple_of(2) && src == n / 2) { (a.re[i], 0.0) } else { (a.re[i], if conj { -a.im[i] } else { a.im[i] }) };
                    let th = 2.0 * PI * (j * t % n) as f64 / n as f64;
                    acc += re * th.cos() - im * th.sin();
                }
                v[(o * n + t) * inner + k] = acc * s;
            }
        }
    }
    F::new(shape, v)
}

/// `rank`: 1 for `irfft`/`hfft`, 2 for the `2` forms, 0 for the `n` forms (all dims by default).
fn transform(cx: &OpCx, hermitian: bool, rank: usize) -> OpResult<Vec<RtValue>> {
    let one_dim = rank == 1;
    let x = cx.tensor("self")?;
    let dtype = float_type(&[x])?;
    let nd = x.ndim();
    let norm = match cx.arg("norm") {
        Some(Arg::String(s)) => s.as_str(),
        _ => "backward",
    };
    let sizes: Option<Vec<i64>> = if one_dim { cx.opt_int("n")?.map(|n| vec![n]) } else { cx.opt_ints("s")? };
    let dims: Vec<usize> = match cx.opt_ints("dim")? {
        Some(d) => d.iter().map(|&d| wrap_dim(d, nd)).collect::<OpResult<_>>()?,
        None if one_dim => vec![wrap_dim(-1, nd)?],
        None if rank == 2 => vec![wrap_dim(-2, nd)?, wrap_dim(-1, nd)?],
        None => match &sizes {
            Some(s) => (nd - s.len().min(nd)..nd).collect(),
            None => (0..nd).collect(),
        },
    };
    if dims.is_empty() || sizes.as_ref().is_some_and(|s| s.len() != dims.len()) {
        return shape_err(format!("fft over dims {dims:?} with sizes {sizes:?}"));
    }
    let last = *dims.last().unwrap_or(&0);
    let m = x.shape()[last];
    let n_last = match &sizes {
        Some(s) => s[s.len() - 1].max(1) as usize,
        None => (2 * m.max(1)).saturating_sub(2).max(1),
    };
    let f = F::of(x);
    let mut z = C { shape: f.shape.clone(), re: f.v.clone(), im: vec![0.0; f.v.len()] };
    for (i, &d) in dims[..dims.len() - 1].iter().enumerate() {
        let len = sizes.as_ref().map_or(z.shape[d], |s| s[i].max(1) as usize);
        z = z.resize(d, len);
    }
    z = z.resize(last, n_last / 2 + 1);
    for &d in &dims[..dims.len() - 1] {
        let n = z.shape[d];
        z = z.dft(d, if hermitian { -1.0 } else { 1.0 }, scale(norm, hermitian, n)?);
    }
    if hermitian {
        z.im.iter_mut().for_each(|v| *v = -*v);
    }
    one(c2r(&z, last, n_last, scale(norm, hermitian, n_last)?).to(dtype)?)
}

pub fn irfft(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    transform(cx, false, 1)
}

pub fn irfft2(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    transform(cx, false, 2)
}

pub fn irfftn(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    transform(cx, false, 0)
}

pub fn hfft(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    transform(cx, true, 1)
}

pub fn hfft2(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    transform(cx, true, 2)
}

pub fn hfftn(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    transform(cx, true, 0)
}
