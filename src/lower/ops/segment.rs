//! `segment_reduce`: each output element folds its segment of the segmented axis, a loop whose
//! bounds come from `lengths` (the segment starts after the lengths before it, a sum over them)
//! or `offsets` (`offsets[s]..offsets[s + 1]`). Maxima and minima are state loops with ATen's
//! NaN rule; reads outside the axis (only inconsistent lengths with `unsafe`) are masked.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty};
use super::super::LowerError;
use super::conv::{constant, in_range, read_masked};
use crate::exec::ops::segment::SegmentOp;
use crate::ir::Node;

type R = Result<ExprId, LowerError>;

pub fn segment_reduce(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let data = cx.tensor(node, "data")?;
    let reduce = cx.str_or(node, "reduce", "")?;
    let op = SegmentOp::parse(reduce).ok_or_else(|| cx.err(node, format!("unknown reduction `{reduce}`")))?;
    let (seg, offsets) = match (cx.opt_tensor(node, "lengths"), cx.opt_tensor(node, "offsets")) {
        (Some(l), _) => (l, false),
        (None, Some(o)) => (o, true),
        (None, None) => return Err(cx.err(node, "segments given by `indices` (ATen has that unimplemented too)")),
    };
    let ty = match super::pointwise::out_ty(cx, node)? {
        t @ (Ty::F32 | Ty::F64) => t,
        t => return Err(cx.err(node, format!("segment_reduce of {t:?} data (it takes floats)"))),
    };
    let axis = cx.sizes(seg)?.len().checked_sub(1).ok_or_else(|| cx.err(node, "0-dim segment lengths"))?;
    let ds = cx.ksizes(data)?;
    if axis >= ds.len() || idx.len() != ds.len() {
        return Err(cx.err(node, "the segmented axis is not a dim of the data"));
    }
    let s = idx[axis];
    let mut at = idx[..axis].to_vec();
    at.push(s);
    let (start, len) = if offsets {
        let start = cx.read(seg, &at)?;
        let one = cx.kb.i64(1);
        at[axis] = cx.kb.binary(BinOp::Add, s, one)?;
        let end = cx.read(seg, &at)?;
        (start, cx.kb.binary(BinOp::Sub, end, start)?)
    } else {
        let len = cx.read(seg, &at)?;
        let var = cx.kb.fresh_var()?;
        at[axis] = cx.kb.var(var);
        let before = cx.read(seg, &at)?;
        (cx.kb.reduce(RedOp::Sum, var, s, before)?, len)
    };
    let (start, len) = (cx.kb.cast(start, Ty::I64), cx.kb.cast(len, Ty::I64));
    let var = cx.kb.fresh_var()?;
    let j = cx.kb.var(var);
    let pos = cx.kb.binary(BinOp::Add, start, j)?;
    let inside = in_range(cx, pos, ds[axis])?;
    let mut x_at = idx.to_vec();
    x_at[axis] = pos;
    let zero = constant(cx, 0.0, ty);
    let x = read_masked(cx, data, &x_at, inside, zero)?;
    let initial = match cx.opt_number(node, "initial")? {
        Some(v) => Some(cx.kb.cast(v, ty)),
        None => None,
    };
    let start_value = match initial {
        Some(v) => v,
        None => constant(cx, op.identity(), ty),
    };
    let nan_value = constant(cx, f64::NAN, ty);
    let kb = &mut cx.kb;
    let zero_i = kb.i64(0);
    let n = kb.binary(BinOp::Max, len, zero_i)?;
    let acc = match op {
        SegmentOp::Sum | SegmentOp::Mean | SegmentOp::Prod => {
            let red = if op == SegmentOp::Prod { RedOp::Prod } else { RedOp::Sum };
            let folded = kb.reduce(red, var, n, x)?;
            let bin = if op == SegmentOp::Prod { BinOp::Mul } else { BinOp::Add };
            kb.binary(bin, start_value, folded)?
        }
        SegmentOp::Max | SegmentOp::Min => {
            let a = kb.carried(var, 0, ty);
            let better = if op == SegmentOp::Max { kb.cmp(CmpOp::Lt, a, x)? } else { kb.cmp(CmpOp::Lt, x, a)? };
            let kept = kb.select(better, x, a)?;
            let nan = kb.cmp(CmpOp::Ne, x, x)?;
            let next = kb.select(nan, x, kept)?;
            kb.iterate(var, n, vec![start_value], vec![next])?[0]
        }
    };
    if op != SegmentOp::Mean {
        return Ok(acc);
    }
    // An empty segment without `initial` is NaN; a NaN sum stays; others divide by the length.
    let empty = kb.cmp(CmpOp::Le, len, zero_i)?;
    let nf = kb.cast(n, ty);
    let mean = kb.binary(BinOp::Div, acc, nf)?;
    let nan = kb.cmp(CmpOp::Ne, acc, acc)?;
    let mean = kb.select(nan, acc, mean)?;
    let empty_value = if initial.is_some() { acc } else { nan_value };
    Ok(kb.select(empty, empty_value, mean)?)
}
