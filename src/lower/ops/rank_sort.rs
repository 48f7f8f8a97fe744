//! `sort`, `argsort` and `msort` of a line whose length is dynamic, in two kernels: each
//! element's stable rank first (O(n) per element, written to a scratch buffer shaped like the
//! input), then each output position finds the element of its rank (O(n)).
//!
//! Why: merge passes (`merge_sort`) need the line's length when the kernels are built, so a
//! dynamic line kept the stable-rank lowering of `sort.rs`, in which every output element ranks
//! every element of the line: O(n²) per output, O(n³) per line. A mixture-of-experts layer sorts
//! its routed expert ids, a line of 2 × tokens (dynamic): 72 ids took 52 µs of device time on the
//! OpenCL CPU device, the second costliest kernel of the forward (docs/PERFORMANCE.md, "Issue 28:
//! mixture of experts"). The order is the same stable order (`sort::before`: ascending with NaN
//! last or descending with NaN first, ties by position).

use super::super::ctx::Ctx;
use super::super::kernel::{Access, BinOp, CmpOp, Elem, ExprId, RedOp, Store, Ty, VarId};
use super::super::staged::{Staged, Stager};
use super::super::{schedule, LowerError};
use super::sort::{before, dim_of, Line};
use crate::ir::{DType, Node, TensorMeta, ValueId};

/// The dynamic line a sort node asks for: its input, dim and direction; `None` for a static
/// line (merge passes), a 0-dim input, or an op that is not a full sort (`topk`).
fn dynamic_line(cx: &Ctx<'_>, node: &Node) -> Result<Option<(ValueId, usize, bool)>, LowerError> {
    let t = node.target.as_str();
    if !(t.starts_with("aten.sort") || t.starts_with("aten.argsort") || t.starts_with("aten.msort")) {
        return Ok(None);
    }
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    if sizes.is_empty() {
        return Ok(None);
    }
    let d = if t.starts_with("aten.msort") { 0 } else { dim_of(cx, node, v, -1)? };
    let descending = cx.bool_or(node, "descending", false)?;
    Ok(sizes.get(d).filter(|n| n.as_int().is_none()).map(|_| (v, d, descending)))
}

/// The ranks kernel of a sort of a dynamic line; `None` for any other sort.
pub(super) fn rank_stages<'a>(st: &Stager<'a>, node: &'a Node) -> Result<Option<Staged>, LowerError> {
    let probe = st.ctx(node, 0);
    let Some((v, d, descending)) = dynamic_line(&probe, node)? else { return Ok(None) };
    let sizes = probe.sizes(v)?;
    let mut cx = st.ctx(node, sizes.len());
    let coords: Vec<ExprId> = (0..sizes.len()).map(|i| cx.kb.var(VarId(i as u32))).collect();
    let domain: Vec<ExprId> = sizes.iter().map(|e| cx.kb.size(e)).collect();
    cx.kb.set_coord_extents(&domain);
    let line = Line::along(&mut cx, v, Some(d), &coords, true)?;
    let me = line.at(&mut cx, coords[d])?;
    let var = cx.kb.fresh_var()?;
    let k = cx.kb.var(var);
    let other = line.at(&mut cx, k)?;
    let ahead = before(&mut cx.kb, other, k, me, coords[d], descending)?;
    let ahead = cx.kb.cast(ahead, Ty::I64);
    let extent = line.sizes[d];
    let rank = cx.kb.reduce(RedOp::Sum, var, extent, ahead)?;
    let name = st.scratch_name(node, "rank");
    let stores = vec![Store { buf: cx.kb.buffer_of(&name, Access::Write, Elem::I64), value: rank }];
    let inlined = std::mem::take(&mut cx.inlined);
    let mut kernel = cx.kb.finish(st.kernel_name(node, "ranks"), sizes.clone(), domain, stores);
    kernel.schedule = schedule::choose(&kernel, false);
    Ok(Some(Staged { kernels: vec![(kernel, inlined)], scratch: vec![(name.clone(), TensorMeta::contiguous(DType::I64, sizes))], reads: vec![name] }))
}

/// The (value, position) at output coordinates `idx` of a dynamic-line sort whose ranks kernel
/// wrote `ranks`: the one position of the line whose rank is the output's; `None` when `node`
/// is no such sort.
pub(super) fn output(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<Option<(ExprId, ExprId)>, LowerError> {
    let Some((v, d, _)) = dynamic_line(cx, node)? else { return Ok(None) };
    let [ranks] = &cx.staged[..] else { return Ok(None) };
    let ranks = ranks.clone();
    let j = *idx.get(d).ok_or_else(|| LowerError::Internal("sort output rank does not match its input".into()))?;
    let line = Line::along(cx, v, Some(d), idx, true)?;
    let buf = cx.kb.buffer_of(&ranks, Access::Read, Elem::I64);
    let var = cx.kb.fresh_var()?;
    let i = cx.kb.var(var);
    // The ranks are laid out contiguously in the input's shape.
    let at = line.coords(&mut cx.kb, i)?;
    let mut offset = cx.kb.i64(0);
    for (size, a) in line.sizes.clone().iter().zip(&at) {
        let scaled = cx.kb.binary(BinOp::Mul, offset, *size)?;
        offset = cx.kb.binary(BinOp::Add, scaled, *a)?;
    }
    let rank = cx.kb.load(buf, offset);
    let hit = cx.kb.cmp(CmpOp::Eq, rank, j)?;
    let zero = cx.kb.i64(0);
    let here = cx.kb.select(hit, i, zero)?;
    let extent = line.sizes[d];
    // Stable ranks are a permutation of the positions: exactly one hit per output.
    let pos = cx.kb.reduce(RedOp::Sum, var, extent, here)?;
    let x = line.at(cx, pos)?;
    Ok(Some((x, pos)))
}
