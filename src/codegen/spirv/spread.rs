//! [`Schedule::Spread`]: one output coordinate (a convolution's output channel) across the
//! work-items, every other output coordinate unrolled into lanes (`Kernel::unrolled`). The
//! lanes' folds run in one loop nest with one accumulator per lane
//! ([`Writer::pair_folds`]), so a node they share (the weight read) is emitted once per step
//! for all of them; each lane then stores at its own constant offset.

use std::collections::HashSet;

use rspirv::spirv::Word;

use super::types::LocalType;
use super::writer::Writer;
use super::CodegenError;
use crate::lower::kernel::{ExprId, KExpr, VarId};
use crate::lower::schedule::Schedule;

impl<'k> Writer<'k> {
    /// The coordinate from the grid's first dimension, the leading `outer` ones (flattened)
    /// from its second; every lane's outputs of the work-item, lane `l` at
    /// `row · inner + coordinate · stride + offset(l)` (the output's row-major index with the
    /// unrolled coordinates at lane `l`'s digits; `inner` the elements of one row).
    pub(super) fn spread(&mut self, gid_var: Word) -> Result<(), CodegenError> {
        let k = self.k;
        let Schedule::Spread { group, coord, lanes, outer } = k.schedule else { unreachable!("called on the spread schedule") };
        let (c, outer) = (coord as usize, outer as usize);
        let sizes: Vec<Option<i64>> = k.domain.iter().map(|d| match *k.expr(*d) {
            KExpr::I64(n) => Some(n),
            _ => None,
        }).collect();
        let fixed = |d: usize| sizes[d].ok_or_else(|| CodegenError::Unsupported(format!("the spread schedule with output dim {d} of dynamic extent")));
        let mut stride = 1i64;
        for d in c + 1..sizes.len() {
            stride *= fixed(d)?;
        }
        // Each lane's offset: its digits over the other coordinates, row-major.
        let others: Vec<usize> = (outer..sizes.len()).filter(|d| *d != c).collect();
        let mut inner = 1i64;
        for d in outer..sizes.len() {
            inner *= fixed(d)?;
        }
        let mut offsets = Vec::with_capacity(lanes as usize);
        for l in 0..i64::from(lanes) {
            let (mut rest, mut offset) = (l, 0i64);
            for &d in others.iter().rev() {
                let n = fixed(d)?;
                let place: i64 = (d + 1..sizes.len()).map(|e| sizes[e].unwrap_or(1)).product();
                offset += rest % n * place;
                rest /= n;
            }
            offsets.push(offset);
        }
        let (column, row) = (self.load_id(gid_var, 0)?, self.load_id(gid_var, 1)?);
        let (row_extents, _) = self.extents(0..outer)?;
        let extent = self.emit(k.domain[c])?;
        let exact = sizes[c].is_some_and(|n| n % i64::from(group) == 0);
        let mut body = |w: &mut Self| -> Result<(), CodegenError> {
            let i64t = w.types.get(&mut w.b, LocalType::I64);
            w.bind_coords(row, &row_extents, 0)?;
            w.vars.insert(VarId(coord), column);
            w.bound |= 1u128 << coord;
            let mut seen = HashSet::new();
            for s in k.stores.chunks(lanes as usize) {
                let values: Vec<ExprId> = s.iter().map(|st| st.value).collect();
                w.pair_folds(&values, &mut seen)?;
            }
            let (step, row_step) = (w.types.i64(&mut w.b, stride), w.types.i64(&mut w.b, inner));
            let base = w.b.i_mul(i64t, None, column, step)?;
            let first = w.b.i_mul(i64t, None, row, row_step)?;
            let base = w.b.i_add(i64t, None, first, base)?;
            for (l, &offset) in offsets.iter().enumerate() {
                let off = w.types.i64(&mut w.b, offset);
                let here = w.b.i_add(i64t, None, base, off)?;
                let values = k.stores.iter().skip(l).step_by(lanes as usize).map(|st| Ok((st.buf, w.emit(st.value)?))).collect::<Result<Vec<_>, CodegenError>>()?;
                for (buf, v) in values {
                    w.store_elem(buf, here, v)?;
                }
            }
            Ok(())
        };
        if exact {
            return body(self);
        }
        let boolt = self.types.get(&mut self.b, LocalType::Bool);
        let in_range = self.b.s_less_than(boolt, None, column, extent)?;
        self.when(in_range, &mut body)
    }
}
