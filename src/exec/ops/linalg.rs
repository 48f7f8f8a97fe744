//! Matrix products. Every product accumulates in `f64` and adds the bias before the single final
//! rounding, so the result is the exactly-rounded value up to the `f64` error of the sum.

use super::pointwise::broadcast_shapes;
use super::shape::{expand_tensor, transpose_tensor};
use super::{dtype_ok, one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// A float product's value before rounding: its shape and `f64` elements.
struct Wide {
    shape: Vec<usize>,
    data: Vec<f64>,
}

impl Wide {
    fn round(self, dtype: DType) -> OpResult<Tensor> {
        let t = Tensor::from_vec(&self.shape, self.data).ok_or_else(|| OpError::Shape("matmul result".into()))?;
        dtype_ok(t.cast(dtype))
    }
}

/// `out[m×n] = a[m×k] · b[k×n]`, row-major; `b` is read transposed for locality.
pub(crate) fn gemm(a: &[f64], b: &[f64], m: usize, k: usize, n: usize, out: &mut [f64]) {
    let mut bt = vec![0.0; k * n];
    for p in 0..k {
        for j in 0..n {
            bt[j * k + p] = b[p * n + j];
        }
    }
    for i in 0..m {
        let row = &a[i * k..(i + 1) * k];
        for j in 0..n {
            let col = &bt[j * k..(j + 1) * k];
            out[i * n + j] = row.iter().zip(col).map(|(x, y)| x * y).sum();
        }
    }
}

/// Operand dtypes must agree, as PyTorch's matmul family requires.
fn same_dtype(a: &Tensor, b: &Tensor) -> OpResult<DType> {
    if a.dtype() != b.dtype() {
        return shape_err(format!("expected both operands to have the same dtype, got {} and {}", a.dtype(), b.dtype()));
    }
    Ok(a.dtype())
}

/// `torch.matmul` semantics: 1-D operands are promoted to matrices and the added dim removed;
/// batch dims broadcast.
fn matmul_wide(a: &Tensor, b: &Tensor) -> OpResult<Wide> {
    let (ra, rb) = (a.ndim(), b.ndim());
    if ra == 0 || rb == 0 {
        return shape_err("matmul needs operands of at least one dim");
    }
    let a2 = if ra == 1 { a.reshape(&[1, a.shape()[0]]).unwrap_or_else(|| a.clone()) } else { a.clone() };
    let b2 = if rb == 1 { b.reshape(&[b.shape()[0], 1]).unwrap_or_else(|| b.clone()) } else { b.clone() };
    let (sa, sb) = (a2.shape(), b2.shape());
    let (m, k) = (sa[sa.len() - 2], sa[sa.len() - 1]);
    let (k2, n) = (sb[sb.len() - 2], sb[sb.len() - 1]);
    if k != k2 {
        return shape_err(format!("matmul: {:?} and {:?} cannot be multiplied ({k} ≠ {k2})", a.shape(), b.shape()));
    }
    let batch = broadcast_shapes(&[&sa[..sa.len() - 2], &sb[..sb.len() - 2]])?;
    let full = |t: &Tensor, r: usize, c: usize| -> OpResult<Vec<f64>> {
        let mut s: Vec<i64> = batch.iter().map(|&d| d as i64).collect();
        s.extend([r as i64, c as i64]);
        Ok(expand_tensor(t, &s)?.to_f64_vec())
    };
    let (x, y) = (full(&a2, m, k)?, full(&b2, k, n)?);
    let nb: usize = batch.iter().product();
    let mut data = vec![0.0; nb * m * n];
    for i in 0..nb {
        gemm(&x[i * m * k..(i + 1) * m * k], &y[i * k * n..(i + 1) * k * n], m, k, n, &mut data[i * m * n..(i + 1) * m * n]);
    }
    let mut shape = batch;
    if ra > 1 {
        shape.push(m);
    }
    if rb > 1 {
        shape.push(n);
    }
    Ok(Wide { shape, data })
}

pub fn matmul(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("other")?);
    let dt = same_dtype(a, b)?;
    one(matmul_wide(a, b)?.round(dt)?)
}

pub fn mm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("mat2")?);
    if a.ndim() != 2 || b.ndim() != 2 {
        return shape_err(format!("mm expects 2-D operands, got {:?} and {:?}", a.shape(), b.shape()));
    }
    let dt = same_dtype(a, b)?;
    one(matmul_wide(a, b)?.round(dt)?)
}

pub fn bmm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("mat2")?);
    if a.ndim() != 3 || b.ndim() != 3 || a.shape()[0] != b.shape()[0] {
        return shape_err(format!("bmm expects 3-D operands with equal batch, got {:?} and {:?}", a.shape(), b.shape()));
    }
    let dt = same_dtype(a, b)?;
    one(matmul_wide(a, b)?.round(dt)?)
}

/// `beta · bias + alpha · product`, broadcasting the bias to the product's shape, in `f64`.
fn add_bias(mut w: Wide, bias: Option<&Tensor>, beta: f64, alpha: f64) -> OpResult<Wide> {
    let Some(bias) = bias else { return Ok(w) };
    let target: Vec<i64> = w.shape.iter().map(|&d| d as i64).collect();
    let bv = expand_tensor(bias, &target)
        .map_err(|_| OpError::Shape(format!("bias {:?} does not broadcast to {:?}", bias.shape(), w.shape)))?
        .to_f64_vec();
    for (o, b) in w.data.iter_mut().zip(bv) {
        *o = if beta == 0.0 { alpha * *o } else { beta * b + alpha * *o };
    }
    Ok(w)
}

pub fn addmm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (s, a, b) = (cx.tensor("self")?, cx.tensor("mat1")?, cx.tensor("mat2")?);
    if a.ndim() != 2 || b.ndim() != 2 {
        return shape_err(format!("addmm expects 2-D mat1 and mat2, got {:?} and {:?}", a.shape(), b.shape()));
    }
    let dt = same_dtype(a, b)?;
    same_dtype(s, a)?;
    let (beta, alpha) = super::extra::beta_alpha(cx, dt)?;
    one(add_bias(matmul_wide(a, b)?, Some(s), beta, alpha)?.round(dt)?)
}

/// `input · weightᵀ + bias`.
pub fn linear(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (x, w) = (cx.tensor("input")?, cx.tensor("weight")?);
    let dt = same_dtype(x, w)?;
    let wt = match w.ndim() {
        1 => w.clone(),
        2 => transpose_tensor(w, 0, 1)?,
        _ => return shape_err(format!("linear expects a 1-D or 2-D weight, got {:?}", w.shape())),
    };
    let bias = cx.opt_tensor("bias")?;
    if let Some(b) = bias {
        same_dtype(x, b)?;
    }
    one(add_bias(matmul_wide(x, &wt)?, bias, 1.0, 1.0)?.round(dt)?)
}
