//! Gradients of layer and group normalisation (`native_layer_norm_backward`,
//! `native_group_norm_backward`) from the forward's saved mean and rstd, as ATen computes them:
//! with `x̂ = (x - mean)·rstd` and `ĝ = ∂y·weight` over each normalised set of `M` elements,
//! `∂x = rstd/M · (M·ĝ - Σĝ - x̂·Σ(ĝ·x̂))`, `∂weight = Σ ∂y·x̂` and `∂bias = Σ ∂y` per feature.
//! Computed in `f64` and rounded once to each result's dtype.

use super::fvec::F;
use super::{masked, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

fn floats<'a>(cx: &OpCx<'a>, names: &[&str]) -> OpResult<Vec<&'a Tensor>> {
    names
        .iter()
        .map(|n| {
            let t = cx.tensor(n)?;
            if t.dtype().is_floating() {
                Ok(t)
            } else {
                Err(OpError::DType(t.dtype()))
            }
        })
        .collect()
}

/// `∂x` of one normalised set: `x`, `∂y` and the per-element weight over the set's elements.
fn dx_of(x: &[f64], dy: &[f64], w: impl Fn(usize) -> f64, mean: f64, rstd: f64, out: &mut [f64]) {
    let m = x.len() as f64;
    let (mut sg, mut sgx) = (0.0, 0.0);
    for (i, (&xv, &d)) in x.iter().zip(dy).enumerate() {
        let g = d * w(i);
        sg += g;
        sgx += g * (xv - mean) * rstd;
    }
    for (i, (&xv, &d)) in x.iter().zip(dy).enumerate() {
        let xh = (xv - mean) * rstd;
        out[i] = rstd / m * (m * d * w(i) - sg - xh * sgx);
    }
}

/// The gradient dtype of weight and bias: their own, else the input's.
fn param_dtype(p: Option<&Tensor>, x: &Tensor) -> DType {
    p.map_or(x.dtype(), Tensor::dtype)
}

/// `native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)`.
pub fn native_layer_norm_backward(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = floats(cx, &["grad_out", "input", "mean", "rstd"])?;
    let (dy, x, mean, rstd) = (t[0], t[1], t[2], t[3]);
    let (w, b) = (cx.opt_tensor("weight")?, cx.opt_tensor("bias")?);
    let mask = cx.output_mask()?;
    let ns = cx.ints("normalized_shape")?;
    let s = x.shape();
    if ns.len() > s.len() || s[s.len() - ns.len()..].iter().zip(&ns).any(|(&a, &b)| a as i64 != b) || dy.shape() != s {
        return shape_err(format!("normalized_shape {ns:?}, input {s:?} and grad_out {:?} do not fit", dy.shape()));
    }
    let m: usize = s[s.len() - ns.len()..].iter().product();
    let rows = x.numel().checked_div(m).unwrap_or(0);
    let (mv, rv) = (mean.to_f64_vec(), rstd.to_f64_vec());
    if mv.len() != rows || rv.len() != rows || w.is_some_and(|w| w.numel() != m) || b.is_some_and(|b| b.numel() != m) {
        return shape_err(format!("mean/rstd need {rows} elements and weight/bias {m} for input {s:?}"));
    }
    let wv = w.map(Tensor::to_f64_vec);
    let (xv, gv) = (x.to_f64_vec(), dy.to_f64_vec());
    let mut dx = vec![0.0; if mask[0] { xv.len() } else { 0 }];
    let (mut dw, mut db) = (vec![0.0; m], vec![0.0; m]);
    for r in 0..rows {
        let span = r * m..(r + 1) * m;
        let (xr, gr) = (&xv[span.clone()], &gv[span.clone()]);
        if mask[0] {
            dx_of(xr, gr, |i| wv.as_ref().map_or(1.0, |w| w[i]), mv[r], rv[r], &mut dx[span]);
        }
        for i in 0..m {
            dw[i] += gr[i] * (xr[i] - mv[r]) * rv[r];
            db[i] += gr[i];
        }
    }
    let pshape = s[s.len() - ns.len()..].to_vec();
    let grads = [
        if mask[0] { Some(F::new(s.to_vec(), dx).to(x.dtype())?) } else { None },
        if mask[1] { Some(F::new(pshape.clone(), dw).to(param_dtype(w, x))?) } else { None },
        if mask[2] { Some(F::new(pshape, db).to(param_dtype(b.or(w), x))?) } else { None },
    ];
    masked(mask, grads)
}

/// `native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)`:
/// `input` is `[N, C, *]` with `HxW` elements per channel, mean and rstd are `[N, group]`.
pub fn native_group_norm_backward(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = floats(cx, &["grad_out", "input", "mean", "rstd"])?;
    let (dy, x, mean, rstd) = (t[0], t[1], t[2], t[3]);
    let w = cx.opt_tensor("weight")?;
    let mask = cx.output_mask()?;
    let dims = ["N", "C", "HxW", "group"].map(|a| cx.int(a));
    let [n, c, hw, groups] = match dims {
        [Ok(n), Ok(c), Ok(hw), Ok(g)] if n >= 0 && c >= 0 && hw >= 0 && g > 0 => [n as usize, c as usize, hw as usize, g as usize],
        _ => return shape_err("N, C, HxW must be non-negative ints and group positive"),
    };
    if x.numel() != n * c * hw || dy.shape() != x.shape() || c % groups != 0 || x.shape().get(1).is_some_and(|&xc| xc != c) {
        return shape_err(format!("input {:?} and grad_out {:?} are not [N={n}, C={c}, HxW={hw}] in {groups} groups", x.shape(), dy.shape()));
    }
    let (mv, rv) = (mean.to_f64_vec(), rstd.to_f64_vec());
    if mv.len() != n * groups || rv.len() != n * groups || w.is_some_and(|w| w.numel() != c) {
        return shape_err(format!("mean/rstd need {} elements and weight {c}", n * groups));
    }
    let wv = w.map(Tensor::to_f64_vec);
    let (xv, gv) = (x.to_f64_vec(), dy.to_f64_vec());
    let per = c / groups * hw;
    let mut dx = vec![0.0; if mask[0] { xv.len() } else { 0 }];
    let (mut dw, mut db) = (vec![0.0; c], vec![0.0; c]);
    for ng in 0..n * groups {
        let span = ng * per..(ng + 1) * per;
        let (xr, gr) = (&xv[span.clone()], &gv[span.clone()]);
        let c0 = (ng % groups) * (c / groups);
        let chan = |i: usize| c0 + i / hw.max(1);
        if mask[0] {
            dx_of(xr, gr, |i| wv.as_ref().map_or(1.0, |w| w[chan(i)]), mv[ng], rv[ng], &mut dx[span]);
        }
        for i in 0..per {
            dw[chan(i)] += gr[i] * (xr[i] - mv[ng]) * rv[ng];
            db[chan(i)] += gr[i];
        }
    }
    let grads = [
        if mask[0] { Some(F::new(x.shape().to_vec(), dx).to(x.dtype())?) } else { None },
        if mask[1] { Some(F::new(vec![c], dw).to(param_dtype(w, x))?) } else { None },
        if mask[2] { Some(F::new(vec![c], db).to(param_dtype(w, x))?) } else { None },
    ];
    masked(mask, grads)
}
