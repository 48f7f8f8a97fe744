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

use std::collections::HashSet;

use rspirv::spirv::Word;

use super::types::LocalType;
use super::writer::Writer;
use super::CodegenError;
use crate::lower::kernel::{ExprId, KExpr, Kernel, Ty, VarId};

/// Elements of one cached row vector (16 KB of float32 per array: within the local memory of
/// the OpenCL CPU device, 256 KB, and of Intel GPUs, 64 KB or more, beside the tiles).
pub const ROW_CACHE: u32 = 4096;
/// Most row vectors cached per kernel.
const MAX_CACHED: usize = 2;

/// A row vector: expression `value` of the row coordinates and of variable `var` (running
/// over `0..extent`), read by a fold inside the output loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowVector {
    pub value: ExprId,
    pub var: VarId,
    pub extent: ExprId,
}

/// The row vectors worth caching in kernel `k` whose rows are its first `outer` coordinates:
/// the largest subexpressions of a fold's body inside the output loop that depend on the row
/// and the fold's variable only, contain a fold of their own (so recomputing them is the
/// costly part), and are float32; the fold's extent must not depend on the row.
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
                    found.push(RowVector { value: x, var, extent });
                }
                continue;
            }
            inside.extend(k.children(x));
        }
    }
    found.sort_by_key(|r| r.value);
    found.truncate(MAX_CACHED);
    found
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
    pub(super) fn fill_row_cache(&mut self, lid: Word, group: Word) -> Result<(), CodegenError> {
        for (rv, array) in self.row_cache.clone() {
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
        self.cache_live = true;
        Ok(())
    }

    /// The cached value of `e` at the current value of its variable, when `e` is a row vector
    /// whose array has been filled and whose variable is bound.
    pub(super) fn cached_row_value(&mut self, e: ExprId) -> Result<Option<Word>, CodegenError> {
        if !self.cache_live {
            return Ok(None);
        }
        let Some((rv, array)) = self.row_cache.iter().find(|(rv, _)| rv.value == e).copied() else { return Ok(None) };
        let Some(j) = self.vars.get(&rv.var).copied() else { return Ok(None) };
        if self.bound & (1u128 << rv.var.0) == 0 {
            return Ok(None);
        }
        Ok(Some(self.load_local(array, j)?))
    }
}
