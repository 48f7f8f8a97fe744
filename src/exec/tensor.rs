//! The interpreter's tensors: a dtype-tagged `ndarray` that is always in standard (C) layout, so
//! every view op materialises and every consumer may read elements in row-major order.

use ndarray::{ArrayD, IxDyn};

pub use super::half::{BF16, F16};
use crate::ir::DType;

/// Element storage for the dtypes the interpreter computes with.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
    I64(ArrayD<i64>),
    I32(ArrayD<i32>),
    I16(ArrayD<i16>),
    I8(ArrayD<i8>),
    U8(ArrayD<u8>),
    /// uint64, what `hash_tensor` returns.
    U64(ArrayD<u64>),
    F16(ArrayD<F16>),
    BF16(ArrayD<BF16>),
    Bool(ArrayD<bool>),
}

/// The dtypes the interpreter supports, for messages.
pub const SUPPORTED: &str = "float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint64, bool";

/// Every dtype [`Data`] holds.
pub const DTYPES: &[DType] =
    &[DType::F16, DType::BF16, DType::F32, DType::F64, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U64, DType::Bool];

/// Runs `$e` with `$a` bound to the array of whatever dtype `$data` holds.
macro_rules! each {
    ($data:expr, $a:ident => $e:expr) => {
        match $data {
            $crate::exec::tensor::Data::F32($a) => $e,
            $crate::exec::tensor::Data::F64($a) => $e,
            $crate::exec::tensor::Data::I64($a) => $e,
            $crate::exec::tensor::Data::I32($a) => $e,
            $crate::exec::tensor::Data::I16($a) => $e,
            $crate::exec::tensor::Data::I8($a) => $e,
            $crate::exec::tensor::Data::U8($a) => $e,
            $crate::exec::tensor::Data::U64($a) => $e,
            $crate::exec::tensor::Data::F16($a) => $e,
            $crate::exec::tensor::Data::BF16($a) => $e,
            $crate::exec::tensor::Data::Bool($a) => $e,
        }
    };
}

/// Like [`each!`], rewrapping the resulting array in the same dtype.
macro_rules! each_map {
    ($data:expr, $a:ident => $e:expr) => {
        match $data {
            $crate::exec::tensor::Data::F32($a) => $crate::exec::tensor::Data::F32($e),
            $crate::exec::tensor::Data::F64($a) => $crate::exec::tensor::Data::F64($e),
            $crate::exec::tensor::Data::I64($a) => $crate::exec::tensor::Data::I64($e),
            $crate::exec::tensor::Data::I32($a) => $crate::exec::tensor::Data::I32($e),
            $crate::exec::tensor::Data::I16($a) => $crate::exec::tensor::Data::I16($e),
            $crate::exec::tensor::Data::I8($a) => $crate::exec::tensor::Data::I8($e),
            $crate::exec::tensor::Data::U8($a) => $crate::exec::tensor::Data::U8($e),
            $crate::exec::tensor::Data::U64($a) => $crate::exec::tensor::Data::U64($e),
            $crate::exec::tensor::Data::F16($a) => $crate::exec::tensor::Data::F16($e),
            $crate::exec::tensor::Data::BF16($a) => $crate::exec::tensor::Data::BF16($e),
            $crate::exec::tensor::Data::Bool($a) => $crate::exec::tensor::Data::Bool($e),
        }
    };
}
#[allow(unused_imports)]
pub(crate) use {each, each_map};

/// An element type of [`Data`]. Conversions follow C casts as PyTorch's `to(dtype)` does:
/// float → int truncates, anything → bool is `!= 0`.
pub trait Element: Copy + Default + PartialEq + PartialOrd + std::fmt::Debug + Send + Sync + 'static {
    const DTYPE: DType;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
    fn to_i64(self) -> i64;
    fn from_i64(v: i64) -> Self;
    fn wrap(a: ArrayD<Self>) -> Data;
    fn unwrap(d: &Data) -> Option<&ArrayD<Self>>;
    fn read_le(b: &[u8]) -> Self;
    fn write_le(self, out: &mut Vec<u8>);

    /// Value-preserving where the target can hold it, through `i64` between integer types so
    /// large integers do not round through `f64`.
    fn cast<T: Element>(self) -> T {
        if T::DTYPE.is_floating() || T::DTYPE == DType::Bool {
            T::from_f64(self.to_f64())
        } else if Self::DTYPE.is_floating() {
            // Float to a narrow integer truncates to i64 and wraps, as C casts do on x86.
            T::from_i64(self.to_f64() as i64)
        } else {
            T::from_i64(self.to_i64())
        }
    }
}

macro_rules! element {
    ($t:ty, $dt:ident, $n:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_i64(self) -> i64 {
                self as i64
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn wrap(a: ArrayD<Self>) -> Data {
                Data::$dt(a)
            }
            fn unwrap(d: &Data) -> Option<&ArrayD<Self>> {
                match d {
                    Data::$dt(a) => Some(a),
                    _ => None,
                }
            }
            fn read_le(b: &[u8]) -> Self {
                let mut buf = [0u8; $n];
                buf.copy_from_slice(&b[..$n]);
                <$t>::from_le_bytes(buf)
            }
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    };
}
element!(f32, F32, 4);
element!(f64, F64, 8);
element!(i64, I64, 8);
element!(i32, I32, 4);
element!(i16, I16, 2);
element!(i8, I8, 1);
element!(u8, U8, 1);
element!(u64, U64, 8);

macro_rules! half_element {
    ($t:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$t;
            fn to_f64(self) -> f64 {
                $t::to_f64(self)
            }
            fn from_f64(v: f64) -> Self {
                $t::from_f64(v)
            }
            fn to_i64(self) -> i64 {
                $t::to_f64(self) as i64
            }
            fn from_i64(v: i64) -> Self {
                $t::from_f64(v as f64)
            }
            fn wrap(a: ArrayD<Self>) -> Data {
                Data::$t(a)
            }
            fn unwrap(d: &Data) -> Option<&ArrayD<Self>> {
                match d {
                    Data::$t(a) => Some(a),
                    _ => None,
                }
            }
            fn read_le(b: &[u8]) -> Self {
                $t(u16::from_le_bytes([b[0], b[1]]))
            }
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.0.to_le_bytes());
            }
        }
    };
}
half_element!(F16);
half_element!(BF16);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn wrap(a: ArrayD<Self>) -> Data {
        Data::Bool(a)
    }
    fn unwrap(d: &Data) -> Option<&ArrayD<Self>> {
        match d {
            Data::Bool(a) => Some(a),
            _ => None,
        }
    }
    fn read_le(b: &[u8]) -> Self {
        b[0] != 0
    }
    fn write_le(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
}

/// A dense tensor in standard layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    data: Data,
}

impl Tensor {
    /// Wraps `data`, copying it into standard layout if it is a strided or broadcast view's copy.
    pub fn from_data(data: Data) -> Tensor {
        let data = each_map!(data, a => standard(a));
        Tensor { data }
    }

    pub fn from_array<T: Element>(a: ArrayD<T>) -> Tensor {
        Tensor::from_data(T::wrap(a))
    }

    /// A tensor of `shape` from row-major `values`; `None` when the counts differ.
    pub fn from_vec<T: Element>(shape: &[usize], values: Vec<T>) -> Option<Tensor> {
        ArrayD::from_shape_vec(IxDyn(shape), values).ok().map(Tensor::from_array)
    }

    pub fn scalar<T: Element>(v: T) -> Tensor {
        Tensor::from_array(ArrayD::from_elem(IxDyn(&[]), v))
    }

    /// A tensor of `shape` filled with `v` converted to `dtype`.
    pub fn full(dtype: DType, shape: &[usize], v: f64) -> Result<Tensor, DType> {
        fn f<T: Element>(shape: &[usize], v: f64) -> Data {
            T::wrap(ArrayD::from_elem(IxDyn(shape), T::from_f64(v)))
        }
        Ok(Tensor::from_data(match dtype {
            DType::F32 => f::<f32>(shape, v),
            DType::F64 => f::<f64>(shape, v),
            DType::I64 => f::<i64>(shape, v),
            DType::I32 => f::<i32>(shape, v),
            DType::I16 => f::<i16>(shape, v),
            DType::I8 => f::<i8>(shape, v),
            DType::U8 => f::<u8>(shape, v),
            DType::U64 => f::<u64>(shape, v),
            DType::F16 => f::<F16>(shape, v),
            DType::BF16 => f::<BF16>(shape, v),
            DType::Bool => f::<bool>(shape, v),
            d => return Err(d),
        }))
    }

    /// Reads `numel(sizes)` elements at `offset + Σ index·stride` (elements, not bytes) from
    /// little-endian `bytes`; strided storage (a transposed constant) is gathered into C order.
    pub fn from_le_strided(
        dtype: DType,
        sizes: &[usize],
        strides: &[usize],
        offset: usize,
        bytes: &[u8],
    ) -> Result<Tensor, String> {
        fn gather<T: Element>(sizes: &[usize], strides: &[usize], offset: usize, bytes: &[u8]) -> Result<Data, String> {
            let w = T::DTYPE.size_bytes();
            let n: usize = sizes.iter().product();
            let mut out = Vec::with_capacity(n);
            let mut idx = vec![0usize; sizes.len()];
            for _ in 0..n {
                let e = offset + idx.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>();
                let b = bytes
                    .get(e * w..e * w + w)
                    .ok_or_else(|| format!("element {e} lies past the {} bytes given", bytes.len()))?;
                out.push(T::read_le(b));
                for d in (0..sizes.len()).rev() {
                    idx[d] += 1;
                    if idx[d] < sizes[d] {
                        break;
                    }
                    idx[d] = 0;
                }
            }
            ArrayD::from_shape_vec(IxDyn(sizes), out).map(T::wrap).map_err(|e| e.to_string())
        }
        if strides.len() != sizes.len() {
            return Err(format!("{} strides for {} sizes", strides.len(), sizes.len()));
        }
        let data = match dtype {
            DType::F32 => gather::<f32>(sizes, strides, offset, bytes)?,
            DType::F64 => gather::<f64>(sizes, strides, offset, bytes)?,
            DType::I64 => gather::<i64>(sizes, strides, offset, bytes)?,
            DType::I32 => gather::<i32>(sizes, strides, offset, bytes)?,
            DType::I16 => gather::<i16>(sizes, strides, offset, bytes)?,
            DType::I8 => gather::<i8>(sizes, strides, offset, bytes)?,
            DType::U8 => gather::<u8>(sizes, strides, offset, bytes)?,
            DType::U64 => gather::<u64>(sizes, strides, offset, bytes)?,
            DType::F16 => gather::<F16>(sizes, strides, offset, bytes)?,
            DType::BF16 => gather::<BF16>(sizes, strides, offset, bytes)?,
            DType::Bool => gather::<bool>(sizes, strides, offset, bytes)?,
            d => return Err(format!("dtype {d} is not supported by the reference interpreter ({SUPPORTED})")),
        };
        Ok(Tensor::from_data(data))
    }

    /// Contiguous little-endian bytes (what `.npy` stores).
    pub fn from_le_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<Tensor, String> {
        let mut strides = vec![1usize; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * shape[i + 1].max(1);
        }
        let need = shape.iter().product::<usize>() * dtype.size_bytes();
        if bytes.len() != need {
            return Err(format!("{dtype} {shape:?} needs {need} bytes, got {}", bytes.len()));
        }
        Tensor::from_le_strided(dtype, shape, &strides, 0, bytes)
    }

    pub fn to_le_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.numel() * self.dtype().size_bytes());
        each!(&self.data, a => a.iter().for_each(|x| x.write_le(&mut out)));
        out
    }

    pub fn data(&self) -> &Data {
        &self.data
    }

    pub fn into_data(self) -> Data {
        self.data
    }

    pub fn dtype(&self) -> DType {
        match &self.data {
            Data::F32(_) => DType::F32,
            Data::F64(_) => DType::F64,
            Data::I64(_) => DType::I64,
            Data::I32(_) => DType::I32,
            Data::I16(_) => DType::I16,
            Data::I8(_) => DType::I8,
            Data::U8(_) => DType::U8,
            Data::U64(_) => DType::U64,
            Data::F16(_) => DType::F16,
            Data::BF16(_) => DType::BF16,
            Data::Bool(_) => DType::Bool,
        }
    }

    pub fn shape(&self) -> &[usize] {
        each!(&self.data, a => a.shape())
    }

    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    pub fn numel(&self) -> usize {
        self.shape().iter().product()
    }

    /// The array when the dtype is `T`.
    pub fn array<T: Element>(&self) -> Option<&ArrayD<T>> {
        T::unwrap(&self.data)
    }

    /// Elements in row-major order, converted to `f64`.
    pub fn to_f64_vec(&self) -> Vec<f64> {
        each!(&self.data, a => a.iter().map(|x| x.to_f64()).collect())
    }

    /// Elements in row-major order, converted to `i64`.
    pub fn to_i64_vec(&self) -> Vec<i64> {
        each!(&self.data, a => a.iter().map(|x| x.to_i64()).collect())
    }

    /// The array converted to element type `T` (a copy even when it already is `T`).
    pub fn to_array<T: Element>(&self) -> ArrayD<T> {
        each!(&self.data, a => a.mapv(|x| x.cast::<T>()))
    }

    /// `to(dtype)`: a converted copy.
    pub fn cast(&self, dtype: DType) -> Result<Tensor, DType> {
        Ok(Tensor::from_data(match dtype {
            DType::F32 => Data::F32(self.to_array()),
            DType::F64 => Data::F64(self.to_array()),
            DType::I64 => Data::I64(self.to_array()),
            DType::I32 => Data::I32(self.to_array()),
            DType::I16 => Data::I16(self.to_array()),
            DType::I8 => Data::I8(self.to_array()),
            DType::U8 => Data::U8(self.to_array()),
            DType::U64 => Data::U64(self.to_array()),
            DType::F16 => Data::F16(self.to_array()),
            DType::BF16 => Data::BF16(self.to_array()),
            DType::Bool => Data::Bool(self.to_array()),
            d => return Err(d),
        }))
    }

    /// The same elements under a new shape of equal element count.
    pub fn reshape(&self, shape: &[usize]) -> Option<Tensor> {
        if shape.iter().product::<usize>() != self.numel() {
            return None;
        }
        let data = each_map!(&self.data, a => {
            ArrayD::from_shape_vec(IxDyn(shape), a.iter().copied().collect()).ok()?
        });
        Some(Tensor { data })
    }
}

fn standard<T: Clone>(a: ArrayD<T>) -> ArrayD<T> {
    if a.is_standard_layout() {
        a
    } else {
        a.as_standard_layout().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_bytes_gather_into_c_order() {
        // A 2×3 tensor stored transposed (strides [1, 2]) holds 0 1 2 3 4 5 column-major.
        let bytes: Vec<u8> = (0..6).flat_map(|i| (i as f32).to_le_bytes()).collect();
        let t = Tensor::from_le_strided(DType::F32, &[2, 3], &[1, 2], 0, &bytes).unwrap();
        assert_eq!(t.to_f64_vec(), vec![0.0, 2.0, 4.0, 1.0, 3.0, 5.0]);
        assert!(Tensor::from_le_strided(DType::F32, &[2, 3], &[3, 1], 1, &bytes).is_err());
        assert!(Tensor::from_le_strided(DType::Complex64, &[1], &[1], 0, &bytes).unwrap_err().contains("complex64"));
    }

    #[test]
    fn casts_follow_c_conversions() {
        let t = Tensor::from_vec(&[3], vec![-1.7f32, 0.0, 2.5]).unwrap();
        assert_eq!(t.cast(DType::I64).unwrap().to_i64_vec(), vec![-1, 0, 2]);
        assert_eq!(t.cast(DType::Bool).unwrap().to_i64_vec(), vec![1, 0, 1]);
        let big = Tensor::scalar(i64::MAX - 1);
        assert_eq!(big.cast(DType::I64).unwrap().to_i64_vec(), vec![i64::MAX - 1]);
        let p = Tensor::from_array(ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![1i32, 2, 3, 4]).unwrap().reversed_axes());
        assert_eq!(p.to_i64_vec(), vec![1, 3, 2, 4], "views are materialised in C order");
        let bytes = p.to_le_bytes();
        assert_eq!(Tensor::from_le_bytes(DType::I32, &[2, 2], &bytes).unwrap(), p);
    }
}
