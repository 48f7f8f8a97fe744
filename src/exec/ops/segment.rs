//! `segment_reduce`: reductions over consecutive segments of one axis, the segments given by
//! their `lengths` or by `offsets` (segment `s` is `offsets[s]..offsets[s + 1]`), as ATen's
//! `SegmentReduce.cpp` computes them on the CPU.

use super::fvec::{need_float, F};
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::value::RtValue;

/// The reductions `segment_reduce` knows, by their `reduce` string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SegmentOp {
    Max,
    Min,
    Sum,
    Mean,
    Prod,
}

impl SegmentOp {
    pub(crate) fn parse(s: &str) -> Option<SegmentOp> {
        Some(match s {
            "max" => SegmentOp::Max,
            "min" => SegmentOp::Min,
            "sum" => SegmentOp::Sum,
            "mean" => SegmentOp::Mean,
            "prod" => SegmentOp::Prod,
            _ => return None,
        })
    }

    /// The value a segment starts from without `initial`.
    pub(crate) fn identity(self) -> f64 {
        match self {
            SegmentOp::Max => f64::NEG_INFINITY,
            SegmentOp::Min => f64::INFINITY,
            SegmentOp::Sum | SegmentOp::Mean => 0.0,
            SegmentOp::Prod => 1.0,
        }
    }

    /// One step: a NaN takes over a maximum or minimum and stays (ATen's `isnan(v) ? v :
    /// std::max(acc, v)`, where `std::max` keeps a NaN accumulator).
    fn step(self, acc: f64, v: f64) -> f64 {
        match self {
            SegmentOp::Max if v.is_nan() => v,
            SegmentOp::Max => if acc < v { v } else { acc },
            SegmentOp::Min if v.is_nan() => v,
            SegmentOp::Min => if v < acc { v } else { acc },
            SegmentOp::Sum | SegmentOp::Mean => acc + v,
            SegmentOp::Prod => acc * v,
        }
    }
}

/// `segment_reduce(data, reduce, lengths, indices, offsets, axis, unsafe, initial)`. The
/// segmented axis is the last dim of `lengths`/`offsets` (whose leading dims are `data`'s);
/// the output is `data` with that axis replaced by the segments. An empty segment is `initial`,
/// else the reduction's identity, and NaN for `mean` without `initial`.
pub fn segment_reduce(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let data = cx.tensor("data")?;
    need_float(data)?;
    let reduce = cx.str_or("reduce", "")?;
    let op = SegmentOp::parse(reduce).ok_or_else(|| OpError::Arg { arg: "reduce".into(), message: format!("unknown reduction `{reduce}`") })?;
    let (seg, offsets) = match (cx.opt_tensor("lengths")?, cx.opt_tensor("offsets")?) {
        (Some(l), _) => (l, false),
        (None, Some(o)) => (o, true),
        (None, None) => return Err(OpError::Unsupported("segment_reduce by `indices` (ATen has it unimplemented too)".into())),
    };
    let axis = seg.ndim().checked_sub(1).ok_or_else(|| OpError::Shape("0-dim segment lengths".into()))?;
    let ds = data.shape();
    if axis >= ds.len() || seg.shape()[..axis] != ds[..axis] {
        return shape_err(format!("segments {:?} do not fit data {ds:?}", seg.shape()));
    }
    let wanted = cx.int_or("axis", 0)?;
    if super::wrap_dim(wanted, ds.len())? != axis {
        return shape_err(format!("axis {wanted} is not the last dim of the segment lengths {:?}", seg.shape()));
    }
    let count = seg.shape()[axis] - usize::from(offsets);
    let initial = cx.opt_float("initial")?;
    let (outer, len, inner): (usize, usize, usize) = (ds[..axis].iter().product(), ds[axis], ds[axis + 1..].iter().product());
    let (x, s) = (data.to_f64_vec(), seg.to_i64_vec());
    let row = seg.shape()[axis];
    let mut out = vec![0.0; outer * count * inner];
    for o in 0..outer {
        let mut end = if offsets { s.get(o * row).copied().unwrap_or(0) } else { 0 };
        for k in 0..count {
            let start = end;
            end = if offsets { s[o * row + k + 1] } else { start + s[o * row + k] };
            if start < 0 || end > len as i64 || end < start {
                return shape_err(format!("segment {k} spans {start}..{end} of an axis of {len}"));
            }
            for i in 0..inner {
                let mut acc = initial.unwrap_or(op.identity());
                for j in start as usize..end as usize {
                    acc = op.step(acc, x[(o * len + j) * inner + i]);
                }
                let n = (end - start) as f64;
                if op == SegmentOp::Mean {
                    if n == 0.0 && initial.is_none() {
                        acc = f64::NAN;
                    } else if n > 0.0 && !acc.is_nan() {
                        acc /= n;
                    }
                }
                out[(o * count + k) * inner + i] = acc;
            }
        }
    }
    let mut shape = ds.to_vec();
    shape[axis] = count;
    one(F::new(shape, out).to(data.dtype())?)
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use crate::ir::Arg;

    fn reduce(op: &str, lengths: A, offsets: bool, initial: Option<f64>) -> Vec<f64> {
        let x = t32(&[5, 2], &[1., 2., 3., 4., 5., 6., 7., 8., 9., 10.]);
        let mut args = vec![("data", x), ("reduce", A::L(Arg::String(op.into()))), (if offsets { "offsets" } else { "lengths" }, lengths)];
        if let Some(i) = initial {
            args.push(("initial", float(i)));
        }
        call1("aten.segment_reduce.default", args).to_f64_vec()
    }

    #[test]
    fn segments_by_lengths_and_offsets_agree() {
        let by_len = reduce("sum", ti(&[3], &[2, 0, 3]), false, None);
        assert_eq!(by_len, vec![4., 6., 0., 0., 21., 24.]);
        assert_eq!(reduce("sum", ti(&[4], &[0, 2, 2, 5]), true, None), by_len);
        let mean = reduce("mean", ti(&[3], &[2, 0, 3]), false, None);
        assert_eq!((mean[0], mean[5]), (2., 8.));
        assert!(mean[2].is_nan(), "an empty mean without initial is NaN");
        assert_eq!(reduce("mean", ti(&[3], &[2, 0, 3]), false, Some(1.0))[2], 1.0);
        assert_eq!(reduce("max", ti(&[3], &[2, 0, 3]), false, None)[2], f64::NEG_INFINITY);
        assert_eq!(reduce("prod", ti(&[2], &[2, 3]), false, Some(2.0)), vec![6., 16., 630., 960.]);
        assert_eq!(reduce("min", ti(&[2], &[2, 3]), false, Some(4.0)), vec![1., 2., 4., 4.]);
    }

    #[test]
    fn nan_takes_over_and_stays() {
        let fold = |op: SegmentOp, v: &[f64]| v.iter().fold(op.identity(), |a, &x| op.step(a, x));
        assert!(fold(SegmentOp::Max, &[1.0, f64::NAN, 3.0]).is_nan());
        assert!(fold(SegmentOp::Min, &[f64::NAN, -3.0]).is_nan());
        assert_eq!(fold(SegmentOp::Max, &[1.0, 3.0, 2.0]), 3.0);
        assert_eq!(fold(SegmentOp::Prod, &[2.0, 3.0]), 6.0);
        assert_eq!(fold(SegmentOp::Max, &[]), f64::NEG_INFINITY);
    }
}
