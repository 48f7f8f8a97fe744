//! The op table: one entry per ATen / `_operator` target the interpreter runs, and the typed
//! argument access every op implementation goes through.
//!
//! Ops see a node's arguments by schema name (torch.export records names, and leaves out
//! arguments left at their defaults, so every accessor takes the schema default).

mod attention;
mod batch_stats;
mod conv_nd;
mod conv_pool;
mod distance;
mod extra;
mod fft;
mod fvec;
mod index;
mod lapack;
mod layout;
mod linalg;
mod linalg_ops;
mod linalg_svd;
mod loss;
mod math;
mod nll;
mod norm;
mod numeric;
mod pointwise;
mod pool_nd;
mod products;
mod random;
mod reduce;
mod sample;
mod scalar;
mod shape;
mod sort;
mod unique;

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
    // Metadata assertions and symbolic-number comparisons.
    ("aten._assert_tensor_metadata.default", scalar::no_op),
    ("aten._assert_scalar.default", scalar::assert_scalar),
    ("aten.sym_constrain_range_for_size.default", scalar::no_op),
    ("aten._assert_async.msg", scalar::no_op),
    ("aten.item.default", scalar::item),
    ("aten.sym_storage_offset.default", scalar::sym_storage_offset),
    ("_operator.ge", scalar::ge),
    ("_operator.le", scalar::le),
    ("_operator.gt", scalar::gt),
    ("_operator.lt", scalar::lt),
    ("_operator.eq", scalar::eq),
    ("_operator.ne", scalar::ne),
    // Elementwise math.
    ("aten.sin.default", math::sin),
    ("aten.cos.default", math::cos),
    ("aten.tan.default", math::tan),
    ("aten.asin.default", math::asin),
    ("aten.acos.default", math::acos),
    ("aten.atan.default", math::atan),
    ("aten.sinh.default", math::sinh),
    ("aten.cosh.default", math::cosh),
    ("aten.asinh.default", math::asinh),
    ("aten.acosh.default", math::acosh),
    ("aten.atanh.default", math::atanh),
    ("aten.exp2.default", math::exp2),
    ("aten.expm1.default", math::expm1),
    ("aten.log2.default", math::log2),
    ("aten.log10.default", math::log10),
    ("aten.log1p.default", math::log1p),
    ("aten.erfc.default", math::erfc),
    ("aten.erfinv.default", math::erfinv),
    ("aten.lgamma.default", math::lgamma),
    ("aten.digamma.default", math::digamma),
    ("aten.i0.default", math::i0),
    ("aten.special_i0e.default", math::i0e),
    ("aten.special_i1.default", math::i1),
    ("aten.special_i1e.default", math::i1e),
    ("aten.special_ndtr.default", math::ndtr),
    ("aten.special_log_ndtr.default", math::log_ndtr),
    ("aten.special_ndtri.default", math::ndtri),
    ("aten.special_erfcx.default", math::erfcx),
    ("aten.special_bessel_j0.default", math::bessel_j0),
    ("aten.special_bessel_j1.default", math::bessel_j1),
    ("aten.special_bessel_y0.default", math::bessel_y0),
    ("aten.special_bessel_y1.default", math::bessel_y1),
    ("aten.special_spherical_bessel_j0.default", math::spherical_bessel_j0),
    // Modified Bessel functions (I through the power series, K as PyTorch's Cephes expansions).
    ("aten.special_modified_bessel_i0.default", math::i0),
    ("aten.special_modified_bessel_i1.default", math::i1),
    ("aten.special_modified_bessel_k0.default", math::modified_bessel_k0),
    ("aten.special_modified_bessel_k1.default", math::modified_bessel_k1),
    ("aten.special_scaled_modified_bessel_k0.default", math::scaled_modified_bessel_k0),
    ("aten.special_scaled_modified_bessel_k1.default", math::scaled_modified_bessel_k1),
    ("aten.special_airy_ai.default", math::airy_ai),
    ("aten.special_entr.default", math::entr),
    ("aten.special_xlog1py.default", math::xlog1py),
    ("aten.special_zeta.default", math::special_zeta),
    ("aten.special_polygamma.default", math::special_polygamma),
    ("aten.special_chebyshev_polynomial_t.default", math::chebyshev_t),
    ("aten.special_chebyshev_polynomial_u.default", math::chebyshev_u),
    ("aten.special_chebyshev_polynomial_v.default", math::chebyshev_v),
    ("aten.special_chebyshev_polynomial_w.default", math::chebyshev_w),
    ("aten.special_shifted_chebyshev_polynomial_t.default", math::shifted_chebyshev_t),
    ("aten.special_shifted_chebyshev_polynomial_u.default", math::shifted_chebyshev_u),
    ("aten.special_shifted_chebyshev_polynomial_v.default", math::shifted_chebyshev_v),
    ("aten.special_shifted_chebyshev_polynomial_w.default", math::shifted_chebyshev_w),
    ("aten.special_hermite_polynomial_h.default", math::hermite_h),
    ("aten.special_hermite_polynomial_he.default", math::hermite_he),
    ("aten.special_laguerre_polynomial_l.default", math::laguerre_l),
    ("aten.special_legendre_polynomial_p.default", math::legendre_p),
    ("aten.polygamma.default", math::polygamma),
    ("aten.mvlgamma.default", math::mvlgamma),
    ("aten.igamma.default", math::igamma),
    ("aten.igammac.default", math::igammac),
    ("aten.sinc.default", math::sinc),
    ("aten.deg2rad.default", math::deg2rad),
    ("aten.rad2deg.default", math::rad2deg),
    ("aten.log_sigmoid.default", math::log_sigmoid),
    ("aten.frac.default", math::frac),
    ("aten.mish.default", math::mish),
    ("aten.selu.default", math::selu),
    ("aten.logit.default", math::logit),
    ("aten.softplus.default", math::softplus),
    ("aten.elu.default", math::elu),
    ("aten.celu.default", math::celu),
    ("aten.leaky_relu.default", math::leaky_relu),
    ("aten.hardshrink.default", math::hardshrink),
    ("aten.softshrink.default", math::softshrink),
    ("aten.threshold.default", math::threshold),
    ("aten.nan_to_num.default", math::nan_to_num),
    ("aten.floor.default", math::floor),
    ("aten.ceil.default", math::ceil),
    ("aten.trunc.default", math::trunc),
    ("aten.fix.default", math::trunc),
    ("aten.round.default", math::round),
    ("aten.round.decimals", math::round),
    ("aten.positive.default", math::positive),
    ("aten.sign.default", math::sign),
    ("aten.sgn.default", math::sign),
    ("aten.square.default", math::square),
    ("aten.isnan.default", math::isnan),
    ("aten.isinf.default", math::isinf),
    ("aten.isfinite.default", math::isfinite),
    ("aten.isposinf.default", math::isposinf),
    ("aten.isneginf.default", math::isneginf),
    ("aten.signbit.default", math::signbit),
    ("aten.isreal.default", math::isreal),
    ("aten.bitwise_not.default", math::bitwise_not),
    ("aten.atan2.default", math::atan2),
    ("aten.arctan2.default", math::atan2),
    ("aten.hypot.default", math::hypot),
    ("aten.copysign.Tensor", math::copysign),
    ("aten.copysign.Scalar", math::copysign),
    ("aten.logaddexp.default", math::logaddexp),
    ("aten.xlogy.Tensor", math::xlogy),
    ("aten.xlogy.Scalar_Other", math::xlogy),
    ("aten.nextafter.default", math::nextafter),
    ("aten.ldexp.Tensor", math::ldexp),
    ("aten.float_power.Tensor_Tensor", math::float_power),
    ("aten.float_power.Tensor_Scalar", math::float_power),
    ("aten.fmod.Tensor", math::fmod),
    ("aten.fmod.Scalar", math::fmod),
    ("aten.remainder.Tensor", math::remainder),
    ("aten.remainder.Scalar", math::remainder),
    ("aten.floor_divide.default", math::floor_divide),
    ("aten.floor_divide.Scalar", math::floor_divide),
    ("aten.fmax.default", math::fmax),
    ("aten.fmin.default", math::fmin),
    ("aten.heaviside.default", math::heaviside),
    ("aten.bitwise_and.Tensor", math::bitwise_and),
    ("aten.bitwise_and.Scalar", math::bitwise_and),
    ("aten.bitwise_or.Tensor", math::bitwise_or),
    ("aten.bitwise_or.Scalar", math::bitwise_or),
    ("aten.bitwise_xor.Tensor", math::bitwise_xor),
    ("aten.bitwise_xor.Scalar", math::bitwise_xor),
    ("aten.bitwise_left_shift.Tensor", math::bitwise_left_shift),
    ("aten.bitwise_right_shift.Tensor", math::bitwise_right_shift),
    ("aten.__lshift__.Scalar", math::bitwise_left_shift),
    ("aten.__rshift__.Scalar", math::bitwise_right_shift),
    // Python-operator spellings export keeps (`mask_a & mask_b`): the bitwise ops they are.
    ("aten.__and__.Tensor", math::bitwise_and),
    ("aten.__and__.Scalar", math::bitwise_and),
    ("aten.__or__.Tensor", math::bitwise_or),
    ("aten.__or__.Scalar", math::bitwise_or),
    ("aten.__xor__.Tensor", math::bitwise_xor),
    ("aten.__xor__.Scalar", math::bitwise_xor),
    ("aten.logical_and.default", math::logical_and),
    ("aten.logical_or.default", math::logical_or),
    ("aten.logical_xor.default", math::logical_xor),
    ("aten.isclose.default", math::isclose),
    ("aten.clamp.Tensor", math::clamp_tensor),
    ("aten.clamp_min.Tensor", math::clamp_min_tensor),
    ("aten.clamp_max.Tensor", math::clamp_max_tensor),
    ("aten.addcdiv.default", math::addcdiv),
    ("aten.lerp.Scalar", math::lerp),
    ("aten.lerp.Tensor", math::lerp),
    ("aten.not_equal.Tensor", math::not_equal),
    ("aten.divide.Tensor", pointwise::div),
    ("aten.divide.Tensor_mode", pointwise::div),
    ("aten.true_divide.Tensor", pointwise::div),
    ("aten.subtract.Tensor", pointwise::sub),
    ("aten.multiply.Tensor", pointwise::mul),
    ("aten.max.other", pointwise::maximum),
    ("aten.min.other", pointwise::minimum),
    ("aten.pow.Scalar", pointwise::pow),
    ("aten.where.ScalarOther", pointwise::where_self),
    ("aten.where.ScalarSelf", pointwise::where_self),
    ("aten.where.Scalar", pointwise::where_self),
    ("aten.masked_fill.Tensor", pointwise::masked_fill),
    // Aliases and copies that are plain copies here (tensors are always materialised).
    ("aten.alias_copy.default", shape::identity),
    ("aten.detach_.default", shape::identity),
    ("aten.detach_copy.default", shape::identity),
    ("aten.resolve_conj.default", shape::identity),
    ("aten.resolve_neg.default", shape::identity),
    ("aten.conj_physical.default", shape::identity),
    ("aten.conj.default", shape::identity),
    ("aten.real.default", shape::identity),
    ("aten.view_copy.default", shape::view),
    ("aten.permute_copy.default", shape::permute),
    ("aten.transpose_copy.int", shape::transpose),
    ("aten.t_copy.default", shape::t),
    ("aten.unsqueeze_copy.default", shape::unsqueeze),
    ("aten.squeeze_copy.default", shape::squeeze_dims),
    ("aten.squeeze_copy.dim", shape::squeeze_dims),
    ("aten.squeeze_copy.dims", shape::squeeze_dims),
    ("aten.expand_copy.default", shape::expand),
    ("aten.split_with_sizes_copy.default", shape::split_with_sizes),
    ("aten.unsafe_split.Tensor", shape::split),
    ("aten.unsafe_chunk.default", shape::chunk),
    ("aten.slice_copy.Tensor", shape::slice),
    ("aten.select_copy.int", shape::select),
    // Moving elements: padding, flips, repeats, triangles, diagonals.
    ("aten.pad.default", layout::pad),
    ("aten.constant_pad_nd.default", layout::constant_pad_nd),
    ("aten.flip.default", layout::flip),
    ("aten.fliplr.default", layout::fliplr),
    ("aten.flipud.default", layout::flipud),
    ("aten.roll.default", layout::roll),
    ("aten.rot90.default", layout::rot90),
    ("aten.repeat.default", layout::repeat),
    ("aten.tile.default", layout::tile),
    ("aten.tril.default", layout::tril),
    ("aten.triu.default", layout::triu),
    ("aten.diagonal.default", layout::diagonal),
    ("aten.diagonal_copy.default", layout::diagonal),
    ("aten.linalg_diagonal.default", layout::linalg_diagonal),
    ("aten.diag.default", layout::diag),
    ("aten.diag_embed.default", layout::diag_embed),
    ("aten.diagflat.default", layout::diagflat),
    ("aten.movedim.intlist", layout::movedim),
    ("aten.movedim.int", layout::movedim),
    ("aten.moveaxis.intlist", layout::movedim),
    ("aten.mT.default", layout::mt),
    ("aten.mH.default", layout::mt),
    ("aten.adjoint.default", layout::mt),
    ("aten.matrix_H.default", layout::mt),
    ("aten.numpy_T.default", layout::numpy_t),
    ("aten.narrow.default", layout::narrow),
    ("aten.narrow_copy.default", layout::narrow),
    ("aten.unbind.int", layout::unbind),
    ("aten.unbind_copy.int", layout::unbind),
    ("aten.broadcast_to.default", layout::broadcast_to),
    ("aten.broadcast_tensors.default", layout::broadcast_tensors),
    ("aten.meshgrid.default", layout::meshgrid),
    ("aten.meshgrid.indexing", layout::meshgrid),
    ("aten.expand_as.default", layout::expand_as),
    ("aten.view_as.default", layout::view_as),
    ("aten.reshape_as.default", layout::view_as),
    ("aten.ravel.default", layout::ravel),
    ("aten.atleast_1d.default", layout::atleast_1d),
    ("aten.atleast_2d.default", layout::atleast_2d),
    ("aten.atleast_3d.default", layout::atleast_3d),
    ("aten.hstack.default", layout::hstack),
    ("aten.vstack.default", layout::vstack),
    ("aten.dstack.default", layout::dstack),
    ("aten.column_stack.default", layout::column_stack),
    ("aten.repeat_interleave.self_int", layout::repeat_interleave),
    ("aten.unfold.default", layout::unfold),
    ("aten.unfold_copy.default", layout::unfold),
    ("aten.new_zeros.default", layout::new_zeros),
    ("aten.new_ones.default", layout::new_ones),
    ("aten.new_full.default", layout::new_full),
    ("aten.new_empty.default", layout::new_empty),
    ("aten.empty.memory_format", layout::empty),
    ("aten.empty_like.default", layout::empty_like),
    ("aten.fill.Scalar", layout::fill),
    ("aten.fill.Tensor", layout::fill),
    ("aten.zero.default", layout::zero),
    ("aten.zero_.default", layout::zero),
    ("aten.scalar_tensor.default", layout::scalar_tensor),
    ("aten.eye.default", layout::eye),
    ("aten.eye.m", layout::eye),
    ("aten.linspace.default", layout::linspace),
    ("aten.linspace.Tensor_Tensor", layout::linspace),
    ("aten.logspace.default", layout::logspace),
    ("aten.logspace.Tensor_Tensor", layout::logspace),
    ("aten.channel_shuffle.default", layout::channel_shuffle),
    ("aten.pixel_shuffle.default", layout::pixel_shuffle),
    ("aten.pixel_unshuffle.default", layout::pixel_unshuffle),
    ("aten.as_strided.default", layout::as_strided),
    ("aten.as_strided_copy.default", layout::as_strided),
    // Indexing.
    ("aten.gather.default", index::gather),
    ("aten.take_along_dim.default", index::take_along_dim),
    ("aten.take.default", index::take),
    ("aten.scatter.src", index::scatter),
    ("aten.scatter.value", index::scatter),
    ("aten.scatter.reduce", index::scatter),
    ("aten.scatter.value_reduce", index::scatter),
    ("aten.scatter_add.default", index::scatter_add),
    ("aten.scatter_reduce.two", index::scatter_reduce),
    ("aten.index_select.default", index::index_select),
    ("aten.index_add.default", index::index_add),
    ("aten.index_copy.default", index::index_copy),
    ("aten.index_reduce.default", index::index_reduce),
    ("aten.index_fill.int_Scalar", index::index_fill),
    ("aten.index_fill.int_Tensor", index::index_fill),
    ("aten.index.Tensor", index::index),
    ("aten.index_put.default", index::index_put),
    ("aten.embedding.default", index::embedding),
    ("aten.masked_select.default", index::masked_select),
    ("aten.masked_scatter.default", index::masked_scatter),
    ("aten.nonzero.default", index::nonzero),
    ("aten.nonzero_static.default", index::nonzero_static),
    ("aten.argwhere.default", index::argwhere),
    ("aten.select_scatter.default", index::select_scatter),
    ("aten.slice_scatter.default", index::slice_scatter),
    ("aten.diagonal_scatter.default", index::diagonal_scatter),
    // Indexing ops whose decompositions clamp or whose writes go through flat positions.
    ("aten.put.default", index::put),
    ("aten.as_strided_scatter.default", index::as_strided_scatter),
    ("aten._unsafe_masked_index.default", index::unsafe_masked_index),
    ("aten._unsafe_masked_index_put_accumulate.default", index::unsafe_masked_index_put_accumulate),
    ("aten._unsafe_index.Tensor", index::index),
    ("aten._unsafe_index_put.default", index::index_put),
    // Picking by value and scans.
    ("aten.sort.default", sort::sort),
    ("aten.sort.stable", sort::sort),
    ("aten.argsort.default", sort::argsort),
    ("aten.argsort.stable", sort::argsort),
    ("aten.msort.default", sort::msort),
    ("aten.topk.default", sort::topk),
    ("aten.kthvalue.default", sort::kthvalue),
    ("aten.median.default", sort::median),
    ("aten.median.dim", sort::median),
    ("aten.nanmedian.default", sort::nanmedian),
    ("aten.nanmedian.dim", sort::nanmedian),
    ("aten.mode.default", sort::mode),
    ("aten.max.dim", sort::max_dim),
    ("aten.min.dim", sort::min_dim),
    ("aten.max.default", sort::max_all),
    ("aten.min.default", sort::min_all),
    ("aten.argmax.default", sort::argmax),
    ("aten.argmin.default", sort::argmin),
    ("aten.cumsum.default", sort::cumsum),
    ("aten.cumprod.default", sort::cumprod),
    ("aten.logcumsumexp.default", sort::logcumsumexp),
    ("aten.cummax.default", sort::cummax),
    ("aten.cummin.default", sort::cummin),
    ("aten.prod.default", reduce::prod),
    ("aten.prod.dim_int", reduce::prod),
    ("aten.all.default", reduce::all),
    ("aten.all.dim", reduce::all),
    ("aten.all.dims", reduce::all),
    ("aten.any.dims", reduce::any),
    ("aten.count_nonzero.default", reduce::count_nonzero),
    ("aten.count_nonzero.dim_IntList", reduce::count_nonzero),
    ("aten.nansum.default", reduce::nansum),
    ("aten.nanmean.default", reduce::nanmean),
    ("aten.logsumexp.default", reduce::logsumexp),
    ("aten.aminmax.default", reduce::aminmax),
    ("aten.linalg_vector_norm.default", reduce::vector_norm),
    ("aten.var.default", reduce::var),
    ("aten.std.default", reduce::std),
    ("aten.var_mean.default", reduce::var_mean),
    ("aten.var_mean.dim", reduce::var_mean),
    ("aten.std_mean.correction", reduce::std_mean),
    ("aten.std_mean.default", reduce::std_mean),
    ("aten.std_mean.dim", reduce::std_mean),
    // Non-core ops kept whole by real graphs.
    ("aten.outer.default", extra::outer),
    ("aten.ger.default", extra::outer),
    ("aten.addr.default", extra::addr),
    ("aten.addmv.default", extra::addmv),
    ("aten.baddbmm.default", extra::baddbmm),
    ("aten.addbmm.default", extra::addbmm),
    ("aten.trace.default", extra::trace),
    ("aten.kron.default", extra::kron),
    ("aten.cross.default", extra::cross),
    ("aten.linalg_cross.default", extra::cross),
    ("aten.diff.default", extra::diff),
    ("aten.tensor_split.sections", extra::tensor_split),
    ("aten.tensor_split.indices", extra::tensor_split),
    ("aten.tensor_split.tensor_indices_or_sections", extra::tensor_split),
    ("aten.hsplit.int", extra::hsplit),
    ("aten.hsplit.array", extra::hsplit),
    ("aten.vsplit.int", extra::vsplit),
    ("aten.vsplit.array", extra::vsplit),
    ("aten.dsplit.int", extra::dsplit),
    ("aten.dsplit.array", extra::dsplit),
    ("aten.bucketize.Tensor", extra::bucketize),
    ("aten.searchsorted.Tensor", extra::searchsorted),
    ("aten.fft_fftshift.default", extra::fftshift),
    ("aten.fft_ifftshift.default", extra::ifftshift),
    ("aten._safe_softmax.default", extra::safe_softmax),
    ("aten.sum_to_size.default", extra::sum_to_size),
    ("aten.angle.default", extra::angle),
    ("aten.feature_alpha_dropout.default", extra::dropout_eval),
    ("aten.feature_dropout.default", extra::dropout_eval),
    ("aten.alpha_dropout.default", extra::dropout_eval),
    ("aten.native_dropout.default", extra::native_dropout),
    ("aten.upsample_nearest1d.vec", extra::upsample_nearest),
    ("aten.upsample_nearest2d.vec", extra::upsample_nearest),
    ("aten.upsample_nearest3d.vec", extra::upsample_nearest),
    ("aten._upsample_nearest_exact1d.vec", extra::upsample_nearest),
    ("aten._upsample_nearest_exact2d.vec", extra::upsample_nearest),
    ("aten._upsample_nearest_exact3d.vec", extra::upsample_nearest),
    ("aten.upsample_linear1d.vec", extra::upsample_linear),
    ("aten.upsample_bilinear2d.vec", extra::upsample_linear),
    ("aten.upsample_trilinear3d.vec", extra::upsample_linear),
    ("aten.conv1d.default", conv_nd::conv),
    ("aten.to.device", shape::to_copy),
    ("aten.to.dtype_layout", shape::to_copy),
    ("aten.logaddexp2.default", math::logaddexp2),
    // Core ATen spellings.
    ("aten.reflection_pad1d.default", layout::reflection_pad),
    ("aten.reflection_pad2d.default", layout::reflection_pad),
    ("aten.reflection_pad3d.default", layout::reflection_pad),
    ("aten.replication_pad1d.default", layout::replication_pad),
    ("aten.replication_pad2d.default", layout::replication_pad),
    ("aten.replication_pad3d.default", layout::replication_pad),
    ("aten.copy.default", layout::copy),
    ("aten.empty_strided.default", layout::empty_strided),
    ("aten.div.Scalar_mode", pointwise::div),
    ("aten._local_scalar_dense.default", scalar::item),
    ("aten.sym_stride.int", scalar::sym_stride),
    ("aten.sym_is_contiguous.default", scalar::sym_is_contiguous),
    ("aten.group_norm.default", norm::group_norm),
    ("aten.native_group_norm.default", norm::native_group_norm),
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
    // Vector products and bilinear forms (issue 11).
    // Normalisation layers.
    ("aten.layer_norm.default", norm::layer_norm),
    ("aten.native_layer_norm.default", norm::native_layer_norm),
    ("aten.rms_norm.default", norm::rms_norm),
    ("aten._fused_rms_norm.default", norm::fused_rms_norm),
    ("aten._native_batch_norm_legit_no_training.default", norm::native_batch_norm_no_training),
    // Convolution and pooling.
    ("aten.conv2d.default", conv_nd::conv),
    ("aten.max_pool2d.default", conv_pool::max_pool2d),
    ("aten.max_pool2d_with_indices.default", conv_pool::max_pool2d_with_indices),
    ("prims._low_memory_max_pool_with_offsets.default", conv_pool::max_pool_with_offsets),
    ("prims._low_memory_max_pool_offsets_to_indices.default", conv_pool::max_pool_offsets_to_indices),
    ("aten.avg_pool2d.default", conv_pool::avg_pool2d),
    ("aten.adaptive_avg_pool2d.default", conv_pool::adaptive_avg_pool2d),
    ("aten._adaptive_avg_pool2d.default", conv_pool::adaptive_avg_pool2d),
    // The long tail: losses, distances, contractions, numerics, sets.
    ("aten.mse_loss.default", loss::mse_loss),
    ("aten.l1_loss.default", loss::l1_loss),
    ("aten.smooth_l1_loss.default", loss::smooth_l1_loss),
    ("aten.huber_loss.default", loss::huber_loss),
    ("aten.soft_margin_loss.default", loss::soft_margin_loss),
    ("aten.kl_div.default", loss::kl_div),
    ("aten.binary_cross_entropy.default", loss::binary_cross_entropy),
    ("aten.binary_cross_entropy_with_logits.default", loss::binary_cross_entropy_with_logits),
    ("aten.poisson_nll_loss.default", loss::poisson_nll_loss),
    ("aten.margin_ranking_loss.default", loss::margin_ranking_loss),
    ("aten.hinge_embedding_loss.default", loss::hinge_embedding_loss),
    ("aten.cosine_embedding_loss.default", loss::cosine_embedding_loss),
    ("aten.triplet_margin_loss.default", loss::triplet_margin_loss),
    ("aten.multilabel_margin_loss.default", loss::multilabel_margin_loss),
    ("aten.multi_margin_loss.default", loss::multi_margin_loss),
    ("aten.nll_loss_nd.default", nll::nll_loss_nd),
    ("aten.cross_entropy_loss.default", nll::cross_entropy_loss),
    ("aten.cosine_similarity.default", distance::cosine_similarity),
    ("aten.pairwise_distance.default", distance::pairwise_distance),
    ("aten.pdist.default", distance::pdist),
    ("aten._pdist_forward.default", distance::pdist),
    ("aten.cdist.default", distance::cdist),
    ("aten._cdist_forward.default", distance::cdist),
    ("aten.dist.default", distance::dist),
    ("aten.renorm.default", distance::renorm),
    ("aten.glu.default", distance::glu),
    ("aten.prelu.default", distance::prelu),
    ("aten._prelu_kernel.default", distance::prelu),
    ("aten.rrelu.default", distance::rrelu),
    ("aten.block_diag.default", distance::block_diag),
    ("aten.cartesian_prod.default", distance::cartesian_prod),
    ("aten.combinations.default", distance::combinations),
    ("aten.einsum.default", products::einsum),
    ("aten.tensordot.default", products::tensordot),
    ("aten.inner.default", products::inner),
    ("aten.dot.default", products::dot),
    ("aten.vdot.default", products::vdot),
    ("aten.mv.default", products::mv),
    ("aten.linalg_vecdot.default", products::linalg_vecdot),
    ("aten.bilinear.default", products::bilinear),
    ("aten.linalg_multi_dot.default", products::linalg_multi_dot),
    ("aten.trapz.x", numeric::trapz),
    ("aten.trapz.dx", numeric::trapz),
    ("aten.trapezoid.x", numeric::trapz),
    ("aten.trapezoid.dx", numeric::trapz),
    ("aten.cumulative_trapezoid.x", numeric::cumulative_trapezoid),
    ("aten.cumulative_trapezoid.dx", numeric::cumulative_trapezoid),
    ("aten.gradient.scalarint", numeric::gradient),
    ("aten.gradient.scalararray", numeric::gradient),
    ("aten.gradient.scalarrayint", numeric::gradient),
    ("aten.gradient.scalarrayarray", numeric::gradient),
    ("aten.gradient.array", numeric::gradient),
    ("aten.linalg_vander.default", numeric::linalg_vander),
    ("aten.histc.default", numeric::histc),
    ("aten.histogram.bin_ct", numeric::histogram),
    ("aten.histogramdd.default", numeric::histogramdd),
    ("aten.histogramdd.int_bins", numeric::histogramdd),
    ("aten.bincount.default", numeric::bincount),
    ("aten.isin.Tensor_Tensor", numeric::isin),
    ("aten.isin.Tensor_Scalar", numeric::isin),
    ("aten.isin.Scalar_Tensor", numeric::isin),
    ("aten.gcd.default", numeric::gcd),
    ("aten.lcm.default", numeric::lcm),
    ("aten.frexp.Tensor", numeric::frexp),
    ("aten.quantile.scalar", numeric::quantile),
    ("aten.quantile.default", numeric::quantile),
    ("aten.nanquantile.scalar", numeric::nanquantile),
    ("aten.nanquantile.default", numeric::nanquantile),
    ("aten._unique2.default", unique::unique2),
    ("aten.unique_dim.default", unique::unique_dim),
    ("aten.unique_consecutive.default", unique::unique_consecutive),
    ("aten._chunk_cat.default", unique::chunk_cat),
    ("aten.resize_.default", unique::resize_),
    ("aten.resize_as_.default", unique::resize_as_),
    ("aten.native_dropout_backward.default", unique::native_dropout_backward),
    ("aten._softmax_backward_data.default", unique::softmax_backward_data),
    // Pooling, convolution and normalisation in any rank (1-D to 3-D), transposed convolution,
    // and batch statistics.
    ("aten.max_pool1d.default", pool_nd::max_pool1d),
    ("aten.max_pool3d.default", pool_nd::max_pool3d),
    ("aten.max_pool1d_with_indices.default", pool_nd::max_pool1d_with_indices),
    ("aten.max_pool3d_with_indices.default", pool_nd::max_pool3d_with_indices),
    ("aten.avg_pool1d.default", pool_nd::avg_pool1d),
    ("aten.avg_pool3d.default", pool_nd::avg_pool3d),
    ("aten.adaptive_avg_pool1d.default", pool_nd::adaptive_avg_pool1d),
    ("aten.adaptive_avg_pool3d.default", pool_nd::adaptive_avg_pool3d),
    ("aten._adaptive_avg_pool3d.default", pool_nd::adaptive_avg_pool3d),
    ("aten.adaptive_max_pool1d.default", pool_nd::adaptive_max_pool1d),
    ("aten.adaptive_max_pool2d.default", pool_nd::adaptive_max_pool2d),
    ("aten.adaptive_max_pool3d.default", pool_nd::adaptive_max_pool3d),
    ("aten.fractional_max_pool2d.default", pool_nd::fractional_max_pool2d),
    ("aten.fractional_max_pool3d.default", pool_nd::fractional_max_pool3d),
    ("aten.max_unpool2d.default", pool_nd::max_unpool2d),
    ("aten.max_unpool3d.default", pool_nd::max_unpool3d),
    ("aten.max_pool2d_with_indices_backward.default", pool_nd::max_pool_with_indices_backward),
    ("aten.max_pool3d_with_indices_backward.default", pool_nd::max_pool_with_indices_backward),
    ("aten.convolution.default", conv_nd::convolution),
    ("aten._convolution.default", conv_nd::convolution),
    ("aten.conv3d.default", conv_nd::conv),
    ("aten.conv1d.padding", conv_nd::conv),
    ("aten.conv2d.padding", conv_nd::conv),
    ("aten.conv3d.padding", conv_nd::conv),
    ("aten.conv_transpose1d.default", conv_nd::conv_transpose),
    ("aten.conv_transpose2d.input", conv_nd::conv_transpose),
    ("aten.conv_transpose3d.input", conv_nd::conv_transpose),
    ("aten.im2col.default", conv_nd::im2col),
    ("aten.col2im.default", conv_nd::col2im),
    ("aten.batch_norm.default", batch_stats::batch_norm),
    ("aten.native_batch_norm.default", batch_stats::native_batch_norm),
    ("aten._native_batch_norm_legit.default", batch_stats::native_batch_norm),
    ("aten._native_batch_norm_legit.no_stats", batch_stats::native_batch_norm_no_stats),
    ("aten._batch_norm_with_update.default", batch_stats::batch_norm_with_update),
    ("aten.instance_norm.default", batch_stats::instance_norm),
    // Random and uninitialised tensors: own seeded stream, values in the right support.
    ("aten.rand.default", random::rand),
    ("aten.randn.default", random::randn),
    ("aten.rand_like.default", random::rand_like),
    ("aten.randn_like.default", random::randn_like),
    ("aten.randint.default", random::randint),
    ("aten.randint.low", random::randint),
    ("aten.randint_like.default", random::randint_like),
    ("aten.randint_like.low_dtype", random::randint_like),
    ("aten.randperm.default", random::randperm),
    ("aten.bernoulli.default", random::bernoulli),
    ("aten.bernoulli.p", random::bernoulli),
    ("aten.bernoulli.Tensor", random::bernoulli),
    ("aten.uniform_.default", random::uniform_),
    ("aten.uniform.default", random::uniform_),
    ("aten.normal_.default", random::normal_),
    ("aten.exponential_.default", random::exponential_),
    ("aten.exponential.default", random::exponential_),
    ("aten.cauchy_.default", random::cauchy_),
    ("aten.log_normal_.default", random::log_normal_),
    ("aten.geometric_.default", random::geometric_),
    ("aten.normal.Tensor_Tensor", random::normal),
    ("aten.normal.Tensor_float", random::normal),
    ("aten.normal.float_Tensor", random::normal),
    ("aten.normal.float_float", random::normal),
    ("aten.multinomial.default", random::multinomial),
    ("aten.empty_permuted.default", random::empty_sized),
    ("aten.new_empty_strided.default", random::empty_sized),
    // Resampling.
    ("aten.grid_sampler.default", sample::grid_sampler),
    ("aten.grid_sampler_2d.default", sample::grid_sampler),
    ("aten.grid_sampler_3d.default", sample::grid_sampler),
    ("aten.upsample_bicubic2d.vec", sample::upsample_bicubic2d),
    // Real-output FFTs.
    ("aten.fft_irfft.default", fft::irfft),
    ("aten.fft_irfft2.default", fft::irfft2),
    ("aten.fft_irfftn.default", fft::irfftn),
    ("aten.fft_hfft.default", fft::hfft),
    ("aten.fft_hfft2.default", fft::hfft2),
    ("aten.fft_hfftn.default", fft::hfftn),
    // Attention.
    ("aten.scaled_dot_product_attention.default", attention::sdpa),
    ("aten._scaled_dot_product_flash_attention_for_cpu.default", attention::flash_for_cpu),
];

/// Ops Inductor never lowers to kernels (it keeps them as fallbacks to ATen's LAPACK-backed
/// implementations): the interpreter is their only implementation here, and `docs/OPS.md`
/// says so. Linear algebra decompositions and solvers, computed in f64.
const FALLBACK_TABLE: &[(&str, OpFn)] = &[
    ("aten.linalg_inv.default", linalg_ops::inv),
    ("aten.linalg_inv_ex.default", linalg_ops::inv),
    ("aten.linalg_solve.default", linalg_ops::solve),
    ("aten.linalg_solve_ex.default", linalg_ops::solve),
    ("aten.linalg_cholesky.default", linalg_ops::cholesky),
    ("aten.linalg_cholesky_ex.default", linalg_ops::cholesky),
    ("aten.linalg_qr.default", linalg_ops::qr),
    ("aten.linalg_eigh.default", linalg_ops::eigh),
    ("aten.linalg_eigvalsh.default", linalg_ops::eigh),
    ("aten.linalg_det.default", linalg_ops::det),
    ("aten.det.default", linalg_ops::det),
    ("aten.linalg_slogdet.default", linalg_ops::slogdet),
    ("aten.slogdet.default", linalg_ops::slogdet),
    ("aten.logdet.default", linalg_ops::logdet),
    ("aten.linalg_lu.default", linalg_ops::lu),
    ("aten.linalg_lu_factor.default", linalg_ops::lu_factor),
    ("aten.linalg_lu_factor_ex.default", linalg_ops::lu_factor),
    ("aten._lu_with_info.default", linalg_ops::lu_factor),
    ("aten.lu_unpack.default", linalg_ops::lu_unpack),
    ("aten.linalg_lu_solve.default", linalg_ops::linalg_lu_solve),
    ("aten.lu_solve.default", linalg_ops::lu_solve),
    ("aten.triangular_solve.default", linalg_ops::triangular_solve),
    ("aten.linalg_solve_triangular.default", linalg_ops::solve_triangular),
    ("aten.cholesky_solve.default", linalg_ops::cholesky_solve),
    ("aten.cholesky_inverse.default", linalg_ops::cholesky_inverse),
    ("aten.geqrf.default", linalg_ops::geqrf),
    ("aten.linalg_householder_product.default", linalg_ops::householder_product),
    ("aten.ormqr.default", linalg_ops::ormqr),
    ("aten.matrix_exp.default", linalg_ops::matrix_exp),
    ("aten.linalg_matrix_exp.default", linalg_ops::matrix_exp),
    ("aten.linalg_matrix_power.default", linalg_ops::matrix_power),
    ("aten.linalg_tensorinv.default", linalg_ops::tensorinv),
    ("aten.linalg_tensorsolve.default", linalg_ops::tensorsolve),
    ("aten.linalg_svd.default", linalg_svd::linalg_svd),
    ("aten.svd.default", linalg_svd::svd),
    ("aten.linalg_svdvals.default", linalg_svd::svdvals),
    ("aten.linalg_pinv.atol_rtol_tensor", linalg_svd::pinv),
    ("aten.linalg_pinv.atol_rtol_float", linalg_svd::pinv),
    ("aten.pinverse.default", linalg_svd::pinverse),
    ("aten.linalg_matrix_rank.atol_rtol_tensor", linalg_svd::matrix_rank),
    ("aten.linalg_matrix_rank.atol_rtol_float", linalg_svd::matrix_rank),
    ("aten.linalg_matrix_norm.default", linalg_svd::matrix_norm),
    ("aten.linalg_matrix_norm.str_ord", linalg_svd::matrix_norm),
    ("aten.linalg_norm.default", linalg_svd::linalg_norm),
    ("aten.linalg_norm.ord_str", linalg_svd::linalg_norm),
    ("aten.linalg_cond.default", linalg_svd::cond),
    ("aten.linalg_cond.p_str", linalg_svd::cond),
    ("aten.linalg_polar.default", linalg_svd::polar),
    ("aten.linalg_matrix_sqrth.default", linalg_svd::matrix_sqrth),
];

/// Whether `target` is an op that only ever runs as a fallback (no kernel lowering expected).
pub fn fallback_only(target: &str) -> bool {
    FALLBACK_TABLE.iter().any(|(t, _)| *t == target)
}

/// The implementation of `target`, if the interpreter has one.
pub fn lookup(target: &str) -> Option<OpFn> {
    static MAP: OnceLock<HashMap<&'static str, OpFn>> = OnceLock::new();
    MAP.get_or_init(|| TABLE.iter().chain(FALLBACK_TABLE).copied().collect()).get(target).copied()
}

/// Every target the interpreter runs, in table order.
pub fn supported_targets() -> impl Iterator<Item = &'static str> {
    TABLE.iter().chain(FALLBACK_TABLE).map(|(t, _)| *t)
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
mod tail_tests;
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
