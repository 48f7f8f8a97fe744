//! Binary searches as state loops: the [`Bisection`] loop (shared with the merge sort's merge
//! path), `searchsorted` and `bucketize`. Apart from `sort` because they search a sorted line
//! instead of ranking one; re-exported from `sort`.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, KernelError, Ty, VarId};
use super::super::LowerError;
use super::sort::{not, R};
use crate::ir::{Arg, Node, ValueId};

/// A binary search as a state loop over `var`: its range `lo..hi` (i64 slots 0 and 1), whether
/// the range is still open, and its midpoint `lo + (hi - lo) / 2`. The searches of `bound` and of
/// the merge sort's merge path step from these the same way.
pub(super) struct Bisection {
    pub lo: ExprId,
    pub hi: ExprId,
    pub open: ExprId,
    pub mid: ExprId,
}

impl Bisection {
    pub(super) fn over(kb: &mut KernelBuilder, var: VarId) -> Result<Bisection, KernelError> {
        let (lo, hi) = (kb.carried(var, 0, Ty::I64), kb.carried(var, 1, Ty::I64));
        let open = kb.cmp(CmpOp::Lt, lo, hi)?;
        let span = kb.binary(BinOp::Sub, hi, lo)?;
        let two = kb.i64(2);
        let half = kb.binary(BinOp::Div, span, two)?;
        let mid = kb.binary(BinOp::Add, lo, half)?;
        Ok(Bisection { lo, hi, open, mid })
    }
}

/// PyTorch's lower/upper bound of `value` in the sorted last dim of `seq` (through `sorter`
/// when given) at row `row`: a binary search as a state loop of `⌈log2(n+1)⌉` halvings.
fn bound(cx: &mut Ctx<'_>, seq: ValueId, sorter: Option<ValueId>, row: &[ExprId], value: ExprId, right: bool) -> R {
    let sizes = cx.sizes(seq)?;
    let last = sizes.last().ok_or_else(|| LowerError::Internal("a 0-dim sorted sequence".into()))?.clone();
    let n = cx.kb.size(&last);
    let steps = match last.as_int() {
        Some(s) => 64 - (s.max(0) as u64).leading_zeros() as i64,
        None => 64,
    };
    let var = cx.kb.fresh_var()?;
    let kb = &mut cx.kb;
    let Bisection { lo, hi, open, mid } = Bisection::over(kb, var)?;
    let one = kb.i64(1);
    let top = kb.binary(BinOp::Sub, n, one)?;
    let zero = kb.i64(0);
    let top = kb.binary(BinOp::Max, top, zero)?;
    let safe = kb.binary(BinOp::Min, mid, top)?;
    let mut at = row.to_vec();
    let pos = match sorter {
        Some(s) => {
            at.push(safe);
            let p = cx.read(s, &at)?;
            at.pop();
            let p = cx.kb.cast(p, Ty::I64);
            let top = cx.kb.binary(BinOp::Sub, n, one)?;
            let p = cx.kb.binary(BinOp::Min, p, top)?;
            cx.kb.binary(BinOp::Max, p, zero)?
        }
        None => safe,
    };
    at.push(pos);
    let s = cx.read(seq, &at)?;
    let s = if cx.kb.ty(s) == Ty::Bool { cx.kb.cast(s, Ty::I64) } else { s };
    let kb = &mut cx.kb;
    let (s, value) = match (kb.ty(s), kb.ty(value)) {
        (a, b) if a == b => (s, value),
        (Ty::F64, _) | (_, Ty::F64) => (kb.cast(s, Ty::F64), kb.cast(value, Ty::F64)),
        _ => (kb.cast(s, Ty::F32), kb.cast(value, Ty::F32)),
    };
    // Lower bound: go right while !(s >= v); upper bound: while !(s > v).
    let stop = if right { kb.cmp(CmpOp::Gt, s, value)? } else { kb.cmp(CmpOp::Ge, s, value)? };
    let go_right = not(kb, stop);
    let go_right = kb.and(open, go_right)?;
    let stay = not(kb, go_right);
    let shrink = kb.and(open, stay)?;
    let mid1 = kb.binary(BinOp::Add, mid, one)?;
    let nlo = kb.select(go_right, mid1, lo)?;
    let nhi = kb.select(shrink, mid, hi)?;
    let extent = kb.i64(steps.max(1));
    let r = kb.iterate(var, extent, vec![zero, n], vec![nlo, nhi])?;
    Ok(r[0])
}

fn side_right(cx: &Ctx<'_>, node: &Node) -> Result<bool, LowerError> {
    let right = cx.bool_or(node, "right", false)?;
    Ok(match node.arg("side") {
        Some(Arg::String(s)) => s == "right",
        _ => right,
    })
}

/// `searchsorted(sorted_sequence, self, out_int32, right, side, sorter)`: a 1-D sequence serves
/// every value, an N-D one the values of the same leading coordinates.
pub fn searchsorted(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let seq = cx.tensor(node, "sorted_sequence")?;
    let sorter = cx.opt_tensor(node, "sorter");
    let right = side_right(cx, node)?;
    let value = match cx.opt_tensor(node, "self") {
        Some(v) => cx.read(v, idx)?,
        None => cx.opt_number(node, "self")?.ok_or_else(|| cx.err(node, "argument `self` is missing"))?,
    };
    let value = if cx.kb.ty(value) == Ty::Bool { cx.kb.cast(value, Ty::I64) } else { value };
    let rank = cx.sizes(seq)?.len();
    let row: Vec<ExprId> = if rank <= 1 { vec![] } else { idx[..rank - 1].to_vec() };
    bound(cx, seq, sorter, &row, value, right)
}

/// `bucketize(self, boundaries, out_int32, right)`: `searchsorted` of a 1-D `boundaries`.
pub fn bucketize(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let seq = cx.tensor(node, "boundaries")?;
    let right = cx.bool_or(node, "right", false)?;
    let value = match cx.opt_tensor(node, "self") {
        Some(v) => cx.read(v, idx)?,
        None => cx.opt_number(node, "self")?.ok_or_else(|| cx.err(node, "argument `self` is missing"))?,
    };
    let value = if cx.kb.ty(value) == Ty::Bool { cx.kb.cast(value, Ty::I64) } else { value };
    bound(cx, seq, None, &[], value, right)
}
