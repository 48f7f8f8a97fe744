//! `cartesian_prod` and `combinations` as aten/src/ATen/native/Itertools.cpp builds them: the
//! inputs' `meshgrid` (each a `view` with one `-1` then an `expand`), flattened and stacked as
//! columns. `combinations` keeps the grid points whose indices increase (`i < j < ...`, or
//! `<=` with replacement). ATen selects them with `masked_select`, whose output size depends on
//! the data in general; here the mask depends only on the length `n`, so the count is known,
//! `C(n, r)` (or `C(n + r - 1, r)`), and the kept positions are found from the mask's running
//! count (`cumsum`, then `searchsorted` for each rank 1..=count) and gathered with `index`:
//! the same elements in the same order, with static shapes.

use super::build::{self, binary, size_arg};
use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, DType, SymIntArg, ValueId};

fn arg_err(name: &str, message: impl Into<String>) -> RuleError {
    RuleError::Arg { name: name.into(), message: message.into() }
}

/// `meshgrid(tensors, indexing="ij")` of 1-D tensors: tensor `i` viewed along dim `i` and
/// expanded to the grid of every length.
fn meshgrid(rw: &mut Rw, tensors: &[ValueId]) -> Result<Vec<ValueId>, RuleError> {
    let shape = tensors.iter().map(|&t| rw.size(t, 0)).collect::<Result<Vec<_>, _>>()?;
    let mut grids = Vec::with_capacity(tensors.len());
    for (i, &t) in tensors.iter().enumerate() {
        let mut view_shape = vec![SymIntArg::Int(1); tensors.len()];
        view_shape[i] = SymIntArg::Int(-1);
        let v = build::view(rw, t, view_shape)?;
        grids.push(build::expand(rw, v, shape.clone())?);
    }
    Ok(grids)
}

/// `meshgrid(tensors, indexing)` as ATen's composite body (`TensorShape.cpp`): 1-D tensors, each
/// a `view` along its own dim expanded to the grid; `"xy"` swaps the first two inputs and then
/// the first two grids (DINOv3's patch coordinates). `meshgrid(tensors)` is `"ij"`.
pub fn meshgrid_indexing(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let mut tensors = match rw.passthrough("tensors")? {
        Some(Arg::Tensors(v)) if !v.is_empty() => v,
        _ => return Err(arg_err("tensors", "expected a non-empty tensor list")),
    };
    let xy = match rw.string("indexing", "ij")?.as_str() {
        "ij" => false,
        "xy" => tensors.len() >= 2,
        other => return Err(arg_err("indexing", format!("expected \"ij\" or \"xy\", got {other:?}"))),
    };
    // torch counts a 0-D tensor as one element (`sym_numel`), which `meshgrid` above does not.
    if tensors.iter().map(|&t| rw.rank(t)).collect::<Result<Vec<_>, _>>()?.iter().any(|&r| r != 1) {
        return Err(RuleError::Declined);
    }
    if xy {
        tensors.swap(0, 1);
    }
    let mut grids = meshgrid(rw, &tensors)?;
    if xy {
        grids.swap(0, 1);
    }
    Ok(grids)
}

fn flatten(rw: &mut Rw, x: ValueId) -> Result<ValueId, RuleError> {
    rw.op("aten.flatten.using_ints", vec![("self", A::T(x)), ("start_dim", A::I(0)), ("end_dim", A::I(-1))])
}

fn stack(rw: &mut Rw, xs: Vec<ValueId>, dim: i64) -> Result<ValueId, RuleError> {
    rw.op("aten.stack.default", vec![("tensors", A::Raw(Arg::Tensors(xs))), ("dim", A::I(dim))])
}

fn vectors(rw: &Rw, xs: &[ValueId]) -> Result<(), RuleError> {
    for &x in xs {
        if rw.rank(x)? != 1 {
            return Err(arg_err("tensors", format!("expected a 1D vector, got rank {}", rw.rank(x)?)));
        }
    }
    Ok(())
}

pub fn cartesian_prod(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let tensors = match rw.passthrough("tensors")? {
        Some(Arg::Tensors(v)) if !v.is_empty() => v,
        _ => return Err(arg_err("tensors", "expected a non-empty tensor list")),
    };
    vectors(rw, &tensors)?;
    if tensors.len() == 1 {
        return Ok(vec![rw.op("aten.alias.default", vec![("self", A::T(tensors[0]))])?]);
    }
    let grids = meshgrid(rw, &tensors)?;
    let flat = grids.into_iter().map(|g| flatten(rw, g)).collect::<Result<Vec<_>, _>>()?;
    Ok(vec![stack(rw, flat, 1)?])
}

/// `C(n, r)` as ATen's `compute_binomial_coeff` builds it on sizes: `result * (n - i) / (i + 1)`.
fn binomial(rw: &mut Rw, n: SymIntArg, r: i64, with_replacement: bool) -> Result<SymIntArg, RuleError> {
    let n = if with_replacement { rw.sym_arith("add", n, r - 1)? } else { n };
    let mut result = SymIntArg::Int(1);
    for i in 0..r {
        let m = rw.sym_arith("sub", n.clone(), i)?;
        result = rw.product(vec![result, m])?;
        result = rw.sym_arith("floordiv", result, i + 1)?;
    }
    Ok(result)
}

pub fn combinations(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    vectors(rw, &[x])?;
    let r = rw.int("r", Some(2))?;
    let with_replacement = rw.bool("with_replacement", false)?;
    if r < 0 {
        return Err(arg_err("r", format!("expected a non-negative number, got {r}")));
    }
    let dtype = rw.meta(x)?.dtype;
    if r == 0 {
        let args = vec![("size", A::Is(vec![0])), ("dtype", A::Raw(Arg::ScalarType(dtype)))];
        return Ok(vec![rw.op("aten.empty.memory_format", args)?]);
    }
    let n = rw.size(x, 0)?;
    let count = binomial(rw, n.clone(), r, with_replacement)?;
    if matches!(count, SymIntArg::Int(c) if c < 0) {
        return Err(arg_err("r", "more elements chosen than there are"));
    }
    let copies = vec![x; r as usize];
    let grids = meshgrid(rw, &copies)?;

    // The mask of increasing index tuples (`_triu_mask`).
    let range = rw.op("aten.arange.default", vec![("end", size_arg(n)), ("dtype", A::Raw(Arg::ScalarType(DType::I64)))])?;
    let index_grids = meshgrid(rw, &vec![range; r as usize])?;
    let shape = build::sizes(rw, index_grids[0])?;
    let full = vec![("size", A::Sizes(shape)), ("fill_value", A::B(true)), ("dtype", A::Raw(Arg::ScalarType(DType::Bool)))];
    let mut mask = rw.op("aten.full.default", full)?;
    let order = if with_replacement { "aten.le.Tensor" } else { "aten.lt.Tensor" };
    for w in index_grids.windows(2) {
        let inc = binary(rw, order, w[0], A::T(w[1]))?;
        mask = binary(rw, "aten.mul.Tensor", mask, A::T(inc))?;
    }

    // Where the kept points are: the k-th kept one is where the running count first reaches k.
    let flat_mask = flatten(rw, mask)?;
    let running = rw.op("aten.cumsum.default", vec![("self", A::T(flat_mask)), ("dim", A::I(0))])?;
    let end = match count {
        SymIntArg::Int(c) => A::I(c + 1),
        c => size_arg(rw.sym_arith("add", c, 1)?),
    };
    let ranks = rw.op("aten.arange.start_step", vec![("start", A::I(1)), ("end", end), ("step", A::I(1))])?;
    let at = rw.op("aten.searchsorted.Tensor", vec![("sorted_sequence", A::T(running)), ("self", A::T(ranks))])?;
    let mut columns = Vec::with_capacity(grids.len());
    for g in grids {
        let flat = flatten(rw, g)?;
        let picked = rw.op("aten.index.Tensor", vec![("self", A::T(flat)), ("indices", A::Raw(Arg::OptionalTensors(vec![Some(at)])))])?;
        columns.push(picked);
    }
    Ok(vec![stack(rw, columns, 1)?])
}
