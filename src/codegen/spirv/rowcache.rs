//! Row vectors cached in local memory on the cooperative row schedule.
//!
//! An output loop may fold, per output element, a value that does not depend on which output
//! of the row it is: attention's `Σ_j exp(score(j) − max) · v[j, d]` recomputes every
//! `score(j)` (a dot product over the head dim) for each output column `d`, so a row costs
//! `S·E²` multiply-adds instead of `S·E`. Such a value is a *row vector*: a function of the row
//! and of the fold's variable alone. The group computes it once per row into a `__local`
//! array (work-item `l` fills `j = l, l + g, …`), synchronises, and the output loop reads the
//! array instead. Rows whose fold is longer than the array take the uncached path, chosen per
//! launch from the fold's extent (a kernel argument, so every work-item of the group takes the
//! same branch, as the barrier requires).
//!
//! The row statistics may compute part of a row vector again: attention's maximum and
//! denominator fold `score(j)` and `exp(score(j) − max)`, each a dot product per key, so a row
//! still cost `3·S·E` multiply-adds. That part (reading no statistic) is an *early* row vector:
//! cached before the statistics, which read it in place of their own copies, and read again
//! when the weights `exp(score(j) − max)` are cached after them. A row's scores are then
//! computed once (Llama's attention kernel 28–36 → 22–25 µs on the OpenCL CPU device,
//! docs/PERFORMANCE.md).

use std::collections::HashSet;

use rspirv::spirv::Word;

use super::types::LocalType;
use super::writer::Writer;
use super::CodegenError;
use crate::lower::kernel::{ExprId, KExpr, Kernel, Ty, VarId};

/// Elements of one cached row vector (16 KB of float32 per array: within the local memory of
/// the OpenCL CPU device, 256 KB, and of Intel GPUs, 64 KB or more, beside the tiles).
pub const ROW_CACHE: u32 = 4096;
/// Most row vectors cached per kernel (an attention's: its scores and its softmax weights).
const MAX_CACHED: usize = 2;

/// A row vector: expression `value` of the row coordinates and of variable `var` (running
/// over `0..extent`), read by a fold inside the output loop.
///
/// An *early* one reads no row statistic, so the group fills it before the statistics, which
/// then read it too: `aliases` are the same expression in the statistics' folds, written with
/// their own variables (`score(j)` in the maximum's and the denominator's folds, `score(j')`
/// in the output's).
#[derive(Clone, Debug, PartialEq)]
pub struct RowVector {
    pub value: ExprId,
    pub var: VarId,
    pub extent: ExprId,
    pub early: bool,
    pub aliases: Vec<(ExprId, VarId)>,
}

/// The row vectors worth caching in kernel `k` whose rows are its first `outer` coordinates:
/// the largest subexpressions of a fold's body inside the output loop that depend on the row
/// and the fold's variable only, contain a fold of their own (so recomputing them is the
/// costly part), and are float32; the fold's extent must not depend on the row. Each is
/// preceded by its early vector ([`early_vector`]) while arrays are left.
pub fn row_vectors(k: &Kernel, outer: usize) -> Vec<RowVector> {
    let free = k.free_vars();
    let coords = (1u128 << k.domain.len()) - 1;
    let row = (1u128 << outer) - 1;
    let inner = coords & !row;
    let mut found: Vec<RowVector> = Vec::new();
    let mut seen = HashSet::new();
    let mut stack: Vec<ExprId> = k.stores.iter().map(|s| s.value).collect();
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        stack.extend(k.children(e));
        let KExpr::Reduce { var, extent, body, .. } = *k.expr(e) else { continue };
        if free[e.0 as usize] & inner == 0 || free[extent.0 as usize] != 0 {
            continue;
        }
        let bit = 1u128 << var.0;
        let mut inside = vec![body];
        let mut visited = HashSet::new();
        while let Some(x) = inside.pop() {
            if !visited.insert(x) {
                continue;
            }
            let f = free[x.0 as usize];
            if f & bit != 0 && f & !(row | bit) == 0 {
                if k.ty(x) == Ty::F32 && has_fold(k, x) && !found.iter().any(|r| r.value == x) {
                    found.push(RowVector { value: x, var, extent, early: false, aliases: Vec::new() });
                }
                continue;
            }
            inside.extend(k.children(x));
        }
    }
    found.sort_by_key(|r| r.value);
    // A vector whose statistics recompute a part of it (an attention's scores: the maximum's
    // fold, the denominator's and the weights' each computed every `score(j)`, `3·S·E`
    // multiply-adds a row where `S·E` do) gets that part cached first, in its place.
    // Only where an array is left over: a late vector is never displaced by an early one.
    found.truncate(MAX_CACHED);
    let mut spare = MAX_CACHED - found.len();
    let mut out: Vec<RowVector> = Vec::new();
    for rv in found {
        if spare > 0 {
            if let Some(early) = early_vector(k, &free, outer, &rv) {
                out.push(early);
                spare -= 1;
            }
        }
        out.push(rv);
    }
    out
}

/// The early vector inside late vector `rv` that the row's statistics also compute: the
/// largest subexpression of `rv.value` that moves with `rv.var`, contains a fold, is float32
/// and reads no row statistic, with its copies (same expression, the statistic's own variable
/// and the same extent) in the bodies of the row statistics; `None` when no statistic has one.
fn early_vector(k: &Kernel, free: &[u128], outer: usize, rv: &RowVector) -> Option<RowVector> {
    let row = (1u128 << outer) - 1;
    let bit = 1u128 << rv.var.0;
    let stats = crate::lower::schedule::top_reduces(k, free);
    let stats: Vec<ExprId> = stats.into_iter().filter(|r| free[r.0 as usize] & !row == 0).collect();
    let reads_stat = |x: ExprId| {
        let mut stack = vec![x];
        let mut seen = HashSet::new();
        while let Some(y) = stack.pop() {
            if !seen.insert(y) {
                continue;
            }
            if stats.contains(&y) {
                return true;
            }
            stack.extend(k.children(y));
        }
        false
    };
    let mut stack = vec![rv.value];
    let mut seen = HashSet::new();
    while let Some(x) = stack.pop() {
        if !seen.insert(x) || free[x.0 as usize] & bit == 0 {
            continue;
        }
        if k.ty(x) != Ty::F32 || !has_fold(k, x) || reads_stat(x) {
            stack.extend(k.children(x));
            continue;
        }
        let mut aliases = Vec::new();
        for &s in &stats {
            let KExpr::Reduce { var, extent, body, .. } = *k.expr(s) else { continue };
            if extent != rv.extent {
                continue;
            }
            let mut inside = vec![body];
            let mut visited = HashSet::new();
            while let Some(y) = inside.pop() {
                if !visited.insert(y) || free[y.0 as usize] & (1u128 << var.0) == 0 {
                    continue;
                }
                if same_up_to_vars(k, free, x, y, &mut vec![(rv.var, var)]) {
                    aliases.push((y, var));
                    continue;
                }
                inside.extend(k.children(y));
            }
        }
        if aliases.is_empty() {
            return None;
        }
        return Some(RowVector { value: x, var: rv.var, extent: rv.extent, early: true, aliases });
    }
    None
}

/// Whether `a` and `b` compute the same value once each variable of `pairs` in `a` is read as
/// its partner in `b`; the folds met on the way add their own variables' pair.
fn same_up_to_vars(k: &Kernel, free: &[u128], a: ExprId, b: ExprId, pairs: &mut Vec<(VarId, VarId)>) -> bool {
    if a == b {
        return pairs.iter().all(|(x, y)| x == y || free[a.0 as usize] & (1u128 << x.0) == 0);
    }
    match (k.expr(a), k.expr(b)) {
        (KExpr::Var(x), KExpr::Var(y)) => pairs.iter().any(|p| p == &(*x, *y)),
        (KExpr::Reduce { op, var, extent, body }, KExpr::Reduce { op: op2, var: var2, extent: extent2, body: body2 }) => {
            if op != op2 || k.ty(a) != k.ty(b) || !same_up_to_vars(k, free, *extent, *extent2, pairs) {
                return false;
            }
            pairs.push((*var, *var2));
            let same = same_up_to_vars(k, free, *body, *body2, pairs);
            pairs.pop();
            same
        }
        (KExpr::Reduce { .. } | KExpr::Loop { .. } | KExpr::Carried { .. } | KExpr::LoopOut { .. } | KExpr::Rng(_), _) => false,
        (x, y) if std::mem::discriminant(x) == std::mem::discriminant(y) && k.ty(a) == k.ty(b) => {
            let (ca, cb) = (k.children(a), k.children(b));
            if ca.is_empty() {
                return x == y;
            }
            // Same variant with the children compared apart: the node itself must agree once its
            // operands are read as equal (operators, buffers, cast types).
            ca.len() == cb.len() && x.map_operands(&mut |_| ExprId(0)) == y.map_operands(&mut |_| ExprId(0)) && ca.iter().zip(&cb).all(|(p, q)| same_up_to_vars(k, free, *p, *q, pairs))
        }
        _ => false,
    }
}

fn has_fold(k: &Kernel, e: ExprId) -> bool {
    let mut stack = vec![e];
    let mut seen = HashSet::new();
    while let Some(x) = stack.pop() {
        if !seen.insert(x) {
            continue;
        }
        if matches!(k.expr(x), KExpr::Reduce { .. }) {
            return true;
        }
        stack.extend(k.children(x));
    }
    false
}

impl<'k> Writer<'k> {
    /// Whether every cached row vector's fold fits its array at this launch.
    pub(super) fn row_cache_fits(&mut self) -> Result<Word, CodegenError> {
        let boolt = self.types.get(&mut self.b, LocalType::Bool);
        let cap = self.types.i64(&mut self.b, ROW_CACHE as i64);
        let mut fits = self.types.bool(&mut self.b, true);
        for (rv, _) in self.row_cache.clone() {
            let n = self.emit(rv.extent)?;
            let ok = self.b.s_less_than_equal(boolt, None, n, cap)?;
            fits = self.b.logical_and(boolt, None, fits, ok)?;
        }
        Ok(fits)
    }

    /// Work-item `lid` of a group of `group` fills elements `lid, lid + group, …` of every
    /// cached row vector; then the group synchronises, and from here on the vectors are read
    /// from their arrays (see `Writer::emit`).
    pub(super) fn fill_row_cache(&mut self, lid: Word, group: Word, early: bool) -> Result<(), CodegenError> {
        for (rv, array) in self.row_cache.clone().into_iter().filter(|(rv, _)| rv.early == early) {
            let n = self.emit(rv.extent)?;
            let uniform = std::mem::replace(&mut self.uniform, false);
            let r = self.counted_loop(lid, n, group, &[], &mut |w, j, _| {
                w.vars.insert(rv.var, j);
                w.bound |= 1u128 << rv.var.0;
                let v = w.emit(rv.value);
                w.bound &= !(1u128 << rv.var.0);
                w.store_local(array, j, v?)?;
                Ok(vec![])
            });
            self.uniform = uniform;
            r?;
        }
        self.barrier()?;
        if early {
            self.early_live = true;
        } else {
            self.cache_live = true;
        }
        Ok(())
    }

    /// The cached value of `e` at the current value of its variable, when `e` is a row vector
    /// whose array has been filled and whose variable is bound.
    /// An early vector's aliases (its copies in the statistics' folds) read it too, at their
    /// own variable.
    pub(super) fn cached_row_value(&mut self, e: ExprId) -> Result<Option<Word>, CodegenError> {
        if !self.cache_live && !self.early_live {
            return Ok(None);
        }
        let found = self.row_cache.iter().find_map(|(rv, array)| {
            let live = if rv.early { self.early_live } else { self.cache_live };
            let var = if rv.value == e { Some(rv.var) } else { rv.aliases.iter().find(|(a, _)| *a == e).map(|(_, v)| *v) };
            var.filter(|_| live).map(|v| (v, *array))
        });
        let Some((var, array)) = found else { return Ok(None) };
        let Some(j) = self.vars.get(&var).copied() else { return Ok(None) };
        if self.bound & (1u128 << var.0) == 0 {
            return Ok(None);
        }
        Ok(Some(self.load_local(array, j)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::{Access, BinOp, KernelBuilder, RedOp, Store, UnOp};
    use crate::sym::Expr;

    /// Attention's shape over rows `r < 3` of `S = 5` keys, head dim 4, output columns `c < 4`:
    /// `out[r, c] = Σ_j exp(score(j) − max) · v[j, c]` with `score(j) = Σ_e q[r, e] · k[j, e]`
    /// (from buffer `k_of_max` in the maximum's fold: the same as `k` or not).
    fn attention(k_of_max: &str) -> Kernel {
        let mut kb = KernelBuilder::new(2);
        let (q, kk, v) = (kb.buffer("q", Access::Read), kb.buffer("k", Access::Read), kb.buffer("v", Access::Read));
        let k2 = kb.buffer(k_of_max, Access::Read);
        let out = kb.buffer("out", Access::Write);
        let (three, four, five) = (kb.i64(3), kb.i64(4), kb.i64(5));
        kb.set_coord_extents(&[three, four]);
        let (r, c) = (kb.var(VarId(0)), kb.var(VarId(1)));
        let score = |kb: &mut KernelBuilder, j: ExprId, kbuf: u32| {
            let ev = kb.fresh_var().unwrap();
            let e = kb.var(ev);
            let qi = kb.binary(BinOp::Mul, r, four).unwrap();
            let qi = kb.binary(BinOp::Add, qi, e).unwrap();
            let ki = kb.binary(BinOp::Mul, j, four).unwrap();
            let ki = kb.binary(BinOp::Add, ki, e).unwrap();
            let (a, b) = (kb.load(q, qi), kb.load(kbuf, ki));
            let p = kb.binary(BinOp::Mul, a, b).unwrap();
            kb.reduce(RedOp::Sum, ev, four, p).unwrap()
        };
        let jv = kb.fresh_var().unwrap();
        let j = kb.var(jv);
        let s = score(&mut kb, j, k2);
        let m = kb.reduce(RedOp::Max, jv, five, s).unwrap();
        let jv2 = kb.fresh_var().unwrap();
        let j2 = kb.var(jv2);
        let s2 = score(&mut kb, j2, kk);
        let d = kb.binary(BinOp::Sub, s2, m).unwrap();
        let p = kb.unary(UnOp::Exp, d);
        let vi = kb.binary(BinOp::Mul, j2, four).unwrap();
        let vi = kb.binary(BinOp::Add, vi, c).unwrap();
        let vv = kb.load(v, vi);
        let pv = kb.binary(BinOp::Mul, p, vv).unwrap();
        let num = kb.reduce(RedOp::Sum, jv2, five, pv).unwrap();
        kb.finish("attention".into(), vec![Expr::int(3), Expr::int(4)], vec![three, four], vec![Store { buf: out, value: num }])
    }

    /// The scores are cached first, read by the maximum's fold (one copy, its own variables),
    /// then the weights; a maximum over other keys shares nothing and only the weights are.
    #[test]
    fn scores_are_cached_before_the_statistics_that_recompute_them() {
        let k = attention("k");
        let rv = row_vectors(&k, 1);
        assert_eq!(rv.iter().map(|r| (r.early, r.aliases.len())).collect::<Vec<_>>(), [(true, 1), (false, 0)], "{rv:?}");
        assert!(matches!(k.expr(rv[0].value), KExpr::Reduce { op: RedOp::Sum, .. }), "{:?}", k.expr(rv[0].value));
        assert!(matches!(k.expr(rv[1].value), KExpr::Unary(UnOp::Exp, _)), "{:?}", k.expr(rv[1].value));
        let other = attention("k_other");
        let rv = row_vectors(&other, 1);
        assert_eq!(rv.iter().map(|r| (r.early, r.aliases.len())).collect::<Vec<_>>(), [(false, 0)], "{rv:?}");
    }
}
