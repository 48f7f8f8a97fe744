use crate::decomp::{decompose, Marks, Mode};
use crate::ir::{Arg, DType, Graph, InputKind, NamedArg, NodeMeta, TensorMeta, ValueKind};
use crate::sym::Expr;

fn t(sizes: &[i64]) -> ValueKind {
    ValueKind::Tensor(TensorMeta::contiguous(DType::F32, sizes.iter().map(|s| Expr::int(*s)).collect()))
}

/// Clones in `contiguous(x)` under core, `x` permuted by `perm` first (none: as it is).
fn clones(perm: Option<Vec<i64>>) -> usize {
    let arg = |name: &str, arg: Arg| NamedArg { name: name.into(), arg, kwarg: false };
    let mut g = Graph::new("g");
    let mut x = g.add_input("x", t(&[2, 3, 4]), InputKind::UserInput).unwrap();
    let mut out_sizes = vec![2, 3, 4];
    if let Some(p) = perm {
        let sizes: Vec<i64> = p.iter().map(|&d| [2, 3, 4][d as usize]).collect();
        let id = g.add_node("permute", "aten.permute.default", vec![arg("self", Arg::Tensor(x)), arg("dims", Arg::Ints(p))], vec![("permute".into(), t(&sizes))], NodeMeta::default()).unwrap();
        x = g.node(id).outputs[0];
        out_sizes = sizes;
        if let ValueKind::Tensor(m) = &mut g.values[x.index()].kind {
            m.strides = vec![Expr::int(4), Expr::int(12), Expr::int(1)];
        }
    }
    let c = g.add_node("contiguous", "aten.contiguous.default", vec![arg("self", Arg::Tensor(x))], vec![("contiguous".into(), t(&out_sizes))], NodeMeta::default()).unwrap();
    let out = g.node(c).outputs[0];
    g.outputs.push(Arg::Tensor(out));
    let d = decompose(&g, Mode::Core, &Marks::default()).unwrap();
    d.graph.op_histogram().get("aten.clone.default").copied().unwrap_or(0)
}

/// ATen's `contiguous` returns a contiguous tensor itself and copies any other.
#[test]
fn contiguous_copies_only_what_is_not_contiguous() {
    assert_eq!(clones(None), 0);
    assert_eq!(clones(Some(vec![1, 0, 2])), 1);
}
