//! Complex tensors inside a graph. The interpreter's [`Tensor`](super::Tensor) holds real
//! dtypes only; a complex value an op produces (`_fft_r2c`, `view_as_complex`) lives between
//! nodes as a [`ComplexTensor`] and is read back as real by the ops that accept it
//! (`_fft_c2r`, `view_as_real`, `abs`). Graph inputs and outputs stay real: a complex graph
//! output is refused with its index and dtype, as any other op given one refuses it by dtype.

use super::Tensor;
use crate::ir::DType;

/// Complex values of some shape, row-major, held in `f64` pairs whatever the dtype.
#[derive(Clone, Debug, PartialEq)]
pub struct ComplexTensor {
    /// `complex32`, `complex64` or `complex128`.
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub re: Vec<f64>,
    pub im: Vec<f64>,
}

impl ComplexTensor {
    /// The complex dtype whose parts are `real` (`float32` → `complex64`), if there is one.
    pub fn dtype_of(real: DType) -> Option<DType> {
        match real {
            DType::F16 => Some(DType::Complex32),
            DType::F32 => Some(DType::Complex64),
            DType::F64 => Some(DType::Complex128),
            _ => None,
        }
    }

    /// The real dtype of the parts (`complex64` → `float32`).
    pub fn part_dtype(&self) -> DType {
        match self.dtype {
            DType::Complex32 => DType::F16,
            DType::Complex128 => DType::F64,
            _ => DType::F32,
        }
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether `d` is a complex dtype.
    pub fn is_complex(d: DType) -> bool {
        matches!(d, DType::Complex32 | DType::Complex64 | DType::Complex128)
    }

    /// `t.to(dtype)` for a complex `dtype`: the values as real parts, no imaginary part, each part
    /// rounded to the dtype's part dtype (`torch.randn(3).to(torch.complex64)`). `None` for a
    /// dtype that is not complex.
    pub fn from_real(t: &Tensor, dtype: DType) -> Option<ComplexTensor> {
        let c = ComplexTensor { dtype, shape: t.shape().to_vec(), re: t.to_f64_vec(), im: vec![0.0; t.numel()] };
        c.cast(dtype)
    }

    /// The same values in another complex dtype, each part rounded to it; `None` for a dtype that
    /// is not complex.
    pub fn cast(&self, dtype: DType) -> Option<ComplexTensor> {
        if !Self::is_complex(dtype) {
            return None;
        }
        let mut out = ComplexTensor { dtype, shape: self.shape.clone(), re: Vec::new(), im: Vec::new() };
        let part = out.part_dtype();
        let round = |v: &[f64]| -> Option<Vec<f64>> { Some(Tensor::from_vec(&self.shape, v.to_vec())?.cast(part).ok()?.to_f64_vec()) };
        out.re = round(&self.re)?;
        out.im = round(&self.im)?;
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex_dtypes_pair_with_their_parts() {
        for real in [DType::F16, DType::F32, DType::F64] {
            let c = ComplexTensor { dtype: ComplexTensor::dtype_of(real).unwrap(), shape: vec![2], re: vec![0.0; 2], im: vec![0.0; 2] };
            assert_eq!(c.part_dtype(), real);
            assert_eq!(c.numel(), 2);
        }
        assert_eq!(ComplexTensor::dtype_of(DType::I64), None);
    }

    #[test]
    fn real_values_become_complex_parts_rounded_to_the_dtype() {
        let t = Tensor::from_vec(&[2], vec![0.1f64, -2.0]).unwrap();
        let c = ComplexTensor::from_real(&t, DType::Complex64).unwrap();
        assert_eq!(c.re, vec![0.1f32 as f64, -2.0]);
        assert_eq!(c.im, vec![0.0, 0.0]);
        assert_eq!(c.cast(DType::Complex128).unwrap().re, c.re);
        assert!(ComplexTensor::from_real(&t, DType::F32).is_none());
    }
}
