//! The view scatters: `select_scatter`, `slice_scatter`, `diagonal_scatter` write `src` over one
//! view of `self`, so each output element is a select between `self` and `src`.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId};
use super::super::LowerError;
use super::index::{bound_index, dim_of, within, Bound};
use super::scatter::base_of;
use crate::ir::Node;

type R = Result<ExprId, LowerError>;

/// `select_scatter(self, src, dim, index)`: `src` where `o[dim] == index`.
pub fn select_scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let src = cx.tensor(node, "src")?;
    let sizes = cx.sizes(v)?;
    let d = dim_of(cx, node, "dim", 0, sizes.len())?.ok_or_else(|| cx.err(node, "select_scatter needs a dim"))?;
    let i = cx.int_or(node, "index", 0)?;
    let i = cx.kb.i64(i);
    let i = bound_index(cx, i, &sizes[d], Bound::Wrap)?;
    let on = cx.kb.cmp(CmpOp::Eq, idx[d], i)?;
    let mut at = idx.to_vec();
    at.remove(d);
    let x = cx.read(src, &at)?;
    let x = cx.kb.cast(x, ty);
    Ok(cx.kb.select(on, x, base)?)
}

/// `slice_scatter(self, src, dim, start, end, step)`: `src` on `start, start+step, …` along
/// `dim` (start clamped as `slice` does; `src`'s extent ends the run).
pub fn slice_scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let src = cx.tensor(node, "src")?;
    let sizes = cx.sizes(v)?;
    let d = dim_of(cx, node, "dim", 0, sizes.len())?.ok_or_else(|| cx.err(node, "slice_scatter needs a dim"))?;
    let step = cx.int_or(node, "step", 1)?;
    if step < 1 {
        return Err(cx.err(node, "slice step must be positive"));
    }
    let start = cx.int_or(node, "start", 0)?;
    let n = cx.kb.size(&sizes[d]);
    let zero = cx.kb.i64(0);
    let s = cx.kb.i64(start);
    let start = if start < 0 { cx.kb.binary(BinOp::Add, s, n)? } else { s };
    let start = cx.kb.binary(BinOp::Max, start, zero)?;
    let start = cx.kb.binary(BinOp::Min, start, n)?;
    let t = cx.kb.binary(BinOp::Sub, idx[d], start)?;
    let step = cx.kb.i64(step);
    let k = cx.kb.binary(BinOp::Div, t, step)?;
    let r = cx.kb.binary(BinOp::Rem, t, step)?;
    let src_n = cx.sizes(src)?.get(d).cloned().ok_or_else(|| cx.err(node, "src must have self's rank"))?;
    let on = within(cx, k, &src_n)?;
    let nonneg = cx.kb.cmp(CmpOp::Ge, t, zero)?;
    let aligned = cx.kb.cmp(CmpOp::Eq, r, zero)?;
    let on = cx.kb.and(on, nonneg)?;
    let on = cx.kb.and(on, aligned)?;
    let mut at = idx.to_vec();
    at[d] = k;
    let x = cx.masked(on, |cx| cx.read(src, &at))?;
    let x = cx.kb.cast(x, ty);
    Ok(cx.kb.select(on, x, base)?)
}

/// `diagonal_scatter(self, src, offset, dim1, dim2)`: `src` on the diagonal `o[dim2] - o[dim1]
/// == offset`; `src`'s last dim runs along the diagonal.
pub fn diagonal_scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let src = cx.tensor(node, "src")?;
    let rank = cx.sizes(v)?.len();
    let d1 = dim_of(cx, node, "dim1", 0, rank)?.ok_or_else(|| cx.err(node, "diagonal_scatter needs two dims"))?;
    let d2 = dim_of(cx, node, "dim2", 1, rank)?.ok_or_else(|| cx.err(node, "diagonal_scatter needs two dims"))?;
    let offset = cx.int_or(node, "offset", 0)?;
    let off = cx.kb.i64(offset);
    let diff = cx.kb.binary(BinOp::Sub, idx[d2], idx[d1])?;
    let on = cx.kb.cmp(CmpOp::Eq, diff, off)?;
    let mut at: Vec<ExprId> = idx.iter().enumerate().filter(|(e, _)| *e != d1 && *e != d2).map(|(_, c)| *c).collect();
    at.push(if offset >= 0 { idx[d1] } else { idx[d2] });
    let x = cx.masked(on, |cx| cx.read(src, &at))?;
    let x = cx.kb.cast(x, ty);
    Ok(cx.kb.select(on, x, base)?)
}
