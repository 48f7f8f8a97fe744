//! Small hand-built graphs, one per alignment rule; the real pairs are in tests/graph_diff.rs.

use super::*;
use crate::ir::{Arg, DType, Graph, InputKind, NamedArg, NodeMeta, TensorMeta, ValueId, ValueKind};
use crate::sym::Expr;

fn t(dtype: DType, sizes: &[&str]) -> ValueKind {
    let sizes = sizes.iter().map(|s| s.parse::<i64>().map(Expr::int).unwrap_or_else(|_| Expr::symbol(s))).collect();
    ValueKind::Tensor(TensorMeta::contiguous(dtype, sizes))
}

fn f32(sizes: &[&str]) -> ValueKind {
    t(DType::F32, sizes)
}

fn arg(name: &str, arg: Arg) -> NamedArg {
    NamedArg { name: name.into(), arg, kwarg: false }
}

fn x(v: ValueId) -> NamedArg {
    arg("self", Arg::Tensor(v))
}

/// Appends a one-output node named `name` and returns its value.
fn op(g: &mut Graph, name: &str, target: &str, args: Vec<NamedArg>, out: ValueKind) -> ValueId {
    let id = g.add_node(name, target, args, vec![(name.to_string(), out)], NodeMeta::default()).unwrap();
    g.node(id).outputs[0]
}

fn input(g: &mut Graph, name: &str, kind: ValueKind) -> ValueId {
    g.add_input(name, kind, InputKind::UserInput).unwrap()
}

fn classes(d: &GraphDiff) -> Vec<(Class, String, String)> {
    d.differences()
        .map(|e| (e.class, e.a.as_ref().map_or(String::new(), |r| r.name.clone()), e.b.as_ref().map_or(String::new(), |r| r.name.clone())))
        .collect()
}

/// relu(x) * 2 → sum, with names and the batch symbol as `prefix` and `sym` spell them.
fn chain(prefix: &str, sym: &str) -> Graph {
    let mut g = Graph::new(prefix);
    let x = input(&mut g, "x", f32(&[sym, "8"]));
    let r = op(&mut g, &format!("{prefix}relu"), "aten.relu.default", vec![x_arg(x)], f32(&[sym, "8"]));
    let m = op(&mut g, &format!("{prefix}mul"), "aten.mul.Tensor", vec![x_arg(r), arg("other", Arg::Float(2.0))], f32(&[sym, "8"]));
    let s = op(&mut g, &format!("{prefix}sum"), "aten.sum.default", vec![x_arg(m)], f32(&[]));
    g.outputs.push(Arg::Tensor(s));
    g
}

fn x_arg(v: ValueId) -> NamedArg {
    x(v)
}

#[test]
fn equal_graphs_are_the_same_whatever_their_names_and_symbols() {
    let (a, b) = (chain("a_", "s0"), chain("b_", "s9"));
    let d = diff(&a, &b);
    assert!(!d.differs(), "{:?}", classes(&d));
    assert_eq!(d.counts.same, 4);
    assert_eq!(d.symbols, vec![("s0".to_string(), "s9".to_string())]);
    assert!(d.entries.iter().skip(1).all(|e| e.matched_by == Some(MatchedBy::Structure)));
}

#[test]
fn a_changed_constant_is_a_changed_argument() {
    let a = chain("", "s0");
    let mut b = chain("", "s0");
    b.nodes[1].args[1].arg = Arg::Float(3.0);
    let d = diff(&a, &b);
    let e: Vec<&Entry> = d.differences().collect();
    assert_eq!(e.len(), 1, "{:?}", classes(&d));
    assert_eq!(e[0].class, Class::Changed);
    assert_eq!(e[0].changes.len(), 1);
    assert_eq!(e[0].changes[0].kind, ChangeKind::Arguments);
    assert_eq!((e[0].changes[0].a.as_str(), e[0].changes[0].b.as_str()), ("2.0", "3.0"));
}

#[test]
fn shape_and_dtype_changes_are_named() {
    let a = chain("", "s0");
    let mut b = chain("", "s0");
    let relu_out = b.nodes[0].outputs[0];
    b.values[relu_out.index()].kind = t(DType::F16, &["s0", "8"]);
    let mul_out = b.nodes[1].outputs[0];
    b.values[mul_out.index()].kind = f32(&["s0", "4"]);
    let d = diff(&a, &b);
    let kinds: Vec<Vec<ChangeKind>> = d.differences().map(|e| e.changes.iter().map(|c| c.kind).collect()).collect();
    assert_eq!(kinds, vec![vec![ChangeKind::Dtype], vec![ChangeKind::Shape]], "{:?}", classes(&d));
}

/// torch 2.11 exports `view(permute, [n, 32])` where 2.15 exports `reshape`: the node between two
/// matched ones is one node whose op changed, not a removal and an addition.
#[test]
fn an_op_between_matched_neighbours_is_a_changed_op() {
    let build = |target: &str, arg_name: &str| {
        let mut g = Graph::new("g");
        let x = input(&mut g, "x", f32(&["4", "8"]));
        let p = op(&mut g, "permute", "aten.permute.default", vec![x_arg(x), arg("dims", Arg::Ints(vec![1, 0]))], f32(&["8", "4"]));
        let v = op(&mut g, "v", target, vec![x_arg(p), arg(arg_name, Arg::Ints(vec![32]))], f32(&["32"]));
        let r = op(&mut g, "neg", "aten.neg.default", vec![x_arg(v)], f32(&["32"]));
        g.outputs.push(Arg::Tensor(r));
        g
    };
    let d = diff(&build("aten.view.default", "size"), &build("aten.reshape.default", "shape"));
    let e: Vec<&Entry> = d.differences().collect();
    assert_eq!(e.len(), 1, "{:?}", classes(&d));
    assert_eq!(e[0].matched_by, Some(MatchedBy::Neighbours));
    assert_eq!(e[0].changes.iter().map(|c| c.kind).collect::<Vec<_>>(), vec![ChangeKind::Op]);
}

/// `_fused_rms_norm` kept on one side, expanded on the other: the expansion is only in B, the
/// fused op and its `getitem` only in A — no op is paired with a different op that merely reads
/// the same input.
#[test]
fn a_replaced_region_is_only_in_a_and_only_in_b() {
    let mut a = Graph::new("a");
    let xa = input(&mut a, "x", f32(&["s0", "16"]));
    let add = op(&mut a, "add", "aten.add.Tensor", vec![x_arg(xa), arg("other", Arg::Int(1))], f32(&["s0", "16"]));
    let fused = a
        .add_node(
            "_fused_rms_norm",
            "aten._fused_rms_norm.default",
            vec![x_arg(add), arg("normalized_shape", Arg::Ints(vec![16]))],
            vec![("fused_0".into(), f32(&["s0", "16"])), ("fused_1".into(), f32(&["s0", "1"]))],
            NodeMeta::default(),
        )
        .unwrap();
    let f0 = a.node(fused).outputs[0];
    let g0 = op(&mut a, "getitem", "_operator.getitem", vec![x_arg(f0), arg("idx", Arg::Int(0))], f32(&["s0", "16"]));
    a.outputs.push(Arg::Tensor(g0));

    let mut b = Graph::new("b");
    let xb = input(&mut b, "x", f32(&["s0", "16"]));
    let add = op(&mut b, "add", "aten.add.Tensor", vec![x_arg(xb), arg("other", Arg::Int(1))], f32(&["s0", "16"]));
    let p = op(&mut b, "pow_1", "aten.pow.Tensor_Scalar", vec![x_arg(add), arg("exponent", Arg::Int(2))], f32(&["s0", "16"]));
    let m = op(&mut b, "mean", "aten.mean.dim", vec![x_arg(p), arg("dim", Arg::Ints(vec![1]))], f32(&["s0", "1"]));
    let r = op(&mut b, "rsqrt", "aten.rsqrt.default", vec![x_arg(m)], f32(&["s0", "1"]));
    let g = op(&mut b, "getitem", "_operator.getitem", vec![x_arg(r), arg("idx", Arg::Int(0))], f32(&["s0", "1"]));
    let mul = op(&mut b, "mul", "aten.mul.Tensor", vec![x_arg(add), arg("other", Arg::Tensor(g))], f32(&["s0", "16"]));
    b.outputs.push(Arg::Tensor(mul));

    let d = diff(&a, &b);
    let want = |c: Class, na: &str, nb: &str| (c, na.to_string(), nb.to_string());
    assert_eq!(
        classes(&d),
        vec![
            want(Class::OnlyA, "_fused_rms_norm", ""),
            want(Class::OnlyA, "getitem", ""),
            want(Class::OnlyB, "", "pow_1"),
            want(Class::OnlyB, "", "mean"),
            want(Class::OnlyB, "", "rsqrt"),
            want(Class::OnlyB, "", "getitem"),
            want(Class::OnlyB, "", "mul"),
        ]
    );
    // Swapping the sides swaps the classes and nothing else.
    let back = diff(&b, &a);
    assert_eq!((back.counts.only_a, back.counts.only_b, back.counts.same), (d.counts.only_b, d.counts.only_a, d.counts.same));
}

#[test]
fn inputs_pair_by_name_then_position_and_report_the_rest() {
    let mut a = Graph::new("a");
    input(&mut a, "x", f32(&["4"]));
    input(&mut a, "arg1_1", f32(&["4"]));
    let mut b = Graph::new("b");
    input(&mut b, "x", f32(&["4"]));
    input(&mut b, "arg9_9", f32(&["5"]));
    input(&mut b, "extra", f32(&["4"]));
    let d = diff(&a, &b);
    let got: Vec<(Class, Option<String>, Option<String>)> =
        d.entries.iter().map(|e| (e.class, e.a.as_ref().map(|r| r.name.clone()), e.b.as_ref().map(|r| r.name.clone()))).collect();
    let s = |x: &str| Some(x.to_string());
    assert_eq!(
        got,
        vec![(Class::Same, s("x"), s("x")), (Class::Changed, s("arg1_1"), s("arg9_9")), (Class::OnlyB, None, s("extra"))]
    );
}

#[test]
fn the_result_is_deterministic_and_serialisable() {
    let (a, mut b) = (chain("", "s0"), chain("", "s0"));
    b.nodes[2].target = "aten.amax.default".into();
    let (d1, d2) = (diff(&a, &b), diff(&a, &b));
    assert_eq!(d1, d2);
    let json = serde_json::to_string(&d1).unwrap();
    let back: GraphDiff = serde_json::from_str(&json).unwrap();
    assert_eq!(back, d1);
    assert!(json.contains("\"only_a\""), "{json}");
}

/// A node put in between on one side: it is only in B, and the node after it is changed in what
/// it reads — not removed and added again.
#[test]
fn an_inserted_node_rewires_its_reader() {
    let a = chain("", "s0");
    let mut b = Graph::new("b");
    let x = input(&mut b, "x", f32(&["s0", "8"]));
    let r = op(&mut b, "relu", "aten.relu.default", vec![x_arg(x)], f32(&["s0", "8"]));
    let c = op(&mut b, "clone", "aten.clone.default", vec![x_arg(r)], f32(&["s0", "8"]));
    let m = op(&mut b, "mul", "aten.mul.Tensor", vec![x_arg(c), arg("other", Arg::Float(2.0))], f32(&["s0", "8"]));
    let s = op(&mut b, "sum", "aten.sum.default", vec![x_arg(m)], f32(&[]));
    b.outputs.push(Arg::Tensor(s));
    let d = diff(&a, &b);
    assert_eq!(
        classes(&d),
        vec![(Class::OnlyB, String::new(), "clone".into()), (Class::Changed, "mul".into(), "mul".into())]
    );
    let change = &d.differences().nth(1).unwrap().changes[0];
    assert_eq!((change.kind, change.a.as_str(), change.b.as_str()), (ChangeKind::Arguments, "relu", "clone"));
}
