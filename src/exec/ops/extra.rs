//! Non-core ops real graphs keep whole (PyTorch decomposes them only in some tables): products
//! of vectors and matrices with scaling (`outer`, `addr`, `addmv`, `baddbmm`, `addbmm`, `trace`,
//! `kron`, `cross`), `diff`, the split helpers, `bucketize`/`searchsorted`, `fftshift`,
//! `_safe_softmax`, `sum_to_size`, nearest and bilinear upsampling, and eval-mode dropouts.

use super::fvec::round_to;
use super::layout::{remap, strides};
use super::pointwise::{result_type, Operand};
use super::reduce::{along_dim, sum_dtype, sum_over};
use super::resample_u8;
use super::shape::{concat, many, slice_tensor};
use super::{dtype_ok, one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::{Arg, DType};

fn f64s(v: Vec<f64>, shape: &[usize], out: DType) -> OpResult<Tensor> {
    let t = Tensor::from_vec(shape, v).ok_or_else(|| OpError::Shape(format!("{shape:?}")))?;
    if out.is_floating() {
        dtype_ok(t.cast(out))
    } else {
        // Integer products are exact in f64 for OpInfo's small values; round before casting.
        let r = Tensor::from_vec(shape, t.to_f64_vec().iter().map(|x| x.round() as i64).collect::<Vec<_>>())
            .ok_or_else(|| OpError::Shape("round".into()))?;
        dtype_ok(r.cast(out))
    }
}

fn promoted(ts: &[&Tensor]) -> OpResult<DType> {
    result_type(&ts.iter().map(|t| Operand::Tensor(t)).collect::<Vec<_>>())
}

/// `beta * self + alpha * product`, `self` broadcast to the product's shape; `beta = 0` ignores
/// `self` (NaN included), as PyTorch does.
/// `(beta, alpha)` as PyTorch uses them: converted to the result's dtype first, so an integer
/// product truncates them (beta 0.2 is 0, and `self` is then ignored) and a bool one keeps
/// whether they are nonzero.
pub(super) fn beta_alpha(cx: &OpCx, out: DType) -> OpResult<(f64, f64)> {
    let as_out = |x: f64| match out {
        DType::Bool => f64::from(u8::from(x != 0.0)),
        DType::U8 | DType::I8 | DType::I16 | DType::U16 | DType::I32 | DType::U32 | DType::I64 | DType::U64 => x.trunc(),
        _ => x,
    };
    Ok((as_out(cx.float_or("beta", 1.0)?), as_out(cx.float_or("alpha", 1.0)?)))
}

fn scaled_sum(cx: &OpCx, s: &Tensor, prod: Vec<f64>, shape: &[usize], out: DType) -> OpResult<Tensor> {
    let (beta, alpha) = beta_alpha(cx, out)?;
    let sb = super::shape::expand_tensor(s, &shape.iter().map(|&d| d as i64).collect::<Vec<_>>())?;
    let sv = sb.to_f64_vec();
    let v: Vec<f64> = prod.iter().zip(&sv).map(|(p, s)| if beta == 0.0 { alpha * p } else { beta * s + alpha * p }).collect();
    f64s(v, shape, out)
}

fn matvec(a: &[f64], m: usize, k: usize, b: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    super::linalg::gemm(a, b, m, k, n, &mut out);
    out
}

pub fn outer(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("vec2")?);
    let (av, bv) = (a.to_f64_vec(), b.to_f64_vec());
    let v: Vec<f64> = av.iter().flat_map(|x| bv.iter().map(move |y| x * y)).collect();
    one(f64s(v, &[av.len(), bv.len()], promoted(&[a, b])?)?)
}

pub fn addr(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (s, a, b) = (cx.tensor("self")?, cx.tensor("vec1")?, cx.tensor("vec2")?);
    let (av, bv) = (a.to_f64_vec(), b.to_f64_vec());
    let v: Vec<f64> = av.iter().flat_map(|x| bv.iter().map(move |y| x * y)).collect();
    one(scaled_sum(cx, s, v, &[av.len(), bv.len()], promoted(&[s, a, b])?)?)
}

pub fn addmv(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (s, m, v) = (cx.tensor("self")?, cx.tensor("mat")?, cx.tensor("vec")?);
    let (r, k) = (m.shape()[0], m.shape()[1]);
    let p = matvec(&m.to_f64_vec(), r, k, &v.to_f64_vec(), 1);
    one(scaled_sum(cx, s, p, &[r], promoted(&[s, m, v])?)?)
}

fn batched(b1: &Tensor, b2: &Tensor) -> OpResult<(usize, usize, usize, usize, Vec<f64>)> {
    let (bs, m, k) = (b1.shape()[0], b1.shape()[1], b1.shape()[2]);
    let n = b2.shape()[2];
    if b2.shape()[0] != bs || b2.shape()[1] != k {
        return shape_err(format!("batch products of {:?} and {:?}", b1.shape(), b2.shape()));
    }
    let (x, y) = (b1.to_f64_vec(), b2.to_f64_vec());
    let mut out = vec![0.0; bs * m * n];
    for b in 0..bs {
        super::linalg::gemm(&x[b * m * k..(b + 1) * m * k], &y[b * k * n..(b + 1) * k * n], m, k, n, &mut out[b * m * n..(b + 1) * m * n]);
    }
    Ok((bs, m, k, n, out))
}

pub fn baddbmm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (s, b1, b2) = (cx.tensor("self")?, cx.tensor("batch1")?, cx.tensor("batch2")?);
    let (bs, m, _, n, p) = batched(b1, b2)?;
    one(scaled_sum(cx, s, p, &[bs, m, n], promoted(&[s, b1, b2])?)?)
}

/// `addbmm`: PyTorch's CPU kernel runs `result.addmm_(batch1[b], batch2[b], beta, alpha)`
/// batch after batch (`beta` only for the first), so the running result is stored in the
/// output's dtype after every batch — a float16 result rounds once per batch, not once.
pub fn addbmm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (s, b1, b2) = (cx.tensor("self")?, cx.tensor("batch1")?, cx.tensor("batch2")?);
    let (bs, m, _, n, p) = batched(b1, b2)?;
    let out = promoted(&[s, b1, b2])?;
    if bs == 0 {
        return one(scaled_sum(cx, s, vec![0.0; m * n], &[m, n], out)?);
    }
    let (beta, alpha) = beta_alpha(cx, out)?;
    let sv = super::shape::expand_tensor(s, &[m as i64, n as i64])?.to_f64_vec();
    let store = round_to(out);
    let mut acc: Vec<f64> = sv.iter().map(|&x| if beta == 0.0 { 0.0 } else { beta * x }).collect();
    for b in 0..bs {
        for (o, v) in acc.iter_mut().zip(&p[b * m * n..(b + 1) * m * n]) {
            *o = store(*o + alpha * v);
        }
    }
    one(f64s(acc, &[m, n], out)?)
}

pub fn trace(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.ndim() != 2 {
        return shape_err("trace needs a matrix");
    }
    let (r, c) = (t.shape()[0], t.shape()[1]);
    let v = t.to_f64_vec();
    let s: f64 = (0..r.min(c)).map(|i| v[i * c + i]).sum();
    let out = if t.dtype().is_floating() { t.dtype() } else { DType::I64 };
    one(f64s(vec![s], &[], out)?)
}

pub fn kron(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("other")?);
    let nd = a.ndim().max(b.ndim());
    let pad = |s: &[usize]| -> Vec<usize> { std::iter::repeat_n(1, nd - s.len()).chain(s.iter().copied()).collect() };
    let (sa, sb) = (pad(a.shape()), pad(b.shape()));
    let shape: Vec<usize> = sa.iter().zip(&sb).map(|(x, y)| x * y).collect();
    let (av, bv) = (a.to_f64_vec(), b.to_f64_vec());
    let (sta, stb, st) = (strides(&sa), strides(&sb), strides(&shape));
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n)
        .map(|k| {
            let (mut ia, mut ib) = (0, 0);
            for d in 0..nd {
                let i = if shape[d] == 0 { 0 } else { (k / st[d]) % shape[d] };
                ia += (i / sb[d]) * sta[d];
                ib += (i % sb[d]) * stb[d];
            }
            av[ia] * bv[ib]
        })
        .collect();
    one(f64s(v, &shape, promoted(&[a, b])?)?)
}

/// `cross(self, other, dim)`: 3-vectors along `dim`.
pub fn cross(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("other")?);
    let shape = super::pointwise::broadcast_shapes(&[a.shape(), b.shape()])?;
    let sizes: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
    let (a, b) = (super::shape::expand_tensor(a, &sizes)?, super::shape::expand_tensor(b, &sizes)?);
    let dim = match cx.opt_int("dim")? {
        Some(d) => wrap_dim(d, shape.len())?,
        None => shape.iter().position(|&s| s == 3).ok_or_else(|| OpError::Shape("no dim of size 3".into()))?,
    };
    if shape[dim] != 3 {
        return shape_err(format!("cross: dim {dim} has size {}, not 3", shape[dim]));
    }
    let (av, bv) = (a.to_f64_vec(), b.to_f64_vec());
    let st = strides(&shape);
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n)
        .map(|k| {
            let i = (k / st[dim]) % 3;
            let base = k - i * st[dim];
            let at = |j: usize| base + j * st[dim];
            let (j1, j2) = ((i + 1) % 3, (i + 2) % 3);
            av[at(j1)] * bv[at(j2)] - av[at(j2)] * bv[at(j1)]
        })
        .collect();
    one(f64s(v, &shape, promoted(&[&a, &b])?)?)
}

/// `diff(self, n, dim, prepend, append)`: n-th forward difference (bool: `!=`).
pub fn diff(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int_or("dim", -1)?, t.ndim())?;
    let mut parts = Vec::new();
    if let Some(p) = cx.opt_tensor("prepend")? {
        parts.push(p.clone());
    }
    parts.push(t.clone());
    if let Some(a) = cx.opt_tensor("append")? {
        parts.push(a.clone());
    }
    let out_dt = promoted(&parts.iter().collect::<Vec<_>>())?;
    let parts: Vec<Tensor> = parts.iter().map(|p| dtype_ok(p.cast(out_dt))).collect::<OpResult<_>>()?;
    let mut cur = concat(&parts, dim)?;
    for _ in 0..cx.int_or("n", 1)?.max(0) {
        let n = cur.shape()[dim];
        if n == 0 {
            break;
        }
        let (hi, lo) = (slice_tensor(&cur, dim, 1, n, 1), slice_tensor(&cur, dim, 0, n - 1, 1));
        let (h, l) = (hi.to_f64_vec(), lo.to_f64_vec());
        let v: Vec<f64> = if out_dt == DType::Bool {
            h.iter().zip(&l).map(|(a, b)| (a != b) as i32 as f64).collect()
        } else {
            h.iter().zip(&l).map(|(a, b)| a - b).collect()
        };
        cur = f64s(v, hi.shape(), out_dt)?;
    }
    one(cur)
}

/// `tensor_split` by sections (an int) or by indices; `hsplit`/`vsplit`/`dsplit` on top.
fn split_at(t: &Tensor, dim: usize, cuts: &[usize]) -> OpResult<Vec<RtValue>> {
    let n = t.shape()[dim];
    let mut start = 0;
    let mut out = Vec::new();
    for &c in cuts.iter().chain(std::iter::once(&n)) {
        let c = c.clamp(start, n);
        out.push(slice_tensor(t, dim, start, c, 1));
        start = c;
    }
    many(out)
}

fn sections(n: usize, k: usize) -> Vec<usize> {
    let (q, r) = (n / k.max(1), n % k.max(1));
    let mut cuts = Vec::new();
    let mut at = 0;
    for i in 0..k.saturating_sub(1) {
        at += q + usize::from(i < r);
        cuts.push(at);
    }
    cuts
}

fn cuts_of(idx: &[i64], n: usize) -> Vec<usize> {
    idx.iter().map(|&i| if i < 0 { (i + n as i64).max(0) as usize } else { i as usize }).collect()
}

pub fn tensor_split(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int_or("dim", 0)?, t.ndim())?;
    let n = t.shape()[dim];
    if let Some(ts) = cx.opt_tensor("tensor_indices_or_sections")? {
        let v = ts.to_i64_vec();
        return if ts.ndim() == 0 { split_at(t, dim, &sections(n, v[0] as usize)) } else { split_at(t, dim, &cuts_of(&v, n)) };
    }
    if let Some(k) = cx.opt_int("sections")? {
        return split_at(t, dim, &sections(n, k as usize));
    }
    split_at(t, dim, &cuts_of(&cx.ints("indices")?, n))
}

fn split_helper(cx: &OpCx, dim_for: fn(usize) -> usize) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = dim_for(t.ndim());
    let n = t.shape()[dim];
    if let Some(k) = cx.opt_int("sections")? {
        if k <= 0 || n % k as usize != 0 {
            return shape_err(format!("cannot split size {n} into {k} equal sections"));
        }
        return split_at(t, dim, &sections(n, k as usize));
    }
    split_at(t, dim, &cuts_of(&cx.ints("indices")?, n))
}

pub fn hsplit(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    split_helper(cx, |nd| if nd == 1 { 0 } else { 1 })
}

pub fn vsplit(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    split_helper(cx, |_| 0)
}

pub fn dsplit(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    split_helper(cx, |_| 2)
}

/// Position of `x` among `sorted` (`right`: after equal values).
fn position(sorted: &[f64], x: f64, right: bool) -> i64 {
    if x.is_nan() {
        return sorted.iter().take_while(|s| !s.is_nan()).count() as i64;
    }
    sorted.iter().take_while(|&&s| if right { s <= x } else { s < x }).count() as i64
}

fn index_result(v: Vec<i64>, shape: &[usize], int32: bool) -> OpResult<Tensor> {
    let t = Tensor::from_vec(shape, v).ok_or_else(|| OpError::Shape("indices".into()))?;
    if int32 {
        dtype_ok(t.cast(DType::I32))
    } else {
        Ok(t)
    }
}

/// `one_hot(self, num_classes=-1)`: int64 `[*self.shape, C]` with a 1 at each value's class;
/// `C` is `num_classes`, or the largest value plus one when -1 (a data-dependent size).
/// Negative values and values from `C` up are errors, as in PyTorch.
pub fn one_hot(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.dtype() != DType::I64 {
        return Err(OpError::Arg { arg: "self".into(), message: format!("one_hot needs int64 class values, got {}", t.dtype()) });
    }
    let v = t.to_i64_vec();
    let classes = match cx.int_or("num_classes", -1)? {
        -1 => match v.iter().max() {
            Some(m) => m + 1,
            None => return shape_err("one_hot cannot infer the number of classes from an empty tensor"),
        },
        c => c,
    };
    if let Some(bad) = v.iter().find(|&&x| x < 0 || x >= classes) {
        return Err(OpError::Arg { arg: "self".into(), message: format!("class value {bad} outside [0, {classes})") });
    }
    let c = classes as usize;
    let mut out = vec![0i64; v.len() * c];
    for (i, &x) in v.iter().enumerate() {
        out[i * c + x as usize] = 1;
    }
    let shape: Vec<usize> = t.shape().iter().copied().chain([c]).collect();
    one(Tensor::from_vec(&shape, out).ok_or_else(|| OpError::Shape("one_hot".into()))?)
}

pub fn bucketize(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (t, b) = (cx.tensor("self")?, cx.tensor("boundaries")?);
    let right = cx.bool_or("right", false)?;
    let bv = b.to_f64_vec();
    let v = t.to_f64_vec().iter().map(|&x| position(&bv, x, right)).collect();
    one(index_result(v, t.shape(), cx.bool_or("out_int32", false)?)?)
}

/// `searchsorted.Tensor` / `.Scalar(sorted_sequence, self, out_int32, right, side, sorter)`: per
/// value, the insertion point in its row of `sorted_sequence` (read through `sorter`, a
/// permutation per row, when given); a scalar `self` gives a 0-dim result.
pub fn searchsorted(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let seq = cx.tensor("sorted_sequence")?;
    let right = cx.bool_or("right", false)? || cx.str_or("side", "left")? == "right";
    let int32 = cx.bool_or("out_int32", false)?;
    let m = *seq.shape().last().unwrap_or(&1);
    let mut sv = seq.to_f64_vec();
    if let Some(sorter) = cx.opt_tensor("sorter")? {
        if sorter.shape() != seq.shape() {
            return shape_err(format!("sorter {:?} must have sorted_sequence's shape {:?}", sorter.shape(), seq.shape()));
        }
        let order = sorter.to_i64_vec();
        let orig = std::mem::take(&mut sv);
        sv = order
            .iter()
            .enumerate()
            .map(|(i, &j)| match usize::try_from(j) {
                Ok(j) if j < m => Ok(orig[i - i % m.max(1) + j]),
                _ => shape_err(format!("sorter index {j} out of range for rows of {m}")),
            })
            .collect::<OpResult<_>>()?;
    }
    let (values, shape) = match cx.arg("self") {
        Some(Arg::Tensor(_)) => {
            let t = cx.tensor("self")?;
            (t.to_f64_vec(), t.shape().to_vec())
        }
        _ => (vec![cx.opt_float("self")?.ok_or_else(|| OpError::Arg { arg: "self".into(), message: "missing".into() })?], vec![]),
    };
    if seq.ndim() <= 1 {
        let v = values.iter().map(|&x| position(&sv, x, right)).collect();
        return one(index_result(v, &shape, int32)?);
    }
    let k = *shape.last().unwrap_or(&1);
    let v = values.iter().enumerate().map(|(i, &x)| {
        let row = i / k.max(1);
        position(&sv[row * m..(row + 1) * m], x, right)
    });
    one(index_result(v.collect(), &shape, int32)?)
}

fn shift(cx: &OpCx, inverse: bool) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dims = match cx.opt_ints("dim")? {
        Some(d) => d.iter().map(|&d| wrap_dim(d, t.ndim())).collect::<OpResult<Vec<_>>>()?,
        None => (0..t.ndim()).collect(),
    };
    let shape = t.shape().to_vec();
    let st = strides(&shape);
    one(remap(t, &shape, 0.0, |idx| {
        Some(
            idx.iter()
                .enumerate()
                .map(|(d, &i)| {
                    let n = shape[d];
                    let j = if dims.contains(&d) {
                        let s = if inverse { n - n / 2 } else { n / 2 };
                        (i + n - s) % n.max(1)
                    } else {
                        i
                    };
                    j * st[d]
                })
                .sum(),
        )
    }))
}

pub fn fftshift(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    shift(cx, false)
}

pub fn ifftshift(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    shift(cx, true)
}

/// Softmax whose fully masked rows (all -inf) are zeros, not NaN.
pub fn safe_softmax(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int("dim")?, t.ndim())?;
    let out = cx.opt_dtype("dtype")?.unwrap_or(t.dtype());
    let a = along_dim(t, dim, |x, y| {
        let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if m == f64::NEG_INFINITY {
            y.iter_mut().for_each(|o| *o = 0.0);
            return;
        }
        let s: f64 = x.iter().map(|v| (v - m).exp()).sum();
        for (o, v) in y.iter_mut().zip(x) {
            *o = (v - m).exp() / s;
        }
    })?;
    one(dtype_ok(Tensor::from_array(a).cast(out))?)
}

/// `sum_to_size(size)`: sums the dims `size` broadcasts from.
/// `sum_to_size(self, size)`, PyTorch's `sum_to`: an empty `size` is a full `sum()`; otherwise
/// the leading dims and the dims `size` holds at 1 are summed. Whenever it sums, the result has
/// `sum`'s dtype (integers and bool give int64); with nothing to sum it is `self` unchanged.
pub fn sum_to_size(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let size = cx.ints("size")?;
    if size.len() > t.ndim() {
        return shape_err(format!("sum_to_size: size {size:?} has more dims than the input's {:?}", t.shape()));
    }
    let lead = t.ndim() - size.len();
    let dims: Vec<usize> = (0..t.ndim()).filter(|&d| d < lead || (size[d - lead] == 1 && t.shape()[d] != 1)).collect();
    if dims.is_empty() && !size.is_empty() {
        return one(t.clone());
    }
    let summed = sum_over(t, &dims, true, sum_dtype(t.dtype()))?;
    let shape: Vec<usize> = size.iter().map(|&s| s as usize).collect();
    one(summed.reshape(&shape).ok_or_else(|| OpError::Shape(format!("sum_to_size: the sum has shape {:?}, not {size:?}", summed.shape())))?)
}

/// `angle` of a real number: 0, π for negatives, NaN kept.
pub fn angle(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(super::pointwise::map_float(cx.tensor("self")?, |x| if x.is_nan() { x } else if x < 0.0 { std::f64::consts::PI } else { 0.0 })?)
}

/// `native_dropout(input, p, train)`: outside training the input and an all-true mask; in
/// training (`train` true or absent) a random mask (`random::native_dropout_train`).
pub fn native_dropout(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("input")?;
    if cx.bool_or("train", true)? {
        return super::random::native_dropout_train(cx);
    }
    many(vec![t.clone(), dtype_ok(Tensor::full(DType::Bool, t.shape(), 1.0))?])
}

/// `upsample_nearest{1,2,3}d(input, output_size, scale_factors)` (and `_upsample_nearest_exact`):
/// source index `floor(dst · in / out)` (exact: `floor((dst + 0.5) · in / out)`).
pub fn upsample_nearest(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("input")?;
    let exact = cx.node.target.contains("exact");
    let sd = t.ndim().saturating_sub(2);
    let in_s = t.shape()[2..].to_vec();
    let out_s = spatial_out(cx, &in_s)?;
    let scales = scale_factors(cx, &in_s, &out_s)?;
    let mut shape = t.shape()[..2].to_vec();
    shape.extend(&out_s);
    let st = strides(t.shape());
    one(remap(t, &shape, 0.0, |idx| {
        let mut k = idx[0] * st[0] + idx[1] * st[1];
        for d in 0..sd {
            let o = idx[2 + d] as f64;
            let src = if exact { ((o + 0.5) * scales[d]).floor() } else { (o * scales[d]).floor() };
            k += (src as usize).min(in_s[d] - 1) * st[2 + d];
        }
        Some(k)
    }))
}

fn spatial_out(cx: &OpCx, in_s: &[usize]) -> OpResult<Vec<usize>> {
    if let Some(o) = cx.opt_ints("output_size")? {
        return Ok(o.iter().map(|&s| s as usize).collect());
    }
    let f = scale_list(cx)?.ok_or_else(|| OpError::Arg { arg: "scale_factors".into(), message: "missing with no output_size".into() })?;
    Ok(in_s.iter().zip(f.iter().cycle()).map(|(&s, &f)| (s as f64 * f).floor() as usize).collect())
}

fn scale_list(cx: &OpCx) -> OpResult<Option<Vec<f64>>> {
    Ok(match cx.arg("scale_factors") {
        Some(crate::ir::Arg::Floats(v)) => Some(v.clone()),
        Some(crate::ir::Arg::Float(f)) => Some(vec![*f]),
        _ => None,
    })
}

/// Input-per-output scale per spatial dim: 1/scale_factor when given (as PyTorch uses it), else
/// in/out.
fn scale_factors(cx: &OpCx, in_s: &[usize], out_s: &[usize]) -> OpResult<Vec<f64>> {
    Ok(match scale_list(cx)? {
        Some(f) => f.iter().cycle().take(in_s.len()).map(|f| 1.0 / f).collect(),
        None => in_s.iter().zip(out_s).map(|(&i, &o)| i as f64 / o.max(1) as f64).collect(),
    })
}

/// `upsample_bilinear2d.vec(input, output_size, align_corners, scale_factors)` and linear 1-D.
pub fn upsample_linear(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("input")?;
    let align = cx.bool_or("align_corners", false)?;
    let in_s = t.shape()[2..].to_vec();
    let sd = in_s.len();
    let out_s = spatial_out(cx, &in_s)?;
    let scales = scale_factors(cx, &in_s, &out_s)?;
    let mut shape = t.shape()[..2].to_vec();
    shape.extend(&out_s);
    let v = t.to_f64_vec();
    if t.dtype() == DType::U8 && sd == 2 {
        // uint8 images take PyTorch's separate fixed-point path.
        let given = scale_list(cx)?;
        let given = |d: usize| given.as_ref().and_then(|f| f.iter().cycle().nth(d).copied());
        let sc = |d: usize| resample_u8::axis_scale(in_s[d], out_s[d], align, given(d));
        let planes = shape[0] * shape[1];
        let r = resample_u8::resample(&v, planes, (in_s[0], in_s[1]), (out_s[0], out_s[1]), (sc(0), sc(1)), align, resample_u8::Filter::Linear);
        return one(f64s(r, &shape, t.dtype())?);
    }
    let st = strides(t.shape());
    let ost = strides(&shape);
    let n: usize = shape.iter().product();
    let mut out = vec![0.0; n];
    for (k, o) in out.iter_mut().enumerate() {
        let idx: Vec<usize> = shape.iter().zip(&ost).map(|(&s, &t)| if s == 0 { 0 } else { (k / t) % s }).collect();
        // Per spatial dim: the two source indices and the weight of the upper one.
        let mut taps = Vec::with_capacity(sd);
        for d in 0..sd {
            let (i, osz, isz) = (idx[2 + d] as f64, out_s[d], in_s[d]);
            let src = if align {
                if osz > 1 { i * (isz as f64 - 1.0) / (osz as f64 - 1.0) } else { 0.0 }
            } else {
                ((i + 0.5) * scales[d] - 0.5).max(0.0)
            };
            let lo = (src.floor() as usize).min(isz - 1);
            let hi = (lo + 1).min(isz - 1);
            taps.push((lo, hi, src - lo as f64));
        }
        let base = idx[0] * st[0] + idx[1] * st[1];
        let mut acc = 0.0;
        for corner in 0..(1usize << sd) {
            let mut w = 1.0;
            let mut at = base;
            for (d, &(lo, hi, f)) in taps.iter().enumerate() {
                let up = corner >> d & 1 == 1;
                w *= if up { f } else { 1.0 - f };
                at += if up { hi } else { lo } * st[2 + d];
            }
            acc += w * v[at];
        }
        *o = acc;
    }
    one(f64s(out, &shape, t.dtype())?)
}
