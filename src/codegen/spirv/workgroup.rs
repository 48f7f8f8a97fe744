//! The work-group schedules (see `lower::schedule`): row reductions folded cooperatively
//! through local memory, and matrix products staged tile by tile.
//!
//! Barriers follow OpenCL's `barrier(CLK_LOCAL_MEM_FENCE)`: execution and memory scope
//! Workgroup, semantics WorkgroupMemory | SequentiallyConsistent. Every barrier is emitted where
//! all work-items of the group arrive — never inside a branch or a loop whose trip count
//! differs between work-items — which `Writer::uniform` tracks.

use rspirv::dr::Operand;
use rspirv::spirv::{self, CLOp, MemorySemantics, Scope, SelectionControl, Word};

use super::types::LocalType;
use super::writer::{Coop, Writer};
use super::CodegenError;
use crate::lower::kernel::{ExprId, KExpr, RedOp, VarId};

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

    fn load_local(&mut self, array: Word, i: Word) -> Result<Word, CodegenError> {
        let (f32t, p) = (self.types.get(&mut self.b, LocalType::F32), self.slot(array, i)?);
        Ok(self.b.load(f32t, None, p, Some(spirv::MemoryAccess::ALIGNED), [Operand::LiteralBit32(4)])?)
    }

    fn store_local(&mut self, array: Word, i: Word, v: Word) -> Result<(), CodegenError> {
        let p = self.slot(array, i)?;
        Ok(self.b.store(p, v, Some(spirv::MemoryAccess::ALIGNED), [Operand::LiteralBit32(4)])?)
    }

    /// `if cond { then }`, as a structured selection.
    fn when(&mut self, cond: Word, then: &mut dyn FnMut(&mut Self) -> Result<(), CodegenError>) -> Result<(), CodegenError> {
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
    /// extent, then the partials are combined pairwise in local memory (log₂ group steps) and
    /// every work-item reads the result.
    pub(super) fn coop_reduce(&mut self, op: RedOp, var: u32, n: Word, body: ExprId) -> Result<Word, CodegenError> {
        let Coop { lid, group, scratch } = self.coop.expect("called with a cooperative group");
        let step = self.types.i64(&mut self.b, group as i64);
        self.uniform = false;
        let partial = self.fold(op, var, lid, step, n, body)?;
        self.uniform = true;
        self.store_local(scratch, lid, partial)?;
        self.barrier()?;
        let boolt = self.types.get(&mut self.b, LocalType::Bool);
        let i64t = self.types.get(&mut self.b, LocalType::I64);
        let mut half = group / 2;
        while half >= 1 {
            let h = self.types.i64(&mut self.b, half as i64);
            let active = self.b.s_less_than(boolt, None, lid, h)?;
            self.when(active, &mut |w| {
                let other = w.b.i_add(i64t, None, lid, h)?;
                let (x, y) = (w.load_local(scratch, lid)?, w.load_local(scratch, other)?);
                let r = w.combine(op, x, y)?;
                w.store_local(scratch, lid, r)
            })?;
            self.barrier()?;
            half /= 2;
        }
        let zero = self.types.i64(&mut self.b, 0);
        let r = self.load_local(scratch, zero)?;
        // The next reduction reuses the scratch array: nobody may overwrite slot 0 before every
        // work-item has read it.
        self.barrier()?;
        Ok(r)
    }

    /// One work-group per index of the first `outer` coordinates: the row statistics (every
    /// subexpression that depends on those coordinates only) are emitted first, cooperatively,
    /// then the work-items stride over the row's output elements.
    pub(super) fn rows(&mut self, outer: u32, group: u32, group_var: Word, lid_var: Word, scratch: Word) -> Result<(), CodegenError> {
        let k = self.k;
        let rank = k.domain.len();
        let outer = (outer as usize).min(rank);
        let i64t = self.types.get(&mut self.b, LocalType::I64);
        let row = self.load_id(group_var, 0)?;
        let lid = self.load_id(lid_var, 0)?;
        let (outer_ext, _) = self.extents(0..outer)?;
        let (inner_ext, inner) = self.extents(outer..rank)?;
        // The launch has exactly one group per row, so the row coordinates are in range.
        self.bind_coords(row, &outer_ext, 0)?;
        self.coop = Some(Coop { lid, group, scratch });
        self.uniform = true;
        for store in &k.stores {
            self.hoist(store.value, &mut Default::default())?;
        }
        self.uniform = false;
        let base = self.b.i_mul(i64t, None, row, inner)?;
        let step = self.types.i64(&mut self.b, group as i64);
        self.counted_loop(lid, inner, step, &[], &mut |w, e, _| {
            w.bind_coords(e, &inner_ext, outer as u32)?;
            let at = w.b.i_add(i64t, None, base, e)?;
            for store in &k.stores {
                let v = w.emit(store.value)?;
                w.store_elem(store.buf, at, v)?;
            }
            Ok(vec![])
        })?;
        self.coop = None;
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
        let clamped = self.cl(i64t, CLOp::s_min, &[kk, last])?;
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
        let ic = self.cl(i64t, CLOp::s_min, &[gi, m1])?;
        let jc = self.cl(i64t, CLOp::s_min, &[gj, n1])?;
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
            for store in &k.stores {
                let v = w.emit(store.value)?;
                w.store_elem(store.buf, at, v)?;
            }
            Ok(())
        })
    }
}
