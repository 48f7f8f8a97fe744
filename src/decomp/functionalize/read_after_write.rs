//! Reads of a tensor after an in-place write through a view, as PyTorch's functionalization
//! regenerates them.

use crate::decomp::{decompose, Marks, Mode};
use crate::ir::{Arg, DType, Graph, InputKind, NamedArg, NodeMeta, TensorMeta, ValueId, ValueKind};
use crate::sym::Expr;

fn t(sizes: &[i64]) -> ValueKind {
    ValueKind::Tensor(TensorMeta::contiguous(DType::F32, sizes.iter().map(|s| Expr::int(*s)).collect()))
}

fn node(g: &mut Graph, name: &str, target: &str, args: Vec<(&str, Arg)>, out: &[i64]) -> ValueId {
    let args = args.into_iter().map(|(n, arg)| NamedArg { name: n.into(), arg, kwarg: false }).collect();
    let id = g.add_node(name, target, args, vec![(name.into(), t(out))], NodeMeta::default()).unwrap();
    g.node(id).outputs[0]
}

fn count(g: &Graph, target: &str) -> usize {
    g.op_histogram().get(target).copied().unwrap_or(0)
}

/// `y = x.matmul(w); y += b; return y`: `matmul` decomposes into `view` → `mm` → `view`, and
/// PyTorch functionalizes that, so the write goes back into the `mm` (a `view` to its shape)
/// and `y` is read as the reshape taken anew (MobileBERT's decoder bias: 2 views too few).
#[test]
fn a_write_into_a_decomposed_reshape_goes_back_and_is_taken_again() {
    let mut g = Graph::new("g");
    let x = g.add_input("x", t(&[2, 3, 4]), InputKind::UserInput).unwrap();
    let w = g.add_input("w", t(&[4, 5]), InputKind::UserInput).unwrap();
    let b = g.add_input("b", t(&[5]), InputKind::UserInput).unwrap();
    let y = node(&mut g, "matmul", "aten.matmul.default", vec![("self", Arg::Tensor(x)), ("other", Arg::Tensor(w))], &[2, 3, 5]);
    let a = node(&mut g, "add_", "aten.add_.Tensor", vec![("self", Arg::Tensor(y)), ("other", Arg::Tensor(b))], &[2, 3, 5]);
    g.outputs.push(Arg::Tensor(a));
    let d = decompose(&g, Mode::Core, &Marks::default()).unwrap();
    // view → mm → view, then add, view back to the mm's shape, view to the result's.
    assert_eq!(count(&d.graph, "aten.mm.default"), 1);
    assert_eq!(count(&d.graph, "aten.view.default"), 4, "{:?}", d.graph.op_histogram());
    let out = d.graph.outputs[0].as_tensor().unwrap();
    let last = d.graph.node(d.graph.value(out).producer.unwrap());
    assert_eq!(last.target, "aten.view.default");
}

/// `s = x[:2]; s.relu_(); return s * 2`: the slice is read after its own write as the slice
/// of the scattered base, as PyTorch's functionalization regenerates it (commit_update
/// leaves the view behind its storage), not as the `relu` result.
#[test]
fn a_view_written_in_place_is_read_from_its_new_base() {
    let mut g = Graph::new("g");
    let x = g.add_input("x", t(&[4, 3]), InputKind::UserInput).unwrap();
    let s = node(&mut g, "slice_1", "aten.slice.Tensor", vec![("self", Arg::Tensor(x)), ("dim", Arg::Int(0)), ("start", Arg::Int(0)), ("end", Arg::Int(2))], &[2, 3]);
    node(&mut g, "relu_", "aten.relu_.default", vec![("self", Arg::Tensor(s))], &[2, 3]);
    let m = node(&mut g, "mul", "aten.mul.Tensor", vec![("self", Arg::Tensor(s)), ("other", Arg::Float(2.0))], &[2, 3]);
    g.outputs.push(Arg::Tensor(m));
    let d = decompose(&g, Mode::Core, &Marks::default()).unwrap();
    let mul = d.graph.nodes.iter().find(|n| n.target == "aten.mul.Tensor").unwrap();
    let read = d.graph.node(d.graph.value(mul.args[0].arg.as_tensor().unwrap()).producer.unwrap());
    assert_eq!(read.target, "aten.slice.Tensor", "{:?}", d.graph.op_histogram());
    assert_eq!(count(&d.graph, "aten.slice_scatter.default"), 1);
}
