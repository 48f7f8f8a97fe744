//! `topk` of short lines, its selection program run once per line.
//!
//! Why: on lines of at most `select_kernel::MAX_LINE` the kernel runs PyTorch's own selection
//! (`select_kernel::topk_positions`, a state machine of O(n²) steps, each O(n)), so that equal
//! values come out at PyTorch's positions. Computed in the output kernel, every one of a line's
//! `k` outputs ran the whole program: `topk(k=3)` of `[5, 10, 5]` took 12–24× torch eager's time
//! (`bench ops`). Staged (`lower::staged`), one work-item per line runs it once and writes the
//! `k` picks to `2k` scratch buffers shaped like the input with the line cut to one element;
//! the output kernel reads its pick. Longer lines sort in merge passes (`merge_sort`).

use super::super::ctx::Ctx;
use super::super::kernel::{Access, BinOp, CmpOp, Elem, ExprId, Store, VarId};
use super::super::staged::{Staged, Stager};
use super::super::{schedule, LowerError};
use super::select_kernel;
use super::sort::{dim_of, Line};
use crate::ir::{DType, Node, TensorMeta, ValueId};
use crate::sym::Expr;

/// A short-line `topk` a node asks for.
struct Short {
    v: ValueId,
    d: usize,
    n: i64,
    /// Picks per line: `k` within `0..=n`.
    k: i64,
    largest: bool,
    sorted: bool,
}

fn short(cx: &Ctx<'_>, node: &Node) -> Result<Option<Short>, LowerError> {
    if !node.target.starts_with("aten.topk") {
        return Ok(None);
    }
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    if sizes.is_empty() {
        return Ok(None);
    }
    let d = dim_of(cx, node, v, -1)?;
    let Some(n) = sizes.get(d).and_then(Expr::as_int).filter(|n| (1..=select_kernel::MAX_LINE as i64).contains(n)) else { return Ok(None) };
    let k = cx.int_or(node, "k", 1)?.clamp(0, n);
    if k == 0 {
        return Ok(None);
    }
    Ok(Some(Short { v, d, n, k, largest: cx.bool_or(node, "largest", true)?, sorted: cx.bool_or(node, "sorted", true)? }))
}

/// The contiguous offset of `idx` with the line's dim at 0 in the picks' shape (the input's,
/// the line cut to one element).
fn pick_offset(cx: &mut Ctx<'_>, s: &Short, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let mut sizes = cx.ksizes(s.v)?;
    sizes[s.d] = cx.kb.i64(1);
    let mut at = idx.to_vec();
    at[s.d] = cx.kb.i64(0);
    let mut offset = cx.kb.i64(0);
    for (size, a) in sizes.iter().zip(&at) {
        let scaled = cx.kb.binary(BinOp::Mul, offset, *size)?;
        offset = cx.kb.binary(BinOp::Add, scaled, *a)?;
    }
    Ok(offset)
}

/// `topk`'s staged kernels: the merge passes of a long line (`merge_sort`), or the selection
/// program of a short one, once per line.
pub fn topk_stages<'a>(st: &Stager<'a>, node: &'a Node) -> Result<Option<Staged>, LowerError> {
    let probe = st.ctx(node, 0);
    let Some(s) = short(&probe, node)? else { return super::merge_sort::sort_stages(st, node) };
    let mut sizes = probe.sizes(s.v)?;
    sizes[s.d] = Expr::int(1);
    let (dtype, elem) = super::merge_sort::scratch_type(&probe, s.v)?;
    let mut cx = st.ctx(node, sizes.len());
    let coords: Vec<ExprId> = (0..sizes.len()).map(|i| cx.kb.var(VarId(i as u32))).collect();
    let domain: Vec<ExprId> = sizes.iter().map(|e| cx.kb.size(e)).collect();
    cx.kb.set_coord_extents(&domain);
    let line = Line::along(&mut cx, s.v, Some(s.d), &coords, true)?;
    let mut vals = Vec::with_capacity(s.n as usize);
    for p in 0..s.n {
        let at = cx.kb.i64(p);
        vals.push(line.at(&mut cx, at)?);
    }
    let picks = select_kernel::topk_positions(&mut cx.kb, &vals, s.k, s.largest, s.sorted)?;
    let mut stores = Vec::with_capacity(2 * picks.len());
    let mut scratch = Vec::with_capacity(2 * picks.len());
    let mut reads = Vec::with_capacity(2 * picks.len());
    for (t, &(x, i)) in picks.iter().enumerate() {
        let (vn, iname) = (st.scratch_name(node, &format!("pick{t}")), st.scratch_name(node, &format!("pick{t}_index")));
        let x = cx.kb.cast(x, elem.ty());
        stores.push(Store { buf: cx.kb.buffer_of(&vn, Access::Write, elem), value: x });
        stores.push(Store { buf: cx.kb.buffer_of(&iname, Access::Write, Elem::I64), value: i });
        scratch.push((vn.clone(), TensorMeta::contiguous(dtype, sizes.clone())));
        scratch.push((iname.clone(), TensorMeta::contiguous(DType::I64, sizes.clone())));
        reads.extend([vn, iname]);
    }
    let inlined = std::mem::take(&mut cx.inlined);
    let mut kernel = cx.kb.finish(st.kernel_name(node, "picks"), sizes, domain, stores);
    kernel.schedule = schedule::choose(&kernel, false);
    Ok(Some(Staged { kernels: vec![(kernel, inlined)], scratch, reads }))
}

/// Output `out` (0 values, 1 indices) of a short-line `topk` at `idx`, read from the picks its
/// staged kernel wrote; `None` when there are none for this kernel.
pub(super) fn output(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<Option<ExprId>, LowerError> {
    let Some(s) = short(cx, node)? else { return Ok(None) };
    if cx.staged.len() != 2 * s.k as usize {
        return Ok(None);
    }
    let elem = if out == 1 { Elem::I64 } else { super::merge_sort::scratch_type(cx, s.v)?.1 };
    let offset = pick_offset(cx, &s, idx)?;
    let q = *idx.get(s.d).ok_or_else(|| LowerError::Internal("topk output rank does not match its input".into()))?;
    let names: Vec<String> = cx.staged.iter().skip(out.min(1)).step_by(2).cloned().collect();
    let mut acc = None;
    for (t, name) in names.iter().enumerate() {
        let buf = cx.kb.buffer_of(name, Access::Read, elem);
        let x = cx.kb.load(buf, offset);
        acc = Some(match acc {
            None => x,
            Some(prev) => {
                let tt = cx.kb.i64(t as i64);
                let here = cx.kb.cmp(CmpOp::Eq, q, tt)?;
                cx.kb.select(here, x, prev)?
            }
        });
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::super::edge_tests::plan_one;
    use crate::ir::Arg;
    use crate::lower::kernel::KExpr;

    #[test]
    fn a_short_topk_runs_its_selection_once_per_line_not_per_output() {
        let plan = plan_one("aten.topk.default", &[&[5, 10, 5]], &[5, 10, 3], |v| vec![("self", Arg::Tensor(v[0])), ("k", Arg::Int(3)), ("dim", Arg::Int(-1))]).expect("topk lowers");
        let kernels: Vec<_> = plan.steps.iter().filter_map(|s| s.kernel()).collect();
        assert_eq!(kernels.len(), 2);
        // The staged kernel runs the program over the 50 lines; the output kernel only reads.
        assert_eq!(kernels[0].domain_sizes.iter().map(|e| e.as_int()).collect::<Vec<_>>(), vec![Some(5), Some(10), Some(1)]);
        assert!(kernels[0].exprs.iter().any(|e| matches!(e, KExpr::Loop { .. })));
        assert!(!kernels[1].exprs.iter().any(|e| matches!(e, KExpr::Loop { .. } | KExpr::Reduce { .. })));
        for t in 0..3 {
            assert!(plan.graph.value_id(&format!("op_pick{t}")).is_some() && plan.graph.value_id(&format!("op_pick{t}_index")).is_some());
        }
    }
}
