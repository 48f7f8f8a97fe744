//! Grouped matrix products: one matrix product per group of rows (or columns, or of the inner
//! dim), the groups given by cumulative offsets — what mixture-of-experts layers run, one expert
//! per group. `aten._grouped_mm` (torch.nn.functional.grouped_mm) and transformers' own opaque
//! fallback `transformers.grouped_mm_fallback` (transformers/integrations/moe.py: a loop of
//! `torch.mm(input[start:end], weight[i], out=output[start:end])` over `offs.tolist()`, rows past
//! the last offset left zero) share this implementation: the fallback is the 2-D × 3-D case.
//! Accumulation is in `f64`, rounded once, as every product of the interpreter.

use super::linalg::gemm;
use super::{dtype_ok, one, shape_err, OpCx, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;

/// Cumulative group ends, checked: non-decreasing, within `total`.
fn group_ends(offs: &Tensor, groups: usize, total: usize) -> OpResult<Vec<usize>> {
    if offs.ndim() != 1 || offs.shape()[0] != groups {
        return shape_err(format!("offs must hold one end per group ({groups}), got shape {:?}", offs.shape()));
    }
    if offs.dtype().is_floating() {
        return shape_err(format!("offs must be an integer tensor, got {}", offs.dtype()));
    }
    let mut prev = 0usize;
    let mut ends = Vec::with_capacity(groups);
    for e in offs.to_i64_vec() {
        let e = usize::try_from(e).ok().filter(|&e| e >= prev && e <= total);
        let Some(e) = e else {
            return shape_err(format!("offs must be non-decreasing and at most {total}, got {:?}", offs.to_i64_vec()));
        };
        ends.push(e);
        prev = e;
    }
    Ok(ends)
}

/// `a` (2-D or 3-D) times `b` (2-D or 3-D) by groups; see the module.
fn grouped(a: &Tensor, b: &Tensor, offs: Option<&Tensor>) -> OpResult<Tensor> {
    if a.dtype() != b.dtype() {
        return shape_err(format!("expected both operands to have the same dtype, got {} and {}", a.dtype(), b.dtype()));
    }
    let (sa, sb) = (a.shape().to_vec(), b.shape().to_vec());
    let (x, y) = (a.to_f64_vec(), b.to_f64_vec());
    let (shape, data) = match (sa.len(), sb.len(), offs) {
        // Rows of `a` by group, group i times b[i].
        (2, 3, Some(offs)) => {
            let (rows, k, g, k2, n) = (sa[0], sa[1], sb[0], sb[1], sb[2]);
            if k != k2 {
                return shape_err(format!("grouped mm: {sa:?} and {sb:?} differ in the inner dim"));
            }
            let ends = group_ends(offs, g, rows)?;
            let mut out = vec![0.0; rows * n];
            let mut start = 0;
            for (i, &end) in ends.iter().enumerate() {
                let m = end - start;
                gemm(&x[start * k..end * k], &y[i * k * n..(i + 1) * k * n], m, k, n, &mut out[start * n..end * n]);
                start = end;
            }
            (vec![rows, n], out)
        }
        // Columns of `b` by group, a[i] times group i.
        (3, 2, Some(offs)) => {
            let (g, m, k, k2, cols) = (sa[0], sa[1], sa[2], sb[0], sb[1]);
            if k != k2 {
                return shape_err(format!("grouped mm: {sa:?} and {sb:?} differ in the inner dim"));
            }
            let ends = group_ends(offs, g, cols)?;
            let mut out = vec![0.0; m * cols];
            let mut start = 0;
            for (i, &end) in ends.iter().enumerate() {
                let w = end - start;
                let part: Vec<f64> = (0..k).flat_map(|p| y[p * cols + start..p * cols + end].to_vec()).collect();
                let mut r = vec![0.0; m * w];
                gemm(&x[i * m * k..(i + 1) * m * k], &part, m, k, w, &mut r);
                for row in 0..m {
                    out[row * cols + start..row * cols + end].copy_from_slice(&r[row * w..(row + 1) * w]);
                }
                start = end;
            }
            (vec![m, cols], out)
        }
        // The inner dim by group: one m×n product per group.
        (2, 2, Some(offs)) => {
            let (m, kt, kt2, n) = (sa[0], sa[1], sb[0], sb[1]);
            if kt != kt2 {
                return shape_err(format!("grouped mm: {sa:?} and {sb:?} differ in the inner dim"));
            }
            let g = offs.shape().first().copied().unwrap_or(0);
            let ends = group_ends(offs, g, kt)?;
            let mut out = vec![0.0; g * m * n];
            let mut start = 0;
            for (i, &end) in ends.iter().enumerate() {
                let w = end - start;
                let left: Vec<f64> = (0..m).flat_map(|r| x[r * kt + start..r * kt + end].to_vec()).collect();
                gemm(&left, &y[start * n..end * n], m, w, n, &mut out[i * m * n..(i + 1) * m * n]);
                start = end;
            }
            (vec![g, m, n], out)
        }
        // No offsets: a batched product.
        (3, 3, None) => {
            let (g, m, k, g2, k2, n) = (sa[0], sa[1], sa[2], sb[0], sb[1], sb[2]);
            if g != g2 || k != k2 {
                return shape_err(format!("grouped mm: {sa:?} and {sb:?} do not form a batched product"));
            }
            let mut out = vec![0.0; g * m * n];
            for i in 0..g {
                gemm(&x[i * m * k..(i + 1) * m * k], &y[i * k * n..(i + 1) * k * n], m, k, n, &mut out[i * m * n..(i + 1) * m * n]);
            }
            (vec![g, m, n], out)
        }
        (ra, rb, o) => {
            return shape_err(format!(
                "grouped mm of a {ra}-D and a {rb}-D operand {} offs is not defined (2-D × 3-D, 3-D × 2-D and 2-D × 2-D take offs, 3-D × 3-D none)",
                if o.is_some() { "with" } else { "without" }
            ))
        }
    };
    let t = Tensor::from_vec(&shape, data).ok_or_else(|| super::OpError::Shape("grouped mm result".into()))?;
    dtype_ok(t.cast(a.dtype()))
}

/// `aten._grouped_mm(self, mat2, offs=None, bias=None, out_dtype=None)`.
pub fn grouped_mm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    if cx.opt_tensor("bias")?.is_some() {
        return shape_err("_grouped_mm with a bias: torch does not support it either");
    }
    let r = grouped(cx.tensor("self")?, cx.tensor("mat2")?, cx.opt_tensor("offs")?)?;
    match cx.opt_dtype("out_dtype")? {
        Some(d) if d != r.dtype() => one(dtype_ok(r.cast(d))?),
        _ => one(r),
    }
}

/// `transformers::grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs) -> Tensor`.
pub fn transformers_fallback(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (input, weight, offs) = (cx.tensor("input")?, cx.tensor("weight")?, cx.tensor("offs")?);
    if input.ndim() != 2 || weight.ndim() != 3 {
        return shape_err(format!("input must be 2-D and weight 3-D, got {:?} and {:?}", input.shape(), weight.shape()));
    }
    one(grouped(input, weight, Some(offs))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize], v: Vec<f32>) -> Tensor {
        Tensor::from_vec(shape, v).unwrap()
    }

    #[test]
    fn rows_by_expert_and_rows_past_the_last_offset_stay_zero() {
        // Two experts over 4 rows of 2 features; offs [1, 3]: row 0 → expert 0, rows 1-2 → expert 1,
        // row 3 past the end → zero (transformers' fallback starts from zeros).
        let a = t(&[4, 2], vec![1., 2., 3., 4., 5., 6., 7., 8.]);
        let w = t(&[2, 2, 1], vec![1., 1., 10., 100.]);
        let offs = Tensor::from_vec(&[2], vec![1i64, 3]).unwrap();
        let r = grouped(&a, &w, Some(&offs)).unwrap();
        assert_eq!(r.shape(), &[4, 1]);
        assert_eq!(r.to_f64_vec(), vec![3., 430., 650., 0.]);
        // A decreasing offset is an error, not a panic.
        let bad = Tensor::from_vec(&[2], vec![3i64, 1]).unwrap();
        assert!(grouped(&a, &w, Some(&bad)).is_err());
        let far = Tensor::from_vec(&[2], vec![1i64, 9]).unwrap();
        assert!(grouped(&a, &w, Some(&far)).is_err());
    }

    #[test]
    fn columns_and_inner_dim_groups_match_their_products() {
        // 3-D × 2-D: a[i] times columns of group i.
        let a = t(&[2, 1, 2], vec![1., 2., 3., 4.]);
        let b = t(&[2, 3], vec![1., 2., 3., 4., 5., 6.]);
        let offs = Tensor::from_vec(&[2], vec![1i32, 3]).unwrap();
        let r = grouped(&a, &b, Some(&offs)).unwrap();
        assert_eq!(r.to_f64_vec(), vec![1. + 8., 3. * 2. + 4. * 5., 3. * 3. + 4. * 6.]);
        // 2-D × 2-D: the inner dim split [0, 1) and [1, 2).
        let a = t(&[1, 2], vec![2., 3.]);
        let b = t(&[2, 1], vec![5., 7.]);
        let r = grouped(&a, &b, Some(&Tensor::from_vec(&[2], vec![1i64, 2]).unwrap())).unwrap();
        assert_eq!((r.shape().to_vec(), r.to_f64_vec()), (vec![2, 1, 1], vec![10., 21.]));
        assert!(grouped(&a, &b, None).is_err(), "2-D × 2-D needs offs");
    }
}
