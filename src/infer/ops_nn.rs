//! Meta functions of the neural-network ops: matrix products (`mm`, `bmm`, `matmul`,
//! `grouped_mm`, `linear`), normalizations, convolution and pooling (with their window
//! arithmetic), and attention. Kept apart from `ops.rs` because each of these has its own
//! output-size formula; `ops.rs` re-exports each one so the registry keeps naming them
//! `crate::infer::ops::...`.

use super::ops::{one, Out};
use super::{broadcast_shapes, contiguous, memory_format, Args, InferError};
use crate::ir::{Arg, DType, TensorMeta, ValueKind};
use crate::sym::Expr;

pub(crate) fn sdpa_flash_cpu(a: &Args) -> Out {
    // Output [B, H, L, Ev] as torch's meta function allocates it on fake tensors (export, and
    // Inductor's re-trace): `empty_like(query)`, which `torch._refs` lays out in the query's
    // memory order (`compute_elementwise_output_strides`: a transposed `[B, L, H, E]`
    // projection's, gaps of a split closed); whether a later `.contiguous()` or `reshape`
    // copies depends on it (DINOv3, GPT-2, Phi-3, DaViT). Logsumexp [B, H, L] laid out
    // [B, L, H], in the kernel's accumulation type: float64 for float64 inputs, float32 otherwise.
    let q = a.tensor("query")?;
    let v = a.tensor("value")?;
    if q.sizes.len() != 4 || v.sizes.len() != 4 {
        return Err(a.err("expects 4-D query, key and value"));
    }
    let (b, h, l, e) = (q.sizes[0].clone(), q.sizes[1].clone(), q.sizes[2].clone(), v.sizes[3].clone());
    let mut out = contiguous(q, q.dtype, vec![b.clone(), h.clone(), l.clone(), e]);
    if q.sizes == out.sizes {
        out.strides = super::layout::elementwise_strides(&[q], &q.sizes);
    }
    let mut lse = contiguous(q, if q.dtype == DType::F64 { DType::F64 } else { DType::F32 }, vec![b, h.clone(), l.clone()]);
    lse.strides = vec![Expr::mul(l, h.clone()), Expr::int(1), h];
    Ok(vec![ValueKind::Tensor(out), ValueKind::Tensor(lse)])
}

pub(crate) fn mm(a: &Args) -> Out {
    let t = a.target;
    let (m1, m2) = if t == "aten.mm.default" { ("self", "mat2") } else { ("mat1", "mat2") };
    let x = a.tensor(m1)?;
    let w = a.tensor(m2)?;
    if x.sizes.len() != 2 || w.sizes.len() != 2 {
        return Err(a.err("expects 2-D matrices"));
    }
    one(contiguous(x, x.dtype, vec![x.sizes[0].clone(), w.sizes[1].clone()]))
}

/// `aten._grouped_mm` and transformers' `grouped_mm_fallback` (input, weight, offs): 2-D × 3-D
/// with offs is rows × N; 3-D × 2-D is M × columns; 2-D × 2-D is groups × M × N; 3-D × 3-D a
/// batched product (`crate::exec::ops::grouped`). The result has the first operand's dtype.
pub(crate) fn grouped_mm(a: &Args) -> Out {
    let (x, w) = if a.get("input").is_some() { (a.tensor("input")?, a.tensor("weight")?) } else { (a.tensor("self")?, a.tensor("mat2")?) };
    let groups = || -> Result<Expr, InferError> {
        let o = a.tensor("offs")?;
        o.sizes.first().cloned().ok_or_else(|| a.err("offs must be 1-D"))
    };
    let sizes = match (x.sizes.len(), w.sizes.len()) {
        (2, 3) => vec![x.sizes[0].clone(), w.sizes[2].clone()],
        (3, 2) => vec![x.sizes[1].clone(), w.sizes[1].clone()],
        (2, 2) => vec![groups()?, x.sizes[0].clone(), w.sizes[1].clone()],
        (3, 3) => vec![x.sizes[0].clone(), x.sizes[1].clone(), w.sizes[2].clone()],
        (rx, rw) => return Err(a.err(format!("a grouped product of a {rx}-D and a {rw}-D operand is not defined"))),
    };
    let dtype = match a.get("out_dtype") {
        Some(Arg::ScalarType(d)) => *d,
        _ => x.dtype,
    };
    one(contiguous(x, dtype, sizes))
}

/// ATen's `matmul` shapes: a 1-D left operand is a row (`[1, k]`) and a 1-D right one a column
/// (`[k, 1]`), the dim added for it dropped from the result (`dot`: 0-D, `mv`: `[m]`, vector ×
/// matrix: `[n]`); the batch dims broadcast.
pub(crate) fn matmul(a: &Args) -> Out {
    let (x, w) = (a.tensor("self")?, a.tensor("other")?);
    let (rx, rw) = (x.sizes.len(), w.sizes.len());
    if rx == 0 || rw == 0 {
        return Err(a.err("matmul takes operands of rank >= 1"));
    }
    let batch_x = &x.sizes[..rx.saturating_sub(2)];
    let batch_w = &w.sizes[..rw.saturating_sub(2)];
    let mut sizes = broadcast_shapes(batch_x, batch_w).map_err(|m| a.err(m))?;
    if rx >= 2 {
        sizes.push(x.sizes[rx - 2].clone());
    }
    if rw >= 2 {
        sizes.push(w.sizes[rw - 1].clone());
    }
    one(contiguous(x, x.dtype, sizes))
}

pub(crate) fn bmm(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let w = a.tensor("mat2")?;
    if x.sizes.len() != 3 || w.sizes.len() != 3 {
        return Err(a.err("expects 3-D batches"));
    }
    one(contiguous(x, x.dtype, vec![x.sizes[0].clone(), x.sizes[1].clone(), w.sizes[2].clone()]))
}

pub(crate) fn native_layer_norm(a: &Args) -> Out {
    let x = a.tensor("input")?;
    let stat = row_stat_sizes(a, x)?;
    Ok(vec![
        ValueKind::Tensor(contiguous(x, x.dtype, x.sizes.clone())),
        ValueKind::Tensor(contiguous(x, x.dtype, stat.clone())),
        ValueKind::Tensor(contiguous(x, x.dtype, stat)),
    ])
}

pub(crate) fn fused_rms_norm(a: &Args) -> Out {
    let x = a.tensor("input")?;
    let stat = row_stat_sizes(a, x)?;
    Ok(vec![
        ValueKind::Tensor(contiguous(x, x.dtype, x.sizes.clone())),
        ValueKind::Tensor(contiguous(x, x.dtype.opmath(), stat)),
    ])
}

pub(crate) fn batch_norm_no_training(a: &Args) -> Out {
    let x = a.tensor("input")?;
    let c = vec![Expr::int(0)];
    Ok(vec![
        ValueKind::Tensor(contiguous(x, x.dtype, x.sizes.clone())),
        ValueKind::Tensor(contiguous(x, x.dtype, c.clone())),
        ValueKind::Tensor(contiguous(x, x.dtype, c)),
    ])
}

/// `_native_batch_norm_legit.no_stats` (training): the output, and the batch's mean and rstd per
/// channel (`[C]`, in the opmath dtype).
pub(crate) fn batch_norm_batch_stats(a: &Args) -> Out {
    let x = a.tensor("input")?;
    let c = x.sizes.get(1).cloned().ok_or_else(|| a.err("batch norm needs a channel dimension"))?;
    Ok(vec![
        ValueKind::Tensor(contiguous(x, x.dtype, x.sizes.clone())),
        ValueKind::Tensor(contiguous(x, x.dtype.opmath(), vec![c.clone()])),
        ValueKind::Tensor(contiguous(x, x.dtype.opmath(), vec![c])),
    ])
}

pub(crate) fn convolution(a: &Args) -> Out {
    conv(a)
}

pub(crate) fn max_pool2d_values(a: &Args) -> Out {
    Ok(max_pool(a)?.into_iter().take(1).collect())
}

/// `avg_pool2d`: a max-pool's window arithmetic without dilation (`avg_pool1d` becomes it).
pub(crate) fn avg_pool2d(a: &Args) -> Out {
    max_pool2d_values(a)
}

pub(crate) fn adaptive_avg_pool2d(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let out = a.ints("output_size")?.ok_or_else(|| a.err("missing output_size"))?;
    let lead = x.sizes.len().checked_sub(out.len()).ok_or_else(|| a.err("output_size longer than the input"))?;
    let mut sizes = x.sizes[..lead].to_vec();
    sizes.extend(out.iter().map(|&o| Expr::int(o)));
    one(contiguous(x, x.dtype, sizes))
}

pub(crate) fn linear(a: &Args) -> Out {
    let x = a.tensor("input")?;
    let w = a.tensor("weight")?;
    let mut sizes = x.sizes.clone();
    let last = sizes.last_mut().ok_or_else(|| a.err("input of rank 0"))?;
    *last = w.sizes.first().cloned().ok_or_else(|| a.err("weight of rank 0"))?;
    one(contiguous(x, x.dtype, sizes))
}

pub(crate) fn composite_norm(a: &Args) -> Out {
    let x = a.tensor("input")?;
    one(contiguous(x, x.dtype, x.sizes.clone()))
}

pub(crate) fn sdpa(a: &Args) -> Out {
    let q = a.tensor("query")?;
    let v = a.tensor("value")?;
    let mut sizes = q.sizes.clone();
    let last = sizes.last_mut().ok_or_else(|| a.err("query of rank 0"))?;
    *last = v.sizes.last().cloned().ok_or_else(|| a.err("value of rank 0"))?;
    one(contiguous(q, q.dtype, sizes))
}

pub(crate) fn prims_low_memory_max_pool_with_offsets(a: &Args) -> Out {
    let mut outs = max_pool(a)?;
    if let Some(ValueKind::Tensor(m)) = outs.get_mut(1) {
        m.dtype = DType::I8;
    }
    Ok(outs)
}

pub(crate) fn prims_low_memory_max_pool_offsets_to_indices(a: &Args) -> Out {
    let x = a.tensor("self")?;
    one(contiguous(x, DType::I64, x.sizes.clone()))
}

pub(crate) fn max_pool2d_with_indices(a: &Args) -> Out {
    max_pool(a)
}

/// The shape of a per-row statistic of a norm over the trailing `normalized_shape` dims: those
/// dims kept as 1 (`native_layer_norm`'s mean/rstd, `_fused_rms_norm`'s rstd).
fn row_stat_sizes(a: &Args, x: &TensorMeta) -> Result<Vec<Expr>, InferError> {
    let k = a.ints("normalized_shape")?.ok_or_else(|| a.err("missing normalized_shape"))?.len();
    let r = x.sizes.len();
    Ok((0..r).map(|i| if i + k >= r { Expr::int(1) } else { x.sizes[i].clone() }).collect())
}

/// `floor((n + 2p - d(k - 1) - 1) / s) + 1`, or with `ceil` when `ceil_mode`, as PyTorch sizes
/// convolution and pooling outputs.
fn window_out(n: &Expr, k: i64, s: i64, p: i64, d: i64, ceil: bool) -> Expr {
    let span = Expr::sub(Expr::add(n.clone(), Expr::int(2 * p)), Expr::int(d * (k - 1) + 1));
    let num = if ceil { Expr::add(span, Expr::int(s - 1)) } else { span };
    Expr::add(Expr::floordiv(num, Expr::int(s)), Expr::int(1))
}

fn per_dim(v: Option<Vec<i64>>, n: usize, default: i64) -> Vec<i64> {
    match v {
        Some(v) if v.len() == n => v,
        Some(v) if v.len() == 1 => vec![v[0]; n],
        _ => vec![default; n],
    }
}

fn conv(a: &Args) -> Out {
    let x = a.tensor("input")?;
    let w = a.tensor("weight")?;
    if a.bool("transposed", false)? {
        return Err(a.err("transposed convolution"));
    }
    let spatial = x.sizes.len().checked_sub(2).filter(|&n| n >= 1 && w.sizes.len() == n + 2);
    let n = spatial.ok_or_else(|| a.err("input and weight ranks do not match a convolution"))?;
    let (stride, pad, dil) = (per_dim(a.ints("stride")?, n, 1), per_dim(a.ints("padding")?, n, 0), per_dim(a.ints("dilation")?, n, 1));
    let mut sizes = vec![x.sizes[0].clone(), w.sizes[0].clone()];
    for i in 0..n {
        let k = w.sizes[i + 2].as_int().ok_or_else(|| a.err("kernel size must be static"))?;
        sizes.push(window_out(&x.sizes[i + 2], k, stride[i], pad[i], dil[i], false));
    }
    let mut out = contiguous(x, x.dtype, sizes);
    // ATen's CPU backends (mkldnn, thnn) write a channels-last output when the input or the
    // weight suggests that layout (`mkldnn_conv_use_channels_last`), and torch's fake tensors
    // follow them: FocalNet's patch embedding convolves a transposed-and-reshaped token grid
    // (NHWC strides), so its `flatten(2).transpose(1, 2)` is contiguous and LayerNorm copies
    // nothing.
    if memory_format::suggests_channels_last(x) || memory_format::suggests_channels_last(w) {
        if let Some(cl) = memory_format::channels_last_strides(&out.sizes) {
            out.strides = cl;
        }
    }
    one(out)
}

fn max_pool(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let n = 2;
    if x.sizes.len() < n + 1 {
        return Err(a.err("max_pool2d needs at least 3 dims"));
    }
    let kernel = per_dim(a.ints("kernel_size")?, n, 1);
    let stride = match a.ints("stride")? {
        Some(v) if !v.is_empty() => per_dim(Some(v), n, 1),
        _ => kernel.clone(),
    };
    let (pad, dil) = (per_dim(a.ints("padding")?, n, 0), per_dim(a.ints("dilation")?, n, 1));
    let ceil = a.bool("ceil_mode", false)?;
    let lead = x.sizes.len() - n;
    let mut sizes = x.sizes[..lead].to_vec();
    for i in 0..n {
        sizes.push(window_out(&x.sizes[lead + i], kernel[i], stride[i], pad[i], dil[i], ceil));
    }
    Ok(vec![
        ValueKind::Tensor(contiguous(x, x.dtype, sizes.clone())),
        ValueKind::Tensor(contiguous(x, DType::I64, sizes)),
    ])
}
