//! `embedding_dense_backward` as a gather over the index list: each weight row sums the
//! gradients of the positions holding its index (the bags are in `embedding_bag`).

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty};
use super::super::LowerError;
use super::conv::constant;
use crate::ir::Node;

type R = Result<ExprId, LowerError>;

/// `embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)`
/// at `[row, j]`.
pub fn embedding_dense_backward(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (g, ix) = (cx.tensor(node, "grad_output")?, cx.tensor(node, "indices")?);
    let isz = cx.sizes(ix)?;
    if idx.len() != 2 || cx.sizes(g)?.len() != isz.len() + 1 {
        return Err(cx.err(node, "grad_output must be the indices' shape with one more dim"));
    }
    let ty = super::pointwise::out_ty(cx, node)?;
    let (row, j) = (idx[0], idx[1]);
    let dims: Vec<usize> = (0..isz.len()).collect();
    let zero = cx.kb.i64(0);
    let base = vec![zero; isz.len()];
    let fz = constant(cx, 0.0, ty);
    let hit = |cx: &mut Ctx<'_>, i: &[ExprId]| -> R {
        let k = cx.read(ix, i)?;
        let k = cx.kb.cast(k, Ty::I64);
        Ok(cx.kb.cmp(CmpOp::Eq, k, row)?)
    };
    let mut sum = cx.reduce_dims(RedOp::Sum, &isz, &dims, &base, &mut |cx, i| {
        let h = hit(cx, i)?;
        let mut at = i.to_vec();
        at.push(j);
        let v = cx.read(g, &at)?;
        let v = cx.kb.cast(v, ty);
        Ok(cx.kb.select(h, v, fz)?)
    })?;
    if cx.bool_or(node, "scale_grad_by_freq", false)? {
        let n = cx.reduce_dims(RedOp::Sum, &isz, &dims, &base, &mut |cx, i| {
            let h = hit(cx, i)?;
            Ok(cx.kb.cast(h, Ty::I64))
        })?;
        let one = cx.kb.i64(1);
        let n = cx.kb.binary(BinOp::Max, n, one)?;
        let n = cx.kb.cast(n, ty);
        sum = cx.kb.binary(BinOp::Div, sum, n)?;
    }
    let pad = cx.int_or(node, "padding_idx", -1)?;
    if pad < 0 {
        return Ok(sum);
    }
    let p = cx.kb.i64(pad);
    let is_pad = cx.kb.cmp(CmpOp::Eq, row, p)?;
    Ok(cx.kb.select(is_pad, fz, sum)?)
}

