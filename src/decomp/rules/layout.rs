//! `.contiguous()` as the Python decompositions call it: a `clone(memory_format=contiguous)` only
//! where the tensor is not row-major already (`Tensor.contiguous` returns `self` otherwise), so
//! the number of clones follows the layouts torch computes (`crate::infer::layout`).

use super::Rw;
use crate::decomp::RuleError;
use crate::infer::layout::{elementwise_strides, is_contiguous};
use crate::ir::{TensorMeta, ValueId};
use crate::sym::Expr;

/// `x.contiguous()` where torch sees `x` with `strides` (which our row-major metadata of a new
/// elementwise result may not record).
pub(super) fn contiguous_as(rw: &mut Rw, x: ValueId, strides: &[Expr]) -> Result<ValueId, RuleError> {
    let sizes = rw.meta(x)?.sizes.clone();
    if sizes.len() == strides.len() && is_contiguous(&sizes, strides) {
        return Ok(x);
    }
    super::view::contiguous_clone(rw, x)
}

/// `x.contiguous()` with `x`'s own strides (a view's, or an archive value's).
pub(super) fn contiguous(rw: &mut Rw, x: ValueId) -> Result<ValueId, RuleError> {
    let strides = rw.meta(x)?.strides.clone();
    contiguous_as(rw, x, &strides)
}

/// `out.contiguous()` for `out`, the result of an elementwise op on `operands` (their layouts as
/// torch has them, in argument order).
pub(super) fn contiguous_elementwise(rw: &mut Rw, out: ValueId, operands: &[&TensorMeta]) -> Result<ValueId, RuleError> {
    let sizes = rw.meta(out)?.sizes.clone();
    let strides = elementwise_strides(operands, &sizes);
    contiguous_as(rw, out, &strides)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::decomp::{decompose, Marks, Mode};
    use super::super::test_graph::{arg, node};
    use crate::ir::{Arg, DType, Graph, InputKind, TensorMeta, ValueId, ValueKind};
    use crate::sym::Expr;

    fn input(g: &mut Graph, name: &str, sizes: Vec<Expr>) -> ValueId {
        g.add_input(name, ValueKind::Tensor(TensorMeta::contiguous(DType::F32, sizes)), InputKind::UserInput).unwrap()
    }

    fn core_ops(mut g: Graph, out: ValueId) -> BTreeMap<String, usize> {
        g.outputs.push(Arg::Tensor(out));
        decompose(&g, Mode::Core, &Marks::default()).unwrap().graph.op_histogram()
    }

    fn clones(ops: &BTreeMap<String, usize>) -> usize {
        ops.get("aten.clone.default").copied().unwrap_or(0)
    }

    fn transposed(g: &mut Graph, x: ValueId) -> ValueId {
        node(g, "t", "aten.transpose.int", vec![arg("self", Arg::Tensor(x)), arg("dim0", Arg::Int(1)), arg("dim1", Arg::Int(2))])
    }

    /// `contiguous()` copies a transposed tensor only; a contiguous one is returned as it is.
    #[test]
    fn contiguous_copies_only_what_is_not_row_major() {
        for transpose in [false, true] {
            let mut g = Graph::new("g");
            let x = input(&mut g, "x", vec![Expr::symbol("s0"), Expr::int(3), Expr::int(4)]);
            let y = if transpose { transposed(&mut g, x) } else { x };
            let c = node(&mut g, "c", "aten.contiguous.default", vec![arg("self", Arg::Tensor(y))]);
            let out = node(&mut g, "m", "aten.mul.Tensor", vec![arg("self", Arg::Tensor(c)), arg("other", Arg::Tensor(c))]);
            assert_eq!(clones(&core_ops(g, out)), usize::from(transpose), "transposed: {transpose}");
        }
    }

    /// `rms_norm` of a transposed tensor: the product keeps the input's order, so torch's
    /// `.contiguous()` copies it (timm AIMv2); of a contiguous one it does not.
    #[test]
    fn rms_norm_of_a_transposed_input_is_copied() {
        for transpose in [false, true] {
            let mut g = Graph::new("g");
            let x = input(&mut g, "x", vec![Expr::symbol("s0"), Expr::int(8), Expr::int(8)]);
            let y = if transpose { transposed(&mut g, x) } else { x };
            let args = vec![arg("input", Arg::Tensor(y)), arg("normalized_shape", Arg::Ints(vec![8])), arg("eps", Arg::Float(1e-6))];
            let out = node(&mut g, "n", "aten.rms_norm.default", args);
            assert_eq!(clones(&core_ops(g, out)), usize::from(transpose), "transposed: {transpose}");
        }
    }

    /// Attention pooling: a `[1, 2, 1, 4]` query expanded over the batch. `q * scale` merges
    /// batch and heads without a copy, and the one-row output is row-major in the flash layout:
    /// no clone at all (AIMv2's pooling head; torch 2.15 has none either).
    #[test]
    fn an_expanded_one_row_query_needs_no_copy() {
        let mut g = Graph::new("g");
        let b = Expr::symbol("s0");
        let l = Expr::symbol("s1");
        let probe = input(&mut g, "probe", vec![Expr::int(1), Expr::int(2), Expr::int(1), Expr::int(4)]);
        let kv = input(&mut g, "kv", vec![b.clone(), Expr::int(2), l, Expr::int(4)]);
        let bs = node(&mut g, "b", "aten.sym_size.int", vec![arg("self", Arg::Tensor(kv)), arg("dim", Arg::Int(0))]);
        let sizes = vec![crate::ir::SymIntArg::Value(bs), crate::ir::SymIntArg::Int(-1), crate::ir::SymIntArg::Int(-1), crate::ir::SymIntArg::Int(-1)];
        let q = node(&mut g, "q", "aten.expand.default", vec![arg("self", Arg::Tensor(probe)), arg("size", Arg::SymInts(sizes))]);
        let args = vec![arg("query", Arg::Tensor(q)), arg("key", Arg::Tensor(kv)), arg("value", Arg::Tensor(kv))];
        let out = node(&mut g, "a", "aten.scaled_dot_product_attention.default", args);
        let ops = core_ops(g, out);
        assert_eq!(clones(&ops), 0, "{ops:?}");
        assert_eq!(ops.get("aten.bmm.default"), Some(&2), "{ops:?}");
    }
}
