//! Sorts as merge passes: `sort`, `argsort`, `msort`, and `topk` of lines longer than
//! [`select_kernel::MAX_LINE`].
//!
//! Why: a kernel computes each output element on its own, and the stable-rank lowering of
//! `sort.rs` finds the element of rank `j` by ranking every element of the line, O(n²) per
//! output element (197 s for `argsort` of 8,000 floats on the OpenCL CPU device). Here a line
//! of static length `n` is sorted in `⌈log2 n⌉` passes, each a kernel over the input's shape:
//! pass `w` merges sorted runs of `w` into runs of `2w`, and output position `t` of a merged
//! run finds how many of its first `t` elements come from the left run by a binary search along
//! the merge path (`O(log w)` per element, every element its own work-item, no shared memory).
//! The passes before the last write (value, original index) to scratch buffers shaped like the
//! input (ping-pong between two sets); the node's output kernel does the last one
//! (`lower::staged`).
//!
//! The order is PyTorch's stable sort: ascending with NaN last, or descending with NaN first,
//! equal values (NaN equal to NaN, -0.0 equal to 0.0) in their original order. A merge keeps
//! that order by taking the left run's element on ties: the left run holds the smaller
//! original positions. Dynamic lines keep the stable-rank lowering.

use super::super::ctx::Ctx;
use super::super::kernel::{Access, BinOp, CmpOp, Elem, ExprId, Store, Ty, UnOp, VarId};
use super::super::staged::{Staged, Stager};
use super::super::{schedule, LowerError};
use super::select_kernel;
use super::sort::{dim_of, less, Bisection, Line};
use crate::ir::{DType, Node, TensorMeta, ValueId};

type R = Result<ExprId, LowerError>;

/// The line sort a node asks for, when it is done in merge passes.
pub(super) struct Sorting {
    v: ValueId,
    d: usize,
    n: i64,
    descending: bool,
}

/// The merge-pass sort `node` asks for: a static line of at least two elements (more than
/// `MAX_LINE` for `topk`, whose short lines follow PyTorch's selection instead); `None` keeps
/// the stable-rank lowering.
pub(super) fn sorting(cx: &Ctx<'_>, node: &Node) -> Result<Option<Sorting>, LowerError> {
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    if sizes.is_empty() {
        return Ok(None);
    }
    let t = node.target.as_str();
    let topk = t.starts_with("aten.topk");
    let (d, descending) = if t.starts_with("aten.msort") {
        (0, false)
    } else if topk {
        (dim_of(cx, node, v, -1)?, cx.bool_or(node, "largest", true)?)
    } else {
        (dim_of(cx, node, v, -1)?, cx.bool_or(node, "descending", false)?)
    };
    let Some(n) = sizes.get(d).and_then(crate::sym::Expr::as_int) else { return Ok(None) };
    let min = if topk { select_kernel::MAX_LINE as i64 + 1 } else { 2 };
    Ok((n >= min).then_some(Sorting { v, d, n, descending }))
}

/// The run widths of the passes that sort `n` elements: 1, 2, 4, … below `n`.
fn widths(n: i64) -> Vec<i64> {
    std::iter::successors(Some(1i64), |w| w.checked_mul(2)).take_while(|w| *w < n).collect()
}

/// The dtype and storage of the scratch values: the compute type of `v`'s elements (bool
/// compares as 0/1, `Line::at`).
pub(super) fn scratch_type(cx: &Ctx<'_>, v: ValueId) -> Result<(DType, Elem), LowerError> {
    let dtype = cx.meta(v)?.dtype;
    match Elem::from_dtype(dtype).map(Elem::ty) {
        Some(Ty::F64) => Ok((DType::F64, Elem::F64)),
        Some(Ty::F32) => Ok((DType::F32, Elem::F32)),
        Some(Ty::I64 | Ty::Bool) => Ok((DType::I64, Elem::I64)),
        _ => Err(LowerError::DType { value: cx.graph.value(v).name.clone(), dtype: dtype.name().into() }),
    }
}

/// Where a pass reads the runs it merges.
enum Source {
    /// The node's input: position `p` of the line, original index `p`.
    Input,
    /// The previous pass's scratch buffers, shaped like the input.
    Scratch { values: String, indices: String, elem: Elem },
}

/// Row-major offset of coordinates `at` in a contiguous tensor of `sizes`.
fn offset(cx: &mut Ctx<'_>, sizes: &[ExprId], at: &[ExprId]) -> R {
    let mut index = cx.kb.i64(0);
    for (s, a) in sizes.iter().zip(at) {
        let scaled = cx.kb.binary(BinOp::Mul, index, *s)?;
        index = cx.kb.binary(BinOp::Add, scaled, *a)?;
    }
    Ok(index)
}

impl Source {
    fn load(cx: &mut Ctx<'_>, line: &Line, name: &str, elem: Elem, p: ExprId) -> R {
        let buf = cx.kb.buffer_of(name, Access::Read, elem);
        let at = line.coords(&mut cx.kb, p)?;
        let i = offset(cx, &line.sizes, &at)?;
        Ok(cx.kb.load(buf, i))
    }

    fn value(&self, cx: &mut Ctx<'_>, line: &Line, p: ExprId) -> R {
        match self {
            Source::Input => line.at(cx, p),
            Source::Scratch { values, elem, .. } => Source::load(cx, line, values, *elem, p),
        }
    }

    fn index(&self, cx: &mut Ctx<'_>, line: &Line, p: ExprId) -> R {
        match self {
            Source::Input => Ok(p),
            Source::Scratch { indices, .. } => Source::load(cx, line, indices, Elem::I64, p),
        }
    }
}

/// `b` strictly before `a` in the sort's order by value alone (NaN last ascending, first
/// descending): where it is not, a merge takes `a`, the left run's element.
fn strictly_before(cx: &mut Ctx<'_>, b: ExprId, a: ExprId, descending: bool) -> R {
    Ok(if descending { less(&mut cx.kb, a, b)? } else { less(&mut cx.kb, b, a)? })
}

/// The (value, original index) at position `q` of the line after the pass that merges runs of
/// `w` read from `src` into runs of `2w`.
fn merge(cx: &mut Ctx<'_>, src: &Source, line: &Line, q: ExprId, n: i64, w: i64, descending: bool) -> Result<(ExprId, ExprId), LowerError> {
    let kb = &mut cx.kb;
    let (zero, one) = (kb.i64(0), kb.i64(1));
    let (wk, w2, last) = (kb.i64(w), kb.i64(2 * w), kb.i64(n - 1));
    let nk = kb.i64(n);
    // The merged run starts at `s`; its left run is `s..s+la`, its right run `s+w..s+w+lb`.
    let t = kb.binary(BinOp::Rem, q, w2)?;
    let s = kb.binary(BinOp::Sub, q, t)?;
    let rest = kb.binary(BinOp::Sub, nk, s)?;
    let la = kb.binary(BinOp::Min, wk, rest)?;
    let past = kb.binary(BinOp::Sub, rest, wk)?;
    let lb = kb.binary(BinOp::Min, past, wk)?;
    let lb = kb.binary(BinOp::Max, lb, zero)?;
    let b0 = kb.binary(BinOp::Add, s, wk)?;
    // Positions are clamped into the line: steps after the search has closed still read.
    let clamp = |kb: &mut super::super::kernel::KernelBuilder, p: ExprId| -> Result<ExprId, LowerError> {
        let p = kb.binary(BinOp::Max, p, zero)?;
        Ok(kb.binary(BinOp::Min, p, last)?)
    };
    // `i` = how many of the first `t` merged elements come from the left run: the first `mid`
    // in `lo..hi` whose left element the right element `t - 1 - mid` strictly precedes.
    let tb = kb.binary(BinOp::Sub, t, lb)?;
    let lo0 = kb.binary(BinOp::Max, tb, zero)?;
    let hi0 = kb.binary(BinOp::Min, t, la)?;
    let var = kb.fresh_var()?;
    let Bisection { lo, hi, open, mid } = Bisection::over(kb, var)?;
    let a_at = kb.binary(BinOp::Add, s, mid)?;
    let a_at = clamp(kb, a_at)?;
    let back = kb.binary(BinOp::Sub, t, one)?;
    let back = kb.binary(BinOp::Sub, back, mid)?;
    let b_at = kb.binary(BinOp::Add, b0, back)?;
    let b_at = clamp(kb, b_at)?;
    let a = src.value(cx, line, a_at)?;
    let b = src.value(cx, line, b_at)?;
    let b_first = strictly_before(cx, b, a, descending)?;
    let kb = &mut cx.kb;
    let a_first = kb.unary(UnOp::Not, b_first);
    let go_right = kb.and(open, a_first)?;
    let shrink = kb.and(open, b_first)?;
    let mid1 = kb.binary(BinOp::Add, mid, one)?;
    let nlo = kb.select(go_right, mid1, lo)?;
    let nhi = kb.select(shrink, mid, hi)?;
    // The range holds at most `w + 1` candidates: ⌊log2 w⌋ + 1 halvings close it.
    let steps = kb.i64(i64::from(64 - w.leading_zeros()));
    let r = kb.iterate(var, steps, vec![lo0, hi0], vec![nlo, nhi])?;
    let i = r[0];
    let j = kb.binary(BinOp::Sub, t, i)?;
    let a_at = kb.binary(BinOp::Add, s, i)?;
    let a_at = clamp(kb, a_at)?;
    let b_at = kb.binary(BinOp::Add, b0, j)?;
    let b_at = clamp(kb, b_at)?;
    let has_a = kb.cmp(CmpOp::Lt, i, la)?;
    let has_b = kb.cmp(CmpOp::Lt, j, lb)?;
    let a = src.value(cx, line, a_at)?;
    let b = src.value(cx, line, b_at)?;
    let b_first = strictly_before(cx, b, a, descending)?;
    let kb = &mut cx.kb;
    let no_a = kb.unary(UnOp::Not, has_a);
    let b_wins = kb.and(has_b, b_first)?;
    let take_b = kb.binary(BinOp::Or, no_a, b_wins)?;
    let x = kb.select(take_b, b, a)?;
    let at = kb.select(take_b, b_at, a_at)?;
    let index = src.index(cx, line, at)?;
    Ok((x, index))
}

/// `sort`'s staged kernels (`.staged` in the registry): every merge pass but the last, which
/// the output kernel does ([`output`]). `None` for lines the stable-rank lowering keeps and for
/// lines of two, which the output kernel merges from the input.
pub fn sort_stages<'a>(st: &Stager<'a>, node: &'a Node) -> Result<Option<Staged>, LowerError> {
    let probe = st.ctx(node, 0);
    // A dynamic line is ranked instead (`rank_sort`).
    let Some(s) = sorting(&probe, node)? else { return super::rank_sort::rank_stages(st, node) };
    let widths = widths(s.n);
    let Some((_, staged)) = widths.split_last().filter(|(_, staged)| !staged.is_empty()) else { return Ok(None) };
    let sizes = probe.sizes(s.v)?;
    let (dtype, elem) = scratch_type(&probe, s.v)?;
    let sets: Vec<(String, String)> = (0..staged.len().min(2))
        .map(|k| (st.scratch_name(node, &format!("sorted{k}")), st.scratch_name(node, &format!("sorted{k}_indices"))))
        .collect();
    let mut kernels = Vec::with_capacity(staged.len());
    let mut src = Source::Input;
    for (k, &w) in staged.iter().enumerate() {
        let (values, indices) = &sets[k % 2];
        let mut cx = st.ctx(node, sizes.len());
        let coords: Vec<ExprId> = (0..sizes.len()).map(|i| cx.kb.var(VarId(i as u32))).collect();
        let domain: Vec<ExprId> = sizes.iter().map(|e| cx.kb.size(e)).collect();
        cx.kb.set_coord_extents(&domain);
        let line = Line::along(&mut cx, s.v, Some(s.d), &coords, true)?;
        let (x, i) = merge(&mut cx, &src, &line, coords[s.d], s.n, w, s.descending)?;
        let x = cx.kb.cast(x, elem.ty());
        let stores = vec![
            Store { buf: cx.kb.buffer_of(values, Access::Write, elem), value: x },
            Store { buf: cx.kb.buffer_of(indices, Access::Write, Elem::I64), value: i },
        ];
        let inlined = std::mem::take(&mut cx.inlined);
        let mut kernel = cx.kb.finish(st.kernel_name(node, &format!("merge{w}")), sizes.clone(), domain, stores);
        kernel.schedule = schedule::choose(&kernel, false);
        kernels.push((kernel, inlined));
        src = Source::Scratch { values: values.clone(), indices: indices.clone(), elem };
    }
    let (values, indices) = sets[(staged.len() - 1) % 2].clone();
    let scratch = sets
        .into_iter()
        .flat_map(|(v, i)| [(v, TensorMeta::contiguous(dtype, sizes.clone())), (i, TensorMeta::contiguous(DType::I64, sizes.clone()))])
        .collect();
    Ok(Some(Staged { kernels, scratch, reads: vec![values, indices] }))
}

/// The (value, original index) at output coordinates `idx` of a merge-pass sort: the last pass,
/// reading the staged kernels' scratch (or the input, for a line of two). `None` when the
/// staged passes did not run for this kernel: the caller keeps the stable-rank lowering.
pub(super) fn output(cx: &mut Ctx<'_>, s: &Sorting, idx: &[ExprId]) -> Result<Option<(ExprId, ExprId)>, LowerError> {
    let widths = widths(s.n);
    let Some(&w) = widths.last() else { return Ok(None) };
    let src = match &cx.staged[..] {
        [] if widths.len() == 1 => Source::Input,
        [values, indices] => Source::Scratch { values: values.clone(), indices: indices.clone(), elem: scratch_type(cx, s.v)?.1 },
        _ => return Ok(None),
    };
    let q = *idx.get(s.d).ok_or_else(|| LowerError::Internal("sort output rank does not match its input".into()))?;
    let line = Line::along(cx, s.v, Some(s.d), idx, true)?;
    merge(cx, &src, &line, q, s.n, w, s.descending).map(Some)
}

#[cfg(test)]
mod tests {
    use super::super::edge_tests::plan_one;
    use super::widths;
    use crate::ir::Arg;
    use crate::lower::kernel::KExpr;

    fn argsort(dim: i64, sizes: &[i64]) -> crate::lower::Plan {
        plan_one("aten.argsort.stable", &[sizes], sizes, |v| {
            vec![("self", Arg::Tensor(v[0])), ("stable", Arg::Bool(true)), ("dim", Arg::Int(dim)), ("descending", Arg::Bool(false))]
        })
        .expect("argsort lowers")
    }

    #[test]
    fn a_line_of_8000_sorts_in_13_kernels_with_no_loop_over_the_line() {
        let plan = argsort(-1, &[8000]);
        let kernels: Vec<_> = plan.steps.iter().filter_map(|s| s.kernel()).collect();
        assert_eq!(kernels.len(), 13, "{:?}", kernels.iter().map(|k| &k.name).collect::<Vec<_>>());
        // Every loop is a merge-path binary search of at most ⌊log2 4096⌋ + 1 = 13 halvings;
        // the stable-rank lowering looped over the whole line, twice nested, per element.
        for k in &kernels {
            for e in &k.exprs {
                if let KExpr::Loop { extent, .. } | KExpr::Reduce { extent, .. } = e {
                    let n = k.eval_i64(*extent, &[]);
                    assert!(n.is_some_and(|n| n <= 13), "`{}` loops {n:?} times", k.name);
                }
            }
        }
        // Two scratch sets (values, indices) written in turn; the output kernel reads the last.
        for name in ["op_sorted0", "op_sorted0_indices", "op_sorted1", "op_sorted1_indices"] {
            assert!(plan.graph.value_id(name).is_some(), "{name} is not declared");
        }
        let last = kernels.last().expect("output kernel");
        assert!(last.buffers.iter().any(|b| b.value == "op_sorted1"), "{:?}", last.buffers);
    }

    #[test]
    fn an_outer_dim_sorts_across_rows_and_a_line_of_two_needs_no_scratch() {
        let plan = argsort(0, &[5, 3]);
        assert_eq!(plan.steps.iter().filter(|s| s.kernel().is_some()).count(), 3);
        let plan = argsort(-1, &[4, 2]);
        assert_eq!(plan.steps.iter().filter(|s| s.kernel().is_some()).count(), 1);
        assert!(plan.graph.value_id("op_sorted0").is_none());
    }

    #[test]
    fn passes_double_the_runs_until_one_covers_the_line() {
        assert_eq!(widths(2), vec![1]);
        assert_eq!(widths(5), vec![1, 2, 4]);
        assert_eq!(widths(8), vec![1, 2, 4]);
        assert_eq!(widths(8000).len(), 13);
        assert!(widths(1).is_empty());
    }
}
