//! The `*_as` ops, which take their shape from another tensor: ATen's CompositeImplicitAutograd
//! bodies read `other.sym_sizes()` and call the sized op (`TensorShape.cpp`):
//! `reshape_as` → `reshape`, `view_as` → `view`, `expand_as` → `expand`.
//!
//! Written as rules rather than taken from the traced table (`crate::ops::composite_traces`):
//! make_fx traces `reshape_as` through `reshape`'s own branch on the input's strides and size
//! products, so a trace holds only for the ranks and layout it was made at (2.15 recorded rank 1
//! only, and LeViT and RoFormer reshape rank 3 into rank 4), while the sized op's rule here
//! (`view::view_of`) decides view or copy for any layout as ATen does. 2.11's table has no
//! `expand_as` at all (its broadcast check guarded on sizes when it was traced).

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{SymIntArg, ValueId};

/// `other`'s sizes, as `sym_size` of its dynamic dims and literals of its static ones.
fn sizes_of_other(rw: &mut Rw) -> Result<Vec<SymIntArg>, RuleError> {
    let other = rw.t("other")?;
    (0..rw.rank(other)?).map(|d| rw.size(other, d)).collect()
}

/// `reshape_as(self, other)` → `reshape(self, other.shape)`: a `view`, after a `clone` when
/// `self`'s layout cannot be viewed so.
pub fn reshape_as(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let sizes = sizes_of_other(rw)?;
    Ok(vec![super::view::view_of(rw, x, sizes)?])
}

/// `view_as(self, other)` → `view(self, other.shape)`.
pub fn view_as(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let sizes = sizes_of_other(rw)?;
    Ok(vec![rw.op("aten.view.default", vec![("self", A::T(x)), ("size", A::Sizes(sizes))])?])
}

/// `expand_as(self, other)` → `expand(self, other.shape)`.
pub fn expand_as(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let sizes = sizes_of_other(rw)?;
    Ok(vec![rw.op("aten.expand.default", vec![("self", A::T(x)), ("size", A::Sizes(sizes))])?])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::decomp::{decompose, Marks, Mode};
    use super::super::test_graph::{arg, node};
    use crate::ir::{Arg, DType, Graph, InputKind, TensorMeta, ValueKind};
    use crate::sym::Expr;

    /// `target(self, other)` with `self` the input `[s0, s1, 4]`, or its transpose `[s0, 4, s1]`
    /// when asked, and `other` the input unsqueezed to `[s0, 1, s1, 4]`; the op multiset under `mode`.
    fn decomposed(target: &str, transposed: bool, mode: Mode) -> BTreeMap<String, usize> {
        let mut g = Graph::new("g");
        let meta = TensorMeta::contiguous(DType::F32, vec![Expr::symbol("s0"), Expr::symbol("s1"), Expr::int(4)]);
        let x = g.add_input("x", ValueKind::Tensor(meta), InputKind::UserInput).unwrap();
        let t = node(&mut g, "t", "aten.transpose.int", vec![arg("self", Arg::Tensor(x)), arg("dim0", Arg::Int(1)), arg("dim1", Arg::Int(2))]);
        let other = node(&mut g, "other", "aten.unsqueeze.default", vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Int(1))]);
        let src = if transposed { t } else { x };
        let r = node(&mut g, "r", target, vec![arg("self", Arg::Tensor(src)), arg("other", Arg::Tensor(other))]);
        g.outputs.push(Arg::Tensor(r));
        g.outputs.push(Arg::Tensor(other));
        decompose(&g, mode, &Marks::default()).unwrap().graph.op_histogram()
    }

    /// ATen's `reshape` views what it can and copies the rest: a contiguous `self` is one
    /// `view`, a transposed one (whose dims the new shape would mix) is copied first, in both
    /// tables.
    #[test]
    fn reshape_as_views_or_copies_as_reshape_does() {
        for mode in [Mode::Core, Mode::Full] {
            let ops = decomposed("aten.reshape_as.default", false, mode);
            assert_eq!((ops.get("aten.view.default"), ops.get("aten.clone.default")), (Some(&1), None), "{ops:?}");
            let ops = decomposed("aten.reshape_as.default", true, mode);
            assert_eq!((ops.get("aten.view.default"), ops.get("aten.clone.default")), (Some(&1), Some(&1)), "{ops:?}");
            assert!(!ops.contains_key("aten.reshape_as.default"), "{ops:?}");
        }
    }

    #[test]
    fn expand_as_is_an_expand_to_the_other_sizes() {
        let mut g = Graph::new("g");
        let meta = TensorMeta::contiguous(DType::F32, vec![Expr::symbol("s0"), Expr::int(1), Expr::int(4)]);
        let x = g.add_input("x", ValueKind::Tensor(meta), InputKind::UserInput).unwrap();
        let wide = TensorMeta::contiguous(DType::F32, vec![Expr::symbol("s0"), Expr::symbol("s1"), Expr::int(4)]);
        let y = g.add_input("y", ValueKind::Tensor(wide), InputKind::UserInput).unwrap();
        let e = node(&mut g, "e", "aten.expand_as.default", vec![arg("self", Arg::Tensor(x)), arg("other", Arg::Tensor(y))]);
        g.outputs.push(Arg::Tensor(e));
        let d = decompose(&g, Mode::Core, &Marks::default()).unwrap().graph;
        let ops = d.op_histogram();
        assert_eq!(ops.get("aten.expand.default"), Some(&1), "{ops:?}");
        assert!(!ops.contains_key("aten.expand_as.default"), "{ops:?}");
        let out = d.nodes.iter().find(|n| n.target == "aten.expand.default").unwrap().outputs[0];
        let ValueKind::Tensor(m) = &d.value(out).kind else { panic!("not a tensor") };
        assert_eq!(m.sizes, vec![Expr::symbol("s0"), Expr::symbol("s1"), Expr::int(4)]);
    }
}
