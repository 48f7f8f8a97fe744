//! `diff` on real pairs of torch's graphs: it must find exactly the differences torch's own
//! graphs show, and nothing else.
//!
//! How the expected differences are known: `scripts/graph_pair_facts.py A B [STAGE]` reads the two
//! graphs as torch wrote them (an archive's `model.json`, a log's printed FX graph), names every
//! value by how many nodes back it was defined (so torch's renumbering does not show), drops
//! devices, and prints difflib's differing lines. Its output for each pair is quoted at each test;
//! the nodes named in the expectations are those lines' nodes, under the names the graphs give them.

mod common;

use common::{edit_model_json, run_cli, sample};
use xpu_workbench::diff::{diff_files, ChangeKind, Class, FileDiff, GraphDiff, MatchedBy};

/// Differences of one pair as (class, A's node, B's node, change kinds), in entry order.
fn differences(d: &GraphDiff) -> Vec<(Class, String, String, Vec<ChangeKind>)> {
    d.differences()
        .map(|e| {
            let name = |r: &Option<xpu_workbench::diff::NodeRef>| r.as_ref().map_or(String::new(), |r| r.name.clone());
            (e.class, name(&e.a), name(&e.b), e.changes.iter().map(|c| c.kind).collect())
        })
        .collect()
}

fn only_a(n: &str) -> (Class, String, String, Vec<ChangeKind>) {
    (Class::OnlyA, n.into(), String::new(), vec![])
}

fn only_b(n: &str) -> (Class, String, String, Vec<ChangeKind>) {
    (Class::OnlyB, String::new(), n.into(), vec![])
}

fn pair<'d>(d: &'d FileDiff, label: &str) -> Vec<&'d GraphDiff> {
    let found: Vec<&GraphDiff> = d.pairs.iter().filter(|p| p.a == label && p.b == label).map(|p| &p.diff).collect();
    assert!(!found.is_empty(), "no pair {label}: {:?}", d.pairs.iter().map(|p| (&p.a, &p.b)).collect::<Vec<_>>());
    found
}

/// `F.rms_norm(x + 1, [16], w, 1e-6)` compiled in lite mode by torch 2.11 on CUDA (A) and on CPU
/// (B) (samples/lite/, scripts/gen_lite_cases.py). CUDA has a kernel for `_fused_rms_norm`, CPU has
/// none, so on CPU tracing expands it. graph_pair_facts.py, aot_inference_graph (and the same for
/// inductor_post_grad_graph; no line differs in dynamo_output_graph):
/// ```text
/// -torch.ops.aten._fused_rms_norm.default(%-1, [16], in3, 1e-06) :
/// -%-1[0] : f32[s77, s27, 16][16*s27, 16, 1]
/// +torch.ops.aten.pow.Tensor_Scalar(%-1, 2) : f32[s77, s27, 16][16*s27, 16, 1]
/// +torch.ops.aten.mean.dim(%-1, [2], True) : f32[s77, s27, 1][s27, 1, 1]
/// +torch.ops.aten.add.Scalar(%-1, 9.999999974752427e-07) : f32[s77, s27, 1][s27, 1, 1]
/// +torch.ops.aten.rsqrt.default(%-1) : f32[s77, s27, 1][s27, 1, 1]
/// +torch.ops.aten.mul.Tensor(%-5, %-1) : f32[s77, s27, 16][16*s27, 16, 1]
/// +torch.ops.aten.mul.Tensor(%-1, in3) : f32[s77, s27, 16][16*s27, 16, 1]
/// ```
#[test]
fn cuda_and_cpu_lite_logs_differ_by_the_rms_norm_expansion() {
    let d = diff_files(&sample("lite/rmsfn_cuda_lite_2.11.0.log.gz"), &sample("lite/rmsfn_cpu_lite_2.11.0.log.gz"), None).expect("diff");
    assert!(d.only_a.is_empty() && d.only_b.is_empty(), "{d:?}");
    for g in pair(&d, "0/0 dynamo_output_graph") {
        assert_eq!(differences(g), vec![], "dynamo records the call, not its expansion");
        assert_eq!(g.devices, vec![("cuda:0".to_string(), "cpu".to_string())]);
    }
    let expansion = vec![
        only_a("_fused_rms_norm"),
        only_a("getitem"),
        only_b("pow_1"),
        only_b("mean"),
        only_b("add_17"),
        only_b("rsqrt"),
        only_b("mul_14"),
        only_b("mul_18"),
    ];
    for g in pair(&d, "0/0 aot_inference_graph") {
        assert_eq!(differences(g), expansion);
        // `x + 1` is the same node on both sides, found through its source line.
        assert_eq!(g.counts.same, 4 + 1, "4 inputs and add");
    }
    let post_grad = vec![
        only_a("_fused_rms_norm"),
        only_a("getitem"),
        only_b("pow_1"),
        only_b("mean"),
        only_b("add_1"),
        only_b("rsqrt"),
        only_b("mul"),
        only_b("mul_1"),
    ];
    for g in pair(&d, "0/0 inductor_post_grad_graph") {
        assert_eq!(differences(g), post_grad);
    }
    // The expansion is grouped under the line that called it.
    let g = pair(&d, "0/0 aot_inference_graph")[0];
    let groups: Vec<&str> = g.groups.iter().filter(|x| x.counts.differs()).map(|x| x.name.as_str()).collect();
    assert_eq!(groups, vec!["functional.py:2954"]);
}

/// PyTorch's own lite-mode case, `aten._fused_rms_norm(x + 1, [16], None, None)`, on CUDA (A) and
/// CPU (B), torch 2.11. graph_pair_facts.py, aot_inference_graph:
/// ```text
/// -torch.ops.aten._fused_rms_norm.default(%-1, [16], None, None) :
/// -%-1[0] : f32[s77, s27, s53][s27*s53, s53, 1]
/// -%-2[1] : f32[s77, s27, 1][s27, 1, 1]
/// +torch.ops.aten.pow.Tensor_Scalar(%-1, 2) : f32[s77, s27, s53][s27*s53, s53, 1]
/// +torch.ops.aten.mean.dim(%-1, [2], True) : f32[s77, s27, 1][s27, 1, 1]
/// +torch.ops.aten.add.Scalar(%-1, 1.1920928955078125e-07) : f32[s77, s27, 1][s27, 1, 1]
/// +torch.ops.aten.rsqrt.default(%-1) : f32[s77, s27, 1][s27, 1, 1]
/// +torch.ops.aten.mul.Tensor(%-5, %-1) : f32[s77, s27, s53][s27*s53, s53, 1]
/// ```
#[test]
fn the_seed_case_differs_by_the_fused_rms_norm_expansion() {
    let d = diff_files(&sample("lite/rms_cuda_lite_2.11.0.log.gz"), &sample("lite/rms_cpu_lite_2.11.0.log.gz"), Some("aot")).expect("diff");
    let want = vec![
        only_a("_fused_rms_norm"),
        only_a("getitem"),
        only_a("getitem_1"),
        only_b("pow_1"),
        only_b("mean"),
        only_b("add_17"),
        only_b("rsqrt"),
        only_b("mul_14"),
    ];
    let graphs = pair(&d, "0/0 aot_inference_graph");
    assert_eq!(differences(graphs[0]), want);
}

/// vit exported by torch 2.11 (A) and 2.15 (B) (samples/zoo/, scripts/gen_zoo.py). 2.15's
/// `multi_head_attention_forward` reshapes the attention output with `.reshape(bsz * tgt_len,
/// embed_dim)` (torch/nn/functional.py) where 2.11's graph has `view`. graph_pair_facts.py:
/// ```text
/// @@ -33 +33 @@
/// -aten.view.default({"as_tensor": {"v": "%-2"}}, {"as_sym_ints": [{"v": "%-1"}, {"as_int": 32}]}) -> …
/// +aten.reshape.default({"as_tensor": {"v": "%-2"}}, {"as_sym_ints": [{"v": "%-1"}, {"as_int": 32}]}) -> …
/// @@ -68 +68 @@
/// -aten.view.default({"as_tensor": {"v": "%-1"}}, {"as_sym_ints": [{"v": "%-36"}, {"as_int": 32}]}) -> …
/// +aten.reshape.default({"as_tensor": {"v": "%-1"}}, {"as_sym_ints": [{"v": "%-36"}, {"as_int": 32}]}) -> …
/// ```
/// (outputs, elided here, equal). Everything else is equal though 2.15 renumbers the views after
/// (`view_7` is `view_6`) and its stack traces have other paths and line numbers.
#[test]
fn torch_2_11_and_2_15_exports_of_vit_differ_in_two_reshapes() {
    let d = diff_files(&sample("zoo/torch-2.11/vit.pt2"), &sample("zoo/torch-2.15/vit.pt2"), None).expect("diff");
    assert_eq!(d.pairs.len(), 1);
    let g = &d.pairs[0].diff;
    let op = vec![ChangeKind::Op];
    assert_eq!(
        differences(g),
        vec![(Class::Changed, "view_6".into(), "reshape_1".into(), op.clone()), (Class::Changed, "view_14".into(), "reshape_2".into(), op)]
    );
    for e in g.differences() {
        assert_eq!(e.changes[0].a, "aten.view.default");
        assert_eq!(e.changes[0].b, "aten.reshape.default");
        assert_eq!(e.matched_by, Some(MatchedBy::Neighbours));
    }
    let groups: Vec<&str> = g.groups.iter().filter(|x| x.counts.differs()).map(|x| x.name.as_str()).collect();
    assert_eq!(groups, vec!["encoder.layers.encoder_layer_0.self_attention", "encoder.layers.encoder_layer_1.self_attention"]);
}

/// bert exported by torch 2.11 (A) and 2.15 (B): 2.15 puts a `reshape` (to the shape it already
/// has) between each layer's `scaled_dot_product_attention` and the `transpose` that reads it.
/// graph_pair_facts.py shows the inserted lines and, since it names values by distance, nothing for
/// the transposes (each reads the node just before it on both sides) — but what each transpose reads
/// changed, which the diff names:
/// ```text
/// @@ -53,0 +54 @@
/// +aten.reshape.default({"as_tensor": {"v": "%-1"}}, {"as_sym_ints": [{"v": "%-53"}, {"as_int": -1}, {"v": "%-52"}, {"as_int": 16}]}) -> …
/// @@ -75 +76,2 @@   (sdpa of layer 1: its mask read one node further back, then)
/// +aten.reshape.default({"as_tensor": {"v": "%-1"}}, {"as_sym_ints": [{"v": "%-76"}, {"as_int": -1}, {"v": "%-75"}, {"as_int": 16}]}) -> …
/// ```
/// (every other differing line differs only in how far back a value was defined).
#[test]
fn torch_2_15_bert_reshapes_the_attention_output_before_its_transpose() {
    let d = diff_files(&sample("zoo/torch-2.11/bert.pt2"), &sample("zoo/torch-2.15/bert.pt2"), None).expect("diff");
    let g = &d.pairs[0].diff;
    let args = vec![ChangeKind::Arguments];
    assert_eq!(
        differences(g),
        vec![
            only_b("reshape"),
            (Class::Changed, "transpose_3".into(), "transpose_3".into(), args.clone()),
            only_b("reshape_2"),
            (Class::Changed, "transpose_7".into(), "transpose_7".into(), args),
        ]
    );
    let rewired: Vec<(&str, &str)> = g.differences().flat_map(|e| e.changes.iter().map(|c| (c.a.as_str(), c.b.as_str()))).collect();
    assert_eq!(rewired, vec![("scaled_dot_product_attention", "reshape"), ("scaled_dot_product_attention_1", "reshape_2")]);
}

/// One model's log in default mode (A) and lite mode (B), torch 2.15 on CPU
/// (samples/lite/symviews_*, scripts/gen_lite_cases.py): default decomposes silu, layer_norm and
/// softmax and turns linear's `t` into `permute`; lite keeps them. graph_pair_facts.py,
/// aot_inference_graph:
/// ```text
/// -torch.ops.aten.permute.default(in3, [1, 0]) : f32[16, 16][1, 16]
/// +torch.ops.aten.t.default(in3) : f32[16, 16][1, 16]
/// -neg, exp, add.Tensor, div                                          (silu)
/// -var_mean, [0], [1], add.Tensor, rsqrt, sub, mul, mul, add.Tensor   (layer_norm)
/// +torch.ops.aten.silu.default(%-1)
/// +torch.ops.aten.native_layer_norm.default(%-1, [16], in5, in6, 1e-05), [0]
/// -amax, sub, exp, sum.dim_IntList, div                               (softmax)
/// +torch.ops.aten._softmax.default(%-1, -1, False)
/// ```
#[test]
fn lite_and_default_logs_differ_by_the_decompositions_lite_mode_skips() {
    let d = diff_files(&sample("lite/symviews_cpu_default_2.15.0.log.gz"), &sample("lite/symviews_cpu_lite_2.15.0.log.gz"), Some("aot_inference"))
        .expect("diff");
    let graphs = pair(&d, "0/0 aot_inference_graph");
    let got = differences(graphs[0]);
    let want = vec![
        (Class::Changed, "permute".to_string(), "t".to_string(), vec![ChangeKind::Op, ChangeKind::Arguments]),
        only_a("neg"),
        only_a("exp"),
        only_a("add"),
        only_a("div"),
        only_a("var_mean"),
        only_a("getitem"),
        only_a("getitem_1"),
        only_a("add_1"),
        only_a("rsqrt"),
        only_a("sub"),
        only_a("mul_3"),
        only_a("mul_4"),
        only_a("add_2"),
        only_b("silu"),
        only_b("native_layer_norm"),
        only_b("getitem"),
        only_a("amax"),
        only_a("sub_1"),
        only_a("exp_1"),
        only_a("sum_1"),
        only_a("div_1"),
        only_b("_softmax"),
    ];
    assert_eq!(got, want);
}

#[test]
fn the_cli_exits_as_diff_does_and_names_what_is_wrong() {
    let vit = sample("zoo/torch-2.15/vit.pt2");
    let (code, out, err) = run_cli(&["diff", vit.to_str().unwrap(), vit.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("same"), "{out}");

    let old = sample("zoo/torch-2.11/vit.pt2");
    let (code, out, err) = run_cli(&["diff", old.to_str().unwrap(), vit.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("encoder.layers.encoder_layer_0.self_attention:"), "{out}");
    assert!(out.contains("~ view_6 ↔ reshape_1 (aten.reshape.default): op"), "{out}");
    assert!(out.contains("op: aten.view.default → aten.reshape.default"), "{out}");

    let (code, out, _) = run_cli(&["diff", old.to_str().unwrap(), vit.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1);
    let back: FileDiff = serde_json::from_str(&out).expect("--json is a FileDiff");
    assert_eq!(back.pairs[0].diff.counts.changed, 2);

    let cuda = sample("lite/rmsfn_cuda_lite_2.11.0.log.gz");
    let cpu = sample("lite/rmsfn_cpu_lite_2.11.0.log.gz");
    let (code, out, err) = run_cli(&["diff", cuda.to_str().unwrap(), cpu.to_str().unwrap(), "--stage", "dynamo"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0/0 dynamo_output_graph: same (6 inputs and nodes; devices cuda:0 → cpu)"), "{out}");
    let (code, out, _) = run_cli(&["diff", cuda.to_str().unwrap(), cpu.to_str().unwrap(), "--stage", "post_grad"]);
    assert_eq!(code, 1);
    assert!(out.contains("- _fused_rms_norm") && out.contains("aten._fused_rms_norm.default") && out.contains("f32[s77, s27, 16]"), "{out}");
    assert!(out.contains("devices: cuda:0 → cpu"), "{out}");

    // Bad input: exit 2, naming the file and what is wrong.
    let (code, _, err) = run_cli(&["diff", cuda.to_str().unwrap(), cpu.to_str().unwrap(), "--stage", "lite"]);
    assert_eq!(code, 2);
    assert!(err.contains("rmsfn_cuda_lite_2.11.0.log.gz: --stage lite: expected a log stage"), "{err}");
    let (code, _, err) = run_cli(&["diff", cuda.to_str().unwrap(), cpu.to_str().unwrap(), "--stage", "aot_backward"]);
    assert_eq!(code, 2);
    assert!(err.contains("no aot_backward graph in the log (its stages: dynamo_output_graph"), "{err}");
    let (code, _, err) = run_cli(&["diff", vit.to_str().unwrap(), "/nonexistent/b.pt2"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/b.pt2"), "{err}");
    let (code, _, err) = run_cli(&["diff", vit.to_str().unwrap(), vit.to_str().unwrap(), "--stage", "none,lite,full"]);
    assert_eq!(code, 2);
    assert!(err.contains("--stage none,lite,full: expected one stage"), "{err}");
}

/// Two stages of one export, as exported and after our full decomposition (lite on the annotated
/// sample, whose marked nodes decompose): what the diff finds
/// must be what the decomposition says it did — every decomposed node only in A, every node made
/// from one only in B, every node kept whole the same (the decomposition's own provenance,
/// `Decomposition::provenance`, is the independent record here; the diff reads only the graphs).
#[test]
fn two_decompositions_of_one_export_differ_by_what_was_decomposed() {
    use std::collections::BTreeSet;
    use xpu_workbench::decomp::{decompose, Marks, Mode};
    // Lite mode on the annotated sample: only the nodes it marks `compile_with_inductor` decompose.
    for (name, mode, stage) in [("mlp.pt2", Mode::Full, "none,full"), ("transformer_block.pt2", Mode::Full, "none,full"), ("annotated.pt2", Mode::Lite, "none,lite")] {
        let file = sample(name);
        let model = xpu_workbench::import::load(&file).expect("load");
        let g = &model.graphs[0];
        let dec = decompose(g, mode, &Marks::default()).expect("decompose");
        let decomposed: BTreeSet<String> = dec.decomposed.iter().map(|x| g.node(x.node).name.clone()).collect();
        let made: BTreeSet<String> = dec
            .decomposed
            .iter()
            .flat_map(|x| dec.provenance.products[x.node.index()].iter().map(|p| dec.graph.node(*p).name.clone()))
            .collect();
        assert!(!decomposed.is_empty(), "{name}: {stage} decomposes something");

        let d = diff_files(&file, &file, Some(stage)).expect("diff");
        assert_eq!(d.pairs.len(), 1);
        let diff = &d.pairs[0].diff;
        let names = |c: Class, a_side: bool| -> BTreeSet<String> {
            diff.entries
                .iter()
                .filter(|e| e.class == c)
                .filter_map(|e| if a_side { e.a.as_ref() } else { e.b.as_ref() })
                .filter(|r| r.index.is_some())
                .map(|r| r.name.clone())
                .collect()
        };
        assert_eq!(names(Class::OnlyA, true), decomposed, "{name}");
        assert_eq!(names(Class::OnlyB, false), made, "{name}");
        assert_eq!(diff.counts.changed, 0, "{name}: {:?}", diff.differences().filter(|e| e.class == Class::Changed).collect::<Vec<_>>());
    }
}

/// The 12,002-node export against itself: every node the same, found by structure.
#[test]
fn a_large_graph_against_itself_is_the_same() {
    let file = sample("big12k.pt2");
    let d = diff_files(&file, &file, None).expect("diff");
    let g = &d.pairs[0].diff;
    assert!(!g.differs());
    assert!(g.entries.iter().filter(|e| e.a.as_ref().is_some_and(|r| r.index.is_some())).count() >= 12_000);
    assert!(g.entries.iter().filter(|e| e.a.as_ref().is_some_and(|r| r.index.is_some())).all(|e| e.matched_by == Some(MatchedBy::Structure)));
}

/// The same export with two of its 2,000 `relu`s (the first, and the 1,001st) turned into
/// `sigmoid`: exactly those two nodes changed, op only. All 2,000 relus share one source line, so
/// the in-order alignment of that line's ops is ambiguous after the first change; the diff must
/// not pair each relu with its neighbour's.
#[test]
fn two_changed_ops_in_a_long_chain_are_two_changes() {
    let edited = edit_model_json("big12k.pt2", |j| {
        let nodes = j["graph_module"]["graph"]["nodes"].as_array_mut().expect("nodes");
        let relus: Vec<usize> = nodes.iter().enumerate().filter(|(_, n)| n["target"] == "torch.ops.aten.relu.default").map(|(i, _)| i).collect();
        for k in [relus[0], relus[1000]] {
            nodes[k]["target"] = "torch.ops.aten.sigmoid.default".into();
        }
    });
    let path = std::env::temp_dir().join(format!("xpuwb-diff-big12k-{}.pt2", std::process::id()));
    std::fs::write(&path, edited).expect("write the edited archive");
    let d = diff_files(&sample("big12k.pt2"), &path, None).expect("diff");
    let _ = std::fs::remove_file(&path);
    let g = &d.pairs[0].diff;
    let op = vec![ChangeKind::Op];
    assert_eq!(
        differences(g),
        vec![(Class::Changed, "relu".into(), "relu".into(), op.clone()), (Class::Changed, "relu_1000".into(), "relu_1000".into(), op)]
    );
}

/// Unlike files diffed against each other: no panic, the same result twice, and every input and
/// node of each graph in exactly one entry.
#[test]
fn every_node_is_accounted_for_once_between_unlike_files() {
    let files = [
        "mlp.pt2",
        "transformer_block.pt2",
        "zoo/torch-2.15/llama.pt2",
        "zoo/torch-2.11/llama.pt2",
        "lite/rmsfn_cpu_lite_2.11.0.log.gz",
        "lite/symviews_cuda_default_2.11.0.log.gz",
        "mlp.onnx",
    ];
    for x in files {
        for y in files {
            let (a, b) = (sample(x), sample(y));
            let d = diff_files(&a, &b, None).unwrap_or_else(|e| panic!("{x} {y}: {e}"));
            assert_eq!(d, diff_files(&a, &b, None).expect("again"), "{x} {y}: not deterministic");
            let pairs = xpu_workbench::diff::graph_pairs(&a, &b, None).expect("pairs");
            for ((_, ga, _, gb), p) in pairs.pairs.iter().zip(&d.pairs) {
                let c = p.diff.counts;
                assert_eq!(c.same + c.changed + c.only_a, ga.nodes.len() + ga.inputs.len(), "{x} {y} {}", p.a);
                assert_eq!(c.same + c.changed + c.only_b, gb.nodes.len() + gb.inputs.len(), "{x} {y} {}", p.b);
                let in_groups: usize = p.diff.groups.iter().map(|g| g.entries.len()).sum();
                assert_eq!(in_groups, p.diff.entries.len());
            }
            if x == y {
                assert!(!d.differs(), "{x} against itself differs");
            }
        }
    }
}
