//! `linalg_ldl_factor(_ex)` and `linalg_ldl_solve`: the symmetric indefinite factorization
//! `A = P·L·D·Lᵀ·Pᵀ` as LAPACK's `sytrf` with `uplo='L'` computes it (Bunch–Kaufman diagonal
//! pivoting, `sytf2`), in the packed form and with the pivots PyTorch returns: `L` (unit
//! diagonal) below the diagonal, `D`'s 1×1 and 2×2 blocks on and just below it, the upper
//! triangle zero; pivot `k > 0` (1-based) is a 1×1 block after swapping rows/columns `k`, and a
//! pair of equal negative pivots `-p` is a 2×2 block after swapping the second with `p`.
//! PyTorch (MKL) gives the same pivots as the unblocked `sytf2` on sizes up to at least 100.

use super::fvec::{round_to, F};
use super::lapack::Mat;
use super::shape::many;
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// Bunch–Kaufman's threshold `(1 + √17) / 8`, which bounds the growth of the factors.
fn alpha() -> f64 {
    (1.0 + 17f64.sqrt()) / 8.0
}

/// Index and value of the first largest `|a|` over `items` (`idamax`).
fn amax(items: impl Iterator<Item = (usize, f64)>) -> (usize, f64) {
    items.fold((0, -1.0), |(bi, bv), (i, v)| if v.abs() > bv { (i, v.abs()) } else { (bi, bv) })
}

/// `sytf2('L')`: the packed factor (upper triangle zeroed), 1-based pivots, and `info` (the
/// 1-based index of the first zero pivot block, 0 when `D` is nonsingular).
pub(crate) fn sytf2_lower(a: &Mat, r: &dyn Fn(f64) -> f64) -> (Mat, Vec<i64>, usize) {
    let n = a.rows;
    let mut m = a.clone();
    let (mut piv, mut info, mut k) = (vec![0i64; n], 0usize, 0usize);
    let g = |m: &Mat, i: usize, j: usize| m.at(i, j);
    while k < n {
        let mut kstep = 1;
        let absakk = g(&m, k, k).abs();
        let (imax, colmax) = if k + 1 < n { amax((k + 1..n).map(|i| (i, g(&m, i, k)))) } else { (k, 0.0) };
        let kp;
        if absakk.max(colmax) == 0.0 || absakk.is_nan() {
            if info == 0 {
                info = k + 1;
            }
            kp = k;
        } else {
            if absakk >= alpha() * colmax {
                kp = k;
            } else {
                // The largest off-diagonal element in row/column `imax`.
                let mut rowmax = amax((k..imax).map(|j| (j, g(&m, imax, j)))).1;
                if imax + 1 < n {
                    rowmax = rowmax.max(amax((imax + 1..n).map(|i| (i, g(&m, i, imax)))).1);
                }
                if absakk >= alpha() * colmax * (colmax / rowmax) {
                    kp = k;
                } else if g(&m, imax, imax).abs() >= alpha() * rowmax {
                    kp = imax;
                } else {
                    kp = imax;
                    kstep = 2;
                }
            }
            let kk = k + kstep - 1;
            if kp != kk {
                // Swap rows and columns `kk` and `kp` of the trailing lower triangle.
                for i in kp + 1..n {
                    let (x, y) = (g(&m, i, kk), g(&m, i, kp));
                    m.set(i, kk, y);
                    m.set(i, kp, x);
                }
                for j in kk + 1..kp {
                    let (x, y) = (g(&m, j, kk), g(&m, kp, j));
                    m.set(j, kk, y);
                    m.set(kp, j, x);
                }
                let (x, y) = (g(&m, kk, kk), g(&m, kp, kp));
                m.set(kk, kk, y);
                m.set(kp, kp, x);
                if kstep == 2 {
                    let (x, y) = (g(&m, k + 1, k), g(&m, kp, k));
                    m.set(k + 1, k, y);
                    m.set(kp, k, x);
                }
            }
            if kstep == 1 {
                // A₂₂ -= a·aᵀ / d, then the column becomes L's.
                let d11 = r(1.0 / g(&m, k, k));
                for j in k + 1..n {
                    let t = r(-d11 * g(&m, j, k));
                    for i in j..n {
                        let v = r(g(&m, i, j) + r(g(&m, i, k) * t));
                        m.set(i, j, v);
                    }
                }
                for i in k + 1..n {
                    let v = r(g(&m, i, k) * d11);
                    m.set(i, k, v);
                }
            } else if k + 2 < n {
                // A₂₂ -= [a b]·D⁻¹·[a b]ᵀ with the 2×2 block D, in LAPACK's scaled form.
                let d21 = g(&m, k + 1, k);
                let (d11, d22) = (r(g(&m, k + 1, k + 1) / d21), r(g(&m, k, k) / d21));
                let d21 = r(r(1.0 / r(r(d11 * d22) - 1.0)) / d21);
                for j in k + 2..n {
                    let wk = r(d21 * r(r(d11 * g(&m, j, k)) - g(&m, j, k + 1)));
                    let wkp1 = r(d21 * r(r(d22 * g(&m, j, k + 1)) - g(&m, j, k)));
                    for i in j..n {
                        let v = r(g(&m, i, j) - r(r(g(&m, i, k) * wk) + r(g(&m, i, k + 1) * wkp1)));
                        m.set(i, j, v);
                    }
                    m.set(j, k, wk);
                    m.set(j, k + 1, wkp1);
                }
            }
        }
        if kstep == 1 {
            piv[k] = kp as i64 + 1;
        } else {
            piv[k] = -(kp as i64 + 1);
            piv[k + 1] = -(kp as i64 + 1);
        }
        k += kstep;
    }
    for i in 0..n {
        for j in i + 1..n {
            m.set(i, j, 0.0);
        }
    }
    (m, piv, info)
}

fn swap_rows(b: &mut Mat, i: usize, j: usize) {
    if i != j {
        for c in 0..b.cols {
            b.a.swap(i * b.cols + c, j * b.cols + c);
        }
    }
}

/// A 0-based pivot row from a 1-based LAPACK pivot, checked against the size.
fn pivot_row(p: i64, n: usize) -> OpResult<usize> {
    let r = p.unsigned_abs() as usize;
    if r == 0 || r > n {
        return Err(OpError::Arg { arg: "pivots".into(), message: format!("pivot {p} out of range for {n} rows") });
    }
    Ok(r - 1)
}

/// `sytrs('L')`: solves `A·X = B` from `sytf2_lower`'s factor and pivots.
pub(crate) fn sytrs_lower(ld: &Mat, piv: &[i64], b: &Mat) -> OpResult<Mat> {
    let n = ld.rows;
    let mut x = b.clone();
    let axpy = |x: &mut Mat, dst: usize, src: usize, f: f64| {
        for c in 0..x.cols {
            let v = x.at(dst, c) - f * x.at(src, c);
            x.set(dst, c, v);
        }
    };
    // L·D·Y = P·B, forwards.
    let mut k = 0;
    while k < n {
        if piv[k] > 0 {
            swap_rows(&mut x, k, pivot_row(piv[k], n)?);
            for i in k + 1..n {
                axpy(&mut x, i, k, ld.at(i, k));
            }
            let d = ld.at(k, k);
            (0..x.cols).for_each(|c| x.set(k, c, x.at(k, c) / d));
            k += 1;
        } else {
            if k + 1 >= n || piv[k + 1] != piv[k] {
                return Err(OpError::Arg { arg: "pivots".into(), message: format!("a 2×2 pivot at row {} without its pair", k + 1) });
            }
            swap_rows(&mut x, k + 1, pivot_row(piv[k], n)?);
            for i in k + 2..n {
                axpy(&mut x, i, k, ld.at(i, k));
                axpy(&mut x, i, k + 1, ld.at(i, k + 1));
            }
            let akm1k = ld.at(k + 1, k);
            let (akm1, ak) = (ld.at(k, k) / akm1k, ld.at(k + 1, k + 1) / akm1k);
            let denom = akm1 * ak - 1.0;
            for c in 0..x.cols {
                let (bkm1, bk) = (x.at(k, c) / akm1k, x.at(k + 1, c) / akm1k);
                x.set(k, c, (ak * bkm1 - bk) / denom);
                x.set(k + 1, c, (akm1 * bk - bkm1) / denom);
            }
            k += 2;
        }
    }
    // Lᵀ·Pᵀ·X = Y, backwards.
    let mut k = n;
    while k > 0 {
        let j = k - 1;
        let cols = if piv[j] > 0 || j == 0 { vec![j] } else { vec![j, j - 1] };
        for &cj in &cols {
            for i in k..n {
                axpy(&mut x, cj, i, ld.at(i, cj));
            }
        }
        swap_rows(&mut x, j, pivot_row(piv[j], n)?);
        k -= cols.len();
    }
    Ok(x)
}

/// The matrices of a `[..., r, c]` tensor, in f64.
fn mats(t: &Tensor) -> OpResult<(Vec<usize>, usize, usize, Vec<Mat>)> {
    if !t.dtype().is_floating() {
        return Err(OpError::DType(t.dtype()));
    }
    let s = t.shape();
    if s.len() < 2 {
        return shape_err(format!("expected a (batch of) matrices, got {s:?}"));
    }
    let (r, c) = (s[s.len() - 2], s[s.len() - 1]);
    let batch = s[..s.len() - 2].to_vec();
    let v = t.to_f64_vec();
    let ms = (0..batch.iter().product()).map(|i| Mat { rows: r, cols: c, a: v[i * r * c..(i + 1) * r * c].to_vec() }).collect();
    Ok((batch, r, c, ms))
}

/// `(LD, pivots)`, and `info` for the `_ex` overload (three outputs).
pub fn ldl_factor(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("self")?;
    let (batch, n, c, ms) = mats(a)?;
    if n != c {
        return shape_err(format!("ldl_factor takes square matrices, got {n}×{c}"));
    }
    let (mut lds, mut pivs, mut infos) = (Vec::new(), Vec::new(), Vec::new());
    // LAPACK factors in the matrix's precision (ssytrf for float32): round every step to it.
    let r = round_to(a.dtype());
    for m in &ms {
        let (ld, piv, info) = sytf2_lower(m, &r);
        lds.extend(ld.a);
        pivs.extend(piv.into_iter().map(|p| p as f64));
        infos.push(info as f64);
    }
    // `ldl_factor` (and `_ex` with `check_errors`) raises where `D` is singular, as PyTorch does.
    let checked = cx.node.outputs.len() == 2 || cx.bool_or("check_errors", false)?;
    if let Some(info) = infos.iter().find(|&&i| i > 0.0).filter(|_| checked) {
        return Err(OpError::Arg { arg: "self".into(), message: format!("singular: D's block {info} is zero") });
    }
    let with = |extra: &[usize]| [batch.as_slice(), extra].concat();
    let mut out = vec![F::new(with(&[n, n]), lds).to(a.dtype())?, F::new(with(&[n]), pivs).to(DType::I32)?];
    if cx.node.outputs.len() == 3 {
        out.push(F::new(batch.clone(), infos).to(DType::I32)?);
    }
    many(out)
}

/// `linalg_ldl_solve(LD, pivots, B)`, broadcasting the batch dims.
pub fn ldl_solve(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (ldt, pt, bt) = (cx.tensor("LD")?, cx.tensor("pivots")?, cx.tensor("B")?);
    let (lb, n, nc, lds) = mats(ldt)?;
    let (bb, bn, k, bs) = mats(bt)?;
    if n != nc || bn != n {
        return shape_err(format!("LD {:?} must be square and match B {:?}", ldt.shape(), bt.shape()));
    }
    if pt.shape() != [lb.as_slice(), &[n]].concat().as_slice() {
        return shape_err(format!("pivots {:?} must be LD's batch and {n}", pt.shape()));
    }
    let batch = super::pointwise::broadcast_shapes(&[lb.as_slice(), bb.as_slice()])?;
    let pv = pt.to_i64_vec();
    // The flat index into a batch of `from` dims for a flat index into `batch`.
    let source = |from: &[usize], mut i: usize| {
        let (mut at, mut stride) = (0, 1);
        for (d, &full) in batch.iter().enumerate().rev() {
            let off = batch.len() - from.len();
            let coord = i % full;
            i /= full;
            if d >= off && from[d - off] != 1 {
                at += coord * stride;
            }
            if d >= off {
                stride *= from[d - off];
            }
        }
        at
    };
    let total: usize = batch.iter().product();
    let mut xs = Vec::with_capacity(total * n * k);
    for i in 0..total {
        let (li, bi) = (source(&lb, i), source(&bb, i));
        xs.extend(sytrs_lower(&lds[li], &pv[li * n..(li + 1) * n], &bs[bi])?.a);
    }
    one(F::new([batch.as_slice(), &[n, k]].concat(), xs).to(bt.dtype())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mat(n: usize, v: &[f64]) -> Mat {
        Mat { rows: n, cols: v.len() / n, a: v.to_vec() }
    }

    /// `P·L·D·Lᵀ·Pᵀ` rebuilt through the solver: `A·X = B` for `X = sytrs(B)`.
    fn residual(a: &Mat, b: &Mat) -> f64 {
        let (ld, piv, info) = sytf2_lower(a, &|x| x);
        assert_eq!(info, 0);
        let x = sytrs_lower(&ld, &piv, b).unwrap();
        let ax = a.mul(&x);
        ax.a.iter().zip(&b.a).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max)
    }

    #[test]
    fn pivots_match_lapack_on_a_torch_case() {
        // torch.linalg.ldl_factor of this matrix: pivots [3, 2, 3, 4, 5], LD[0][0] = 11.9567.
        let a = mat(
            5,
            &[
                1.3166, 0.6213, 2.1467, 0.4539, 0.947, 0.6213, 1.0493, 0.6878, 0.9743, -0.1358, 2.1467, 0.6878, 11.9567, -0.2977, 0.3223, 0.4539, 0.9743,
                -0.2977, 4.2279, -0.8211, 0.947, -0.1358, 0.3223, -0.8211, 2.4511,
            ],
        );
        let (ld, piv, _) = sytf2_lower(&a, &|x| x);
        assert_eq!(piv, vec![3, 2, 3, 4, 5]);
        assert!((ld.at(0, 0) - 11.9567).abs() < 1e-12 && ld.at(0, 1) == 0.0);
        assert!(residual(&a, &Mat::eye(5)) < 1e-12);
    }

    #[test]
    fn two_by_two_blocks_solve() {
        // A zero diagonal forces a 2×2 block: pivots come out negative and paired.
        let a = mat(3, &[0., 1., 2., 1., 0., 3., 2., 3., 0.]);
        let (_, piv, _) = sytf2_lower(&a, &|x| x);
        assert!(piv.iter().any(|&p| p < 0), "{piv:?}");
        assert!(residual(&a, &mat(3, &[1., 2., 3., 4., 5., 6.])) < 1e-12);
        let (_, piv, info) = sytf2_lower(&Mat::zeros(2, 2), &|x| x);
        assert_eq!((piv, info), (vec![1, 2], 1), "a zero matrix is singular at its first pivot");
    }

    #[test]
    fn bad_pivots_are_errors() {
        let e = sytrs_lower(&Mat::eye(2), &[3, 1], &Mat::eye(2));
        assert!(e.is_err());
        let e = sytrs_lower(&Mat::eye(2), &[-2, 1], &Mat::eye(2));
        assert!(e.is_err(), "an unpaired 2×2 pivot");
    }
}
