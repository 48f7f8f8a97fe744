//! `check-lite LOG --python PATH`: calls the embedded tables have no trace of (`torch.as_tensor`)
//! are traced with the user's own torch at the log's example values, cached per torch version, and
//! then get a verdict. Calls that were once unknown too (`torch.tensor`, `Tensor.type_as`,
//! `F.batch_norm` in eval mode on CPU) are in the embedded tables now, traced from the corpus's logs.
//!
//! The logs are real CPU compiles of torch 2.15 (`scripts/gen_untraced_calls.py`). What torch
//! traced for them is committed (`tests/data/untraced_calls.traced-2.15.0.json`, the cache a real
//! run wrote), so the verdicts are checked without torch; with `XPU_WORKBENCH_TORCH_PYTHON` set to a
//! python with torch 2.15, the real trace runs and must write that same cache.

mod common;

use std::path::{Path, PathBuf};

use common::{ops_dir, run_cli_in, sample};

fn log(mode: &str) -> PathBuf {
    sample(&format!("lite/untraced_calls_cpu_{mode}_2.15.0.log.gz"))
}

fn recorded() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/untraced_calls.traced-2.15.0.json")
}

fn check_lite(ops: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["check-lite"];
    all.extend_from_slice(args);
    run_cli_in(ops, &all)
}

#[test]
fn without_a_trace_the_calls_are_named_unverified_and_python_is_suggested() {
    let ops = ops_dir("untraced-none");
    for mode in ["lite", "default"] {
        let (code, out, err) = check_lite(&ops, &[log(mode).to_str().unwrap()]);
        assert_eq!(code, if mode == "lite" { 3 } else { 1 }, "{mode}: {out}{err}");
        assert!(out.lines().any(|l| l.starts_with("unverified:") && l.contains("torch.as_tensor")), "{mode}: as_tensor not named:\n{out}");
        assert!(out.contains("--python PATH"), "{mode}: no hint:\n{out}");
        // Learnt from the corpus's logs: no longer unverified.
        for call in ["torch.tensor", "Tensor.type_as", "batch_norm"] {
            assert!(!out.lines().any(|l| l.starts_with("unverified:") && l.contains(call)), "{mode}: {call} unverified:\n{out}");
        }
    }
    // Default mode on CPU: Inductor's table decomposed `F.batch_norm`, named from the CPU trace.
    let (_, out, _) = check_lite(&ops, &[log("default").to_str().unwrap()]);
    assert!(out.contains("(torch.nn.functional.batch_norm) became") && out.contains("aten.native_batch_norm has a kernel here"), "{out}");
}

#[test]
fn torchs_recorded_traces_give_a_verdict_on_both_logs() {
    let ops = ops_dir("untraced-recorded");
    std::fs::create_dir_all(ops.join("traced")).unwrap();
    std::fs::copy(recorded(), ops.join("traced/torch-2.15.0.json")).unwrap();
    let (code, out, err) = check_lite(&ops, &[log("lite").to_str().unwrap()]);
    assert_eq!(code, 0, "lite keeps every call whole:\n{out}{err}");
    assert!(out.contains("(torch.as_tensor) is composite on every backend, expected to become lift_fresh_copy"), "{out}");
    let (code, out, err) = check_lite(&ops, &[log("default").to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let violations: Vec<String> =
        v["findings"].as_array().unwrap().iter().filter(|f| f["violation"] == true).map(|f| f["target"].as_str().unwrap().to_string()).collect();
    assert!(violations.iter().all(|t| t == "torch.nn.functional.batch_norm") && !violations.is_empty(), "{violations:?}");
    assert!(v["unverified"].as_array().unwrap().is_empty(), "{}", v["unverified"]);
}

#[test]
fn a_python_that_cannot_run_is_an_error_naming_it() {
    let ops = ops_dir("untraced-nopython");
    let (code, out, err) = check_lite(&ops, &[log("lite").to_str().unwrap(), "--python", "/nonexistent/python3"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("/nonexistent/python3") && err.contains("cannot run"), "{err}");
    // --python is for logs: an archive is predicted from the tables.
    let (code, _, err) = check_lite(&ops, &[sample("mlp.pt2").to_str().unwrap(), "--python", "python3"]);
    assert_eq!(code, 2, "{err}");
}

/// The real trace, where a python with torch 2.15 is named: it settles every call, and writes the
/// cache that is committed.
#[test]
fn the_users_torch_traces_and_caches_the_missing_calls() {
    let Some(python) = std::env::var_os("XPU_WORKBENCH_TORCH_PYTHON") else {
        eprintln!("skipped: set XPU_WORKBENCH_TORCH_PYTHON to a python with torch 2.15 to trace for real");
        return;
    };
    let python = python.to_string_lossy().into_owned();
    let ops = ops_dir("untraced-real");
    let (code, out, err) = check_lite(&ops, &[log("default").to_str().unwrap(), "--python", &python]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.starts_with("traced 1 call(s) with torch 2.15"), "{out}");
    let (code, out, err) = check_lite(&ops, &[log("lite").to_str().unwrap(), "--python", &python]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("traced nothing"), "the cache answers a second time:\n{out}");
    let written = std::fs::read_to_string(ops.join("traced/torch-2.15.0.json")).unwrap();
    let want = std::fs::read_to_string(recorded()).unwrap();
    let parse = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
    if std::env::var_os("XPU_WORKBENCH_BLESS").is_some() {
        std::fs::write(recorded(), &written).unwrap();
    }
    assert_eq!(parse(&written), parse(&want), "torch traced otherwise than recorded; XPU_WORKBENCH_BLESS=1 rewrites it");
}
