//! A plain `f64` view of a tensor (shape + row-major values) for the long tail of ops that are
//! simplest to write as loops: losses, distances, pooling in any rank, decompositions. Values are
//! computed in `f64` and rounded once to the result dtype, as the rest of the interpreter does.

use super::pointwise::{broadcast_shapes, result_type, Operand};
use super::shape::expand_tensor;
use super::{dtype_ok, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::ir::DType;

/// Row-major `f64` values of some shape.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct F {
    pub shape: Vec<usize>,
    pub v: Vec<f64>,
}

impl F {
    pub fn of(t: &Tensor) -> F {
        F { shape: t.shape().to_vec(), v: t.to_f64_vec() }
    }

    pub fn new(shape: Vec<usize>, v: Vec<f64>) -> F {
        F { shape, v }
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The values broadcast to `shape`.
    pub fn of_broadcast(t: &Tensor, shape: &[usize]) -> OpResult<F> {
        if t.shape() == shape {
            return Ok(F::of(t));
        }
        let e = expand_tensor(t, &shape.iter().map(|&d| d as i64).collect::<Vec<_>>())?;
        Ok(F::of(&e))
    }

    /// A tensor of `dtype`; integer results are rounded first (f64 holds OpInfo's small integer
    /// results exactly, so this only removes representation noise).
    pub fn to(&self, dtype: DType) -> OpResult<Tensor> {
        let t = if dtype.is_floating() {
            Tensor::from_vec(&self.shape, self.v.clone())
        } else if dtype == DType::Bool {
            Tensor::from_vec(&self.shape, self.v.iter().map(|&x| x != 0.0).collect::<Vec<_>>())
        } else {
            Tensor::from_vec(&self.shape, self.v.iter().map(|&x| x.round() as i64).collect::<Vec<_>>())
        };
        let t = t.ok_or_else(|| OpError::Shape(format!("{} values for shape {:?}", self.v.len(), self.shape)))?;
        dtype_ok(t.cast(dtype))
    }
}

/// Rounds a value to `dtype` and back: PyTorch computes half-precision intermediates in the
/// tensor's dtype, and integer differences wrap (uint8 `1 - 2` is 255).
pub(crate) fn round_to(dtype: DType) -> impl Fn(f64) -> f64 {
    use crate::exec::tensor::{BF16, F16};
    move |x| match dtype {
        DType::F16 => F16::from_f64(x).to_f64(),
        DType::BF16 => BF16::from_f64(x).to_f64(),
        DType::F32 => x as f32 as f64,
        DType::U8 => (x as i64).rem_euclid(256) as f64,
        DType::I8 => (((x as i64) + 128).rem_euclid(256) - 128) as f64,
        DType::I16 => (((x as i64) + 32768).rem_euclid(65536) - 32768) as f64,
        DType::I32 => (x as i64) as i32 as f64,
        _ => x,
    }
}

/// Several tensors broadcast to one shape.
pub(crate) fn broadcast_all(ts: &[&Tensor]) -> OpResult<Vec<F>> {
    let shapes: Vec<&[usize]> = ts.iter().map(|t| t.shape()).collect();
    let shape = broadcast_shapes(&shapes)?;
    ts.iter().map(|t| F::of_broadcast(t, &shape)).collect()
}

/// The promoted dtype of `ts`, lifted to the default float dtype (float32) when an integer or
/// bool result meets a float computation, as PyTorch's promotion with a Python float does.
pub(crate) fn float_type(ts: &[&Tensor]) -> OpResult<DType> {
    let d = result_type(&ts.iter().map(|t| Operand::Tensor(t)).collect::<Vec<_>>())?;
    Ok(if d.is_floating() { d } else { DType::F32 })
}

/// The promoted dtype of `ts`, kept as is (integers stay integers).
pub(crate) fn promoted(ts: &[&Tensor]) -> OpResult<DType> {
    result_type(&ts.iter().map(|t| Operand::Tensor(t)).collect::<Vec<_>>())
}

/// Refuses non-float tensors with the dtype error every float-only op gives.
pub(crate) fn need_float(t: &Tensor) -> OpResult<()> {
    if t.dtype().is_floating() {
        Ok(())
    } else {
        Err(OpError::DType(t.dtype()))
    }
}

/// PyTorch's loss `reduction` enum: 0 none, 1 mean, 2 sum.
pub(crate) fn reduce_loss(values: F, reduction: i64, dtype: DType) -> OpResult<Tensor> {
    match reduction {
        0 => values.to(dtype),
        1 => F::new(vec![], vec![values.v.iter().sum::<f64>() / values.v.len() as f64]).to(dtype),
        2 => F::new(vec![], vec![values.v.iter().sum::<f64>()]).to(dtype),
        r => Err(OpError::Arg { arg: "reduction".into(), message: format!("expected 0 (none), 1 (mean) or 2 (sum), got {r}") }),
    }
}

/// Row-major strides of `shape`.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// `(outer, len, inner)` of `shape` around `dim`: element `(o, i, k)` lies at `(o·len + i)·inner + k`.
pub(crate) fn around(shape: &[usize], dim: usize) -> (usize, usize, usize) {
    (shape[..dim].iter().product(), shape[dim], shape[dim + 1..].iter().product())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions_follow_the_enum() {
        let v = F::new(vec![3], vec![1.0, 2.0, 6.0]);
        assert_eq!(reduce_loss(v.clone(), 1, DType::F32).unwrap().to_f64_vec(), vec![3.0]);
        assert_eq!(reduce_loss(v.clone(), 2, DType::F32).unwrap().to_f64_vec(), vec![9.0]);
        assert_eq!(reduce_loss(v.clone(), 0, DType::F32).unwrap().shape(), &[3]);
        assert!(reduce_loss(v, 3, DType::F32).is_err());
    }

    #[test]
    fn broadcasting_and_types() {
        let a = Tensor::from_vec(&[2, 1], vec![1i64, 2]).unwrap();
        let b = Tensor::from_vec(&[3], vec![1.0f32, 2.0, 3.0]).unwrap();
        let fs = broadcast_all(&[&a, &b]).unwrap();
        assert_eq!(fs[0].v, vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
        assert_eq!(float_type(&[&a]).unwrap(), DType::F32);
        assert_eq!(promoted(&[&a]).unwrap(), DType::I64);
        assert_eq!(around(&[2, 3, 4], 1), (2, 3, 4));
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
    }
}
