//! TORCH_TRACE logs of real torch 2.11 `torch.compile(dynamic=True)` runs: loading, per-compile
//! stages, symbols and guards, stage provenance, `check-lite`, and hostile logs.

mod common;

use std::io::Read;
use std::path::PathBuf;

use common::sample;
use xpu_workbench::import::trace::{self, Limits, Stage};
use xpu_workbench::import::{self};
use xpu_workbench::ir::Format;

const LOGS: &[&str] = &["trace_default", "trace_lite", "trace_lite_annotated"];

fn log_path(name: &str) -> PathBuf {
    sample(&format!("traces/{name}.log.gz"))
}

fn log_text(name: &str) -> String {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(log_path(name)).unwrap()).read_to_string(&mut s).unwrap();
    s
}

use common::run_cli as run;

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("xpu-wb-{}-{name}", std::process::id()));
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn every_log_loads_with_its_compiles_stages_symbols_and_guards() {
    for name in LOGS {
        let log = trace::load_log(&log_path(name)).unwrap();
        assert!(log.warnings.is_empty(), "{name}: {:?}", log.warnings);
        let ids: Vec<String> = log.compiles.iter().map(|c| c.id.to_string()).collect();
        // Batch 1 specializes, so a recompile appears (0/1); 0/0 restarted once (0/0_1).
        assert_eq!(ids, ["0/0", "0/0_1", "0/1"], "{name}");
        for c in &log.compiles {
            assert!(c.graph(Stage::DynamoOutput).is_some(), "{name} {}", c.id);
            assert!(c.graph(Stage::AotInference).is_some(), "{name} {}", c.id);
            let s27 = c.symbols.iter().find(|s| s.name == "s27").expect("s27");
            assert_eq!((s27.range.min, s27.range.max), (2, None));
            assert!(s27.hint.is_some());
        }
        let first = &log.compiles[1];
        assert!(first.graph(Stage::InductorPostGrad).is_some());
        assert!(!first.output_code.is_empty() && first.output_code[0].code.contains("def call"));
        assert!(first.guards.iter().any(|g| g.source == "Eq(s53, 32)"), "{name}");
        if *name == "trace_default" {
            // Inductor's kernels add 32-bit indexing guards; lite mode generates none.
            assert!(first.guards.iter().any(|g| g.source.contains("<= 2147483647")));
        }
        let model = log.into_model();
        assert_eq!(model.format, Format::TorchTrace);
        assert!(model.graphs.iter().any(|g| g.name == "0/1:aot_inference_graph"));
        // Batch 1 is a constant in the recompile: its input has no s77.
        let recompiled = model.graphs.iter().find(|g| g.name == "0/1:dynamo_output_graph").unwrap();
        let x = recompiled.inputs.iter().map(|(v, _)| recompiled.value(*v)).find(|v| v.name == "L_x_").unwrap();
        assert_eq!(x.tensor().unwrap().sizes[0].to_string(), "1");
    }
}

#[test]
fn graphs_keep_ops_shapes_and_source_locations() {
    let log = trace::load_log(&log_path("trace_default")).unwrap();
    let c = &log.compiles[1];
    let aot = c.graph(Stage::AotInference).unwrap();
    let hist = aot.op_histogram();
    for op in ["aten.var_mean.correction", "aten.rsqrt.default", "aten.erf.default", "aten.amax.default", "aten.addmm.default"] {
        assert!(hist.contains_key(op), "{op} missing: {hist:?}");
    }
    let view = aot.nodes.iter().find(|n| n.name == "view").unwrap();
    let t = aot.value(view.outputs[0]).tensor().unwrap();
    assert_eq!(t.sizes.iter().map(|e| e.to_string()).collect::<Vec<_>>(), ["s27*s77", "32"]);
    // Provenance by source location: the decomposed layer norm's nodes map to dynamo's `h`.
    let dynamo = c.graph(Stage::DynamoOutput).unwrap();
    let prov = trace::stage_provenance(dynamo, aot);
    let var_mean = aot.node_by_name("var_mean").unwrap();
    let from = &prov.iter().find(|(n, _)| *n == var_mean).unwrap().1;
    let names: Vec<&str> = from.iter().map(|&d| dynamo.node(d).name.as_str()).collect();
    assert!(names.contains(&"h"), "{names:?}");
    assert_eq!(dynamo.node(dynamo.node_by_name("h").unwrap()).target, "torch.nn.functional.layer_norm");
    let loc = trace::node_location(aot, var_mean).unwrap();
    assert_eq!((loc.line, loc.code.as_str()), (67, "h = self.ln1(x)"));
}

#[test]
fn annotations_reach_node_metadata() {
    let log = trace::load_log(&log_path("trace_lite_annotated")).unwrap();
    let dynamo = log.compiles[0].graph(Stage::DynamoOutput).unwrap();
    let ln = dynamo.node(dynamo.node_by_name("h").unwrap());
    assert!(ln.meta.compile_with_inductor());
    let gelu = dynamo.node(dynamo.node_by_name("h_1").unwrap());
    assert!(!gelu.meta.compile_with_inductor());
}

#[test]
fn inspect_json_lists_graphs_and_compile_ids() {
    let p = log_path("trace_default");
    let (code, out, err) = run(&["inspect", p.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["format"], "torch_trace");
    for g in v["graphs"].as_array().unwrap() {
        assert!(g["name"].is_string() && g["nodes"].is_u64() && g["ops"].is_object(), "{g}");
        assert!(g["inputs"].is_array() && g["outputs"].is_array());
    }
    let ids: Vec<&str> = v["compile_ids"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["0/0", "0/0_1", "0/1"]);
    let c = &v["compile_ids"][1];
    assert!(c["stages"].as_array().unwrap().iter().any(|s| s["stage"] == "aot_inference_graph"));
    let s77 = c["symbols"].as_array().unwrap().iter().find(|s| s["name"] == "s77").unwrap();
    assert_eq!((s77["min"].as_i64(), s77["max"].is_null()), (Some(2), true));
    assert!(!c["guards"].as_array().unwrap().is_empty());
    assert!(v["symbols"].as_array().unwrap().iter().any(|s| s["name"] == "s27"));
}

#[test]
fn check_lite_passes_lite_logs_and_fails_default_mode() {
    for name in ["trace_lite", "trace_lite_annotated"] {
        let (code, out, err) = run(&["check-lite", log_path(name).to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {out}{err}");
    }
    let (code, out, err) = run(&["check-lite", log_path("trace_default").to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    // Each decomposed op is named with what it had a kernel for and Inductor's table.
    for op in ["(torch.nn.functional.layer_norm) became", "(torch._C._nn.gelu) became", "(torch.softmax) became"] {
        assert!(out.contains(op), "{op} not reported:\n{out}");
    }
    for cause in ["aten.native_layer_norm has a kernel here", "aten.gelu has a kernel here", "aten._softmax has a kernel here"] {
        assert!(out.contains(cause), "{cause} not reported:\n{out}");
    }
    assert!(out.contains("Inductor's default decomposition table"), "{out}");
    assert!(out.contains("0/1:aot_inference_graph") && out.contains("gen_samples.py:67"), "{out}");
}

#[test]
fn check_lite_allows_decomposing_marked_ops() {
    // The default-mode log with ln1 (line 67) marked: its decomposition is allowed, the rest is not.
    let text = log_text("trace_default").replace(
        "# File: /work/main/scripts/gen_samples.py:67 in forward",
        "# Annotation: {'compile_with_inductor': 0} File: /work/main/scripts/gen_samples.py:67 in forward",
    );
    let p = temp_file("marked.log", text.as_bytes());
    let (code, out, _) = run(&["check-lite", p.to_str().unwrap()]);
    let _ = std::fs::remove_file(&p);
    assert_eq!(code, 1);
    let violations: Vec<&str> = out.lines().filter(|l| !l.starts_with("note:")).collect();
    assert!(!violations.iter().any(|l| l.contains("gen_samples.py:67")), "{out}");
    assert!(out.contains("torch.nn.functional.layer_norm") && out.contains("gen_samples.py:75"), "{out}");
    assert!(out.contains("is marked compile_with_inductor"), "{out}");
}

#[test]
fn truncated_logs_load_what_they_hold_or_fail_cleanly() {
    let text = log_text("trace_default");
    let bytes = text.as_bytes();
    // Cuts at line starts, mid-line and mid-payload (a graph dump is ~5% into the file).
    let mut cuts: Vec<usize> = (1..40).map(|i| bytes.len() * i / 40).collect();
    if let Some(p) = text.find("\tclass <lambda>") {
        cuts.extend([p + 300, p + 2000, p + 4000]);
    }
    for cut in cuts {
        match trace::load_bytes("cut.log", &bytes[..cut], Limits::default()) {
            Ok(log) => {
                let _ = log.into_model();
            }
            Err(e) => assert!(e.to_string().starts_with("cut.log"), "{e}"),
        }
    }
    let cut = text.find("\tclass <lambda>").unwrap() + 2500;
    let log = trace::load_bytes("cut.log", &bytes[..cut], Limits::default()).unwrap();
    assert!(log.warnings.iter().any(|w| w.contains("truncated")), "{:?}", log.warnings);
    // A truncated gzip stream keeps what decompressed and says the file ends early.
    let gz = std::fs::read(log_path("trace_lite")).unwrap();
    for cut in [gz.len() / 5, gz.len() / 2, gz.len() - 10] {
        let log = trace::load_bytes("cut.log.gz", &gz[..cut], Limits::default()).unwrap();
        assert!(log.warnings.iter().any(|w| w.contains("ends early")), "{:?}", log.warnings);
    }
}

#[test]
fn garbage_unknown_kinds_and_random_bytes_are_warnings_or_errors() {
    let mut text = String::from("this is not a log line\n");
    text.push_str("V1122 13:54:39.887000 468 a.py:1] {\"brand_new_kind\": {}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n");
    text.push_str("V1122 13:54:39.887000 468 a.py:1] {\"artifact\": {\"name\": \"new_artifact\"}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n");
    text.push_str("V1122 13:54:39.887000 468 a.py:1] {\"guard_added_fast\": {\"expr\": \"s0 >>>= 2\"}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n");
    text.push_str("V1122 13:54:39.887000 468 a.py:1] {\"aot_inference_graph\": {}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": \"x\"}\n\tdef forward(self, x: \"f32[s0][1]cpu\"):\n\t    y = torch.ops.aten.relu.default(nope)\n");
    text.push_str(&log_text("trace_lite")[..20_000]);
    let log = trace::load_bytes("mixed.log", text.as_bytes(), Limits::default()).unwrap();
    let w = log.warnings.join("\n");
    assert!(w.contains("line 1:"), "{w}");
    assert!(w.contains("unknown envelope kind `brand_new_kind`"), "{w}");
    assert!(w.contains("guard `s0 >>>= 2`"), "{w}");
    assert!(w.contains("`nope` is not defined"), "{w}");

    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for len in [1usize, 10, 1000, 100_000] {
        let junk: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        if let Ok(log) = trace::load_bytes("junk.log", &junk, Limits::default()) {
            let _ = log.into_model();
        }
    }
    let e = trace::load_bytes("junk.log", b"hello\nworld\n", Limits::default()).unwrap_err();
    assert!(e.to_string().contains("junk.log") && e.to_string().contains("line 1"), "{e}");
    assert!(trace::load_bytes("empty.log", b"", Limits::default()).is_err());
}

#[test]
fn load_dispatches_logs_by_content() {
    let model = import::load(&log_path("trace_lite")).unwrap();
    assert_eq!(model.format, Format::TorchTrace);
    let plain = temp_file("plain-trace.txt", log_text("trace_lite").as_bytes());
    assert_eq!(import::detect(&plain).unwrap(), Format::TorchTrace);
    let _ = std::fs::remove_file(&plain);
    let other = temp_file("other.bin", b"\x00\x01\x02\x03 nothing");
    let e = import::load(&other).unwrap_err().to_string();
    let _ = std::fs::remove_file(&other);
    assert!(e.contains("unrecognised format"), "{e}");
}
