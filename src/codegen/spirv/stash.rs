//! A row statistic's summands kept in the output buffer on the row schedule.
//!
//! Softmax is `out[r, c] = exp(x[r, c] − m) / Σ_j exp(x[r, j] − m)`: the denominator's fold
//! computes every `exp(x[r, j] − m)` of the row, and the output loop computed each of them
//! again, two `exp` per element where the kernel's time goes (the row sum of `exp(x)` took 3×
//! the time of the plain row sum on the OpenCL CPU device). When the output's summand-shaped
//! subexpression is the fold's body with the fold's variable renamed to the row's output
//! coordinate, the fold also writes each summand to its output element, and the output loop
//! reads it back: the same float32 value, so results are bit-identical. The work-item that
//! folds `j` is the one that writes output `j` (the fold and the output loop both start at the
//! work-item's index in its group and step by the group size, or run `0..n` with one
//! work-item per row), so no synchronisation is needed.

use crate::lower::kernel::{Access, Elem, ExprId, KExpr, Kernel, RedOp, Ty, VarId};

/// The fold whose summands are written to the output (`body` over `var`), the output
/// subexpression that reads them back (`value`), and the output buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stash {
    pub body: ExprId,
    pub var: VarId,
    pub value: ExprId,
    pub buf: u32,
}

/// The stash of kernel `k` on the row schedule with rows over its first `outer` coordinates:
/// one row coordinate left for the outputs (`c`), one float32 store into a buffer the kernel
/// does not read, a float32 sum over `j in 0..extent` (the extent the same expression as `c`'s)
/// that depends on the row only, whose body is not a bare load (then there is nothing to
/// save), and a subexpression of the stored value equal to that body with `j` read as `c`.
pub fn stash(k: &Kernel, outer: usize) -> Option<Stash> {
    if k.domain.len() != outer + 1 {
        return None;
    }
    let [store] = &k.stores[..] else { return None };
    let buf = &k.buffers[store.buf as usize];
    if buf.access != Access::Write || buf.elem != Elem::F32 || k.ty(store.value) != Ty::F32 {
        return None;
    }
    if k.exprs.iter().any(|e| matches!(e, KExpr::Load { buf, .. } if *buf == store.buf)) {
        return None;
    }
    let c = VarId(outer as u32);
    let free = k.free_vars();
    let row = (1u128 << outer) - 1;
    let outside = outside_folds(k, store.value);
    outside.iter().find_map(|&r| {
        let KExpr::Reduce { op: RedOp::Sum, var, extent, body } = *k.expr(r) else { return None };
        if free[r.0 as usize] & !row != 0 || extent != k.domain[outer] || k.ty(body) != Ty::F32 {
            return None;
        }
        if matches!(k.expr(body), KExpr::Load { .. } | KExpr::Var(_)) {
            return None;
        }
        let value = outside.iter().copied().find(|&s| s != r && same_renamed(k, &free, body, s, var, c))?;
        Some(Stash { body, var, value, buf: store.buf })
    })
}

/// Subexpressions of `root` reachable without entering a fold's body (the folds themselves
/// included), in a fixed order.
fn outside_folds(k: &Kernel, root: ExprId) -> Vec<ExprId> {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root];
    let mut out = Vec::new();
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        out.push(e);
        if !matches!(k.expr(e), KExpr::Reduce { .. } | KExpr::Loop { .. }) {
            stack.extend(k.children(e));
        }
    }
    out.sort();
    out
}

/// Whether `b` is `a` with variable `j` replaced by `c` (structurally).
fn same_renamed(k: &Kernel, free: &[u128], a: ExprId, b: ExprId, j: VarId, c: VarId) -> bool {
    if a == b {
        return free[a.0 as usize] & (1u128 << j.0) == 0;
    }
    let same = |x: ExprId, y: ExprId| same_renamed(k, free, x, y, j, c);
    match (k.expr(a), k.expr(b)) {
        (KExpr::Var(x), KExpr::Var(y)) => *x == j && *y == c,
        (KExpr::Load { buf, index, mask, other }, KExpr::Load { buf: buf2, index: index2, mask: mask2, other: other2 }) => {
            buf == buf2
                && other == other2
                && same(*index, *index2)
                && match (mask, mask2) {
                    (None, None) => true,
                    (Some(m), Some(m2)) => same(*m, *m2),
                    _ => false,
                }
        }
        (KExpr::Unary(o, x), KExpr::Unary(o2, y)) => o == o2 && same(*x, *y),
        (KExpr::Binary(o, x, y), KExpr::Binary(o2, x2, y2)) => o == o2 && same(*x, *x2) && same(*y, *y2),
        (KExpr::Cmp(o, x, y), KExpr::Cmp(o2, x2, y2)) => o == o2 && same(*x, *x2) && same(*y, *y2),
        (KExpr::Select(x, y, z), KExpr::Select(x2, y2, z2)) | (KExpr::MulAdd(x, y, z), KExpr::MulAdd(x2, y2, z2)) => {
            // Both must be the same variant: a select is not a multiply-add.
            std::mem::discriminant(k.expr(a)) == std::mem::discriminant(k.expr(b)) && same(*x, *x2) && same(*y, *y2) && same(*z, *z2)
        }
        (KExpr::ToF32(x), KExpr::ToF32(y)) | (KExpr::Bits(x), KExpr::Bits(y)) => {
            std::mem::discriminant(k.expr(a)) == std::mem::discriminant(k.expr(b)) && same(*x, *y)
        }
        (KExpr::Cast(x, t), KExpr::Cast(y, t2)) => t == t2 && same(*x, *y),
        // Leaves without variables compare by value (constants need not be shared nodes).
        (x, y) if k.children(a).is_empty() && k.children(b).is_empty() => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::{BinOp, KernelBuilder, Store, UnOp};
    use crate::sym::Expr;

    /// `out[r, c] = exp(x[r, c] − max_r) / Σ_j exp(x[r, j] − max_r)`, or with `log` the
    /// log-softmax `x[r, c] − max_r − log Σ_j …` (whose output has no summand to read back).
    fn softmax(log: bool) -> Kernel {
        let (rs, es) = (Expr::symbol("r"), Expr::symbol("e"));
        let mut kb = KernelBuilder::new(2);
        let (x, out) = (kb.buffer("x", Access::Read), kb.buffer("out", Access::Write));
        let (r, e) = (kb.size(&rs), kb.size(&es));
        let row = kb.var(VarId(0));
        let base = kb.binary(BinOp::Mul, row, e).unwrap();
        let at = |kb: &mut KernelBuilder, v: VarId| {
            let j = kb.var(v);
            let i = kb.binary(BinOp::Add, base, j).unwrap();
            kb.load(x, i)
        };
        let j = kb.fresh_var().unwrap();
        let xj = at(&mut kb, j);
        let m = kb.reduce(RedOp::Max, j, e, xj).unwrap();
        let j2 = kb.fresh_var().unwrap();
        let xj2 = at(&mut kb, j2);
        let d = kb.binary(BinOp::Sub, xj2, m).unwrap();
        let p = kb.unary(UnOp::Exp, d);
        let z = kb.reduce(RedOp::Sum, j2, e, p).unwrap();
        let xc = at(&mut kb, VarId(1));
        let dc = kb.binary(BinOp::Sub, xc, m).unwrap();
        let value = if log {
            let l = kb.unary(UnOp::Log, z);
            kb.binary(BinOp::Sub, dc, l).unwrap()
        } else {
            let pc = kb.unary(UnOp::Exp, dc);
            kb.binary(BinOp::Div, pc, z).unwrap()
        };
        kb.finish("softmax".into(), vec![rs, es], vec![r, e], vec![Store { buf: out, value }])
    }

    #[test]
    fn softmax_reads_its_numerators_back_and_log_softmax_has_none() {
        let k = softmax(false);
        let st = stash(&k, 1).expect("softmax's numerator is the denominator's summand");
        assert!(matches!(k.expr(st.value), KExpr::Unary(UnOp::Exp, _)), "{:?}", k.expr(st.value));
        assert_eq!(stash(&k, 2), None, "no output coordinate left in the row");
        assert_eq!(stash(&softmax(true), 1), None);
    }
}
