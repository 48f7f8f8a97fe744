//! `readiness` as users call it, on real exports and logs: what XPU's ATen does with each op in the
//! file's torch version — native, expanded (composite), sent to the CPU (torch-xpu-ops' fallback
//! list), not implemented — and what changed in another version.
//! samples/xpu/ is made by scripts/gen_xpu_readiness_samples.py (torch 2.15, CPU); samples/lite/ by
//! scripts/gen_lite_cases.py.

mod common;

use std::path::{Path, PathBuf};

use common::{ops_dir, run_cli_in, sample};
use serde_json::Value;

/// An empty ops folder shared by the tests that read only the embedded tables (never cleared: tests
/// run in parallel).
fn no_user_tables() -> PathBuf {
    let d = std::env::temp_dir().join(format!("xpuwb-readiness-embedded-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> (i32, String, String) {
    run_cli_in(&no_user_tables(), args)
}

fn readiness_in(ops: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["readiness"];
    all.extend_from_slice(args);
    all.push("--json");
    let (code, out, err) = run_cli_in(ops, &all);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, v)
}

fn readiness(args: &[&str]) -> (i32, Value) {
    readiness_in(&no_user_tables(), args)
}

fn op<'a>(v: &'a Value, target: &str) -> &'a Value {
    v["ops"].as_array().unwrap().iter().find(|o| o["target"] == target).unwrap_or_else(|| panic!("{target} not in {v}"))
}

fn path(name: &str) -> String {
    sample(name).display().to_string()
}

/// The brief's case: an op in its torch version's CPU-fallback list, reported as such from the .pt2
/// and from the log of the same function.
#[test]
fn cpu_fallback_ops_from_the_export_and_from_the_log() {
    for file in ["xpu/fallback_ops.pt2", "xpu/fallback_ops_lite_2.15.0.log.gz"] {
        let (code, v) = readiness(&[&path(file)]);
        assert_eq!(code, 1, "{file}: {v}");
        assert_eq!(v["torch"], "2.15.0", "{file}");
        assert!(v["cpu_fallback_source"].as_str().unwrap().contains("torch-xpu-ops main"), "{file}");
        for target in ["aten.cholesky_inverse.default", "aten.linalg_matrix_exp.default"] {
            let o = op(&v, target);
            assert_eq!(o["status"], "cpu_fallback", "{file} {target}");
            assert_eq!(o["count"], 1);
            assert!(o["meaning"].as_str().unwrap().contains("falls back to the CPU"), "{o}");
        }
        assert_eq!(op(&v, "aten.dot.default")["status"], "native", "{file}");
        assert_eq!(op(&v, "aten.add.Tensor")["status"], "native", "{file}");
        let lu = op(&v, "aten.linalg_lu.default");
        assert_eq!(lu["status"], "not_implemented", "{file}");
        assert!(lu["meaning"].as_str().unwrap().contains("linalg_lu.out"), "{lu}");
        assert_eq!(v["counts"]["cpu_fallback"], 2, "{file}");
    }
    let (_, v) = readiness(&[&path("xpu/fallback_ops.pt2")]);
    assert_eq!(op(&v, "torchvision.nms.default")["status"], "native");
    assert_eq!(op(&v, "aten.rms_norm.default")["status"], "composite");
    // The CPU log's AOT graph holds F.rms_norm's expansion (CPU has no _fused_rms_norm kernel); the
    // dynamo graph's call says what XPU gets: the op, native there in 2.15.
    let (_, log) = readiness(&[&path("xpu/fallback_ops_lite_2.15.0.log.gz")]);
    assert!(log["graphs"][0].as_str().unwrap().ends_with(":aot_inference_graph"), "{}", log["graphs"]);
    let rms = op(&log, "aten._fused_rms_norm.default");
    assert_eq!((rms["status"].as_str(), rms["from"].as_str()), (Some("native"), Some("dynamo")), "{rms}");
}

/// `dot` was in the list up to release/2.10 and has had an XPU kernel since 2.11.
#[test]
fn dot_across_versions_and_modes() {
    let f = path("xpu/fallback_ops.pt2");
    let (_, v) = readiness(&[&f, "--torch", "2.10"]);
    assert_eq!(op(&v, "aten.dot.default")["status"], "cpu_fallback");
    assert!(v["cpu_fallback_source"].as_str().unwrap().contains("release/2.10"));
    let (_, v) = readiness(&[&f, "--torch", "2.10", "--mode", "default"]);
    assert!(op(&v, "aten.dot.default")["meaning"].as_str().unwrap().contains("Inductor's default table"));
    let (_, v) = readiness(&[&f, "--against-torch", "2.10"]);
    let changes = v["against"]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["target"], "aten.dot.default");
    assert_eq!((changes[0]["before"].as_str(), changes[0]["after"].as_str()), (Some("native"), Some("cpu_fallback")));
    // CUDA has no CPU-fallback list and a kernel for everything here but the linalg ops' CPU-less ones.
    let (_, v) = readiness(&[&f, "--backend", "cuda"]);
    assert_eq!(op(&v, "aten.cholesky_inverse.default")["status"], "native");
    assert_eq!(v["cpu_fallback_source"], Value::Null);
}

/// The seed case: `_fused_rms_norm` expanded on XPU in 2.11, native from 2.12, from the export and
/// from a log (CUDA 2.11, whose AOT graph kept the op).
#[test]
fn fused_rms_norm_expanded_in_2_11_native_from_2_12() {
    for file in ["lite/fused_rms_norm.pt2", "lite/rms_cuda_lite_2.11.0.log.gz"] {
        let (code, v) = readiness(&[&path(file), "--against-torch", "2.12"]);
        assert_eq!(code, 1, "{file}");
        let o = op(&v, "aten._fused_rms_norm.default");
        assert_eq!(o["status"], "composite", "{file}");
        assert!(o["into"].as_array().unwrap().iter().any(|x| x == "rsqrt"), "{o}");
        let c = &v["against"]["changes"][0];
        assert_eq!((c["target"].as_str(), c["before"].as_str(), c["after"].as_str()), (Some("aten._fused_rms_norm.default"), Some("composite"), Some("native")));
        let (code, v) = readiness(&[&path(file), "--torch", "2.12"]);
        assert_eq!(code, 0, "{file}: {v}");
    }
    // A CPU log's AOT graph holds the expansion (CPU has no kernel); the op is read from the
    // dynamo graph, which called it.
    let (_, v) = readiness(&[&path("lite/rms_cpu_lite_2.11.0.log.gz"), "--against-torch", "2.12"]);
    let o = op(&v, "aten._fused_rms_norm.default");
    assert_eq!((o["status"].as_str(), o["from"].as_str()), (Some("composite"), Some("dynamo")), "{o}");
    assert_eq!(v["against"]["changes"][0]["after"], "native", "{v}");
    let (_, v) = readiness(&[&path("lite/rms_cpu_lite_2.11.0.log.gz"), "--backend", "cpu"]);
    assert_eq!(op(&v, "aten._fused_rms_norm.default")["status"], "composite");
    let (code, out, _) = run(&["readiness", &path("lite/fused_rms_norm.pt2"), "--against-torch", "2.12"]);
    assert_eq!(code, 1);
    assert!(out.contains("composite in 2.11.0 → native in 2.12.1"), "{out}");
}

#[test]
fn bad_flags_are_usage_errors() {
    let f = path("xpu/fallback_ops.pt2");
    assert_eq!(run(&["readiness", &f, "--backend", "tpu"]).0, 2);
    assert_eq!(run(&["readiness", &f, "--mode", "max-autotune"]).0, 2);
    assert_eq!(run(&["readiness", &path("no_such_file.pt2")]).0, 2);
}

/// A table refreshed from an XPU build's dispatcher carries its own CPU-fallback list, which wins
/// over the embedded one (made by hand here: no XPU build on the machines these tests run on).
#[test]
fn a_refreshed_xpu_table_overrides_the_embedded_lists() {
    let ops = ops_dir("readiness-xpu-dispatcher");
    let table = serde_json::json!({
        "torch": "2.15.0",
        "sources": {"kernels": "dispatcher of this torch build for CPU, XPU", "xpu_cpu_fallback": ["dot"]},
        "ops": {
            "dot": {"kernels": ["CPU", "CUDA", "XPU"]},
            "cholesky_inverse": {"kernels": ["CPU", "CUDA", "XPU"]},
            "linalg_matrix_exp": {"kernels": ["CPU", "CUDA", "XPU"]},
            "linalg_lu": {"kernels": ["CPU", "CUDA", "XPU"]},
            "add.Tensor": {"kernels": ["CPU", "CUDA", "XPU"]},
            "relu": {"kernels": ["CPU", "CUDA", "XPU"]},
            "rms_norm": {"composite": true}
        }
    });
    std::fs::write(ops.join("torch-2.15.0-dispatcher.json"), table.to_string()).unwrap();
    let (code, v) = readiness_in(&ops, &[&path("xpu/fallback_ops.pt2")]);
    assert_eq!(code, 1);
    assert!(v["cpu_fallback_source"].as_str().unwrap().contains("dispatcher of your torch build"), "{v}");
    assert_eq!(op(&v, "aten.dot.default")["status"], "cpu_fallback");
    assert_eq!(op(&v, "aten.cholesky_inverse.default")["status"], "native");
    assert_eq!(op(&v, "aten.linalg_lu.default")["status"], "native");
}

/// `backends --refresh` with a real torch (set XPU_WORKBENCH_TORCH_PYTHON): a CPU/CUDA build has no
/// XPU registrations, so its table keeps the embedded CPU-fallback lists.
#[test]
fn refresh_from_a_real_torch_keeps_readiness_working() {
    let Some(python) = std::env::var_os("XPU_WORKBENCH_TORCH_PYTHON") else {
        eprintln!("skipped: set XPU_WORKBENCH_TORCH_PYTHON to a python with torch to refresh for real");
        return;
    };
    let ops = ops_dir("readiness-refresh");
    let (code, out, err) = run_cli_in(&ops, &["backends", "--refresh", "--python", python.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let (_, v) = readiness_in(&ops, &[&path("xpu/fallback_ops.pt2")]);
    assert!(v["table"].as_str().unwrap().ends_with("-dispatcher.json"), "{}", v["table"]);
    assert_eq!(v["counts"]["cpu_fallback"], 2, "{v}");
}

/// check-lite's per-backend prediction and `readiness` read the same CPU-fallback list: an op XPU
/// sends to the CPU is kept whole there (a note naming the list), not "cannot run there"; an op
/// with neither a kernel nor a fallback entry still is a violation.
#[test]
fn check_lite_on_xpu_agrees_with_readiness_on_cpu_fallbacks() {
    let f = path("xpu/fallback_ops.pt2");
    let (code, out, err) = run(&["check-lite", &f, "--backend", "xpu", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let node = |target: &str| -> Value {
        v["nodes"].as_array().unwrap().iter().find(|n| n["target"] == target).cloned().unwrap_or_else(|| panic!("{target} in {v}"))
    };
    for target in ["aten.cholesky_inverse.default", "aten.linalg_matrix_exp.default"] {
        let n = node(target);
        assert_eq!((n["fate"].as_str(), n["violation"].as_bool()), (Some("CpuFallback"), Some(false)), "{n}");
        assert!(n["detail"].as_str().unwrap().contains("torch-xpu-ops main"), "{n}");
    }
    let lu = node("aten.linalg_lu.default");
    assert_eq!((lu["fate"].as_str(), lu["violation"].as_bool()), (Some("NoKernelNoComposite"), Some(true)), "{lu}");
    assert_eq!(code, 1, "linalg_lu cannot run on XPU: {out}");
    // Before torch-xpu-ops gave `dot` a kernel (2.11) it was a fallback too.
    let (_, text, _) = run(&["check-lite", &f, "--backend", "xpu", "--torch", "2.10"]);
    assert!(text.lines().any(|l| l.starts_with("note: node `dot`") && l.contains("release/2.10")), "{text}");
}
