//! Normalisations. Inductor computes layer norm as `var_mean` over the normalized dims, then
//! `(x - mean) * rsqrt(var + eps) * weight + bias`; batch norm in inference the same way with the
//! running statistics, broadcast over the channel dimension.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::infer::layout::elementwise_strides;
use crate::ir::{Arg, DType, ValueId};

/// `layer_norm` → `native_layer_norm(...)[0]` (core ATen); under `full` that decomposes further.
pub fn layer_norm(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let args = vec![
        ("input", A::T(rw.t("input")?)),
        ("normalized_shape", A::Is(rw.ints("normalized_shape")?.unwrap_or_default())),
        ("weight", A::OptT(rw.opt_t("weight")?)),
        ("bias", A::OptT(rw.opt_t("bias")?)),
        ("eps", A::F(rw.float("eps", Some(1e-5))?)),
    ];
    let outs = rw.op_n("aten.native_layer_norm.default", args)?;
    Ok(outs.into_iter().take(1).collect())
}

pub fn native_layer_norm(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("input")?;
    let k = rw.ints("normalized_shape")?.unwrap_or_default().len();
    let rank = rw.rank(x)?;
    if k == 0 || k > rank {
        return Err(RuleError::Arg { name: "normalized_shape".into(), message: format!("{k} dims for rank {rank}") });
    }
    let eps = rw.float("eps", Some(1e-5))?;
    // torch's reference makes the input contiguous first (a `clone` when it is not).
    let x = if super::view::is_contiguous(rw.meta(x)?) { x } else { super::view::contiguous_clone(rw, x)? };
    let dims: Vec<i64> = (rank - k..rank).map(|d| d as i64).collect();
    let vm = rw.op_n(
        "aten.var_mean.correction",
        vec![("self", A::T(x)), ("dim", A::Is(dims)), ("correction", A::I(0)), ("keepdim", A::B(true))],
    )?;
    let (var, mean) = (vm[0], vm[1]);
    let var_eps = rw.op("aten.add.Tensor", vec![("self", A::T(var)), ("other", A::F(eps))])?;
    let rstd = rw.op("aten.rsqrt.default", vec![("self", A::T(var_eps))])?;
    let centered = rw.op("aten.sub.Tensor", vec![("self", A::T(x)), ("other", A::T(mean))])?;
    let mut y = rw.op("aten.mul.Tensor", vec![("self", A::T(centered)), ("other", A::T(rstd))])?;
    if let Some(w) = rw.opt_t("weight")? {
        y = rw.op("aten.mul.Tensor", vec![("self", A::T(y)), ("other", A::T(w))])?;
    }
    if let Some(b) = rw.opt_t("bias")? {
        y = rw.op("aten.add.Tensor", vec![("self", A::T(y)), ("other", A::T(b))])?;
    }
    Ok(vec![y, mean, rstd])
}

/// `rms_norm` → `_fused_rms_norm(...)[0]`, its CompositeImplicitAutograd body.
pub fn rms_norm(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let eps = match rw.float("eps", None) {
        Ok(e) => A::F(e),
        Err(_) => A::Raw(Arg::None),
    };
    let args = vec![
        ("input", A::T(rw.t("input")?)),
        ("normalized_shape", A::Is(rw.ints("normalized_shape")?.unwrap_or_default())),
        ("weight", A::OptT(rw.opt_t("weight")?)),
        ("eps", eps),
    ];
    let outs = rw.op_n("aten._fused_rms_norm.default", args)?;
    Ok(outs.into_iter().take(1).collect())
}

/// `_fused_rms_norm` → what its CompositeImplicitAutograd body traces to (on a backend without the
/// kernel, and in both of torch's tables): `x * rsqrt(mean(x², dims, keepdim) + eps) [* weight]`,
/// computed in the opmath dtype; `eps` defaults to that dtype's epsilon. Returns `(out, rstd)`.
pub fn fused_rms_norm(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("input")?;
    let k = rw.ints("normalized_shape")?.unwrap_or_default().len();
    let rank = rw.rank(x)?;
    if k == 0 || k > rank {
        return Err(RuleError::Arg { name: "normalized_shape".into(), message: format!("{k} dims for rank {rank}") });
    }
    let dtype = rw.meta(x)?.dtype;
    let opmath = dtype.opmath();
    let eps = match rw.float("eps", None) {
        Ok(e) => e,
        Err(_) => opmath.finfo_eps().ok_or_else(|| RuleError::Unsupported(format!("rms_norm of a {dtype} tensor")))?,
    };
    let cast = |rw: &mut Rw, v: ValueId, to: DType| {
        rw.op("prims.convert_element_type.default", vec![("a", A::T(v)), ("dtype", A::Raw(Arg::ScalarType(to)))])
    };
    let up = if opmath != dtype { cast(rw, x, opmath)? } else { x };
    let dims: Vec<i64> = (rank - k..rank).map(|d| d as i64).collect();
    let sq = rw.op("aten.pow.Tensor_Scalar", vec![("self", A::T(up)), ("exponent", A::I(2))])?;
    let ms = rw.op("aten.mean.dim", vec![("self", A::T(sq)), ("dim", A::Is(dims)), ("keepdim", A::B(true))])?;
    let ms_eps = rw.op("aten.add.Scalar", vec![("self", A::T(ms)), ("other", A::F(eps))])?;
    let rstd = rw.op("aten.rsqrt.default", vec![("self", A::T(ms_eps))])?;
    let mut y = rw.op("aten.mul.Tensor", vec![("self", A::T(up)), ("other", A::T(rstd))])?;
    // `upcasted_result` as torch lays it out: each product follows its first operand's memory
    // order (a cast keeps `x`'s), so a transposed input stays transposed.
    let xm = rw.meta(x)?.clone();
    let mut layout = xm.clone();
    layout.strides = elementwise_strides(&[&xm], &xm.sizes);
    let sizes = rw.meta(y)?.sizes.clone();
    layout.strides = elementwise_strides(&[&layout, rw.meta(rstd)?], &sizes);
    layout.sizes = sizes;
    if let Some(w) = rw.opt_t("weight")? {
        y = rw.op("aten.mul.Tensor", vec![("self", A::T(y)), ("other", A::T(w))])?;
        layout.strides = elementwise_strides(&[&layout, rw.meta(w)?], &layout.sizes);
    }
    // Unless the input is channels-last, torch makes both results `.contiguous()`: a `clone`
    // where not row-major (timm AIMv2's norm of a transposed patch embedding); `rstd`, a
    // keepdim mean, is row-major already.
    if !super::view::channels_last(&xm) {
        y = super::layout::contiguous_as(rw, y, &layout.strides)?;
    }
    if opmath != dtype {
        y = cast(rw, y, dtype)?;
    }
    Ok(vec![y, rstd])
}

/// `batch_norm(training=False)` → `_native_batch_norm_legit_no_training(...)[0]`; in training
/// mode without running statistics, the batch's own statistics ([`batch_norm_batch_stats`]).
pub fn batch_norm(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    if rw.bool("training", false)? {
        if rw.opt_t("running_mean")?.is_some() || rw.opt_t("running_var")?.is_some() {
            // The running statistics would be updated in place: a side effect an inference
            // graph's later reads would have to see.
            return Err(RuleError::Unsupported("batch_norm in training mode with running statistics to update".into()));
        }
        // As torch's core table: the functional op without statistics, which Inductor's table
        // decomposes ([`native_batch_norm_no_stats`]).
        let args = vec![
            ("input", A::T(rw.t("input")?)),
            ("weight", A::OptT(rw.opt_t("weight")?)),
            ("bias", A::OptT(rw.opt_t("bias")?)),
            ("training", A::B(true)),
            ("momentum", A::F(rw.float("momentum", Some(0.1))?)),
            ("eps", A::F(rw.float("eps", Some(1e-5))?)),
        ];
        let outs = rw.op_n("aten._native_batch_norm_legit.no_stats", args)?;
        return Ok(outs.into_iter().take(1).collect());
    }
    let mean = rw.opt_t("running_mean")?.ok_or_else(|| RuleError::Unsupported("batch_norm without running_mean".into()))?;
    let var = rw.opt_t("running_var")?.ok_or_else(|| RuleError::Unsupported("batch_norm without running_var".into()))?;
    let args = vec![
        ("input", A::T(rw.t("input")?)),
        ("weight", A::OptT(rw.opt_t("weight")?)),
        ("bias", A::OptT(rw.opt_t("bias")?)),
        ("running_mean", A::T(mean)),
        ("running_var", A::T(var)),
        ("momentum", A::F(rw.float("momentum", Some(0.1))?)),
        ("eps", A::F(rw.float("eps", Some(1e-5))?)),
    ];
    let outs = rw.op_n("aten._native_batch_norm_legit_no_training.default", args)?;
    Ok(outs.into_iter().take(1).collect())
}

/// A per-channel vector `[C]` with `rank - 2` trailing `unsqueeze(-1)`s, to broadcast against
/// `[N, C, ...]` (as torch's `native_batch_norm_helper` shapes its statistics and affine terms).
fn per_channel(rw: &mut Rw, mut v: ValueId, rank: usize) -> Result<ValueId, RuleError> {
    for _ in 2..rank {
        v = rw.op("aten.unsqueeze.default", vec![("self", A::T(v)), ("dim", A::I(-1))])?;
    }
    Ok(v)
}

/// `_native_batch_norm_legit.no_stats` — `batch_norm(training=True)` with no running
/// statistics: a normalisation by the batch's own statistics, nothing updated. timm's NF-Nets
/// standardise their convolution weights so (`ScaledStdConv2d`: `F.batch_norm(w.reshape(1, out,
/// -1), None, None, gain, training=True)`). As torch's `native_batch_norm_helper` in training:
/// `var_mean` over every dim but the channel (biased) in the opmath dtype, `(x - mean) *
/// rsqrt(var + eps)`, then weight and bias unsqueezed to the input's rank, the result cast back
/// to the input's dtype; with the mean and rstd squeezed to `[C]`.
pub fn native_batch_norm_no_stats(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    if !rw.bool("training", true)? {
        return Err(RuleError::Unsupported("_native_batch_norm_legit.no_stats with training=False has no statistics to use".into()));
    }
    let x = rw.t("input")?;
    let rank = rw.rank(x)?;
    if rank < 2 {
        return Err(RuleError::Unsupported("batch norm needs a channel dimension".into()));
    }
    let eps = rw.float("eps", Some(1e-5))?;
    let dtype = rw.meta(x)?.dtype;
    let opmath = dtype.opmath();
    let cast = |rw: &mut Rw, v: ValueId, to: DType| {
        rw.op("prims.convert_element_type.default", vec![("a", A::T(v)), ("dtype", A::Raw(Arg::ScalarType(to)))])
    };
    let acc = if opmath != dtype { cast(rw, x, opmath)? } else { x };
    let dims: Vec<i64> = std::iter::once(0).chain(2..rank as i64).collect();
    let vm = rw.op_n(
        "aten.var_mean.correction",
        vec![("self", A::T(acc)), ("dim", A::Is(dims.clone())), ("correction", A::I(0)), ("keepdim", A::B(true))],
    )?;
    let (var, mean) = (vm[0], vm[1]);
    let var_eps = rw.op("aten.add.Tensor", vec![("self", A::T(var)), ("other", A::F(eps))])?;
    let rstd = rw.op("aten.rsqrt.default", vec![("self", A::T(var_eps))])?;
    let centered = rw.op("aten.sub.Tensor", vec![("self", A::T(x)), ("other", A::T(mean))])?;
    let mut y = rw.op("aten.mul.Tensor", vec![("self", A::T(centered)), ("other", A::T(rstd))])?;
    if let Some(w) = rw.opt_t("weight")? {
        let w = per_channel(rw, w, rank)?;
        y = rw.op("aten.mul.Tensor", vec![("self", A::T(y)), ("other", A::T(w))])?;
    }
    if let Some(b) = rw.opt_t("bias")? {
        let b = per_channel(rw, b, rank)?;
        y = rw.op("aten.add.Tensor", vec![("self", A::T(y)), ("other", A::T(b))])?;
    }
    if rw.meta(y)?.dtype != dtype {
        y = cast(rw, y, dtype)?;
    }
    let save_mean = rw.op("aten.squeeze.dims", vec![("self", A::T(mean)), ("dim", A::Is(dims.clone()))])?;
    let save_rstd = rw.op("aten.squeeze.dims", vec![("self", A::T(rstd)), ("dim", A::Is(dims))])?;
    Ok(vec![y, save_mean, save_rstd])
}

pub fn batch_norm_no_training(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("input")?;
    let rank = rw.rank(x)?;
    if rank < 2 {
        return Err(RuleError::Unsupported("batch norm needs a channel dimension".into()));
    }
    let eps = rw.float("eps", Some(1e-5))?;
    let dtype = rw.meta(x)?.dtype;
    // As torch's `native_batch_norm_helper`: the running statistics are copied to the computation
    // dtype (`.to(copy=True)`, a `convert_element_type` even when it is the same), and per-channel
    // vectors get `rank - 2` trailing `unsqueeze(-1)`s to broadcast against [N, C, ...].
    let to = |rw: &mut Rw, v: ValueId| -> Result<ValueId, RuleError> {
        rw.op("prims.convert_element_type.default", vec![("a", A::T(v)), ("dtype", A::Raw(Arg::ScalarType(dtype)))])
    };
    let mean = rw.t("running_mean")?;
    let var = rw.t("running_var")?;
    let mean = to(rw, mean)?;
    let var = to(rw, var)?;
    let var_eps = rw.op("aten.add.Tensor", vec![("self", A::T(var)), ("other", A::F(eps))])?;
    // torch 2.11 computes `1 / sqrt(var + eps)` (sqrt, reciprocal, mul by 1); 2.15 `rsqrt`.
    let rstd = if rw.torch_older_than(2, 12) {
        let root = rw.op("aten.sqrt.default", vec![("self", A::T(var_eps))])?;
        let recip = rw.op("aten.reciprocal.default", vec![("self", A::T(root))])?;
        rw.op("aten.mul.Tensor", vec![("self", A::T(recip)), ("other", A::I(1))])?
    } else {
        rw.op("aten.rsqrt.default", vec![("self", A::T(var_eps))])?
    };
    let mean_c = per_channel(rw, mean, rank)?;
    let rstd_c = per_channel(rw, rstd, rank)?;
    let centered = rw.op("aten.sub.Tensor", vec![("self", A::T(x)), ("other", A::T(mean_c))])?;
    let mut y = rw.op("aten.mul.Tensor", vec![("self", A::T(centered)), ("other", A::T(rstd_c))])?;
    if let Some(w) = rw.opt_t("weight")? {
        let w_c = per_channel(rw, w, rank)?;
        y = rw.op("aten.mul.Tensor", vec![("self", A::T(y)), ("other", A::T(w_c))])?;
    }
    if let Some(b) = rw.opt_t("bias")? {
        let b_c = per_channel(rw, b, rank)?;
        y = rw.op("aten.add.Tensor", vec![("self", A::T(y)), ("other", A::T(b_c))])?;
    }
    Ok(vec![y])
}
