use super::*;

#[test]
fn in_place_overloads_map_to_functional_ones() {
    assert_eq!(functional_target("aten.relu_.default").as_deref(), Some("aten.relu.default"));
    assert_eq!(functional_target("aten.add_.Tensor").as_deref(), Some("aten.add.Tensor"));
    assert_eq!(functional_target("aten.hardswish_.default").as_deref(), Some("aten.hardswish.default"));
    assert_eq!(functional_target("aten.fill_.Scalar").as_deref(), Some("aten.fill.Scalar"));
    assert_eq!(functional_target("aten.relu.default"), None);
    assert_eq!(functional_target("aten.__and__.Tensor"), None);
    assert_eq!(functional_target("aten._assert_tensor_metadata.default"), None);
    assert_eq!(functional_target("_operator.mul"), None);
    assert_eq!(functional_target("aten.atan2.out").as_deref(), Some("aten.atan2.default"));
    assert_eq!(functional_target("aten.add.Scalar_out").as_deref(), Some("aten.add.Scalar"));
    assert_eq!(functional_target("aten.no_such_op.out"), None);
}

#[test]
fn a_write_through_views_is_described_back_to_its_base() {
    use crate::ir::{DType, InputKind, NamedArg, NodeMeta, TensorMeta, ValueKind};
    use crate::sym::Expr;
    let t = |sizes: &[i64]| {
        let sizes: Vec<Expr> = sizes.iter().map(|s| Expr::int(*s)).collect();
        ValueKind::Tensor(TensorMeta::contiguous(DType::F32, sizes))
    };
    let arg = |name: &str, arg: Arg| NamedArg { name: name.into(), arg, kwarg: false };
    let mut g = Graph::new("g");
    let x = g.add_input("x", t(&[4, 4]), InputKind::UserInput).unwrap();
    let s = g
        .add_node("slice_1", "aten.slice.Tensor", vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Int(0)), arg("end", Arg::Int(2))], vec![("slice_1".into(), t(&[2, 4]))], NodeMeta::default())
        .unwrap();
    let sv = g.node(s).outputs[0];
    let f = g
        .add_node("fill_", "aten.fill_.Scalar", vec![arg("self", Arg::Tensor(sv)), arg("value", Arg::Int(1))], vec![("fill_".into(), t(&[2, 4]))], NodeMeta::default())
        .unwrap();
    let r = g
        .add_node("relu_", "aten.relu_.default", vec![arg("self", Arg::Tensor(x))], vec![("relu_".into(), t(&[4, 4]))], NodeMeta::default())
        .unwrap();
    let through = describe_write(&g, g.node(f)).unwrap();
    assert!(through.contains("a view of `x` (graph input, user_input) (through `slice_1`)"), "{through}");
    assert!(through.contains("aten.fill.Scalar") && through.contains("scattered back into `x`"), "{through}");
    let direct = describe_write(&g, g.node(r)).unwrap();
    assert!(direct.starts_with("`x` (graph input, user_input): run as `aten.relu.default`"), "{direct}");
    assert_eq!(describe_write(&g, g.node(s)), None);
}

#[test]
fn an_out_overload_runs_as_its_functional_op_and_rebinds_out() {
    use crate::exec::Tensor;
    use crate::ir::{DType, Format, InputKind, Model, NamedArg, NodeMeta, TensorMeta, ValueKind};
    use crate::sym::Expr;
    let t = ValueKind::Tensor(TensorMeta {
        dtype: DType::F32,
        strides: vec![Expr::int(1)],
        sizes: vec![Expr::int(3)],
        storage_offset: Expr::int(0),
        device: "cpu".into(),
        requires_grad: false,
    });
    let arg = |name: &str, arg: Arg, kwarg: bool| NamedArg { name: name.into(), arg, kwarg };
    let mut g = Graph::new("g");
    let (y, x, o) = (g.add_input("y", t.clone(), InputKind::UserInput).unwrap(), g.add_input("x", t.clone(), InputKind::UserInput).unwrap(), g.add_input("o", t.clone(), InputKind::UserInput).unwrap());
    let args = vec![arg("self", Arg::Tensor(y), false), arg("other", Arg::Tensor(x), false), arg("out", Arg::Tensor(o), true)];
    let n = g.add_node("atan2_out", "aten.atan2.out", args, vec![("atan2_out".into(), t.clone())], NodeMeta::default()).unwrap();
    let r = g.node(n).outputs[0];
    // The written tensor is read after the write, then the node's own result.
    let neg = g.add_node("neg", "aten.neg.default", vec![arg("self", Arg::Tensor(o), false)], vec![("neg".into(), t)], NodeMeta::default()).unwrap();
    g.outputs = vec![Arg::Tensor(g.node(neg).outputs[0]), Arg::Tensor(r)];
    assert_eq!(written(g.node(n)), Some(o));
    assert!(mutates(&g));
    let f = crate::decomp::functionalize(&g).unwrap();
    let targets: Vec<&str> = f.graph.nodes.iter().map(|n| n.target.as_str()).collect();
    assert_eq!(targets, ["aten.atan2.default", "aten.neg.default"]);
    assert!(f.graph.nodes[0].arg("out").is_none());
    let mut m = Model::new(Format::Pt2, "test");
    m.graphs.push(g.clone());
    let v = |xs: [f32; 3]| Tensor::from_vec(&[3], xs.to_vec()).unwrap();
    let outs = crate::exec::run(&m, &g, &[v([1.0, -1.0, 0.5]), v([1.0, 1.0, -2.0]), v([9.0, 9.0, 9.0])]).unwrap();
    let want: Vec<f64> = [(1.0f32, 1.0f32), (-1.0, 1.0), (0.5, -2.0)].iter().map(|(a, b)| a.atan2(*b) as f64).collect();
    assert_eq!(outs[1].to_f64_vec(), want);
    assert_eq!(outs[0].to_f64_vec(), want.iter().map(|w| -w).collect::<Vec<_>>());
    let plan = crate::lower::lower(&m, &g, crate::decomp::Mode::None, &crate::decomp::Marks::default()).unwrap();
    assert!(plan.graph.nodes.iter().any(|n| n.target == "aten.atan2.default"));
}

#[test]
fn composite_views_are_decided_from_their_metadata() {
    use crate::ir::{DType, InputKind, NamedArg, NodeMeta, TensorMeta, ValueKind};
    use crate::sym::Expr;
    let meta = |dtype: DType, sizes: &[i64], strides: &[i64]| {
        ValueKind::Tensor(TensorMeta {
            dtype,
            sizes: sizes.iter().map(|s| Expr::int(*s)).collect(),
            strides: strides.iter().map(|s| Expr::int(*s)).collect(),
            storage_offset: Expr::int(0),
            device: "cpu".into(),
            requires_grad: false,
        })
    };
    let mut g = Graph::new("g");
    let x = g.add_input("x", meta(DType::F32, &[2, 3, 4], &[12, 4, 1]), InputKind::UserInput).unwrap();
    let xt = g.add_input("xt", meta(DType::F32, &[4, 3], &[1, 4]), InputKind::UserInput).unwrap();
    let mut out = |name: &str, src, kind| {
        let arg = vec![NamedArg { name: "self".into(), arg: Arg::Tensor(src), kwarg: false }];
        let n = g.add_node(name, "aten.reshape.default", arg, vec![(name.to_string(), kind)], NodeMeta::default()).unwrap();
        g.node(n).outputs[0]
    };
    let flat = out("flat", x, meta(DType::F32, &[6, 4], &[4, 1]));
    let copied = out("copied", xt, meta(DType::F32, &[12], &[1]));
    let cast = out("cast", x, meta(DType::F16, &[2, 3, 4], &[12, 4, 1]));
    let odd = out("odd", xt, meta(DType::F32, &[3, 4], &[1, 3]));
    assert_eq!(composite_is_view(&g, x, flat), Some(true));
    assert_eq!(composite_is_view(&g, xt, copied), Some(false));
    assert_eq!(composite_is_view(&g, x, cast), Some(false));
    assert_eq!(composite_is_view(&g, xt, odd), None);
}

#[test]
fn the_registry_says_which_ops_alias() {
    let g = Graph::new("g");
    assert_eq!(aliasing(&g, "aten.slice.Tensor"), Aliasing::View);
    assert_eq!(aliasing(&g, "aten.permute.default"), Aliasing::View);
    assert_eq!(aliasing(&g, "aten.reshape.default"), Aliasing::Maybe);
    assert_eq!(aliasing(&g, "aten.add.Tensor"), Aliasing::None);
}
