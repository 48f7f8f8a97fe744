//! Indexing: gather/scatter along a dim, `index_*` along a dim, advanced indexing (`index`,
//! `index_put`), embedding, masks, and the `*_scatter` ops that write a view back. Reads are one
//! [`remap`]; writes copy `self` and store pairs `(destination, source)` of flat indices.
//!
//! Masked reads and writes (`masked_select`, `masked_scatter`, `nonzero*`, `argwhere`, the
//! `_unsafe_masked_index*` ops) live in `index_mask`, re-exported here.

use ndarray::ArrayD;

use super::fvec::round_to;
use super::layout::{remap, strides};
use super::pointwise::broadcast_shapes;
use super::shape::expand_tensor;
use super::{dtype_ok, one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::tensor::{each_map, Element, Tensor};
use crate::exec::value::RtValue;
use crate::ir::{Arg, DType};

pub use super::index_mask::{
    argwhere, masked_scatter, masked_select, nonzero, nonzero_numpy, nonzero_static, unsafe_masked_index,
    unsafe_masked_index_put_accumulate,
};

fn index_values(t: &Tensor, n: usize, what: &str) -> OpResult<Vec<usize>> {
    if t.dtype().is_floating() {
        return Err(OpError::Unsupported(format!("{what}: float index tensor")));
    }
    t.to_i64_vec()
        .into_iter()
        .map(|i| {
            let j = if i < 0 { i + n as i64 } else { i };
            if j < 0 || j >= n as i64 {
                shape_err(format!("{what}: index {i} is out of bounds for size {n}"))
            } else {
                Ok(j as usize)
            }
        })
        .collect()
}

/// `self` with `dst[k] = src[s]` for each pair, `src` cast to `self`'s dtype.
pub(super) fn assign(t: &Tensor, src: &Tensor, pairs: &[(usize, usize)]) -> OpResult<Tensor> {
    fn go<T: Element>(a: &ArrayD<T>, src: &Tensor, pairs: &[(usize, usize)]) -> ArrayD<T> {
        let s = src.to_array::<T>();
        let sv = s.as_slice().expect("standard layout");
        let mut out = a.clone();
        let o = out.as_slice_mut().expect("standard layout");
        for &(d, k) in pairs {
            o[d] = sv[k];
        }
        out
    }
    Ok(Tensor::from_data(each_map!(t.data(), a => go(a, src, pairs))))
}

/// A reducing write: `sum`, `prod`, `mean`, `amax`, `amin`, computed in f64 (integers exactly up
/// to 2^53) and cast back; without `include_self` the first write replaces.
pub(super) fn reduce_into(t: &Tensor, src: &Tensor, pairs: &[(usize, usize)], mode: &str, include_self: bool) -> OpResult<Tensor> {
    let mut out = t.to_f64_vec();
    let s = src.to_f64_vec();
    let mut count = vec![if include_self { 1usize } else { 0 }; out.len()];
    // PyTorch's CPU kernels combine into the destination tensor one source element at a time
    // (`*dst += *src` in the tensor's dtype), so a float16 destination rounds after every step.
    let store = round_to(if t.dtype().is_floating() { t.dtype() } else { DType::F64 });
    for &(d, k) in pairs {
        let v = s[k];
        if count[d] == 0 {
            out[d] = v;
        } else {
            out[d] = store(match mode {
                "sum" | "mean" | "add" => out[d] + v,
                "prod" | "multiply" => out[d] * v,
                "amax" => {
                    if out[d].is_nan() || v.is_nan() {
                        f64::NAN
                    } else {
                        out[d].max(v)
                    }
                }
                "amin" => {
                    if out[d].is_nan() || v.is_nan() {
                        f64::NAN
                    } else {
                        out[d].min(v)
                    }
                }
                m => return Err(OpError::Arg { arg: "reduce".into(), message: format!("unknown reduction `{m}`") }),
            });
        }
        count[d] += 1;
    }
    if mode == "mean" {
        for (o, &c) in out.iter_mut().zip(&count) {
            if c > 0 {
                *o = if t.dtype().is_floating() { *o / c as f64 } else { (*o / c as f64).floor() };
            }
        }
    }
    let r = Tensor::from_vec(t.shape(), out).ok_or_else(|| OpError::Shape("scatter".into()))?;
    if t.dtype() == DType::Bool {
        return dtype_ok(r.cast(DType::Bool));
    }
    dtype_ok(r.cast(t.dtype()))
}

/// Flat index of `idx` with dim `dim` replaced by `at`, under `st`.
fn flat_with(idx: &[usize], st: &[usize], dim: usize, at: usize) -> usize {
    idx.iter().enumerate().map(|(d, &i)| if d == dim { at } else { i } * st[d]).sum()
}

/// The coordinates of every element of `shape`, row-major.
pub(super) fn coords(shape: &[usize]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let n: usize = shape.iter().product();
    let st = strides(shape);
    (0..n).map(move |k| shape.iter().zip(&st).map(|(&s, &t)| if s == 0 { 0 } else { (k / t) % s }).collect())
}

pub fn gather(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let index = cx.tensor("index")?;
    let nd = t.ndim();
    let dim = wrap_dim(cx.int("dim")?, nd)?;
    let n = if nd == 0 { 1 } else { t.shape()[dim] };
    let iv = index_values(index, n, "gather")?;
    if nd == 0 {
        return one(remap(t, index.shape(), 0.0, |_| Some(0)));
    }
    let st = strides(t.shape());
    let ist = strides(index.shape());
    one(remap(t, index.shape(), 0.0, |idx| {
        let k = idx.iter().zip(&ist).map(|(i, s)| i * s).sum::<usize>();
        Some(flat_with(idx, &st, dim, iv[k]))
    }))
}

pub fn take_along_dim(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let index = cx.tensor("indices")?;
    match cx.opt_int("dim")? {
        None => {
            let f = t.reshape(&[t.numel()]).ok_or_else(|| OpError::Shape("take_along_dim".into()))?;
            let iv = index_values(index, t.numel(), "take_along_dim")?;
            // `self.view(-1).gather(0, indices.view(-1))`: 1-D whatever the indices' shape.
            one(remap(&f, &[iv.len()], 0.0, |idx| iv.get(idx[0]).copied()))
        }
        Some(d) => {
            let dim = wrap_dim(d, t.ndim())?;
            // Broadcast all dims but `dim`.
            let mut ts: Vec<usize> = t.shape().to_vec();
            let mut is: Vec<usize> = index.shape().to_vec();
            ts[dim] = 1;
            is[dim] = 1;
            let b = broadcast_shapes(&[&ts, &is])?;
            let mut tshape = b.clone();
            tshape[dim] = t.shape()[dim];
            let mut ishape = b;
            ishape[dim] = index.shape()[dim];
            let tb = expand_tensor(t, &tshape.iter().map(|&s| s as i64).collect::<Vec<_>>())?;
            let ib = expand_tensor(index, &ishape.iter().map(|&s| s as i64).collect::<Vec<_>>())?;
            let iv = index_values(&ib, tshape[dim], "take_along_dim")?;
            let st = strides(&tshape);
            let ist = strides(&ishape);
            one(remap(&tb, &ishape, 0.0, |idx| {
                let k = idx.iter().zip(&ist).map(|(i, s)| i * s).sum::<usize>();
                Some(flat_with(idx, &st, dim, iv[k]))
            }))
        }
    }
}

pub fn take(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let index = cx.tensor("index")?;
    let iv = index_values(index, t.numel(), "take")?;
    let f = t.reshape(&[t.numel()]).ok_or_else(|| OpError::Shape("take".into()))?;
    let ist = strides(index.shape());
    one(remap(&f, index.shape(), 0.0, |idx| Some(iv[idx.iter().zip(&ist).map(|(i, s)| i * s).sum::<usize>()])))
}

/// The (destination, source) pairs of `scatter(self, dim, index, src)`.
fn scatter_pairs(t: &Tensor, dim: usize, index: &Tensor, src_shape: &[usize]) -> OpResult<Vec<(usize, usize)>> {
    let nd = t.ndim();
    let n = if nd == 0 { 1 } else { t.shape()[dim] };
    let iv = index_values(index, n, "scatter")?;
    let st = strides(t.shape());
    let sst = strides(src_shape);
    Ok(coords(index.shape())
        .enumerate()
        .map(|(k, idx)| {
            let d = if nd == 0 { 0 } else { flat_with(&idx, &st, dim, iv[k]) };
            let s = idx.iter().zip(&sst).map(|(i, s)| i * s).sum::<usize>();
            (d, s)
        })
        .collect())
}

fn src_or_value(cx: &OpCx, t: &Tensor) -> OpResult<Tensor> {
    match cx.arg("src") {
        Some(Arg::Tensor(_)) => Ok(cx.tensor("src")?.clone()),
        _ => {
            let v = cx.opt_scalar("value")?.ok_or_else(|| OpError::Arg { arg: "value".into(), message: "missing".into() })?;
            dtype_ok(Tensor::full(t.dtype(), cx.tensor("index")?.shape(), v.to_f64()))
        }
    }
}

pub fn scatter(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int("dim")?, t.ndim())?;
    let index = cx.tensor("index")?;
    let src = src_or_value(cx, t)?;
    let pairs = scatter_pairs(t, dim, index, src.shape())?;
    match cx.str_or("reduce", "")? {
        "" => one(assign(t, &src, &pairs)?),
        m => one(reduce_into(t, &src, &pairs, m, true)?),
    }
}

pub fn scatter_add(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int("dim")?, t.ndim())?;
    let src = cx.tensor("src")?;
    let pairs = scatter_pairs(t, dim, cx.tensor("index")?, src.shape())?;
    one(reduce_into(t, src, &pairs, "sum", true)?)
}

pub fn scatter_reduce(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int("dim")?, t.ndim())?;
    let src = cx.tensor("src")?;
    let pairs = scatter_pairs(t, dim, cx.tensor("index")?, src.shape())?;
    one(reduce_into(t, src, &pairs, cx.str_or("reduce", "sum")?, cx.bool_or("include_self", true)?)?)
}

pub fn index_select(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let nd = t.ndim();
    let dim = wrap_dim(cx.int("dim")?, nd)?;
    let n = if nd == 0 { 1 } else { t.shape()[dim] };
    let iv = index_values(cx.tensor("index")?, n, "index_select")?;
    if nd == 0 {
        return one(remap(t, &[], 0.0, |_| Some(0)));
    }
    let mut shape = t.shape().to_vec();
    shape[dim] = iv.len();
    let st = strides(t.shape());
    one(remap(t, &shape, 0.0, |idx| Some(flat_with(idx, &st, dim, iv[idx[dim]]))))
}

/// Pairs for the `index_*` family: every element of `src` (shaped like `self` but with
/// `len(index)` along `dim`) goes to `self` at `index[i]` along `dim`.
fn index_dim_pairs(t: &Tensor, dim: usize, iv: &[usize], src_shape: &[usize]) -> Vec<(usize, usize)> {
    let st = strides(t.shape());
    let sst = strides(src_shape);
    coords(src_shape)
        .map(|idx| {
            let d = if t.ndim() == 0 { 0 } else { flat_with(&idx, &st, dim, iv[idx[dim]]) };
            (d, idx.iter().zip(&sst).map(|(i, s)| i * s).sum())
        })
        .collect()
}

/// (destination, source) flat-index pairs of a write.
pub(super) type Pairs = Vec<(usize, usize)>;

fn index_dim(cx: &OpCx, src_name: &str) -> OpResult<(Tensor, Tensor, Pairs)> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int("dim")?, t.ndim())?;
    let n = if t.ndim() == 0 { 1 } else { t.shape()[dim] };
    let iv = index_values(cx.tensor("index")?, n, "index")?;
    let src = cx.tensor(src_name)?;
    let src = if src.ndim() == 0 && t.ndim() > 0 { src.reshape(&vec![1; t.ndim()]).unwrap_or_else(|| src.clone()) } else { src.clone() };
    let pairs = index_dim_pairs(t, dim, &iv, src.shape());
    Ok((t.clone(), src, pairs))
}

pub fn index_add(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (t, src, pairs) = index_dim(cx, "source")?;
    let alpha = cx.float_or("alpha", 1.0)?;
    let src = if alpha == 1.0 { src } else { super::pointwise::map_float(&dtype_ok(src.cast(DType::F64))?, move |x| x * alpha)? };
    one(reduce_into(&t, &src, &pairs, "sum", true)?)
}

pub fn index_copy(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (t, src, pairs) = index_dim(cx, "source")?;
    one(assign(&t, &src, &pairs)?)
}

pub fn index_reduce(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (t, src, pairs) = index_dim(cx, "source")?;
    one(reduce_into(&t, &src, &pairs, cx.str_or("reduce", "prod")?, cx.bool_or("include_self", true)?)?)
}

pub fn index_fill(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int("dim")?, t.ndim())?;
    let n = if t.ndim() == 0 { 1 } else { t.shape()[dim] };
    let iv = index_values(cx.tensor("index")?, n, "index_fill")?;
    let v = match cx.arg("value") {
        Some(Arg::Tensor(_)) => cx.tensor("value")?.to_f64_vec().first().copied().unwrap_or(0.0),
        _ => cx.float_or("value", 0.0)?,
    };
    let mut src_shape = t.shape().to_vec();
    if t.ndim() > 0 {
        src_shape[dim] = iv.len();
    }
    let src = dtype_ok(Tensor::full(t.dtype(), &src_shape, v))?;
    one(assign(t, &src, &index_dim_pairs(t, dim, &iv, &src_shape))?)
}

/// The flat source index of every element of `self[indices]` (advanced indexing), row-major,
/// and the result's shape. Boolean masks index by their nonzero positions.
pub(super) fn advanced(t: &Tensor, indices: &[Option<&Tensor>]) -> OpResult<(Vec<usize>, Vec<usize>)> {
    let mut per_dim: Vec<Option<Tensor>> = Vec::new();
    for ix in indices {
        match ix {
            None => per_dim.push(None),
            Some(ix) if matches!(ix.dtype(), DType::Bool | DType::U8) => {
                let base = per_dim.len();
                for k in 0..ix.ndim() {
                    if t.shape().get(base + k) != Some(&ix.shape()[k]) {
                        return shape_err(format!("mask {:?} does not match {:?} at dim {}", ix.shape(), t.shape(), base + k));
                    }
                }
                let mask = ix.to_i64_vec();
                let nz: Vec<Vec<usize>> = coords(ix.shape()).zip(&mask).filter(|(_, &m)| m != 0).map(|(c, _)| c).collect();
                for k in 0..ix.ndim().max(1) {
                    let v: Vec<i64> = nz.iter().map(|c| c.get(k).copied().unwrap_or(0) as i64).collect();
                    per_dim.push(Some(Tensor::from_vec(&[v.len()], v).ok_or_else(|| OpError::Shape("mask".into()))?));
                }
            }
            Some(ix) => per_dim.push(Some((*ix).clone())),
        }
    }
    let nd = t.ndim();
    if per_dim.len() > nd.max(1) {
        return shape_err(format!("too many indices ({}) for a tensor of rank {nd}", per_dim.len()));
    }
    while per_dim.len() < nd {
        per_dim.push(None);
    }
    let present: Vec<usize> = (0..per_dim.len()).filter(|&d| per_dim[d].is_some()).collect();
    let shapes: Vec<&[usize]> = present.iter().map(|&d| per_dim[d].as_ref().map(|x| x.shape()).unwrap_or(&[])).collect();
    let b = broadcast_shapes(&shapes)?;
    let bsizes: Vec<i64> = b.iter().map(|&s| s as i64).collect();
    let mut vals: Vec<Vec<usize>> = vec![vec![]; per_dim.len()];
    for &d in &present {
        let x = expand_tensor(per_dim[d].as_ref().expect("present"), &bsizes)?;
        vals[d] = index_values(&x, if nd == 0 { 1 } else { t.shape()[d] }, "index")?;
    }
    let consecutive = present.windows(2).all(|w| w[1] == w[0] + 1);
    let rest: Vec<usize> = (0..nd).filter(|d| !present.contains(d)).collect();
    let first = present.first().copied().unwrap_or(0);
    let mut shape = Vec::new();
    if consecutive {
        shape.extend(rest.iter().filter(|&&d| d < first).map(|&d| t.shape()[d]));
        shape.extend(&b);
        shape.extend(rest.iter().filter(|&&d| d > first).map(|&d| t.shape()[d]));
    } else {
        shape.extend(&b);
        shape.extend(rest.iter().map(|&d| t.shape()[d]));
    }
    let st = strides(t.shape());
    let bst = strides(&b);
    let before = if consecutive { rest.iter().filter(|&&d| d < first).count() } else { 0 };
    let src: Vec<usize> = coords(&shape)
        .map(|idx| {
            let bi: usize = idx[before..before + b.len()].iter().zip(&bst).map(|(i, s)| i * s).sum();
            let mut k = 0;
            let mut r = 0;
            for d in 0..nd {
                let i = if vals[d].is_empty() && per_dim[d].is_none() {
                    let pos = if r < before { r } else { r + b.len() };
                    r += 1;
                    idx[pos]
                } else {
                    vals[d][bi]
                };
                k += i * st[d];
            }
            k
        })
        .collect();
    Ok((shape, src))
}

pub(super) fn optional_tensors<'a>(cx: &OpCx<'a>, name: &str) -> OpResult<Vec<Option<&'a Tensor>>> {
    let ids: Vec<Option<crate::ir::ValueId>> = match cx.arg(name) {
        Some(Arg::OptionalTensors(vs)) => vs.clone(),
        Some(Arg::Tensors(vs)) => vs.iter().map(|v| Some(*v)).collect(),
        other => return Err(OpError::Arg { arg: name.into(), message: format!("expected a list of tensors, got {other:?}") }),
    };
    ids.into_iter()
        .map(|v| match v {
            None => Ok(None),
            Some(v) => match cx.values.get(v) {
                Some(RtValue::Tensor(t)) => Ok(Some(t)),
                _ => Err(OpError::Arg { arg: name.into(), message: "an index is not a computed tensor".into() }),
            },
        })
        .collect()
}

pub fn index(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let (shape, src) = advanced(t, &optional_tensors(cx, "indices")?)?;
    let st = strides(&shape);
    one(remap(t, &shape, 0.0, |idx| Some(src[idx.iter().zip(&st).map(|(i, s)| i * s).sum::<usize>()])))
}

pub fn index_put(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let (shape, dst) = advanced(t, &optional_tensors(cx, "indices")?)?;
    let values = expand_tensor(cx.tensor("values")?, &shape.iter().map(|&s| s as i64).collect::<Vec<_>>())?;
    let pairs: Vec<(usize, usize)> = dst.into_iter().enumerate().map(|(k, d)| (d, k)).collect();
    if cx.bool_or("accumulate", false)? {
        one(reduce_into(t, &values, &pairs, "sum", true)?)
    } else {
        one(assign(t, &values, &pairs)?)
    }
}

/// `embedding(weight, indices)`: rows of `weight`.
pub fn embedding(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let w = cx.tensor("weight")?;
    let ix = cx.tensor("indices")?;
    if w.ndim() != 2 {
        return shape_err(format!("embedding weight must be 2-D, got {:?}", w.shape()));
    }
    let (rows, d) = (w.shape()[0], w.shape()[1]);
    let iv = index_values(ix, rows, "embedding")?;
    let mut shape = ix.shape().to_vec();
    shape.push(d);
    one(remap(w, &shape, 0.0, |idx| {
        let n = idx.len() - 1;
        let k: usize = idx[..n].iter().zip(strides(ix.shape())).map(|(i, s)| i * s).sum();
        Some(iv[k] * d + idx[n])
    }))
}

/// `select_scatter`, `slice_scatter`, `diagonal_scatter`: `src` written over one view of `self`.
fn view_scatter(t: &Tensor, src: &Tensor, view_src: Vec<usize>) -> OpResult<Tensor> {
    if view_src.len() != src.numel() {
        return shape_err(format!("src has {} elements, the view {}", src.numel(), view_src.len()));
    }
    let pairs: Vec<(usize, usize)> = view_src.into_iter().enumerate().map(|(k, d)| (d, k)).collect();
    assign(t, src, &pairs)
}

/// The flat indices of `self`'s elements that a view op selects, in the view's order.
fn view_positions(t: &Tensor, f: impl Fn(&Tensor) -> OpResult<Tensor>) -> OpResult<Vec<usize>> {
    let ids: Vec<i64> = (0..t.numel() as i64).collect();
    let it = Tensor::from_vec(t.shape(), ids).ok_or_else(|| OpError::Shape("view".into()))?;
    Ok(f(&it)?.to_i64_vec().into_iter().map(|i| i as usize).collect())
}

pub fn select_scatter(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int("dim")?, t.ndim())?;
    let n = t.shape()[dim] as i64;
    let i = cx.int("index")?;
    let i = if i < 0 { i + n } else { i } as usize;
    let pos = view_positions(t, |x| Ok(Tensor::from_data(each_map!(x.data(), a => a.index_axis(ndarray::Axis(dim), i).to_owned()))))?;
    one(view_scatter(t, cx.tensor("src")?, pos)?)
}

pub fn slice_scatter(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dim = wrap_dim(cx.int_or("dim", 0)?, t.ndim())?;
    let n = t.shape()[dim] as i64;
    let step = cx.int_or("step", 1)?.max(1) as usize;
    let clamp = |v: i64| (if v < 0 { v + n } else { v }).clamp(0, n) as usize;
    let start = clamp(cx.opt_int("start")?.unwrap_or(0));
    let end = clamp(cx.opt_int("end")?.unwrap_or(n));
    let pos = view_positions(t, |x| Ok(super::shape::slice_tensor(x, dim, start, end, step)))?;
    one(view_scatter(t, cx.tensor("src")?, pos)?)
}

pub fn diagonal_scatter(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let (d1, d2) = (wrap_dim(cx.int_or("dim1", 0)?, t.ndim())?, wrap_dim(cx.int_or("dim2", 1)?, t.ndim())?);
    let offset = cx.int_or("offset", 0)?;
    let ids: Vec<i64> = (0..t.numel() as i64).collect();
    let it = Tensor::from_vec(t.shape(), ids).ok_or_else(|| OpError::Shape("view".into()))?;
    let pos = super::layout::diagonal_of(&it, offset, d1, d2)?.to_i64_vec().into_iter().map(|i| i as usize).collect();
    one(view_scatter(t, cx.tensor("src")?, pos)?)
}

/// `put(self, index, source, accumulate)`: `self.flatten()[index] = source` (or `+=`), the
/// last write winning among duplicates as in PyTorch's CPU loop.
pub fn put(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let source = cx.tensor("source")?;
    let iv = index_values(cx.tensor("index")?, t.numel(), "put")?;
    if iv.len() != source.numel() {
        return shape_err(format!("put: {} indices but {} source elements", iv.len(), source.numel()));
    }
    let pairs: Pairs = iv.into_iter().enumerate().map(|(k, d)| (d, k)).collect();
    if cx.bool_or("accumulate", false)? {
        one(reduce_into(t, source, &pairs, "sum", true)?)
    } else {
        one(assign(t, source, &pairs)?)
    }
}

/// `as_strided_scatter(self, src, size, stride, storage_offset)`: `src` written over the
/// `as_strided` view of (contiguous) `self`.
pub fn as_strided_scatter(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let src = cx.tensor("src")?;
    let size: Vec<usize> = cx.ints("size")?.into_iter().map(|s| s.max(0) as usize).collect();
    let stride = cx.ints("stride")?;
    let off = cx.int_or("storage_offset", 0)?;
    if src.shape() != size.as_slice() || stride.len() != size.len() {
        return shape_err(format!("as_strided_scatter: src {:?} for a view of size {size:?}, stride {stride:?}", src.shape()));
    }
    let n = t.numel() as i64;
    let mut pairs = Pairs::new();
    for (k, idx) in coords(&size).enumerate() {
        let p = off + idx.iter().zip(&stride).map(|(&i, &s)| i as i64 * s).sum::<i64>();
        if p < 0 || p >= n {
            return shape_err("as_strided_scatter: the view reaches past self's storage");
        }
        pairs.push((p as usize, k));
    }
    one(assign(t, src, &pairs)?)
}
