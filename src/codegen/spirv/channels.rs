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

/// Where a work-item's lanes are: channel lanes from `first` (of `extent`), `block` of them;
/// pixel lanes from `pixel` along the last coordinate (of `width`), `pixels` of them.
struct Lanes {
    first: Word,
    extent: Word,
    block: u32,
    pixel: Word,
    width: Word,
    pixels: u32,
}

impl<'k> Writer<'k> {
    /// Column from the grid's first dimension, row (with the blocked coordinate counted in
    /// blocks) from its second; every lane's outputs of the work-item.
    pub(super) fn channels(&mut self, gid_var: Word) -> Result<(), CodegenError> {
        let k = self.k;
        let rank = k.domain.len();
        let Schedule::Channels { group, dims, coord, block, pixels } = k.schedule else { unreachable!("called on the channel schedule") };
        let split = rank.saturating_sub(dims as usize);
        let (column, row) = (self.load_id(gid_var, 0)?, self.load_id(gid_var, 1)?);
        let (row_extents, _) = self.extents(0..split)?;
        let (column_extents, columns) = self.extents(split..rank)?;
        let i64t = self.types.get(&mut self.b, LocalType::I64);
        let c = coord as usize;
        let blocks = |w: &mut Self, extent: Word, n: u32| -> Result<Word, CodegenError> {
            let (n, below) = (w.types.i64(&mut w.b, i64::from(n)), w.types.i64(&mut w.b, i64::from(n) - 1));
            let padded = w.b.i_add(i64t, None, extent, below)?;
            Ok(w.b.s_div(i64t, None, padded, n)?)
        };
        let block_w = self.types.i64(&mut self.b, i64::from(block));
        let mut blocked = row_extents.clone();
        blocked[c] = blocks(self, row_extents[c], block)?;
        // The column counts blocks of `pixels` along its last coordinate.
        let width = *column_extents.last().ok_or(CodegenError::UnboundVar(rank as u32))?;
        let mut blocked_columns = column_extents.clone();
        let mut launched = columns;
        if pixels > 1 {
            let last = blocked_columns.len() - 1;
            blocked_columns[last] = blocks(self, width, pixels)?;
            launched = self.types.i64(&mut self.b, 1);
            for &e in &blocked_columns {
                launched = self.b.i_mul(i64t, None, launched, e)?;
            }
        }
        let exact = column_extent(k, dims).zip(self.static_width()).is_some_and(|(n, w)| (n / w * (w + i64::from(pixels) - 1) / i64::from(pixels)) % i64::from(group) == 0);
        let mut body = |w: &mut Self| -> Result<(), CodegenError> {
            let i64t = w.types.get(&mut w.b, LocalType::I64);
            w.bind_coords(column, &blocked_columns, split as u32)?;
            w.bind_coords(row, &blocked, 0)?;
            let index = *w.vars.get(&VarId(coord)).ok_or(CodegenError::UnboundVar(coord))?;
            let first = w.b.i_mul(i64t, None, index, block_w)?;
            w.vars.insert(VarId(coord), first);
            let last = rank as u32 - 1;
            let mut pixel = *w.vars.get(&VarId(last)).ok_or(CodegenError::UnboundVar(last))?;
            if pixels > 1 {
                let p = w.types.i64(&mut w.b, i64::from(pixels));
                pixel = w.b.i_mul(i64t, None, pixel, p)?;
                w.vars.insert(VarId(last), pixel);
            }
            // Lane 0's output index, row-major over the unblocked extents, and the step
            // between channel lanes (the elements of one index of the blocked coordinate);
            // pixel lanes are neighbours. Without pixel lanes the column is the work-item's
            // own, which keeps a store contiguous across the work-items for the runtime.
            let row_at = |w: &mut Self, extents: &[Word], first: usize| -> Result<Word, CodegenError> {
                let mut at = w.types.i64(&mut w.b, 0);
                for (d, &e) in extents.iter().enumerate() {
                    let var = (first + d) as u32;
                    let v = *w.vars.get(&VarId(var)).ok_or(CodegenError::UnboundVar(var))?;
                    at = w.b.i_mul(i64t, None, at, e)?;
                    at = w.b.i_add(i64t, None, at, v)?;
                }
                Ok(at)
            };
            let mut at = row_at(w, &row_extents, 0)?;
            let own = if pixels > 1 { row_at(w, &column_extents, split)? } else { column };
            at = w.b.i_mul(i64t, None, at, columns)?;
            at = w.b.i_add(i64t, None, at, own)?;
            let mut step = columns;
            for &e in &row_extents[c + 1..] {
                step = w.b.i_mul(i64t, None, step, e)?;
            }
            let lanes = Lanes { first, extent: row_extents[c], block, pixel, width, pixels };
            w.store_lanes(&lanes, at, step)
        };
        if exact {
            return body(self);
        }
        let boolt = self.types.get(&mut self.b, LocalType::Bool);
        let in_range = self.b.s_less_than(boolt, None, column, launched)?;
        self.when(in_range, &mut body)
    }

    /// The static extent of the last output coordinate, if any.
    fn static_width(&self) -> Option<i64> {
        match *self.k.expr(*self.k.domain.last()?) {
            KExpr::I64(n) if n > 0 => Some(n),
            _ => None,
        }
    }

    /// The lanes' folds first (fused), then each lane's stores at `at + b · step + p` (channel
    /// lane `b`, pixel lane `p`), skipping the lanes at or past an extent.
    fn store_lanes(&mut self, l: &Lanes, at: Word, step: Word) -> Result<(), CodegenError> {
        let k = self.k;
        let lanes = l.block as usize * l.pixels as usize;
        let mut seen = HashSet::new();
        for s in k.stores.chunks(lanes) {
            let values: Vec<ExprId> = s.iter().map(|st| st.value).collect();
            self.pair_folds(&values, &mut seen)?;
        }
        let ragged = match *k.expr(k.domain[self.coord()]) {
            KExpr::I64(n) => n % i64::from(l.block) != 0,
            _ => true,
        };
        let ragged_w = self.static_width().is_none_or(|w| w % i64::from(l.pixels) != 0);
        let i64t = self.types.get(&mut self.b, LocalType::I64);
        let boolt = self.types.get(&mut self.b, LocalType::Bool);
        for lane in 0..lanes {
            let (b, p) = ((lane / l.pixels as usize) as i64, (lane % l.pixels as usize) as i64);
            let (bw, pw) = (self.types.i64(&mut self.b, b), self.types.i64(&mut self.b, p));
            let offset = self.b.i_mul(i64t, None, bw, step)?;
            let here = self.b.i_add(i64t, None, at, offset)?;
            let here = if p > 0 { self.b.i_add(i64t, None, here, pw)? } else { here };
            // The lane's values outside the bounds check, only the stores inside it: the
            // lanes are clamped, so computing a ragged lane reads in bounds, and a branch around
            // the whole epilogue (a GELU's erf) cost a dynamic-row product 4× its static twin
            // on the OpenCL CPU device (docs/PERFORMANCE.md).
            let values = k.stores.iter().skip(lane).step_by(lanes).map(|st| Ok((st.buf, self.emit(st.value)?))).collect::<Result<Vec<_>, CodegenError>>()?;
            let mut store = |w: &mut Self| -> Result<(), CodegenError> {
                for &(buf, v) in &values {
                    w.store_elem(buf, here, v)?;
                }
                Ok(())
            };
            let mut inside = None;
            if ragged && b > 0 {
                let index = self.b.i_add(i64t, None, l.first, bw)?;
                inside = Some(self.b.s_less_than(boolt, None, index, l.extent)?);
            }
            if ragged_w && p > 0 {
                let index = self.b.i_add(i64t, None, l.pixel, pw)?;
                let within = self.b.s_less_than(boolt, None, index, l.width)?;
                inside = Some(match inside {
                    Some(i) => self.b.logical_and(boolt, None, i, within)?,
                    None => within,
                });
            }
            match inside {
                Some(cond) => self.when(cond, &mut store)?,
                None => store(self)?,
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
    fn pair_folds(&mut self, lanes: &[ExprId], seen: &mut HashSet<ExprId>) -> Result<(), CodegenError> {
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
