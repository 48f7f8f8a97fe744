//! Vector norms and what is built on them, as torch spells them: `linalg_vector_norm` (torch._refs:
//! `pow(sum(pow(x, ord)), 1/ord)`), and weight normalisation (`_weight_norm` →
//! `_weight_norm_interface` → `v * (g / ‖v‖)`), which the wav2vec2 family's positional
//! convolutions use.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, DType, ValueId};

/// `linalg_vector_norm(x, ord, dim, keepdim, dtype)` → torch._refs.linalg.vector_norm's general
/// case: `pow(sum(pow(x, ord), dim, keepdim), 1 / ord)`, with `abs` first unless `ord` is even.
/// Declines what that function spells otherwise: `ord` 0 or ±inf, a dtype other than the
/// input's or a half input (conversions); reductions over dims all of static size 1 are `abs`.
pub fn vector_norm(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let meta = rw.meta(x)?.clone();
    let (ord, p) = match rw.passthrough("ord")? {
        None | Some(Arg::None) => (A::I(2), 2.0),
        Some(Arg::Int(i)) => (A::I(i), i as f64),
        Some(Arg::Float(f)) => (A::F(f), f),
        Some(a) => return Err(RuleError::Arg { name: "ord".into(), message: format!("expected a number, found {a:?}") }),
    };
    let dtype = match rw.passthrough("dtype")? {
        None | Some(Arg::None) => meta.dtype,
        Some(Arg::ScalarType(d)) => d,
        Some(a) => return Err(RuleError::Arg { name: "dtype".into(), message: format!("expected a dtype, found {a:?}") }),
    };
    if p == 0.0 || p.is_infinite() || !matches!(meta.dtype, DType::F32 | DType::F64) || dtype != meta.dtype {
        return Err(RuleError::Declined);
    }
    let rank = meta.sizes.len();
    let dims = match rw.ints("dim")? {
        Some(d) if !d.is_empty() => Some(d.iter().map(|&d| super::dim(d, rank, "dim")).collect::<Result<Vec<_>, _>>()?),
        _ => None,
    };
    let one = |d: usize| meta.sizes[d].as_int() == Some(1);
    let all_ones = match &dims {
        None => meta.sizes.iter().all(|s| s.as_int() == Some(1)),
        Some(ds) => rank > 0 && ds.iter().all(|&d| one(d)),
    };
    let keepdim = rw.bool("keepdim", false)?;
    if all_ones {
        return norm_of_ones(rw, x, dims, keepdim);
    }
    let mut v = x;
    if p % 2.0 != 0.0 {
        v = rw.op("aten.abs.default", vec![("self", A::T(v))])?;
    }
    let pw = rw.op("aten.pow.Tensor_Scalar", vec![("self", A::T(v)), ("exponent", ord)])?;
    let dim = match dims {
        Some(ds) => A::Is(ds.into_iter().map(|d| d as i64).collect()),
        None => A::Raw(Arg::None),
    };
    let sum = rw.op("aten.sum.dim_IntList", vec![("self", A::T(pw)), ("dim", dim), ("keepdim", A::B(keepdim))])?;
    Ok(vec![rw.op("aten.pow.Tensor_Scalar", vec![("self", A::T(sum)), ("exponent", A::F(1.0 / p))])?])
}

/// The norm over dims that are all of size 1 (ConvNeXt-V2's GRN at its last stage, 1×1 maps):
/// `abs(x)`, made contiguous, and where `keepdim` is false viewed without those dims. A norm
/// over every dim of a one-element tensor without `keepdim` (`flatten()[0]`) is not written here.
fn norm_of_ones(rw: &mut Rw, x: ValueId, dims: Option<Vec<usize>>, keepdim: bool) -> Result<Vec<ValueId>, RuleError> {
    let rank = rw.rank(x)?;
    let a = rw.op("aten.abs.default", vec![("self", A::T(x))])?;
    let a = if keepdim || rank == 0 {
        a
    } else {
        let Some(dims) = dims else { return Err(RuleError::Declined) };
        let kept: Vec<usize> = (0..rank).filter(|d| !dims.contains(d)).collect();
        let sizes = kept.iter().map(|&d| rw.size(a, d)).collect::<Result<Vec<_>, _>>()?;
        rw.op("aten.view.default", vec![("self", A::T(a)), ("size", A::Sizes(sizes))])?
    };
    if super::view::is_contiguous(rw.meta(a)?) {
        return Ok(vec![a]);
    }
    Ok(vec![super::view::contiguous_clone(rw, a)?])
}

/// `_weight_norm(v, g, dim)`, its CompositeImplicitAutograd body (`WeightNorm.cpp`): where the
/// fused kernel applies (`dim` first or last, no float16) → `_weight_norm_interface(v, g, dim)[0]`.
/// The other dims go through `norm_except_dim`'s transposes, which this rule does not spell:
/// it declines them and the node stays whole.
pub fn weight_norm(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (v, g) = (rw.t("v")?, rw.t("g")?);
    let dim = rw.int("dim", Some(0))?;
    let rank = rw.rank(v)? as i64;
    let half = [v, g].iter().map(|&t| rw.meta(t).map(|m| m.dtype == DType::F16)).collect::<Result<Vec<_>, _>>()?.contains(&true);
    if half || !(dim == 0 || dim == rank - 1) {
        return Err(RuleError::Declined);
    }
    let outs = rw.op_n("aten._weight_norm_interface.default", vec![("v", A::T(v)), ("g", A::T(g)), ("dim", A::I(dim))])?;
    Ok(outs.into_iter().take(1).collect())
}

/// `_weight_norm_interface(v, g, dim)` → torch._decomp's: `norm = linalg_vector_norm(v, 2, every
/// dim but dim, keepdim, dtype)`, `(v * (g / norm), norm)`. With no other dim (a vector) the
/// norm of each element is `abs`, as torch traces it. A bfloat16 `g` keeps the norm in float32
/// and converts it back, which this rule does not spell: it declines.
pub fn weight_norm_interface(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (v, g) = (rw.t("v")?, rw.t("g")?);
    let rank = rw.rank(v)?;
    // torch's rule reads a negative dim as no dim (every dim is "other"); the fused kernel is
    // only ever called with a first or last dim, counted from 0.
    let dim = usize::try_from(rw.int("dim", Some(0))?).map_err(|_| RuleError::Declined)?;
    if dim >= rank.max(1) {
        return Err(RuleError::Arg { name: "dim".into(), message: format!("dim {dim} out of range for rank {rank}") });
    }
    let dtype = rw.meta(v)?.dtype;
    if rw.meta(g)?.dtype == DType::BF16 || rw.meta(g)?.dtype != dtype {
        return Err(RuleError::Declined);
    }
    let others: Vec<i64> = (0..rank).filter(|&d| d != dim).map(|d| d as i64).collect();
    let norm = if others.is_empty() {
        rw.op("aten.abs.default", vec![("self", A::T(v))])?
    } else {
        rw.op(
            "aten.linalg_vector_norm.default",
            vec![("self", A::T(v)), ("ord", A::I(2)), ("dim", A::Is(others)), ("keepdim", A::B(true)), ("dtype", A::Raw(Arg::ScalarType(dtype)))],
        )?
    };
    let scale = rw.op("aten.div.Tensor", vec![("self", A::T(g)), ("other", A::T(norm))])?;
    let out = rw.op("aten.mul.Tensor", vec![("self", A::T(v)), ("other", A::T(scale))])?;
    Ok(vec![out, norm])
}

/// `linalg_norm(x, ord, dim, keepdim, dtype)`, its CompositeImplicitAutograd body
/// (`LinearAlgebra.cpp`): a vector norm (`linalg_vector_norm(x, ord or 2, dim, keepdim, dtype)`)
/// unless `ord` is given over two dims (or over a matrix with no dim), which is a matrix norm
/// this rule leaves whole.
pub fn linalg_norm(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let rank = rw.rank(x)?;
    let ord = rw.passthrough("ord")?.filter(|a| !matches!(a, Arg::None));
    let dim = rw.passthrough("dim")?.filter(|a| !matches!(a, Arg::None));
    let dims = match &dim {
        Some(Arg::Ints(d)) => Some(d.len()),
        Some(Arg::Int(_)) => Some(1),
        None => None,
        Some(a) => return Err(RuleError::Arg { name: "dim".into(), message: format!("expected an int list, found {a:?}") }),
    };
    if ord.is_some() && (dims == Some(2) || dims.is_none() && rank == 2) {
        return Err(RuleError::Declined);
    }
    let mut args = vec![
        ("self", A::T(x)),
        ("ord", A::Raw(ord.unwrap_or(Arg::Float(2.0)))),
        ("dim", A::Raw(dim.unwrap_or(Arg::None))),
        ("keepdim", A::B(rw.bool("keepdim", false)?)),
    ];
    if let Some(d) = rw.passthrough("dtype")?.filter(|a| !matches!(a, Arg::None)) {
        args.push(("dtype", A::Raw(d)));
    }
    Ok(vec![rw.op("aten.linalg_vector_norm.default", args)?])
}
