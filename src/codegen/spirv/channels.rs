//! [`Schedule::Channels`]: the column schedule with a block of indices of one row coordinate
//! per work-item (a convolution's output channels). The stores are lane copies
//! (`Kernel::lanes`) whose shared nodes are one arena node; here the lanes' reductions are
//! folded in one loop nest carrying one accumulator per lane, so a shared node in the loop
//! body (an input tap, its mask and index) is emitted once per iteration for all lanes.

use std::collections::HashSet;

use rspirv::spirv::Word;

use super::types::LocalType;
use super::writer::Writer;
use super::CodegenError;
use crate::lower::kernel::{ExprId, KExpr, VarId};
use crate::lower::schedule::{column_extent, Schedule};

impl<'k> Writer<'k> {
    /// Column from the grid's first dimension, row (with the blocked coordinate counted in
    /// blocks) from its second; every lane's outputs of the work-item.
    pub(super) fn channels(&mut self, gid_var: Word) -> Result<(), CodegenError> {
        let k = self.k;
        let rank = k.domain.len();
        let Schedule::Channels { group, dims, coord, block } = k.schedule else { unreachable!("called on the channel schedule") };
        let split = rank.saturating_sub(dims as usize);
        let (column, row) = (self.load_id(gid_var, 0)?, self.load_id(gid_var, 1)?);
        let (row_extents, _) = self.extents(0..split)?;
        let (column_extents, columns) = self.extents(split..rank)?;
        let i64t = self.types.get(&mut self.b, LocalType::I64);
        let c = coord as usize;
        let block_w = self.types.i64(&mut self.b, i64::from(block));
        let below = self.types.i64(&mut self.b, i64::from(block) - 1);
        let padded = self.b.i_add(i64t, None, row_extents[c], below)?;
        let blocks = self.b.s_div(i64t, None, padded, block_w)?;
        let mut blocked = row_extents.clone();
        blocked[c] = blocks;
        let exact = column_extent(k, dims).is_some_and(|n| n % i64::from(group) == 0);
        let mut body = |w: &mut Self| -> Result<(), CodegenError> {
            let i64t = w.types.get(&mut w.b, LocalType::I64);
            w.bind_coords(column, &column_extents, split as u32)?;
            w.bind_coords(row, &blocked, 0)?;
            let index = *w.vars.get(&VarId(coord)).ok_or(CodegenError::UnboundVar(coord))?;
            let first = w.b.i_mul(i64t, None, index, block_w)?;
            w.vars.insert(VarId(coord), first);
            // Lane 0's output index, row-major over the unblocked extents, and the step
            // between lanes (the elements of one index of the blocked coordinate).
            let mut at = w.types.i64(&mut w.b, 0);
            for (d, &e) in row_extents.iter().enumerate() {
                let v = *w.vars.get(&VarId(d as u32)).ok_or(CodegenError::UnboundVar(d as u32))?;
                at = w.b.i_mul(i64t, None, at, e)?;
                at = w.b.i_add(i64t, None, at, v)?;
            }
            at = w.b.i_mul(i64t, None, at, columns)?;
            at = w.b.i_add(i64t, None, at, column)?;
            let mut step = columns;
            for &e in &row_extents[c + 1..] {
                step = w.b.i_mul(i64t, None, step, e)?;
            }
            w.store_lanes(first, row_extents[c], at, step, block)
        };
        if exact {
            return body(self);
        }
        let boolt = self.types.get(&mut self.b, LocalType::Bool);
        let in_range = self.b.s_less_than(boolt, None, column, columns)?;
        self.when(in_range, &mut body)
    }

    /// The lanes' folds first (fused), then each lane's stores at `at + b · step`, skipping the
    /// lanes at or past `extent` (`first + b`).
    fn store_lanes(&mut self, first: Word, extent: Word, at: Word, step: Word, block: u32) -> Result<(), CodegenError> {
        let k = self.k;
        let lanes = block as usize;
        let mut seen = HashSet::new();
        for s in k.stores.chunks(lanes) {
            let values: Vec<ExprId> = s.iter().map(|st| st.value).collect();
            self.pair_folds(&values, &mut seen)?;
        }
        let ragged = match *k.expr(k.domain[self.coord()]) {
            KExpr::I64(n) => n % i64::from(block) != 0,
            _ => true,
        };
        let i64t = self.types.get(&mut self.b, LocalType::I64);
        let boolt = self.types.get(&mut self.b, LocalType::Bool);
        for b in 0..lanes {
            let lane = self.types.i64(&mut self.b, b as i64);
            let offset = self.b.i_mul(i64t, None, lane, step)?;
            let here = self.b.i_add(i64t, None, at, offset)?;
            // The lane's values outside the bounds check, only the stores inside it: the
            // lanes are clamped, so computing a ragged lane reads in bounds, and a branch around
            // the whole epilogue (a GELU's erf) cost a dynamic-row product 4× its static twin
            // on the OpenCL CPU device (docs/PERFORMANCE.md).
            let values = k.stores.iter().skip(b).step_by(lanes).map(|st| Ok((st.buf, self.emit(st.value)?))).collect::<Result<Vec<_>, CodegenError>>()?;
            let mut store = |w: &mut Self| -> Result<(), CodegenError> {
                for &(buf, v) in &values {
                    w.store_elem(buf, here, v)?;
                }
                Ok(())
            };
            if ragged && b > 0 {
                let index = self.b.i_add(i64t, None, first, lane)?;
                let inside = self.b.s_less_than(boolt, None, index, extent)?;
                self.when(inside, &mut store)?;
            } else {
                store(self)?;
            }
        }
        Ok(())
    }

    fn coord(&self) -> usize {
        match self.k.schedule {
            Schedule::Channels { coord, .. } => coord as usize,
            _ => 0,
        }
    }

    /// Walks the lanes' copies of one expression side by side down to their outermost folds,
    /// and emits each set of corresponding folds together ([`Self::fused_fold`]). Nodes the
    /// lanes share are left to the ordinary emission; copies that differ in shape (a fold
    /// simplified in one lane) are too, which is correct, only not fused.
    pub(super) fn pair_folds(&mut self, lanes: &[ExprId], seen: &mut HashSet<ExprId>) -> Result<(), CodegenError> {
        let k = self.k;
        let mut stack = vec![lanes.to_vec()];
        while let Some(set) = stack.pop() {
            let first = set[0];
            if set.iter().all(|e| *e == first) || !seen.insert(first) {
                continue;
            }
            if self.same_fold(&set) {
                // Only folds over the bound coordinates are emitted here, outside any loop.
                if self.free[first.0 as usize] & !self.bound == 0 {
                    self.fused_fold(&set)?;
                }
                continue;
            }
            let kind = std::mem::discriminant(k.expr(first));
            if set.iter().any(|e| std::mem::discriminant(k.expr(*e)) != kind) {
                continue;
            }
            let children: Vec<Vec<ExprId>> = set.iter().map(|e| k.children(*e)).collect();
            if children.iter().any(|c| c.len() != children[0].len()) {
                continue;
            }
            for i in 0..children[0].len() {
                stack.push(children.iter().map(|c| c[i]).collect());
            }
        }
        Ok(())
    }

    /// Whether `set` are folds of the same op, variable and extent (lane copies of one fold).
    fn same_fold(&self, set: &[ExprId]) -> bool {
        let KExpr::Reduce { op, var, extent, .. } = *self.k.expr(set[0]) else { return false };
        set.iter().all(|e| matches!(*self.k.expr(*e), KExpr::Reduce { op: o, var: v, extent: x, .. } if o == op && v == var && x == extent))
    }

    /// The lane folds `set` in one loop carrying one accumulator each, their bodies' nested
    /// folds fused the same way; the results are visible from here on.
    fn fused_fold(&mut self, set: &[ExprId]) -> Result<Vec<Word>, CodegenError> {
        let k = self.k;
        let KExpr::Reduce { op, var, extent, .. } = *k.expr(set[0]) else { unreachable!("checked by same_fold") };
        let bodies: Vec<ExprId> = set.iter().map(|e| match *k.expr(*e) {
            KExpr::Reduce { body, .. } => body,
            _ => unreachable!("checked by same_fold"),
        }).collect();
        let n = self.emit(extent)?;
        let mut seen = HashSet::new();
        for &b in &bodies {
            self.hoist(b, &mut seen)?;
        }
        let ty = k.ty(set[0]);
        let (tyw, init) = (self.ty_word(ty), self.identity(op, ty));
        let carried = vec![(tyw, init); set.len()];
        let (zero, one) = (self.types.i64(&mut self.b, 0), self.types.i64(&mut self.b, 1));
        let uniform = std::mem::replace(&mut self.uniform, false);
        let outs = self.counted_loop(zero, n, one, &carried, &mut |w, i, accs| {
            w.vars.insert(var, i);
            w.bound |= 1u128 << var.0;
            let values = w.lane_values(&bodies);
            w.bound &= !(1u128 << var.0);
            let values = values?;
            accs.iter().zip(values).map(|(a, v)| w.combine_ty(op, *a, v, ty)).collect()
        });
        self.uniform = uniform;
        let outs = outs?;
        let scope = self.scopes.last_mut().expect("the body scope is never popped");
        for (e, w) in set.iter().zip(&outs) {
            scope.insert(*e, *w);
        }
        Ok(outs)
    }

    /// The lanes' values of one loop body: nested folds fused, anything else emitted per lane
    /// (shared nodes once, by the scope's memo).
    fn lane_values(&mut self, bodies: &[ExprId]) -> Result<Vec<Word>, CodegenError> {
        if bodies.iter().any(|b| *b != bodies[0]) && self.same_fold(bodies) {
            return self.fused_fold(bodies);
        }
        bodies.iter().map(|b| self.emit(*b)).collect()
    }
}
