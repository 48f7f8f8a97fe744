//! The ops built on singular values and symmetric eigenvalues: `svd`/`linalg_svd`/`svdvals`,
//! `pinv`, `matrix_rank`, `matrix_norm`/`linalg_norm`, `cond`, `polar`, `matrix_sqrth`.
//! Singular vectors are unique only up to sign; they come out in the Jacobi sweep's signs.

use super::fvec::F;
use super::lapack::{self as la, Mat};
use super::shape::many;
use super::{one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::{Arg, DType};

/// Matrices of the last two dims (or of `dims`), with the batch shape of the other dims.
fn matrices(t: &Tensor, dims: Option<(usize, usize)>) -> OpResult<(Vec<usize>, Vec<Mat>, usize, usize)> {
    if !t.dtype().is_floating() {
        return Err(OpError::DType(t.dtype()));
    }
    let nd = t.ndim();
    if nd < 2 {
        return shape_err(format!("expected matrices, got {:?}", t.shape()));
    }
    let (r, c) = dims.unwrap_or((nd - 2, nd - 1));
    let order: Vec<usize> = (0..nd).filter(|&d| d != r && d != c).chain([r, c]).collect();
    let p = super::shape::permute_tensor(t, &order)?;
    let s = p.shape().to_vec();
    let (rows, cols) = (s[nd - 2], s[nd - 1]);
    let v = p.to_f64_vec();
    let n: usize = s[..nd - 2].iter().product();
    let mats = (0..n).map(|i| Mat { rows, cols, a: v[i * rows * cols..(i + 1) * rows * cols].to_vec() }).collect();
    Ok((s[..nd - 2].to_vec(), mats, rows, cols))
}

fn svals(m: &Mat) -> Vec<f64> {
    if m.rows * m.cols == 0 {
        return vec![];
    }
    la::svd(m).1
}

/// `U` completed to `rows × rows` with orthonormal columns (Gram–Schmidt on unit vectors).
fn complete(u: &Mat) -> Mat {
    let n = u.rows;
    let mut cols: Vec<Vec<f64>> = (0..u.cols).map(|j| (0..n).map(|i| u.at(i, j)).collect()).collect();
    for e in 0..n {
        if cols.len() == n {
            break;
        }
        let mut v: Vec<f64> = (0..n).map(|i| if i == e { 1.0 } else { 0.0 }).collect();
        for c in &cols {
            let d: f64 = c.iter().zip(&v).map(|(a, b)| a * b).sum();
            v.iter_mut().zip(c).for_each(|(x, y)| *x -= d * y);
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm > 1e-8 {
            cols.push(v.iter().map(|x| x / norm).collect());
        }
    }
    Mat { rows: n, cols: n, a: (0..n).flat_map(|i| cols.iter().map(move |c| c[i])).collect() }
}

fn out(shape: &[usize], tail: &[usize], v: Vec<f64>, dtype: DType) -> OpResult<Tensor> {
    F::new(shape.iter().chain(tail).copied().collect(), v).to(dtype)
}

/// `(U, S, V)`: thin or full; `V` not transposed (`svd`) or `Vh` (`linalg_svd`).
fn svd_impl(cx: &OpCx, a: &Tensor, full: bool, vh: bool) -> OpResult<Vec<RtValue>> {
    let (shape, mats, m, n) = matrices(a, None)?;
    let k = m.min(n);
    let (uc, vc) = if full { (m, n) } else { (k, k) };
    let (mut us, mut ss, mut vs) = (Vec::new(), Vec::new(), Vec::new());
    for mat in &mats {
        let (u, s, v) = if k == 0 { (Mat::zeros(m, 0), vec![], Mat::zeros(n, 0)) } else { la::svd(mat) };
        let (u, v) = if full { (complete(&u), complete(&v)) } else { (u, v) };
        us.extend(u.a);
        ss.extend(s);
        vs.extend(if vh { v.t().a } else { v.a });
    }
    let vt = if vh { [vc, n] } else { [n, vc] };
    let _ = cx;
    many(vec![out(&shape, &[m, uc], us, a.dtype())?, out(&shape, &[k], ss, a.dtype())?, out(&shape, &vt, vs, a.dtype())?])
}

pub fn linalg_svd(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    svd_impl(cx, cx.tensor("A")?, cx.bool_or("full_matrices", true)?, true)
}

pub fn svd(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    svd_impl(cx, cx.tensor("self")?, !cx.bool_or("some", true)?, false)
}

pub fn svdvals(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("A")?;
    let (shape, mats, m, n) = matrices(a, None)?;
    let v: Vec<f64> = mats.iter().flat_map(svals).collect();
    one(out(&shape, &[m.min(n)], v, a.dtype())?)
}

/// A per-matrix tolerance tensor argument (broadcast over the batch), or `None`.
fn tol_arg(cx: &OpCx, name: &str, n: usize) -> OpResult<Option<Vec<f64>>> {
    match cx.arg(name) {
        Some(Arg::Tensor(_)) => {
            let v = cx.tensor(name)?.to_f64_vec();
            Ok(Some(if v.len() == 1 { vec![v[0]; n] } else { v }))
        }
        Some(Arg::Float(f)) => Ok(Some(vec![*f; n])),
        _ => Ok(None),
    }
}

/// `max(atol, rtol·σ_max)` per matrix, with PyTorch's default `rtol = eps·max(m, n)` when
/// neither is given (and 0 when only `atol` is).
fn tolerances(cx: &OpCx, dtype: DType, mats: &[Mat], m: usize, n: usize, rcond: Option<f64>) -> OpResult<Vec<f64>> {
    let nb = mats.len();
    let atol = tol_arg(cx, "atol", nb)?;
    let rtol = match rcond {
        Some(r) => Some(vec![r; nb]),
        None => tol_arg(cx, "rtol", nb)?,
    };
    let eps = dtype.finfo_eps().unwrap_or(f64::EPSILON);
    let rtol = rtol.unwrap_or_else(|| vec![if atol.is_some() { 0.0 } else { eps * m.max(n) as f64 }; nb]);
    let atol = atol.unwrap_or_else(|| vec![0.0; nb]);
    Ok(mats.iter().enumerate().map(|(i, mat)| atol[i].max(rtol[i] * svals(mat).first().copied().unwrap_or(0.0))).collect())
}

fn pinv_impl(cx: &OpCx, a: &Tensor, rcond: Option<f64>) -> OpResult<Vec<RtValue>> {
    let (shape, mats, m, n) = matrices(a, None)?;
    let tols = tolerances(cx, a.dtype(), &mats, m, n, rcond)?;
    let mut v = Vec::new();
    if cx.bool_or("hermitian", false)? {
        // PyTorch reads only the lower triangle and inverts the eigenvalues above the tolerance
        // (relative to the largest |eigenvalue|).
        let eps = a.dtype().finfo_eps().unwrap_or(f64::EPSILON);
        for mat in &mats {
            let sym = super::linalg_ops::symmetric(mat, true);
            let (w, q) = if m == 0 { (vec![], Mat::zeros(0, 0)) } else { la::eigh(&sym) };
            let wmax = w.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            let atol = tol_arg(cx, "atol", 1)?.map_or(0.0, |t| t[0]);
            let rtol = tol_arg(cx, "rtol", 1)?.map_or(if tol_arg(cx, "atol", 1)?.is_some() { 0.0 } else { eps * n as f64 }, |t| t[0]);
            let tol = atol.max(rtol * wmax);
            let mut p = Mat::zeros(n, n);
            for (k, &wk) in w.iter().enumerate() {
                if wk.abs() > tol {
                    for i in 0..n {
                        for j in 0..n {
                            p.a[i * n + j] += q.at(i, k) * q.at(j, k) / wk;
                        }
                    }
                }
            }
            v.extend(p.a);
        }
        return one(out(&shape, &[n, m], v, a.dtype())?);
    }
    for (mat, tol) in mats.iter().zip(tols) {
        let mut p = Mat::zeros(n, m);
        if m.min(n) > 0 {
            let (u, s, vv) = la::svd(mat);
            for (k, &sk) in s.iter().enumerate() {
                if sk > tol && sk > 0.0 {
                    for i in 0..n {
                        for j in 0..m {
                            p.a[i * m + j] += vv.at(i, k) * u.at(j, k) / sk;
                        }
                    }
                }
            }
        }
        v.extend(p.a);
    }
    one(out(&shape, &[n, m], v, a.dtype())?)
}

pub fn pinv(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    pinv_impl(cx, cx.tensor("self")?, None)
}

pub fn pinverse(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    pinv_impl(cx, cx.tensor("self")?, Some(cx.float_or("rcond", 1e-15)?))
}

pub fn matrix_rank(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.opt_tensor("input")?.map_or_else(|| cx.tensor("self"), Ok)?;
    let (shape, mats, m, n) = matrices(a, None)?;
    let tols = tolerances(cx, a.dtype(), &mats, m, n, None)?;
    let v = mats.iter().zip(tols).map(|(mat, tol)| svals(mat).iter().filter(|&&s| s > tol).count() as f64).collect();
    one(out(&shape, &[], v, DType::I64)?)
}

/// A matrix norm of one matrix: `fro`, `nuc`, ±1, ±2, ±inf.
fn mnorm(mat: &Mat, ord: &str) -> OpResult<f64> {
    let col = |j: usize| (0..mat.rows).map(|i| mat.at(i, j).abs()).sum::<f64>();
    let row = |i: usize| (0..mat.cols).map(|j| mat.at(i, j).abs()).sum::<f64>();
    let (cols, rows) = ((0..mat.cols).map(col).collect::<Vec<_>>(), (0..mat.rows).map(row).collect::<Vec<_>>());
    let mx = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max).max(if v.is_empty() { 0.0 } else { f64::NEG_INFINITY });
    let mn = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(match ord {
        "fro" => mat.a.iter().map(|x| x * x).sum::<f64>().sqrt(),
        "nuc" => svals(mat).iter().sum(),
        "1" => mx(&cols),
        "-1" => mn(&cols),
        "inf" => mx(&rows),
        "-inf" => mn(&rows),
        "2" => svals(mat).first().copied().unwrap_or(0.0),
        "-2" => svals(mat).last().copied().unwrap_or(0.0),
        o => return Err(OpError::Arg { arg: "ord".into(), message: format!("unsupported matrix norm order {o}") }),
    })
}

fn ord_name(cx: &OpCx, name: &str) -> OpResult<Option<String>> {
    Ok(match cx.arg(name) {
        None => None,
        Some(Arg::String(s)) => Some(s.clone()),
        Some(_) => {
            let f = cx.float_or(name, 2.0)?;
            Some(if f.is_infinite() { if f > 0.0 { "inf".into() } else { "-inf".into() } } else { format!("{}", f as i64) })
        }
    })
}

fn matrix_norm_impl(cx: &OpCx, a: &Tensor, ord: &str, dims: &[i64], keepdim: bool) -> OpResult<Tensor> {
    let nd = a.ndim();
    let (r, c) = (wrap_dim(dims[0], nd)?, wrap_dim(dims[1], nd)?);
    let (shape, mats, _, _) = matrices(a, Some((r, c)))?;
    let v = mats.iter().map(|m| mnorm(m, ord)).collect::<OpResult<Vec<_>>>()?;
    let shape = if keepdim {
        let mut s = a.shape().to_vec();
        s[r] = 1;
        s[c] = 1;
        s
    } else {
        shape
    };
    let dtype = cx.opt_dtype("dtype")?.unwrap_or(a.dtype());
    F::new(shape, v).to(dtype)
}

pub fn matrix_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("self")?;
    let ord = ord_name(cx, "ord")?.unwrap_or_else(|| "fro".into());
    let dims = cx.ints_or("dim", &[-2, -1])?;
    one(matrix_norm_impl(cx, a, &ord, &dims, cx.bool_or("keepdim", false)?)?)
}

pub fn linalg_norm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("self")?;
    let ord = ord_name(cx, "ord")?;
    let dims = cx.opt_ints("dim")?;
    let keepdim = cx.bool_or("keepdim", false)?;
    let matrix = match (&dims, &ord) {
        (Some(d), _) => d.len() == 2,
        (None, Some(_)) => a.ndim() == 2,
        (None, None) => false,
    };
    if matrix {
        let d = dims.unwrap_or_else(|| vec![-2, -1]);
        return one(matrix_norm_impl(cx, a, ord.as_deref().unwrap_or("fro"), &d, keepdim)?);
    }
    let p = match ord.as_deref() {
        None => 2.0,
        Some("inf") => f64::INFINITY,
        Some("-inf") => f64::NEG_INFINITY,
        Some(_) => cx.float_or("ord", 2.0)?,
    };
    let dims = super::reduce::reduce_dims(dims, a.ndim())?;
    let rows = super::reduce::group::<f64>(a, &dims, keepdim);
    let count: usize = rows.out_shape.iter().product();
    let v: Vec<f64> = if rows.row_len == 0 { vec![0.0; count] } else { rows.rows().map(|r| super::reduce::norm_f(r, p)).collect() };
    let dtype = cx.opt_dtype("dtype")?.unwrap_or(a.dtype());
    one(F::new(rows.out_shape.clone(), v).to(dtype)?)
}

pub fn cond(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("self")?;
    let p = ord_name(cx, "p")?;
    let (shape, mats, _, _) = matrices(a, None)?;
    let v = mats
        .iter()
        .map(|m| match p.as_deref() {
            None | Some("2") => {
                let s = svals(m);
                Ok(s.first().copied().unwrap_or(0.0) / s.last().copied().unwrap_or(0.0))
            }
            Some("-2") => {
                let s = svals(m);
                Ok(s.last().copied().unwrap_or(0.0) / s.first().copied().unwrap_or(0.0))
            }
            Some(o) => {
                let (lu, piv, _) = la::lu(m);
                let inv = la::lu_solve(&lu, &piv, &Mat::eye(m.rows));
                Ok(mnorm(m, o)? * mnorm(&inv, o)?)
            }
        })
        .collect::<OpResult<Vec<_>>>()?;
    one(F::new(shape, v).to(a.dtype())?)
}

/// `A = U·H` with `U = W·Vᵀ` orthogonal and `H = V·S·Vᵀ` symmetric positive semi-definite.
pub fn polar(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("A")?;
    let (shape, mats, m, n) = matrices(a, None)?;
    let (mut us, mut hs) = (Vec::new(), Vec::new());
    for mat in &mats {
        let (w, s, v) = la::svd(mat);
        us.extend(w.mul(&v.t()).a);
        let mut vs = v.clone();
        for i in 0..vs.rows {
            for (k, sk) in s.iter().enumerate() {
                vs.a[i * vs.cols + k] *= sk;
            }
        }
        hs.extend(vs.mul(&v.t()).a);
    }
    many(vec![out(&shape, &[m, n], us, a.dtype())?, out(&shape, &[n, n], hs, a.dtype())?])
}

/// The symmetric square root `V·sqrt(Λ)·Vᵀ` of a symmetric positive semi-definite matrix.
pub fn matrix_sqrth(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("self")?;
    let (shape, mats, m, n) = matrices(a, None)?;
    let mut v = Vec::new();
    for mat in &mats {
        let (w, q) = la::eigh(mat);
        let mut qs = q.clone();
        for i in 0..qs.rows {
            for (k, wk) in w.iter().enumerate() {
                qs.a[i * qs.cols + k] *= wk.max(0.0).sqrt();
            }
        }
        v.extend(qs.mul(&q.t()).a);
    }
    one(out(&shape, &[m, n], v, a.dtype())?)
}
