//! The kernel passes of [`Schedule::Spread`](crate::lower::schedule::Schedule::Spread): every
//! output coordinate but one unrolled into lane copies, and a weight read from a copy stored
//! with its rows across the work-items.
//!
//! Why: a convolution on a 2×2 output map (tv_resnet34's layer4 at 64×64 inputs) has 4
//! pixels per image, too few to fill a vector group, while its 512 output channels would fill
//! many. With the channel across the work-items and the batch × pixels unrolled, an input tap
//! no longer moves with the work-item (one scalar load shared by the group) and the weight
//! `w[co, j]`, stored transposed as `wᵀ[j, co]`, is one contiguous vector load per step that
//! feeds every lane's multiply-add.

use std::collections::HashMap;

use super::{BinOp, ExprId, KExpr, Kernel, KernelBuilder, Layout, Store, VarId};

impl Kernel {
    /// `self` with every output coordinate from `outer` on but `coord` replaced by constants:
    /// each store becomes one copy per tuple of those coordinates (store `s` lane `l` at
    /// `s · lanes + l`, lane `l` the `l`-th tuple in row-major order). Nodes that use none of
    /// them (a weight read) stay one arena node shared by every lane. `None` when one of them
    /// has a dynamic extent, the lanes would be more than `most`, `outer` is past `coord`, or
    /// the kernel has state loops or a linear index.
    pub fn unrolled(&self, coord: u32, outer: u32, most: u32) -> Option<Kernel> {
        if self.linear.is_some() || outer > coord || (coord as usize) >= self.domain.len() || self.exprs.iter().any(|e| matches!(e, KExpr::Loop { .. } | KExpr::Carried { .. } | KExpr::LoopOut { .. })) {
            return None;
        }
        let others: Vec<(u32, i64)> = (outer..self.domain.len() as u32)
            .filter(|d| *d != coord)
            .map(|d| match *self.expr(self.domain[d as usize]) {
                KExpr::I64(n) if n > 0 => Some((d, n)),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let lanes = others.iter().try_fold(1i64, |acc, (_, n)| acc.checked_mul(*n))?;
        if lanes > i64::from(most) {
            return None;
        }
        let free = self.free_vars();
        let moved: u128 = others.iter().fold(0, |m, (d, _)| m | (1u128 << d));
        let mut kb = KernelBuilder::reopen(self);
        let mut stores = Vec::with_capacity(self.stores.len() * lanes as usize);
        let mut memos: Vec<HashMap<ExprId, ExprId>> = vec![HashMap::new(); lanes as usize];
        for s in &self.stores {
            for (l, memo) in memos.iter_mut().enumerate() {
                // Lane `l`'s coordinates: its row-major digits over the other extents.
                let mut rest = l as i64;
                let mut at = HashMap::new();
                for &(d, n) in others.iter().rev() {
                    at.insert(d, rest % n);
                    rest /= n;
                }
                let value = substitute(self, &free, moved, &mut kb, memo, s.value, &mut |kb, v| at.get(&v.0).map(|c| kb.i64(*c)))?;
                stores.push(Store { buf: s.buf, value });
            }
        }
        let mut out = kb.into_kernel(self.name.clone(), self.domain_sizes.clone(), self.domain.clone(), stores);
        out.schedule = self.schedule;
        Some(out.compact().0)
    }

    /// `self` with the plain weight read `load` (`w[r, j]` of a `[rows, ·]` weight, read at
    /// `r · cols + j` with `r` output coordinate `row` and `0 <= j < cols` — the caller checks
    /// that shape) read from the weight's transposed copy instead ([`Layout::LeadingLast`], the
    /// weight viewed as `[rows, cols]`: element `(r, j)` at `j · rows + r`), so neighbouring
    /// rows are neighbouring elements. `None` when `load` is not an unmasked read of a plain
    /// input buffer.
    pub fn rows_transposed(&self, load: ExprId, row: VarId, rows: i64) -> Option<Kernel> {
        let KExpr::Load { index, .. } = *self.exprs.get(load.0 as usize)? else { return None };
        let free = self.free_vars();
        self.relaid(load, Layout::LeadingLast, |kb| {
            // `j` is the index with the row at 0; the copy reads `j · rows + r`.
            let j = substitute(self, &free, 1u128 << row.0, kb, &mut HashMap::new(), index, &mut |kb, v| (v == row).then(|| kb.i64(0)))?;
            let n = kb.i64(rows);
            let at = kb.binary(BinOp::Mul, j, n).ok()?;
            let r = kb.var(row);
            kb.binary(BinOp::Add, at, r).ok()
        })
    }
}

/// The copy of `e` in `kb` with variables replaced where `subst` gives an expression; nodes
/// that use none of the `moved` variables are shared. Rebuilt through the folding
/// constructors, so constant masks and index terms fold away. Iterative (children before
/// parents, from an explicit stack) so long chains do not recurse.
fn substitute(
    k: &Kernel,
    free: &[u128],
    moved: u128,
    kb: &mut KernelBuilder,
    memo: &mut HashMap<ExprId, ExprId>,
    e: ExprId,
    subst: &mut dyn FnMut(&mut KernelBuilder, VarId) -> Option<ExprId>,
) -> Option<ExprId> {
    let mut stack = vec![(e, false)];
    while let Some((x, ready)) = stack.pop() {
        if free[x.0 as usize] & moved == 0 || memo.contains_key(&x) {
            continue;
        }
        if !ready {
            stack.push((x, true));
            stack.extend(k.children(x).into_iter().map(|c| (c, false)));
            continue;
        }
        let node = k.expr(x).map_operands(&mut |c| memo.get(&c).copied().unwrap_or(c));
        let ty = k.ty(x);
        let new = match node {
            KExpr::Var(v) => subst(kb, v),
            KExpr::Binary(op, a, b) => kb.binary(op, a, b).ok(),
            KExpr::Cmp(op, a, b) => kb.cmp(op, a, b).ok(),
            KExpr::Select(c, a, b) => kb.select(c, a, b).ok(),
            KExpr::Cast(a, t) => Some(kb.cast(a, t)),
            KExpr::ToF32(a) => Some(kb.to_f32(a)),
            _ => None,
        };
        let id = new.filter(|n| kb.ty(*n) == ty).unwrap_or_else(|| kb.intern(node, ty));
        memo.insert(x, id);
    }
    Some(memo.get(&e).copied().unwrap_or(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::{Access, Elem, RedOp};
    use crate::sym;

    /// `out[n, c, p] = Σ_j x[n, j, p] · w[c, j]` over `x: [2, 3, 2]`, `w: [5, 3]`: a 1×1
    /// convolution of 3 → 5 channels on a 2-pixel map, batch 2.
    fn conv1x1() -> (Kernel, ExprId) {
        let mut kb = KernelBuilder::new(3);
        let x = kb.buffer_of("x", Access::Read, Elem::F32);
        let w = kb.buffer_of("w", Access::Read, Elem::F32);
        let out = kb.buffer_of("out", Access::Write, Elem::F32);
        let vj = kb.fresh_var().expect("a var");
        let (n, c, p, j) = (kb.var(VarId(0)), kb.var(VarId(1)), kb.var(VarId(2)), kb.var(vj));
        let (two, three) = (kb.i64(2), kb.i64(3));
        let xi = kb.binary(BinOp::Mul, n, three).expect("mul");
        let xi = kb.binary(BinOp::Add, xi, j).expect("add");
        let xi = kb.binary(BinOp::Mul, xi, two).expect("mul");
        let xi = kb.binary(BinOp::Add, xi, p).expect("add");
        let xv = kb.load(x, xi);
        let wi = kb.binary(BinOp::Mul, c, three).expect("mul");
        let wi = kb.binary(BinOp::Add, wi, j).expect("add");
        let wv = kb.load(w, wi);
        let prod = kb.binary(BinOp::Mul, xv, wv).expect("mul");
        let sum = kb.reduce(RedOp::Sum, vj, three, prod).expect("fold");
        let five = kb.i64(5);
        let k = kb.finish("conv1x1".into(), vec![sym::Expr::int(2), sym::Expr::int(5), sym::Expr::int(2)], vec![two, five, two], vec![Store { buf: out, value: sum }]);
        let load = k.exprs.iter().position(|e| matches!(e, KExpr::Load { buf, .. } if *buf == w)).expect("the weight read");
        (k, ExprId(load as u32))
    }

    /// The value of every store of `k` at output `(n, c, p)`, lane `l` of `lanes`, with `x`
    /// and `w` as `f(buffer, element)`, by the reference interpreter of index expressions.
    fn eval(k: &Kernel, lanes: usize, at: [i64; 3], l: usize, f: &dyn Fn(&str, Layout, i64) -> f64) -> f64 {
        let store = &k.stores[l % lanes.max(1)];
        let b = sym::Bindings::default();
        value(k, store.value, &|v| if v.0 < 3 { at[v.0 as usize] } else { 0 }, f, &b)
    }

    fn value(k: &Kernel, e: ExprId, var: &dyn Fn(VarId) -> i64, f: &dyn Fn(&str, Layout, i64) -> f64, b: &sym::Bindings) -> f64 {
        match k.expr(e).clone() {
            KExpr::Load { buf, index, .. } => {
                let at = super::super::index::eval_index(&|x| k.expr(x).clone(), &k.params, index, var, b);
                let p = &k.buffers[buf as usize];
                f(&p.value, p.layout, at)
            }
            KExpr::Binary(BinOp::Mul, a, c) => value(k, a, var, f, b) * value(k, c, var, f, b),
            KExpr::Reduce { var: v, extent, body, .. } => {
                let n = k.eval_i64(extent, &[]).expect("a static extent");
                (0..n).map(|i| value(k, body, &|w| if w == v { i } else { var(w) }, f, b)).sum()
            }
            other => panic!("not in these tests: {other:?}"),
        }
    }

    fn x(n: i64, j: i64, p: i64) -> f64 {
        (n * 100 + j * 10 + p) as f64
    }

    fn w(c: i64, j: i64) -> f64 {
        (c * 7 - j) as f64 + 0.5
    }

    fn buffers(name: &str, layout: Layout, at: i64) -> f64 {
        match (name, layout) {
            ("x", _) => x(at / 6, at / 2 % 3, at % 2),
            ("w", Layout::Plain) => w(at / 3, at % 3),
            // Element `(c, j)` at `j · 5 + c`.
            ("w", Layout::LeadingLast) => w(at % 5, at / 5),
            _ => panic!("no buffer {name}"),
        }
    }

    fn expected(n: i64, c: i64, p: i64) -> f64 {
        (0..3).map(|j| x(n, j, p) * w(c, j)).sum()
    }

    #[test]
    fn unrolled_lanes_compute_every_other_coordinate() {
        let (k, _) = conv1x1();
        let u = k.unrolled(1, 0, 16).expect("4 lanes");
        u.validate().expect("valid");
        assert_eq!(u.stores.len(), 4);
        for c in 0..5 {
            for (l, (n, p)) in [(0, 0), (0, 1), (1, 0), (1, 1)].into_iter().enumerate() {
                // The unrolled coordinates read as anything: their lanes no longer use them.
                assert_eq!(eval(&u, 4, [9, c, 9], l, &buffers), expected(n, c, p), "lane {l}, channel {c}");
            }
        }
        // The weight read is one node for every lane.
        let weight_reads = u.exprs.iter().filter(|e| matches!(e, KExpr::Load { buf, .. } if u.buffers[*buf as usize].value == "w")).count();
        assert_eq!(weight_reads, 1);
        assert!(k.unrolled(1, 0, 3).is_none(), "4 lanes are more than 3");
        // The batch left to the grid: 2 lanes of pixels, the batch still read as coordinate 0.
        let u = k.unrolled(1, 1, 16).expect("2 lanes");
        u.validate().expect("valid");
        assert_eq!(u.stores.len(), 2);
        for (n, c, p) in [(0, 0, 0), (1, 4, 1), (1, 2, 0)] {
            assert_eq!(eval(&u, 2, [n, c, 9], p as usize, &buffers), expected(n, c, p));
        }
    }

    #[test]
    fn a_transposed_weight_reads_the_same_values() {
        let (k, load) = conv1x1();
        let t = k.rows_transposed(load, VarId(1), 5).expect("a plain weight read");
        t.validate().expect("valid");
        let layouts: Vec<Layout> = t.buffers.iter().filter(|b| b.value == "w" && t.exprs.iter().any(|e| matches!(e, KExpr::Load { buf, .. } if t.buffers[*buf as usize].value == "w" && t.buffers[*buf as usize].layout == b.layout))).map(|b| b.layout).collect();
        assert_eq!(layouts, [Layout::LeadingLast], "the plain weight is no longer read");
        for (n, c, p) in [(0, 0, 0), (1, 4, 1), (0, 3, 1), (1, 2, 0)] {
            assert_eq!(eval(&t, 1, [n, c, p], 0, &buffers), expected(n, c, p));
        }
    }
}
