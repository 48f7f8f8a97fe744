//! Indexing by mask: `masked_select`, `masked_scatter`, `nonzero`/`nonzero_static`/`argwhere`, and
//! the `_unsafe_masked_index*` ops the decompositions emit. Apart from `index` because their
//! positions come from a bool mask instead of an index tensor; re-exported from `index`.

use super::index::{advanced, assign, coords, optional_tensors, reduce_into, Pairs};
use super::layout::{remap, strides};
use super::pointwise::broadcast_shapes;
use super::shape::expand_tensor;
use super::{dtype_ok, one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::{each_map, Element, Tensor};
use crate::exec::value::RtValue;

pub fn masked_select(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let m = cx.tensor("mask")?;
    let shape = broadcast_shapes(&[t.shape(), m.shape()])?;
    let sizes: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
    let (tb, mb) = (expand_tensor(t, &sizes)?, expand_tensor(m, &sizes)?);
    let keep: Vec<usize> = mb.to_i64_vec().iter().enumerate().filter(|(_, &v)| v != 0).map(|(i, _)| i).collect();
    one(remap(&tb, &[keep.len()], 0.0, |i| Some(keep[i[0]])))
}

/// `masked_scatter(self, mask, source)`: `self` and `mask` broadcast together (the output has
/// their common shape); the source's elements fill the set positions in row-major order.
pub fn masked_scatter(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (t, m) = (cx.tensor("self")?, cx.tensor("mask")?);
    let shape: Vec<i64> = super::pointwise::broadcast_shapes(&[t.shape(), m.shape()])?.iter().map(|&s| s as i64).collect();
    let (t, m) = (&expand_tensor(t, &shape)?, expand_tensor(m, &shape)?);
    let src = cx.tensor("source")?;
    let pairs: Vec<(usize, usize)> =
        m.to_i64_vec().iter().enumerate().filter(|(_, &v)| v != 0).map(|(i, _)| i).enumerate().map(|(k, d)| (d, k)).collect();
    if pairs.len() > src.numel() {
        return shape_err("masked_scatter: source has fewer elements than the mask selects");
    }
    one(assign(t, src, &pairs)?)
}

fn nonzero_coords(t: &Tensor) -> Vec<Vec<usize>> {
    let v = t.to_f64_vec();
    coords(t.shape()).zip(v).filter(|(_, x)| *x != 0.0).map(|(c, _)| c).collect()
}

pub fn nonzero(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let nz = nonzero_coords(t);
    let flat: Vec<i64> = nz.iter().flat_map(|c| c.iter().map(|&i| i as i64)).collect();
    one(Tensor::from_vec(&[nz.len(), t.ndim()], flat).ok_or_else(|| OpError::Shape("nonzero".into()))?)
}

/// `nonzero_numpy(self)`: the coordinates of the nonzero elements, one 1-D tensor per dim (a
/// 0-dim input counts as 1-D, as PyTorch unsqueezes it).
pub fn nonzero_numpy(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let nz = nonzero_coords(t);
    let per_dim = |d: usize| -> Vec<i64> { nz.iter().map(|c| c.get(d).copied().unwrap_or(0) as i64).collect() };
    super::shape::many(
        (0..t.ndim().max(1))
            .map(|d| Tensor::from_vec(&[nz.len()], per_dim(d)).ok_or_else(|| OpError::Shape("nonzero_numpy".into())))
            .collect::<OpResult<_>>()?,
    )
}

pub fn nonzero_static(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let size = cx.int("size")?.max(0) as usize;
    let fill = cx.int_or("fill_value", -1)?;
    let nz = nonzero_coords(t);
    let mut flat = Vec::with_capacity(size * t.ndim());
    for k in 0..size {
        match nz.get(k) {
            Some(c) => flat.extend(c.iter().map(|&i| i as i64)),
            None => flat.extend(std::iter::repeat_n(fill, t.ndim())),
        }
    }
    one(Tensor::from_vec(&[size, t.ndim()], flat).ok_or_else(|| OpError::Shape("nonzero_static".into()))?)
}
/// `argwhere`: the same as `nonzero`.
pub fn argwhere(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    nonzero(cx)
}
/// Index tensors clamped into `lo..n` per dim (`lo` is 0 or `-n`), as the decompositions of
/// the `_unsafe_masked_index*` ops clamp indices whose positions the mask turns off.
fn clamped_indices(t: &Tensor, indices: &[Option<&Tensor>], wrap_negative: bool) -> OpResult<Vec<Option<Tensor>>> {
    indices
        .iter()
        .enumerate()
        .map(|(d, ix)| {
            let Some(ix) = ix else { return Ok(None) };
            let n = *t.shape().get(d).ok_or_else(|| OpError::Shape(format!("index for dim {d} of a rank-{} tensor", t.ndim())))? as i64;
            let lo = if wrap_negative { -n } else { 0 };
            let v: Vec<i64> = ix.to_i64_vec().into_iter().map(|i| i.max(lo).min(n - 1)).collect();
            Tensor::from_vec(ix.shape(), v).map(Some).ok_or_else(|| OpError::Shape("index".into()))
        })
        .collect()
}

/// `t` with the elements where `keep` is false replaced by `fill`.
fn fill_where_not(t: &Tensor, keep: &[bool], fill: f64) -> Tensor {
    Tensor::from_data(each_map!(t.data(), a => {
        let mut out = a.clone();
        for (o, &k) in out.iter_mut().zip(keep) {
            if !k {
                *o = Element::from_f64(fill);
            }
        }
        out
    }))
}

fn mask_as(mask: &Tensor, shape: &[usize]) -> OpResult<Vec<bool>> {
    Ok(expand_tensor(mask, &shape.iter().map(|&s| s as i64).collect::<Vec<_>>())?.to_i64_vec().into_iter().map(|m| m != 0).collect())
}

/// `_unsafe_masked_index(self, mask, indices, fill)`: `self[indices]` where `mask` holds,
/// `fill` elsewhere; indices clamped into `0..n` first.
pub fn unsafe_masked_index(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let mask = cx.tensor("mask")?;
    let fill = cx.float_or("fill", 0.0)?;
    let indices = optional_tensors(cx, "indices")?;
    if t.numel() == 0 {
        let mut shapes: Vec<&[usize]> = indices.iter().flatten().map(|i| i.shape()).collect();
        shapes.push(mask.shape());
        return one(dtype_ok(Tensor::full(t.dtype(), &broadcast_shapes(&shapes)?, fill))?);
    }
    let clamped = clamped_indices(t, &indices, false)?;
    let (shape, src) = advanced(t, &clamped.iter().map(Option::as_ref).collect::<Vec<_>>())?;
    let st = strides(&shape);
    let x = remap(t, &shape, 0.0, |idx| Some(src[idx.iter().zip(&st).map(|(i, s)| i * s).sum::<usize>()]));
    one(fill_where_not(&x, &mask_as(mask, &shape)?, fill))
}

/// `_unsafe_masked_index_put_accumulate(self, mask, indices, values)`: `self[indices] +=
/// values` where `mask` holds; indices clamped into `-n..n` first.
pub fn unsafe_masked_index_put_accumulate(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.numel() == 0 {
        return one(t.clone());
    }
    let indices = optional_tensors(cx, "indices")?;
    let clamped = clamped_indices(t, &indices, true)?;
    let (shape, dst) = advanced(t, &clamped.iter().map(Option::as_ref).collect::<Vec<_>>())?;
    let values = expand_tensor(cx.tensor("values")?, &shape.iter().map(|&s| s as i64).collect::<Vec<_>>())?;
    let values = fill_where_not(&values, &mask_as(cx.tensor("mask")?, &shape)?, 0.0);
    let pairs: Pairs = dst.into_iter().enumerate().map(|(k, d)| (d, k)).collect();
    one(reduce_into(t, &values, &pairs, "sum", true)?)
}
