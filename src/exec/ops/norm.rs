//! Layer and batch normalisation (inference), computed in `f64` and rounded once.

use super::reduce::group;
use super::{dtype_ok, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;

fn float_input<'a>(cx: &OpCx<'a>) -> OpResult<&'a Tensor> {
    let x = cx.tensor("input")?;
    if !x.dtype().is_floating() {
        return Err(OpError::DType(x.dtype()));
    }
    Ok(x)
}

/// An optional per-feature parameter as `f64`, checked to hold `n` elements.
fn param(cx: &OpCx, name: &str, n: usize) -> OpResult<Option<Vec<f64>>> {
    match cx.opt_tensor(name)? {
        None => Ok(None),
        Some(t) if t.numel() == n => Ok(Some(t.to_f64_vec())),
        Some(t) => shape_err(format!("{name} has shape {:?}, expected {n} elements", t.shape())),
    }
}

/// The trailing dims `normalized_shape` names, checked against `shape`, and their element count.
fn normalized_dims(cx: &OpCx, shape: &[usize]) -> OpResult<(Vec<usize>, usize)> {
    let ns = cx.ints("normalized_shape")?;
    let k = ns.len();
    if k > shape.len() || shape[shape.len() - k..].iter().zip(&ns).any(|(&a, &b)| a as i64 != b) {
        return shape_err(format!("normalized_shape {ns:?} does not match the trailing dims of {shape:?}"));
    }
    let dims: Vec<usize> = (shape.len() - k..shape.len()).collect();
    let n = dims.iter().map(|&d| shape[d]).product();
    Ok((dims, n))
}

/// `(out, mean, rstd)` over the trailing `normalized_shape` dims; mean and rstd keep those dims as 1.
fn layer_norm_impl(cx: &OpCx) -> OpResult<[Tensor; 3]> {
    let x = float_input(cx)?;
    let shape = x.shape();
    let (dims, n) = normalized_dims(cx, shape)?;
    let (w, b) = (param(cx, "weight", n)?, param(cx, "bias", n)?);
    let eps = cx.float_or("eps", 1e-5)?;
    // The normalised dims are the trailing ones, so rows are contiguous and in input order.
    let rows = group::<f64>(x, &dims, true);
    let (mut out, mut means, mut rstds) = (Vec::with_capacity(x.numel()), Vec::new(), Vec::new());
    for row in rows.flat.chunks(n.max(1)) {
        let mean = row.iter().sum::<f64>() / n as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
        let rstd = 1.0 / (var + eps).sqrt();
        for (i, v) in row.iter().enumerate() {
            let y = (v - mean) * rstd;
            let y = w.as_ref().map_or(y, |w| y * w[i]);
            out.push(b.as_ref().map_or(y, |b| y + b[i]));
        }
        means.push(mean);
        rstds.push(rstd);
    }
    let mk = |s: &[usize], v: Vec<f64>| -> OpResult<Tensor> {
        let t = Tensor::from_vec(s, v).ok_or_else(|| OpError::Shape("layer_norm result".into()))?;
        dtype_ok(t.cast(x.dtype()))
    };
    Ok([mk(shape, out)?, mk(&rows.out_shape, means)?, mk(&rows.out_shape, rstds)?])
}

pub fn layer_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let [out, _, _] = layer_norm_impl(cx)?;
    Ok(vec![RtValue::Tensor(out)])
}

pub fn native_layer_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    Ok(layer_norm_impl(cx)?.into_iter().map(RtValue::Tensor).collect())
}

/// `(out, rstd)` of RMS normalisation over the trailing `normalized_shape` dims:
/// `x * rsqrt(mean(x²) + eps) * weight`, `eps` defaulting to the opmath dtype's epsilon; `rstd`
/// keeps the normalised dims as 1 and is in the opmath dtype (float32 for half inputs).
fn rms_norm_impl(cx: &OpCx) -> OpResult<[Tensor; 2]> {
    let x = float_input(cx)?;
    let shape = x.shape();
    let (dims, n) = normalized_dims(cx, shape)?;
    let w = param(cx, "weight", n)?;
    let eps = match cx.opt_float("eps")? {
        Some(e) => e,
        None => x.dtype().opmath().finfo_eps().ok_or(OpError::DType(x.dtype()))?,
    };
    let rows = group::<f64>(x, &dims, true);
    let (mut out, mut rstds) = (Vec::with_capacity(x.numel()), Vec::new());
    for row in rows.flat.chunks(n.max(1)) {
        let ms = row.iter().map(|v| v * v).sum::<f64>() / n as f64;
        let rstd = 1.0 / (ms + eps).sqrt();
        for (i, v) in row.iter().enumerate() {
            let y = v * rstd;
            out.push(w.as_ref().map_or(y, |w| y * w[i]));
        }
        rstds.push(rstd);
    }
    let out = Tensor::from_vec(shape, out).ok_or_else(|| OpError::Shape("rms_norm result".into()))?;
    let rstd = Tensor::from_vec(&rows.out_shape, rstds).ok_or_else(|| OpError::Shape("rms_norm rstd".into()))?;
    Ok([dtype_ok(out.cast(x.dtype()))?, dtype_ok(rstd.cast(x.dtype().opmath()))?])
}

pub fn rms_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let [out, _] = rms_norm_impl(cx)?;
    Ok(vec![RtValue::Tensor(out)])
}

pub fn fused_rms_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    Ok(rms_norm_impl(cx)?.into_iter().map(RtValue::Tensor).collect())
}

/// Inference batch norm over dim 1 with the running statistics.
fn batch_norm_eval(cx: &OpCx) -> OpResult<Tensor> {
    let x = float_input(cx)?;
    if x.ndim() < 2 {
        return shape_err(format!("batch_norm expects at least 2 dims (N, C, ...), got {:?}", x.shape()));
    }
    let c = x.shape()[1];
    let need = |name: &str| -> OpResult<Vec<f64>> {
        param(cx, name, c)?.ok_or_else(|| OpError::Unsupported(format!("inference batch_norm without {name}")))
    };
    let (mean, var) = (need("running_mean")?, need("running_var")?);
    let (w, b) = (param(cx, "weight", c)?, param(cx, "bias", c)?);
    let eps = cx.float_or("eps", 1e-5)?;
    let inner: usize = x.shape()[2..].iter().product();
    let data: Vec<f64> = x
        .to_f64_vec()
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let ch = (i / inner.max(1)) % c;
            let y = (v - mean[ch]) / (var[ch] + eps).sqrt();
            let y = w.as_ref().map_or(y, |w| y * w[ch]);
            b.as_ref().map_or(y, |b| y + b[ch])
        })
        .collect();
    let t = Tensor::from_vec(x.shape(), data).ok_or_else(|| OpError::Shape("batch_norm result".into()))?;
    dtype_ok(t.cast(x.dtype()))
}

/// `(out, save_mean, save_invstd)`: in inference PyTorch returns empty `[0]` statistics.
pub fn native_batch_norm_no_training(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let out = batch_norm_eval(cx)?;
    let empty = || dtype_ok(Tensor::full(out.dtype(), &[0], 0.0)).map(RtValue::Tensor);
    Ok(vec![RtValue::Tensor(out.clone()), empty()?, empty()?])
}

/// `(out, mean, rstd)` of group norm: `input` is `[N, C, *]`, normalised per sample over each
/// group of `C / G` channels; `weight`/`bias` are per channel; mean and rstd are `[N, G]`.
fn group_norm_impl(x: &Tensor, groups: usize, w: Option<Vec<f64>>, b: Option<Vec<f64>>, eps: f64) -> OpResult<[Tensor; 3]> {
    let s = x.shape();
    if s.len() < 2 || groups == 0 || !s[1].is_multiple_of(groups) {
        return shape_err(format!("group norm of {s:?} into {groups} groups"));
    }
    let (n, c) = (s[0], s[1]);
    let hw: usize = s[2..].iter().product();
    let per = c / groups * hw;
    let v = x.to_f64_vec();
    let mut out = vec![0.0; v.len()];
    let (mut means, mut rstds) = (Vec::with_capacity(n * groups), Vec::with_capacity(n * groups));
    for (gi, chunk) in v.chunks(per.max(1)).enumerate().take(n * groups) {
        let mean = chunk.iter().sum::<f64>() / per as f64;
        let var = chunk.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / per as f64;
        let rstd = 1.0 / (var + eps).sqrt();
        for (k, x) in chunk.iter().enumerate() {
            let at = gi * per + k;
            let ch = (at / hw.max(1)) % c;
            let y = (x - mean) * rstd;
            let y = w.as_ref().map_or(y, |w| y * w[ch]);
            out[at] = b.as_ref().map_or(y, |b| y + b[ch]);
        }
        means.push(mean);
        rstds.push(rstd);
    }
    let mk = |shape: &[usize], v: Vec<f64>| -> OpResult<Tensor> {
        let t = Tensor::from_vec(shape, v).ok_or_else(|| OpError::Shape("group_norm result".into()))?;
        dtype_ok(t.cast(x.dtype()))
    };
    Ok([mk(s, out)?, mk(&[n, groups], means)?, mk(&[n, groups], rstds)?])
}

pub fn group_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = float_input(cx)?;
    let c = x.shape().get(1).copied().unwrap_or(0);
    let g = cx.int("num_groups")?.max(0) as usize;
    let [o, _, _] = group_norm_impl(x, g, param(cx, "weight", c)?, param(cx, "bias", c)?, cx.float_or("eps", 1e-5)?)?;
    Ok(vec![RtValue::Tensor(o)])
}

pub fn native_group_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = float_input(cx)?;
    let c = x.shape().get(1).copied().unwrap_or(0);
    let g = cx.int("group")?.max(0) as usize;
    let r = group_norm_impl(x, g, param(cx, "weight", c)?, param(cx, "bias", c)?, cx.float_or("eps", 1e-5)?)?;
    Ok(r.into_iter().map(RtValue::Tensor).collect())
}

/// Weight normalisation: `(v * (g / ‖v‖), ‖v‖)`, the 2-norm over every dim of `v` but `dim`
/// (kept, as size 1), or over all of `v` for `dim == -1` (`norm_except_dim`'s whole-tensor case).
/// Each step is rounded to its dtype as PyTorch's decomposition computes it: the norm (float32
/// for a bfloat16 `g`, as CUDA keeps it), `g / norm` in `g`'s dtype, then the product.
fn weight_norm_impl(cx: &OpCx) -> OpResult<[Tensor; 2]> {
    let (v, g) = (cx.tensor("v")?, cx.tensor("g")?);
    if !v.dtype().is_floating() || !g.dtype().is_floating() {
        return Err(OpError::DType(if v.dtype().is_floating() { g.dtype() } else { v.dtype() }));
    }
    let shape = v.shape().to_vec();
    let dim = cx.int_or("dim", 0)?;
    let along = if dim == -1 { None } else { Some(super::wrap_dim(dim, shape.len())?) };
    let (n, inner) = match along {
        Some(d) => (shape[d], shape[d + 1..].iter().product::<usize>()),
        None => (1, 1),
    };
    if g.numel() != n {
        return shape_err(format!("g has {} elements, expected {n} (v is {shape:?}, dim {dim})", g.numel()));
    }
    let at = |i: usize| if along.is_some() { (i / inner.max(1)) % n.max(1) } else { 0 };
    let vals = v.to_f64_vec();
    let mut sq = vec![0.0; n];
    for (i, x) in vals.iter().enumerate() {
        sq[at(i)] += x * x;
    }
    let norm_dtype = if g.dtype() == crate::ir::DType::BF16 { crate::ir::DType::F32 } else { v.dtype() };
    let round = |shape: &[usize], x: Vec<f64>, dtype| -> OpResult<Tensor> {
        let t = Tensor::from_vec(shape, x).ok_or_else(|| OpError::Shape("weight_norm result".into()))?;
        dtype_ok(t.cast(dtype))
    };
    let norm_shape: Vec<usize> = match along {
        Some(d) => (0..shape.len()).map(|k| if k == d { n } else { 1 }).collect(),
        None => Vec::new(),
    };
    let norm = round(&norm_shape, sq.into_iter().map(f64::sqrt).collect(), norm_dtype)?;
    let norm_g = dtype_ok(norm.cast(g.dtype()))?.to_f64_vec();
    let scale = round(&[n], g.to_f64_vec().iter().zip(&norm_g).map(|(g, s)| g / s).collect(), g.dtype())?.to_f64_vec();
    let out_dtype = crate::ir::DType::promote_types(v.dtype(), g.dtype()).ok_or(OpError::DType(g.dtype()))?;
    let out = round(&shape, vals.iter().enumerate().map(|(i, x)| x * scale[at(i)]).collect(), out_dtype)?;
    Ok([out, norm])
}

/// `_weight_norm(v, g, dim)`: the weight `v * (g / ‖v‖)`.
pub fn weight_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let [out, _] = weight_norm_impl(cx)?;
    Ok(vec![RtValue::Tensor(out)])
}

/// `_weight_norm_interface(v, g, dim)`: the weight and the norm it divided by.
pub fn weight_norm_interface(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    Ok(weight_norm_impl(cx)?.into_iter().map(RtValue::Tensor).collect())
}
