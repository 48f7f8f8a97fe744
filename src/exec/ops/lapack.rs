//! Dense linear algebra kernels in `f64` on row-major matrices, following LAPACK's conventions
//! where PyTorch exposes them: partial-pivoting LU (`getrf`: the first largest pivot, 1-based
//! pivots), Householder QR (`geqrf`: `v[0] = 1`, `beta = -sign(alpha)·‖x‖`, so R's signs match),
//! Cholesky, triangular solves; symmetric eigen-decomposition and SVD by Jacobi rotations
//! (eigen/singular values ascending/descending as LAPACK returns them).

/// A row-major `rows × cols` matrix.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Mat {
    pub rows: usize,
    pub cols: usize,
    pub a: Vec<f64>,
}

impl Mat {
    pub fn zeros(rows: usize, cols: usize) -> Mat {
        Mat { rows, cols, a: vec![0.0; rows * cols] }
    }

    pub fn eye(n: usize) -> Mat {
        let mut m = Mat::zeros(n, n);
        (0..n).for_each(|i| m.a[i * n + i] = 1.0);
        m
    }

    pub fn at(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.cols + j]
    }

    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.a[i * self.cols + j] = v;
    }

    pub fn t(&self) -> Mat {
        let mut m = Mat::zeros(self.cols, self.rows);
        for i in 0..self.rows {
            for j in 0..self.cols {
                m.set(j, i, self.at(i, j));
            }
        }
        m
    }

    pub fn mul(&self, o: &Mat) -> Mat {
        let mut m = Mat::zeros(self.rows, o.cols);
        for i in 0..self.rows {
            for k in 0..self.cols {
                let x = self.at(i, k);
                if x != 0.0 {
                    for j in 0..o.cols {
                        m.a[i * o.cols + j] += x * o.at(k, j);
                    }
                }
            }
        }
        m
    }
}

/// `getrf`: `(LU packed, 0-based pivot rows, info)`; info is the 1-based index of the first
/// zero pivot, 0 when none.
pub(crate) fn lu(a: &Mat) -> (Mat, Vec<usize>, usize) {
    let mut m = a.clone();
    let k = m.rows.min(m.cols);
    let mut piv = Vec::with_capacity(k);
    let mut info = 0;
    for j in 0..k {
        let p = (j..m.rows).fold(j, |best, i| if m.at(i, j).abs() > m.at(best, j).abs() { i } else { best });
        piv.push(p);
        if p != j {
            for c in 0..m.cols {
                m.a.swap(j * m.cols + c, p * m.cols + c);
            }
        }
        let d = m.at(j, j);
        if d == 0.0 {
            if info == 0 {
                info = j + 1;
            }
            continue;
        }
        for i in j + 1..m.rows {
            let f = m.at(i, j) / d;
            m.set(i, j, f);
            for c in j + 1..m.cols {
                let v = m.at(i, c) - f * m.at(j, c);
                m.set(i, c, v);
            }
        }
    }
    (m, piv, info)
}

/// The row permutation of LU pivots: `perm[i]` is the original row now at row `i`.
pub(crate) fn perm_of(piv: &[usize], n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for (j, &r) in piv.iter().enumerate() {
        p.swap(j, r);
    }
    p
}

/// Solves `T·X = B` (or `Tᵀ·X = B`) for triangular `T`.
pub(crate) fn tri_solve(t: &Mat, b: &Mat, upper: bool, trans: bool, unit: bool) -> Mat {
    let (t, upper) = if trans { (t.t(), !upper) } else { (t.clone(), upper) };
    let n = t.rows;
    let mut x = b.clone();
    for c in 0..b.cols {
        let order: Vec<usize> = if upper { (0..n).rev().collect() } else { (0..n).collect() };
        for &i in &order {
            let mut s = x.at(i, c);
            let range: Vec<usize> = if upper { (i + 1..n).collect() } else { (0..i).collect() };
            for j in range {
                s -= t.at(i, j) * x.at(j, c);
            }
            x.set(i, c, if unit { s } else { s / t.at(i, i) });
        }
    }
    x
}

/// Solves `A·X = B` from `A`'s LU factors.
pub(crate) fn lu_solve(lu: &Mat, piv: &[usize], b: &Mat) -> Mat {
    let p = perm_of(piv, lu.rows);
    let mut pb = Mat::zeros(b.rows, b.cols);
    for (i, &r) in p.iter().enumerate() {
        pb.a[i * b.cols..(i + 1) * b.cols].copy_from_slice(&b.a[r * b.cols..(r + 1) * b.cols]);
    }
    let y = tri_solve(lu, &pb, false, false, true);
    tri_solve(lu, &y, true, false, false)
}

/// Lower Cholesky factor and info (the 1-based order of the first non-positive minor).
pub(crate) fn cholesky(a: &Mat) -> (Mat, usize) {
    let n = a.rows;
    let mut l = Mat::zeros(n, n);
    for j in 0..n {
        let d = a.at(j, j) - (0..j).map(|k| l.at(j, k).powi(2)).sum::<f64>();
        if d <= 0.0 || d.is_nan() {
            return (l, j + 1);
        }
        let d = d.sqrt();
        l.set(j, j, d);
        for i in j + 1..n {
            let s = a.at(i, j) - (0..j).map(|k| l.at(i, k) * l.at(j, k)).sum::<f64>();
            l.set(i, j, s / d);
        }
    }
    (l, 0)
}

/// `geqrf`: R in and above the diagonal, the Householder vectors below it, and `tau`.
pub(crate) fn geqrf(a: &Mat) -> (Mat, Vec<f64>) {
    let mut m = a.clone();
    let k = m.rows.min(m.cols);
    let mut tau = vec![0.0; k];
    for (j, tj) in tau.iter_mut().enumerate() {
        let alpha = m.at(j, j);
        let xnorm = (j + 1..m.rows).map(|i| m.at(i, j).powi(2)).sum::<f64>().sqrt();
        if xnorm == 0.0 {
            continue;
        }
        let beta = -alpha.signum() * alpha.hypot(xnorm);
        *tj = (beta - alpha) / beta;
        let scale = 1.0 / (alpha - beta);
        for i in j + 1..m.rows {
            let v = m.at(i, j) * scale;
            m.set(i, j, v);
        }
        m.set(j, j, beta);
        // Apply H = I - tau·v·vᵀ to the trailing columns.
        for c in j + 1..m.cols {
            let s = m.at(j, c) + (j + 1..m.rows).map(|i| m.at(i, j) * m.at(i, c)).sum::<f64>();
            let f = *tj * s;
            m.set(j, c, m.at(j, c) - f);
            for i in j + 1..m.rows {
                let v = m.at(i, c) - f * m.at(i, j);
                m.set(i, c, v);
            }
        }
    }
    (m, tau)
}

/// `H_i = I - tau_i·v_i·v_iᵀ` of column `i` of packed reflectors (`v_i[i] = 1`).
fn reflector(a: &Mat, tau: f64, i: usize) -> Mat {
    let n = a.rows;
    let v: Vec<f64> = (0..n).map(|r| if r < i { 0.0 } else if r == i { 1.0 } else { a.at(r, i) }).collect();
    let mut h = Mat::eye(n);
    for r in 0..n {
        for c in 0..n {
            h.a[r * n + c] -= tau * v[r] * v[c];
        }
    }
    h
}

/// `orgqr`: the first `a.cols` columns of `H_1 ⋯ H_k`.
pub(crate) fn householder_product(a: &Mat, tau: &[f64]) -> Mat {
    let mut q = Mat::eye(a.rows);
    for (i, &t) in tau.iter().enumerate().rev() {
        q = reflector(a, t, i).mul(&q);
    }
    let mut out = Mat::zeros(a.rows, a.cols);
    for r in 0..a.rows {
        for c in 0..a.cols {
            out.set(r, c, q.at(r, c));
        }
    }
    out
}

/// The full `Q = H_1 ⋯ H_k` (`rows × rows`).
pub(crate) fn full_q(a: &Mat, tau: &[f64]) -> Mat {
    let mut q = Mat::eye(a.rows);
    for (i, &t) in tau.iter().enumerate().rev() {
        q = reflector(a, t, i).mul(&q);
    }
    q
}

/// Cyclic Jacobi on a symmetric matrix: eigenvalues ascending, eigenvectors as columns.
pub(crate) fn eigh(a: &Mat) -> (Vec<f64>, Mat) {
    let n = a.rows;
    let mut m = a.clone();
    let mut v = Mat::eye(n);
    for _sweep in 0..100 {
        let off: f64 = (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j))).map(|(i, j)| m.at(i, j).powi(2)).sum();
        if off < 1e-30 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = m.at(p, q);
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (m.at(q, q) - m.at(p, p)) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (mkp, mkq) = (m.at(k, p), m.at(k, q));
                    m.set(k, p, c * mkp - s * mkq);
                    m.set(k, q, s * mkp + c * mkq);
                }
                for k in 0..n {
                    let (mpk, mqk) = (m.at(p, k), m.at(q, k));
                    m.set(p, k, c * mpk - s * mqk);
                    m.set(q, k, s * mpk + c * mqk);
                }
                for k in 0..n {
                    let (vkp, vkq) = (v.at(k, p), v.at(k, q));
                    v.set(k, p, c * vkp - s * vkq);
                    v.set(k, q, s * vkp + c * vkq);
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| m.at(i, i).total_cmp(&m.at(j, j)));
    let w = order.iter().map(|&i| m.at(i, i)).collect();
    let mut vs = Mat::zeros(n, n);
    for (c, &o) in order.iter().enumerate() {
        for r in 0..n {
            vs.set(r, c, v.at(r, o));
        }
    }
    (w, vs)
}

/// Thin SVD `A = U·diag(S)·Vᵀ` (`k = min(m, n)` columns), singular values descending, from the
/// eigen-decomposition of the smaller Gram matrix refined by one-sided Jacobi.
pub(crate) fn svd(a: &Mat) -> (Mat, Vec<f64>, Mat) {
    if a.rows < a.cols {
        let (u, s, v) = svd(&a.t());
        return (v, s, u);
    }
    // One-sided Jacobi on the columns of A (rows >= cols).
    let (m, n) = (a.rows, a.cols);
    let mut u = a.clone();
    let mut v = Mat::eye(n);
    for _sweep in 0..100 {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (mut alpha, mut beta, mut gamma) = (0.0, 0.0, 0.0);
                for i in 0..m {
                    alpha += u.at(i, p).powi(2);
                    beta += u.at(i, q).powi(2);
                    gamma += u.at(i, p) * u.at(i, q);
                }
                if gamma.abs() <= 1e-15 * (alpha * beta).sqrt() || gamma == 0.0 {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let t = if zeta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for i in 0..m {
                    let (x, y) = (u.at(i, p), u.at(i, q));
                    u.set(i, p, c * x - s * y);
                    u.set(i, q, s * x + c * y);
                }
                for i in 0..n {
                    let (x, y) = (v.at(i, p), v.at(i, q));
                    v.set(i, p, c * x - s * y);
                    v.set(i, q, s * x + c * y);
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let norms: Vec<f64> = (0..n).map(|j| (0..m).map(|i| u.at(i, j).powi(2)).sum::<f64>().sqrt()).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| norms[j].total_cmp(&norms[i]));
    let (mut uo, mut vo) = (Mat::zeros(m, n), Mat::zeros(n, n));
    let s: Vec<f64> = order.iter().map(|&o| norms[o]).collect();
    for (c, &o) in order.iter().enumerate() {
        for i in 0..m {
            uo.set(i, c, if norms[o] > 0.0 { u.at(i, o) / norms[o] } else { 0.0 });
        }
        for i in 0..n {
            vo.set(i, c, v.at(i, o));
        }
    }
    (uo, s, vo)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(rows: usize, cols: usize, a: &[f64]) -> Mat {
        Mat { rows, cols, a: a.to_vec() }
    }

    fn close(a: &Mat, b: &Mat) -> bool {
        a.a.iter().zip(&b.a).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn lu_reconstructs_with_the_first_largest_pivot() {
        let a = m(3, 3, &[1., 2., 3., 4., 5., 6., 7., 8., 10.]);
        let (lu, piv, info) = lu(&a);
        assert_eq!((piv[0], info), (2, 0));
        let x = lu_solve(&lu, &piv, &m(3, 1, &[6., 15., 25.]));
        assert!(close(&x, &m(3, 1, &[1., 1., 1.])));
    }

    #[test]
    fn qr_eigh_and_svd_reconstruct() {
        let a = m(3, 2, &[1., 2., 3., 4., 5., 6.]);
        let (r, tau) = geqrf(&a);
        let q = householder_product(&r, &tau);
        let mut rr = Mat::zeros(2, 2);
        (0..2).for_each(|i| (i..2).for_each(|j| rr.set(i, j, r.at(i, j))));
        assert!(close(&q.mul(&rr), &a));
        assert!(r.at(0, 0) < 0.0, "LAPACK's sign: beta = -sign(alpha)·norm");
        let s = m(2, 2, &[2., 1., 1., 2.]);
        let (w, v) = eigh(&s);
        assert!((w[0] - 1.0).abs() < 1e-12 && (w[1] - 3.0).abs() < 1e-12);
        assert!(close(&s.mul(&v), &v.mul(&m(2, 2, &[w[0], 0., 0., w[1]]))));
        let (u, sv, vv) = svd(&a);
        let mut d = Mat::zeros(2, 2);
        (0..2).for_each(|i| d.set(i, i, sv[i]));
        assert!(close(&u.mul(&d).mul(&vv.t()), &a));
        assert!(sv[0] >= sv[1]);
        let (l, info) = cholesky(&s);
        assert_eq!(info, 0);
        assert!(close(&l.mul(&l.t()), &s));
    }
}
