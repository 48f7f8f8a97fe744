//! Embedding tables read as bags and written as gradients, as gathers over the index list:
//! `embedding_dense_backward` (each weight row sums the gradients of the positions holding its
//! index) and `_embedding_bag` (each bag folds the rows of the positions between its offsets),
//! with CPU ATen's auxiliary outputs as the interpreter documents them (`exec::ops::embed`).
//! Rows are read at loaded indices under a mask, so a bad index never reads out of bounds.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty};
use super::super::LowerError;
use super::conv::{constant, in_range};
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

/// `_embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
/// per_sample_weights, include_last_offset, padding_idx)` (and `embedding_bag.padding_idx`):
/// output 0 the bags `[B, D]`, 1 `offset2bag`, 2 `bag_size`, 3 `max_indices`.
pub fn embedding_bag(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let (w, ix, off) = (cx.tensor(node, "weight")?, cx.tensor(node, "indices")?, cx.tensor(node, "offsets")?);
    let (ws, is, os) = (cx.ksizes(w)?, cx.ksizes(ix)?, cx.ksizes(off)?);
    if ws.len() != 2 || is.len() != 1 || os.len() != 1 {
        return Err(cx.err(node, "_embedding_bag takes a 2-D weight and 1-D indices and offsets"));
    }
    let mode = cx.int_or(node, "mode", 0)?;
    if !(0..=2).contains(&mode) {
        return Err(cx.err(node, format!("mode {mode} is not 0 (sum), 1 (mean) or 2 (max)")));
    }
    let pad = cx.int_or(node, "padding_idx", -1)?;
    let last = cx.bool_or(node, "include_last_offset", false)?;
    let ty = Ty::I64;
    let (n_rows, len, n_off) = (ws[0], is[0], os[0]);
    let (zero, one) = (cx.kb.i64(0), cx.kb.i64(1));
    let index_at = |cx: &mut Ctx<'_>, k: ExprId| -> R {
        let v = cx.read(ix, &[k])?;
        Ok(cx.kb.cast(v, Ty::I64))
    };
    // offset2bag[k]: how many bag starts after the first lie at or before k.
    if out == 1 {
        if cx.sizes(node.outputs[1])?.first().and_then(|s| s.as_int()) == Some(0) {
            // CPU ATen's sum fast path leaves it empty: nothing is stored.
            return Ok(zero);
        }
        let bags = if last { cx.kb.binary(BinOp::Sub, n_off, one)? } else { n_off };
        let v = cx.kb.fresh_var()?;
        let b = cx.kb.var(v);
        let b1 = cx.kb.binary(BinOp::Add, b, one)?;
        let inside = cx.kb.cmp(CmpOp::Lt, b1, bags)?;
        let s = cx.masked(inside, |cx| cx.read(off, &[b1]))?;
        let s = cx.kb.cast(s, Ty::I64);
        let before = cx.kb.cmp(CmpOp::Le, s, idx[0])?;
        let hit = cx.kb.and(inside, before)?;
        let hit = cx.kb.cast(hit, Ty::I64);
        let rest = cx.kb.binary(BinOp::Sub, n_off, one)?;
        return Ok(cx.kb.reduce(RedOp::Sum, v, rest, hit)?);
    }
    let b = idx[0];
    let start = cx.read(off, &[b])?;
    let start = cx.kb.cast(start, Ty::I64);
    let b1 = cx.kb.binary(BinOp::Add, b, one)?;
    let has_next = cx.kb.cmp(CmpOp::Lt, b1, n_off)?;
    let next = cx.masked(has_next, |cx| cx.read(off, &[b1]))?;
    let next = cx.kb.cast(next, Ty::I64);
    let end = cx.kb.select(has_next, next, len)?;
    // Position k of the index list is in the bag, and not the padding index.
    let member = |cx: &mut Ctx<'_>, k: ExprId| -> R {
        let lo = cx.kb.cmp(CmpOp::Ge, k, start)?;
        let hi = cx.kb.cmp(CmpOp::Lt, k, end)?;
        let m = cx.kb.and(lo, hi)?;
        if pad < 0 {
            return Ok(m);
        }
        let r = index_at(cx, k)?;
        let p = cx.kb.i64(pad);
        let np = cx.kb.cmp(CmpOp::Ne, r, p)?;
        Ok(cx.kb.and(m, np)?)
    };
    let count = {
        let v = cx.kb.fresh_var()?;
        let k = cx.kb.var(v);
        let m = member(cx, k)?;
        let m = cx.kb.cast(m, ty);
        cx.kb.reduce(RedOp::Sum, v, len, m)?
    };
    if out == 2 || (out == 3 && mode != 2) {
        return Ok(if mode == 0 { zero } else { count });
    }
    let vty = super::pointwise::out_ty(cx, node)?;
    let j = *idx.get(1).ok_or_else(|| cx.err(node, "bags are [B, D]"))?;
    // Row `k`'s element j, scaled by its per-sample weight: read where `m` holds.
    let element = |cx: &mut Ctx<'_>, k: ExprId, m: ExprId| -> R {
        let r = index_at(cx, k)?;
        let ok = in_range(cx, r, n_rows)?;
        let ok = cx.kb.and(ok, m)?;
        let x = cx.masked(ok, |cx| cx.read(w, &[r, j]))?;
        let mut x = cx.kb.cast(x, vty);
        if let Some(psw) = cx.opt_tensor(node, "per_sample_weights") {
            let s = cx.read(psw, &[k])?;
            let s = cx.kb.cast(s, vty);
            x = cx.kb.binary(BinOp::Mul, x, s)?;
        }
        Ok(x)
    };
    let fz = constant(cx, 0.0, vty);
    let empty = cx.kb.cmp(CmpOp::Eq, count, zero)?;
    if mode != 2 {
        let v = cx.kb.fresh_var()?;
        let k = cx.kb.var(v);
        let m = member(cx, k)?;
        let x = element(cx, k, m)?;
        let x = cx.kb.select(m, x, fz)?;
        let s = cx.kb.reduce(RedOp::Sum, v, len, x)?;
        if mode == 0 {
            return Ok(s);
        }
        let c = cx.kb.binary(BinOp::Max, count, one)?;
        let c = cx.kb.cast(c, vty);
        let mean = cx.kb.binary(BinOp::Div, s, c)?;
        return Ok(cx.kb.select(empty, fz, mean)?);
    }
    let ninf = constant(cx, f64::NEG_INFINITY, vty);
    let best = {
        let v = cx.kb.fresh_var()?;
        let k = cx.kb.var(v);
        let m = member(cx, k)?;
        let x = element(cx, k, m)?;
        let x = cx.kb.select(m, x, ninf)?;
        cx.kb.reduce(RedOp::Max, v, len, x)?
    };
    if out == 0 {
        return Ok(cx.kb.select(empty, fz, best)?);
    }
    // The weight row of the bag's first maximum.
    let v = cx.kb.fresh_var()?;
    let k = cx.kb.var(v);
    let m = member(cx, k)?;
    let x = element(cx, k, m)?;
    let eq = cx.kb.cmp(CmpOp::Eq, x, best)?;
    let hit = cx.kb.and(m, eq)?;
    let none = cx.kb.i64(i64::MAX);
    let at = cx.kb.select(hit, k, none)?;
    let first = cx.kb.reduce(RedOp::Min, v, len, at)?;
    let found = cx.kb.cmp(CmpOp::Lt, first, len)?;
    let safe = cx.kb.select(found, first, zero)?;
    let row = cx.masked(found, |cx| index_at(cx, safe))?;
    Ok(cx.kb.select(found, row, zero)?)
}
