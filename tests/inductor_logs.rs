//! TORCH_TRACE logs of real models (`scripts/gen_inductor_logs.py`: tiny Llama, GPT-2, BERT from
//! transformers configs, torchvision resnet18; `torch.compile(dynamic=True)`, default and
//! `mode="lite"`, `INDUCTOR_PROVENANCE=1`): every graph imports, and Inductor's kernels come out
//! with their sources and nodes. `samples/inductor/cpu215_*` are torch 2.15 on CPU (C++ kernels).

mod common;

use std::io::Read;
use std::path::PathBuf;

use common::sample;
use xpu_workbench::import::trace::{self, KernelKind, KernelSource};

const MODELS: &[&str] = &["llama", "gpt2", "bert", "resnet"];

fn cpu_log(model: &str, mode: &str) -> PathBuf {
    sample(&format!("inductor/cpu215_{model}_{mode}.log.gz"))
}

fn text(path: &PathBuf) -> String {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut s).unwrap();
    s
}

/// Graph-carrying envelopes in the raw log: what the importer must turn into graphs, all of them.
fn graph_envelopes(log: &str) -> usize {
    log.lines()
        .filter(|l| !l.starts_with('\t'))
        .filter(|l| {
            ["{\"dynamo_output_graph\"", "{\"aot_inference_graph\"", "{\"aot_forward_graph\"", "{\"aot_backward_graph\"", "{\"aot_joint_graph\""]
                .iter()
                .any(|k| l.contains(k))
                || (l.contains("{\"artifact\"") && l.contains("\"name\": \"inductor_post_grad_graph\""))
        })
        .count()
}

use common::run_cli as run;

#[test]
fn every_graph_of_every_log_imports() {
    for model in MODELS {
        for mode in ["default", "lite"] {
            let path = cpu_log(model, mode);
            let log = trace::load_log(&path).unwrap();
            assert!(log.warnings.is_empty(), "{model} {mode}: {:?}", log.warnings);
            let graphs: usize = log.compiles.iter().map(|c| c.graphs.len()).sum();
            assert_eq!(graphs, graph_envelopes(&text(&path)), "{model} {mode}: a graph was skipped");
            assert!(graphs >= 5, "{model} {mode}: {graphs} graphs");
        }
    }
}

#[test]
fn dynamo_indexing_keeps_its_structure_and_edges() {
    let log = trace::load_log(&cpu_log("llama", "default")).unwrap();
    let g = log.compiles[0].graph(trace::Stage::DynamoOutput).unwrap();
    // `x1 = query_states[..., :8]` (Llama's rotate_half).
    let x1 = g.node(g.node_by_name("x1").unwrap());
    assert_eq!(x1.target, "_operator.getitem");
    let json = match x1.arg("arg1") {
        Some(xpu_workbench::ir::Arg::Opaque { kind, json }) if kind == trace::PY_KIND => json.clone(),
        other => panic!("{other:?}"),
    };
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v, serde_json::json!({"tuple": [{"ellipsis": null}, {"slice": [null, 8, null]}]}));
    let q = g.value_id("query_states").unwrap();
    assert!(x1.inputs().any(|v| v == q));
    // resnet's residual `out += identity` is an in-place add node.
    let log = trace::load_log(&cpu_log("resnet", "default")).unwrap();
    let g = log.compiles[0].graph(trace::Stage::DynamoOutput).unwrap();
    assert!(g.nodes.iter().any(|n| n.target == "_operator.iadd"));
}

#[test]
fn default_mode_kernels_have_sources_and_nodes() {
    let log = trace::load_log(&cpu_log("llama", "default")).unwrap();
    let c = log.compiles.iter().find(|c| !c.output_code.is_empty()).unwrap();
    assert!(c.provenance.is_some(), "INDUCTOR_PROVENANCE=1 logs carry the node mappings");
    let t = &trace::kernels(c, &log.file_access())[0];
    assert!(t.notes.is_empty(), "{:?}", t.notes);
    let cpp: Vec<_> = t.kernels.iter().filter(|k| k.kind == KernelKind::Cpp).collect();
    assert!(cpp.len() >= 8, "{}", cpp.len());
    for k in &cpp {
        assert!(matches!(&k.source, KernelSource::Code { language, text } if language == "c++" && text.contains("extern \"C\"")), "{}", k.name);
        assert!(!k.nodes.is_empty() && !k.post_grad_nodes.is_empty(), "{}", k.name);
        assert!(!k.stack_traces.is_empty(), "{}", k.name);
    }
    // Each projection is its own GEMM call site, computing its own linear node.
    let mm2 = t.kernels.iter().find(|k| k.name == "extern_kernels.mm:2").unwrap();
    assert_eq!((mm2.nodes.as_slice(), mm2.post_grad_nodes.as_slice()), (&["linear".to_string()][..], &["mm".to_string()][..]));
    assert_eq!(mm2.stack_traces.len(), 1, "its own call site's trace, not every GEMM's");
    assert!(mm2.stack_traces[0].contains("self.q_proj(hidden_states)"));
    assert_eq!(t.launches.len(), t.kernels.iter().map(|k| k.call_sites).sum::<usize>());
}

#[test]
fn lite_mode_launches_only_fallbacks() {
    for model in MODELS {
        let log = trace::load_log(&cpu_log(model, "lite")).unwrap();
        for c in log.compiles.iter().filter(|c| !c.output_code.is_empty()) {
            for t in trace::kernels(c, &log.file_access()) {
                assert!(!t.kernels.is_empty());
                let fused: Vec<&str> =
                    t.kernels.iter().filter(|k| k.kind != KernelKind::Fallback).map(|k| k.name.as_str()).collect();
                assert!(fused.is_empty(), "{model}: lite mode generated {fused:?}");
                assert!(t.kernels.iter().all(|k| !k.post_grad_nodes.is_empty()), "{model}");
            }
        }
    }
}

/// The default config writes no provenance mappings, and torch 2.11's lite mode leaves its
/// fallbacks' source-node comments empty: the post-grad graph (calls in graph order) and source
/// locations name their nodes instead.
#[test]
fn logs_without_provenance_still_name_each_kernels_nodes() {
    let log = trace::load_log(&sample("traces/trace_default.log.gz")).unwrap();
    let t = &trace::kernels(&log.compiles[1], &log.file_access())[0];
    assert!(!t.provenance);
    let nodes = |name: &str| t.kernels.iter().find(|k| k.name == name).unwrap().nodes.clone();
    assert_eq!(nodes("extern_kernels.addmm#1"), ["linear"], "not the layer norm feeding it");
    assert_eq!(nodes("extern_kernels.mm#1"), ["linear_1"]);
    assert_eq!(nodes("aten._scaled_dot_product_efficient_attention.default#1"), ["a"]);
    let log = trace::load_log(&sample("traces/trace_lite.log.gz")).unwrap();
    for c in log.compiles.iter().filter(|c| !c.output_code.is_empty()) {
        let t = &trace::kernels(c, &log.file_access())[0];
        assert!(t.kernels.iter().all(|k| k.post_grad_nodes.len() == 1), "{}: one post-grad node per fallback", c.id);
        let ln = &t.kernels[0];
        assert_eq!((ln.callee.as_str(), ln.nodes.as_slice()), ("aten.native_layer_norm.default", &["h".to_string()][..]));
    }
}

/// Issue 15's dynamic-shape lite case: SymViews (views sized by products of symbols) under
/// `mode="lite"`, `dynamic=True`, with and without its relu marked `compile_with_inductor`.
/// Lite mode lowers the marked node alone; every other node, views included, stays a fallback.
#[test]
fn lite_mode_lowers_only_the_marked_node() {
    let kernels_of = |name: &str| {
        let log = trace::load_log(&sample(&format!("inductor/cpu215_{name}_lite.log.gz"))).unwrap();
        assert!(log.warnings.is_empty(), "{name}: {:?}", log.warnings);
        let c = log.compiles.iter().find(|c| !c.output_code.is_empty()).unwrap();
        let dynamo = c.graph(trace::Stage::DynamoOutput).unwrap();
        let marked: Vec<String> =
            dynamo.nodes.iter().filter(|n| n.meta.compile_with_inductor()).map(|n| n.name.clone()).collect();
        (trace::kernels(c, &log.file_access()).remove(0), marked)
    };
    let (plain, marked) = kernels_of("symviews");
    assert!(marked.is_empty());
    assert!(plain.kernels.iter().all(|k| k.kind == KernelKind::Fallback));
    assert!(plain.kernels.iter().any(|k| k.callee == "aten.relu.default"));
    let (t, marked) = kernels_of("symviews_marked");
    assert_eq!(marked, ["r"]);
    let generated: Vec<_> = t.kernels.iter().filter(|k| k.kind != KernelKind::Fallback).collect();
    assert_eq!(generated.len(), 1, "{:?}", generated.iter().map(|k| &k.name).collect::<Vec<_>>());
    assert_eq!((generated[0].nodes.as_slice(), generated[0].post_grad_nodes.as_slice()), (&["r".to_string()][..], &["relu".to_string()][..]));
    assert!(t.kernels.iter().all(|k| k.callee != "aten.relu.default"));
    // The views whose sizes are products of symbols stay ATen calls in both.
    let views = |t: &trace::KernelTable| t.kernels.iter().filter(|k| k.callee == "aten.reshape.default").count();
    assert_eq!((views(&plain), views(&t)), (3, 3));
}

#[test]
fn kernels_cli_lists_every_compile_as_json() {
    let p = cpu_log("gpt2", "default");
    let (code, out, err) = run(&["kernels", p.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let compiles = v["compiles"].as_array().unwrap();
    assert!(!compiles.is_empty());
    let k = &compiles[0]["output_code"][0]["kernels"][0];
    for field in ["name", "kind", "source", "nodes", "post_grad_nodes", "call_sites"] {
        assert!(!k[field].is_null(), "{field} missing in {k}");
    }
    let (code, _, err) = run(&["kernels", p.to_str().unwrap(), "--compile", "9/9"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no compile `9/9`"), "{err}");
}
