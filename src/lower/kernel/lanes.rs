//! Several indices of one output coordinate per work-item: the register blocking of
//! [`Schedule::Channels`](crate::lower::schedule::Schedule::Channels).
//!
//! Why: on the column schedule a convolution's work-item computes one output channel of one
//! pixel, so every input tap it loads (with its padding mask and index arithmetic) is loaded
//! again by the work-items of the other output channels. Written as `block` lane copies of
//! each store, coordinate `c` standing for the block's first index and lane `b` for `c + b`,
//! the expressions that do not depend on `c` (the input taps) are the same arena nodes in
//! every lane; codegen folds the lanes' reductions in one loop, so each tap is loaded once
//! and multiplied into `block` accumulators.
//!
//! A quotient `c / n` is the same in every lane when `n` is a multiple of `block` or at least
//! the coordinate's extent (a convolution's group of the output channel), since `c` is a
//! multiple of `block` and the lanes stay below the extent: that is what lets a grouped
//! convolution share its input taps.

use std::collections::HashMap;

use super::{BinOp, CmpOp, ExprId, KExpr, Kernel, KernelBuilder, Store, VarId};

/// How lanes of coordinate `coord` read a kernel: which nodes differ between lanes.
pub struct LaneInfo {
    /// Per arena node, whether its value differs between lanes.
    pub varies: Vec<bool>,
}

impl Kernel {
    /// Which nodes of `self` differ between `block` lanes of output coordinate `coord`, whose
    /// extent is `extent` (`None`: dynamic; see the module doc for the quotients that do not).
    pub fn lane_info(&self, coord: u32, block: i64, extent: Option<i64>) -> LaneInfo {
        let mut varies = vec![false; self.exprs.len()];
        for i in 0..self.exprs.len() {
            let id = ExprId(i as u32);
            varies[i] = match self.expr(id) {
                KExpr::Var(v) => v.0 == coord,
                KExpr::Binary(BinOp::Div, a, n) if same_block_quotient(self, *a, *n, coord, block, extent) => false,
                _ => self.children(id).iter().any(|c| varies[c.0 as usize]),
            };
        }
        LaneInfo { varies }
    }

    /// `self` with each store replaced by `block` lane copies (store `s` lane `b` at index
    /// `s · block + b`), lane `b` reading coordinate `coord` as `coord + b`, clamped to
    /// `extent - 1` when `block` does not divide the extent (codegen stores no lane past it).
    /// A dynamic extent (`None`, a transformer's batch × sequence rows) may be any count, so
    /// its lanes are always clamped, to the coordinate's run-time extent read from the domain.
    /// `None` when the kernel cannot be copied so (a state loop, whose slots the copy would not
    /// follow).
    pub fn lanes(&self, coord: u32, block: u32, extent: Option<i64>) -> Option<Kernel> {
        if block < 2 || self.exprs.iter().any(|e| matches!(e, KExpr::Loop { .. } | KExpr::Carried { .. } | KExpr::LoopOut { .. })) {
            return None;
        }
        let info = self.lane_info(coord, block as i64, extent);
        let mut kb = KernelBuilder::reopen(self);
        let ragged = extent.is_none_or(|n| n % block as i64 != 0);
        let size = *self.domain.get(coord as usize)?;
        let mut stores = Vec::with_capacity(self.stores.len() * block as usize);
        let mut copies: Vec<HashMap<ExprId, ExprId>> = vec![HashMap::new(); block as usize];
        for s in &self.stores {
            for b in 0..block {
                let at = kb.var(VarId(coord));
                let lane = if b == 0 {
                    at
                } else {
                    let step = kb.i64(b as i64);
                    let moved = kb.binary(BinOp::Add, at, step).ok()?;
                    if ragged {
                        // A select, not `s_min`, for a static extent too: measured, the
                        // OpenCL CPU runtime ran a kernel with an i64 `s_min` of a run-time
                        // size 4× slower than its static twin, and a 394-row product reading
                        // its weight transposed 20–30× slower with `s_min(i + b, 393)` than
                        // with the select or with 392 rows (docs/PERFORMANCE.md).
                        let last = match extent {
                            Some(n) => kb.i64(n - 1),
                            None => {
                                let one = kb.i64(1);
                                kb.binary(BinOp::Sub, size, one).ok()?
                            }
                        };
                        let bound = match extent {
                            Some(n) => kb.i64(n),
                            None => size,
                        };
                        let inside = kb.cmp(CmpOp::Lt, moved, bound).ok()?;
                        kb.select(inside, moved, last).ok()?
                    } else {
                        moved
                    }
                };
                let value = copy(self, &info, &mut kb, &mut copies[b as usize], s.value, coord, lane)?;
                stores.push(Store { buf: s.buf, value });
            }
        }
        let mut out = kb.into_kernel(self.name.clone(), self.domain_sizes.clone(), self.domain.clone(), stores);
        out.schedule = self.schedule;
        Some(out)
    }
}

/// Whether `a / n` is the same for `a = c + b` in every lane `b < block`: `a` is coordinate
/// `c` itself and `n` a constant that `block` divides or that is at least the extent.
fn same_block_quotient(k: &Kernel, a: ExprId, n: ExprId, coord: u32, block: i64, extent: Option<i64>) -> bool {
    matches!(k.expr(a), KExpr::Var(v) if v.0 == coord) && matches!(k.expr(n), KExpr::I64(n) if *n > 0 && (n % block == 0 || extent.is_some_and(|x| *n >= x)))
}

/// The lane copy of `e`: nodes that do not vary are shared; `Var(coord)` becomes `lane`.
/// Iterative (children before parents, from an explicit stack) so long chains do not recurse.
fn copy(k: &Kernel, info: &LaneInfo, kb: &mut KernelBuilder, memo: &mut HashMap<ExprId, ExprId>, e: ExprId, coord: u32, lane: ExprId) -> Option<ExprId> {
    let mut stack = vec![(e, false)];
    while let Some((x, ready)) = stack.pop() {
        if !info.varies[x.0 as usize] || memo.contains_key(&x) {
            continue;
        }
        if !ready {
            stack.push((x, true));
            stack.extend(k.children(x).into_iter().map(|c| (c, false)));
            continue;
        }
        let node = k.expr(x).map_operands(&mut |c| if info.varies[c.0 as usize] { memo[&c] } else { c });
        let new = match node {
            KExpr::Var(v) if v.0 == coord => lane,
            KExpr::Binary(op, a, b) => kb.binary(op, a, b).ok()?,
            KExpr::Cmp(op, a, b) => kb.cmp(op, a, b).ok()?,
            KExpr::Select(c, a, b) => kb.select(c, a, b).ok()?,
            KExpr::Cast(a, t) => kb.cast(a, t),
            KExpr::ToF32(a) => kb.to_f32(a),
            other => kb.intern(other, k.ty(x)),
        };
        // A fold may change nothing but the id; a type change would be a builder bug.
        if kb.ty(new) != k.ty(x) {
            return None;
        }
        memo.insert(x, new);
    }
    Some(if info.varies[e.0 as usize] { memo[&e] } else { e })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::{Access, RedOp};
    use crate::sym;

    /// `out[c, p] = Σ_i x[i, p] · w[c, i]` over 2 channels of 5 inputs, 3 outputs `c`.
    fn channel_sum(groups_of: Option<i64>) -> Kernel {
        let mut kb = KernelBuilder::new(2);
        let (x, w) = (kb.buffer("x", Access::Read), kb.buffer("w", Access::Read));
        let out = kb.buffer("out", Access::Write);
        let (c, p) = (kb.var(VarId(0)), kb.var(VarId(1)));
        let v = kb.fresh_var().unwrap();
        let i = kb.var(v);
        let five = kb.i64(5);
        // With groups: the input channel offset is `(c / n) · 2`.
        let base = match groups_of {
            Some(n) => {
                let n = kb.i64(n);
                let g = kb.binary(BinOp::Div, c, n).unwrap();
                let two = kb.i64(2);
                kb.binary(BinOp::Mul, g, two).unwrap()
            }
            None => kb.i64(0),
        };
        let ci = kb.binary(BinOp::Add, base, i).unwrap();
        let xi = kb.binary(BinOp::Mul, ci, five).unwrap();
        let xi = kb.binary(BinOp::Add, xi, p).unwrap();
        let two = kb.i64(2);
        let wi = kb.binary(BinOp::Mul, c, two).unwrap();
        let wi = kb.binary(BinOp::Add, wi, i).unwrap();
        let (xv, wv) = (kb.load(x, xi), kb.load(w, wi));
        let m = kb.binary(BinOp::Mul, xv, wv).unwrap();
        let s = kb.reduce(RedOp::Sum, v, two, m).unwrap();
        let (three, fivex) = (kb.i64(3), kb.i64(5));
        kb.finish("k".into(), vec![sym::Expr::int(3), sym::Expr::int(5)], vec![three, fivex], vec![Store { buf: out, value: s }])
    }

    fn loads(k: &Kernel, e: ExprId) -> Vec<ExprId> {
        let mut out = Vec::new();
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            if matches!(k.expr(x), KExpr::Load { .. }) && !out.contains(&x) {
                out.push(x);
            }
            stack.extend(k.children(x));
        }
        out.sort();
        out
    }

    /// The input load is one node in every lane; the weight load one per lane.
    #[test]
    fn lanes_share_what_does_not_move_with_the_coordinate() {
        let k = channel_sum(None);
        let l = k.lanes(0, 2, Some(3)).unwrap();
        assert_eq!(l.stores.len(), 2);
        let (a, b) = (loads(&l, l.stores[0].value), loads(&l, l.stores[1].value));
        let shared: Vec<_> = a.iter().filter(|x| b.contains(x)).collect();
        assert_eq!((a.len(), b.len(), shared.len()), (2, 2, 1));
        l.validate().unwrap();
    }

    /// A group quotient the block divides is shared; one it does not divide (and below the
    /// extent) moves with the lanes, and with it the input load.
    #[test]
    fn group_quotients_are_shared_only_when_the_block_divides_them() {
        let k = channel_sum(Some(2));
        let l = k.lanes(0, 2, Some(4)).unwrap();
        assert_eq!(loads(&l, l.stores[0].value).iter().filter(|x| loads(&l, l.stores[1].value).contains(x)).count(), 1);
        let l = k.lanes(0, 4, Some(4)).unwrap();
        assert_eq!(loads(&l, l.stores[0].value).iter().filter(|x| loads(&l, l.stores[1].value).contains(x)).count(), 0);
        let l = channel_sum(Some(8)).lanes(0, 4, Some(3)).unwrap();
        assert_eq!(loads(&l, l.stores[0].value).iter().filter(|x| loads(&l, l.stores[3].value).contains(x)).count(), 1);
    }

    /// A block that does not divide the extent clamps the last lanes to the last index, so
    /// they read inside the weight.
    #[test]
    fn ragged_lanes_read_the_last_index() {
        fn eval(k: &Kernel, e: ExprId, c: i64, i: i64) -> i64 {
            match *k.expr(e) {
                KExpr::I64(v) => v,
                KExpr::Var(v) => if v.0 == 0 { c } else { i },
                KExpr::Binary(op, a, b) => {
                    let (a, b) = (eval(k, a, c, i), eval(k, b, c, i));
                    match op {
                        BinOp::Add => a + b,
                        BinOp::Mul => a * b,
                        other => panic!("not in this kernel's weight index: {other:?}"),
                    }
                }
                KExpr::Select(cond, a, b) => {
                    let KExpr::Cmp(CmpOp::Lt, x, y) = *k.expr(cond) else { panic!("the clamp compares with <") };
                    if eval(k, x, c, i) < eval(k, y, c, i) { eval(k, a, c, i) } else { eval(k, b, c, i) }
                }
                ref other => panic!("not in this kernel's weight index: {other:?}"),
            }
        }
        let l = channel_sum(None).lanes(0, 4, Some(3)).unwrap();
        let w_index = |s: usize| {
            let w = loads(&l, l.stores[s].value).into_iter().find(|x| matches!(l.expr(*x), KExpr::Load { buf: 1, .. })).unwrap();
            let KExpr::Load { index, .. } = *l.expr(w) else { unreachable!("found as a load") };
            index
        };
        // The block starting at channel 0: lane 3 would be channel 3 of 3, clamped to 2.
        assert_eq!(eval(&l, w_index(3), 0, 1), 2 * 2 + 1);
        assert_eq!(eval(&l, w_index(1), 0, 1), 2 + 1);
    }
}
