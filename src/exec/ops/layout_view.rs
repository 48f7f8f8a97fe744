//! Ops that re-view or restack their inputs by shape bookkeeping (permutes, narrows, broadcasts,
//! concatenation) rather than one [`remap`](super::layout::remap): `movedim`, `.mT`, `narrow`,
//! `unbind`, `broadcast_*`, `meshgrid`, `expand_as`, `view_as`, `ravel`, `atleast_*d`,
//! `hstack`/`vstack`/`dstack`/`column_stack`, `repeat_interleave` and `unfold`. Apart from
//! `layout` by that concern; re-exported from `layout`.

use super::layout::{dims_arg, remap, strides};
use super::shape::{concat, many, permute_tensor, transpose_tensor};
use super::{one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;

/// `movedim(source, destination)`.
pub fn movedim(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let nd = t.ndim();
    let src = dims_arg(cx, "source", nd)?;
    let dst = dims_arg(cx, "destination", nd)?;
    // A 0-dim tensor takes dims 0 and -1 (`wrap_dim`) and moves nothing.
    if nd == 0 {
        return one(t.clone());
    }
    let mut perm = vec![usize::MAX; nd];
    for (&s, &d) in src.iter().zip(&dst) {
        perm[d] = s;
    }
    let mut rest = (0..nd).filter(|d| !src.contains(d));
    for p in perm.iter_mut().filter(|p| **p == usize::MAX) {
        *p = rest.next().unwrap_or(0);
    }
    one(permute_tensor(t, &perm)?)
}

/// `.mT` / `.mH` (real: the same): the last two dims swapped.
pub fn mt(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.ndim() < 2 {
        return shape_err("mT needs at least 2 dims");
    }
    one(transpose_tensor(t, t.ndim() - 2, t.ndim() - 1)?)
}

/// `.T` (`numpy_T`): every dim reversed.
pub fn numpy_t(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let perm: Vec<usize> = (0..t.ndim()).rev().collect();
    one(permute_tensor(t, &perm)?)
}

pub fn narrow(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let d = wrap_dim(cx.int("dim")?, t.ndim())?;
    let n = t.shape()[d] as i64;
    let start = cx.int("start")?;
    let start = if start < 0 { start + n } else { start };
    let len = cx.int("length")?;
    if start < 0 || len < 0 || start + len > n {
        return shape_err(format!("narrow({start}, {len}) out of range for size {n}"));
    }
    one(super::shape::slice_tensor(t, d, start as usize, (start + len) as usize, 1))
}

pub fn unbind(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let d = wrap_dim(cx.int_or("dim", 0)?, t.ndim())?;
    let mut out_shape = t.shape().to_vec();
    out_shape.remove(d);
    let pieces = (0..t.shape()[d])
        .map(|i| {
            super::shape::slice_tensor(t, d, i, i + 1, 1).reshape(&out_shape).ok_or_else(|| OpError::Shape("unbind".into()))
        })
        .collect::<OpResult<Vec<_>>>()?;
    many(pieces)
}

pub fn broadcast_to(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(super::shape::expand_tensor(cx.tensor("self")?, &cx.ints("size")?)?)
}

pub fn broadcast_tensors(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let ts = cx.tensors("tensors")?;
    let shapes: Vec<&[usize]> = ts.iter().map(|t| t.shape()).collect();
    let out = super::pointwise::broadcast_shapes(&shapes)?;
    let sizes: Vec<i64> = out.iter().map(|&s| s as i64).collect();
    many(ts.iter().map(|t| super::shape::expand_tensor(t, &sizes)).collect::<OpResult<_>>()?)
}

/// `meshgrid(tensors, indexing)`: 1-D tensors spread over a grid.
pub fn meshgrid(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let ts = cx.tensors("tensors")?;
    let ij = cx.str_or("indexing", "ij")? == "ij";
    let mut shape: Vec<usize> = ts.iter().map(|t| t.numel()).collect();
    if !ij && shape.len() >= 2 {
        shape.swap(0, 1);
    }
    let out = ts
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let d = if !ij && k < 2 && ts.len() >= 2 { 1 - k } else { k };
            remap(t, &shape, 0.0, |idx| Some(idx[d]))
        })
        .collect();
    many(out)
}

/// `expand_as`, `view_as`, `reshape_as`: the shape of `other`.
pub fn expand_as(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let sizes: Vec<i64> = cx.tensor("other")?.shape().iter().map(|&s| s as i64).collect();
    one(super::shape::expand_tensor(cx.tensor("self")?, &sizes)?)
}

pub fn view_as(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let shape = cx.tensor("other")?.shape().to_vec();
    one(cx.tensor("self")?.reshape(&shape).ok_or_else(|| OpError::Shape("view_as: element counts differ".into()))?)
}

pub fn ravel(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    one(t.reshape(&[t.numel()]).ok_or_else(|| OpError::Shape("ravel".into()))?)
}

/// `t` viewed with at least `n` dims, as `atleast_{n}d` lifts it.
fn lift(t: &Tensor, n: usize) -> OpResult<Tensor> {
    let s = t.shape();
    let shape: Vec<usize> = match (n, s.len()) {
        (_, k) if k >= n => s.to_vec(),
        (1, _) => vec![1],
        (2, 0) => vec![1, 1],
        (2, _) => vec![1, s[0]],
        (3, 0) => vec![1, 1, 1],
        (3, 1) => vec![1, s[0], 1],
        (_, _) => vec![s[0], s[1], 1],
    };
    t.reshape(&shape).ok_or_else(|| OpError::Shape("atleast".into()))
}

/// `atleast_{n}d(self)`, or its `.Sequence` overload: every tensor of `tensors` lifted.
fn atleast(cx: &OpCx, n: usize) -> OpResult<Vec<RtValue>> {
    if cx.arg("tensors").is_some() {
        return many(cx.tensors("tensors")?.into_iter().map(|t| lift(t, n)).collect::<OpResult<_>>()?);
    }
    one(lift(cx.tensor("self")?, n)?)
}

pub fn atleast_1d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    atleast(cx, 1)
}

pub fn atleast_2d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    atleast(cx, 2)
}

pub fn atleast_3d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    atleast(cx, 3)
}

fn stack_like(cx: &OpCx, rank: usize, dim: usize) -> OpResult<Vec<RtValue>> {
    let ts = super::shape::common_dtype(&cx.tensors("tensors")?)?;
    let lifted: Vec<Tensor> = ts
        .iter()
        .map(|t| {
            let s = t.shape();
            let shape: Vec<usize> = match (rank, s.len()) {
                (_, k) if k >= rank => s.to_vec(),
                (1, _) => vec![1],
                (2, 0) => vec![1, 1],
                (2, _) => vec![1, s[0]],
                (3, 0) => vec![1, 1, 1],
                (3, 1) => vec![1, s[0], 1],
                _ => vec![s[0], s[1], 1],
            };
            t.reshape(&shape).ok_or_else(|| OpError::Shape("stack".into()))
        })
        .collect::<OpResult<_>>()?;
    // hstack of 1-D tensors concatenates along dim 0.
    let d = if rank == 1 && lifted.iter().all(|t| t.ndim() == 1) { 0 } else { dim };
    one(concat(&lifted, d)?)
}

pub fn hstack(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    stack_like(cx, 1, 1)
}

pub fn vstack(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    stack_like(cx, 2, 0)
}

pub fn dstack(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    stack_like(cx, 3, 2)
}

pub fn column_stack(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let ts = super::shape::common_dtype(&cx.tensors("tensors")?)?;
    let cols: Vec<Tensor> = ts
        .iter()
        .map(|t| match t.ndim() {
            0 | 1 => t.reshape(&[t.numel(), 1]).ok_or_else(|| OpError::Shape("column_stack".into())),
            _ => Ok(t.clone()),
        })
        .collect::<OpResult<_>>()?;
    one(concat(&cols, 1)?)
}

/// `repeat_interleave(self, repeats: int, dim)`.
pub fn repeat_interleave(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let r = cx.int("repeats")?.max(0) as usize;
    let (t, d) = match cx.opt_int("dim")? {
        Some(d) => (t.clone(), wrap_dim(d, t.ndim())?),
        None => (t.reshape(&[t.numel()]).ok_or_else(|| OpError::Shape("repeat_interleave".into()))?, 0),
    };
    let mut shape = t.shape().to_vec();
    shape[d] *= r;
    let st = strides(t.shape());
    one(remap(&t, &shape, 0.0, |idx| {
        Some(idx.iter().enumerate().map(|(k, &i)| if k == d { i / r.max(1) } else { i } * st[k]).sum())
    }))
}

/// `repeat_interleave(self, repeats: Tensor, dim, output_size)`: element `i` along `dim` (of the
/// flattened tensor when `dim` is None) repeated `repeats[i]` times; a one-element `repeats`
/// applies to every element.
pub fn repeat_interleave_tensor(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let reps = cx.tensor("repeats")?.to_i64_vec();
    let (t, d) = match cx.opt_int("dim")? {
        Some(d) => (t.clone(), wrap_dim(d, t.ndim())?),
        None => (t.reshape(&[t.numel()]).ok_or_else(|| OpError::Shape("repeat_interleave".into()))?, 0),
    };
    let n = t.shape().get(d).copied().unwrap_or(1);
    let reps: Vec<i64> = if reps.len() == 1 { vec![reps[0]; n] } else { reps };
    if reps.len() != n {
        return Err(OpError::Arg { arg: "repeats".into(), message: format!("{} repeats for {n} elements along dim {d}", reps.len()) });
    }
    if let Some(&r) = reps.iter().find(|&&r| r < 0) {
        return Err(OpError::Arg { arg: "repeats".into(), message: format!("repeats must be non-negative, got {r}") });
    }
    // Source index of each output position along `dim`.
    let src: Vec<usize> = reps.iter().enumerate().flat_map(|(i, &r)| std::iter::repeat_n(i, r as usize)).collect();
    if let Some(want) = cx.opt_int("output_size")? {
        if want != src.len() as i64 {
            return Err(OpError::Arg { arg: "output_size".into(), message: format!("{want}, but the repeats sum to {}", src.len()) });
        }
    }
    let mut shape = t.shape().to_vec();
    shape[d] = src.len();
    let st = strides(t.shape());
    one(remap(&t, &shape, 0.0, |idx| Some(idx.iter().enumerate().map(|(k, &i)| if k == d { src[i] } else { i } * st[k]).sum())))
}

/// `unfold(dim, size, step)`: windows along `dim` become a new last dim.
pub fn unfold(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let nd = t.ndim();
    let d = wrap_dim(cx.int("dimension")?, nd)?;
    let (size, step) = (cx.int("size")? as usize, cx.int("step")?.max(1) as usize);
    let n = if nd == 0 { 1 } else { t.shape()[d] };
    if size > n {
        return shape_err(format!("unfold size {size} exceeds dim size {n}"));
    }
    let windows = (n - size) / step + 1;
    if nd == 0 {
        return one(t.reshape(&[size]).ok_or_else(|| OpError::Shape("unfold".into()))?);
    }
    let mut shape = t.shape().to_vec();
    shape[d] = windows;
    shape.push(size);
    let st = strides(t.shape());
    one(remap(t, &shape, 0.0, |idx| {
        let mut k = 0;
        for j in 0..nd {
            k += if j == d { idx[j] * step + idx[nd] } else { idx[j] } * st[j];
        }
        Some(k)
    }))
}
