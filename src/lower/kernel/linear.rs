//! Output coordinates as digits of the linear output index, for the elementwise schedule.
//!
//! Why: a work-item of the elementwise schedule is given its linear (row-major) output index
//! and used to split it into coordinates (`/` and `%` by each extent) before anything read
//! them. A read of a buffer laid out like the output then joined the coordinates again
//! (`c0·P0 + c1·P1 + c2`), which is the index itself; but the split happened in codegen,
//! below the index folds, and the OpenCL CPU runtime does not undo it either: a 64-bit
//! division is not vectorized, and a clamp over a `[s, 24]` tensor ran 3.5× slower than the
//! same kernel written in OpenCL C (docs/PERFORMANCE.md). Written in the kernel IR as
//! `c_d = (L / P_d) % S_d` (`P_d` the contiguous stride of dim `d`, `S_d` its extent), the
//! coordinates meet the folds of `index.rs`: a same-layout read becomes `L`, a broadcast read
//! `L % P`, and only what really needs a coordinate (a transposed read, a mask) divides.

use super::{BinOp, ExprId, Kernel, KernelBuilder, VarId};
use crate::lower::schedule::Schedule;
use crate::sym;

impl Kernel {
    /// This kernel with its output coordinates rewritten as digits of a new variable, the
    /// linear output index ([`Kernel::linear`]); unchanged unless it is on the elementwise
    /// schedule over two or more coordinates. On the column schedule only the coordinates
    /// before the column's are, as digits of the row index (when there are two or more of
    /// them).
    pub fn linearize(self) -> Kernel {
        let rank = self.domain.len();
        if rank < 2 || self.linear.is_some() || self.vars >= 128 {
            return self;
        }
        // On the column schedule the last `dims` coordinates are the grid's own column; the
        // rest is the row.
        let digits_of = match self.schedule {
            Schedule::Elementwise => rank,
            Schedule::Columns { dims, .. } if rank > dims as usize + 1 => rank - dims as usize,
            Schedule::Depthwise { .. } => rank - 1,
            _ => return self,
        };
        let sizes: Vec<sym::Expr> = self.domain_sizes[..digits_of].to_vec();
        let mut kb = KernelBuilder::reopen(&self);
        let linear = VarId(kb.vars);
        kb.vars += 1;
        kb.linear = Some(linear);
        let total = sizes.iter().fold(sym::Expr::int(1), |acc, s| sym::Expr::mul(acc, s.clone())).simplify();
        kb.set_var_extent(linear, total);
        // The digits are built once, at the first coordinate the rebuild meets, as codegen split
        // the index before: `q_{n-1} = L`, `q_d = q_{d+1} / S_{d+1}`, `c_d = q_d % S_d`, `c_0 = q_0`
        // (each step divides by one extent; `quotient_by` sees the chain as `L / P_d`).
        let mut digits: Option<Vec<ExprId>> = None;
        let map = kb.refold_with(&mut |kb, v| {
            let d = v.0 as usize;
            if d >= digits_of {
                return None;
            }
            if digits.is_none() {
                digits = Some(coordinate_digits(kb, linear, &sizes)?);
            }
            digits.as_ref().map(|c| c[d])
        });
        Kernel {
            name: self.name,
            buffers: kb.buffers,
            params: kb.params,
            domain: self.domain.iter().map(|d| map[d.0 as usize]).collect(),
            domain_sizes: self.domain_sizes,
            stores: self.stores.into_iter().map(|s| super::Store { buf: s.buf, value: map[s.value.0 as usize] }).collect(),
            exprs: kb.exprs,
            types: kb.types,
            vars: kb.vars,
            schedule: self.schedule,
            linear: Some(linear),
        }
    }
}

/// The output coordinates as digits of `linear` over extents `sizes` (row-major).
fn coordinate_digits(kb: &mut KernelBuilder, linear: VarId, sizes: &[sym::Expr]) -> Option<Vec<ExprId>> {
    let rank = sizes.len();
    let mut coords = vec![ExprId(0); rank];
    let mut q = kb.var(linear);
    for d in (0..rank).rev() {
        let s = kb.size(&sizes[d]);
        // The first coordinate needs no remainder: `L < S_0 · P_0`.
        coords[d] = if d == 0 { q } else { kb.binary(BinOp::Rem, q, s).ok()? };
        if d > 0 {
            q = kb.binary(BinOp::Div, q, s).ok()?;
        }
    }
    Some(coords)
}

#[cfg(test)]
mod tests {
    use super::super::index::eval_index;
    use super::super::{Access, KExpr, Store};
    use std::collections::HashMap;

    use super::*;
    use crate::ir::TensorMeta;

    /// The value of integer expression `e` of `k` with variables `vars` bound, `s` = `s` and
    /// `t` = `s + 1`.
    fn eval(k: &Kernel, e: ExprId, vars: &HashMap<u32, i64>, s: i64) -> i64 {
        let mut b = sym::Bindings::new();
        b.set("s", s);
        b.set("t", s + 1);
        eval_index(&|x| k.expr(x).clone(), &k.params, e, &|v| vars[&v.0], &b)
    }

    fn divisions(k: &Kernel, e: ExprId) -> usize {
        usize::from(matches!(k.expr(e), KExpr::Binary(BinOp::Div | BinOp::Rem, ..))) + k.children(e).iter().map(|c| divisions(k, *c)).sum::<usize>()
    }

    /// A `[s, 3, 8]` output reading `x` laid out like it, `bias` of shape `[8]` (broadcast),
    /// `y` of shape `[8, 3, s]` read transposed and `z` of shape `[3, 8]` (broadcast).
    fn three_reads() -> Kernel {
        reads_over(&[sym::Expr::symbol("s"), sym::Expr::int(3), sym::Expr::int(8)])
    }

    /// The reads of [`three_reads`] over any extents (the bias has the last one).
    fn reads_over(sizes: &[sym::Expr]) -> Kernel {
        let rank = sizes.len();
        let mut kb = KernelBuilder::new(rank);
        let domain: Vec<ExprId> = sizes.iter().map(|s| kb.size(s)).collect();
        kb.set_coord_extents(&domain);
        let c: Vec<ExprId> = (0..rank as u32).map(|d| kb.var(VarId(d))).collect();
        let strides = TensorMeta::contiguous_strides(&sizes);
        let mut same = kb.i64(0);
        for (ci, st) in c.iter().zip(&strides) {
            let st = kb.size(st);
            let t = kb.binary(BinOp::Mul, *ci, st).unwrap();
            same = kb.binary(BinOp::Add, same, t).unwrap();
        }
        let rev: Vec<sym::Expr> = sizes.iter().rev().cloned().collect();
        let rst = TensorMeta::contiguous_strides(&rev);
        let mut transposed = kb.i64(0);
        for (ci, st) in c.iter().rev().zip(&rst) {
            let st = kb.size(st);
            let t = kb.binary(BinOp::Mul, *ci, st).unwrap();
            transposed = kb.binary(BinOp::Add, transposed, t).unwrap();
        }
        // The last two dims, broadcast over the others: `c[-2]·S[-1] + c[-1]`.
        let last = kb.size(&sizes[rank - 1]);
        let tail = kb.binary(BinOp::Mul, c[rank - 2], last).unwrap();
        let tail = kb.binary(BinOp::Add, tail, c[rank - 1]).unwrap();
        let (x, bias, y) = (kb.buffer("x", Access::Read), kb.buffer("bias", Access::Read), kb.buffer("y", Access::Read));
        let (z, out) = (kb.buffer("z", Access::Read), kb.buffer("out", Access::Write));
        let (lx, lb, ly, lz) = (kb.load(x, same), kb.load(bias, c[rank - 1]), kb.load(y, transposed), kb.load(z, tail));
        let v = kb.binary(BinOp::Add, lx, lb).unwrap();
        let v = kb.binary(BinOp::Mul, v, ly).unwrap();
        let v = kb.binary(BinOp::Sub, v, lz).unwrap();
        kb.finish("k".into(), sizes.to_vec(), domain, vec![Store { buf: out, value: v }])
    }

    /// Divisions and remainders by kernel arguments (not constants) among `e` and what it reads.
    fn runtime_divisions(k: &Kernel, e: ExprId, seen: &mut Vec<bool>) -> usize {
        if std::mem::replace(&mut seen[e.0 as usize], true) {
            return 0;
        }
        let own = usize::from(matches!(k.expr(e), KExpr::Binary(BinOp::Div | BinOp::Rem, _, d) if matches!(k.expr(*d), KExpr::Param(_))));
        own + k.children(e).iter().map(|c| runtime_divisions(k, *c, seen)).sum::<usize>()
    }

    /// Splitting `[s, 4, t, 8]` divides by `t` twice (a remainder and a quotient), as the
    /// split codegen did before; dividing by the products `8·t` and `32·t` (kernel arguments)
    /// would take four, and the constant steps (by 8 and 4) would become argument divisions.
    #[test]
    fn digits_divide_by_one_extent_at_a_time() {
        let sizes = [sym::Expr::symbol("s"), sym::Expr::int(4), sym::Expr::symbol("t"), sym::Expr::int(8)];
        let k = reads_over(&sizes).linearize();
        let mut seen = vec![false; k.exprs.len()];
        let n: usize = k.stores.iter().map(|s| runtime_divisions(&k, s.value, &mut seen)).sum();
        assert_eq!(n, 2, "the transposed read needs every coordinate: t once as a remainder, once as a quotient; the [t, 8] read joins two of them instead of L % 8t");
        assert!(load_indices(&k).iter().any(|i| *k.expr(*i) == KExpr::Var(k.linear.expect("linearized"))), "the same-layout read still folds");
    }

    fn load_indices(k: &Kernel) -> Vec<ExprId> {
        k.exprs.iter().filter_map(|e| if let KExpr::Load { index, .. } = e { Some(*index) } else { None }).collect()
    }

    #[test]
    fn same_layout_reads_take_the_linear_index_and_broadcasts_one_remainder() {
        let k = three_reads().linearize();
        let l = k.linear.expect("an elementwise kernel over three coordinates is linearized");
        let idx = load_indices(&k);
        assert_eq!(idx.len(), 4);
        assert_eq!(*k.expr(idx[0]), KExpr::Var(l), "x is laid out like the output: its index is the work-item's");
        assert_eq!(divisions(&k, idx[1]), 1, "the broadcast bias is L % 8");
        assert!(divisions(&k, idx[2]) > 0, "a transposed read still needs its coordinates");
        assert_eq!(divisions(&k, idx[3]), 1, "the last two dims (3·8 elements) are L % 24");
        assert!(!k.exprs.iter().any(|e| matches!(e, KExpr::Var(v) if v.0 < 3)), "no coordinate is left for codegen to split");
    }

    /// Every load reads the same element before and after, for every output element and
    /// several values of the dynamic extent.
    #[test]
    fn linearized_indices_agree_with_the_coordinates_everywhere() {
        let before = three_reads();
        let after = before.clone().linearize();
        let l = after.linear.expect("linearized").0;
        let (ib, ia) = (load_indices(&before), load_indices(&after));
        for s in [1, 2, 5] {
            let mut lin = 0;
            for c0 in 0..s {
                for c1 in 0..3 {
                    for c2 in 0..8 {
                        let coords = HashMap::from([(0, c0), (1, c1), (2, c2)]);
                        let linear = HashMap::from([(l, lin)]);
                        for (b, a) in ib.iter().zip(&ia) {
                            assert_eq!(eval(&before, *b, &coords, s), eval(&after, *a, &linear, s), "s={s} at ({c0},{c1},{c2})");
                        }
                        lin += 1;
                    }
                }
            }
        }
    }

    /// The rebuild maps the operands of every kind of expression into the new arena: a
    /// fused multiply-add and a bit pattern once kept their old ids, which the digits inserted
    /// before them shifted (OpInfo's `hermite_polynomial_he` then recursed without end).
    #[test]
    fn every_operand_is_rebuilt_into_the_new_arena() {
        let sizes = [sym::Expr::symbol("s"), sym::Expr::int(8)];
        let mut kb = KernelBuilder::new(2);
        let domain: Vec<ExprId> = sizes.iter().map(|s| kb.size(s)).collect();
        kb.set_coord_extents(&domain);
        let (c0, c1) = (kb.var(VarId(0)), kb.var(VarId(1)));
        let (a, out) = (kb.buffer("a", Access::Read), kb.buffer("out", Access::Write));
        // A broadcast read keeps its digit (`L % 8`), so the rebuilt arena is longer.
        let x = kb.load(a, c1);
        let y = kb.cast(c0, super::super::Ty::F32);
        let fma = kb.mul_add(x, y, x).unwrap();
        let wide = kb.cast(x, super::super::Ty::F64);
        let bits = kb.bits(wide).unwrap();
        let back = kb.cast(bits, super::super::Ty::F32);
        let v = kb.binary(BinOp::Add, fma, back).unwrap();
        let before = kb.finish("k".into(), sizes.to_vec(), domain, vec![Store { buf: out, value: v }]);
        let load_at = |k: &Kernel| k.exprs.iter().position(|e| matches!(e, KExpr::Load { .. })).expect("one load");
        let old_load = load_at(&before);
        let k = before.linearize();
        assert!(k.linear.is_some());
        k.validate().unwrap();
        let load = load_at(&k);
        assert_ne!(old_load, load, "the digits shift the arena, or this test could not tell old ids from new ones");
        for (i, e) in k.exprs.iter().enumerate() {
            for c in k.children(ExprId(i as u32)) {
                assert!((c.0 as usize) < i, "{e:?} at {i} reads {c:?}, not built before it");
            }
            match *e {
                KExpr::MulAdd(p, q, r) => {
                    assert_eq!((p.0 as usize, r.0 as usize), (load, load), "{e:?} reads the load through its old id");
                    assert!(matches!(k.expr(q), KExpr::ToF32(_) | KExpr::Cast(..)), "{e:?}: {:?}", k.expr(q));
                }
                KExpr::Bits(p) => assert!(matches!(k.expr(p), KExpr::Cast(..)), "{e:?}: {:?}", k.expr(p)),
                _ => {}
            }
        }
    }

    #[test]
    fn one_coordinate_and_other_schedules_are_left_alone() {
        let mut kb = KernelBuilder::new(1);
        let i = kb.var(VarId(0));
        let (a, out) = (kb.buffer("a", Access::Read), kb.buffer("out", Access::Write));
        let d = kb.size(&sym::Expr::symbol("n"));
        let x = kb.load(a, i);
        let k = kb.finish("k".into(), vec![sym::Expr::symbol("n")], vec![d], vec![Store { buf: out, value: x }]);
        assert_eq!(k.linearize().linear, None);
        let mut rows = three_reads();
        rows.schedule = Schedule::Rows { outer: 1, group: 16, coop: true, extent: rows.domain[2] };
        assert_eq!(rows.linearize().linear, None);
    }
}
