//! Batch and instance normalisation with batch statistics (training mode): the outputs are
//! deterministic functions of the input, so the interpreter computes them; the running-stat
//! updates PyTorch performs in place are not graph outputs and are not modelled.
//! `native_batch_norm`, `_native_batch_norm_legit(.no_stats)`, `_batch_norm_with_update`,
//! `batch_norm` in either mode, and `instance_norm`.

use super::fvec::{need_float, F};
use super::shape::many;
use super::{one, shape_err, OpCx, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

fn param(cx: &OpCx, name: &str, c: usize) -> OpResult<Option<Vec<f64>>> {
    match cx.opt_tensor(name)? {
        Some(t) if t.numel() == c => Ok(Some(t.to_f64_vec())),
        Some(t) if t.numel() == 0 && c == 0 => Ok(Some(vec![])),
        Some(t) => shape_err(format!("{name} has shape {:?}, expected {c} elements", t.shape())),
        None => Ok(None),
    }
}

/// `(out, mean, invstd)` over dim 1: batch statistics when `use_batch`, else the running ones.
/// In inference PyTorch returns empty statistics.
fn batch_norm_impl(cx: &OpCx, use_batch: bool) -> OpResult<(Tensor, Tensor, Tensor)> {
    let x = cx.tensor("input")?;
    need_float(x)?;
    if x.ndim() < 2 && x.numel() == 0 {
        // An empty input normalises to an empty output whatever its rank.
        let empty = F::new(vec![0], vec![]).to(x.dtype())?;
        return Ok((x.clone(), empty.clone(), empty));
    }
    if x.ndim() < 2 {
        return shape_err(format!("batch norm expects at least 2 dims (N, C, ...), got {:?}", x.shape()));
    }
    let f = F::of(x);
    let (n, c) = (f.shape[0], f.shape[1]);
    let inner: usize = f.shape[2..].iter().product();
    let eps = cx.float_or("eps", 1e-5)?;
    let (w, b) = (param(cx, "weight", c)?, param(cx, "bias", c)?);
    let (rm, rv) = (param(cx, "running_mean", c)?, param(cx, "running_var", c)?);
    let use_batch = use_batch || rm.is_none() || rv.is_none();
    let count = (n * inner) as f64;
    let mut mean = vec![0.0; c];
    let mut invstd = vec![0.0; c];
    for ch in 0..c {
        let vals = || (0..n).flat_map(move |i| (0..inner).map(move |k| (i * c + ch) * inner + k));
        if use_batch {
            let m = vals().map(|j| f.v[j]).sum::<f64>() / count;
            let var = vals().map(|j| (f.v[j] - m).powi(2)).sum::<f64>() / count;
            mean[ch] = m;
            invstd[ch] = 1.0 / (var + eps).sqrt();
        } else if let (Some(rm), Some(rv)) = (&rm, &rv) {
            mean[ch] = rm[ch];
            invstd[ch] = 1.0 / (rv[ch] + eps).sqrt();
        }
    }
    let out: Vec<f64> = f
        .v
        .iter()
        .enumerate()
        .map(|(j, &v)| {
            let ch = (j / inner.max(1)) % c.max(1);
            let y = (v - mean[ch]) * invstd[ch];
            let y = w.as_ref().map_or(y, |w| y * w[ch]);
            b.as_ref().map_or(y, |b| y + b[ch])
        })
        .collect();
    let out = F::new(f.shape.clone(), out).to(x.dtype())?;
    if !use_batch {
        let empty = F::new(vec![0], vec![]).to(x.dtype())?;
        return Ok((out, empty.clone(), empty));
    }
    Ok((out, F::new(vec![c], mean).to(x.dtype())?, F::new(vec![c], invstd).to(x.dtype())?))
}

fn three(r: (Tensor, Tensor, Tensor)) -> OpResult<Vec<RtValue>> {
    many(vec![r.0, r.1, r.2])
}

/// `native_batch_norm` and `_native_batch_norm_legit`: the mode is the `training` flag.
pub fn native_batch_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    three(batch_norm_impl(cx, cx.bool_or("training", false)?)?)
}

/// `_native_batch_norm_legit.no_stats`: always batch statistics.
pub fn native_batch_norm_no_stats(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    three(batch_norm_impl(cx, true)?)
}

/// `_batch_norm_with_update`: training batch norm plus an empty reserve buffer.
pub fn batch_norm_with_update(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (o, m, s) = batch_norm_impl(cx, true)?;
    many(vec![o, m, s, F::new(vec![0], vec![]).to(DType::U8)?])
}

pub fn batch_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(batch_norm_impl(cx, cx.bool_or("training", false)?)?.0)
}

/// Per sample and channel over the spatial dims (`use_input_stats`), else the running
/// per-channel statistics as in inference batch norm.
pub fn instance_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("input")?;
    need_float(x)?;
    if !cx.bool_or("use_input_stats", true)? {
        return one(batch_norm_impl(cx, false)?.0);
    }
    if x.ndim() < 2 {
        return shape_err(format!("instance norm expects at least 2 dims (N, C, ...), got {:?}", x.shape()));
    }
    let f = F::of(x);
    let c = f.shape[1];
    let inner: usize = f.shape[2..].iter().product();
    let eps = cx.float_or("eps", 1e-5)?;
    let (w, b) = (param(cx, "weight", c)?, param(cx, "bias", c)?);
    let mut out = vec![0.0; f.v.len()];
    for (p, row) in f.v.chunks(inner.max(1)).enumerate() {
        let ch = p % c.max(1);
        let m = row.iter().sum::<f64>() / inner as f64;
        let var = row.iter().map(|v| (v - m).powi(2)).sum::<f64>() / inner as f64;
        let is = 1.0 / (var + eps).sqrt();
        for (k, v) in row.iter().enumerate() {
            let y = (v - m) * is;
            let y = w.as_ref().map_or(y, |w| y * w[ch]);
            out[p * inner + k] = b.as_ref().map_or(y, |b| y + b[ch]);
        }
    }
    one(F::new(f.shape.clone(), out).to(x.dtype())?)
}
