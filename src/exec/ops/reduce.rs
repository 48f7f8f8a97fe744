//! Reductions (sum, mean, var, std, amax, any) and the row-wise normalisations softmax and
//! log_softmax. Float reductions accumulate in `f64` and round once to the result dtype, which is
//! at least as accurate as PyTorch's float accumulation (cascade sums, Welford).

use ndarray::{ArrayD, IxDyn};

use super::{dtype_ok, one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::tensor::{Element, Tensor};
use crate::exec::value::RtValue;
use crate::ir::DType;

/// A tensor regrouped as rows: every reduced element of one output position lies in one row.
pub(crate) struct Rows<T> {
    pub out_shape: Vec<usize>,
    pub row_len: usize,
    pub flat: Vec<T>,
}

impl<T> Rows<T> {
    pub fn rows(&self) -> std::slice::ChunksExact<'_, T> {
        self.flat.chunks_exact(self.row_len.max(1))
    }
}

/// Normalised, sorted, de-duplicated reduction dims; no dims (or an empty list) means all.
pub(crate) fn reduce_dims(dims: Option<Vec<i64>>, ndim: usize) -> OpResult<Vec<usize>> {
    let mut out = match dims {
        Some(d) if !d.is_empty() => d.iter().map(|&d| wrap_dim(d, ndim)).collect::<OpResult<Vec<_>>>()?,
        _ => (0..ndim).collect(),
    };
    out.sort_unstable();
    out.dedup();
    out.retain(|&d| d < ndim);
    Ok(out)
}

pub(crate) fn group<T: Element>(t: &Tensor, dims: &[usize], keepdim: bool) -> Rows<T> {
    let shape = t.shape();
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !dims.contains(d)).collect();
    let order: Vec<usize> = kept.iter().chain(dims).copied().collect();
    let flat: Vec<T> = t.to_array::<T>().permuted_axes(IxDyn(&order)).iter().copied().collect();
    let row_len = dims.iter().map(|&d| shape[d]).product();
    let out_shape = if keepdim {
        shape.iter().enumerate().map(|(i, &s)| if dims.contains(&i) { 1 } else { s }).collect()
    } else {
        kept.iter().map(|&d| shape[d]).collect()
    };
    Rows { out_shape, row_len, flat }
}

impl<T> Rows<T> {
    /// Output positions; with a zero-size reduced dim there are no rows but still outputs.
    fn count(&self) -> usize {
        self.out_shape.iter().product()
    }
}

/// Applies `f` to each row (in `f64`) and shapes the results as a tensor of `out`.
fn reduce_float(t: &Tensor, dims: &[usize], keepdim: bool, out: DType, f: impl Fn(&[f64]) -> f64) -> OpResult<Tensor> {
    let rows = group::<f64>(t, dims, keepdim);
    let vals: Vec<f64> = if rows.row_len == 0 { vec![f(&[]); rows.count()] } else { rows.rows().map(f).collect() };
    let r = Tensor::from_vec(&rows.out_shape, vals).ok_or_else(|| OpError::Shape("reduction shape".into()))?;
    dtype_ok(r.cast(out))
}

fn keepdim(cx: &OpCx) -> OpResult<bool> {
    cx.bool_or("keepdim", false)
}

fn sum_f(row: &[f64]) -> f64 {
    row.iter().sum()
}

fn mean_f(row: &[f64]) -> f64 {
    row.iter().sum::<f64>() / row.len() as f64
}

/// Sum; integer and bool inputs sum exactly in `i64`, as PyTorch does.
pub fn sum(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let out = cx.opt_dtype("dtype")?.unwrap_or(sum_dtype(t.dtype()));
    one(sum_over(t, &dims, keepdim(cx)?, out)?)
}

/// The dtype `sum` gives without a `dtype` argument: floats keep theirs, integers and bool
/// accumulate and answer in int64.
pub(crate) fn sum_dtype(d: DType) -> DType {
    if d.is_floating() {
        d
    } else {
        DType::I64
    }
}

/// The sum over `dims` as a tensor of `out`; integer results sum exactly (wrapping) in `i64`.
pub(crate) fn sum_over(t: &Tensor, dims: &[usize], keep: bool, out: DType) -> OpResult<Tensor> {
    if out.is_floating() {
        return reduce_float(t, dims, keep, out, sum_f);
    }
    let rows = group::<i64>(t, dims, keep);
    let vals: Vec<i64> =
        if rows.row_len == 0 { vec![0; rows.count()] } else { rows.rows().map(|r| r.iter().fold(0i64, |a, &b| a.wrapping_add(b))).collect() };
    let r = Tensor::from_vec(&rows.out_shape, vals).ok_or_else(|| OpError::Shape("reduction shape".into()))?;
    dtype_ok(r.cast(out))
}

pub fn mean(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let out = cx.opt_dtype("dtype")?.unwrap_or(t.dtype());
    if !out.is_floating() {
        return Err(OpError::Unsupported(format!("mean of a {out} tensor (PyTorch requires a float dtype)")));
    }
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    one(reduce_float(t, &dims, keepdim(cx)?, out, mean_f)?)
}

fn extreme(cx: &OpCx, pick: fn(f64, f64) -> bool) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let rows = group::<f64>(t, &dims, keepdim(cx)?);
    if rows.row_len == 0 && rows.count() > 0 {
        return shape_err("amax/amin over a zero-size dim has no identity");
    }
    let f = |r: &[f64]| {
        r.iter().copied().fold(r[0], |m, x| if m.is_nan() || x.is_nan() { f64::NAN } else if pick(x, m) { x } else { m })
    };
    if t.dtype().is_floating() {
        return one(reduce_float(t, &dims, keepdim(cx)?, t.dtype(), f)?);
    }
    // Integers: compare exactly in i64.
    let rows = group::<i64>(t, &dims, keepdim(cx)?);
    let vals: Vec<i64> = rows
        .rows()
        .map(|r| r.iter().copied().fold(r[0], |m, x| if pick(x as f64, m as f64) { x } else { m }))
        .collect();
    let r = Tensor::from_vec(&rows.out_shape, vals).ok_or_else(|| OpError::Shape("reduction shape".into()))?;
    one(dtype_ok(r.cast(t.dtype()))?)
}

pub fn amax(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    extreme(cx, |x, m| x > m)
}

pub fn amin(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    extreme(cx, |x, m| x < m)
}

/// `any`: bool result (uint8 stays uint8, as PyTorch keeps it for `all` and `any` alike).
pub fn any(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let rows = group::<bool>(&dtype_ok(t.cast(DType::Bool))?, &dims, keepdim(cx)?);
    let vals: Vec<bool> = if rows.row_len == 0 { vec![false; rows.count()] } else { rows.rows().map(|r| r.iter().any(|&b| b)).collect() };
    let r = Tensor::from_vec(&rows.out_shape, vals).ok_or_else(|| OpError::Shape("reduction shape".into()))?;
    one(if t.dtype() == DType::U8 { dtype_ok(r.cast(DType::U8))? } else { r })
}

/// The `correction` of var/std: `correction` (var.correction, default 1) or `unbiased` (var.dim).
fn correction(cx: &OpCx) -> OpResult<f64> {
    if let Some(c) = cx.opt_scalar("correction")? {
        return Ok(c.to_f64());
    }
    Ok(if cx.bool_or("unbiased", true)? { 1.0 } else { 0.0 })
}

/// Two-pass variance with divisor `max(0, N - correction)`.
pub(crate) fn var_f(row: &[f64], correction: f64) -> f64 {
    let m = mean_f(row);
    let ss: f64 = row.iter().map(|x| (x - m) * (x - m)).sum();
    ss / (row.len() as f64 - correction).max(0.0)
}

fn var_like(cx: &OpCx, sqrt: bool) -> OpResult<Tensor> {
    let t = cx.tensor("self")?;
    if !t.dtype().is_floating() {
        return Err(OpError::Unsupported(format!("var/std of a {} tensor (PyTorch requires a float dtype)", t.dtype())));
    }
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let c = correction(cx)?;
    reduce_float(t, &dims, keepdim(cx)?, t.dtype(), |r| if sqrt { var_f(r, c).sqrt() } else { var_f(r, c) })
}

pub fn var(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(var_like(cx, false)?)
}

pub fn std(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(var_like(cx, true)?)
}

/// `(var, mean)`.
pub fn var_mean(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let v = var_like(cx, false)?;
    let t = cx.tensor("self")?;
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let m = reduce_float(t, &dims, keepdim(cx)?, t.dtype(), mean_f)?;
    Ok(vec![RtValue::Tensor(v), RtValue::Tensor(m)])
}

/// Applies `f` to every 1-D line along `dim` (as `f64`), writing a same-shaped result.
pub(crate) fn along_dim(t: &Tensor, dim: usize, f: impl Fn(&[f64], &mut [f64])) -> OpResult<ArrayD<f64>> {
    let nd = t.ndim();
    if nd == 0 {
        let mut out = [0.0];
        f(&t.to_f64_vec(), &mut out);
        return Ok(ArrayD::from_elem(IxDyn(&[]), out[0]));
    }
    let order: Vec<usize> = (0..nd).filter(|&d| d != dim).chain([dim]).collect();
    let moved = t.to_array::<f64>().permuted_axes(IxDyn(&order));
    let moved_shape = moved.shape().to_vec();
    let flat: Vec<f64> = moved.iter().copied().collect();
    let n = t.shape()[dim];
    let mut out = vec![0.0; flat.len()];
    if n > 0 {
        for (src, dst) in flat.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
            f(src, dst);
        }
    }
    let mut inverse = vec![0; nd];
    for (i, &o) in order.iter().enumerate() {
        inverse[o] = i;
    }
    let arr = ArrayD::from_shape_vec(IxDyn(&moved_shape), out).map_err(|e| OpError::Shape(e.to_string()))?;
    Ok(arr.permuted_axes(IxDyn(&inverse)))
}

fn softmax_like(cx: &OpCx, log: bool) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int("dim")?, t.ndim())?;
    let out = match cx.opt_dtype("dtype")? {
        Some(d) => d,
        None if t.dtype().is_floating() => t.dtype(),
        None => return Err(OpError::Unsupported(format!("softmax of a {} tensor", t.dtype()))),
    };
    let a = along_dim(t, dim, |x, y| {
        let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = x.iter().map(|v| (v - m).exp()).sum();
        for (o, v) in y.iter_mut().zip(x) {
            *o = if log { v - m - s.ln() } else { (v - m).exp() / s };
        }
    })?;
    one(dtype_ok(Tensor::from_array(a).cast(out))?)
}

pub fn softmax(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    softmax_like(cx, false)
}

pub fn log_softmax(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    softmax_like(cx, true)
}

/// `prod`: integers and bool multiply in int64 (wrapping), as PyTorch does.
pub fn prod(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    // A 0-d input's dim 0 (or -1) is its one element: reduce_dims leaves nothing to reduce.
    let dims = reduce_dims(cx.opt_int("dim")?.map(|d| vec![d]), t.ndim())?;
    let keep = keepdim(cx)?;
    let out = match cx.opt_dtype("dtype")? {
        Some(d) => d,
        None if t.dtype().is_floating() => t.dtype(),
        None => DType::I64,
    };
    if out.is_floating() {
        return one(reduce_float(t, &dims, keep, out, |r| r.iter().product())?);
    }
    let rows = group::<i64>(t, &dims, keep);
    let vals: Vec<i64> =
        if rows.row_len == 0 { vec![1; rows.count()] } else { rows.rows().map(|r| r.iter().fold(1i64, |a, &b| a.wrapping_mul(b))).collect() };
    let r = Tensor::from_vec(&rows.out_shape, vals).ok_or_else(|| OpError::Shape("reduction shape".into()))?;
    one(dtype_ok(r.cast(out))?)
}

/// `all`: bool result (uint8 stays uint8, as PyTorch keeps it).
pub fn all(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let rows = group::<bool>(&dtype_ok(t.cast(DType::Bool))?, &dims, keepdim(cx)?);
    let vals: Vec<bool> = if rows.row_len == 0 { vec![true; rows.count()] } else { rows.rows().map(|r| r.iter().all(|&b| b)).collect() };
    let r = Tensor::from_vec(&rows.out_shape, vals).ok_or_else(|| OpError::Shape("reduction shape".into()))?;
    one(if t.dtype() == DType::U8 { dtype_ok(r.cast(DType::U8))? } else { r })
}

pub fn count_nonzero(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let rows = group::<f64>(t, &dims, false);
    let vals: Vec<i64> =
        if rows.row_len == 0 { vec![0; rows.count()] } else { rows.rows().map(|r| r.iter().filter(|&&x| x != 0.0).count() as i64).collect() };
    one(Tensor::from_vec(&rows.out_shape, vals).ok_or_else(|| OpError::Shape("reduction shape".into()))?)
}

pub fn nansum(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let out = cx.opt_dtype("dtype")?.unwrap_or(if t.dtype().is_floating() { t.dtype() } else { DType::I64 });
    one(reduce_float(t, &dims, keepdim(cx)?, out, |r| r.iter().filter(|x| !x.is_nan()).sum())?)
}

pub fn nanmean(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let out = cx.opt_dtype("dtype")?.unwrap_or(t.dtype());
    one(reduce_float(t, &dims, keepdim(cx)?, out, |r| {
        let v: Vec<f64> = r.iter().copied().filter(|x| !x.is_nan()).collect();
        v.iter().sum::<f64>() / v.len() as f64
    })?)
}

pub fn logsumexp(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let out = if t.dtype().is_floating() { t.dtype() } else { DType::F32 };
    one(reduce_float(t, &dims, keepdim(cx)?, out, |r| {
        let m = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if m.is_infinite() {
            return if r.iter().any(|x| x.is_nan()) { f64::NAN } else { m };
        }
        m + r.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
    })?)
}

pub fn aminmax(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let lo = extreme(cx, |x, m| x < m)?;
    let hi = extreme(cx, |x, m| x > m)?;
    Ok(lo.into_iter().chain(hi).collect())
}

/// `linalg_vector_norm(x, ord, dim, keepdim, dtype)`: `(Σ|x|^ord)^(1/ord)`, with ±inf and 0.
pub fn vector_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let ord = cx.float_or("ord", 2.0)?;
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let out = cx.opt_dtype("dtype")?.unwrap_or(t.dtype());
    if !out.is_floating() {
        return Err(OpError::Unsupported(format!("vector norm of a {out} tensor (PyTorch requires a float dtype)")));
    }
    one(reduce_float(t, &dims, keepdim(cx)?, out, move |r| norm_f(r, ord))?)
}

pub(crate) fn norm_f(r: &[f64], ord: f64) -> f64 {
    let a = r.iter().map(|x| x.abs());
    if ord == f64::INFINITY {
        a.fold(0.0, |m, x| if m.is_nan() || x.is_nan() { f64::NAN } else { m.max(x) })
    } else if ord == f64::NEG_INFINITY {
        a.fold(f64::INFINITY, |m, x| if m.is_nan() || x.is_nan() { f64::NAN } else { m.min(x) })
    } else if ord == 0.0 {
        a.filter(|&x| x != 0.0).count() as f64
    } else if ord == 1.0 {
        a.sum()
    } else if ord == 2.0 {
        a.map(|x| x * x).sum::<f64>().sqrt()
    } else {
        a.map(|x| x.powf(ord)).sum::<f64>().powf(1.0 / ord)
    }
}

/// `(std, mean)`.
pub fn std_mean(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let s = var_like(cx, true)?;
    let t = cx.tensor("self")?;
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let m = reduce_float(t, &dims, keepdim(cx)?, t.dtype(), mean_f)?;
    Ok(vec![RtValue::Tensor(s), RtValue::Tensor(m)])
}

/// `hash_tensor(self, dim=[], keepdim=False, mode=0)`: per output position, the exclusive or of
/// the 64-bit words of its reduced elements, as ATen's `xor_sum` folds them into a uint64: a
/// float element gives the bits of its value widened to float64, an integer its value
/// sign-extended to 64 bits, a bool 0 or 1. An empty reduction is 0.
pub fn hash_tensor(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let mode = cx.int_or("mode", 0)?;
    if mode != 0 {
        return Err(OpError::Arg { arg: "mode".into(), message: format!("{mode}: PyTorch defines only mode 0 (xor_sum)") });
    }
    let dims = reduce_dims(cx.opt_ints("dim")?, t.ndim())?;
    let keep = keepdim(cx)?;
    let (out_shape, words): (Vec<usize>, Vec<u64>) = if t.dtype().is_floating() {
        let rows = group::<f64>(t, &dims, keep);
        let fold = |r: &[f64]| r.iter().fold(0u64, |h, x| h ^ x.to_bits());
        let w = if rows.row_len == 0 { vec![0; rows.count()] } else { rows.rows().map(fold).collect() };
        (rows.out_shape, w)
    } else {
        // `to_i64` widens signed integers with their sign and keeps a uint64's bits.
        let rows = group::<i64>(t, &dims, keep);
        let fold = |r: &[i64]| r.iter().fold(0u64, |h, x| h ^ *x as u64);
        let w = if rows.row_len == 0 { vec![0; rows.count()] } else { rows.rows().map(fold).collect() };
        (rows.out_shape, w)
    };
    one(Tensor::from_vec(&out_shape, words).ok_or_else(|| OpError::Shape("reduction shape".into()))?)
}
