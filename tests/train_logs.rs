//! Training compiles (one forward + backward), as real TORCH_TRACE logs of torch 2.15 on CPU
//! (samples/lite/cpu215_*_train.log.gz, scripts/gen_train_logs.py): an MLP with LayerNorm/GELU
//! and an nn.RMSNorm net in default and lite mode, a tiny random Llama in lite mode. Every stage
//! of the compile is imported, nothing skipped; check-lite gives each a verdict.

mod common;

use std::path::PathBuf;

use common::{run_cli, sample};
use serde_json::Value;
use xpu_workbench::import::trace::{self, Limits, Stage};
use xpu_workbench::ir::ValueKind;

const LOGS: [&str; 5] = ["mlp_default", "mlp_lite", "rmsnet_default", "rmsnet_lite", "llama_lite"];

fn log_path(name: &str) -> PathBuf {
    sample(&format!("lite/cpu215_{name}_train.log.gz"))
}

fn check(name: &str, json: bool) -> (i32, String) {
    let path = log_path(name);
    let mut args = vec!["check-lite", path.to_str().unwrap()];
    if json {
        args.push("--json");
    }
    let (code, out, err) = run_cli(&args);
    (code, if json { out } else { format!("{out}{err}") })
}

/// Every compile that traced a joint graph has it, and the final attempt its forward and
/// backward graphs too; no graph dump of the log was skipped.
#[test]
fn every_stage_of_a_training_compile_imports() {
    for name in LOGS {
        let log = trace::load_log(&log_path(name)).unwrap();
        let skipped: Vec<&String> = log.warnings.iter().filter(|w| w.contains("skipped")).collect();
        assert!(skipped.is_empty(), "{name}: {skipped:#?}");
        let count = |s: Stage| log.compiles.iter().flat_map(|c| &c.graphs).filter(|(st, _)| *st == s).count();
        // Every graph-carrying envelope of the raw log became a graph.
        let raw = {
            use std::io::Read;
            let mut t = String::new();
            flate2::read::GzDecoder::new(std::fs::File::open(log_path(name)).unwrap()).read_to_string(&mut t).unwrap();
            t
        };
        let envelopes = raw
            .lines()
            .filter(|l| !l.starts_with('\t'))
            .filter(|l| {
                Stage::ALL.iter().any(|s| l.contains(&format!("{{\"{}\"", s.name())))
                    || (l.contains("{\"artifact\"") && l.contains("\"name\": \"inductor_post_grad_graph\""))
            })
            .count();
        let graphs: usize = log.compiles.iter().map(|c| c.graphs.len()).sum();
        assert_eq!(graphs, envelopes, "{name}: graphs imported vs graph envelopes in the log");
        let joints = count(Stage::AotJoint);
        assert!(joints >= 1, "{name}: no joint graph");
        assert_eq!(count(Stage::AotForward), 1, "{name}");
        assert_eq!(count(Stage::AotBackward), 1, "{name}");
        assert_eq!(count(Stage::DynamoOutput), joints, "{name}: one dynamo graph per traced attempt");
        assert_eq!(count(Stage::AotInference), 0, "{name}: training has no inference graph");
        for c in &log.compiles {
            let Some(joint) = c.graph(Stage::AotJoint) else { continue };
            let names: Vec<&str> = joint.inputs.iter().map(|(v, _)| joint.value(*v).name.as_str()).collect();
            assert!(names.iter().all(|n| n.starts_with("primals_") || n.starts_with("tangents_")), "{name}: {names:?}");
            assert!(names.iter().any(|n| n.starts_with("tangents_")), "{name}: no tangent among {names:?}");
            let unannotated = |v: &xpu_workbench::ir::ValueId| matches!(&joint.value(*v).kind, ValueKind::Other(s) if s == "unannotated");
            assert!(!joint.inputs.iter().any(|(v, _)| unannotated(v)), "{name}: every input has its annotation");
            // Outputs: the forward's results, then one gradient per input (None where there is none).
            assert_eq!(joint.outputs.len(), names.iter().filter(|n| n.starts_with("primals_")).count() + 1, "{name}");
            assert!(joint.outputs.contains(&xpu_workbench::ir::Arg::None), "{name}");
            if let (Some(f), Some(b)) = (c.graph(Stage::AotForward), c.graph(Stage::AotBackward)) {
                assert!(f.nodes.len() < joint.nodes.len() && b.nodes.len() < joint.nodes.len(), "{name}");
                assert!(b.inputs.iter().any(|(v, _)| b.value(*v).name.starts_with("tangents_")), "{name}");
            }
        }
    }
}

#[test]
fn check_lite_gives_every_training_log_a_verdict() {
    for name in LOGS {
        let (code, out) = check(name, false);
        let want = match name {
            // Inductor's table decomposes layer_norm/gelu and rms_norm; CPU has no _fused_rms_norm.
            "mlp_default" | "rmsnet_default" | "rmsnet_lite" => 1,
            _ => 0,
        };
        assert_eq!(code, want, "{name}:\n{out}");
        assert!(!out.contains("unverified"), "{name}:\n{out}");
        assert!(out.contains("note: backward:"), "{name}: the backward graph's gradients are reported:\n{out}");
    }
}

/// nn.RMSNorm in lite mode on CPU: `_fused_rms_norm` has no CPU kernel, so tracing expanded it in
/// the forward (a violation naming CPU) and its gradient kernel in the backward (a note).
#[test]
fn rms_norm_lite_training_names_the_expansion_on_cpu() {
    let (code, out) = check("rmsnet_lite", false);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("CPU has no kernel for aten._fused_rms_norm"), "{out}");
    let (_, json) = check("rmsnet_lite", true);
    let j: Value = serde_json::from_str(&json).unwrap();
    let bad: Vec<&Value> = j["findings"].as_array().unwrap().iter().filter(|f| f["violation"] == true).collect();
    assert!(bad.iter().all(|f| f["class"] == "no_backend_kernel" && f["backend"] == "CPU"), "{bad:#?}");
    let grads = j["backward"].as_array().unwrap();
    let rms = grads.iter().find(|b| b["op"] == "_fused_rms_norm_backward").expect("the gradient of _fused_rms_norm is noted");
    assert_eq!(rms["class"], "no_backend_kernel", "{rms:#}");
    assert_eq!(rms["violation"], false);
    assert!(grads.iter().all(|b| b["violation"] == false));
}

/// What lite mode kept in the forward keeps its gradient kernel in the backward; default mode's
/// backward decomposes them (Inductor's table), which is a note, not a violation.
#[test]
fn backward_gradients_are_notes_in_text_and_json() {
    let grads = |name: &str| -> Vec<(String, String)> {
        let (_, json) = check(name, true);
        let j: Value = serde_json::from_str(&json).unwrap();
        j["backward"].as_array().unwrap().iter().map(|b| (b["op"].as_str().unwrap().to_string(), b["class"].as_str().unwrap().to_string())).collect()
    };
    let lite = grads("mlp_lite");
    assert!(lite.contains(&("gelu_backward".into(), "kept".into())), "{lite:?}");
    assert!(lite.contains(&("native_layer_norm_backward".into(), "kept".into())), "{lite:?}");
    let default = grads("mlp_default");
    assert!(default.contains(&("gelu_backward".into(), "decomposed".into())), "{default:?}");
    let (code, out) = check("mlp_default", false);
    assert_eq!(code, 1);
    assert!(out.contains("note: backward:") && out.contains("gelu_backward"), "{out}");
}

/// Ops the partitioner computes in the backward rather than the forward are kept, not decomposed;
/// a joint graph (of the restarted attempt) is split into its halves the same way.
#[test]
fn llama_lite_training_follows_ops_across_forward_and_backward() {
    let (_, json) = check("llama_lite", true);
    let j: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(j["status"], "ok", "{json}");
    let findings = j["findings"].as_array().unwrap();
    let graphs: std::collections::BTreeSet<&str> = findings.iter().map(|f| f["graph"].as_str().unwrap()).collect();
    assert!(graphs.iter().any(|g| g.ends_with("aot_forward_graph")), "{graphs:?}");
    assert!(graphs.iter().any(|g| g.ends_with("(forward half)")), "the restarted attempt's joint graph: {graphs:?}");
    let arange: Vec<&Value> = findings.iter().filter(|f| f["target"] == "torch.arange").collect();
    assert!(!arange.is_empty() && arange.iter().all(|f| f["violation"] == false), "{arange:#?}");
}

/// A joint-graph dump with a hostile line: a typed error naming file, graph and line, the graph
/// skipped with a warning, never a panic; check-lite then says what it could not compare.
#[test]
fn hostile_joint_graph_lines_are_typed_errors() {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(log_path("mlp_lite")).unwrap()).read_to_string(&mut text).unwrap();
    let hostile = [
        ("tangents_1: \"f32[s77, s27, 16][16*s27, 16, 1]cpu\"\n", "tangents_1: \"f32[s77, s27, 16\n"),
        ("= fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)", "= fx_pytree.tree_flatten_spec([primals, grads], self._in_spec)"),
        ("= fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)", "= eval(primals)"),
    ];
    for (from, to) in hostile {
        assert!(text.contains(from), "{from}");
        let bad = text.replace(from, to);
        let log = trace::load_bytes("hostile.log", bad.as_bytes(), Limits::default()).unwrap();
        let w: Vec<&String> = log.warnings.iter().filter(|w| w.contains("aot_joint_graph")).collect();
        assert!(!w.is_empty(), "{to}: {:?}", log.warnings);
        assert!(w.iter().all(|w| w.starts_with("hostile.log: line ") && w.contains("expected")), "{w:#?}");
        let check = xpu_workbench::decomp::lite_trace::check_log(&log);
        assert_eq!(check.violations().count(), 0, "{to}");
        // The restarted attempt had only its joint graph: now nothing to compare, and said so.
        assert!(check.unverified.iter().any(|u| u.compile_id == "0/0" && u.reason.contains("no AOT graph")), "{to}: {:?}", check.unverified);
        assert!(check.compared >= 1, "the final attempt's forward graph is still compared");
    }
    // Cut anywhere: no panic.
    for i in 1..30 {
        let mut cut = text.len() * i / 30;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        if let Ok(log) = trace::load_bytes("cut.log", &text.as_bytes()[..cut], Limits::default()) {
            let _ = xpu_workbench::decomp::lite_trace::check_log(&log);
        }
    }
}

/// A CUDA training compile of torch 2.11 (default mode, a transformers text model from the
/// generated corpus, scripts/device_knowledge.sh, slimmed): its backward is compiled lazily at its
/// first run, which logs `bwd_compilation_metrics_runtime`, a kind torch 2.15's CPU logs above do not
/// have. The log imports with no warning and nothing skipped, and check-lite gives it a verdict.
#[test]
fn a_cuda_training_log_of_torch_2_11_imports_whole() {
    let path = sample("corpus/torch-2.11/hf_aimv2_text_model_model.cuda_default_train.log.gz");
    let log = trace::load_log(&path).unwrap();
    assert!(log.warnings.is_empty(), "{:#?}", log.warnings);
    let count = |s: Stage| log.compiles.iter().flat_map(|c| &c.graphs).filter(|(st, _)| *st == s).count();
    assert!(count(Stage::AotJoint) >= 1 && count(Stage::AotForward) >= 1 && count(Stage::AotBackward) >= 1);
    let (code, out, err) = run_cli(&["check-lite", path.to_str().unwrap()]);
    assert!(code == 0 || code == 1, "exit {code}: {out}{err}");
    assert!(out.contains("note: backward:"), "{out}");
}
