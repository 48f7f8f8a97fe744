//! Reading one load of a kernel from a buffer stored in another layout: a resident weight that
//! the runtime transposes once at upload (`lower::gemm`). The rewrite changes where the
//! elements are read, never which: the new load reads element `(r, c)` of the same value.

use super::{Access, BinOp, BufferParam, ExprId, KExpr, Kernel, KernelBuilder, Layout, Store, VarId};

impl Kernel {
    /// `self` with load `load` (of a float32 `[R, C]` value, element `(r, c)` at `r · C + c`
    /// for variables `r` and `c`, `R` = `rows`) reading the value's [`Layout::Transposed`]
    /// copy at `c · R + r` instead, from a buffer argument of its own (the plain one is
    /// dropped when nothing else reads it). `None` when `load` is not an unmasked read of a
    /// plain buffer, or when the kernel's schedule holds node ids (call it before one is
    /// chosen, as [`Kernel::compact`] requires).
    pub fn read_transposed(&self, load: ExprId, r: VarId, c: VarId, rows: i64) -> Option<Kernel> {
        self.read_in_layout(load, Layout::Transposed, |kb| {
            let (rv, cv, r_extent) = (kb.var(r), kb.var(c), kb.i64(rows));
            let at = kb.binary(BinOp::Mul, cv, r_extent).ok()?;
            kb.binary(BinOp::Add, at, rv).ok()
        })
    }

    /// `self` with load `load` reading the same element from a buffer argument of its own in
    /// `layout`, at the index `at` builds (from nodes of `self`'s arena, whose ids stay valid).
    /// `None` under [`Self::read_transposed`]'s conditions or when `at` gives none.
    pub fn read_in_layout(&self, load: ExprId, layout: Layout, at: impl FnOnce(&mut KernelBuilder) -> Option<ExprId>) -> Option<Kernel> {
        if !matches!(self.schedule, super::Schedule::Elementwise) {
            return None;
        }
        self.relaid(load, layout, at)
    }

    /// [`Self::read_in_layout`] under any schedule: for callers whose schedule holds no node
    /// ids (the arena is compacted, so ids in a schedule would go stale). `None` when `load` is
    /// not an unmasked read of a plain input buffer or `at` gives none.
    pub(super) fn relaid(&self, load: ExprId, layout: Layout, at: impl FnOnce(&mut KernelBuilder) -> Option<ExprId>) -> Option<Kernel> {
        let KExpr::Load { buf, mask: None, .. } = *self.exprs.get(load.0 as usize)? else { return None };
        let plain = self.buffers.get(buf as usize)?;
        if plain.layout != Layout::Plain || plain.access != Access::Read {
            return None;
        }
        let mut kb = KernelBuilder::reopen(self);
        let packed = kb.buffers.len() as u32;
        kb.buffers.push(BufferParam { layout, ..plain.clone() });
        let at = at(&mut kb)?;
        let new_load = kb.load(packed, at);
        // Every node again, in arena order (children first): the ones reading `load` are new
        // nodes past it, the others intern to themselves.
        let mut map: Vec<ExprId> = Vec::with_capacity(self.exprs.len());
        for (i, e) in self.exprs.iter().enumerate() {
            let id = if i == load.0 as usize {
                new_load
            } else {
                let node = e.map_operands(&mut |x| map[x.0 as usize]);
                kb.intern(node, self.types[i])
            };
            map.push(id);
        }
        let domain = self.domain.iter().map(|d| map[d.0 as usize]).collect();
        let stores = self.stores.iter().map(|s| Store { buf: s.buf, value: map[s.value.0 as usize] }).collect();
        let mut out = kb.into_kernel(self.name.clone(), self.domain_sizes.clone(), domain, stores);
        out.schedule = self.schedule;
        Some(out.compact().0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::{Elem, RedOp};
    use crate::sym;

    /// `out[i, j] = Σ_k x[i, k] · w[j, k]` over `[3, 4] · [5, 4]ᵀ`: a linear layer's product.
    fn linear() -> (Kernel, ExprId) {
        let mut kb = KernelBuilder::new(2);
        let (x, w) = (kb.buffer_of("x", Access::Read, Elem::F32), kb.buffer_of("w", Access::Read, Elem::F32));
        let out = kb.buffer_of("out", Access::Write, Elem::F32);
        let kv = kb.fresh_var().expect("a third variable");
        let (i, j, k) = (kb.var(VarId(0)), kb.var(VarId(1)), kb.var(kv));
        let four = kb.i64(4);
        let xi = kb.binary(BinOp::Mul, i, four).and_then(|a| kb.binary(BinOp::Add, a, k)).expect("i64 arithmetic");
        let wi = kb.binary(BinOp::Mul, j, four).and_then(|a| kb.binary(BinOp::Add, a, k)).expect("i64 arithmetic");
        let (xl, wl) = (kb.load(x, xi), kb.load(w, wi));
        let p = kb.binary(BinOp::Mul, xl, wl).expect("f32 product");
        let s = kb.reduce(RedOp::Sum, kv, four, p).expect("a sum");
        let (three, five) = (kb.i64(3), kb.i64(5));
        let k = kb.finish("mm".into(), vec![sym::Expr::int(3), sym::Expr::int(5)], vec![three, five], vec![Store { buf: out, value: s }]);
        let wl = k.exprs.iter().position(|e| matches!(e, KExpr::Load { buf, .. } if *buf == w)).expect("the weight's load");
        (k, ExprId(wl as u32))
    }

    /// The kernel's value at `(i, j)`, buffers given in their own layouts, by walking the DAG.
    fn eval(k: &Kernel, e: ExprId, vars: &mut Vec<i64>, data: &dyn Fn(&BufferParam, i64) -> f64) -> f64 {
        match k.expr(e).clone() {
            KExpr::I64(n) => n as f64,
            KExpr::Var(v) => vars[v.0 as usize] as f64,
            KExpr::Load { buf, index, .. } => data(&k.buffers[buf as usize], eval(k, index, vars, data) as i64),
            KExpr::Binary(BinOp::Add, a, b) => eval(k, a, vars, data) + eval(k, b, vars, data),
            KExpr::Binary(BinOp::Mul, a, b) => eval(k, a, vars, data) * eval(k, b, vars, data),
            KExpr::Reduce { var, extent, body, .. } => {
                let n = eval(k, extent, vars, data) as i64;
                (0..n)
                    .map(|t| {
                        vars[var.0 as usize] = t;
                        eval(k, body, vars, data)
                    })
                    .sum()
            }
            other => panic!("not in this test's kernels: {other:?}"),
        }
    }

    #[test]
    fn the_transposed_read_computes_the_same_product() {
        let (k, wl) = linear();
        let packed = k.read_transposed(wl, VarId(1), VarId(2), 5).expect("a plain read of w");
        packed.validate().expect("a valid kernel");
        let w_layouts: Vec<Layout> = packed.buffers.iter().filter(|b| b.value == "w").map(|b| b.layout).collect();
        assert_eq!(w_layouts, [Layout::Transposed], "the plain weight is no longer read");
        // x[i, k] = i + 2k, w[j, k] = 10j - k; the transposed copy holds w[j, k] at k · 5 + j.
        let data = |b: &BufferParam, at: i64| -> f64 {
            match (b.value.as_str(), b.layout) {
                ("x", _) => (at / 4 + 2 * (at % 4)) as f64,
                ("w", Layout::Plain) => (10 * (at / 4) - at % 4) as f64,
                ("w", Layout::Transposed) => (10 * (at % 5) - at / 5) as f64,
                _ => f64::NAN,
            }
        };
        for i in 0..3 {
            for j in 0..5 {
                let mut vars = vec![i, j, 0];
                let want = eval(&k, k.stores[0].value, &mut vars, &data);
                let got = eval(&packed, packed.stores[0].value, &mut vars, &data);
                assert_eq!(got, want, "out[{i}, {j}]");
                let direct: f64 = (0..4).map(|t| ((i + 2 * t) * (10 * j - t)) as f64).sum();
                assert_eq!(want, direct);
            }
        }
    }

    #[test]
    fn only_plain_unmasked_reads_are_rewritten() {
        let (k, wl) = linear();
        let packed = k.read_transposed(wl, VarId(1), VarId(2), 5).expect("a plain read of w");
        let again = packed.exprs.iter().position(|e| matches!(e, KExpr::Load { buf, .. } if packed.buffers[*buf as usize].layout == Layout::Transposed));
        let again = ExprId(again.expect("the transposed load") as u32);
        assert!(packed.read_transposed(again, VarId(1), VarId(2), 5).is_none(), "a transposed buffer is not transposed twice");
        let store_value = k.stores[0].value;
        assert!(k.read_transposed(store_value, VarId(1), VarId(2), 5).is_none(), "a sum is not a load");
    }
}
