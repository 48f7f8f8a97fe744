use super::*;
use crate::import::trace::parse_graph;

#[test]
fn the_user_line_is_the_innermost_frame_outside_torch() {
    let export = "File \"/w/m.py\", line 48, in forward\n    x = F.gelu(self.fc1(x))\n  File \"/opt/env/lib/python3.11/site-packages/torch/nn/modules/linear.py\", line 134, in forward\n    return F.linear(input, self.weight, self.bias)\n";
    assert_eq!(user_line(export), Some(("m.py".into(), 48)));
    let only_torch = "File \"/x/site-packages/torch/nn/functional.py\", line 9, in f\n    y\n";
    assert_eq!(user_line(only_torch), Some(("torch/nn/functional.py".into(), 9)), "the innermost frame stands in");
    // Two environments, one library: the same frame.
    let a = "File \"/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torchvision/models/resnet.py\", line 92, in forward\n";
    let b = "File \"/opt/torchenv/lib/python3.11/site-packages/torchvision/models/resnet.py\", line 92, in forward\n";
    assert_eq!(user_line(a), user_line(b));
    assert_eq!(user_line(a), Some(("torchvision/models/resnet.py".into(), 92)));
    assert_eq!(user_line("no frames here"), None);
}

#[test]
fn ops_are_spelled_one_way() {
    for (t, want) in [
        ("aten.linear.default", "linear"),
        ("torch._C._nn.linear", "linear"),
        ("aten.relu_.default", "relu"),
        ("torch.nn.functional.relu", "relu"),
        ("torch.ops.aten.gelu.default", "gelu"),
        ("_operator.iadd", "add"),
        ("_operator.getitem", "getitem"),
        ("aten.index.Tensor", "index"),
    ] {
        assert_eq!(op_concept(t), want, "{t}");
    }
}

/// Our export of `x = F.gelu(self.fc1(x)); x = F.relu(self.fc2(x))`.
const OURS: &str = r#"class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 32][32, 1]cpu", w1: "f32[64, 32][32, 1]cpu", w2: "f32[64, 64][64, 1]cpu"):
        # File: /w/m.py:48 in forward, code: x = F.gelu(self.fc1(x))
        linear: "f32[4, 64][64, 1]cpu" = torch.ops.aten.linear.default(x, w1)
        gelu: "f32[4, 64][64, 1]cpu" = torch.ops.aten.gelu.default(linear)
        # File: /w/m.py:49 in forward, code: x = F.relu(self.fc2(x))
        linear_1: "f32[4, 64][64, 1]cpu" = torch.ops.aten.linear.default(gelu, w2)
        relu: "f32[4, 64][64, 1]cpu" = torch.ops.aten.relu.default(linear_1)
        # File: /w/m.py:50 in forward, code: return x.clone()
        clone: "f32[4, 64][64, 1]cpu" = torch.ops.aten.clone.default(relu)
        return (clone,)
"#;

/// Dynamo's graph of the same code.
const DYNAMO: &str = r#"class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4, 32][32, 1]cpu", w1: "f32[64, 32][32, 1]cpu", w2: "f32[64, 64][64, 1]cpu"):
        # File: /w/m.py:48 in forward, code: x = F.gelu(self.fc1(x))
        linear: "f32[4, 64][64, 1]cpu" = torch._C._nn.linear(L_x_, w1)
        x: "f32[4, 64][64, 1]cpu" = torch._C._nn.gelu(linear)
        # File: /w/m.py:49 in forward, code: x = F.relu(self.fc2(x))
        linear_1: "f32[4, 64][64, 1]cpu" = torch._C._nn.linear(x, w2)
        x_1: "f32[4, 64][64, 1]cpu" = torch.nn.functional.relu(linear_1)
        # File: /w/elsewhere.py:7 in f, code: y = x.clone()
        clone: "f32[4, 64][64, 1]cpu" = torch.clone(x_1)
        return (clone,)
"#;

fn graphs() -> (Graph, Graph) {
    (parse_graph("ours", OURS).unwrap().0, parse_graph("1/0", DYNAMO).unwrap().0)
}

#[test]
fn nodes_pair_by_line_and_op_then_by_name() {
    let (a, b) = graphs();
    let pairs = pair_nodes(&a, &[("1/0".into(), &b)]);
    let got: Vec<(&str, &str, PairedBy)> = pairs.iter().map(|p| (p.ours.as_str(), p.inductor.as_str(), p.by)).collect();
    assert_eq!(
        got,
        [
            ("linear", "linear", PairedBy::LineAndOp),
            ("gelu", "x", PairedBy::LineAndOp),
            ("linear_1", "linear_1", PairedBy::LineAndOp),
            ("relu", "x_1", PairedBy::LineAndOp),
            ("clone", "clone", PairedBy::NameAndOp),
        ]
    );
}

fn ours_kernel(name: &str, nodes: &[&str], us: f64) -> OurKernel {
    OurKernel { name: name.into(), nodes: nodes.iter().map(|n| n.to_string()).collect(), median_us: us }
}

fn their_kernel(name: &str, kind: KernelKind, nodes: &[&str], us: Option<f64>) -> InductorKernel {
    InductorKernel { compile: "1/0".into(), name: name.into(), kind, nodes: nodes.iter().map(|n| n.to_string()).collect(), median_us: us }
}

#[test]
fn regions_are_connected_components_and_sort_by_our_time() {
    let (a, b) = graphs();
    // We fuse each matmul with its activation; Inductor calls the library for the matmuls and
    // fuses the activations; the clone is ours alone, a kernel Inductor has no node for is its.
    let ours = Ours {
        graph: &a,
        kernels: vec![
            ours_kernel("fused_gelu", &["linear", "gelu"], 10.0),
            ours_kernel("fused_relu", &["linear_1", "relu"], 30.0),
            ours_kernel("clone_k", &["clone_unpaired"], 1.0),
        ],
    };
    let theirs = Inductor {
        graphs: vec![("1/0".into(), &b)],
        kernels: vec![
            their_kernel("extern_kernels.addmm:1", KernelKind::Extern, &["linear"], Some(4.0)),
            their_kernel("cpp_fused_gelu_0", KernelKind::Cpp, &["x"], Some(1.0)),
            their_kernel("extern_kernels.addmm:3", KernelKind::Extern, &["linear_1"], Some(5.0)),
            their_kernel("cpp_fused_relu_1", KernelKind::Cpp, &["x_1"], None),
            their_kernel("cpp_fused_other_2", KernelKind::Cpp, &["other"], Some(2.0)),
        ],
    };
    let c = compare(&ours, &theirs);
    type Shown<'a> = (Vec<&'a str>, Vec<&'a str>, Option<f64>, Option<f64>);
    let rows: Vec<Shown<'_>> = c
        .rows
        .iter()
        .map(|r| (r.ours.iter().map(String::as_str).collect(), r.inductor.iter().map(String::as_str).collect(), r.ours_us, r.inductor_us))
        .collect();
    assert_eq!(
        rows,
        [
            (vec!["fused_relu"], vec!["extern_kernels.addmm:3 (library)", "cpp_fused_relu_1 (c++)"], Some(30.0), Some(5.0)),
            (vec!["fused_gelu"], vec!["extern_kernels.addmm:1 (library)", "cpp_fused_gelu_0 (c++)"], Some(10.0), Some(5.0)),
            (vec!["clone_k"], vec![], Some(1.0), None),
            (vec![], vec!["cpp_fused_other_2 (c++)"], None, Some(2.0)),
        ]
    );
    assert_eq!(c.rows[1].ratio, Some(2.0));
    assert_eq!(c.rows[1].ours_nodes, ["linear", "gelu"]);
    assert_eq!(c.rows[1].inductor_nodes, ["linear", "x"]);
    assert!(c.rows[1].unpaired_ours.is_empty() && c.rows[1].unpaired_inductor.is_empty());
    assert_eq!((c.rows[2].unpaired_ours.as_slice(), c.rows[3].unpaired_inductor.as_slice()), (&["clone_unpaired".to_string()][..], &["other".to_string()][..]));
    assert_eq!((c.ours_total_us, c.inductor_total_us), (41.0, 12.0));
}

/// An export whose stack traces point elsewhere than dynamo's for its first nodes (torchvision's
/// ResNet: the export drops `_forward_impl`'s frame): those pair by op in order, between the
/// pairs the lines made, and a pass never pairs across one.
#[test]
fn what_lines_leave_pairs_by_op_in_order_without_crossing() {
    const OURS: &str = r#"class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8][8, 1]cpu"):
        # File: /env/site-packages/tv/resnet.py:285 in forward, code: return self._forward_impl(x)
        relu: "f32[4, 8][8, 1]cpu" = torch.ops.aten.relu.default(x)
        neg: "f32[4, 8][8, 1]cpu" = torch.ops.aten.neg.default(relu)
        # File: /env/site-packages/tv/resnet.py:92 in forward, code: out = self.conv1(x)
        sin: "f32[4, 8][8, 1]cpu" = torch.ops.aten.sin.default(neg)
        # File: /env/site-packages/tv/resnet.py:290 in forward, code: y = x.exp()
        exp: "f32[4, 8][8, 1]cpu" = torch.ops.aten.exp.default(sin)
        cos: "f32[4, 8][8, 1]cpu" = torch.ops.aten.cos.default(exp)
        return (cos,)
"#;
    const DYNAMO: &str = r#"class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4, 8][8, 1]cpu"):
        # File: /other/site-packages/tv/resnet.py:268 in _forward_impl, code: x = self.relu(x)
        x: "f32[4, 8][8, 1]cpu" = torch.relu(L_x_)
        x_1: "f32[4, 8][8, 1]cpu" = torch.neg(x)
        # File: /other/site-packages/tv/resnet.py:92 in forward, code: out = self.conv1(x)
        out: "f32[4, 8][8, 1]cpu" = torch.sin(x_1)
        # File: /other/site-packages/tv/resnet.py:270 in _forward_impl, code: y = x.exp()
        y: "f32[4, 8][8, 1]cpu" = torch.cos(out)
        y_1: "f32[4, 8][8, 1]cpu" = torch.exp(y)
        return (y_1,)
"#;
    let (a, b) = (parse_graph("ours", OURS).unwrap().0, parse_graph("0/0", DYNAMO).unwrap().0);
    let pairs = pair_nodes(&a, &[("0/0".into(), &b)]);
    let got: Vec<(&str, &str, PairedBy)> = pairs.iter().map(|p| (p.ours.as_str(), p.inductor.as_str(), p.by)).collect();
    // `sin` pairs by its line (two environments, one file); `relu` and `neg` before it by order;
    // after it, the order of `exp` and `cos` differs, so only one of them can pair in order.
    assert_eq!(got[0], ("sin", "out", PairedBy::LineAndOp));
    assert!(got.contains(&("relu", "x", PairedBy::Order)) && got.contains(&("neg", "x_1", PairedBy::Order)), "{got:?}");
    assert_eq!(got.iter().filter(|(o, _, _)| *o == "exp" || *o == "cos").count(), 1, "{got:?}");
    assert!(!got.iter().any(|(o, t, _)| (*o == "relu" || *o == "neg") && (*t == "y" || *t == "y_1")), "no pair crosses `sin`: {got:?}");
}
