//! The op table: one entry per ATen / `_operator` target the interpreter runs, and the typed
//! argument access every op implementation goes through.
//!
//! Ops see a node's arguments by schema name (torch.export records names, and leaves out
//! arguments left at their defaults, so every accessor takes the schema default).

mod attention;
mod conv_pool;
mod linalg;
mod norm;
mod pointwise;
mod reduce;
mod scalar;
mod shape;

use std::collections::HashMap;
use std::sync::OnceLock;

use super::tensor::Tensor;
use super::value::{RtValue, Values};
use crate::ir::{Arg, DType, Node, SymIntArg};
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
                other => self.bad(name, format!("expected a tensor, the value is a {}", other.kind())),
            },
            Some(a) => self.bad(name, format!("expected a tensor, got {a:?}")),
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
                RtValue::Tensor(_) => return self.bad(name, "expected a scalar, the value is a tensor"),
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

    pub fn str_or(&self, name: &str, default: &'a str) -> OpResult<&'a str> {
        match self.arg(name) {
            None => Ok(default),
            Some(Arg::String(s)) => Ok(s),
            Some(a) => self.bad(name, format!("expected a string, got {a:?}")),
        }
    }
}

/// Every op the interpreter runs, by target. Aliases that PyTorch guarantees to compute the
/// same thing share an implementation.
const TABLE: &[(&str, OpFn)] = &[
    // Shapes, views and copies (all materialise).
    ("aten.view.default", shape::view),
    ("aten.reshape.default", shape::view),
    ("aten._unsafe_view.default", shape::view),
    ("aten.permute.default", shape::permute),
    ("aten.transpose.int", shape::transpose),
    ("aten.t.default", shape::t),
    ("aten.expand.default", shape::expand),
    ("aten.clone.default", shape::identity),
    ("aten.contiguous.default", shape::identity),
    ("aten.alias.default", shape::identity),
    ("aten.detach.default", shape::identity),
    ("aten.lift_fresh_copy.default", shape::identity),
    ("aten.unsqueeze.default", shape::unsqueeze),
    ("aten.squeeze.dim", shape::squeeze_dims),
    ("aten.squeeze.dims", shape::squeeze_dims),
    ("aten.squeeze.default", shape::squeeze_dims),
    ("aten.unflatten.int", shape::unflatten),
    ("aten.flatten.using_ints", shape::flatten),
    ("aten.chunk.default", shape::chunk),
    ("aten.split.Tensor", shape::split),
    ("aten.split_with_sizes.default", shape::split_with_sizes),
    ("aten.slice.Tensor", shape::slice),
    ("aten.select.int", shape::select),
    ("aten.cat.default", shape::cat),
    ("aten.stack.default", shape::stack),
    ("aten._to_copy.default", shape::to_copy),
    ("aten.to.dtype", shape::to_copy),
    ("aten.arange.default", shape::arange),
    ("prims.iota.default", shape::iota),
    ("prims.convert_element_type.default", shape::convert_element_type),
    ("aten.arange.start", shape::arange),
    ("aten.arange.start_step", shape::arange),
    ("aten.full.default", shape::full),
    ("aten.zeros.default", shape::zeros),
    ("aten.ones.default", shape::ones),
    ("aten.full_like.default", shape::full_like),
    ("aten.zeros_like.default", shape::zeros_like),
    ("aten.ones_like.default", shape::ones_like),
    ("aten.dropout.default", shape::dropout),
    // Symbolic integers.
    ("aten.sym_size.int", scalar::sym_size),
    ("aten.sym_numel.default", scalar::sym_numel),
    ("_operator.mul", scalar::mul),
    ("_operator.add", scalar::add),
    ("_operator.sub", scalar::sub),
    ("_operator.floordiv", scalar::floordiv),
    ("_operator.mod", scalar::modulo),
    ("_operator.neg", scalar::neg),
    // Pointwise.
    ("aten.add.Tensor", pointwise::add),
    ("aten.add.Scalar", pointwise::add),
    ("aten.sub.Tensor", pointwise::sub),
    ("aten.sub.Scalar", pointwise::sub),
    ("aten.rsub.Scalar", pointwise::rsub),
    ("aten.rsub.Tensor", pointwise::rsub),
    ("aten.mul.Tensor", pointwise::mul),
    ("aten.mul.Scalar", pointwise::mul),
    ("aten.div.Tensor", pointwise::div),
    ("aten.div.Scalar", pointwise::div),
    ("aten.div.Tensor_mode", pointwise::div),
    ("aten.pow.Tensor_Scalar", pointwise::pow),
    ("aten.pow.Tensor_Tensor", pointwise::pow),
    ("aten.maximum.default", pointwise::maximum),
    ("aten.minimum.default", pointwise::minimum),
    ("aten.neg.default", pointwise::neg),
    ("aten.abs.default", pointwise::abs),
    ("aten.exp.default", pointwise::exp),
    ("aten.log.default", pointwise::log),
    ("aten.sqrt.default", pointwise::sqrt),
    ("aten.rsqrt.default", pointwise::rsqrt),
    ("aten.reciprocal.default", pointwise::reciprocal),
    ("aten.erf.default", pointwise::erf),
    ("aten.tanh.default", pointwise::tanh),
    ("aten.sigmoid.default", pointwise::sigmoid),
    ("aten.relu.default", pointwise::relu),
    ("aten.gelu.default", pointwise::gelu),
    ("aten.silu.default", pointwise::silu),
    ("aten.hardswish.default", pointwise::hardswish),
    ("aten.hardsigmoid.default", pointwise::hardsigmoid),
    ("aten.relu6.default", pointwise::relu6),
    ("aten.hardtanh.default", pointwise::hardtanh),
    ("aten.clamp.default", pointwise::clamp),
    ("aten.clamp_min.default", pointwise::clamp_min),
    ("aten.clamp_max.default", pointwise::clamp_max),
    ("aten.addcmul.default", pointwise::addcmul),
    ("aten.where.self", pointwise::where_self),
    ("aten.eq.Scalar", pointwise::eq),
    ("aten.eq.Tensor", pointwise::eq),
    ("aten.ne.Scalar", pointwise::ne),
    ("aten.ne.Tensor", pointwise::ne),
    ("aten.lt.Scalar", pointwise::lt),
    ("aten.lt.Tensor", pointwise::lt),
    ("aten.le.Scalar", pointwise::le),
    ("aten.le.Tensor", pointwise::le),
    ("aten.gt.Scalar", pointwise::gt),
    ("aten.gt.Tensor", pointwise::gt),
    ("aten.ge.Scalar", pointwise::ge),
    ("aten.ge.Tensor", pointwise::ge),
    ("aten.logical_not.default", pointwise::logical_not),
    ("aten.masked_fill.Scalar", pointwise::masked_fill),
    // Reductions and normalisations along a dim.
    ("aten.sum.dim_IntList", reduce::sum),
    ("aten.sum.default", reduce::sum),
    ("aten.mean.dim", reduce::mean),
    ("aten.mean.default", reduce::mean),
    ("aten.amax.default", reduce::amax),
    ("aten.amin.default", reduce::amin),
    ("aten.any.dim", reduce::any),
    ("aten.any.default", reduce::any),
    ("aten.var.dim", reduce::var),
    ("aten.var.correction", reduce::var),
    ("aten.std.dim", reduce::std),
    ("aten.std.correction", reduce::std),
    ("aten.var_mean.correction", reduce::var_mean),
    ("aten.softmax.int", reduce::softmax),
    ("aten._softmax.default", reduce::softmax),
    ("aten.log_softmax.int", reduce::log_softmax),
    ("aten._log_softmax.default", reduce::log_softmax),
    // Matrix products.
    ("aten.mm.default", linalg::mm),
    ("aten.bmm.default", linalg::bmm),
    ("aten.matmul.default", linalg::matmul),
    ("aten.addmm.default", linalg::addmm),
    ("aten.linear.default", linalg::linear),
    // Normalisation layers.
    ("aten.layer_norm.default", norm::layer_norm),
    ("aten.native_layer_norm.default", norm::native_layer_norm),
    ("aten.rms_norm.default", norm::rms_norm),
    ("aten._fused_rms_norm.default", norm::fused_rms_norm),
    ("aten.batch_norm.default", norm::batch_norm),
    ("aten._native_batch_norm_legit_no_training.default", norm::native_batch_norm_no_training),
    // Convolution and pooling.
    ("aten.conv2d.default", conv_pool::conv2d),
    ("aten.convolution.default", conv_pool::convolution),
    ("aten.max_pool2d.default", conv_pool::max_pool2d),
    ("aten.max_pool2d_with_indices.default", conv_pool::max_pool2d_with_indices),
    ("aten.avg_pool2d.default", conv_pool::avg_pool2d),
    ("aten.adaptive_avg_pool2d.default", conv_pool::adaptive_avg_pool2d),
    ("aten._adaptive_avg_pool2d.default", conv_pool::adaptive_avg_pool2d),
    // Attention.
    ("aten.scaled_dot_product_attention.default", attention::sdpa),
    ("aten._scaled_dot_product_flash_attention_for_cpu.default", attention::flash_for_cpu),
];

/// The implementation of `target`, if the interpreter has one.
pub fn lookup(target: &str) -> Option<OpFn> {
    static MAP: OnceLock<HashMap<&'static str, OpFn>> = OnceLock::new();
    MAP.get_or_init(|| TABLE.iter().copied().collect()).get(target).copied()
}

/// Every target the interpreter runs, in table order.
pub fn supported_targets() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|(t, _)| *t)
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
mod tests;

#[cfg(test)]
mod table_tests {
    use super::*;

    #[test]
    fn table_has_no_duplicate_targets() {
        let mut seen = std::collections::HashSet::new();
        for t in supported_targets() {
            assert!(seen.insert(t), "{t} registered twice");
            let namespaced = ["aten.", "prims.", "_operator."].iter().any(|p| t.starts_with(p));
            assert!(namespaced, "{t}: targets are written without `torch.ops.`");
        }
    }
}
