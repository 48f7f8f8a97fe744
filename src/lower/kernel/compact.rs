//! Dropping what a rebuilt kernel no longer uses: nodes no store or extent reaches, and
//! buffers no load or store names. A kernel cut out of another (`split`) keeps only its part,
//! so plan summaries count its own loads and folds and the runner binds only its own buffers.

use super::{BufferParam, ExprId, KExpr, Kernel, Store};

impl Kernel {
    /// This kernel without unreachable nodes and unused buffers, and the new id of every old
    /// node it kept. Roots: the stores' values and the domain's extents. Call it before a
    /// schedule is chosen (a schedule holds node ids).
    pub(crate) fn compact(self) -> (Kernel, Vec<Option<ExprId>>) {
        let n = self.exprs.len();
        let mut live = vec![false; n];
        for r in self.stores.iter().map(|s| s.value).chain(self.domain.iter().copied()) {
            live[r.0 as usize] = true;
        }
        // Parents come after their children in the arena: one pass from the end marks them all.
        for i in (0..n).rev() {
            if live[i] {
                for c in self.children(ExprId(i as u32)) {
                    live[c.0 as usize] = true;
                }
            }
        }
        let mut used = vec![false; self.buffers.len()];
        for s in &self.stores {
            used[s.buf as usize] = true;
        }
        for (e, _) in self.exprs.iter().zip(&live).filter(|(_, l)| **l) {
            if let KExpr::Load { buf, .. } = e {
                used[*buf as usize] = true;
            }
        }
        let mut buf_map = vec![0u32; self.buffers.len()];
        let mut buffers: Vec<BufferParam> = Vec::new();
        for (i, b) in self.buffers.into_iter().enumerate() {
            if used[i] {
                buf_map[i] = buffers.len() as u32;
                buffers.push(b);
            }
        }
        let mut map: Vec<Option<ExprId>> = vec![None; n];
        let (mut exprs, mut types) = (Vec::new(), Vec::new());
        for (i, (e, t)) in self.exprs.into_iter().zip(self.types).enumerate() {
            if !live[i] {
                continue;
            }
            let mut e = e.map_operands(&mut |x| map[x.0 as usize].expect("a live node's operands are live"));
            if let KExpr::Load { buf, .. } = &mut e {
                *buf = buf_map[*buf as usize];
            }
            map[i] = Some(ExprId(exprs.len() as u32));
            exprs.push(e);
            types.push(t);
        }
        let id = |x: ExprId| map[x.0 as usize].expect("a root is live");
        let kernel = Kernel {
            name: self.name,
            buffers,
            params: self.params,
            domain: self.domain.iter().map(|d| id(*d)).collect(),
            domain_sizes: self.domain_sizes,
            stores: self.stores.iter().map(|s| Store { buf: buf_map[s.buf as usize], value: id(s.value) }).collect(),
            exprs,
            types,
            vars: self.vars,
            schedule: self.schedule,
            linear: self.linear,
        };
        (kernel, map)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Access, BinOp, KernelBuilder, UnOp};
    use super::*;
    use crate::sym::Expr;

    /// A node and a buffer only a dropped store used go; what the kept store reads stays, with
    /// its buffer renumbered.
    #[test]
    fn drops_nodes_and_buffers_no_store_reaches() {
        let mut kb = KernelBuilder::new(1);
        let n = kb.size(&Expr::symbol("n"));
        kb.set_coord_extents(&[n]);
        let i = kb.var(super::super::VarId(0));
        let a = kb.buffer("a", Access::Read);
        let b = kb.buffer("b", Access::Read);
        let (xa, xb) = (kb.load(a, i), kb.load(b, i));
        kb.unary(UnOp::Exp, xa);
        let out = kb.buffer("out", Access::Write);
        let kept = kb.binary(BinOp::Mul, xb, xb).unwrap();
        let mut k = kb.finish("k".into(), vec![Expr::symbol("n")], vec![n], vec![Store { buf: out, value: kept }]);
        let before = k.exprs.len();
        k.buffers.push(BufferParam { value: "unused".into(), access: Access::Read, elem: super::super::Elem::F32, layout: Default::default() });
        let (k, map) = k.compact();
        k.validate().unwrap();
        assert!(!k.exprs.iter().any(|e| matches!(e, KExpr::Unary(UnOp::Exp, _))));
        assert_eq!(k.counts().1, 1, "one load left");
        assert_eq!(map.iter().filter(|m| m.is_some()).count(), k.exprs.len());
        assert!(k.exprs.len() < before);
        assert_eq!(k.buffers.iter().map(|b| b.value.as_str()).collect::<Vec<_>>(), ["b", "out"]);
        let KExpr::Binary(BinOp::Mul, x, _) = k.expr(k.stores[0].value) else { panic!("the product is kept") };
        assert!(matches!(k.expr(*x), KExpr::Load { buf: 0, .. }));
        assert_eq!(k.stores[0].buf, 1);
    }
}
