//! Grouped products (`super::grouped`) on the column schedule, their experts' weights read
//! from a copy stored transposed per expert.
//!
//! Why (docs/PERFORMANCE.md, "Issue 28: grouped_mm for mixture-of-experts"): the weight a row
//! reads depends on the row's group, so the product is no tiled product and the schedule
//! chooser saw a statistic per output: the row schedule gave every output a work-group that
//! folded its `K` products and combined them by a work-group reduction — about 3.4 G
//! multiply-adds/s on the OpenCL CPU device. On [`Schedule::Columns`] a work-item per output
//! column folds its dot product serially: the row operand is one scalar per step (the same
//! for every work-item of the group, as is the row's group) and the weight one vector across
//! the work-items — once neighbouring columns are neighbouring elements. MoE layers pass
//! `w.transpose(-1, -2)` of an expert weight `[G, N, K]`, read at `g · N · K + j · K + k`
//! (column `j` `K` floats from the next), so a resident weight is stored transposed per
//! expert at upload (`Layout::Transposed`, 3-D) and read at `g · K · N + k · N + j`.

use std::collections::HashMap;

use crate::ir::{DType, Graph, InputKind};
use crate::lower::kernel::{Access, BinOp, Elem, ExprId, KExpr, Kernel, Layout, RedOp, VarId};
use crate::lower::gemm::{affine_terms, static_i64, Atom};
use crate::lower::schedule::Schedule;

/// Column groups tried, largest first; the one leaving the fewest work-items idle is taken.
const GROUPS: [u32; 5] = [256, 128, 64, 32, 16];

/// `k` on the column schedule with its expert weight read transposed, when `k` is a grouped
/// product over a resident weight (see the module); else `k` as it is. `k` comes straight from
/// the schedule chooser (not yet finished).
pub fn columns(graph: &Graph, k: Kernel) -> Kernel {
    match plan(graph, &k) {
        Some((load, at, group)) => {
            let packed = match at {
                Read::Contiguous => Some(k.clone()),
                Read::Strided { group_at, depth_var, rows, column_offset } => {
                    let mut plain = k.clone();
                    plain.schedule = Schedule::Elementwise;
                    plain.read_in_layout(load, Layout::Transposed, |kb| {
                        // g · K · N + k · N + (j + offset): the same element, transposed per expert.
                        let (plane, n) = (kb.i64(rows.0 * rows.1), kb.i64(rows.0));
                        let g = kb.binary(BinOp::Mul, group_at, plane).ok()?;
                        let kv = kb.var(depth_var);
                        let kn = kb.binary(BinOp::Mul, kv, n).ok()?;
                        let at = kb.binary(BinOp::Add, g, kn).ok()?;
                        let (jv, offset) = (kb.var(VarId(1)), kb.i64(column_offset));
                        let column = kb.binary(BinOp::Add, jv, offset).ok()?;
                        kb.binary(BinOp::Add, at, column).ok()
                    })
                }
            };
            match packed {
                Some(mut out) => {
                    out.schedule = Schedule::Columns { group, dims: 1 };
                    out
                }
                None => k,
            }
        }
        None => k,
    }
}

/// How the expert weight is read across neighbouring output columns.
enum Read {
    /// Already neighbouring elements (a weight stored `[G, K, N]`).
    Contiguous,
    /// `K` apart: the group term's node, the contraction variable, the weight's `(N, K)`, and
    /// the weight row read by output column `j` (`j + column_offset`: a slice of the rows).
    Strided { group_at: ExprId, depth_var: VarId, rows: (i64, i64), column_offset: i64 },
}

/// The weight load to rewrite, how it is read, and the column group.
fn plan(graph: &Graph, k: &Kernel) -> Option<(ExprId, Read, u32)> {
    if !matches!(k.schedule, Schedule::Rows { .. } | Schedule::Elementwise) || k.domain.len() != 2 || k.linear.is_some() {
        return None;
    }
    let columns = static_i64(k, k.domain[1])?;
    let group = GROUPS.into_iter().min_by(|a, b| idle(columns, *a).total_cmp(&idle(columns, *b)))?;
    if idle(columns, group) > 0.5 {
        return None;
    }
    let j = 1u32;
    // Sum reductions of static extent by their variable.
    let depths: HashMap<u32, i64> = k
        .exprs
        .iter()
        .filter_map(|e| match *e {
            KExpr::Reduce { op: RedOp::Sum, var, extent, .. } => Some((var.0, static_i64(k, extent)?)),
            _ => None,
        })
        .collect();
    let free = k.free_vars();
    let mut found = None;
    for (i, e) in k.exprs.iter().enumerate() {
        let KExpr::Load { buf, index, mask: None, .. } = *e else { continue };
        let param = k.buffers.get(buf as usize)?;
        if param.elem != Elem::F32 || param.access != Access::Read || param.layout != Layout::Plain {
            continue;
        }
        let Some([experts, n, depth]) = weight_sizes(graph, &param.value) else { continue };
        let Some((terms, offset)) = affine_terms(k, index) else { continue };
        let read = classify(&free, &terms, offset, j, &depths, (experts, n, depth), columns)?;
        if found.is_some() {
            return None; // two expert weights in one kernel: not the form measured
        }
        found = Some((ExprId(i as u32), read));
    }
    let (load, read) = found?;
    Some((load, read, group))
}

/// How index `Σ terms + offset` of a `[G, R, C]` weight moves with column `j`, when it is one
/// group term of coefficient `R · C` (a node: the row's group), column `j` and one contraction
/// variable `k` folding at most the weight's extent along it.
fn classify(free: &[u128], terms: &HashMap<Atom, i64>, offset: i64, j: u32, depths: &HashMap<u32, i64>, (_, r, c): (i64, i64, i64), columns: i64) -> Option<Read> {
    if terms.len() != 3 {
        return None;
    }
    let plane = r.checked_mul(c)?;
    let group = *terms.iter().find(|(a, x)| **x == plane && **a != Atom::Var(j))?.0;
    let contraction = terms.keys().find(|a| **a != group && **a != Atom::Var(j))?;
    let (Atom::Var(kv), Atom::Node(group_at)) = (*contraction, group) else { return None };
    // The group term is the row's alone: neither the column nor the contraction moves it.
    if free[group_at.0 as usize] & ((1u128 << j) | (1u128 << kv)) != 0 {
        return None;
    }
    let fold = *depths.get(&kv)?;
    match (terms.get(&Atom::Var(j)), terms.get(contraction)) {
        // `g · R · C + k · C + j + offset`: a weight stored `[G, K, N]` (columns from `offset`).
        (Some(1), Some(&x)) if x == c && fold <= r && (0..=c - columns).contains(&offset) => Some(Read::Contiguous),
        // `g · R · C + (j + o) · C + k`: `[G, N, K]` read transposed (rows from `o`).
        (Some(&x), Some(1)) if x == c && fold <= c && offset % c == 0 && (0..=r - columns).contains(&(offset / c)) => {
            Some(Read::Strided { group_at, depth_var: VarId(kv), rows: (r, c), column_offset: offset / c })
        }
        _ => None,
    }
}

/// The static sizes of graph value `name` when it is a 3-D float32 parameter or tensor
/// constant: loaded from the model, never written by the graph, so resident across forwards.
fn weight_sizes(graph: &Graph, name: &str) -> Option<[i64; 3]> {
    let v = graph.value_id(name)?;
    let resident = graph.inputs.iter().any(|(i, kind)| *i == v && matches!(kind, InputKind::Parameter { .. } | InputKind::TensorConstant { .. }));
    let t = graph.value(v).tensor()?;
    if !resident || t.dtype != DType::F32 {
        return None;
    }
    match t.sizes.iter().map(|s| s.as_int()).collect::<Option<Vec<i64>>>()?.as_slice() {
        &[g, n, k] => Some([g, n, k]),
        _ => None,
    }
}

/// Share of the work-items idle when `columns` are rounded up to groups of `group`.
fn idle(columns: i64, group: u32) -> f64 {
    let g = i64::from(group);
    let covered = (columns + g - 1) / g * g;
    (covered - columns) as f64 / covered as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::{CmpOp, KernelBuilder, Store};
    use crate::sym;

    /// `out[r, j] = Σ_k x[r, k] · w[g(r), j, k]` over `[6, 4]` and a `[3, 5, 4]` weight read
    /// transposed, `g(r)` = `r < 2 ? 0 : 1` (a node of `r` alone) or, with `column_group`,
    /// `j < 2 ? 0 : 1` (not a row's group).
    fn grouped(column_group: bool) -> (Kernel, ExprId) {
        let mut kb = KernelBuilder::new(2);
        let (x, w) = (kb.buffer_of("x", Access::Read, Elem::F32), kb.buffer_of("w", Access::Read, Elem::F32));
        let out = kb.buffer_of("out", Access::Write, Elem::F32);
        let kv = kb.fresh_var().expect("a third variable");
        let (r, j, k) = (kb.var(VarId(0)), kb.var(VarId(1)), kb.var(kv));
        let (zero, one, two, four, plane) = (kb.i64(0), kb.i64(1), kb.i64(2), kb.i64(4), kb.i64(20));
        let by = if column_group { j } else { r };
        let g = kb.cmp(CmpOp::Lt, by, two).and_then(|c| kb.select(c, zero, one)).expect("a group");
        let xi = kb.binary(BinOp::Mul, r, four).and_then(|a| kb.binary(BinOp::Add, a, k)).expect("i64");
        let wi = kb.binary(BinOp::Mul, j, four).and_then(|a| kb.binary(BinOp::Add, a, k)).expect("i64");
        let wi = kb.binary(BinOp::Mul, g, plane).and_then(|a| kb.binary(BinOp::Add, a, wi)).expect("i64");
        let (xl, wl) = (kb.load(x, xi), kb.load(w, wi));
        let p = kb.binary(BinOp::Mul, xl, wl).expect("f32");
        let s = kb.reduce(RedOp::Sum, kv, four, p).expect("a sum");
        let (six, five) = (kb.i64(6), kb.i64(5));
        let k = kb.finish("gmm".into(), vec![sym::Expr::int(6), sym::Expr::int(5)], vec![six, five], vec![Store { buf: out, value: s }]);
        let wi = match *k.expr(ExprId(k.exprs.iter().position(|e| matches!(e, KExpr::Load { buf, .. } if *buf == w)).expect("w") as u32)) {
            KExpr::Load { index, .. } => index,
            _ => unreachable!("found as a load"),
        };
        (k, wi)
    }

    #[test]
    fn terms_keep_a_row_group_as_one_atom() {
        let (k, wi) = grouped(false);
        let (t, c) = affine_terms(&k, wi).expect("a sum of scaled terms");
        assert_eq!(c, 0);
        assert_eq!(t.get(&Atom::Var(1)), Some(&4), "column j, K apart");
        assert_eq!(t.get(&Atom::Var(2)), Some(&1), "the contraction");
        assert_eq!(t.iter().filter(|(a, x)| matches!(a, Atom::Node(_)) && **x == 20).count(), 1, "the group, N · K apart");
    }

    #[test]
    fn a_row_group_is_read_strided_and_a_column_dependent_one_is_not() {
        let depths = HashMap::from([(2, 4)]);
        for (column_group, want) in [(false, true), (true, false)] {
            let (k, wi) = grouped(column_group);
            let (t, c) = affine_terms(&k, wi).expect("a sum of scaled terms");
            let read = classify(&k.free_vars(), &t, c, 1, &depths, (3, 5, 4), 5);
            assert_eq!(matches!(read, Some(Read::Strided { rows: (5, 4), column_offset: 0, .. })), want, "group by the column: {column_group}");
        }
        // Columns past the weight's rows (6 of 5) are no slice of it.
        let (k, wi) = grouped(false);
        let (t, c) = affine_terms(&k, wi).expect("a sum of scaled terms");
        assert!(classify(&k.free_vars(), &t, c, 1, &depths, (3, 5, 4), 6).is_none());
    }
}
