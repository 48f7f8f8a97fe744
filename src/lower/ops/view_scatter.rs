//! The scatters into views: `select_scatter`, `slice_scatter`, `diagonal_scatter`. The output
//! is `self` with the view's elements replaced by `src`'s; each element checks whether it lies
//! in the view and reads `src` at its position there (clamped in range when it does not, so no
//! load leaves a buffer).

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, ExprId};
use super::super::LowerError;
use super::pointwise::arg;
use crate::ir::{Arg, Node};

type R = Result<ExprId, LowerError>;

fn dim(cx: &Ctx<'_>, node: &Node, name: &str, default: i64, rank: usize) -> Result<usize, LowerError> {
    let d = cx.int_or(node, name, default)?;
    Ok(wrap_dims(&[d], rank).map_err(|m| cx.err(node, m))?[0])
}

/// `inside ? src[at] : self[idx]`, both in the output's compute type.
fn pick(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], inside: ExprId, at: &[ExprId]) -> R {
    let ty = super::pointwise::out_ty(cx, node)?;
    let src = cx.tensor(node, "src")?;
    let s = cx.read(src, at)?;
    let s = cx.kb.cast(s, ty);
    let x = arg(cx, node, "self", idx)?;
    Ok(cx.kb.select(inside, s, x)?)
}

/// `select_scatter(self, src, dim, index)`.
pub fn select_scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let d = dim(cx, node, "dim", 0, idx.len())?;
    let n = cx.sizes(cx.tensor(node, "self")?)?[d].as_int().ok_or_else(|| cx.err(node, "select_scatter needs a static dim"))?;
    let i = cx.int_or(node, "index", 0)?;
    let i = cx.kb.i64(if i < 0 { i + n } else { i });
    let inside = cx.kb.cmp(CmpOp::Eq, idx[d], i)?;
    let mut at = idx.to_vec();
    at.remove(d);
    pick(cx, node, idx, inside, &at)
}

/// `slice_scatter(self, src, dim, start, end, step)`.
pub fn slice_scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let d = dim(cx, node, "dim", 0, idx.len())?;
    let n = cx.sizes(cx.tensor(node, "self")?)?[d].as_int().ok_or_else(|| cx.err(node, "slice_scatter needs a static dim"))?;
    let clamp = |v: i64| (if v < 0 { v + n } else { v }).clamp(0, n);
    let bound = |name: &str, default: i64| -> Result<i64, LowerError> {
        match node.arg(name) {
            None | Some(Arg::None) => Ok(default),
            _ => cx.int_or(node, name, default),
        }
    };
    let (start, end) = (clamp(bound("start", 0)?), clamp(bound("end", n)?));
    let step = cx.int_or(node, "step", 1)?.max(1);
    let count = if end > start { (end - start + step - 1) / step } else { 0 };
    if count == 0 {
        return arg(cx, node, "self", idx);
    }
    let kb = &mut cx.kb;
    let (s, k, zero) = (kb.i64(start), kb.i64(step), kb.i64(0));
    let rel = kb.binary(BinOp::Sub, idx[d], s)?;
    let q = kb.binary(BinOp::Div, rel, k)?;
    let r = kb.binary(BinOp::Rem, rel, k)?;
    let ge = kb.cmp(CmpOp::Ge, rel, zero)?;
    let last = kb.i64(count);
    let lt = kb.cmp(CmpOp::Lt, q, last)?;
    let on = kb.cmp(CmpOp::Eq, r, zero)?;
    let inside = kb.and(ge, lt)?;
    let inside = kb.and(inside, on)?;
    let pos = kb.select(inside, q, zero)?;
    let mut at = idx.to_vec();
    at[d] = pos;
    pick(cx, node, idx, inside, &at)
}

/// `diagonal_scatter(self, src, offset, dim1, dim2)`: `src`'s last dim is the diagonal, its
/// other dims the remaining dims of `self` in order.
pub fn diagonal_scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let rank = idx.len();
    let (d1, d2) = (dim(cx, node, "dim1", 0, rank)?, dim(cx, node, "dim2", 1, rank)?);
    let offset = cx.int_or(node, "offset", 0)?;
    let src = cx.tensor(node, "src")?;
    if cx.sizes(src)?.iter().any(|s| s.as_int() == Some(0)) {
        return arg(cx, node, "self", idx);
    }
    let kb = &mut cx.kb;
    let diff = kb.binary(BinOp::Sub, idx[d2], idx[d1])?;
    let off = kb.i64(offset);
    let inside = kb.cmp(CmpOp::Eq, diff, off)?;
    let zero = kb.i64(0);
    let pos = kb.select(inside, if offset >= 0 { idx[d1] } else { idx[d2] }, zero)?;
    let mut at: Vec<ExprId> = idx.iter().enumerate().filter(|(d, _)| *d != d1 && *d != d2).map(|(_, i)| *i).collect();
    at.push(pos);
    pick(cx, node, idx, inside, &at)
}
