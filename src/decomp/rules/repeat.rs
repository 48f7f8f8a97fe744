//! `repeat_interleave(self, repeats: int, dim)`, as ATen's CompositeImplicitAutograd body
//! (`repeat_interleave_symint` in `aten/src/ATen/native/Repeat.cpp`) traces: `unsqueeze(dim + 1)`,
//! `expand` with `repeats` at `dim + 1`, a contiguous `clone`, and the `flatten(dim, dim + 1)`
//! as a `view` whose merged size is `size(dim) * repeats`. torch 2.11 and 2.15 export it so under
//! `run_decompositions()` and Inductor's table alike (grouped-query attention's key/value repeat).
//! The traced table holds the body for `repeats = 1` and no `dim` only (its samples), so the
//! rule is written from the C++ body; without a `dim` a vector is repeated along dim 0, and
//! a tensor of another rank is flattened first, which stays the traces' case. `tile` is
//! `repeat` with its dims padded to the rank.

use super::build::{expand, sizes, unsqueeze, view};
use super::view::contiguous_clone;
use super::{dim, Rw};
use crate::decomp::RuleError;
use crate::ir::{Arg, SymIntArg, ValueId};

pub fn repeat_interleave_int(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let rank = rw.rank(x)?;
    let d = match rw.passthrough("dim")? {
        Some(Arg::Int(i)) | Some(Arg::SymInt(SymIntArg::Int(i))) => i,
        // `self.flatten()` is `self` for a vector; of any other rank it is a `view` whose
        // spelling (`sym_numel` against a product of sizes) the traces hold.
        None | Some(Arg::None) if rank == 1 => 0,
        None | Some(Arg::None) => return super::traced::expand(rw),
        Some(a) => return Err(RuleError::Arg { name: "dim".into(), message: format!("expected an int, found {a:?}") }),
    };
    let repeats = match rw.passthrough("repeats")? {
        Some(Arg::Int(i)) => SymIntArg::Int(i),
        Some(Arg::SymInt(s)) => s,
        a => return Err(RuleError::Arg { name: "repeats".into(), message: format!("expected a SymInt, found {a:?}") }),
    };
    if matches!(repeats, SymIntArg::Int(r) if r < 0) {
        return Err(RuleError::Arg { name: "repeats".into(), message: "Repeats can not be negative".into() });
    }
    let d = dim(d, rank, "dim")?;
    let shape = sizes(rw, x)?;
    let u = unsqueeze(rw, x, d as i64 + 1)?;
    let mut wide = shape.clone();
    wide.insert(d + 1, repeats.clone());
    let e = expand(rw, u, wide)?;
    let c = contiguous_clone(rw, e)?;
    let mut flat = shape;
    flat[d] = rw.product(vec![flat[d].clone(), repeats])?;
    Ok(vec![view(rw, c, flat)?])
}

/// `tile(self, dims)`, ATen's composite body: `repeat` with `dims` padded by leading 1s to the
/// input's rank (DINOv3's patch coordinates).
pub fn tile(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let mut reps = match rw.passthrough("dims")? {
        Some(Arg::Ints(v)) => v.into_iter().map(SymIntArg::Int).collect::<Vec<_>>(),
        Some(Arg::SymInts(v)) => v,
        a => return Err(RuleError::Arg { name: "dims".into(), message: format!("expected an int list, found {a:?}") }),
    };
    let rank = rw.rank(x)?;
    if rank > reps.len() {
        let mut padded = vec![SymIntArg::Int(1); rank - reps.len()];
        padded.append(&mut reps);
        reps = padded;
    }
    Ok(vec![rw.op("aten.repeat.default", vec![("self", super::A::T(x)), ("repeats", super::A::Sizes(reps))])?])
}
