use serde_json::Value as Json;

use super::*;
use crate::ir::{Arg, DType};

const AOT: &str = r#"class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "Sym(s77)",  # PlainAOTInput(idx=0)
        arg1_1: "f32[s77, 32][32, 1]cuda:0",  # PlainAOTInput(idx=1)
    ):
        # Annotation: {'compile_with_inductor': 0} File: /m.py:67 in forward, code: h = self.ln1(x)
        var_mean = torch.ops.aten.var_mean.correction(arg1_1, [1], correction = 0, keepdim = True)
        getitem: "f32[s77, 1][1, 1]cuda:0" = var_mean[0]
        getitem_1: "f32[s77, 1][1, 1]cuda:0" = var_mean[1];  var_mean = None

        # File: /m.py:68 in forward, code: y = h * 2
        mul: "Sym(2*s77)" = arg0_1 * 2
        view: "f32[2*s77, 16][16, 1]cuda:0" = torch.ops.aten.view.default(arg1_1, [mul, 16]);  arg1_1 = None
        to: "f16[2*s77, 16][16, 1]cuda:0" = torch.ops.aten._to_copy.default(view, dtype = torch.float16, device = device(type='cuda', index=0))
        return (
            getitem,  # PlainAOTOutput(idx=0)
            to,
        )
"#;

#[test]
fn reads_nodes_annotations_and_locations() {
    let (g, warnings) = parse_graph("g", AOT).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(g.inputs.len(), 2);
    let targets: Vec<&str> = g.nodes.iter().map(|n| n.target.as_str()).collect();
    assert_eq!(
        targets,
        [
            "aten.var_mean.correction",
            "_operator.getitem",
            "_operator.getitem",
            "_operator.mul",
            "aten.view.default",
            "aten._to_copy.default"
        ]
    );
    let vm = &g.nodes[0];
    assert!(vm.meta.compile_with_inductor());
    let loc = SourceLoc::from_stack_trace(vm.meta.stack_trace.as_deref().unwrap()).unwrap();
    assert_eq!((loc.file.as_str(), loc.line, loc.code.as_str()), ("/m.py", 67, "h = self.ln1(x)"));
    assert_eq!(vm.arg("correction"), Some(&Arg::Int(0)));
    assert_eq!(vm.arg("arg1"), Some(&Arg::Ints(vec![1])));
    let view = &g.nodes[4];
    assert!(matches!(view.arg("arg1"), Some(Arg::SymInts(v)) if v.len() == 2));
    assert!(!view.meta.compile_with_inductor());
    let to = &g.nodes[5];
    assert_eq!(to.arg("dtype"), Some(&Arg::ScalarType(DType::F16)));
    assert_eq!(to.arg("device"), Some(&Arg::Device("cuda:0".into())));
    assert_eq!(g.outputs.len(), 2);
    let t = g.value(g.nodes[4].outputs[0]).tensor().unwrap();
    assert_eq!(t.sizes[0].to_string(), "2*s77");
    assert!(matches!(g.value(g.nodes[3].outputs[0]).kind, ValueKind::SymInt(_)));
}

#[test]
fn truncated_or_broken_dumps_do_not_panic() {
    for cut_at in (0..AOT.len()).step_by(7) {
        let mut end = cut_at;
        while !AOT.is_char_boundary(end) {
            end -= 1;
        }
        let _ = parse_graph("g", &AOT[..end]);
    }
    let e = parse_graph("g", "def forward(self, x):\n    y = torch.ops.aten.relu.default(z)\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.message.contains("`z` is not defined"), "{}", e.message);
    assert!(parse_graph("g", "nothing").is_err());
}

/// The Python that dynamo writes for real models (lines from Llama, GPT-2 and resnet18 logs).
const DYNAMO: &str = r#"class GraphModule(torch.nn.Module):
    def forward(self, s27: "Sym(s27)", L_x_: "f32[2, 4, s27, 16][64*s27, 16, 64, 1]cpu", L_p_: "i64[1, s27][s27, 1]cpu"):
        l_x_ = L_x_
        size = l_x_.size()
        getitem = size[2];  size = None
        x1: "f32[2, 4, s27, 8][64*s27, 16, 64, 1]cpu" = l_x_[(Ellipsis, slice(None, 8, None))]
        x2: "f32[2, 4, s27, 8][64*s27, 16, 64, 1]cpu" = l_x_[..., 8:]
        p: "i64[1, s27, 1][s27, 1, 1]cpu" = L_p_[(Ellipsis, None)]
        q: "i64[1, s27][s27, 1]cpu" = L_p_[(slice(None, None, None), slice(None, getitem, None))]
        r: "f32[2, 4, s27, 8][64*s27, 16, 64, 1]cpu" = x1[::-1, 1:3:2]
        shape = l_x_.shape
        v = x2.view(torch.Size([2, 4, getitem, 8]))
        x1 += x2;  x3: "f32[2, 4, s27, 8][64*s27, 16, 64, 1]cpu" = x1;  x1 = x2 = None
        t = torch.zeros(3, dtype = torch.float32, layout = torch.strided, memory_format = torch.contiguous_format)
        c = torch.clamp(x3, -torch.inf, math.pi)
        return (x3, (p, q), [r, None], v, t, shape)
"#;

#[test]
fn reads_dynamo_indexing_in_place_ops_and_nested_returns() {
    let (g, warnings) = parse_graph("g", DYNAMO).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let node = |n: &str| g.node(g.node_by_name(n).unwrap());
    let json = |n: &str, a: &str| match node(n).arg(a) {
        Some(Arg::Opaque { kind, json }) if kind == PY_KIND => serde_json::from_str::<Json>(json).unwrap(),
        other => panic!("{n}.{a}: {other:?}"),
    };
    let ell = serde_json::json!({ "ellipsis": null });
    let slice = |a: Json, b: Json, c: Json| serde_json::json!({ "slice": [a, b, c] });
    assert_eq!(node("x1").target, "_operator.getitem");
    assert_eq!(json("x1", "arg1"), serde_json::json!({ "tuple": [ell, slice(Json::Null, 8.into(), Json::Null)] }));
    assert_eq!(json("x2", "arg1"), serde_json::json!({ "tuple": [ell, slice(8.into(), Json::Null, Json::Null)] }));
    assert_eq!(json("p", "arg1"), serde_json::json!({ "tuple": [ell, null] }));
    assert_eq!(json("r", "arg1"), serde_json::json!({ "tuple": [slice(Json::Null, Json::Null, (-1).into()), slice(1.into(), 3.into(), 2.into())] }));
    // A value inside a slice stays an edge of the graph.
    let q = node("q");
    assert_eq!(json("q", "arg1")["tuple"][1]["slice"][1], serde_json::json!({ "value": "getitem" }));
    let getitem = g.value_id("getitem").unwrap();
    assert!(q.inputs().any(|v| v == getitem), "{:?}", q.args);
    assert_eq!(node("shape").target, "builtins.getattr");
    assert_eq!(node("shape").arg("arg1"), Some(&Arg::String("shape".into())));
    assert!(matches!(node("v").arg("arg0"), Some(Arg::SymInts(s)) if s.len() == 4));
    let x3 = node("x3");
    assert_eq!(x3.target, "_operator.iadd");
    assert!(matches!(g.value(x3.outputs[0]).kind, ValueKind::Tensor(_)));
    let t = node("t");
    assert_eq!(t.arg("layout"), Some(&Arg::Layout("strided".into())));
    assert_eq!(t.arg("memory_format"), Some(&Arg::MemoryFormat("contiguous_format".into())));
    let c = node("c");
    assert_eq!(c.args[1].arg, Arg::Float(f64::NEG_INFINITY));
    assert_eq!(c.args[2].arg, Arg::Float(std::f64::consts::PI));
    assert_eq!(g.outputs.len(), 8, "the returned pytree's leaves: {:?}", g.outputs);
    assert_eq!(g.outputs[4], Arg::None);
}

#[test]
fn reads_setitem_into_a_tensor() {
    // torchvision's Swin builds its shifted-window mask so (torch 2.15 dynamo graph).
    let text = "def forward(self, L_x_: \"f32[8, 8][8, 1]cpu\", s0: \"Sym(s0)\"):\n    \
                l_x_ = L_x_\n    \
                attn_mask: \"f32[8, 8][8, 1]cpu\" = l_x_.new_zeros((8, 8));  l_x_ = None\n    \
                attn_mask[(slice(0, -4, None), slice(-4, -2, None))] = 1;  setitem = attn_mask;  setitem = None\n    \
                attn_mask[(slice(-2, None, None), Ellipsis)] = s0;  setitem_1 = attn_mask;  setitem_1 = None\n    \
                return (attn_mask,)\n";
    let (g, warnings) = parse_graph("g", text).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let set = g.node(g.node_by_name("setitem").unwrap());
    assert_eq!(set.target, "_operator.setitem");
    let mask = g.value_id("attn_mask").unwrap();
    assert!(set.inputs().any(|v| v == mask), "writes into the mask: {:?}", set.args);
    assert_eq!(set.arg("arg2"), Some(&Arg::Int(1)));
    let set1 = g.node(g.node_by_name("setitem_1").unwrap());
    let s0 = g.value_id("s0").unwrap();
    assert!(set1.inputs().any(|v| v == s0), "the written value is an edge: {:?}", set1.args);
    // The graph returns the mask itself, not the setitem's None.
    assert!(matches!(&g.outputs[0], Arg::Tensor(v) if *v == mask), "{:?}", g.outputs);
    // Without the alias that names the node, the line is an error that says so.
    let bad = text.replace(";  setitem = attn_mask;  setitem = None", "");
    let e = parse_graph("g", &bad).unwrap_err();
    assert!(e.message.contains("naming the setitem node"), "{e:?}");
}

/// AOT autograd's joint graph as torch 2.15 prints it (trimmed from a CPU training log).
const JOINT: &str = r#"class wrap_fn(torch.nn.Module):
    def forward(
        self,
        primals,
        tangents,
    ):
        primals_1: "f32[16, 8][8, 1]cpu"  # PlainAOTInput(idx=0)
        primals_2: "Sym(s77)"
        primals_3: "f32[s77, 8][8, 1]cpu"
        tangents_1: "f32[s77, 16][16, 1]cpu"
        primals_1, primals_2, primals_3, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
        # No stacktrace found for following nodes
        t: "f32[8, 16][1, 8]cpu" = torch.ops.aten.t.default(primals_1);  primals_1 = None
        mm: "f32[s77, 16][16, 1]cpu" = torch.ops.aten.mm.default(primals_3, t)
        gelu: "f32[s77, 16][16, 1]cpu" = torch.ops.aten.gelu.default(mm)
        # Backward of forward node: File: /m.py:9 in forward, code: return gelu(x @ w)
        gelu_backward: "f32[s77, 16][16, 1]cpu" = torch.ops.aten.gelu_backward.default(tangents_1, mm);  tangents_1 = mm = None
        t_1: "f32[16, s77][1, 16]cpu" = torch.ops.aten.t.default(gelu_backward)
        mm_1: "f32[16, 8][8, 1]cpu" = torch.ops.aten.mm.default(t_1, primals_3);  t_1 = primals_3 = None
        return pytree.tree_unflatten([gelu, mm_1, None, None], self._out_spec)
"#;

#[test]
fn reads_the_joint_graphs_pytree_inputs_and_outputs() {
    let (g, warnings) = parse_graph("0/0:aot_joint_graph", JOINT).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let inputs: Vec<&str> = g.inputs.iter().map(|(v, _)| g.value(*v).name.as_str()).collect();
    assert_eq!(inputs, ["primals_1", "primals_2", "primals_3", "tangents_1"], "the containers are no inputs");
    assert!(matches!(&g.value(g.inputs[1].0).kind, ValueKind::SymInt(e) if e.to_string() == "s77"));
    let tangent = g.value(g.inputs[3].0).tensor().unwrap();
    assert_eq!((tangent.sizes[0].to_string().as_str(), tangent.device.as_str()), ("s77", "cpu"));
    assert_eq!(g.nodes.len(), 6);
    assert_eq!(g.outputs.len(), 4);
    assert_eq!((&g.outputs[2], &g.outputs[3]), (&Arg::None, &Arg::None));
    let gb = g.node(g.node_by_name("gelu_backward").unwrap());
    let loc = SourceLoc::from_stack_trace(gb.meta.stack_trace.as_deref().unwrap()).unwrap();
    assert_eq!((loc.file.as_str(), loc.line), ("/m.py", 9), "a gradient node has its forward node's location");
}

#[test]
fn hostile_joint_graph_lines_are_errors_that_say_what_was_expected() {
    for cut_at in (0..JOINT.len()).step_by(5) {
        let _ = parse_graph("g", &JOINT[..cut_at]);
    }
    let cases = [
        (r#"primals_1: "f32[16, 8][8, 1]cpu"#, 7, "unterminated annotation"),
        ("primals_1, primals_2, primals_3, tangents_1, = torch.ops.aten.foo(primals, tangents)", 11, "found a call of `torch.ops.aten.foo`"),
        ("primals_1, primals_2, primals_3, tangents_1, = fx_pytree.tree_flatten_spec([primals, grads], self._in_spec)", 11, "`grads` is none of them"),
        ("primals_1, primals_2[0], primals_3, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)", 11, "found `primals_2[0]`"),
        ("primals_1, primals_2, primals_3, tangents_1, = fx_pytree.tree_flatten_spec(7, self._in_spec)", 11, "a list of parameter names first"),
    ];
    for (bad, line, expected) in cases {
        let mut lines: Vec<&str> = JOINT.lines().collect();
        let replaced = format!("        {bad}");
        lines[line - 1] = &replaced;
        let e = parse_graph("g", &lines.join("\n")).unwrap_err();
        assert_eq!(e.line, line, "{bad}: {e:?}");
        assert!(e.message.contains(expected), "{bad}: {}", e.message);
    }
    // An input unpacked with no annotation line still imports, with a warning.
    let (g, warnings) = parse_graph("g", &JOINT.replace("        primals_2: \"Sym(s77)\"\n", "")).unwrap();
    assert_eq!(g.inputs.len(), 4);
    assert!(warnings.iter().any(|w| w.contains("`primals_2` is unpacked without an annotation")), "{warnings:?}");
}

#[test]
fn annotations_cover_scalars_symbols_and_floats() {
    assert!(matches!(parse_annotation("f64[][]cpu").unwrap(), ValueKind::Tensor(t) if t.sizes.is_empty()));
    assert!(matches!(parse_annotation("Sym(0.0000100000000000000)").unwrap(), ValueKind::SymFloat(_)));
    // GPT-2's attention scale under dynamic shapes.
    let k = parse_annotation("Sym(OpaqueUnaryFn_sqrt(FloatTrueDiv(2.0, zf36)))").unwrap();
    assert!(matches!(&k, ValueKind::SymFloat(e) if e.to_string() == "OpaqueUnaryFn_sqrt(FloatTrueDiv(2.0, zf36))"), "{k:?}");
    assert!(matches!(parse_annotation("Sym(Eq(s0, 2))").unwrap(), ValueKind::SymBool(_)));
    assert!(matches!(parse_annotation("f32[s0, 3]").unwrap(), ValueKind::Tensor(t) if t.strides.len() == 2));
    assert!(parse_annotation("q99[3]").is_err());
    assert!(parse_annotation("f32[3][1, 1]").is_err());
}

#[test]
fn garbled_statements_are_errors_naming_their_line() {
    let bad = [
        "x = torch.ops.aten.relu.default(arg1_1",
        r#"x: "f32[3"#,
        "x = = arg1_1",
        "x = arg1_1 $ 2",
        "return (",
        "x, = (",
        "x[0] += 1",
        "def f(): pass",
        "x arg1_1",
        "x = arg1_1 +",
        "x: 3 = torch.ops.aten.relu.default(arg1_1)",
        "\u{0}",
    ];
    for b in bad {
        let text = format!("def forward(self, arg1_1: \"f32[3][1]cpu\"):\n    {b}\n    y = torch.ops.aten.relu.default(arg1_1)\n    return (y,)\n");
        let e = parse_graph("g", &text).unwrap_err();
        assert_eq!(e.line, 2, "{b}: {e:?}");
        assert!(!e.message.is_empty());
    }
    let e = parse_graph("g", "def forward(self, x: \"f32[3][1]cpu\"):\n    y = torch.ops.aten.relu.default(x $ 1)\n").unwrap_err();
    assert!(e.message.contains("torch.ops.aten.relu.default(x $ 1)"), "the message shows the statement: {e}");
}
