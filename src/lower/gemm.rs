//! How a large matrix product runs: on the column schedule with its output rows blocked per
//! work-item (`Schedule::Channels`, as small products already do), instead of the 16×16 tiles,
//! and with a resident weight read from a copy stored transposed.
//!
//! Why (docs/PERFORMANCE.md, "Issue 28: large matrix products"): on the OpenCL CPU runtime the
//! tiled schedule stages both operands through local memory behind two barriers per 16-wide
//! slice and keeps one accumulator per work-item; deit_tiny's 394×192 · 192×768 product took
//! 2.5–8 ms there. Blocked, a work-item keeps eight rows' accumulators, the row operand is one
//! scalar per row and step (the same for every work-item of the group) and the column operand
//! one vector across the group's work-items, since the runtime vectorizes across them.
//!
//! A linear layer reads its weight `w[j, k]`: neighbouring work-items (columns `j`) read it
//! `K` floats apart, a gather per step. A weight is resident across forwards (uploaded once,
//! `runtime::Resident`), so the runtime stores it transposed once (`Layout::Transposed`) and
//! the product reads `wᵀ[k, j]`, contiguous across the work-items — what oneDNN's packed
//! weights do for `torch.compile`.

use std::collections::HashMap;

use super::kernel::{BinOp, Elem, ExprId, KExpr, Kernel, VarId};
use super::schedule::{self, Schedule, TILE};
use crate::ir::{DType, Graph, InputKind};

/// Whether matrix product `k` (on `schedule::tiled`'s shape, dot product `reduce`) is too
/// large for `schedule::small_product` but has a static contraction and a static column
/// count: it then leaves the tiles too, for the blocked column schedule, wherever
/// `schedule::channels` blocks its rows (`schedule::off_tiles`). Measured on every product of
/// a ViT-sized model, static and with a dynamic row count (docs/PERFORMANCE.md); a dynamic
/// contraction or column count keeps the tiles, whose launch needs neither at compile time.
pub fn large_product(k: &Kernel, reduce: ExprId) -> bool {
    let KExpr::Reduce { extent, .. } = *k.expr(reduce) else { return false };
    let Some(&column) = k.domain.last() else { return false };
    static_i64(k, extent).is_some() && static_i64(k, column).is_some() && !schedule::small_product(k, reduce)
}

/// `k` with its product's column operand read from a transposed copy, when `k` computes a
/// product once per output off the tiles (the column schedule, chosen but not yet finished)
/// and that operand is a float32 weight `w[N, K]` read at `j · K + k` (output column `j`,
/// contraction variable `k`): a parameter or a constant of the graph, which no node writes.
/// Anything else is returned as it is.
pub fn pack_weights(graph: &Graph, k: Kernel) -> Kernel {
    match transposed_weight(graph, &k) {
        Some((load, j, var, n)) => k.read_transposed(load, j, var, n).unwrap_or(k),
        None => k,
    }
}

/// The load of `k`'s column operand that [`pack_weights`] rewrites: the load, the output
/// column's and the contraction's variables, and the weight's row count `N`.
fn transposed_weight(graph: &Graph, k: &Kernel) -> Option<(ExprId, VarId, VarId, i64)> {
    if k.schedule != Schedule::Elementwise || !schedule::product_once(k) {
        return None;
    }
    let Some(Schedule::Tiled { reduce, b, .. }) = schedule::tiled(k, TILE) else { return None };
    let KExpr::Reduce { var, extent, .. } = *k.expr(reduce) else { return None };
    let KExpr::Load { buf, index, mask: None, .. } = *k.expr(b) else { return None };
    let j = VarId(k.domain.len().checked_sub(1)? as u32);
    let (n, depth) = (static_i64(k, *k.domain.last()?)?, static_i64(k, extent)?);
    let param = k.buffers.get(buf as usize)?;
    if param.elem != Elem::F32 || !is_weight(graph, &param.value, [n, depth]) {
        return None;
    }
    let want = HashMap::from([(j.0, depth), (var.0, 1)]);
    (affine(k, index)? == (want, 0)).then_some((b, j, var, n))
}

/// Whether graph value `name` is a float32 parameter or tensor constant of static `sizes`:
/// loaded from the model, never written by the graph (a buffer may be: running statistics).
fn is_weight(graph: &Graph, name: &str, sizes: [i64; 2]) -> bool {
    let Some(v) = graph.value_id(name) else { return false };
    let kind_ok = graph.inputs.iter().any(|(i, kind)| *i == v && matches!(kind, InputKind::Parameter { .. } | InputKind::TensorConstant { .. }));
    let Some(t) = graph.value(v).tensor() else { return false };
    kind_ok && t.dtype == DType::F32 && t.sizes.iter().map(|s| s.as_int()).eq(sizes.iter().map(|s| Some(*s)))
}

/// Integer expression `e` as `Σ coefficient · variable + constant` (variables by index), when
/// it is built from constants, variables, sums and products by constants.
pub(crate) fn affine(k: &Kernel, e: ExprId) -> Option<(HashMap<u32, i64>, i64)> {
    let (terms, c) = affine_terms(k, e)?;
    let vars = terms
        .into_iter()
        .map(|(a, x)| match a {
            Atom::Var(v) => Some((v, x)),
            Atom::Node(_) => None,
        })
        .collect::<Option<HashMap<_, _>>>()?;
    Some((vars, c))
}

/// A term of an integer index: an output or reduction variable, or any other node (a value
/// the kernel computes, such as the group a row of a grouped product looks up).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Atom {
    Var(u32),
    Node(ExprId),
}

/// Integer expression `e` as `Σ coefficient · atom + constant`, an atom a variable or any node
/// that is not a sum, a product by a constant or a constant (zero coefficients dropped).
pub(crate) fn affine_terms(k: &Kernel, e: ExprId) -> Option<(HashMap<Atom, i64>, i64)> {
    Some(match *k.expr(e) {
        KExpr::I64(c) => (HashMap::new(), c),
        KExpr::Var(v) => (HashMap::from([(Atom::Var(v.0), 1)]), 0),
        KExpr::Binary(BinOp::Add, a, b) => {
            let ((mut ta, ca), (tb, cb)) = (affine_terms(k, a)?, affine_terms(k, b)?);
            for (v, c) in tb {
                *ta.entry(v).or_insert(0) += c;
            }
            ta.retain(|_, c| *c != 0);
            (ta, ca.checked_add(cb)?)
        }
        KExpr::Binary(BinOp::Mul, a, b) if static_i64(k, a).is_some() || static_i64(k, b).is_some() => {
            let (scale, other) = match static_i64(k, a) {
                Some(s) => (s, b),
                None => (static_i64(k, b)?, a),
            };
            let (terms, c) = affine_terms(k, other)?;
            let terms = terms.into_iter().map(|(v, t)| t.checked_mul(scale).map(|t| (v, t))).collect::<Option<HashMap<_, _>>>()?;
            (terms.into_iter().filter(|(_, t)| *t != 0).collect(), c.checked_mul(scale)?)
        }
        _ => (HashMap::from([(Atom::Node(e), 1)]), 0),
    })
}

pub(crate) fn static_i64(k: &Kernel, e: ExprId) -> Option<i64> {
    match *k.expr(e) {
        KExpr::I64(n) => Some(n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::{Access, KernelBuilder, Store};
    use crate::sym;

    /// A kernel storing integer expression `e` (built by `f` over variables 0, 1 and 2).
    fn index_kernel(f: impl Fn(&mut KernelBuilder, [ExprId; 3]) -> ExprId) -> (Kernel, ExprId) {
        let mut kb = KernelBuilder::new(3);
        let out = kb.buffer_of("out", Access::Write, Elem::I64);
        let vars = [0, 1, 2].map(|v| kb.var(VarId(v)));
        let e = f(&mut kb, vars);
        let two = kb.i64(2);
        let k = kb.finish("index".into(), vec![sym::Expr::int(2); 3], vec![two; 3], vec![Store { buf: out, value: e }]);
        let e = k.stores[0].value;
        (k, e)
    }

    #[test]
    fn affine_reads_sums_of_scaled_variables() {
        // (v1 · 4 + v2) · 3 + 5
        let (k, e) = index_kernel(|kb, [_, j, p]| {
            let (three, four, five) = (kb.i64(3), kb.i64(4), kb.i64(5));
            let x = kb.binary(BinOp::Mul, j, four).and_then(|x| kb.binary(BinOp::Add, x, p)).expect("i64");
            let x = kb.binary(BinOp::Mul, x, three).expect("i64");
            kb.binary(BinOp::Add, x, five).expect("i64")
        });
        assert_eq!(affine(&k, e), Some((HashMap::from([(1, 12), (2, 3)]), 5)));
        // A product of two variables, or a remainder, is not affine.
        let (k, e) = index_kernel(|kb, [i, j, _]| kb.binary(BinOp::Mul, i, j).expect("i64"));
        assert_eq!(affine(&k, e), None);
        let (k, e) = index_kernel(|kb, [i, _, _]| {
            let three = kb.i64(3);
            kb.binary(BinOp::Rem, i, three).expect("i64")
        });
        assert_eq!(affine(&k, e), None);
    }
}
