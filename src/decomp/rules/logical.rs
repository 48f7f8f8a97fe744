//! `all` as torch's decomposition (`torch._refs.all`, in export's and Inductor's tables) writes it:
//! `logical_not(any(logical_not(a), dim, keepdim))`. The traced table holds float inputs only
//! (its samples), so a boolean mask's `all(dim)` (LASR's attention masks) matched no trace and
//! stayed whole.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, DType, ValueId};

pub fn all(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    // torch casts the result back to uint8 for a uint8 input: another graph, not written here.
    if rw.meta(x)?.dtype == DType::U8 {
        return Err(RuleError::Declined);
    }
    let keepdim = rw.bool("keepdim", false)?;
    let not = rw.op("aten.logical_not.default", vec![("self", A::T(x))])?;
    let any = match rw.target() {
        "aten.all.dim" => {
            let d = rw.int("dim", None)?;
            rw.op("aten.any.dim", vec![("self", A::T(not)), ("dim", A::I(d)), ("keepdim", A::B(keepdim))])?
        }
        _ => {
            let dims = rw.passthrough("dim")?.unwrap_or(Arg::None);
            rw.op("aten.any.dims", vec![("self", A::T(not)), ("dim", A::Raw(dims)), ("keepdim", A::B(keepdim))])?
        }
    };
    Ok(vec![rw.op("aten.logical_not.default", vec![("self", A::T(any))])?])
}
