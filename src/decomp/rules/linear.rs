//! `linear` and `matmul` as ATen's C++ bodies trace (`LinearAlgebra.cpp`, `Linear.cpp`):
//!
//! - `linear`: a 2-D input with a bias is `addmm(b, x, Wᵀ)`; a contiguous input with a bias has
//!   its leading dims flattened (`view`, `addmm`, `view` back); anything else is `matmul(x, Wᵀ)`
//!   and the bias added.
//! - `matmul`: 2-D × 2-D is `mm`; a batch of rows times a matrix is folded into one `mm` (`view`,
//!   `mm`, `view` back) when its leading dims merge without a copy or the matrix requires grad
//!   (then the rows are copied first where no view merges them); otherwise both operands are
//!   `expand`ed to the broadcast batch shape, reshaped to 3-D, multiplied with `bmm` and viewed back.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{SymIntArg, ValueId};
use crate::sym::Expr;

pub fn linear(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("input")?;
    let w = rw.t("weight")?;
    let b = rw.opt_t("bias")?;
    let rank = rw.rank(x)?;
    if rank == 0 || rw.rank(w)? != 2 {
        return Err(RuleError::Unsupported("linear expects input of rank >= 1 and a 2-D weight".into()));
    }
    let wt = rw.op("aten.permute.default", vec![("self", A::T(w)), ("dims", A::Is(vec![1, 0]))])?;
    match b {
        Some(b) if rank == 2 => Ok(vec![rw.op("aten.addmm.default", vec![("self", A::T(b)), ("mat1", A::T(x)), ("mat2", A::T(wt))])?]),
        Some(b) if super::view::is_contiguous(rw.meta(x)?) && rw.rank(b)? == 1 => flatten_nd(rw, x, wt, b, rank),
        _ => {
            // `matmul`'s own rule (this table's) expands it further.
            let y = rw.op("aten.matmul.default", vec![("self", A::T(x)), ("other", A::T(wt))])?;
            match b {
                Some(b) => Ok(vec![rw.op("aten.add.Tensor", vec![("self", A::T(y)), ("other", A::T(b))])?]),
                None => Ok(vec![y]),
            }
        }
    }
}

/// `_flatten_nd_linear`: `[*, K]` viewed as `[prod(*), K]`, `addmm`, viewed back to `[*, N]`.
fn flatten_nd(rw: &mut Rw, x: ValueId, wt: ValueId, b: ValueId, rank: usize) -> Result<Vec<ValueId>, RuleError> {
    let lead: Vec<SymIntArg> = (0..rank - 1).map(|d| rw.size(x, d)).collect::<Result<_, _>>()?;
    let rows = rw.product(lead.clone())?;
    let k = rw.size(x, rank - 1)?;
    let x2 = rw.op("aten.view.default", vec![("self", A::T(x)), ("size", A::Sizes(vec![rows, k]))])?;
    let y = rw.op("aten.addmm.default", vec![("self", A::T(b)), ("mat1", A::T(x2)), ("mat2", A::T(wt))])?;
    let mut out_size = lead;
    out_size.push(rw.size(y, 1)?);
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

/// `matmul` of operands of rank 2 or more (ATen's `_matmul_impl`); a 1-D operand (`dot`, `mv`)
/// stays whole: the interpreter and the kernels run `matmul` itself.
pub fn matmul(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (a, b) = (rw.t("self")?, rw.t("other")?);
    let (ra, rb) = (rw.rank(a)?, rw.rank(b)?);
    if ra < 2 || rb < 2 {
        return Err(RuleError::Declined);
    }
    if ra == 2 && rb == 2 {
        return Ok(vec![rw.op("aten.mm.default", vec![("self", A::T(a)), ("mat2", A::T(b))])?]);
    }
    if ra >= 3 && rb == 2 && folds(rw, a, b)? {
        let lead: Vec<SymIntArg> = (0..ra - 1).map(|d| rw.size(a, d)).collect::<Result<_, _>>()?;
        let rows = rw.product(lead.clone())?;
        let k = rw.size(a, ra - 1)?;
        // A `reshape`: a copy where the rows do not merge into a view (folded for the gradient).
        let a2 = super::view::view_of(rw, a, vec![rows, k])?;
        let y = rw.op("aten.mm.default", vec![("self", A::T(a2)), ("mat2", A::T(b))])?;
        let mut out = lead;
        out.push(rw.size(b, 1)?);
        return Ok(vec![rw.op("aten.view.default", vec![("self", A::T(y)), ("size", A::Sizes(out))])?]);
    }
    // The batch dims broadcast, aligned from the right; a size-1 dim takes the other's size.
    let nb = ra.max(rb) - 2;
    let mut lead = Vec::with_capacity(nb);
    for i in 0..nb {
        let da = (i + ra).checked_sub(nb + 2);
        let db = (i + rb).checked_sub(nb + 2);
        let one = |t: ValueId, d: usize, rw: &Rw| rw.meta(t).map(|m| m.sizes[d].as_int() == Some(1));
        lead.push(match (da, db) {
            (Some(da), Some(db)) if one(a, da, rw)? => rw.size(b, db)?,
            (Some(da), _) => rw.size(a, da)?,
            (None, Some(db)) => rw.size(b, db)?,
            (None, None) => return Err(RuleError::Declined),
        });
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

/// ATen's `should_fold` for a batch of rows `a` (rank ≥ 3) times a matrix `b`: `b` requires grad
/// (then torch folds, with a copy if need be, rather than have the backward build the large
/// `[batch, k, n]` gradient of `bmm`: HaloNet's relative-position matmuls, `bmm` here where
/// torch has `mm`), or the leading dims of `a` merge into one without a copy,
/// `stride[i] == stride[i + 1] * size[i + 1]` for each of them.
fn folds(rw: &Rw, a: ValueId, b: ValueId) -> Result<bool, RuleError> {
    if rw.requires_grad(b) {
        return Ok(true);
    }
    let m = rw.meta(a)?;
    let r = m.sizes.len();
    Ok((0..r - 2).all(|i| super::view::same_size(&m.strides[i], &Expr::mul(m.strides[i + 1].clone(), m.sizes[i + 1].clone()))))
}
