//! The work-group schedules (see `lower::schedule`): row reductions folded cooperatively
//! through local memory, and matrix products staged tile by tile.
//!
//! Barriers follow OpenCL's `barrier(CLK_LOCAL_MEM_FENCE)`: execution and memory scope
//! Workgroup, semantics WorkgroupMemory | SequentiallyConsistent. Every barrier is emitted where
//! all work-items of the group arrive — never inside a branch or a loop whose trip count
//! differs between work-items — which `Writer::uniform` tracks.

use rspirv::dr::Operand;
use rspirv::spirv::{self, GroupOperation, MemorySemantics, Scope, SelectionControl, Word};

use super::types::LocalType;
use super::writer::{Coop, Writer};
use super::CodegenError;
use crate::lower::kernel::{ExprId, KExpr, RedOp, Ty, VarId};

/// Accumulators per work-item of a cooperative fold ([`Writer::fold_unrolled`]).
const UNROLL: usize = 4;

/// The row and output coordinates of the row schedule: extents (SPIR-V ids) of the first
/// `outer` coordinates and of the rest, and the outputs per row.
struct RowShape {
    outer: usize,
    outer_ext: Vec<Word>,
    inner_ext: Vec<Word>,
    inner: Word,
}

impl<'k> Writer<'k> {
    pub(super) fn barrier(&mut self) -> Result<(), CodegenError> {
        let scope = self.types.u32(&mut self.b, Scope::Workgroup as u32);
        let sem = (MemorySemantics::WORKGROUP_MEMORY | MemorySemantics::SEQUENTIALLY_CONSISTENT).bits();
        let sem = self.types.u32(&mut self.b, sem);
        Ok(self.b.control_barrier(scope, scope, sem)?)
    }

    /// Pointer to element `i` of a `__local float[]` scratch array.
    fn slot(&mut self, array: Word, i: Word) -> Result<Word, CodegenError> {
        let ptr = self.types.get(&mut self.b, LocalType::LocalF32);
        Ok(self.b.in_bounds_access_chain(ptr, None, array, [i])?)
    }

    pub(super) fn load_local(&mut self, array: Word, i: Word) -> Result<Word, CodegenError> {
        let (f32t, p) = (self.types.get(&mut self.b, LocalType::F32), self.slot(array, i)?);
        Ok(self.b.load(f32t, None, p, Some(spirv::MemoryAccess::ALIGNED), [Operand::LiteralBit32(4)])?)
    }

    pub(super) fn store_local(&mut self, array: Word, i: Word, v: Word) -> Result<(), CodegenError> {
        let p = self.slot(array, i)?;
        Ok(self.b.store(p, v, Some(spirv::MemoryAccess::ALIGNED), [Operand::LiteralBit32(4)])?)
    }

    /// `if cond { then }`, as a structured selection.
    pub(super) fn when(&mut self, cond: Word, then: &mut dyn FnMut(&mut Self) -> Result<(), CodegenError>) -> Result<(), CodegenError> {
        let (body, merge) = (self.b.id(), self.b.id());
        self.b.selection_merge(merge, SelectionControl::NONE)?;
        self.b.branch_conditional(cond, body, merge, [])?;
        self.label = self.b.begin_block(Some(body))?;
        self.scopes.push(Default::default());
        let r = then(self);
        self.scopes.pop();
        r?;
        self.b.branch(merge)?;
        self.label = self.b.begin_block(Some(merge))?;
        Ok(())
    }

    /// A reduction folded by the whole work-group: each work-item folds a strided slice of the
    /// extent (neighbouring work-items read neighbouring elements), then a work-group reduction
    /// (`work_group_reduce_add/max/min`) combines the partials and hands every work-item the
    /// result: the runtime's own combine, one synchronisation instead of a tree of barriers.
    pub(super) fn coop_reduce(&mut self, op: RedOp, var: u32, n: Word, body: ExprId) -> Result<Word, CodegenError> {
        let Coop { lid, group } = self.coop.expect("called with a cooperative group");
        self.uniform = false;
        let partial = match op {
            RedOp::Sum | RedOp::Max | RedOp::Min => self.fold_unrolled(op, var, lid, group, n, body)?,
            _ => self.fold(op, var, lid, group, n, body)?,
        };
        self.uniform = true;
        let f32t = self.types.get(&mut self.b, LocalType::F32);
        let scope = self.types.u32(&mut self.b, Scope::Workgroup as u32);
        let reduce = GroupOperation::Reduce;
        Ok(match op {
            RedOp::Sum => self.b.group_f_add(f32t, None, scope, reduce, partial)?,
            RedOp::Max => self.b.group_f_max(f32t, None, scope, reduce, partial)?,
            RedOp::Min => self.b.group_f_min(f32t, None, scope, reduce, partial)?,
            RedOp::Prod | RedOp::Xor => {
                return Err(CodegenError::Unsupported(format!("a work-group {op:?} (the row schedule folds it serially)")))
            }
        })
    }

    /// A work-item's float32 partial of a cooperative fold (`start, start + step, …` below `n`)
    /// with [`UNROLL`] independent accumulators: the summands of one iteration (an `exp` each,
    /// in a softmax) do not wait for each other's additions. Whole groups of [`UNROLL`] of the
    /// work-item's elements go through the unrolled loop, the rest through a plain one; the
    /// accumulators are combined pairwise at the end. Only the summation order differs from
    /// [`Self::fold`].
    fn fold_unrolled(&mut self, op: RedOp, var: u32, start: Word, step: Word, n: Word, body: ExprId) -> Result<Word, CodegenError> {
        let (i64t, f32t) = (self.types.get(&mut self.b, LocalType::I64), self.types.get(&mut self.b, LocalType::F32));
        let init = self.types.f32(
            &mut self.b,
            match op {
                RedOp::Max => f32::NEG_INFINITY,
                RedOp::Min => f32::INFINITY,
                _ => 0.0,
            },
        );
        // The unrolled loop runs while all its UNROLL elements are below `n`; it carries its
        // counter out, and the plain loop takes the rest from there (no division: a 64-bit
        // divide per lane cost more than a row of 64 elements).
        let unroll = self.types.i64(&mut self.b, UNROLL as i64);
        let stride = self.b.i_mul(i64t, None, step, unroll)?;
        let last = self.b.i_sub(i64t, None, stride, step)?;
        let main_end = self.b.i_sub(i64t, None, n, last)?;
        let mut carried = vec![(f32t, init); UNROLL];
        carried.push((i64t, start));
        let out = self.counted_loop(start, main_end, stride, &carried, &mut |w, i, acc| {
            let mut next = Vec::with_capacity(UNROLL + 1);
            let mut at = i;
            for (u, a) in acc[..UNROLL].iter().enumerate() {
                if u > 0 {
                    at = w.b.i_add(i64t, None, at, step)?;
                }
                // Each copy of the body in a scope of its own: its subexpressions depend on `at`.
                w.scopes.push(Default::default());
                let v = w.fold_element(var, at, body);
                w.scopes.pop();
                next.push(w.combine_ty(op, *a, v?, Ty::F32)?);
            }
            next.push(w.b.i_add(i64t, None, i, stride)?);
            Ok(next)
        })?;
        let (accs, rest) = (&out[..UNROLL], out[UNROLL]);
        let tail = self.counted_loop(rest, n, step, &[(f32t, accs[0])], &mut |w, i, acc| {
            let v = w.fold_element(var, i, body)?;
            Ok(vec![w.combine_ty(op, acc[0], v, Ty::F32)?])
        })?;
        let lo = self.combine_ty(op, tail[0], accs[1], Ty::F32)?;
        let hi = self.combine_ty(op, accs[2], accs[3], Ty::F32)?;
        self.combine_ty(op, lo, hi, Ty::F32)
    }

    /// `if cond { then } else { other }`, as a structured selection; each arm in its own scope.
    fn if_else(
        &mut self,
        cond: Word,
        then: &mut dyn FnMut(&mut Self) -> Result<(), CodegenError>,
        other: &mut dyn FnMut(&mut Self) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let (yes, no, merge) = (self.b.id(), self.b.id(), self.b.id());
        self.b.selection_merge(merge, SelectionControl::NONE)?;
        self.b.branch_conditional(cond, yes, no, [])?;
        self.arm(yes, merge, then)?;
        self.arm(no, merge, other)?;
        self.label = self.b.begin_block(Some(merge))?;
        Ok(())
    }

    fn arm(&mut self, label: Word, merge: Word, f: &mut dyn FnMut(&mut Self) -> Result<(), CodegenError>) -> Result<(), CodegenError> {
        self.label = self.b.begin_block(Some(label))?;
        self.scopes.push(Default::default());
        let r = f(self);
        self.scopes.pop();
        r?;
        Ok(self.b.branch(merge)?)
    }

    /// The row schedule: rows are the indices of the first `outer` coordinates. The launch's
    /// `row_group` argument picks the mapping: 0 gives each work-item one row (rows numbered by
    /// global id, bounds-checked); otherwise each work-group of `row_group` work-items folds
    /// the block of rows `group_id · ⌈rows / num_groups⌉, …` one after the other (`coop`
    /// kernels only): the
    /// launch caps the groups ([`crate::lower::schedule::MAX_ROW_GROUPS`]), so many short rows
    /// do not pay a group's start-up each. Either way the row statistics (every subexpression
    /// that depends on the row coordinates only) are emitted once, before the loop over the
    /// row's outputs. The branch is on a kernel argument and the row loop's bounds are the
    /// group's, so every work-item of a group takes the same path, as the work-group
    /// reductions and barriers in the second one require.
    pub(super) fn rows(&mut self, outer: u32, coop: bool, [gid_var, group_var, lid_var, groups_var]: [Word; 4]) -> Result<(), CodegenError> {
        let k = self.k;
        let rank = k.domain.len();
        let outer = (outer as usize).min(rank);
        let boolt = self.types.get(&mut self.b, LocalType::Bool);
        let (outer_ext, rows) = self.extents(0..outer)?;
        let (inner_ext, inner) = self.extents(outer..rank)?;
        let row_group = self.params[k.buffers.len() + k.params.len()];
        let (zero, one) = (self.types.i64(&mut self.b, 0), self.types.i64(&mut self.b, 1));
        let per_item = self.b.i_equal(boolt, None, row_group, zero)?;
        let shape = RowShape { outer, outer_ext, inner_ext, inner };
        let saved = (self.vars.clone(), self.bound);
        self.if_else(
            per_item,
            &mut |w| {
                let row = w.load_id(gid_var, 0)?;
                let in_range = w.b.s_less_than(boolt, None, row, rows)?;
                w.when(in_range, &mut |w| w.row_body(&shape, row, zero, one, None))?;
                (w.vars, w.bound) = saved.clone();
                Ok(())
            },
            &mut |w| {
                let group = w.load_id(group_var, 0)?;
                let groups = w.load_id(groups_var, 0)?;
                let lid = w.load_id(lid_var, 0)?;
                let coop = coop.then_some(Coop { lid, group: row_group });
                // A contiguous block of ⌈rows / groups⌉ rows per group: one stream through
                // memory that the hardware prefetcher follows. Rows `group, group + groups, …`
                // jumped `groups` rows between a group's rows and ran 64 short rows per group
                // at half the speed on the OpenCL CPU device once they spilled out of cache.
                let i64t = w.types.get(&mut w.b, LocalType::I64);
                let spare = w.b.i_sub(i64t, None, groups, one)?;
                let per = w.b.i_add(i64t, None, rows, spare)?;
                let per = w.b.s_div(i64t, None, per, groups)?;
                let first = w.b.i_mul(i64t, None, group, per)?;
                let end = w.b.i_add(i64t, None, first, per)?;
                let end = w.i64_extreme(false, end, rows)?;
                w.counted_loop(first, end, one, &[], &mut |w, row, _| {
                    w.row_body(&shape, row, lid, row_group, coop)?;
                    // The next row refills the row cache: every work-item must be done
                    // reading this row's first.
                    if coop.is_some() && !w.row_cache.is_empty() {
                        w.barrier()?;
                    }
                    Ok(vec![])
                })?;
                (w.vars, w.bound) = saved.clone();
                Ok(())
            },
        )
    }

    /// One row: its statistics (cooperatively when `coop` is given), then its outputs
    /// `first, first + step, …`, reading the row vectors from local memory where the group
    /// cached them (`rowcache`).
    fn row_body(&mut self, shape: &RowShape, row: Word, first: Word, step: Word, coop: Option<Coop>) -> Result<(), CodegenError> {
        self.bind_coords(row, &shape.outer_ext, 0)?;
        self.coop = coop;
        self.uniform = coop.is_some();
        if self.stash.is_some() {
            let i64t = self.types.get(&mut self.b, LocalType::I64);
            self.stash_base = Some(self.b.i_mul(i64t, None, row, shape.inner)?);
            self.stash_written = false;
        }
        let early = coop.is_some() && self.row_cache.iter().any(|(rv, _)| rv.early);
        // With early row vectors the statistics are computed in each arm below: from the
        // cached vectors where they fit, from scratch where they do not.
        if !early {
            self.row_statistics()?;
        }
        let Some(Coop { lid, group }) = coop.filter(|_| !self.row_cache.is_empty()) else {
            return self.row_outputs(shape, row, first, step);
        };
        let fits = self.row_cache_fits()?;
        let saved = (self.vars.clone(), self.bound);
        self.if_else(
            fits,
            &mut |w| {
                if early {
                    w.fill_row_cache(lid, group, true)?;
                    w.coop = coop;
                    w.uniform = true;
                    w.row_statistics()?;
                }
                w.fill_row_cache(lid, group, false)?;
                let r = w.row_outputs(shape, row, first, step);
                w.cache_live = false;
                w.early_live = false;
                r
            },
            &mut |w| {
                (w.vars, w.bound) = saved.clone();
                if early {
                    w.coop = coop;
                    w.uniform = true;
                    w.row_statistics()?;
                }
                w.row_outputs(shape, row, first, step)
            },
        )
    }

    /// The row's statistics: every subexpression of the stores that depends on the row alone,
    /// folded cooperatively where `self.coop` is set (then left unset).
    fn row_statistics(&mut self) -> Result<(), CodegenError> {
        for store in &self.k.stores {
            self.hoist(store.value, &mut Default::default())?;
        }
        self.stash_base = None;
        self.uniform = false;
        self.coop = None;
        Ok(())
    }

    /// The outputs `first, first + step, …` of one row whose statistics are emitted.
    fn row_outputs(&mut self, shape: &RowShape, row: Word, first: Word, step: Word) -> Result<(), CodegenError> {
        let k = self.k;
        let i64t = self.types.get(&mut self.b, LocalType::I64);
        let base = self.b.i_mul(i64t, None, row, shape.inner)?;
        self.counted_loop(first, shape.inner, step, &[], &mut |w, e, _| {
            w.bind_coords(e, &shape.inner_ext, shape.outer as u32)?;
            let at = w.b.i_add(i64t, None, base, e)?;
            w.stash_at = w.stash_written.then_some(at);
            for store in &k.stores {
                let v = w.emit(store.value);
                let v = v.and_then(|v| w.store_elem(store.buf, at, v));
                w.stash_at = None;
                v?;
            }
            Ok(vec![])
        })?;
        Ok(())
    }

    /// Operand `e` of a tiled dot product at contraction index `kk` (0 past the extent `n`,
    /// where it is evaluated at the last valid index so every load stays in bounds).
    fn operand_at(&mut self, e: ExprId, var: VarId, kk: Word, n: Word) -> Result<Word, CodegenError> {
        let (i64t, f32t, boolt) = (
            self.types.get(&mut self.b, LocalType::I64),
            self.types.get(&mut self.b, LocalType::F32),
            self.types.get(&mut self.b, LocalType::Bool),
        );
        let one = self.types.i64(&mut self.b, 1);
        let last = self.b.i_sub(i64t, None, n, one)?;
        let clamped = self.i64_extreme(false, kk, last)?;
        self.scopes.push(Default::default());
        self.vars.insert(var, clamped);
        self.bound |= 1u128 << var.0;
        let v = self.emit(e);
        self.bound &= !(1u128 << var.0);
        self.scopes.pop();
        let v = v?;
        let ok = self.b.s_less_than(boolt, None, kk, n)?;
        let zero = self.types.f32(&mut self.b, 0.0);
        Ok(self.b.select(f32t, None, ok, v, zero)?)
    }

    /// `tile × tile` outputs per work-group (x: columns `j`, y: rows `i`, z: the flattened batch
    /// coordinates). Per step of the contraction each work-item stages one element of `a` and
    /// one of `b`; work-items past the edge of the output stage clamped (harmless) elements and
    /// store nothing.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tiled(&mut self, tile: u32, reduce: ExprId, a: ExprId, b: ExprId, gid_var: Word, lid_var: Word, tiles: [Word; 2]) -> Result<(), CodegenError> {
        let k = self.k;
        let rank = k.domain.len();
        let KExpr::Reduce { var, extent, .. } = *k.expr(reduce) else {
            return Err(CodegenError::Unsupported("a tiled schedule whose dot product is not a reduction".into()));
        };
        let (i64t, f32t, boolt) = (
            self.types.get(&mut self.b, LocalType::I64),
            self.types.get(&mut self.b, LocalType::F32),
            self.types.get(&mut self.b, LocalType::Bool),
        );
        let (gj, gi, batch) = (self.load_id(gid_var, 0)?, self.load_id(gid_var, 1)?, self.load_id(gid_var, 2)?);
        let (lx, ly) = (self.load_id(lid_var, 0)?, self.load_id(lid_var, 1)?);
        let (batch_ext, _) = self.extents(0..rank - 2)?;
        let (mn, _) = self.extents(rank - 2..rank)?;
        let (m, n) = (mn[0], mn[1]);
        self.bind_coords(batch, &batch_ext, 0)?;
        let one = self.types.i64(&mut self.b, 1);
        let (m1, n1) = (self.b.i_sub(i64t, None, m, one)?, self.b.i_sub(i64t, None, n, one)?);
        let ic = self.i64_extreme(false, gi, m1)?;
        let jc = self.i64_extreme(false, gj, n1)?;
        for (d, c) in [(rank - 2, ic), (rank - 1, jc)] {
            self.vars.insert(VarId(d as u32), c);
            self.bound |= 1u128 << d;
        }
        let kn = self.emit(extent)?;
        self.hoist(a, &mut Default::default())?;
        self.hoist(b, &mut Default::default())?;
        let t = self.types.i64(&mut self.b, tile as i64);
        let t1 = self.types.i64(&mut self.b, tile as i64 - 1);
        let steps = self.b.i_add(i64t, None, kn, t1)?;
        let steps = self.b.s_div(i64t, None, steps, t)?;
        let row = self.b.i_mul(i64t, None, ly, t)?;
        let mine = self.b.i_add(i64t, None, row, lx)?;
        let zero = self.types.i64(&mut self.b, 0);
        let fzero = self.types.f32(&mut self.b, 0.0);
        let [ta, tb] = tiles;
        let acc = self.counted_loop(zero, steps, one, &[(f32t, fzero)], &mut |w, s, acc| {
            let base = w.b.i_mul(i64t, None, s, t)?;
            let ka = w.b.i_add(i64t, None, base, lx)?;
            let kb = w.b.i_add(i64t, None, base, ly)?;
            let va = w.operand_at(a, var, ka, kn)?;
            let vb = w.operand_at(b, var, kb, kn)?;
            w.store_local(ta, mine, va)?;
            w.store_local(tb, mine, vb)?;
            w.barrier()?;
            let mut sum = acc[0];
            for kk in 0..tile {
                let c = w.types.i64(&mut w.b, kk as i64);
                let ai = w.b.i_add(i64t, None, row, c)?;
                let c = w.types.i64(&mut w.b, (kk * tile) as i64);
                let bi = w.b.i_add(i64t, None, c, lx)?;
                let (x, y) = (w.load_local(ta, ai)?, w.load_local(tb, bi)?);
                let p = w.b.f_mul(f32t, None, x, y)?;
                sum = w.b.f_add(f32t, None, sum, p)?;
            }
            w.barrier()?;
            Ok(vec![sum])
        })?;
        self.scopes[0].insert(reduce, acc[0]);
        let in_m = self.b.s_less_than(boolt, None, gi, m)?;
        let in_n = self.b.s_less_than(boolt, None, gj, n)?;
        let in_range = self.b.logical_and(boolt, None, in_m, in_n)?;
        self.when(in_range, &mut |w| {
            let at = w.b.i_mul(i64t, None, batch, m)?;
            let at = w.b.i_add(i64t, None, at, gi)?;
            let at = w.b.i_mul(i64t, None, at, n)?;
            let at = w.b.i_add(i64t, None, at, gj)?;
            w.store_outputs(at)
        })
    }
}
