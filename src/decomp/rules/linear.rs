//! `linear` → `permute` + `addmm` (or `mm`), flattening leading dims with a `view` as
//! PyTorch does: `[*, K] @ W^T` is `addmm(b, view(x, [prod(*), K]), permute(W))` then `view` back.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{SymIntArg, ValueId};

pub fn linear(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("input")?;
    let w = rw.t("weight")?;
    let b = rw.opt_t("bias")?;
    let rank = rw.rank(x)?;
    if rank == 0 || rw.rank(w)? != 2 {
        return Err(RuleError::Unsupported("linear expects input of rank >= 1 and a 2-D weight".into()));
    }
    let wt = rw.op("aten.permute.default", vec![("self", A::T(w)), ("dims", A::Is(vec![1, 0]))])?;
    // Only inputs of rank > 2 need their leading dims flattened (and so their sizes read).
    let lead: Vec<SymIntArg> =
        if rank > 2 { (0..rank - 1).map(|d| rw.size(x, d)).collect::<Result<_, _>>()? } else { Vec::new() };
    let x2 = if rank > 2 {
        let rows = rw.product(lead.clone())?;
        let k = rw.size(x, rank - 1)?;
        rw.op("aten.view.default", vec![("self", A::T(x)), ("size", A::Sizes(vec![rows, k]))])?
    } else {
        x
    };
    let y = match b {
        Some(b) => rw.op("aten.addmm.default", vec![("self", A::T(b)), ("mat1", A::T(x2)), ("mat2", A::T(wt))])?,
        None => rw.op("aten.mm.default", vec![("self", A::T(x2)), ("mat2", A::T(wt))])?,
    };
    if rank <= 2 {
        return Ok(vec![y]);
    }
    let mut out_size = lead;
    out_size.push(rw.size(w, 0)?);
    Ok(vec![rw.op("aten.view.default", vec![("self", A::T(y)), ("size", A::Sizes(out_size))])?])
}

/// `t` of a 2-D tensor is `permute([1, 0])`; of 0/1-D tensors the identity.
pub fn t(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    if rw.rank(x)? < 2 {
        return Ok(vec![rw.op("aten.alias.default", vec![("self", A::T(x))])?]);
    }
    Ok(vec![rw.op("aten.permute.default", vec![("self", A::T(x)), ("dims", A::Is(vec![1, 0]))])?])
}
