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
    if rank == 3 && !super::view::is_contiguous(rw.meta(x)?) {
        return batched(rw, x, w, wt, b);
    }
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

/// A 3-D input that is not contiguous goes through `matmul` (ATen's `linear` flattens only
/// contiguous 3-D inputs): both operands `expand`ed and `view`ed to 3-D, `bmm`, `view`, and the
/// bias added.
fn batched(rw: &mut Rw, x: ValueId, w: ValueId, wt: ValueId, b: Option<ValueId>) -> Result<Vec<ValueId>, RuleError> {
    let (bs, l, k, n) = (rw.size(x, 0)?, rw.size(x, 1)?, rw.size(x, 2)?, rw.size(w, 0)?);
    let x3 = rw.op("aten.expand.default", vec![("self", A::T(x)), ("size", A::Sizes(vec![bs.clone(), l.clone(), k.clone()]))])?;
    let x3 = rw.op("aten.view.default", vec![("self", A::T(x3)), ("size", A::Sizes(vec![bs.clone(), l.clone(), k.clone()]))])?;
    let w3 = rw.op("aten.expand.default", vec![("self", A::T(wt)), ("size", A::Sizes(vec![bs.clone(), k.clone(), n.clone()]))])?;
    let w3 = rw.op("aten.view.default", vec![("self", A::T(w3)), ("size", A::Sizes(vec![bs.clone(), k, n.clone()]))])?;
    let y = rw.op("aten.bmm.default", vec![("self", A::T(x3)), ("mat2", A::T(w3))])?;
    let mut y = rw.op("aten.view.default", vec![("self", A::T(y)), ("size", A::Sizes(vec![bs, l, n]))])?;
    if let Some(b) = b {
        y = rw.op("aten.add.Tensor", vec![("self", A::T(y)), ("other", A::T(b))])?;
    }
    Ok(vec![y])
}

/// `t` of a 2-D tensor is `permute([1, 0])`; of 0/1-D tensors the identity.
pub fn t(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    if rw.rank(x)? < 2 {
        return Ok(vec![rw.op("aten.alias.default", vec![("self", A::T(x))])?]);
    }
    Ok(vec![rw.op("aten.permute.default", vec![("self", A::T(x)), ("dims", A::Is(vec![1, 0]))])?])
}

/// `matmul` as ATen computes it for the shapes export leaves: 2-D × 2-D is `mm`; batched operands
/// of one rank (≥ 3) are `expand`ed to the broadcast batch shape, reshaped to 3-D (a `view`, with
/// a `clone` first where no view exists), multiplied with `bmm` and viewed back.
pub fn matmul(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (a, b) = (rw.t("self")?, rw.t("other")?);
    let (ra, rb) = (rw.rank(a)?, rw.rank(b)?);
    if ra == 2 && rb == 2 {
        return Ok(vec![rw.op("aten.mm.default", vec![("self", A::T(a)), ("mat2", A::T(b))])?]);
    }
    if ra < 3 || ra != rb {
        // Other ranks stay whole (the interpreter and the kernels run `matmul` itself).
        return Err(RuleError::Declined);
    }
    let mut lead = Vec::with_capacity(ra - 2);
    for d in 0..ra - 2 {
        let a_one = rw.meta(a)?.sizes[d].as_int() == Some(1);
        lead.push(if a_one { rw.size(b, d)? } else { rw.size(a, d)? });
    }
    let batch = rw.product(lead.clone())?;
    let (m, k, n) = (rw.size(a, ra - 2)?, rw.size(a, ra - 1)?, rw.size(b, rb - 1)?);
    let shaped = |last: [SymIntArg; 2]| -> Vec<SymIntArg> { lead.iter().cloned().chain(last).collect() };
    let ae = rw.op("aten.expand.default", vec![("self", A::T(a)), ("size", A::Sizes(shaped([m.clone(), k.clone()])))])?;
    let a3 = super::view::view_of(rw, ae, vec![batch.clone(), m.clone(), k.clone()])?;
    let be = rw.op("aten.expand.default", vec![("self", A::T(b)), ("size", A::Sizes(shaped([k.clone(), n.clone()])))])?;
    let b3 = super::view::view_of(rw, be, vec![batch, k, n.clone()])?;
    let y = rw.op("aten.bmm.default", vec![("self", A::T(a3)), ("mat2", A::T(b3))])?;
    Ok(vec![rw.op("aten.view.default", vec![("self", A::T(y)), ("size", A::Sizes(shaped([m, n])))])?])
}
