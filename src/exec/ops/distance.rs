//! Distances and similarities (`cosine_similarity`, `pairwise_distance`, `pdist`, `cdist`,
//! `dist`, `renorm`), gated and parametric activations (`glu`, `prelu`, eval-mode `rrelu`), and
//! tensor builders over lists (`block_diag`, `cartesian_prod`, `combinations`).

use super::fvec::{around, broadcast_all, float_type, need_float, promoted, F};
use super::loss::pairwise;
use super::pointwise::sigmoid_f;
use super::reduce::norm_f;
use super::{one, shape_err, wrap_dim, OpCx, OpResult};
use crate::exec::value::RtValue;

pub fn cosine_similarity(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("x1")?, cx.tensor("x2")?);
    let dtype = float_type(&[a, b])?;
    let eps = cx.float_or("eps", 1e-8)?;
    let fs = broadcast_all(&[a, b])?;
    let d = wrap_dim(cx.int_or("dim", 1)?, fs[0].shape.len())?;
    let shape = &fs[0].shape;
    let (outer, len, inner) = if shape.is_empty() { (1, 1, 1) } else { around(shape, d) };
    let mut v = Vec::with_capacity(outer * inner);
    // Norms, quotients and products round to the dtype as PyTorch's half kernels do.
    let r = super::fvec::round_to(dtype);
    for o in 0..outer {
        for k in 0..inner {
            let at = |i: usize| (o * len + i) * inner + k;
            let n1 = r((0..len).map(|i| fs[0].v[at(i)].powi(2)).sum::<f64>().sqrt()).max(eps);
            let n2 = r((0..len).map(|i| fs[1].v[at(i)].powi(2)).sum::<f64>().sqrt()).max(eps);
            v.push((0..len).map(|i| r(r(fs[0].v[at(i)] / n1) * r(fs[1].v[at(i)] / n2))).sum());
        }
    }
    let mut out_shape = shape.clone();
    if !out_shape.is_empty() {
        out_shape.remove(d);
    }
    one(F::new(out_shape, v).to(dtype)?)
}

pub fn pairwise_distance(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("x1")?, cx.tensor("x2")?);
    let dtype = float_type(&[a, b])?;
    let (p, eps, keepdim) = (cx.float_or("p", 2.0)?, cx.float_or("eps", 1e-6)?, cx.bool_or("keepdim", false)?);
    let fs = broadcast_all(&[a, b])?;
    let mut shape = fs[0].shape.clone();
    if shape.is_empty() {
        shape.push(1);
    }
    let x = F::new(shape.clone(), fs[0].v.clone());
    let y = F::new(shape.clone(), fs[1].v.clone());
    let v = pairwise(&x, &y, p, eps, promoted(&[a, b])?, dtype);
    let last = shape.len() - 1;
    if keepdim {
        shape[last] = 1;
    } else {
        shape.pop();
    }
    one(F::new(shape, v).to(dtype)?)
}

/// Distances between the rows `i < j` of a 2-D input, in row-major pair order.
pub fn pdist(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let p = cx.float_or("p", 2.0)?;
    let [n, m] = x.shape() else {
        return shape_err(format!("pdist takes a 2-D input, got {:?}", x.shape()));
    };
    let (n, m, xv) = (*n, *m, x.to_f64_vec());
    let mut v = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            let d: Vec<f64> = (0..m).map(|k| xv[i * m + k] - xv[j * m + k]).collect();
            v.push(norm_f(&d, p));
        }
    }
    let len = v.len();
    one(F::new(vec![len], v).to(x.dtype())?)
}

/// `[*, P, M] × [*, R, M] → [*, P, R]` distances, the batch dims broadcast.
pub fn cdist(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("x1")?, cx.tensor("x2")?);
    need_float(a)?;
    let p = cx.float_or("p", 2.0)?;
    if a.ndim() < 2 || b.ndim() < 2 || a.shape()[a.ndim() - 1] != b.shape()[b.ndim() - 1] {
        return shape_err(format!("cdist of {:?} and {:?}", a.shape(), b.shape()));
    }
    let (ra, rb) = (a.ndim(), b.ndim());
    let batch = super::pointwise::broadcast_shapes(&[&a.shape()[..ra - 2], &b.shape()[..rb - 2]])?;
    let (pn, rn, m) = (a.shape()[ra - 2], b.shape()[rb - 2], a.shape()[ra - 1]);
    let full = |t: &crate::exec::tensor::Tensor, rows: usize| {
        let mut s = batch.clone();
        s.extend([rows, m]);
        F::of_broadcast(t, &s)
    };
    let (x, y) = (full(a, pn)?, full(b, rn)?);
    let nb: usize = batch.iter().product();
    let mut v = Vec::with_capacity(nb * pn * rn);
    for bi in 0..nb {
        for i in 0..pn {
            for j in 0..rn {
                let xi = &x.v[(bi * pn + i) * m..(bi * pn + i + 1) * m];
                let yj = &y.v[(bi * rn + j) * m..(bi * rn + j + 1) * m];
                v.push(norm_f(&xi.iter().zip(yj).map(|(a, b)| a - b).collect::<Vec<_>>(), p));
            }
        }
    }
    let mut shape = batch;
    shape.extend([pn, rn]);
    one(F::new(shape, v).to(promoted(&[a, b])?)?)
}

pub fn dist(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("other")?);
    need_float(a)?;
    let p = cx.float_or("p", 2.0)?;
    let fs = broadcast_all(&[a, b])?;
    let d: Vec<f64> = fs[0].v.iter().zip(&fs[1].v).map(|(x, y)| x - y).collect();
    one(F::new(vec![], vec![norm_f(&d, p)]).to(promoted(&[a, b])?)?)
}

/// Each slice along `dim` whose p-norm exceeds `maxnorm` is scaled to `maxnorm / (norm + 1e-7)`.
pub fn renorm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let (p, maxnorm) = (cx.float_or("p", 2.0)?, cx.float_or("maxnorm", 1.0)?);
    let mut f = F::of(x);
    let d = wrap_dim(cx.int("dim")?, f.shape.len())?;
    let (outer, len, inner) = if f.shape.is_empty() { (1, 1, 1) } else { around(&f.shape, d) };
    for i in 0..len {
        let at: Vec<usize> = (0..outer).flat_map(|o| (0..inner).map(move |k| (o * len + i) * inner + k)).collect();
        let norm = norm_f(&at.iter().map(|&j| f.v[j]).collect::<Vec<_>>(), p);
        if norm > maxnorm {
            let s = maxnorm / (norm + 1e-7);
            at.iter().for_each(|&j| f.v[j] *= s);
        }
    }
    one(f.to(x.dtype())?)
}

/// `a · sigmoid(b)` of the two halves of `dim`.
pub fn glu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let f = F::of(x);
    let d = wrap_dim(cx.int_or("dim", -1)?, f.shape.len())?;
    let (outer, len, inner) = around(&f.shape, d);
    if len % 2 != 0 {
        return shape_err(format!("glu halves dim {d} of {:?}, which is odd", f.shape));
    }
    let h = len / 2;
    let mut v = Vec::with_capacity(f.v.len() / 2);
    for o in 0..outer {
        for i in 0..h {
            for k in 0..inner {
                let a = f.v[(o * len + i) * inner + k];
                let b = f.v[(o * len + i + h) * inner + k];
                v.push(a * sigmoid_f(b));
            }
        }
    }
    let mut shape = f.shape.clone();
    shape[d] = h;
    one(F::new(shape, v).to(x.dtype())?)
}

/// `max(0, x) + w·min(0, x)`, `w` per channel (dim 1) or a single value.
pub fn prelu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (x, w) = (cx.tensor("self")?, cx.tensor("weight")?);
    need_float(x)?;
    let (f, wv) = (F::of(x), w.to_f64_vec());
    let ch = if f.shape.len() >= 2 { f.shape[1] } else { 1 };
    if wv.len() != 1 && wv.len() != ch {
        return shape_err(format!("prelu weight of {} elements for input {:?}", wv.len(), f.shape));
    }
    let inner: usize = f.shape.iter().skip(2).product();
    let v = f
        .v
        .iter()
        .enumerate()
        .map(|(i, &x)| if x > 0.0 { x } else { wv[if wv.len() == 1 { 0 } else { (i / inner.max(1)) % ch }] * x })
        .collect();
    one(F::new(f.shape.clone(), v).to(promoted(&[x, w])?)?)
}

/// Evaluation-mode `rrelu` is leaky ReLU with the mean slope; training draws random slopes.
pub fn rrelu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    if cx.bool_or("training", false)? {
        return super::random::rrelu_train(cx);
    }
    let x = cx.tensor("self")?;
    need_float(x)?;
    let slope = (cx.float_or("lower", 0.125)? + cx.float_or("upper", 1.0 / 3.0)?) / 2.0;
    let f = F::of(x);
    let v = f.v.iter().map(|&x| if x >= 0.0 { x } else { x * slope }).collect();
    one(F::new(f.shape.clone(), v).to(x.dtype())?)
}

pub fn block_diag(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let ts = cx.tensors("tensors")?;
    let dtype = promoted(&ts)?;
    let mats = ts
        .iter()
        .map(|t| {
            let f = F::of(t);
            match f.shape.len() {
                0 => Ok((1, 1, f.v)),
                1 => Ok((1, f.shape[0], f.v)),
                2 => Ok((f.shape[0], f.shape[1], f.v)),
                _ => shape_err(format!("block_diag takes tensors of at most 2 dims, got {:?}", f.shape)),
            }
        })
        .collect::<OpResult<Vec<_>>>()?;
    let (rows, cols) = mats.iter().fold((0, 0), |(r, c), m| (r + m.0, c + m.1));
    let mut v = vec![0.0; rows * cols];
    let (mut r0, mut c0) = (0, 0);
    for (r, c, m) in &mats {
        for i in 0..*r {
            for j in 0..*c {
                v[(r0 + i) * cols + c0 + j] = m[i * c + j];
            }
        }
        r0 += r;
        c0 += c;
    }
    one(F::new(vec![rows, cols], v).to(dtype)?)
}

pub fn cartesian_prod(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let ts = cx.tensors("tensors")?;
    let dtype = promoted(&ts)?;
    if ts.len() == 1 {
        return one(ts[0].clone());
    }
    let vs: Vec<Vec<f64>> = ts.iter().map(|t| t.to_f64_vec()).collect();
    let n: usize = vs.iter().map(|v| v.len()).product();
    let mut v = Vec::with_capacity(n * vs.len());
    for i in 0..n {
        let mut rem = i;
        let mut row = vec![0.0; vs.len()];
        for (k, col) in vs.iter().enumerate().rev() {
            row[k] = col[rem % col.len()];
            rem /= col.len();
        }
        v.extend(row);
    }
    one(F::new(vec![n, vs.len()], v).to(dtype)?)
}

/// Length-`r` combinations of a 1-D tensor's elements, in `itertools.combinations` order.
pub fn combinations(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let (r, repl) = (cx.int_or("r", 2)?, cx.bool_or("with_replacement", false)?);
    if x.ndim() != 1 || r < 0 {
        return shape_err(format!("combinations of {:?} with r = {r}", x.shape()));
    }
    let (xv, r) = (x.to_f64_vec(), r as usize);
    if r == 0 {
        return one(F::new(vec![0], vec![]).to(x.dtype())?);
    }
    let n = xv.len();
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut idx: Vec<usize> = if repl { vec![0; r] } else { (0..r).collect() };
    let valid = |idx: &[usize]| idx.iter().all(|&i| i < n);
    while valid(&idx) {
        rows.push(idx.clone());
        // Advance the rightmost index that can move, resetting those after it.
        let mut k = r;
        loop {
            if k == 0 {
                idx = vec![n; r];
                break;
            }
            k -= 1;
            let limit = if repl { n - 1 } else { n - r + k };
            if idx[k] < limit {
                idx[k] += 1;
                for j in k + 1..r {
                    idx[j] = if repl { idx[k] } else { idx[j - 1] + 1 };
                }
                break;
            }
        }
    }
    let v: Vec<f64> = rows.iter().flatten().map(|&i| xv[i]).collect();
    one(F::new(vec![rows.len(), r], v).to(x.dtype())?)
}
