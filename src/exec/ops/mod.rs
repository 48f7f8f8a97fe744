//! The interpreter's op implementations, registered by target in the op registry
//! (`crate::ops`, `.run(..)`), and the typed argument access every implementation goes through.
//!
//! Ops see a node's arguments by schema name (torch.export records names, and leaves out
//! arguments left at their defaults, so every accessor takes the schema default).

pub(crate) mod antialias;
pub(crate) mod attention;
pub(crate) mod batch_stats;
pub(crate) mod complex;
pub(crate) mod conv_grad;
pub(crate) mod conv_nd;
pub(crate) mod conv_pool;
pub(crate) mod distance;
pub(crate) mod dropout;
pub(crate) mod embed;
pub(crate) mod embedding_bag;
pub(crate) mod extra;
pub(crate) mod fft;
pub(crate) mod fvec;
pub(crate) mod grouped;
pub(crate) mod index;
mod index_mask;
pub(crate) mod lapack;
pub(crate) mod layout;
mod layout_create;
mod layout_view;
pub(crate) mod ldl;
pub(crate) mod linalg;
pub(crate) mod linalg_ops;
pub(crate) mod linalg_svd;
pub(crate) mod linear_ce;
pub(crate) mod loss;
pub(crate) mod math;
mod math_binary;
mod math_special;
pub(crate) mod matrix_exp;
pub(crate) mod nll;
pub(crate) mod norm;
pub(crate) mod norm_grad;
pub(crate) mod numeric;
mod numeric_hist;
pub(crate) mod pointwise;
mod pointwise_unary;
pub(crate) mod pool_grad;
pub(crate) mod pool_nd;
pub(crate) mod products;
pub(crate) mod random;
pub(crate) mod reduce;
pub(crate) mod resample_u8;
pub(crate) mod sample;
pub(crate) mod scalar;
pub(crate) mod segment;
pub(crate) mod select;
pub(crate) mod shape;
pub(crate) mod sort;
pub(crate) mod std_sort;
pub(crate) mod spectral;
pub(crate) mod unique;

use super::tensor::Tensor;
use super::value::{RtValue, Values};
use crate::ir::{Arg, DType, Graph, Node, SymIntArg, ValueKind};
use crate::sym::Bindings;

pub use pointwise::{result_type, Operand, Scalar};

/// Why an op could not produce its result; the driver adds the node and target.
#[derive(Debug, Clone, PartialEq)]
pub enum OpError {
    /// The op does not compute in this dtype.
    DType(DType),
    /// An argument is missing or of the wrong kind or value.
    Arg { arg: String, message: String },
    /// Operand shapes do not fit together.
    Shape(String),
    /// A mode the interpreter refuses rather than guesses (training-mode dropout, ...).
    Unsupported(String),
}

pub type OpResult<T> = Result<T, OpError>;

/// One op implementation: arguments in, the node's outputs (in order) out.
pub type OpFn = fn(&OpCx) -> OpResult<Vec<RtValue>>;

/// What an op reads while it runs.
pub struct OpCx<'a> {
    pub node: &'a Node,
    pub values: &'a Values,
    pub bindings: &'a Bindings,
    /// The Philox stream the node draws from, when its op is random (`crate::ops::rng`).
    pub rng: crate::ops::rng::NodeStream,
    /// The node's graph, for the metadata it records (absent when an op runs on its own).
    pub graph: Option<&'a Graph>,
}

pub(crate) fn shape_err<T>(message: impl Into<String>) -> OpResult<T> {
    Err(OpError::Shape(message.into()))
}

pub(crate) fn one(t: Tensor) -> OpResult<Vec<RtValue>> {
    Ok(vec![RtValue::Tensor(t)])
}

pub(crate) fn dtype_ok<T>(r: Result<T, DType>) -> OpResult<T> {
    r.map_err(OpError::DType)
}

impl<'a> OpCx<'a> {
    fn bad<T>(&self, arg: &str, message: impl Into<String>) -> OpResult<T> {
        Err(OpError::Arg { arg: arg.to_string(), message: message.into() })
    }

    /// The argument, treating an explicit `None` like an omitted one.
    pub fn arg(&self, name: &str) -> Option<&'a Arg> {
        self.node.arg(name).filter(|a| !matches!(a, Arg::None))
    }

    fn value(&self, name: &str, v: crate::ir::ValueId) -> OpResult<&'a RtValue> {
        match self.values.get(v) {
            Some(x) => Ok(x),
            None => self.bad(name, format!("reads value #{} which has not been computed", v.0)),
        }
    }

    pub fn tensor(&self, name: &str) -> OpResult<&'a Tensor> {
        match self.opt_tensor(name)? {
            Some(t) => Ok(t),
            None => self.bad(name, "missing (a tensor is required)"),
        }
    }

    pub fn opt_tensor(&self, name: &str) -> OpResult<Option<&'a Tensor>> {
        match self.arg(name) {
            None => Ok(None),
            Some(Arg::Tensor(v)) => match self.value(name, *v)? {
                RtValue::Tensor(t) => Ok(Some(t)),
                // Ops that take complex tensors read them with `complex`; the rest refuse the dtype.
                RtValue::Complex(c) => Err(OpError::DType(c.dtype)),
                other => self.bad(name, format!("expected a tensor, the value is a {}", other.kind())),
            },
            Some(a) => self.bad(name, format!("expected a tensor, got {a:?}")),
        }
    }

    /// A complex tensor argument: `Ok(Err(t))` where the value is a real tensor instead.
    pub fn complex_or_real(&self, name: &str) -> OpResult<Result<&'a crate::exec::complex::ComplexTensor, &'a Tensor>> {
        match self.arg(name) {
            Some(Arg::Tensor(v)) => match self.value(name, *v)? {
                RtValue::Complex(c) => Ok(Ok(c)),
                RtValue::Tensor(t) => Ok(Err(t)),
                other => self.bad(name, format!("expected a tensor, the value is a {}", other.kind())),
            },
            other => self.bad(name, format!("expected a tensor, got {other:?}")),
        }
    }

    pub fn tensors(&self, name: &str) -> OpResult<Vec<&'a Tensor>> {
        let ids: Vec<crate::ir::ValueId> = match self.arg(name) {
            Some(Arg::Tensors(vs)) => vs.clone(),
            Some(Arg::OptionalTensors(vs)) => vs.iter().flatten().copied().collect(),
            other => return self.bad(name, format!("expected a list of tensors, got {other:?}")),
        };
        ids.iter()
            .map(|v| match self.value(name, *v)? {
                RtValue::Tensor(t) => Ok(t),
                other => self.bad(name, format!("expected tensors, one value is a {}", other.kind())),
            })
            .collect()
    }

    fn sym_int(&self, name: &str, s: &SymIntArg) -> OpResult<i64> {
        match s {
            SymIntArg::Int(i) => Ok(*i),
            SymIntArg::Value(v) => match self.value(name, *v)? {
                RtValue::Int(i) => Ok(*i),
                other => self.bad(name, format!("expected a symbolic int, the value is a {}", other.kind())),
            },
        }
    }

    pub fn opt_int(&self, name: &str) -> OpResult<Option<i64>> {
        match self.arg(name) {
            None => Ok(None),
            Some(Arg::Int(i)) => Ok(Some(*i)),
            Some(Arg::SymInt(s)) => self.sym_int(name, s).map(Some),
            Some(a) => self.bad(name, format!("expected an int, got {a:?}")),
        }
    }

    pub fn int(&self, name: &str) -> OpResult<i64> {
        self.opt_int(name)?.map_or_else(|| self.bad(name, "missing (an int is required)"), Ok)
    }

    pub fn int_or(&self, name: &str, default: i64) -> OpResult<i64> {
        Ok(self.opt_int(name)?.unwrap_or(default))
    }

    /// An int list (`int[]`, `SymInt[]`); a single int stands for a one-element list, as
    /// PyTorch's `int[2]` arguments accept.
    pub fn opt_ints(&self, name: &str) -> OpResult<Option<Vec<i64>>> {
        match self.arg(name) {
            None => Ok(None),
            Some(Arg::Ints(v)) => Ok(Some(v.clone())),
            Some(Arg::SymInts(v)) => v.iter().map(|s| self.sym_int(name, s)).collect::<OpResult<_>>().map(Some),
            Some(Arg::Int(i)) => Ok(Some(vec![*i])),
            Some(Arg::SymInt(s)) => Ok(Some(vec![self.sym_int(name, s)?])),
            Some(a) => self.bad(name, format!("expected a list of ints, got {a:?}")),
        }
    }

    pub fn ints(&self, name: &str) -> OpResult<Vec<i64>> {
        self.opt_ints(name)?.map_or_else(|| self.bad(name, "missing (a list of ints is required)"), Ok)
    }

    pub fn ints_or(&self, name: &str, default: &[i64]) -> OpResult<Vec<i64>> {
        Ok(self.opt_ints(name)?.unwrap_or_else(|| default.to_vec()))
    }

    pub fn opt_scalar(&self, name: &str) -> OpResult<Option<Scalar>> {
        let s = match self.arg(name) {
            None => return Ok(None),
            Some(Arg::Int(i)) => Scalar::Int(*i),
            Some(Arg::Float(f)) => Scalar::Float(*f),
            Some(Arg::Bool(b)) => Scalar::Bool(*b),
            Some(Arg::SymInt(s)) => Scalar::Int(self.sym_int(name, s)?),
            Some(Arg::SymFloat(v)) | Some(Arg::SymBool(v)) => match self.value(name, *v)? {
                RtValue::Int(i) => Scalar::Int(*i),
                RtValue::Float(f) => Scalar::Float(*f),
                RtValue::Bool(b) => Scalar::Bool(*b),
                RtValue::Tensor(_) | RtValue::Complex(_) => return self.bad(name, "expected a scalar, the value is a tensor"),
            },
            Some(a) => return self.bad(name, format!("expected a number, got {a:?}")),
        };
        Ok(Some(s))
    }

    pub fn scalar_or(&self, name: &str, default: Scalar) -> OpResult<Scalar> {
        Ok(self.opt_scalar(name)?.unwrap_or(default))
    }

    pub fn float_or(&self, name: &str, default: f64) -> OpResult<f64> {
        Ok(self.opt_scalar(name)?.map_or(default, |s| s.to_f64()))
    }

    pub fn opt_float(&self, name: &str) -> OpResult<Option<f64>> {
        Ok(self.opt_scalar(name)?.map(|s| s.to_f64()))
    }

    pub fn bool_or(&self, name: &str, default: bool) -> OpResult<bool> {
        match self.opt_scalar(name)? {
            None => Ok(default),
            Some(Scalar::Bool(b)) => Ok(b),
            Some(s) => self.bad(name, format!("expected a bool, got {s:?}")),
        }
    }

    /// A tensor or a Python number: the `other` of `add.Tensor` may be either in an archive.
    pub fn operand(&self, name: &str) -> OpResult<Operand<'a>> {
        match self.arg(name) {
            Some(Arg::Tensor(_)) => Ok(Operand::Tensor(self.tensor(name)?)),
            _ => match self.opt_scalar(name)? {
                Some(s) => Ok(Operand::Scalar(s)),
                None => self.bad(name, "missing (a tensor or number is required)"),
            },
        }
    }

    pub fn opt_dtype(&self, name: &str) -> OpResult<Option<DType>> {
        match self.arg(name) {
            None => Ok(None),
            Some(Arg::ScalarType(d)) => Ok(Some(*d)),
            Some(a) => self.bad(name, format!("expected a dtype, got {a:?}")),
        }
    }

    /// A backward op's `bool[3] output_mask`: which of its three gradients are asked for.
    pub fn output_mask(&self) -> OpResult<[bool; 3]> {
        match self.arg("output_mask") {
            Some(Arg::Bools(b)) if b.len() == 3 => Ok([b[0], b[1], b[2]]),
            other => self.bad("output_mask", format!("expected 3 bools, got {other:?}")),
        }
    }

    /// The dtype the graph's metadata records for output `i`, when it records one. Outputs
    /// whose dtype PyTorch left to the version (the empty outputs a caller did not ask for)
    /// take it from here, as PyTorch did when it exported the graph.
    pub fn out_dtype(&self, i: usize) -> Option<DType> {
        let v = *self.node.outputs.get(i)?;
        match &self.graph?.values.get(v.index())?.kind {
            ValueKind::Tensor(m) => Some(m.dtype),
            _ => None,
        }
    }

    pub fn str_or(&self, name: &str, default: &'a str) -> OpResult<&'a str> {
        match self.arg(name) {
            None => Ok(default),
            Some(Arg::String(s)) => Ok(s),
            Some(a) => self.bad(name, format!("expected a string, got {a:?}")),
        }
    }
}

/// The gradients `mask` asks for, in order: torch.export records the others as `None` and the
/// importer gives the node no value for them.
pub(crate) fn masked(mask: [bool; 3], grads: [Option<Tensor>; 3]) -> OpResult<Vec<RtValue>> {
    let mut out = Vec::new();
    for (want, g) in mask.into_iter().zip(grads) {
        match (want, g) {
            (true, Some(t)) => out.push(RtValue::Tensor(t)),
            (true, None) => return Err(OpError::Unsupported("a gradient the output mask asks for has no defined value".into())),
            (false, _) => {}
        }
    }
    Ok(out)
}

/// A dim argument made non-negative for a tensor of rank `ndim` (rank 0 accepts -1 and 0, as
/// PyTorch's `maybe_wrap_dim` does).
pub(crate) fn wrap_dim(dim: i64, ndim: usize) -> OpResult<usize> {
    let n = ndim.max(1) as i64;
    let d = if dim < 0 { dim + n } else { dim };
    if d < 0 || d >= n {
        return shape_err(format!("dim {dim} is out of range for a tensor of rank {ndim}"));
    }
    Ok(d as usize)
}

#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
pub(crate) mod tail_tests;
#[cfg(test)]
mod overload_tests;
#[cfg(test)]
mod rounding_tests;
#[cfg(test)]
mod tests;
