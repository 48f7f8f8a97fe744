//! Core ops whose natural form scatters, written as gathers so each output element is one
//! work-item: the max-pooling gradient (sum of the output gradients whose argmax is this
//! element).

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp};
use super::super::LowerError;
use crate::ir::Node;

/// `max_pool2d_with_indices_backward`: `grad_input[.., h, w] = Σ grad_output[.., i, j]` over the
/// output positions whose recorded index is `h·W + w`.
pub fn max_pool_backward(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let (g, ind, x) = (cx.tensor(node, "grad_output")?, cx.tensor(node, "indices")?, cx.tensor(node, "self")?);
    let (gs, xs) = (cx.ksizes(g)?, cx.ksizes(x)?);
    let r = idx.len();
    if r < 3 || gs.len() != r || xs.len() != r {
        return Err(cx.err(node, "max-pool gradient needs inputs of rank 3 or 4"));
    }
    let here = cx.kb.binary(BinOp::Mul, idx[r - 2], xs[r - 1])?;
    let here = cx.kb.binary(BinOp::Add, here, idx[r - 1])?;
    let (vi, vj) = (cx.kb.fresh_var()?, cx.kb.fresh_var()?);
    let mut at = idx[..r - 2].to_vec();
    at.push(cx.kb.var(vi));
    at.push(cx.kb.var(vj));
    let i = cx.read(ind, &at)?;
    let gv = cx.read(g, &at)?;
    let hit = cx.kb.cmp(CmpOp::Eq, i, here)?;
    let zero = cx.kb.float_like(0.0, gv);
    let body = cx.kb.select(hit, gv, zero)?;
    let acc = cx.kb.reduce(RedOp::Sum, vj, gs[r - 1], body)?;
    Ok(cx.kb.reduce(RedOp::Sum, vi, gs[r - 2], acc)?)
}
