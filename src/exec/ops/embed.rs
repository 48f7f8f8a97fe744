//! Embedding gradients: `embedding_dense_backward` (the bags are in `embedding_bag`).

use super::fvec::F;
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// Index values checked to lie in `0..n` (embeddings take no negative indices).
fn rows_of(t: &Tensor, n: usize, what: &str) -> OpResult<Vec<usize>> {
    if t.dtype().is_floating() || t.dtype() == DType::Bool {
        return Err(OpError::Arg { arg: what.into(), message: format!("expected an integer tensor, got {}", t.dtype()) });
    }
    t.to_i64_vec()
        .into_iter()
        .map(|i| usize::try_from(i).ok().filter(|&i| i < n).ok_or_else(|| OpError::Shape(format!("{what}: index {i} is out of range for {n} rows"))))
        .collect()
}

/// `embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)`:
/// a `[num_weights, D]` gradient, each position's gradient row added at its index (the padding
/// index's row stays zero), divided by how often its index occurs when `scale_grad_by_freq`.
pub fn embedding_dense_backward(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (g, ix) = (cx.tensor("grad_output")?, cx.tensor("indices")?);
    if !g.dtype().is_floating() {
        return Err(OpError::DType(g.dtype()));
    }
    let n = usize::try_from(cx.int("num_weights")?).map_err(|_| OpError::Arg { arg: "num_weights".into(), message: "must not be negative".into() })?;
    let pad = cx.int_or("padding_idx", -1)?;
    let freq = cx.bool_or("scale_grad_by_freq", false)?;
    let rows = rows_of(ix, n, "indices")?;
    let d = g.numel().checked_div(rows.len()).unwrap_or(0);
    if g.numel() != rows.len() * d || (g.ndim() != ix.ndim() + 1 && !rows.is_empty()) {
        return shape_err(format!("grad_output {:?} is not indices {:?} with one more dim", g.shape(), ix.shape()));
    }
    let d = g.shape().last().copied().unwrap_or(d);
    let mut count = vec![0usize; n];
    rows.iter().for_each(|&r| count[r] += 1);
    let gv = g.to_f64_vec();
    let mut v = vec![0.0; n * d];
    for (k, &r) in rows.iter().enumerate() {
        if r as i64 == pad {
            continue;
        }
        let scale = if freq { 1.0 / count[r] as f64 } else { 1.0 };
        for j in 0..d {
            v[r * d + j] += gv[k * d + j] * scale;
        }
    }
    one(F::new(vec![n, d], v).to(g.dtype())?)
}

