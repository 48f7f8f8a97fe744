//! Set-like ops (`_unique2`, `unique_dim`, `unique_consecutive`) and a few memory-shaped ops
//! export leaves in graphs: `_chunk_cat`, `resize_`/`resize_as_`, and the backward helpers
//! `native_dropout_backward` and `_softmax_backward_data`.

use std::cmp::Ordering;

use super::fvec::{around, float_type, F};
use super::shape::many;
use super::{one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::{Arg, DType};

/// The slices of `f` along `dim`, each flattened in row-major order.
fn slices(f: &F, dim: usize) -> Vec<Vec<f64>> {
    let (outer, len, inner) = around(&f.shape, dim);
    (0..len).map(|i| (0..outer).flat_map(|o| (0..inner).map(move |k| (o * len + i) * inner + k)).map(|j| f.v[j]).collect()).collect()
}

/// Rebuilds a tensor from slices along `dim` (the inverse of [`slices`]).
fn from_slices(shape: &[usize], dim: usize, ss: &[Vec<f64>]) -> F {
    let mut shape = shape.to_vec();
    shape[dim] = ss.len();
    let (outer, len, inner) = around(&shape, dim);
    let mut v = vec![0.0; outer * len * inner];
    for (i, s) in ss.iter().enumerate() {
        for o in 0..outer {
            for k in 0..inner {
                v[(o * len + i) * inner + k] = s[o * inner + k];
            }
        }
    }
    F::new(shape, v)
}

fn cmp_slices(a: &[f64], b: &[f64]) -> Ordering {
    a.iter().zip(b).map(|(x, y)| x.total_cmp(y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
}

/// `(values, inverse, counts)` of the unique slices; `sorted` sorts them, `consecutive` only
/// merges runs of equal neighbours.
fn unique_slices(ss: Vec<Vec<f64>>, consecutive: bool) -> (Vec<Vec<f64>>, Vec<usize>, Vec<usize>) {
    let n = ss.len();
    let mut order: Vec<usize> = (0..n).collect();
    if !consecutive {
        order.sort_by(|&a, &b| cmp_slices(&ss[a], &ss[b]));
    }
    let (mut vals, mut inverse, mut counts): (Vec<Vec<f64>>, Vec<usize>, Vec<usize>) = (Vec::new(), vec![0; n], Vec::new());
    for &i in &order {
        match vals.last() {
            Some(last) if cmp_slices(last, &ss[i]).is_eq() => {
                let c = counts.len() - 1;
                counts[c] += 1;
            }
            _ => {
                vals.push(ss[i].clone());
                counts.push(1);
            }
        }
        inverse[i] = vals.len() - 1;
    }
    (vals, inverse, counts)
}

fn outputs(cx: &OpCx, values: F, dtype: DType, inverse: (Vec<usize>, Vec<usize>), counts: Vec<usize>) -> OpResult<Vec<RtValue>> {
    let (ret_inv, ret_cnt) = (cx.bool_or("return_inverse", false)?, cx.bool_or("return_counts", false)?);
    let longs = |shape: Vec<usize>, v: Vec<usize>| F::new(shape, v.into_iter().map(|x| x as f64).collect()).to(DType::I64);
    // An output not asked for is empty, and its dtype is the exporting PyTorch's choice (the
    // input's in 2.11, int64 in 2.15): the graph's metadata records which.
    let unasked = |i: usize| F::new(vec![0], vec![]).to(cx.out_dtype(i).unwrap_or(DType::I64));
    let inv = if ret_inv { longs(inverse.0, inverse.1)? } else { unasked(1)? };
    let n = counts.len();
    let cnt = if ret_cnt { longs(vec![n], counts)? } else { unasked(2)? };
    many(vec![values.to(dtype)?, inv, cnt])
}

/// `_unique2`: the distinct elements, sorted (CPU sorts whether or not `sorted` is set).
pub fn unique2(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let f = F::of(x);
    let ss: Vec<Vec<f64>> = f.v.iter().map(|&v| vec![v]).collect();
    let (vals, inv, counts) = unique_slices(ss, false);
    let n = vals.len();
    let values = F::new(vec![n], vals.into_iter().flatten().collect());
    outputs(cx, values, x.dtype(), (f.shape.clone(), inv), counts)
}

fn unique_along(cx: &OpCx, x: &Tensor, dim: Option<i64>, consecutive: bool) -> OpResult<Vec<RtValue>> {
    let f = F::of(x);
    match dim {
        None => {
            let ss: Vec<Vec<f64>> = f.v.iter().map(|&v| vec![v]).collect();
            let (vals, inv, counts) = unique_slices(ss, consecutive);
            let n = vals.len();
            outputs(cx, F::new(vec![n], vals.into_iter().flatten().collect()), x.dtype(), (f.shape.clone(), inv), counts)
        }
        Some(d) => {
            let d = wrap_dim(d, f.shape.len())?;
            if f.shape.is_empty() {
                return shape_err("unique along a dim of a 0-dim tensor");
            }
            if f.numel() == 0 {
                // Nothing to compare: PyTorch returns the (empty) input unchanged.
                let len = f.shape[d];
                return outputs(cx, f.clone(), x.dtype(), (vec![len], (0..len).collect()), vec![1; len]);
            }
            let ss = slices(&f, d);
            let len = ss.len();
            let (vals, inv, counts) = unique_slices(ss, consecutive);
            outputs(cx, from_slices(&f.shape, d, &vals), x.dtype(), (vec![len], inv), counts)
        }
    }
}

pub fn unique_dim(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unique_along(cx, cx.tensor("self")?, Some(cx.int("dim")?), false)
}

pub fn unique_consecutive(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unique_along(cx, cx.tensor("self")?, cx.opt_int("dim")?, true)
}

/// Each tensor split into `num_chunks` chunks along `dim` (the last padded with zeros), each
/// chunk flattened from `dim` on, and chunk `i` of every tensor concatenated into row `i`.
pub fn chunk_cat(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let ts = cx.tensors("tensors")?;
    let first = ts.first().ok_or_else(|| OpError::Shape("_chunk_cat of no tensors".into()))?;
    let dim = wrap_dim(cx.int("dim")?, first.ndim())?;
    let chunks = cx.int("num_chunks")?;
    if chunks <= 0 {
        return Err(OpError::Arg { arg: "num_chunks".into(), message: format!("must be positive, got {chunks}") });
    }
    let chunks = chunks as usize;
    let lead = &first.shape()[..dim];
    let mut rows: Vec<Vec<f64>> = vec![Vec::new(); lead.iter().product::<usize>() * chunks];
    for t in &ts {
        if t.ndim() <= dim || &t.shape()[..dim] != lead {
            return shape_err(format!("_chunk_cat: {:?} does not share the leading dims {lead:?}", t.shape()));
        }
        let f = F::of(t);
        let (outer, len, inner) = around(&f.shape, dim);
        let per = len.div_ceil(chunks);
        for o in 0..outer {
            for c in 0..chunks {
                let row = &mut rows[o * chunks + c];
                for i in c * per..(c + 1) * per {
                    for k in 0..inner {
                        row.push(if i < len { f.v[(o * len + i) * inner + k] } else { 0.0 });
                    }
                }
            }
        }
    }
    let width = rows.first().map_or(0, |r| r.len());
    let mut shape = lead.to_vec();
    shape.extend([chunks, width]);
    let dtype = super::fvec::promoted(&ts)?;
    one(F::new(shape, rows.concat()).to(dtype)?)
}

/// `resize_(size)` / `resize_as_(template)` (and their functional forms): the tensor keeps its
/// storage and reads it row-major under the new shape, so the first elements keep their values;
/// growth adds elements that PyTorch leaves uninitialised, which are zeros here as `empty`'s
/// are (OpInfo cases that grow are compared by shape and dtype only). A channels-last target
/// layout would reorder the storage: refused.
fn resize_to(cx: &OpCx, x: &Tensor, shape: &[usize]) -> OpResult<Vec<RtValue>> {
    match cx.arg("memory_format") {
        None | Some(Arg::None) => {}
        Some(Arg::MemoryFormat(f)) if f == "contiguous_format" || f == "preserve_format" => {}
        Some(other) => return Err(OpError::Arg { arg: "memory_format".into(), message: format!("{other:?}: only the row-major layout is modelled") }),
    }
    let n: usize = shape.iter().product();
    let data = crate::exec::tensor::each_map!(x.data(), a => {
        let mut v: Vec<_> = a.iter().copied().take(n).collect();
        v.resize(n, Default::default());
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), v).map_err(|e| OpError::Shape(e.to_string()))?
    });
    one(Tensor::from_data(data))
}

pub fn resize_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let size = cx.ints("size")?;
    if size.iter().any(|&s| s < 0) {
        return shape_err(format!("resize_ to {size:?}"));
    }
    resize_to(cx, cx.tensor("self")?, &size.iter().map(|&s| s as usize).collect::<Vec<_>>())
}

pub fn resize_as_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    resize_to(cx, cx.tensor("self")?, cx.tensor("the_template")?.shape())
}

/// `grad · mask · scale`.
pub fn native_dropout_backward(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (g, m) = (cx.tensor("grad_output")?, cx.tensor("mask")?);
    let scale = cx.float_or("scale", 1.0)?;
    let fs = super::fvec::broadcast_all(&[g, m])?;
    let v = fs[0].v.iter().zip(&fs[1].v).map(|(g, m)| g * m * scale).collect();
    one(F::new(fs[0].shape.clone(), v).to(float_type(&[g])?)?)
}

/// `y · (g - Σ_dim g·y)`, the gradient of softmax given its output `y`.
pub fn softmax_backward_data(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (g, y) = (cx.tensor("grad_output")?, cx.tensor("output")?);
    let (gf, yf) = (F::of(g), F::of(y));
    if gf.shape != yf.shape {
        return shape_err(format!("grad {:?} and output {:?} differ", gf.shape, yf.shape));
    }
    let d = wrap_dim(cx.int("dim")?, gf.shape.len())?;
    let (outer, len, inner) = if gf.shape.is_empty() { (1, 1, 1) } else { around(&gf.shape, d) };
    let mut v = vec![0.0; gf.v.len()];
    for o in 0..outer {
        for k in 0..inner {
            let at = |i: usize| (o * len + i) * inner + k;
            let s: f64 = (0..len).map(|i| gf.v[at(i)] * yf.v[at(i)]).sum();
            (0..len).for_each(|i| v[at(i)] = yf.v[at(i)] * (gf.v[at(i)] - s));
        }
    }
    // The gradient has the dtype of softmax's input (a half input whose softmax ran in float).
    let dtype = cx.opt_dtype("input_dtype")?.filter(|d| d.is_floating()).unwrap_or(g.dtype());
    one(F::new(gf.shape.clone(), v).to(dtype)?)
}
