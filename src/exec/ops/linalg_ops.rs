//! `torch.linalg` and the older LAPACK-style ops, batched over leading dims, on the kernels of
//! `lapack`. Inductor keeps all of these as fallbacks, so the interpreter is their only
//! implementation here. Factorisations whose result is not unique (eigenvectors, singular vectors)
//! come out in LAPACK's form where it is defined by the algorithm (LU, QR) and otherwise up to
//! the sign of each vector.

use super::fvec::F;
use super::lapack::{self as la, Mat};
use super::shape::many;
use super::{one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// A tensor of matrices: batch shape and one matrix per batch element.
struct Batch {
    shape: Vec<usize>,
    mats: Vec<Mat>,
    dtype: DType,
}

fn batch(t: &Tensor) -> OpResult<Batch> {
    if !t.dtype().is_floating() {
        return Err(OpError::DType(t.dtype()));
    }
    if t.ndim() < 2 {
        return shape_err(format!("expected a (batch of) matrices, got {:?}", t.shape()));
    }
    let s = t.shape();
    let (r, c) = (s[s.len() - 2], s[s.len() - 1]);
    let v = t.to_f64_vec();
    let mats = if r * c == 0 {
        vec![Mat::zeros(r, c); s[..s.len() - 2].iter().product()]
    } else {
        v.chunks(r * c).map(|a| Mat { rows: r, cols: c, a: a.to_vec() }).collect()
    };
    Ok(Batch { shape: s[..s.len() - 2].to_vec(), mats, dtype: t.dtype() })
}

fn square(b: &Batch) -> OpResult<()> {
    match b.mats.first() {
        Some(m) if m.rows != m.cols => shape_err(format!("expected square matrices, got {}×{}", m.rows, m.cols)),
        _ => Ok(()),
    }
}

/// The matrix size of a batch, also when the batch is empty.
fn dims_of(t: &Tensor) -> (usize, usize) {
    let s = t.shape();
    (s[s.len() - 2], s[s.len() - 1])
}

fn mats_out(shape: &[usize], rows: usize, cols: usize, ms: &[Mat], dtype: DType) -> OpResult<Tensor> {
    let mut s = shape.to_vec();
    s.extend([rows, cols]);
    F::new(s, ms.iter().flat_map(|m| m.a.iter().copied()).collect()).to(dtype)
}

fn vecs_out(shape: &[usize], len: usize, vs: &[Vec<f64>], dtype: DType) -> OpResult<Tensor> {
    let mut s = shape.to_vec();
    s.push(len);
    F::new(s, vs.concat()).to(dtype)
}

fn scalars_out(shape: &[usize], v: Vec<f64>, dtype: DType) -> OpResult<Tensor> {
    F::new(shape.to_vec(), v).to(dtype)
}

fn inverse(m: &Mat) -> (Mat, usize) {
    let (lu, piv, info) = la::lu(m);
    (la::lu_solve(&lu, &piv, &Mat::eye(m.rows)), info)
}

pub fn inv(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("A")?;
    let b = batch(a)?;
    square(&b)?;
    let n = dims_of(a).0;
    let (ms, infos): (Vec<Mat>, Vec<f64>) = b.mats.iter().map(inverse).map(|(m, i)| (m, i as f64)).unzip();
    let out = mats_out(&b.shape, n, n, &ms, b.dtype)?;
    if cx.node.outputs.len() == 2 {
        return many(vec![out, scalars_out(&b.shape, infos, DType::I32)?]);
    }
    one(out)
}

/// `B` of `solve(A, B)`: a vector when it has one dim less than `A` and matches its batch.
fn solve_rhs(a: &Tensor, bt: &Tensor) -> bool {
    bt.ndim() == 1 || (bt.ndim() + 1 == a.ndim() && bt.shape() == &a.shape()[..a.ndim() - 1])
}

pub fn solve(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, bt) = (cx.tensor("A")?, cx.tensor("B")?);
    let left = cx.bool_or("left", true)?;
    let vector = solve_rhs(a, bt);
    let bm = if vector { bt.reshape(&[bt.shape(), &[1]].concat()).ok_or_else(|| OpError::Shape("B".into()))? } else { bt.clone() };
    let (ab, bb) = (batch(a)?, batch(&bm)?);
    square(&ab)?;
    let (n, k) = dims_of(&bm);
    let nb = ab.mats.len().max(bb.mats.len());
    let pick = |v: &[Mat], i: usize| v[if v.len() == 1 { 0 } else { i }].clone();
    let mut xs = Vec::with_capacity(nb);
    let mut infos = Vec::with_capacity(nb);
    for i in 0..nb {
        let (am, b) = (pick(&ab.mats, i), pick(&bb.mats, i));
        // X·A = B is Aᵀ·Xᵀ = Bᵀ.
        let (am, b) = if left { (am, b) } else { (am.t(), b.t()) };
        let (lu, piv, info) = la::lu(&am);
        let x = la::lu_solve(&lu, &piv, &b);
        xs.push(if left { x } else { x.t() });
        infos.push(info as f64);
    }
    let shape = if ab.shape.len() >= bb.shape.len() { ab.shape.clone() } else { bb.shape.clone() };
    let out = mats_out(&shape, n, k, &xs, ab.dtype)?;
    let out = if vector { out.reshape(bt.shape()).map_or_else(|| out.reshape(&[&shape[..], &[n]].concat()), Some).ok_or_else(|| OpError::Shape("solve".into()))? } else { out };
    if cx.node.outputs.len() == 2 {
        return many(vec![out, scalars_out(&ab.shape, infos, DType::I32)?]);
    }
    one(out)
}

pub fn cholesky(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("self")?;
    let b = batch(a)?;
    square(&b)?;
    let upper = cx.bool_or("upper", false)?;
    let n = dims_of(a).0;
    let (ms, infos): (Vec<Mat>, Vec<f64>) = b.mats.iter().map(|m| {
        let (l, info) = la::cholesky(m);
        (if upper { l.t() } else { l }, info as f64)
    }).unzip();
    let out = mats_out(&b.shape, n, n, &ms, b.dtype)?;
    if cx.node.outputs.len() == 2 {
        return many(vec![out, scalars_out(&b.shape, infos, DType::I32)?]);
    }
    one(out)
}

pub fn qr(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("A")?;
    let b = batch(a)?;
    let mode = cx.str_or("mode", "reduced")?;
    let (m, n) = dims_of(a);
    let k = m.min(n);
    let (mut qs, mut rs) = (Vec::new(), Vec::new());
    let (qc, rr) = if mode == "complete" { (m, m) } else { (k, k) };
    for mat in &b.mats {
        let (packed, tau) = la::geqrf(mat);
        let full = la::full_q(&packed, &tau);
        qs.push(Mat { rows: m, cols: qc, a: (0..m).flat_map(|i| (0..qc).map(move |j| (i, j))).map(|(i, j)| full.at(i, j)).collect() });
        rs.push(Mat { rows: rr, cols: n, a: (0..rr).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| if j >= i && i < m { packed.at(i, j) } else { 0.0 }).collect() });
    }
    let q = if mode == "r" { F::new(vec![0], vec![]).to(b.dtype)? } else { mats_out(&b.shape, m, qc, &qs, b.dtype)? };
    many(vec![q, mats_out(&b.shape, rr, n, &rs, b.dtype)?])
}

/// The symmetric matrix `eigh` sees: the `UPLO` triangle mirrored.
pub(crate) fn symmetric(m: &Mat, lower: bool) -> Mat {
    let mut s = m.clone();
    for i in 0..m.rows {
        for j in 0..m.cols {
            let v = if (i >= j) == lower { m.at(i, j) } else { m.at(j, i) };
            s.set(i, j, v);
        }
    }
    s
}

pub fn eigh(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("self")?;
    let b = batch(a)?;
    square(&b)?;
    let lower = cx.str_or("UPLO", "L")? != "U";
    let n = dims_of(a).0;
    let (ws, vs): (Vec<Vec<f64>>, Vec<Mat>) = b.mats.iter().map(|m| la::eigh(&symmetric(m, lower))).unzip();
    let w = vecs_out(&b.shape, n, &ws, b.dtype)?;
    if cx.node.outputs.len() == 1 {
        return one(w);
    }
    many(vec![w, mats_out(&b.shape, n, n, &vs, b.dtype)?])
}

/// `(sign, log|det|)` from LU.
fn slogdet_of(m: &Mat) -> (f64, f64) {
    let (lu, piv, _) = la::lu(m);
    let mut sign = 1.0;
    let mut log = 0.0;
    for (i, &p) in piv.iter().enumerate().take(m.rows) {
        let d = lu.at(i, i);
        if p != i {
            sign = -sign;
        }
        if d == 0.0 {
            return (0.0, f64::NEG_INFINITY);
        }
        sign *= d.signum();
        log += d.abs().ln();
    }
    (sign, log)
}

pub fn det(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.opt_tensor("A")?.map_or_else(|| cx.tensor("self"), Ok)?;
    let b = batch(a)?;
    square(&b)?;
    let v = b.mats.iter().map(|m| {
        let (s, l) = slogdet_of(m);
        s * l.exp()
    });
    one(scalars_out(&b.shape, v.collect(), b.dtype)?)
}

pub fn slogdet(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.opt_tensor("A")?.map_or_else(|| cx.tensor("self"), Ok)?;
    let b = batch(a)?;
    square(&b)?;
    let (s, l): (Vec<f64>, Vec<f64>) = b.mats.iter().map(slogdet_of).unzip();
    many(vec![scalars_out(&b.shape, s, b.dtype)?, scalars_out(&b.shape, l, b.dtype)?])
}

pub fn logdet(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let b = batch(cx.tensor("self")?)?;
    square(&b)?;
    let v = b.mats.iter().map(|m| {
        let (s, l) = slogdet_of(m);
        if s < 0.0 {
            f64::NAN
        } else {
            l
        }
    });
    one(scalars_out(&b.shape, v.collect(), b.dtype)?)
}

/// `(P, L, U)` with `A = P·L·U` from packed LU and 0-based pivots.
fn unpack(lu: &Mat, piv: &[usize]) -> (Mat, Mat, Mat) {
    let (m, n) = (lu.rows, lu.cols);
    let k = m.min(n);
    let perm = la::perm_of(piv, m);
    let mut p = Mat::zeros(m, m);
    perm.iter().enumerate().for_each(|(i, &r)| p.set(r, i, 1.0));
    let l = Mat { rows: m, cols: k, a: (0..m).flat_map(|i| (0..k).map(move |j| (i, j))).map(|(i, j)| if i == j { 1.0 } else if i > j { lu.at(i, j) } else { 0.0 }).collect() };
    let u = Mat { rows: k, cols: n, a: (0..k).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| if j >= i { lu.at(i, j) } else { 0.0 }).collect() };
    (p, l, u)
}

pub fn lu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("A")?;
    let b = batch(a)?;
    let (m, n) = dims_of(a);
    let k = m.min(n);
    let (mut ps, mut ls, mut us) = (Vec::new(), Vec::new(), Vec::new());
    for mat in &b.mats {
        let (f, piv, _) = la::lu(mat);
        let (p, l, u) = unpack(&f, &piv);
        ps.push(p);
        ls.push(l);
        us.push(u);
    }
    many(vec![mats_out(&b.shape, m, m, &ps, b.dtype)?, mats_out(&b.shape, m, k, &ls, b.dtype)?, mats_out(&b.shape, k, n, &us, b.dtype)?])
}

/// `linalg_lu_factor(_ex)` and `_lu_with_info`: packed LU, 1-based int32 pivots (and info).
pub fn lu_factor(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.opt_tensor("A")?.map_or_else(|| cx.tensor("self"), Ok)?;
    let b = batch(a)?;
    let (m, n) = dims_of(a);
    let k = m.min(n);
    let (mut fs, mut ps, mut infos) = (Vec::new(), Vec::new(), Vec::new());
    for mat in &b.mats {
        let (f, piv, info) = la::lu(mat);
        fs.push(f);
        ps.push(piv.iter().map(|&p| (p + 1) as f64).collect::<Vec<_>>());
        infos.push(info as f64);
    }
    let mut out = vec![mats_out(&b.shape, m, n, &fs, b.dtype)?, vecs_out(&b.shape, k, &ps, DType::I32)?];
    if cx.node.outputs.len() == 3 {
        out.push(scalars_out(&b.shape, infos, DType::I32)?);
    }
    many(out)
}

fn pivots(t: &Tensor, batches: usize) -> Vec<Vec<usize>> {
    let v = t.to_i64_vec();
    let k = t.shape().last().copied().unwrap_or(0).max(1);
    let mut out: Vec<Vec<usize>> = v.chunks(k).map(|c| c.iter().map(|&p| (p - 1).max(0) as usize).collect()).collect();
    out.resize(batches, Vec::new());
    out
}

pub fn lu_unpack(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("LU_data")?;
    let b = batch(t)?;
    let (m, n) = dims_of(t);
    let k = m.min(n);
    let pv = pivots(cx.tensor("LU_pivots")?, b.mats.len());
    let (mut ps, mut ls, mut us) = (Vec::new(), Vec::new(), Vec::new());
    for (mat, piv) in b.mats.iter().zip(&pv) {
        let (p, l, u) = unpack(mat, piv);
        ps.push(p);
        ls.push(l);
        us.push(u);
    }
    many(vec![mats_out(&b.shape, m, m, &ps, b.dtype)?, mats_out(&b.shape, m, k, &ls, b.dtype)?, mats_out(&b.shape, k, n, &us, b.dtype)?])
}

fn lu_solve_impl(lu_t: &Tensor, piv_t: &Tensor, bt: &Tensor, left: bool, adjoint: bool) -> OpResult<Tensor> {
    let (lb, bb) = (batch(lu_t)?, batch(bt)?);
    let pv = pivots(piv_t, lb.mats.len());
    let (n, k) = dims_of(bt);
    let mut xs = Vec::with_capacity(bb.mats.len());
    for (i, b) in bb.mats.iter().enumerate() {
        let j = if lb.mats.len() == 1 { 0 } else { i };
        let (lu, piv) = (&lb.mats[j], &pv[j]);
        // A = P·L·U; Aᵀ·X = B and X·A = B reduce to solves with the transposed factors.
        let a = {
            let (p, l, u) = unpack(lu, piv);
            p.mul(&l).mul(&u)
        };
        let a = if adjoint { a.t() } else { a };
        let (f, pp, _) = la::lu(&if left { a.clone() } else { a.t() });
        let x = la::lu_solve(&f, &pp, &if left { b.clone() } else { b.t() });
        xs.push(if left { x } else { x.t() });
    }
    mats_out(&bb.shape, n, k, &xs, bb.dtype)
}

pub fn linalg_lu_solve(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(lu_solve_impl(cx.tensor("LU")?, cx.tensor("pivots")?, cx.tensor("B")?, cx.bool_or("left", true)?, cx.bool_or("adjoint", false)?)?)
}

pub fn lu_solve(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(lu_solve_impl(cx.tensor("LU_data")?, cx.tensor("LU_pivots")?, cx.tensor("self")?, true, false)?)
}

fn tri_batch(at: &Tensor, bt: &Tensor, upper: bool, left: bool, trans: bool, unit: bool) -> OpResult<Tensor> {
    let (ab, bb) = (batch(at)?, batch(bt)?);
    let (n, k) = dims_of(bt);
    let nb = ab.mats.len().max(bb.mats.len());
    let pick = |v: &[Mat], i: usize| v[if v.len() == 1 { 0 } else { i }].clone();
    let xs: Vec<Mat> = (0..nb)
        .map(|i| {
            let (a, b) = (pick(&ab.mats, i), pick(&bb.mats, i));
            if left {
                la::tri_solve(&a, &b, upper, trans, unit)
            } else {
                la::tri_solve(&a, &b.t(), upper, !trans, unit).t()
            }
        })
        .collect();
    let shape = if ab.shape.len() > bb.shape.len() || ab.mats.len() > bb.mats.len() { ab.shape } else { bb.shape };
    mats_out(&shape, n, k, &xs, bb.dtype)
}

pub fn triangular_solve(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (bt, at) = (cx.tensor("self")?, cx.tensor("A")?);
    let x = tri_batch(at, bt, cx.bool_or("upper", true)?, true, cx.bool_or("transpose", false)?, cx.bool_or("unitriangular", false)?)?;
    many(vec![x, at.clone()])
}

pub fn solve_triangular(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (at, bt) = (cx.tensor("self")?, cx.tensor("B")?);
    let upper = match cx.arg("upper") {
        Some(crate::ir::Arg::Bool(b)) => *b,
        _ => return Err(OpError::Arg { arg: "upper".into(), message: "required".into() }),
    };
    one(tri_batch(at, bt, upper, cx.bool_or("left", true)?, false, cx.bool_or("unitriangular", false)?)?)
}

pub fn cholesky_solve(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (bt, lt) = (cx.tensor("self")?, cx.tensor("input2")?);
    let upper = cx.bool_or("upper", false)?;
    let (bb, lb) = (batch(bt)?, batch(lt)?);
    let (n, k) = dims_of(bt);
    let xs: Vec<Mat> = bb
        .mats
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let l = &lb.mats[if lb.mats.len() == 1 { 0 } else { i }];
            let l = if upper { l.t() } else { l.clone() };
            let y = la::tri_solve(&l, b, false, false, false);
            la::tri_solve(&l, &y, false, true, false)
        })
        .collect();
    one(mats_out(&bb.shape, n, k, &xs, bb.dtype)?)
}

pub fn cholesky_inverse(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let lt = cx.tensor("self")?;
    let upper = cx.bool_or("upper", false)?;
    let lb = batch(lt)?;
    let n = dims_of(lt).0;
    let xs: Vec<Mat> = lb
        .mats
        .iter()
        .map(|l| {
            let l = if upper { l.t() } else { l.clone() };
            inverse(&l.mul(&l.t())).0
        })
        .collect();
    one(mats_out(&lb.shape, n, n, &xs, lb.dtype)?)
}

pub fn geqrf(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("self")?;
    let b = batch(a)?;
    let (m, n) = dims_of(a);
    let (fs, taus): (Vec<Mat>, Vec<Vec<f64>>) = b.mats.iter().map(la::geqrf).unzip();
    many(vec![mats_out(&b.shape, m, n, &fs, b.dtype)?, vecs_out(&b.shape, m.min(n), &taus, b.dtype)?])
}

fn taus(t: &Tensor, batches: usize) -> Vec<Vec<f64>> {
    let k = t.shape().last().copied().unwrap_or(0);
    let v = t.to_f64_vec();
    if k == 0 {
        return vec![vec![]; batches];
    }
    v.chunks(k).map(|c| c.to_vec()).collect()
}

pub fn householder_product(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("input")?;
    let b = batch(a)?;
    let (m, n) = dims_of(a);
    let ts = taus(cx.tensor("tau")?, b.mats.len());
    let qs: Vec<Mat> = b.mats.iter().zip(&ts).map(|(m, t)| la::householder_product(m, t)).collect();
    one(mats_out(&b.shape, m, n, &qs, b.dtype)?)
}

pub fn ormqr(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, ct) = (cx.tensor("self")?, cx.tensor("input3")?);
    let (left, trans) = (cx.bool_or("left", true)?, cx.bool_or("transpose", false)?);
    let (ab, cb) = (batch(a)?, batch(ct)?);
    let ts = taus(cx.tensor("input2")?, ab.mats.len());
    let (m, n) = dims_of(ct);
    let out: Vec<Mat> = ab
        .mats
        .iter()
        .zip(&ts)
        .zip(&cb.mats)
        .map(|((am, t), c)| {
            let q = la::full_q(am, t);
            let q = if trans { q.t() } else { q };
            if left {
                q.mul(c)
            } else {
                c.mul(&q)
            }
        })
        .collect();
    one(mats_out(&cb.shape, m, n, &out, cb.dtype)?)
}

pub fn matrix_exp(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("self")?;
    let b = batch(a)?;
    square(&b)?;
    let n = dims_of(a).0;
    // PyTorch: an empty matrix is itself, a 1×1 one the exponential of its element.
    let ms: Vec<Mat> = b
        .mats
        .iter()
        .map(|m| match n {
            0 => m.clone(),
            1 => Mat { rows: 1, cols: 1, a: vec![m.a[0].exp()] },
            _ => super::matrix_exp::mexp(m, b.dtype),
        })
        .collect();
    one(mats_out(&b.shape, n, n, &ms, b.dtype)?)
}

pub fn matrix_power(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("self")?;
    let b = batch(a)?;
    square(&b)?;
    let k = cx.int("n")?;
    let n = dims_of(a).0;
    let ms: Vec<Mat> = b
        .mats
        .iter()
        .map(|m| {
            let base = if k < 0 { inverse(m).0 } else { m.clone() };
            (0..k.unsigned_abs()).fold(Mat::eye(n), |acc, _| acc.mul(&base))
        })
        .collect();
    one(mats_out(&b.shape, n, n, &ms, b.dtype)?)
}

pub fn tensorinv(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.tensor("self")?;
    let ind = cx.int_or("ind", 2)?.max(0) as usize;
    let s = a.shape();
    if ind > s.len() {
        return shape_err(format!("tensorinv: ind {ind} for shape {s:?}"));
    }
    let (rows, cols): (usize, usize) = (s[..ind].iter().product(), s[ind..].iter().product());
    if rows != cols {
        return shape_err(format!("tensorinv of {s:?} with ind {ind} is not square"));
    }
    let m = Mat { rows, cols, a: a.to_f64_vec() };
    let inv = inverse(&m).0;
    let shape: Vec<usize> = s[ind..].iter().chain(&s[..ind]).copied().collect();
    one(F::new(shape, inv.a).to(a.dtype())?)
}

pub fn tensorsolve(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, bt) = (cx.tensor("self")?, cx.tensor("other")?);
    // `dims` of `self` move to the end, in order, before the fold.
    let moved;
    let a = match cx.opt_ints("dims")? {
        Some(dims) if !dims.is_empty() => {
            let picked = dims.iter().map(|&d| wrap_dim(d, a.ndim())).collect::<OpResult<Vec<_>>>()?;
            let mut order: Vec<usize> = (0..a.ndim()).filter(|d| !picked.contains(d)).collect();
            order.extend(&picked);
            if order.len() != a.ndim() {
                return Err(OpError::Arg { arg: "dims".into(), message: "a dim is repeated".into() });
            }
            moved = super::shape::permute_tensor(a, &order)?;
            &moved
        }
        _ => a,
    };
    let n: usize = bt.numel();
    let rest: Vec<usize> = a.shape()[bt.ndim()..].to_vec();
    let k: usize = rest.iter().product();
    if n != k || a.numel() != n * k {
        return shape_err(format!("tensorsolve of {:?} and {:?}", a.shape(), bt.shape()));
    }
    let m = Mat { rows: n, cols: k, a: a.to_f64_vec() };
    let (lu, piv, _) = la::lu(&m);
    let x = la::lu_solve(&lu, &piv, &Mat { rows: n, cols: 1, a: bt.to_f64_vec() });
    one(F::new(rest, x.a).to(a.dtype())?)
}
