//! Membership and order statistics: `isin` as torch/_refs decomposes it (a broadcast `eq` and
//! `any` for few test elements, else a `sort` and `searchsorted`), and `quantile` /
//! `nanquantile` as ATen's `quantile_compute` (aten/src/ATen/native/Sorting.cpp): sort along
//! the reduced dim, turn `q` into ranks, `gather` the neighbours and `lerp` between them.

use super::build::{self, binary, size_arg};
use super::{dim, Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, DType, SymIntArg, ValueId};

fn arg_err(name: &str, message: impl Into<String>) -> RuleError {
    RuleError::Arg { name: name.into(), message: message.into() }
}

/// The element count of `x` when every size is static.
fn numel(rw: &Rw, x: ValueId) -> Option<i64> {
    rw.static_sizes(x).map(|s| s.iter().product())
}

/// `~x` of a bool tensor, when `invert`.
fn maybe_not(rw: &mut Rw, x: ValueId, invert: bool, target: &str) -> Result<ValueId, RuleError> {
    if invert {
        rw.op(target, vec![("self", A::T(x))])
    } else {
        Ok(x)
    }
}

/// A Python number as the tensor `torch.tensor(number)` makes: int64, float32 or bool.
fn number_tensor(rw: &mut Rw, name: &str) -> Result<ValueId, RuleError> {
    let (value, dtype) = match rw.passthrough(name)? {
        Some(Arg::Int(i)) => (A::I(i), DType::I64),
        Some(Arg::Float(f)) => (A::F(f), DType::F32),
        Some(Arg::Bool(b)) => (A::B(b), DType::Bool),
        _ => return Err(arg_err(name, "expected a number")),
    };
    rw.op("aten.scalar_tensor.default", vec![("s", value), ("dtype", A::Raw(Arg::ScalarType(dtype)))])
}

/// `isin.Tensor_Tensor`, and `isin.Scalar_Tensor` with the element made a tensor first.
pub fn isin(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let elements = match rw.opt_t("elements")? {
        Some(e) => e,
        None => number_tensor(rw, "element")?,
    };
    let test = rw.t("test_elements")?;
    let invert = rw.bool("invert", false)?;
    let assume_unique = rw.bool("assume_unique", false)?;
    // The sort-based path pays off for many test elements; the choice needs static sizes
    // (PyTorch reads them), so dynamic ones take the direct comparison.
    let sorting = match (numel(rw, test), numel(rw, elements)) {
        (Some(t), Some(e)) => (t as f64) >= 10.0 * (e as f64).powf(0.145),
        _ => false,
    };
    let out = if sorting { isin_sorting(rw, elements, test, invert, assume_unique)? } else { isin_default(rw, elements, test, invert)? };
    Ok(vec![out])
}

/// `isin.Tensor_Scalar`: one comparison.
pub fn isin_scalar(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let elements = rw.t("elements")?;
    let invert = rw.bool("invert", false)?;
    let test = rw.passthrough("test_element")?.ok_or_else(|| arg_err("test_element", "missing"))?;
    let target = if invert { "aten.ne.Scalar" } else { "aten.eq.Scalar" };
    Ok(vec![binary(rw, target, elements, A::Raw(test))?])
}

/// Every element against every test element: `elements` viewed with a trailing 1 per test dim,
/// compared, and reduced with `any` over the test dims.
fn isin_default(rw: &mut Rw, elements: ValueId, test: ValueId, invert: bool) -> Result<ValueId, RuleError> {
    if numel(rw, elements) == Some(0) {
        let like = vec![("self", A::T(elements)), ("dtype", A::Raw(Arg::ScalarType(DType::Bool)))];
        return rw.op("aten.empty_like.default", like);
    }
    let test_rank = rw.rank(test)?;
    if test_rank == 0 {
        let res = binary(rw, "aten.eq.Tensor", elements, A::T(test))?;
        return maybe_not(rw, res, invert, "aten.bitwise_not.default");
    }
    let mut shape = build::sizes(rw, elements)?;
    shape.extend(std::iter::repeat_n(SymIntArg::Int(1), test_rank));
    let x = build::view(rw, elements, shape)?;
    let eq = binary(rw, "aten.eq.Tensor", x, A::T(test))?;
    let dims: Vec<i64> = (1..=test_rank as i64).map(|i| -i).collect();
    let res = rw.op("aten.any.dims", vec![("self", A::T(eq)), ("dim", A::Is(dims))])?;
    maybe_not(rw, res, invert, "aten.bitwise_not.default")
}

fn flatten(rw: &mut Rw, x: ValueId) -> Result<ValueId, RuleError> {
    rw.op("aten.flatten.using_ints", vec![("self", A::T(x)), ("start_dim", A::I(0)), ("end_dim", A::I(-1))])
}

/// Sort-based membership. With unique elements: one stable sort of both lists, equal
/// neighbours mark members, scattered back to the elements' places. Otherwise each element's
/// insertion point in the sorted test elements is checked for equality.
fn isin_sorting(rw: &mut Rw, elements: ValueId, test: ValueId, invert: bool, assume_unique: bool) -> Result<ValueId, RuleError> {
    let e = flatten(rw, elements)?;
    let t = flatten(rw, test)?;
    let sort = |rw: &mut Rw, x: ValueId, stable: bool| -> Result<Vec<ValueId>, RuleError> {
        if stable {
            rw.op_n("aten.sort.stable", vec![("self", A::T(x)), ("stable", A::B(true))])
        } else {
            rw.op_n("aten.sort.default", vec![("self", A::T(x))])
        }
    };
    let shape = build::sizes(rw, elements)?;
    if assume_unique {
        let all = build::cat(rw, vec![e, t], 0)?;
        let sorted = sort(rw, all, true)?;
        let (values, order) = (sorted[0], sorted[1]);
        let next = build::slice(rw, values, 0, 1, i64::MAX)?;
        let prev = build::slice(rw, values, 0, 0, -1)?;
        let dup = binary(rw, "aten.eq.Tensor", next, A::T(prev))?;
        let dup = rw.op("aten.constant_pad_nd.default", vec![("self", A::T(dup)), ("pad", A::Is(vec![0, 1])), ("value", A::B(false))])?;
        let dup = maybe_not(rw, dup, invert, "aten.logical_not.default")?;
        let empty = rw.op("aten.empty_like.default", vec![("self", A::T(dup))])?;
        let mask = rw.op("aten.index_copy.default", vec![("self", A::T(empty)), ("dim", A::I(0)), ("index", A::T(order)), ("source", A::T(dup))])?;
        let n = rw.size(e, 0)?;
        let n = match n {
            SymIntArg::Int(i) => i,
            SymIntArg::Value(_) => return Err(RuleError::Unsupported("isin(assume_unique) of a dynamic number of elements".into())),
        };
        let head = build::slice(rw, mask, 0, 0, n)?;
        return super::view::view_of(rw, head, shape);
    }
    let sorted = sort(rw, t, false)?[0];
    let idx = rw.op("aten.searchsorted.Tensor", vec![("sorted_sequence", A::T(sorted)), ("self", A::T(e))])?;
    let n = rw.size(sorted, 0)?;
    let inside = binary(rw, "aten.lt.Scalar", idx, size_arg(n))?;
    let zero = rw.op("aten.scalar_tensor.default", vec![("s", A::I(0)), ("dtype", A::Raw(Arg::ScalarType(DType::I64)))])?;
    let at = rw.op("aten.where.self", vec![("condition", A::T(inside)), ("self", A::T(idx)), ("other", A::T(zero))])?;
    let found = rw.op("aten.index.Tensor", vec![("self", A::T(sorted)), ("indices", A::Raw(Arg::OptionalTensors(vec![Some(at)])))])?;
    let cmp = binary(rw, "aten.eq.Tensor", found, A::T(e))?;
    let cmp = maybe_not(rw, cmp, invert, "aten.logical_not.default")?;
    super::view::view_of(rw, cmp, shape)
}

/// How `quantile` picks between the two neighbouring ranks.
#[derive(Clone, Copy, PartialEq)]
enum Interp {
    Linear,
    Lower,
    Higher,
    Midpoint,
    Nearest,
}

pub fn quantile(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    quantile_with(rw, false)
}

pub fn nanquantile(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    quantile_with(rw, true)
}

fn quantile_with(rw: &mut Rw, ignore_nan: bool) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let dtype = rw.meta(x)?.dtype;
    if dtype != DType::F32 && dtype != DType::F64 {
        return Err(arg_err("self", format!("quantile() input tensor must be either float or double dtype, got {dtype}")));
    }
    if numel(rw, x) == Some(0) {
        return Err(arg_err("self", "quantile() input tensor must be non-empty"));
    }
    let q = match rw.passthrough("q")? {
        Some(Arg::Tensor(_)) => rw.t("q")?,
        _ => {
            let q = rw.float("q", None)?;
            if !(0.0..=1.0).contains(&q) {
                return Err(arg_err("q", format!("quantile() q must be in the range [0, 1] but got {q}")));
            }
            rw.op("aten.scalar_tensor.default", vec![("s", A::F(q)), ("dtype", A::Raw(Arg::ScalarType(dtype)))])?
        }
    };
    let q_rank = rw.rank(q)?;
    if q_rank > 1 {
        return Err(arg_err("q", "quantile() q must be a scalar or 1D tensor"));
    }
    if rw.meta(q)?.dtype != dtype {
        return Err(arg_err("q", "quantile() q tensor must be same dtype as the input tensor"));
    }
    let how = match rw.string("interpolation", "linear")?.as_str() {
        "linear" => Interp::Linear,
        "lower" => Interp::Lower,
        "higher" => Interp::Higher,
        "midpoint" => Interp::Midpoint,
        "nearest" => Interp::Nearest,
        o => return Err(arg_err("interpolation", format!("must be one of linear, lower, higher, midpoint or nearest, got `{o}`"))),
    };
    let keepdim = rw.bool("keepdim", false)?;
    let rank = rw.rank(x)?;
    let given_dim = rw.passthrough("dim")?.filter(|a| !matches!(a, Arg::None)).map(|_| rw.int("dim", None)).transpose()?;
    let wrapped = dim(given_dim.unwrap_or(0), rank, "dim")?;

    // The output shape without the quantile dim: the input's without the reduced dim.
    let mut out_shape: Vec<SymIntArg> = Vec::new();
    if given_dim.is_some() && rank > 0 {
        out_shape = build::sizes(rw, x)?;
        if keepdim {
            out_shape[wrapped] = SymIntArg::Int(1);
        } else {
            out_shape.remove(wrapped);
        }
    } else if keepdim {
        out_shape = vec![SymIntArg::Int(1); rank];
    }
    let sort_input = if given_dim.is_none() {
        flatten(rw, x)?
    } else if rank > 0 && wrapped == rank - 1 {
        x
    } else {
        let u = build::unsqueeze(rw, x, -1)?;
        let r = rank + 1;
        let mut perm: Vec<usize> = (0..r).collect();
        perm.swap(wrapped, r - 1);
        build::permute(rw, u, &perm)?
    };
    // ATen reads the number of samples as a plain int (it specialises a dynamic one); a dynamic
    // count leaves the op whole.
    let samples = rw.meta(sort_input)?.sizes.last().and_then(|s| s.as_int());
    let Some(samples) = samples else { return Err(RuleError::Declined) };
    let sorted = rw.op_n("aten.sort.default", vec![("self", A::T(sort_input))])?[0];
    let len = SymIntArg::Int(samples);
    let mut in_shape = out_shape.clone();
    in_shape.push(len.clone());
    let sorted = build::view(rw, sorted, in_shape.clone())?;
    let last = in_shape.len() - 1;

    let ranks = if ignore_nan {
        let nan = rw.op("aten.isnan.default", vec![("self", A::T(sorted))])?;
        let valid = rw.op("aten.logical_not.default", vec![("self", A::T(nan))])?;
        let count = build::sum(rw, valid, &[last], true)?;
        let count = binary(rw, "aten.sub.Tensor", count, A::I(1))?;
        let ranks = binary(rw, "aten.mul.Tensor", q, A::T(count))?;
        let negative = binary(rw, "aten.lt.Scalar", ranks, A::I(0))?;
        rw.op("aten.masked_fill.Scalar", vec![("self", A::T(ranks)), ("mask", A::T(negative)), ("value", A::I(0))])?
    } else {
        let last_index = rw.sym_arith("sub", len, 1)?;
        let scaled = binary(rw, "aten.mul.Tensor", q, size_arg(last_index.clone()))?;
        let nan = rw.op("aten.isnan.default", vec![("self", A::T(sorted))])?;
        let has_nan = rw.op("aten.any.dim", vec![("self", A::T(nan)), ("dim", A::I(-1)), ("keepdim", A::B(true))])?;
        // broadcast_tensors: `q`'s dim (or 1) becomes the last of the row shape.
        let mut shape = out_shape.clone();
        shape.push(if q_rank == 1 { rw.size(q, 0)? } else { SymIntArg::Int(1) });
        let scaled = expand_to(rw, scaled, &shape)?;
        let has_nan = expand_to(rw, has_nan, &shape)?;
        rw.op("aten.masked_fill.Scalar", vec![("self", A::T(scaled)), ("mask", A::T(has_nan)), ("value", size_arg(last_index))])?
    };
    let ranks = match how {
        Interp::Lower => rw.op("aten.floor.default", vec![("self", A::T(ranks))])?,
        Interp::Higher => rw.op("aten.ceil.default", vec![("self", A::T(ranks))])?,
        Interp::Nearest => rw.op("aten.round.default", vec![("self", A::T(ranks))])?,
        Interp::Linear | Interp::Midpoint => ranks,
    };
    let to_long = |rw: &mut Rw, v: ValueId| rw.op("aten._to_copy.default", vec![("self", A::T(v)), ("dtype", A::Raw(Arg::ScalarType(DType::I64)))]);
    let gather = |rw: &mut Rw, i: ValueId| rw.op("aten.gather.default", vec![("self", A::T(sorted)), ("dim", A::I(-1)), ("index", A::T(i))]);
    let below = to_long(rw, ranks)?;
    let mut values = gather(rw, below)?;
    if matches!(how, Interp::Linear | Interp::Midpoint) {
        let weights = if how == Interp::Midpoint {
            rw.op("aten.full_like.default", vec![("self", A::T(ranks)), ("fill_value", A::F(0.5))])?
        } else {
            binary(rw, "aten.sub.Tensor", ranks, A::T(below))?
        };
        let up = rw.op("aten.ceil.default", vec![("self", A::T(ranks))])?;
        let above = to_long(rw, up)?;
        let upper = gather(rw, above)?;
        values = rw.op("aten.lerp.Tensor", vec![("self", A::T(values)), ("end", A::T(upper)), ("weight", A::T(weights))])?;
    }
    let out = if q_rank == 0 {
        rw.op("aten.squeeze.dims", vec![("self", A::T(values)), ("dim", A::Is(vec![-1]))])?
    } else {
        let u = build::unsqueeze(rw, values, 0)?;
        let r = rw.rank(u)?;
        let mut perm: Vec<usize> = (0..r).collect();
        perm.swap(0, r - 1);
        let t = build::permute(rw, u, &perm)?;
        rw.op("aten.squeeze.dims", vec![("self", A::T(t)), ("dim", A::Is(vec![-1]))])?
    };
    Ok(vec![out])
}

/// `x` expanded to `shape` unless it already has it (what `broadcast_tensors` does per operand).
fn expand_to(rw: &mut Rw, x: ValueId, shape: &[SymIntArg]) -> Result<ValueId, RuleError> {
    let sizes = rw.meta(x)?.sizes.clone();
    let same = sizes.len() == shape.len() && shape.iter().zip(&sizes).all(|(s, e)| rw.sym_expr(s).is_ok_and(|s| &s == e));
    if same {
        return Ok(x);
    }
    build::expand(rw, x, shape.to_vec())
}
