//! `embedding_bag` (`.default`, `.padding_idx`) and Core ATen's `_embedding_bag` /
//! `_embedding_bag_forward_only`: sums, means or maxima of embedding rows over bags of indices,
//! with the four outputs ATen's CPU kernel (`EmbeddingBag.cpp`) returns; and
//! `embedding_renorm` (`max_norm`'s in-place renormalisation, made functional).
//!
//! Bag `b` holds the indices `offsets[b]..offsets[b + 1]` (the last bag runs to the end of
//! `indices`, or to the last offset with `include_last_offset`); indices equal to
//! `padding_idx` are skipped. Outputs:
//! - `output [bags, D]`: per bag the sum (times `per_sample_weights`), the mean over the
//!   non-padding indices (0 for an empty bag), or the elementwise maximum (0 for an empty bag);
//! - `offset2bag [len(indices)]`: the bag of each index (`[0]` when ATen's fast summing path
//!   skips it: float32/float16 weights, no padding index);
//! - `bag_size`: per bag its non-padding index count for `mean`/`max`, zeros for `sum`, in the
//!   length PyTorch's meta function gives ([`bag_size_len`]);
//! - `max_indices`: for `max`, the index of the row each maximum came from (0 for an empty
//!   bag); otherwise one entry per bag, the counts again for `mean`, zeros for `sum`.

use super::fvec::F;
use super::shape::many;
use super::{shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

pub(crate) const MODE_SUM: i64 = 0;
pub(crate) const MODE_MEAN: i64 = 1;
pub(crate) const MODE_MAX: i64 = 2;

/// The padding index in force: `.padding_idx`'s optional argument wraps a negative value;
/// `_embedding_bag`'s int means none when negative; `.default` has none.
pub(crate) fn padding_index(target: &str, given: Option<i64>, rows: i64) -> Option<i64> {
    let p = given?;
    if target.starts_with("aten.embedding_bag.") {
        Some(if p < 0 { p + rows } else { p })
    } else {
        (p >= 0).then_some(p)
    }
}

/// Whether ATen sums a bag by its offsets (float32/16 weights, no padding index, `sum` or
/// `mean`) rather than through `offset2bag`. bfloat16 counts as slow, as PyTorch's meta
/// function (which gives exported graphs their shapes) has it, though the CPU kernel also
/// takes the fast path for it. The two disagree only on the last bag with
/// `include_last_offset` when the last offset is not the index count: the offsets end it at
/// the last offset, `offset2bag` at the end of `indices`.
pub(crate) fn fast_path(mode: i64, weight: DType, padding: Option<i64>) -> bool {
    mode != MODE_MAX && matches!(weight, DType::F32 | DType::F16) && padding.is_none()
}

/// The end of bag `b` of `bags` in `indices` (`n` of them): the next offset, or for the last
/// bag the end of `indices` (its last offset when `by_last_offset`). Bag sizes always count
/// the last bag to the end of `indices`, as ATen's `make_bag_size` does.
pub(crate) fn bag_end(b: usize, bags: usize, offsets: &[i64], n: i64, by_last_offset: bool) -> i64 {
    if b + 1 < bags || (by_last_offset && b + 1 < offsets.len()) {
        offsets[b + 1]
    } else {
        n
    }
}

/// The length of `bag_size` as PyTorch's meta function (which gives exported graphs their
/// shapes) has it: one per offset for the forward-only op (what `embedding_bag` runs for a
/// weight that needs no gradient), one per bag for `_embedding_bag`. With `include_last_offset`
/// the two differ by one; ATen's CPU kernel itself gives `mean` and `max` one per bag even
/// forward-only, so the last entry (0 here) has no eager counterpart.
pub(crate) fn bag_size_len(target: &str, offsets: usize, bags: usize) -> usize {
    if target == "aten._embedding_bag.default" {
        bags
    } else {
        offsets
    }
}

pub fn embedding_bag(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (weight, indices, offsets) = (cx.tensor("weight")?, cx.tensor("indices")?, cx.tensor("offsets")?);
    if weight.ndim() != 2 || indices.ndim() != 1 || offsets.ndim() != 1 {
        return shape_err(format!("embedding_bag of weight {:?}, indices {:?}, offsets {:?}", weight.shape(), indices.shape(), offsets.shape()));
    }
    let mode = cx.int_or("mode", MODE_SUM)?;
    if !(MODE_SUM..=MODE_MAX).contains(&mode) {
        return Err(OpError::Arg { arg: "mode".into(), message: format!("expected 0 (sum), 1 (mean) or 2 (max), got {mode}") });
    }
    let last = cx.bool_or("include_last_offset", false)?;
    let (rows, d) = (weight.shape()[0], weight.shape()[1]);
    let padding = padding_index(&cx.node.target, cx.opt_int("padding_idx")?, rows as i64);
    let psw = cx.opt_tensor("per_sample_weights")?.map(|t| t.to_f64_vec());
    if psw.is_some() && mode != MODE_SUM {
        return Err(OpError::Arg { arg: "per_sample_weights".into(), message: "only supported with mode='sum'".into() });
    }
    let (w, idx, off) = (weight.to_f64_vec(), indices.to_i64_vec(), offsets.to_i64_vec());
    let n = idx.len();
    let bags = if last { off.len().checked_sub(1).ok_or_else(|| OpError::Shape("include_last_offset with no offsets".into()))? } else { off.len() };
    let fast = fast_path(mode, weight.dtype(), padding);
    let end_of = |b: usize, sizes: bool| bag_end(b, bags, &off, n as i64, last && fast && !sizes);
    let mut out = vec![0.0; bags * d];
    let mut counts = vec![0i64; bags];
    let mut argmax = vec![0i64; bags * d];
    for b in 0..bags {
        let (start, end) = (off[b], end_of(b, false));
        if start < 0 || end > n as i64 {
            return shape_err(format!("bag {b} spans {start}..{end} of {n} indices"));
        }
        let mut seen = false;
        for i in start.max(0) as usize..end.max(start) as usize {
            let r = idx[i];
            if r < 0 || r >= rows as i64 {
                return Err(OpError::Arg { arg: "indices".into(), message: format!("index {r} out of range for {rows} embeddings") });
            }
            if Some(r) == padding {
                continue;
            }
            let row = &w[r as usize * d..(r as usize + 1) * d];
            for k in 0..d {
                let o = &mut out[b * d + k];
                match mode {
                    MODE_MAX => {
                        if !seen || row[k] > *o {
                            *o = row[k];
                            argmax[b * d + k] = r;
                        }
                    }
                    _ => *o += row[k] * psw.as_ref().map_or(1.0, |p| p[i]),
                }
            }
            seen = true;
        }
        let listed = end_of(b, true) - start;
        let padded = (start.max(0) as usize..end_of(b, true).clamp(0, n as i64) as usize).filter(|&i| Some(idx[i]) == padding).count() as i64;
        counts[b] = listed - padded;
        if mode == MODE_MEAN {
            let div = counts[b].max(1) as f64;
            out[b * d..(b + 1) * d].iter_mut().for_each(|v| *v /= div);
        }
    }
    let index_dtype = if indices.dtype() == DType::I32 && offsets.dtype() == DType::I32 { DType::I32 } else { DType::I64 };
    let ints = |shape: Vec<usize>, v: Vec<i64>| -> OpResult<Tensor> {
        let t = Tensor::from_vec(&shape, v).ok_or_else(|| OpError::Shape(format!("{shape:?}")))?;
        super::dtype_ok(t.cast(index_dtype))
    };
    let offset2bag = if mode == MODE_SUM && fast {
        ints(vec![0], vec![])?
    } else {
        let starts = &off[..bags];
        ints(vec![n], (0..n as i64).map(|i| starts.iter().filter(|&&s| s <= i).count() as i64 - 1).collect())?
    };
    // Sums keep no counts; means and maxima count each bag's rows (padding left out).
    let counts: Vec<i64> = if mode == MODE_SUM { vec![0; bags] } else { counts };
    let mut sizes = counts.clone();
    sizes.resize(bag_size_len(&cx.node.target, off.len(), bags), 0);
    let bag_size = ints(vec![sizes.len()], sizes)?;
    let max_indices = if mode == MODE_MAX { ints(vec![bags, d], argmax)? } else { ints(vec![bags], counts)? };
    let output = F::new(vec![bags, d], out).to(weight.dtype())?;
    many(vec![output, offset2bag, bag_size, max_indices])
}

/// `embedding_renorm(self, indices, max_norm, norm_type)`, the functional form of
/// `embedding_renorm_`: each row that `indices` names and whose `norm_type`-norm exceeds
/// `max_norm` is scaled by `max_norm / (norm + 1e-7)`; other rows are copied.
pub fn embedding_renorm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (w, indices) = (cx.tensor("self")?, cx.tensor("indices")?);
    if w.ndim() != 2 || !w.dtype().is_floating() {
        return shape_err(format!("embedding_renorm of a {} {:?} weight", w.dtype(), w.shape()));
    }
    let (max_norm, p) = (cx.float_or("max_norm", 0.0)?, cx.float_or("norm_type", 2.0)?);
    let (rows, d) = (w.shape()[0], w.shape()[1]);
    let mut v = w.to_f64_vec();
    let mut listed: Vec<i64> = indices.to_i64_vec();
    listed.sort_unstable();
    listed.dedup();
    for r in listed {
        if r < 0 || r >= rows as i64 {
            return Err(OpError::Arg { arg: "indices".into(), message: format!("index {r} out of range for {rows} embeddings") });
        }
        let row = &mut v[r as usize * d..(r as usize + 1) * d];
        let norm = p_norm(row, p);
        if norm > max_norm {
            let scale = max_norm / (norm + 1e-7);
            row.iter_mut().for_each(|x| *x *= scale);
        }
    }
    super::one(F::new(w.shape().to_vec(), v).to(w.dtype())?)
}

/// The `p`-norm of `v` (`p = ∞`: the largest magnitude, `p = 0`: the nonzero count).
pub(crate) fn p_norm(v: &[f64], p: f64) -> f64 {
    if p.is_infinite() {
        v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
    } else if p == 0.0 {
        v.iter().filter(|x| **x != 0.0).count() as f64
    } else {
        v.iter().map(|x| x.abs().powf(p)).sum::<f64>().powf(1.0 / p)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use crate::exec::value::RtValue;

    fn bag(target: &str, mode: i64, extra: Vec<(&'static str, A)>) -> Vec<Vec<f64>> {
        // Rows r hold (r, -r); bags [0, 2), [2, 2), [2, 5).
        let w = t32(&[4, 2], &[0., 0., 1., -1., 2., -2., 3., -3.]);
        let mut args = vec![("weight", w), ("indices", ti(&[5], &[1, 3, 2, 0, 2])), ("offsets", ti(&[3], &[0, 2, 2])), ("mode", int(mode))];
        args.extend(extra);
        call(target, args).unwrap().iter().map(|v| match v {
            RtValue::Tensor(t) => t.to_f64_vec(),
            other => panic!("{other:?}"),
        }).collect()
    }

    #[test]
    fn bags_sum_average_and_take_maxima() {
        let sum = bag("aten.embedding_bag.default", 0, vec![]);
        assert_eq!(sum[0], vec![4., -4., 0., 0., 4., -4.]);
        assert!(sum[1].is_empty(), "float32 sums take ATen's fast path: no offset2bag");
        assert_eq!(sum[2], vec![0., 0., 0.], "sums keep no counts");
        let mean = bag("aten.embedding_bag.default", 1, vec![]);
        assert!(close(&mean[0], &[2., -2., 0., 0., 4. / 3., -4. / 3.], 1e-6));
        assert_eq!(mean[1], vec![0., 0., 2., 2., 2.]);
        assert_eq!(mean[2], vec![2., 0., 3.]);
        let max = bag("aten.embedding_bag.default", 2, vec![]);
        assert_eq!(max[0], vec![3., -1., 0., 0., 2., 0.]);
        assert_eq!(max[3], vec![3., 1., 0., 0., 2., 0.], "the rows the maxima came from");
        // Padding index 2 drops out of the mean's sum and count.
        let padded = bag("aten.embedding_bag.padding_idx", 1, vec![("padding_idx", int(-2))]);
        assert_eq!(padded[0], vec![2., -2., 0., 0., 0., 0.]);
        assert_eq!(padded[2], vec![2., 0., 1.]);
        let weighted = bag("aten.embedding_bag.default", 0, vec![("per_sample_weights", t32(&[5], &[1., 2., 1., 1., 1.]))]);
        assert_eq!(weighted[0], vec![7., -7., 0., 0., 4., -4.]);
    }

    #[test]
    fn renorm_scales_only_listed_rows_over_the_limit() {
        let w = t32(&[3, 2], &[3., 4., 0.3, 0.4, 6., 8.]);
        let r = call1("aten.embedding_renorm.default", vec![("self", w), ("indices", ti(&[3], &[0, 1, 0])), ("max_norm", float(1.0)), ("norm_type", float(2.0))]);
        let v = r.to_f64_vec();
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        assert!((v[2] - 0.3).abs() < 1e-7 && (v[4] - 6.0).abs() < 1e-7, "under the limit or not listed: unchanged");
    }
}
