//! Ops that pick elements by value along a dim: sort, topk, kthvalue, median, mode, max/min
//! with indices, argmax/argmin, and the cumulative scans. Values are compared as `f64` (exact for
//! every float dtype and integers up to 2^53); NaN sorts above everything, as in PyTorch.

use super::layout::{remap, strides};
use super::reduce::along_dim;
use super::select::{kth_smallest, topk_order};
use super::shape::many;
use super::std_sort::std_sort;
use super::{dtype_ok, one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// NaN-aware total order: NaN greater than everything, equal to NaN.
fn cmp(a: f64, b: f64) -> std::cmp::Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal),
    }
}

/// For each line along `dim`, `pick` chooses positions; returns (values, int64 indices) of shape
/// `shape` with `dim` replaced by the picks' length (dropped when `keep` is false and there is
/// exactly one pick).
fn pick_along(t: &Tensor, dim: Option<usize>, keep: bool, pick: impl Fn(&[f64]) -> Vec<usize>) -> OpResult<(Tensor, Tensor)> {
    // A 0-dim input gives 0-dim results, keepdim or not (there is no dim to keep).
    let keep = keep && t.ndim() > 0;
    let (t, dim) = match dim {
        Some(d) if t.ndim() > 0 => (t.clone(), d),
        _ => (t.reshape(&[t.numel()]).ok_or_else(|| OpError::Shape("flatten".into()))?, 0),
    };
    let shape = t.shape().to_vec();
    let n = shape[dim];
    let st = strides(&shape);
    let others: Vec<usize> = (0..shape.len()).filter(|&d| d != dim).collect();
    let other_shape: Vec<usize> = others.iter().map(|&d| shape[d]).collect();
    let lines: usize = other_shape.iter().product();
    let ost = strides(&other_shape);
    let vals = t.to_f64_vec();
    let mut picks: Vec<Vec<usize>> = Vec::with_capacity(lines);
    for l in 0..lines {
        let base: usize = others.iter().zip(&ost).zip(&other_shape).map(|((&d, &s), &sz)| ((l / s) % sz.max(1)) * st[d]).sum();
        let line: Vec<f64> = (0..n).map(|i| vals[base + i * st[dim]]).collect();
        picks.push(pick(&line));
    }
    let m = picks.first().map_or(0, |p| p.len());
    let mut out_shape = shape.clone();
    out_shape[dim] = m;
    let values = remap(&t, &out_shape, 0.0, |idx| {
        let l: usize = others.iter().zip(&ost).map(|(&d, &s)| idx[d] * s).sum();
        Some(idx.iter().enumerate().map(|(d, &i)| if d == dim { picks[l][i] } else { i } * st[d]).sum())
    });
    let index_data: Vec<i64> = {
        let ist = strides(&out_shape);
        let total: usize = out_shape.iter().product();
        (0..total)
            .map(|k| {
                let idx: Vec<usize> = out_shape.iter().zip(&ist).map(|(&s, &t)| if s == 0 { 0 } else { (k / t) % s }).collect();
                let l: usize = others.iter().zip(&ost).map(|(&d, &s)| idx[d] * s).sum();
                picks[l][idx[dim]] as i64
            })
            .collect()
    };
    let indices = Tensor::from_vec(&out_shape, index_data).ok_or_else(|| OpError::Shape("indices".into()))?;
    if !keep && m == 1 {
        let mut s = out_shape.clone();
        s.remove(dim);
        return Ok((values.reshape(&s).expect("same count"), indices.reshape(&s).expect("same count")));
    }
    Ok((values, indices))
}

fn sorted_order(line: &[f64], descending: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..line.len()).collect();
    order.sort_by(|&a, &b| if descending { cmp(line[b], line[a]) } else { cmp(line[a], line[b]) });
    order
}

fn sort_impl(cx: &OpCx) -> OpResult<(Tensor, Tensor)> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int_or("dim", -1)?, t.ndim())?;
    let desc = cx.bool_or("descending", false)?;
    if t.ndim() == 0 {
        return Ok((t.clone(), Tensor::scalar(0i64)));
    }
    pick_along(t, Some(dim), true, |l| sorted_order(l, desc))
}

pub fn sort(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (v, i) = sort_impl(cx)?;
    many(vec![v, i])
}

pub fn argsort(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(sort_impl(cx)?.1)
}

pub fn msort(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.ndim() == 0 {
        return one(t.clone());
    }
    one(pick_along(t, Some(0), true, |l| sorted_order(l, false))?.0)
}

/// `topk`: ties resolve as PyTorch's CPU kernel leaves them (`select::topk_order`).
pub fn topk(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let k = cx.int("k")?.max(0) as usize;
    let dim = wrap_dim(cx.int_or("dim", -1)?, t.ndim())?;
    let largest = cx.bool_or("largest", true)?;
    if t.ndim() == 0 {
        return many(vec![t.clone(), Tensor::scalar(0i64)]);
    }
    if k > t.shape()[dim] {
        return shape_err(format!("topk: k {k} exceeds dim size {}", t.shape()[dim]));
    }
    let sorted = cx.bool_or("sorted", true)?;
    let (v, i) = pick_along(t, Some(dim), true, |l| topk_order(l, k, largest, sorted))?;
    many(vec![v, i])
}

/// `kthvalue`: ties resolve as PyTorch's CPU quickselect leaves them (`select::kth_smallest`).
pub fn kthvalue(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let k = cx.int("k")?;
    let dim = wrap_dim(cx.int_or("dim", -1)?, t.ndim())?;
    let keep = cx.bool_or("keepdim", false)?;
    if t.ndim() == 0 {
        return many(vec![t.clone(), Tensor::scalar(0i64)]);
    }
    let n = t.shape()[dim] as i64;
    if k < 1 || k > n {
        return shape_err(format!("kthvalue: k {k} out of range for size {n}"));
    }
    let (v, i) = pick_along(t, Some(dim), keep, |l| vec![kth_smallest(l, k as usize)])?;
    many(vec![v, i])
}

/// Lower median; with NaN in a line, NaN (`nanmedian` ignores NaN instead).
fn median_pick(l: &[f64], ignore_nan: bool) -> usize {
    let order = sorted_order(l, false);
    let valid = if ignore_nan { l.iter().filter(|x| !x.is_nan()).count() } else { l.len() };
    if !ignore_nan {
        if let Some(p) = l.iter().position(|x| x.is_nan()) {
            return p;
        }
    }
    if valid == 0 {
        return order.first().copied().unwrap_or(0);
    }
    order[(valid - 1) / 2]
}

fn median_like(cx: &OpCx, ignore_nan: bool) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    match cx.opt_int("dim")? {
        None => {
            if t.numel() == 0 {
                return one(dtype_ok(Tensor::full(t.dtype(), &[], f64::NAN))?);
            }
            let (v, _) = pick_along(t, None, false, |l| vec![median_pick(l, ignore_nan)])?;
            one(v)
        }
        Some(d) => {
            let dim = wrap_dim(d, t.ndim())?;
            let (v, i) = pick_along(t, Some(dim), cx.bool_or("keepdim", false)?, |l| vec![median_pick(l, ignore_nan)])?;
            many(vec![v, i])
        }
    }
}

pub fn median(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    median_like(cx, false)
}

pub fn nanmedian(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    median_like(cx, true)
}

/// `mode(self, dim, keepdim)`: the most frequent value along `dim` (the smallest of equally
/// frequent ones) and an index of it. ATen sorts `(value, index)` pairs with libstdc++'s
/// unstable `std::sort` and returns the index at the end of the value's run; [`std_sort`]
/// repeats that sort, so the index is PyTorch's among equal values too.
pub fn mode(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int_or("dim", -1)?, t.ndim())?;
    let keep = cx.bool_or("keepdim", false)?;
    let (v, i) = pick_along(t, Some(dim), keep, |l| {
        let mut e: Vec<(f64, usize)> = l.iter().copied().zip(0..).collect();
        std_sort(&mut e);
        let (mut best, mut best_n, mut run) = (0usize, 0usize, 0usize);
        for k in 0..e.len() {
            run += 1;
            // `!=`, as ATen compares: NaN ends a run of its own.
            if k + 1 == e.len() || e[k].0 != e[k + 1].0 {
                if run > best_n {
                    (best, best_n) = (e[k].1, run);
                }
                run = 0;
            }
        }
        vec![best]
    })?;
    many(vec![v, i])
}

/// First position of the max (min); NaN counts as the max (and the min), as in PyTorch.
fn arg_extreme(l: &[f64], max: bool) -> usize {
    let mut best = 0;
    for (i, &x) in l.iter().enumerate() {
        let b = l[best];
        if b.is_nan() {
            break;
        }
        if x.is_nan() || (max && x > b) || (!max && x < b) {
            best = i;
        }
    }
    best
}

fn extreme_dim(cx: &OpCx, max: bool) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let keep = cx.bool_or("keepdim", false)?;
    let dim = wrap_dim(cx.int("dim")?, t.ndim())?;
    if t.ndim() > 0 && t.shape()[dim] == 0 {
        return shape_err("max/min over a zero-size dim");
    }
    let (v, i) = pick_along(t, Some(dim), keep || t.ndim() == 0, |l| vec![arg_extreme(l, max)])?;
    if t.ndim() == 0 {
        return many(vec![t.clone(), Tensor::scalar(0i64)]);
    }
    many(vec![v, i])
}

pub fn max_dim(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    extreme_dim(cx, true)
}

pub fn min_dim(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    extreme_dim(cx, false)
}

fn extreme_all(cx: &OpCx, max: bool) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.numel() == 0 {
        return shape_err("max/min of an empty tensor");
    }
    let (v, _) = pick_along(t, None, false, |l| vec![arg_extreme(l, max)])?;
    one(v)
}

pub fn max_all(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    extreme_all(cx, true)
}

pub fn min_all(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    extreme_all(cx, false)
}

fn arg(cx: &OpCx, max: bool) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let keep = cx.bool_or("keepdim", false)?;
    if t.numel() == 0 {
        return shape_err("argmax/argmin of an empty tensor");
    }
    match cx.opt_int("dim")? {
        None => {
            let (_, i) = pick_along(t, None, false, |l| vec![arg_extreme(l, max)])?;
            let shape = if keep { vec![1; t.ndim()] } else { vec![] };
            one(i.reshape(&shape).ok_or_else(|| OpError::Shape("argmax".into()))?)
        }
        Some(d) => {
            let dim = wrap_dim(d, t.ndim())?;
            if t.ndim() == 0 {
                return one(Tensor::scalar(0i64));
            }
            one(pick_along(t, Some(dim), keep, |l| vec![arg_extreme(l, max)])?.1)
        }
    }
}

pub fn argmax(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    arg(cx, true)
}

pub fn argmin(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    arg(cx, false)
}

/// Cumulative scans: `cumsum`/`cumprod` (integers and bool accumulate in int64), `logcumsumexp`.
fn scan(cx: &OpCx, f: fn(f64, f64) -> f64, int_out: bool) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int("dim")?, t.ndim())?;
    let out = match cx.opt_dtype("dtype")? {
        Some(d) => d,
        None if t.dtype().is_floating() => t.dtype(),
        None if int_out => DType::I64,
        None => DType::F32,
    };
    if !out.is_floating() {
        let a = along_dim(&dtype_ok(t.cast(DType::I64))?, dim, |x, y| {
            let mut acc = None;
            for (o, &v) in y.iter_mut().zip(x) {
                let n = match acc {
                    None => v,
                    Some(a) => f(a, v),
                };
                acc = Some(n);
                *o = n;
            }
        })?;
        return one(dtype_ok(Tensor::from_array(a).cast(DType::I64).and_then(|t| t.cast(out)))?);
    }
    let a = along_dim(t, dim, |x, y| {
        let mut acc = None;
        for (o, &v) in y.iter_mut().zip(x) {
            let n = match acc {
                None => v,
                Some(a) => f(a, v),
            };
            acc = Some(n);
            *o = n;
        }
    })?;
    one(dtype_ok(Tensor::from_array(a).cast(out))?)
}

pub fn cumsum(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    scan(cx, |a, b| a + b, true)
}

pub fn cumprod(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    scan(cx, |a, b| a * b, true)
}

pub fn logcumsumexp(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    scan(
        cx,
        |a, b| {
            let m = a.max(b);
            if m == f64::NEG_INFINITY || m.is_infinite() {
                m
            } else {
                m + ((a - m).exp() + (b - m).exp()).ln()
            }
        },
        false,
    )
}

/// `cummax`/`cummin`: running extreme and the (last) index where it was reached.
fn cum_extreme(cx: &OpCx, max: bool) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int("dim")?, t.ndim())?;
    let better = move |x: f64, b: f64| x.is_nan() || (!b.is_nan() && if max { x >= b } else { x <= b });
    let idx = along_dim(t, dim, |x, y| {
        let mut best = 0usize;
        for (i, o) in y.iter_mut().enumerate() {
            if i == 0 || better(x[i], x[best]) {
                best = i;
            }
            *o = best as f64;
        }
    })?;
    let idx = dtype_ok(Tensor::from_array(idx).cast(DType::I64))?;
    let iv = idx.to_i64_vec();
    let shape = t.shape().to_vec();
    let st = strides(&shape);
    let vals = if t.ndim() == 0 {
        t.clone()
    } else {
        remap(t, &shape, 0.0, |ix| {
            let k: usize = ix.iter().zip(&st).map(|(i, s)| i * s).sum();
            Some(ix.iter().enumerate().map(|(d, &i)| if d == dim { iv[k] as usize } else { i } * st[d]).sum())
        })
    };
    many(vec![vals, idx])
}

pub fn cummax(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    cum_extreme(cx, true)
}

pub fn cummin(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    cum_extreme(cx, false)
}
