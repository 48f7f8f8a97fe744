//! Embedding tables read as bags and written as gradients: `_embedding_bag` (sum, mean and max
//! bags, with CPU ATen's auxiliary outputs) and `embedding_dense_backward`.

use super::fvec::F;
use super::shape::many;
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

/// How `_embedding_bag` folds a bag: its `mode` argument.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Sum,
    Mean,
    Max,
}

/// `_embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
/// include_last_offset, padding_idx)` → `(output, offset2bag, bag_size, max_indices)`. Bag `b`
/// holds `indices[offsets[b]..offsets[b + 1]]` (the last bag runs to the end unless
/// `include_last_offset`); padding entries count in no bag. The auxiliary outputs are CPU
/// ATen's: `offset2bag` (each index's bag) is empty where its sum fast path skips it (sum mode, no
/// padding index, float32/float16/bfloat16 weight), `bag_size` counts each bag's entries in mean
/// and max modes and is zero in sum mode, `max_indices` holds the weight row of each maximum in
/// max mode and is `bag_size` otherwise.
pub fn embedding_bag(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (w, ix, off) = (cx.tensor("weight")?, cx.tensor("indices")?, cx.tensor("offsets")?);
    if !w.dtype().is_floating() {
        return Err(OpError::DType(w.dtype()));
    }
    let [n, d] = w.shape() else { return shape_err(format!("weight must be 2-D, got {:?}", w.shape())) };
    let (n, d) = (*n, *d);
    let mode = match cx.int_or("mode", 0)? {
        0 => Mode::Sum,
        1 => Mode::Mean,
        2 => Mode::Max,
        m => return Err(OpError::Arg { arg: "mode".into(), message: format!("expected 0 (sum), 1 (mean) or 2 (max), got {m}") }),
    };
    if ix.ndim() != 1 || off.ndim() != 1 {
        return shape_err(format!("indices {:?} and offsets {:?} must be 1-D", ix.shape(), off.shape()));
    }
    let rows = rows_of(ix, n, "indices")?;
    let pad = cx.int_or("padding_idx", -1)?;
    let psw = cx.opt_tensor("per_sample_weights")?;
    if psw.is_some_and(|p| mode != Mode::Sum || p.numel() != rows.len()) {
        return shape_err("per_sample_weights need sum mode and one weight per index");
    }
    let psw = psw.map(Tensor::to_f64_vec);
    let mut starts = off.to_i64_vec();
    let last = cx.bool_or("include_last_offset", false)?;
    if last {
        starts.pop();
    }
    let bags = starts.len();
    let bounds: Vec<(usize, usize)> = (0..bags)
        .map(|b| {
            let end = if b + 1 < bags { starts[b + 1] } else if last { off.to_i64_vec()[bags] } else { rows.len() as i64 };
            let s = starts[b];
            if s < 0 || s > end || end > rows.len() as i64 {
                return shape_err(format!("offsets {:?} do not split {} indices", off.to_i64_vec(), rows.len()));
            }
            Ok((s as usize, end as usize))
        })
        .collect::<OpResult<_>>()?;
    let wv = w.to_f64_vec();
    let (mut out, mut size, mut argmax) = (vec![0.0; bags * d], vec![0.0; bags], vec![0.0; if mode == Mode::Max { bags * d } else { 0 }]);
    let mut bag_of = vec![0.0; rows.len()];
    for (b, &(s, e)) in bounds.iter().enumerate() {
        for k in s..e {
            bag_of[k] = b as f64;
            let r = rows[k];
            if r as i64 == pad {
                continue;
            }
            let first = size[b] == 0.0;
            size[b] += 1.0;
            for j in 0..d {
                let x = wv[r * d + j] * psw.as_ref().map_or(1.0, |p| p[k]);
                let o = &mut out[b * d + j];
                match mode {
                    Mode::Sum | Mode::Mean => *o += x,
                    Mode::Max if first || x > *o => {
                        *o = x;
                        argmax[b * d + j] = r as f64;
                    }
                    Mode::Max => {}
                }
            }
        }
        if mode == Mode::Mean && size[b] > 0.0 {
            out[b * d..(b + 1) * d].iter_mut().for_each(|o| *o /= size[b]);
        }
    }
    let fast_sum = mode == Mode::Sum && pad < 0 && matches!(w.dtype(), DType::F32 | DType::F16 | DType::BF16);
    let it = ix.dtype();
    if mode == Mode::Sum {
        size.iter_mut().for_each(|s| *s = 0.0);
    }
    let offset2bag = if fast_sum { F::new(vec![0], Vec::new()) } else { F::new(vec![rows.len()], bag_of) };
    let max_indices = if mode == Mode::Max { F::new(vec![bags, d], argmax) } else { F::new(vec![bags], size.clone()) };
    many(vec![F::new(vec![bags, d], out).to(w.dtype())?, offset2bag.to(it)?, F::new(vec![bags], size).to(it)?, max_indices.to(it)?])
}
