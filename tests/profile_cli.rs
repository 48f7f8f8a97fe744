//! The profiling commands as users call them.

mod common;


use xpu_workbench::profile::DEVICE_PID;

use common::run_cli as run;

#[test]
fn bench_puffin_reports_scope_costs_off_and_on() {
    let (code, out, err) = run(&["bench", "puffin", "--scopes", "2000", "--repeat", "3"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for key in ["call_without_scope_ns", "off_ns_per_scope", "on_nested_ns_per_scope", "on_top_level_ns_per_scope"] {
        assert!(v[key].as_f64().is_some_and(|x| x >= 0.0), "{key} in {v}");
    }
    assert_eq!(v["scopes_per_round"], 2000);
}

/// Whether OpenCL can run here; panics where CI requires it and it cannot.
fn opencl_or_skip() -> bool {
    match xpu_workbench::runtime::opencl::probe() {
        Ok(_) => true,
        Err(e) => {
            assert!(!common::opencl_required(), "XPU_WORKBENCH_REQUIRE_OPENCL is set but: {e}");
            eprintln!("skipping: {e} (source scripts/env.sh)");
            false
        }
    }
}

/// `bench kernels` at its smallest size: every kernel ran, each row carries its ratio to the
/// copy kernel of the same round, and the math floors (`exp_only`, `erf_only`) and the
/// index-arithmetic pair (`bias_add_3d` and its split-coordinates baseline) are there, and the
/// one-row reduction runs as the lowering splits it: two launches, against one unsplit.
#[test]
fn bench_kernels_rates_every_kernel_against_the_copy_of_its_round() {
    if !opencl_or_skip() {
        return;
    }
    let (code, out, err) = run(&["bench", "kernels", "--max-mb", "1", "--repeat", "1", "--no-matmul", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v["kernels"].as_array().expect("a kernels array");
    let names: Vec<&str> = rows.iter().filter_map(|r| r["kernel"].as_str()).collect();
    for want in ["copy", "fused_pointwise", "exp_only", "erf_only", "bias_add_3d", "bias_add_3d_split", "fused_reduction_rows", "fused_softmax"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let launches = |name: &str| rows.iter().find(|r| r["kernel"] == name).map(|r| r["launches"].clone());
    assert_eq!(launches("fused_reduction_one_row"), Some(serde_json::json!(2)), "{rows:?}");
    assert_eq!(launches("fused_reduction_one_row_unsplit"), Some(serde_json::json!(1)), "{rows:?}");
    for r in rows {
        let (gbs, ratio) = (r["gb_per_s"].as_f64().unwrap_or(-1.0), r["ratio_to_copy"].as_f64().unwrap_or(-1.0));
        assert!(gbs > 0.0 && ratio > 0.0, "{r}");
        if r["kernel"] == "copy" {
            assert!((ratio - 1.0).abs() < 1e-9, "{r}");
        }
    }
}

#[test]
fn profile_writes_a_valid_chrome_trace_whose_kernels_add_up_to_the_runs_device_time() {
    if !opencl_or_skip() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("xpu-workbench-profile-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (trace, recording) = (dir.join("out.json"), dir.join("out.puffin"));
    let model = common::sample("transformer_block.pt2");
    let (code, out, err) = run(&[
        "profile", model.to_str().unwrap(), "--mode", "full", "--bind", "s77=2", "--bind", "s27=8",
        "--device", "opencl", "--warmup", "1", "--repeat", "4",
        "--trace", trace.to_str().unwrap(), "--puffin", recording.to_str().unwrap(), "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["backend"], "opencl");
    // One whole forward's wall time per timed repetition, next to the device time it holds:
    // the runner waits for the queue, so a forward takes at least its kernels' time.
    assert_eq!(report["run_wall_ns"].as_array().map(Vec::len), Some(4), "{report}");
    let (wall, device) = (report["median_wall_ns"].as_u64(), report["median_device_ns"].as_u64());
    assert!(wall.zip(device).is_some_and(|(w, d)| w >= d && d > 0), "wall {wall:?}, device {device:?}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let puffin_bytes = std::fs::read(&recording).unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    let tracks = common::trace_format::validate(&doc).unwrap_or_else(|e| panic!("invalid trace: {e}"));
    let timed: Vec<&serde_json::Value> = tracks
        .iter()
        .filter(|((pid, _), _)| *pid == DEVICE_PID as u64)
        .flat_map(|(_, v)| v)
        .filter(|e| e["args"]["repetition"].as_u64().unwrap() >= 1)
        .collect();
    assert!(!timed.is_empty());
    // The plan runner's own account of its device time, repetition by repetition.
    let run_ns: u64 = report["run_device_ns"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(report["run_device_ns"].as_array().unwrap().len(), 4);
    let span_ns: f64 = timed.iter().map(|e| e["dur"].as_f64().unwrap() * 1e3).sum();
    assert!((span_ns - run_ns as f64).abs() <= 0.01 * run_ns as f64, "spans {span_ns} ns vs run {run_ns} ns");

    // Kernels are named after graph nodes, with shapes and bindings.
    let kernel_nodes: Vec<&str> = report["kernels"].as_array().unwrap().iter().map(|k| k["node"].as_str().unwrap()).collect();
    for e in &timed {
        assert!(kernel_nodes.contains(&e["name"].as_str().unwrap()), "{e}");
        assert_eq!(e["args"]["bindings"]["s77"], 2);
        assert!(e["args"]["shapes"].as_object().is_some_and(|s| !s.is_empty()), "{e}");
    }
    // The CPU side shows the pipeline before the repetitions as well as the launches in them.
    let cpu: std::collections::BTreeSet<&str> =
        doc["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "cpu").map(|e| e["name"].as_str().unwrap()).collect();
    for scope in ["import", "decompose", "lower", "codegen", "module build", "launch", "repetition"] {
        assert!(cpu.contains(scope), "no `{scope}` scope in {cpu:?}");
    }
    let view = puffin::FrameView::read(&mut puffin_bytes.as_slice()).expect("puffin reads the recording");
    assert!(view.all_uniq().count() >= 5, "a frame per repetition, and one for the setup");
}

#[test]
fn profile_refuses_unknown_devices() {
    let model = common::sample("mlp.pt2");
    let (code, _, err) = run(&["profile", model.to_str().unwrap(), "--device", "cuda"]);
    assert_eq!(code, 2);
    assert!(err.contains("cuda"), "{err}");
}

#[test]
fn profile_on_the_reference_interpreter_labels_host_time() {
    let model = common::sample("mlp.pt2");
    let trace = std::env::temp_dir().join(format!("xpu-profile-ref-{}.json", std::process::id()));
    let (code, stdout, err) =
        run(&["profile", model.to_str().unwrap(), "--device", "reference", "--repeat", "2", "--trace", trace.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("reference"), "{stdout}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    assert!(doc["traceEvents"].as_array().is_some_and(|e| !e.is_empty()));
    let _ = std::fs::remove_file(&trace);
}

#[test]
fn bench_models_against_a_python_that_cannot_run_fails_naming_it() {
    let (code, out, err) = run(&["bench", "models", "--only", "bert", "--device", "opencl", "--against-torch", "/nonexistent/python3"]);
    if err.contains("no Level Zero or OpenCL device") {
        common::skip_opencl::<()>(err);
        return;
    }
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("/nonexistent/python3"), "{err}");
    assert!(out.trim().is_empty(), "no timings are printed: {out}");
}
