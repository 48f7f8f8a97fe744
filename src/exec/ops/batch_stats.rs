//! Batch and instance normalisation with batch statistics (training mode): the outputs are
//! deterministic functions of the input, so the interpreter computes them; the running-stat
//! updates PyTorch performs in place are not graph outputs and are not modelled.
//! `native_batch_norm`, `_native_batch_norm_legit(.no_stats)`, `_batch_norm_with_update`,
//! `batch_norm` in either mode, and `instance_norm`.

use super::fvec::{need_float, round_to, F};
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

/// Where PyTorch's CPU kernel rounds the batch statistics of a 16-bit float input (ATen
/// `batch_norm_cpu_update_stats_template` with `batch_norm_cpu_collect_stats_contiguous_internal`):
/// the mean and invstd are stored in the input's dtype before the output uses them; bfloat16
/// also stores the sum of squared deviations and the variance, while float16 keeps those in
/// float32 (its range is too small for the sum, PyTorch PR #126525). Wider dtypes round nothing.
#[derive(Clone, Copy)]
pub(crate) struct StatRounding {
    dtype: DType,
}

impl StatRounding {
    pub(crate) fn of(dtype: DType) -> StatRounding {
        StatRounding { dtype }
    }

    /// `(mean, invstd)` from the mean and the sum of squared deviations of `count` values.
    pub(crate) fn stats(self, mean: f64, var_sum: f64, count: f64, eps: f64) -> (f64, f64) {
        let narrow = round_to(self.dtype);
        let (mean, var) = match self.dtype {
            DType::BF16 => (narrow(mean), narrow(narrow(var_sum) / count)),
            DType::F16 => (narrow(mean), var_sum / count),
            _ => (mean, var_sum / count),
        };
        let invstd = if var == 0.0 && eps == 0.0 { 0.0 } else { 1.0 / (var + eps).sqrt() };
        let invstd = if matches!(self.dtype, DType::F16 | DType::BF16) { narrow(invstd) } else { invstd };
        (mean, invstd)
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
    let rounding = StatRounding::of(x.dtype());
    let mut mean = vec![0.0; c];
    let mut invstd = vec![0.0; c];
    for ch in 0..c {
        let vals = || (0..n).flat_map(move |i| (0..inner).map(move |k| (i * c + ch) * inner + k));
        if use_batch {
            let m = vals().map(|j| f.v[j]).sum::<f64>() / count;
            let var_sum = vals().map(|j| (f.v[j] - m).powi(2)).sum::<f64>();
            (mean[ch], invstd[ch]) = rounding.stats(m, var_sum, count, eps);
        } else if let (Some(rm), Some(rv)) = (&rm, &rv) {
            mean[ch] = rm[ch];
            invstd[ch] = 1.0 / (rv[ch] + eps).sqrt();
        }
    }
    // PyTorch folds the affine map into `x·alpha + beta` per channel.
    let (alpha, beta): (Vec<f64>, Vec<f64>) = (0..c)
        .map(|ch| {
            let a = invstd[ch] * w.as_ref().map_or(1.0, |w| w[ch]);
            (a, b.as_ref().map_or(0.0, |b| b[ch]) - mean[ch] * a)
        })
        .unzip();
    let out: Vec<f64> = f
        .v
        .iter()
        .enumerate()
        .map(|(j, &v)| {
            let ch = (j / inner.max(1)) % c.max(1);
            v * alpha[ch] + beta[ch]
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
    // PyTorch runs batch norm over the input viewed as (1, N·C, ...): the same rounding of
    // the statistics per sample and channel.
    let rounding = StatRounding::of(x.dtype());
    for (p, row) in f.v.chunks(inner.max(1)).enumerate() {
        let ch = p % c.max(1);
        let m = row.iter().sum::<f64>() / inner as f64;
        let var_sum = row.iter().map(|v| (v - m).powi(2)).sum::<f64>();
        let (m, is) = rounding.stats(m, var_sum, inner as f64, eps);
        let alpha = is * w.as_ref().map_or(1.0, |w| w[ch]);
        let beta = b.as_ref().map_or(0.0, |b| b[ch]) - m * alpha;
        for (k, v) in row.iter().enumerate() {
            out[p * inner + k] = v * alpha + beta;
        }
    }
    one(F::new(f.shape.clone(), out).to(x.dtype())?)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{boolean, call1, float, A};
    use crate::exec::tensor::Tensor;
    use crate::ir::DType;

    fn half(shape: &[usize], v: &[f32], dtype: DType) -> A {
        A::T(Tensor::from_vec(shape, v.to_vec()).expect("shape").cast(dtype).expect("cast"))
    }

    /// One sample and channel of PyTorch 2.15's `instance_norm` OpInfo case (eps 0.6) and its
    /// recorded output.
    fn instance_norm(x: &[f32], w: f32, b: f32, dtype: DType) -> Vec<f64> {
        let args = vec![
            ("input", half(&[1, 1, 5], x, dtype)),
            ("weight", half(&[1], &[w], dtype)),
            ("bias", half(&[1], &[b], dtype)),
            ("use_input_stats", boolean(true)),
            ("eps", float(0.6)),
        ];
        call1("aten.instance_norm.default", args).to_f64_vec()
    }

    #[test]
    fn float16_keeps_the_squared_deviations_in_float32() {
        // Rounding their sum (106.90) to float16 (106.875) would move invstd by one ulp and
        // the outputs with it.
        let got = instance_norm(&[1.822_265_6, -3.521_484_4, -4.4140625, 2.328125, 8.3984375], -8.4765625, 3.611_328_1, DType::F16);
        assert_eq!(got, vec![1.9853515625, 11.6484375, 13.2578125, 1.0712890625, -9.8984375]);
    }

    #[test]
    fn bfloat16_rounds_mean_variance_and_invstd() {
        let got = instance_norm(&[-1.6015625, -9.0, 0.74609375, 2.546875, -3.640625], -7.9375, -3.03125, DType::BF16);
        assert_eq!(got, vec![-4.15625, 10.25, -8.75, -12.25, -0.2041015625]);
    }
}
