//! ATen's `infer_size` as torch's trace records it: which SymInt arithmetic resolving a `-1`
//! leaves in the graph.

use super::Rw;
use crate::decomp::RuleError;
use crate::ir::{SymIntArg, ValueId};
use crate::sym::Expr;

/// `sizes` with its `-1` resolved as ATen's `infer_size` does: `numel(x) / newsize`, where `numel`
/// is the product of `x`'s sizes and `newsize` that of the other entries, each folded left. The
/// SymInt arithmetic this does is traced, and export's hash-consing
/// (`insert_deferred_runtime_asserts`) erases a node only when its expression already has one:
/// the quotient is mostly an existing size, so it goes, but the products it was computed from stay
/// in torch's graph with no users (Bloom's `reshape(t, [4*b, -1, 16])` leaves `64*b*s` and
/// `64*b`). The trace is lazy, though: a quotient that is a number is passed on as one, and then
/// nothing is recorded (Exaone's `reshape(attn, [b, -1, s, 16])` of heads 4). Sizes with no `-1`
/// come back unchanged, and nothing is traced either.
pub(super) fn infer_size(rw: &mut Rw, x: ValueId, sizes: Vec<SymIntArg>) -> Result<Vec<SymIntArg>, RuleError> {
    let Some(infer) = sizes.iter().position(|s| matches!(s, SymIntArg::Int(-1))) else { return Ok(sizes) };
    let numel = rw.meta(x)?.sizes.iter().fold(Expr::int(1), |acc, s| Expr::mul(acc, s.clone()));
    let mut newsize = Expr::int(1);
    for (i, s) in sizes.iter().enumerate() {
        if i != infer {
            newsize = Expr::mul(newsize, rw.sym_expr(s)?);
        }
    }
    if newsize.as_int() == Some(0) {
        return Err(RuleError::Arg { name: "shape".into(), message: "a -1 next to a 0 size is ambiguous".into() });
    }
    if let Some(q) = Expr::floordiv(numel, newsize).as_int() {
        let mut sizes = sizes;
        sizes[infer] = SymIntArg::Int(q);
        return Ok(sizes);
    }
    let rank = rw.rank(x)?;
    let dims = (0..rank).map(|d| rw.size(x, d)).collect::<Result<Vec<_>, _>>()?;
    let numel = rw.product(dims)?;
    let others = sizes.iter().enumerate().filter(|(i, _)| *i != infer).map(|(_, s)| s.clone()).collect();
    let newsize = rw.product(others)?;
    let mut sizes = sizes;
    sizes[infer] = rw.sym_arith2("floordiv", numel, newsize)?;
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::decomp::{decompose, Marks, Mode};
    use super::super::test_graph::{arg, node};
    use crate::ir::{Arg, DType, Graph, InputKind, SymIntArg, TensorMeta, ValueKind};
    use crate::sym::Expr;

    /// `x: [s0, s1, 24]`, its sizes as the export names them, `x[:, :, :8]` (not contiguous),
    /// and `reshape(x or the slice, shape)` as the graph's output; decomposed under core.
    fn reshaped(of_slice: bool, shape: impl Fn(SymIntArg, SymIntArg) -> Vec<SymIntArg>) -> (Graph, BTreeMap<String, usize>) {
        let mut g = Graph::new("g");
        let meta = TensorMeta::contiguous(DType::F32, vec![Expr::symbol("s0"), Expr::symbol("s1"), Expr::int(24)]);
        let x = g.add_input("x", ValueKind::Tensor(meta), InputKind::UserInput).unwrap();
        let b = node(&mut g, "sym_size_int", "aten.sym_size.int", vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Int(0))]);
        let s = node(&mut g, "sym_size_int_1", "aten.sym_size.int", vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Int(1))]);
        let slice = vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Int(2)), arg("start", Arg::Int(0)), arg("end", Arg::Int(8))];
        let src = if of_slice { node(&mut g, "slice_1", "aten.slice.Tensor", slice) } else { x };
        let r = node(&mut g, "reshape", "aten.reshape.default", vec![arg("self", Arg::Tensor(src)), arg("shape", Arg::SymInts(shape(SymIntArg::Value(b), SymIntArg::Value(s))))]);
        g.outputs.push(Arg::Tensor(r));
        let d = decompose(&g, Mode::Core, &Marks::default()).unwrap();
        let ops = d.graph.op_histogram();
        (d.graph, ops)
    }

    fn view_sizes(g: &Graph) -> Vec<String> {
        let view = g.nodes.iter().find(|n| n.target == "aten.view.default").unwrap();
        let Some(Arg::SymInts(sizes)) = view.args.iter().find(|a| a.name == "size").map(|a| &a.arg) else { panic!("no size list") };
        sizes
            .iter()
            .map(|s| match s {
                SymIntArg::Int(i) => i.to_string(),
                SymIntArg::Value(v) => format!("{:?}", g.value(*v).kind),
            })
            .collect()
    }

    /// `reshape(x[:, :, :8], [b, -1, 4])` copies, and the `-1` is `s0*s1*8 // (s0*4)`, a new
    /// size: torch records both products and the quotient (`construct_reshape_infer`).
    #[test]
    fn a_new_quotient_leaves_both_products_and_itself() {
        let (g, ops) = reshaped(true, |b, _| vec![b, SymIntArg::Int(-1), SymIntArg::Int(4)]);
        assert_eq!(ops.get("_operator.mul"), Some(&3), "{ops:?}");
        assert_eq!(ops.get("_operator.floordiv"), Some(&1), "{ops:?}");
        assert_eq!(ops.get("aten.clone.default"), Some(&1), "{ops:?}");
        assert!(!view_sizes(&g).contains(&"-1".to_string()));
    }

    /// `reshape(x[:, :, :8], [-1, 8])` is a view; the quotient `s0*s1` is the first product of
    /// the numel, which stays, with the product it was multiplied into, and no division.
    #[test]
    fn a_quotient_torch_has_already_is_not_computed_again() {
        let (g, ops) = reshaped(true, |_, _| vec![SymIntArg::Int(-1), SymIntArg::Int(8)]);
        assert_eq!(ops.get("_operator.mul"), Some(&2), "{ops:?}");
        assert_eq!(ops.get("_operator.floordiv"), None, "{ops:?}");
        assert_eq!(ops.get("aten.clone.default"), None, "{ops:?}");
        assert!(view_sizes(&g)[0].contains("s0") && view_sizes(&g)[0].contains("s1"), "{:?}", view_sizes(&g));
    }

    /// A contiguous tensor is viewed with the `-1` as written, and a number quotient is passed
    /// as the number: neither records arithmetic.
    #[test]
    fn contiguous_inputs_and_number_quotients_record_nothing() {
        let (g, ops) = reshaped(false, |_, _| vec![SymIntArg::Int(-1), SymIntArg::Int(24)]);
        assert_eq!(ops.get("_operator.mul"), None, "{ops:?}");
        assert_eq!(view_sizes(&g), ["-1", "24"]);
        // `[s0, s1, 8]` as `[s0, -1, s1, 4]`: the `-1` is 2.
        let (g, ops) = reshaped(true, |b, s| vec![b, SymIntArg::Int(-1), s, SymIntArg::Int(4)]);
        assert_eq!(ops.get("_operator.mul"), None, "{ops:?}");
        assert_eq!(view_sizes(&g)[1], "2");
    }
}
