//! Ops that move elements without computing: padding, flips, rolls, repeats, triangles,
//! diagonals, broadcasting helpers, and the `new_*` / `empty` factories. Most are one
//! [`remap`]: each output element reads one input element (or a fill value), whatever the dtype.
//!
//! Dim moves, broadcasting and stacking live in `layout_view`, the factories in `layout_create`;
//! both are re-exported here, so the op registry keeps naming them `layout::…`.

use ndarray::{ArrayD, Dimension, IxDyn};

use super::shape::{filled, shape_of, transpose_tensor};
use super::{dtype_ok, one, shape_err, wrap_dim, OpCx, OpError, OpResult, Scalar};
use crate::exec::tensor::{each_map, Element, Tensor};
use crate::exec::value::RtValue;
use crate::ir::DType;

pub use super::layout_view::{
    atleast_1d, atleast_2d, atleast_3d, broadcast_tensors, broadcast_to, column_stack, dstack, expand_as, hstack,
    meshgrid, movedim, mt, narrow, numpy_t, ravel, repeat_interleave, repeat_interleave_tensor, unbind, unfold, view_as,
    vstack,
};
pub use super::layout_create::{
    empty, empty_like, eye, fill, linspace, logspace, new_empty, new_full, new_ones, new_zeros, scalar_tensor,
    tril_indices, triu_indices, zero,
};

/// Row-major strides of `shape`.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// A tensor of `out_shape` whose element at `idx` is `t`'s element at flat index `src(idx)`, or
/// `fill` where `src` gives `None`.
pub(crate) fn remap(t: &Tensor, out_shape: &[usize], fill: f64, src: impl Fn(&[usize]) -> Option<usize>) -> Tensor {
    Tensor::from_data(each_map!(t.data(), a => {
        let flat = a.as_slice().expect("tensors are kept in standard layout");
        ArrayD::from_shape_fn(IxDyn(out_shape), |idx| match src(idx.slice()) {
            Some(k) => flat[k],
            None => Element::from_f64(fill),
        })
    }))
}

/// Flat index of `idx` under `strides`.
fn flat(idx: &[usize], strides: &[usize]) -> usize {
    idx.iter().zip(strides).map(|(i, s)| i * s).sum()
}

/// `F.pad` / `constant_pad_nd`: `pad` holds (before, after) pairs from the last dim backwards;
/// negative amounts crop. Circular padding wraps around what is left after cropping (PyTorch
/// copies the cropped input into place first, then the wrapped borders from it).
fn pad_impl(t: &Tensor, pad: &[i64], mode: &str, value: f64) -> OpResult<Tensor> {
    if !pad.len().is_multiple_of(2) || pad.len() / 2 > t.ndim() {
        return shape_err(format!("pad {pad:?} does not fit a tensor of rank {}", t.ndim()));
    }
    let nd = t.ndim();
    let (mut lo, mut hi) = (vec![0i64; nd], vec![0i64; nd]);
    let mut out = t.shape().iter().map(|&s| s as i64).collect::<Vec<_>>();
    for (k, pair) in pad.chunks(2).enumerate() {
        let d = nd - 1 - k;
        (lo[d], hi[d]) = (pair[0], pair[1]);
        out[d] += pair[0] + pair[1];
        if out[d] < 0 {
            return shape_err(format!("pad {pad:?} leaves dim {d} of {:?} negative", t.shape()));
        }
        let n = t.shape()[d] as i64;
        if mode == "reflect" && (pair[0] >= n || pair[1] >= n) {
            return shape_err(format!("reflect padding {pair:?} must be smaller than dim {d}'s size {n}"));
        }
        if mode != "constant" && n == 0 && (pair[0] > 0 || pair[1] > 0) {
            return shape_err(format!("{mode} padding of an empty dim {d}"));
        }
    }
    let shape: Vec<usize> = out.iter().map(|&s| s as usize).collect();
    let st = strides(t.shape());
    let in_shape = t.shape().to_vec();
    let mode = mode.to_string();
    Ok(remap(t, &shape, value, |idx| {
        let mut k = 0;
        for d in 0..nd {
            let n = in_shape[d] as i64;
            let mut i = idx[d] as i64 - lo[d];
            match mode.as_str() {
                "constant" => {
                    if i < 0 || i >= n {
                        return None;
                    }
                }
                "reflect" => {
                    if i < 0 {
                        i = -i;
                    }
                    if i >= n {
                        i = 2 * (n - 1) - i;
                    }
                }
                "replicate" => i = i.clamp(0, n - 1),
                _ => {
                    // The kept part of the input starts at `-lo` (when cropped) and is `kept` long.
                    let start = (-lo[d]).max(0);
                    let kept = n - start - (-hi[d]).max(0);
                    i = start + (idx[d] as i64 - lo[d].max(0)).rem_euclid(kept.max(1));
                }
            }
            k += i as usize * st[d];
        }
        Some(k)
    }))
}

pub fn pad(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let mode = cx.str_or("mode", "constant")?;
    if !["constant", "reflect", "replicate", "circular"].contains(&mode) {
        return Err(OpError::Arg { arg: "mode".into(), message: format!("unknown padding mode `{mode}`") });
    }
    one(pad_impl(t, &cx.ints("pad")?, mode, cx.float_or("value", 0.0)?)?)
}

pub fn constant_pad_nd(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(pad_impl(cx.tensor("self")?, &cx.ints("pad")?, "constant", cx.float_or("value", 0.0)?)?)
}

fn flip_impl(t: &Tensor, dims: &[usize]) -> Tensor {
    let shape = t.shape().to_vec();
    let st = strides(&shape);
    remap(t, &shape, 0.0, |idx| {
        Some(idx.iter().enumerate().map(|(d, &i)| if dims.contains(&d) { shape[d] - 1 - i } else { i } * st[d]).sum())
    })
}

pub(super) fn dims_arg(cx: &OpCx, name: &str, nd: usize) -> OpResult<Vec<usize>> {
    cx.ints(name)?.iter().map(|&d| wrap_dim(d, nd)).collect()
}

pub fn flip(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dims = dims_arg(cx, "dims", t.ndim())?;
    one(flip_impl(t, &dims))
}

pub fn fliplr(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.ndim() < 2 {
        return shape_err("fliplr needs at least 2 dims");
    }
    one(flip_impl(t, &[1]))
}

pub fn flipud(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.ndim() < 1 {
        return shape_err("flipud needs at least 1 dim");
    }
    one(flip_impl(t, &[0]))
}

pub fn roll(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let shifts = cx.ints("shifts")?;
    let dims = cx.ints_or("dims", &[])?;
    if dims.is_empty() {
        let flat_t = t.reshape(&[t.numel()]).ok_or_else(|| OpError::Shape("roll".into()))?;
        let n = t.numel() as i64;
        let s = shifts.first().copied().unwrap_or(0);
        let r = remap(&flat_t, &[t.numel()], 0.0, |i| Some((i[0] as i64 - s).rem_euclid(n.max(1)) as usize));
        return one(r.reshape(t.shape()).ok_or_else(|| OpError::Shape("roll".into()))?);
    }
    if dims.len() != shifts.len() {
        return shape_err(format!("roll: {} shifts for {} dims", shifts.len(), dims.len()));
    }
    let shape = t.shape().to_vec();
    let st = strides(&shape);
    let mut by_dim = vec![0i64; shape.len()];
    for (&d, &s) in dims.iter().zip(&shifts) {
        by_dim[wrap_dim(d, shape.len())?] += s;
    }
    one(remap(t, &shape, 0.0, |idx| {
        Some(idx.iter().enumerate().map(|(d, &i)| (i as i64 - by_dim[d]).rem_euclid(shape[d].max(1) as i64) as usize * st[d]).sum())
    }))
}

pub fn rot90(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let k = cx.int_or("k", 1)?.rem_euclid(4);
    let dims = cx.ints_or("dims", &[0, 1])?;
    let (d0, d1) = (wrap_dim(dims[0], t.ndim())?, wrap_dim(dims[1], t.ndim())?);
    one(match k {
        0 => t.clone(),
        1 => transpose_tensor(&flip_impl(t, &[d1]), d0, d1)?,
        2 => flip_impl(t, &[d0, d1]),
        _ => flip_impl(&transpose_tensor(t, d0, d1)?, &[d1]),
    })
}

/// `repeat(sizes)`: tiles the tensor; extra leading sizes add dims.
fn repeat_impl(t: &Tensor, reps: &[i64]) -> OpResult<Tensor> {
    if reps.len() < t.ndim() || reps.iter().any(|&r| r < 0) {
        return shape_err(format!("repeat {reps:?} of a tensor of rank {}", t.ndim()));
    }
    let pad = reps.len() - t.ndim();
    let in_shape: Vec<usize> = std::iter::repeat_n(1, pad).chain(t.shape().iter().copied()).collect();
    let out: Vec<usize> = in_shape.iter().zip(reps).map(|(&s, &r)| s * r as usize).collect();
    let st = strides(&in_shape);
    Ok(remap(t, &out, 0.0, |idx| Some(idx.iter().enumerate().map(|(d, &i)| (i % in_shape[d]) * st[d]).sum())))
}

pub fn repeat(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(repeat_impl(cx.tensor("self")?, &cx.ints("repeats")?)?)
}

pub fn tile(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let mut reps = cx.ints("dims")?;
    while reps.len() < t.ndim() {
        reps.insert(0, 1);
    }
    one(repeat_impl(t, &reps)?)
}

fn triangle(cx: &OpCx, upper: bool) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let k = cx.int_or("diagonal", 0)?;
    let nd = t.ndim();
    if nd < 2 {
        return shape_err("tril/triu need at least 2 dims");
    }
    let shape = t.shape().to_vec();
    let st = strides(&shape);
    one(remap(t, &shape, 0.0, |idx| {
        let (r, c) = (idx[nd - 2] as i64, idx[nd - 1] as i64);
        let keep = if upper { c - r >= k } else { c - r <= k };
        keep.then(|| flat(idx, &st))
    }))
}

pub fn tril(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    triangle(cx, false)
}

pub fn triu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    triangle(cx, true)
}

/// `diagonal(offset, dim1, dim2)`: the diagonal becomes the last dim.
pub(crate) fn diagonal_of(t: &Tensor, offset: i64, d1: usize, d2: usize) -> OpResult<Tensor> {
    let shape = t.shape().to_vec();
    let (n1, n2) = (shape[d1] as i64, shape[d2] as i64);
    let len = if offset >= 0 { n1.min(n2 - offset) } else { (n1 + offset).min(n2) }.max(0) as usize;
    let mut out: Vec<usize> = (0..shape.len()).filter(|&d| d != d1 && d != d2).map(|d| shape[d]).collect();
    out.push(len);
    let st = strides(&shape);
    let others: Vec<usize> = (0..shape.len()).filter(|&d| d != d1 && d != d2).collect();
    Ok(remap(t, &out, 0.0, |idx| {
        let i = idx[idx.len() - 1] as i64;
        let (r, c) = if offset >= 0 { (i, i + offset) } else { (i - offset, i) };
        let mut k = r as usize * st[d1] + c as usize * st[d2];
        for (j, &d) in others.iter().enumerate() {
            k += idx[j] * st[d];
        }
        Some(k)
    }))
}

pub fn diagonal(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let (d1, d2) = (wrap_dim(cx.int_or("dim1", 0)?, t.ndim())?, wrap_dim(cx.int_or("dim2", 1)?, t.ndim())?);
    one(diagonal_of(t, cx.int_or("offset", 0)?, d1, d2)?)
}

pub fn linalg_diagonal(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("A")?;
    let (d1, d2) = (wrap_dim(cx.int_or("dim1", -2)?, t.ndim())?, wrap_dim(cx.int_or("dim2", -1)?, t.ndim())?);
    one(diagonal_of(t, cx.int_or("offset", 0)?, d1, d2)?)
}

/// `diag`: a 1-D input becomes a square matrix, a 2-D input gives its diagonal.
pub fn diag(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let k = cx.int_or("diagonal", 0)?;
    match t.ndim() {
        1 => one(embed_diag(t, k, 0, 1)?),
        2 => one(diagonal_of(t, k, 0, 1)?),
        n => shape_err(format!("diag of a tensor of rank {n}")),
    }
}

/// The last dim of `t` placed on the `offset` diagonal of new dims `d1`, `d2`.
fn embed_diag(t: &Tensor, offset: i64, d1: usize, d2: usize) -> OpResult<Tensor> {
    let n = t.shape().last().copied().unwrap_or(1);
    let m = n + offset.unsigned_abs() as usize;
    let batch = &t.shape()[..t.ndim().saturating_sub(1)];
    let rank = batch.len() + 2;
    let mut out = Vec::with_capacity(rank);
    let mut b = batch.iter();
    for d in 0..rank {
        out.push(if d == d1 || d == d2 { m } else { *b.next().unwrap_or(&1) });
    }
    let st = strides(t.shape());
    Ok(remap(t, &out, 0.0, |idx| {
        let (r, c) = (idx[d1] as i64, idx[d2] as i64);
        if c - r != offset {
            return None;
        }
        let i = if offset >= 0 { r } else { c } as usize;
        let mut k = i * st.last().copied().unwrap_or(1);
        let mut j = 0;
        for (d, &x) in idx.iter().enumerate() {
            if d != d1 && d != d2 {
                k += x * st[j];
                j += 1;
            }
        }
        Some(k)
    }))
}

pub fn diag_embed(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let rank = t.ndim() + 1;
    let (d1, d2) = (wrap_dim(cx.int_or("dim1", -2)?, rank)?, wrap_dim(cx.int_or("dim2", -1)?, rank)?);
    one(embed_diag(t, cx.int_or("offset", 0)?, d1.min(d2), d1.max(d2))?)
}

pub fn diagflat(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let f = t.reshape(&[t.numel()]).ok_or_else(|| OpError::Shape("diagflat".into()))?;
    one(embed_diag(&f, cx.int_or("offset", 0)?, 0, 1)?)
}

/// `channel_shuffle(groups)`: channels (dim 1) regrouped as `[g, c/g] -> [c/g, g]`.
pub fn channel_shuffle(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let g = cx.int("groups")?.max(1) as usize;
    let shape = t.shape().to_vec();
    let c = shape[1];
    let per = c / g;
    let st = strides(&shape);
    one(remap(t, &shape, 0.0, |idx| {
        let oc = idx[1];
        let ic = (oc % g) * per + oc / g;
        Some(idx.iter().enumerate().map(|(d, &i)| if d == 1 { ic } else { i } * st[d]).sum())
    }))
}

/// `pixel_shuffle(r)`: `[.., C·r², H, W] -> [.., C, H·r, W·r]`, and its inverse.
pub fn pixel_shuffle(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let r = cx.int("upscale_factor")?.max(1) as usize;
    let s = t.shape().to_vec();
    let nd = s.len();
    let (c, h, w) = (s[nd - 3] / (r * r), s[nd - 2], s[nd - 1]);
    let mut out = s[..nd - 3].to_vec();
    out.extend([c, h * r, w * r]);
    let st = strides(&s);
    one(remap(t, &out, 0.0, |idx| {
        let (oc, oh, ow) = (idx[nd - 3], idx[nd - 2], idx[nd - 1]);
        let ic = oc * r * r + (oh % r) * r + ow % r;
        let mut k = ic * st[nd - 3] + (oh / r) * st[nd - 2] + (ow / r) * st[nd - 1];
        for d in 0..nd - 3 {
            k += idx[d] * st[d];
        }
        Some(k)
    }))
}

pub fn pixel_unshuffle(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let r = cx.int("downscale_factor")?.max(1) as usize;
    let s = t.shape().to_vec();
    let nd = s.len();
    let (c, h, w) = (s[nd - 3], s[nd - 2] / r, s[nd - 1] / r);
    let mut out = s[..nd - 3].to_vec();
    out.extend([c * r * r, h, w]);
    let st = strides(&s);
    one(remap(t, &out, 0.0, |idx| {
        let (oc, oh, ow) = (idx[nd - 3], idx[nd - 2], idx[nd - 1]);
        let (ic, dy, dx) = (oc / (r * r), (oc / r) % r, oc % r);
        let mut k = ic * st[nd - 3] + (oh * r + dy) * st[nd - 2] + (ow * r + dx) * st[nd - 1];
        for d in 0..nd - 3 {
            k += idx[d] * st[d];
        }
        Some(k)
    }))
}

/// `as_strided(size, stride, storage_offset)` over the contiguous copy of `self`.
pub fn as_strided(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let size = shape_of(cx, "size")?;
    let stride = cx.ints("stride")?;
    let off = cx.int_or("storage_offset", 0)?;
    let n = t.numel();
    let bad = std::cell::Cell::new(false);
    let r = remap(t, &size, 0.0, |idx| {
        let k = off + idx.iter().zip(&stride).map(|(&i, &s)| i as i64 * s).sum::<i64>();
        if k < 0 || k as usize >= n {
            bad.set(true);
            return None;
        }
        Some(k as usize)
    });
    if bad.get() {
        return shape_err("as_strided reads past the tensor's storage");
    }
    one(r)
}

/// `reflection_pad{1,2,3}d` / `replication_pad{1,2,3}d(self, padding)`: Core ATen's spelling of
/// `pad` in those modes.
pub fn reflection_pad(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(pad_impl(cx.tensor("self")?, &cx.ints("padding")?, "reflect", 0.0)?)
}

pub fn replication_pad(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(pad_impl(cx.tensor("self")?, &cx.ints("padding")?, "replicate", 0.0)?)
}

/// `copy(self, src)`: `src` broadcast to `self`'s shape in `self`'s dtype.
pub fn copy(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let src = cx.tensor("src")?;
    let b = super::shape::expand_tensor(src, &t.shape().iter().map(|&s| s as i64).collect::<Vec<_>>())?;
    one(dtype_ok(b.cast(t.dtype()))?)
}

pub fn empty_strided(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(filled(cx.opt_dtype("dtype")?.unwrap_or(DType::F32), &shape_of(cx, "size")?, Scalar::Int(0))?)
}
