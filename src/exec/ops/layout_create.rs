//! Factories: `new_*`, `empty*`, `fill`, `zero`, `scalar_tensor`, `eye`, `tril_indices`/
//! `triu_indices`, `linspace`/`logspace`. Apart from `layout` because they create tensors
//! instead of moving elements of one; re-exported from `layout`.

use ndarray::{ArrayD, IxDyn};

use super::shape::{filled, shape_of};
use super::{dtype_ok, one, OpCx, OpError, OpResult, Scalar};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// `new_zeros` / `new_ones` / `new_full` / `new_empty`: `self`'s dtype unless given.
fn new_filled(cx: &OpCx, v: Scalar) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    one(filled(cx.opt_dtype("dtype")?.unwrap_or(t.dtype()), &shape_of(cx, "size")?, v)?)
}

pub fn new_zeros(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    new_filled(cx, Scalar::Int(0))
}

pub fn new_ones(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    new_filled(cx, Scalar::Int(1))
}

pub fn new_full(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let v = cx.opt_scalar("fill_value")?.ok_or_else(|| OpError::Arg { arg: "fill_value".into(), message: "missing".into() })?;
    new_filled(cx, v)
}

/// Uninitialised memory in PyTorch; zeros here, so runs are reproducible.
pub fn empty(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(filled(cx.opt_dtype("dtype")?.unwrap_or(DType::F32), &shape_of(cx, "size")?, Scalar::Int(0))?)
}

pub fn new_empty(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    new_filled(cx, Scalar::Int(0))
}

pub fn empty_like(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    one(filled(cx.opt_dtype("dtype")?.unwrap_or(t.dtype()), t.shape(), Scalar::Int(0))?)
}

/// `fill(self, value)` and `zero_`: same shape and dtype, every element the value.
pub fn fill(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let v = match cx.arg("value") {
        Some(crate::ir::Arg::Tensor(_)) => Scalar::Float(cx.tensor("value")?.to_f64_vec().first().copied().unwrap_or(0.0)),
        _ => cx.scalar_or("value", Scalar::Int(0))?,
    };
    one(filled(t.dtype(), t.shape(), v)?)
}

pub fn zero(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    one(filled(t.dtype(), t.shape(), Scalar::Int(0))?)
}

pub fn scalar_tensor(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let s = cx.opt_scalar("s")?.ok_or_else(|| OpError::Arg { arg: "s".into(), message: "missing".into() })?;
    one(filled(cx.opt_dtype("dtype")?.unwrap_or(DType::F32), &[], s)?)
}

pub fn eye(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let n = cx.int("n")?.max(0) as usize;
    let m = cx.opt_int("m")?.map_or(n, |m| m.max(0) as usize);
    let t = Tensor::from_array(ArrayD::from_shape_fn(IxDyn(&[n, m]), |i| if i[0] == i[1] { 1.0f64 } else { 0.0 }));
    one(dtype_ok(t.cast(cx.opt_dtype("dtype")?.unwrap_or(DType::F32)))?)
}

/// `tril_indices(row, col, offset)` / `triu_indices`: the row and column of every cell of the
/// lower (`c - r <= offset`) or upper (`c - r >= offset`) triangle of a `row × col` matrix, in
/// row-major order, as a `[2, N]` tensor.
fn tri_indices(cx: &OpCx, lower: bool) -> OpResult<Vec<RtValue>> {
    let (row, col, offset) = (cx.int("row")?, cx.int("col")?, cx.int_or("offset", 0)?);
    if row < 0 || col < 0 {
        return Err(OpError::Arg { arg: "row".into(), message: format!("a {row} × {col} matrix") });
    }
    let cells: Vec<(i64, i64)> =
        (0..row).flat_map(|r| (0..col).map(move |c| (r, c))).filter(|&(r, c)| if lower { c - r <= offset } else { c - r >= offset }).collect();
    let v: Vec<i64> = cells.iter().map(|p| p.0).chain(cells.iter().map(|p| p.1)).collect();
    let t = Tensor::from_vec(&[2, cells.len()], v).ok_or_else(|| OpError::Shape("triangle indices".into()))?;
    one(dtype_ok(t.cast(cx.opt_dtype("dtype")?.unwrap_or(DType::I64)))?)
}

pub fn tril_indices(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    tri_indices(cx, true)
}

pub fn triu_indices(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    tri_indices(cx, false)
}

/// `linspace` / `logspace`: `steps` points from `start` to `end` (computed as PyTorch does: from
/// the start for the first half, from the end for the second).
fn spaced(cx: &OpCx, base: Option<f64>) -> OpResult<Vec<RtValue>> {
    let scalar_or_tensor = |n: &str| -> OpResult<f64> {
        match cx.arg(n) {
            Some(crate::ir::Arg::Tensor(_)) => Ok(cx.tensor(n)?.to_f64_vec().first().copied().unwrap_or(0.0)),
            _ => cx.opt_float(n)?.ok_or_else(|| OpError::Arg { arg: n.into(), message: "missing".into() }),
        }
    };
    let (a, b) = (scalar_or_tensor("start")?, scalar_or_tensor("end")?);
    let steps = cx.int("steps")?.max(0) as usize;
    let dtype = cx.opt_dtype("dtype")?.unwrap_or(DType::F32);
    let step = if steps > 1 { (b - a) / (steps - 1) as f64 } else { 0.0 };
    // A single point is `start` (PyTorch fills it rather than splitting the ramp).
    let half = if steps == 1 { 1 } else { steps / 2 };
    let v: Vec<f64> = (0..steps)
        .map(|i| {
            let x = if i < half { a + step * i as f64 } else { b - step * (steps - 1 - i) as f64 };
            match base {
                Some(base) => base.powf(x),
                None => x,
            }
        })
        .collect();
    let t = Tensor::from_vec(&[steps], v).ok_or_else(|| OpError::Shape("linspace".into()))?;
    if !dtype.is_floating() {
        let ti = Tensor::from_vec(&[steps], t.to_f64_vec().iter().map(|x| x.trunc() as i64).collect::<Vec<_>>()).ok_or_else(|| OpError::Shape("linspace".into()))?;
        return one(dtype_ok(ti.cast(dtype))?);
    }
    one(dtype_ok(t.cast(dtype))?)
}

pub fn linspace(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    spaced(cx, None)
}

pub fn logspace(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let base = cx.float_or("base", 10.0)?;
    spaced(cx, Some(base))
}
