//! `devices` as users call it: every backend listed, Level Zero with the loader's own reason when
//! there is no XPU, OpenCL available where the CPU runtime is installed (required in CI through
//! `XPU_WORKBENCH_REQUIRE_OPENCL`, as in `tests/opencl_runtime.rs`).

mod common;

use std::process::Command;

use level_zero_sys::{LoadError, Loader};

use common::opencl_required as required;

fn devices(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_xpu-workbench")).arg("devices").args(args).output().expect("run binary");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn row<'a>(rows: &'a [serde_json::Value], backend: &str) -> &'a serde_json::Value {
    rows.iter().find(|r| r["backend"] == backend).unwrap_or_else(|| panic!("no {backend} row in {rows:?}"))
}

#[test]
fn devices_json_lists_every_backend_with_a_reason_when_unavailable() {
    let rows: Vec<serde_json::Value> = serde_json::from_str(&devices(&["--json"])).expect("JSON array");
    let backends: Vec<&str> = rows.iter().map(|r| r["backend"].as_str().unwrap()).collect();
    assert_eq!(backends, ["level_zero", "opencl", "reference"], "every backend, in preference order");
    for r in &rows {
        assert!(r["name"].is_string() && r["available"].is_boolean(), "{r}");
        match r["available"].as_bool().unwrap() {
            true => assert!(r["reason"].is_null() && r["compute_units"].is_u64() && r["timer_resolution_ns"].is_f64(), "{r}"),
            false => assert!(r["reason"].as_str().is_some_and(|s| !s.trim().is_empty()), "{r}"),
        }
    }

    let l0 = row(&rows, "level_zero");
    if l0["available"] == false {
        let reason = l0["reason"].as_str().unwrap();
        match Loader::open() {
            // The loader is installed (as on CI: libze1 without a GPU driver): zeInit's answer.
            Ok(_) => assert!(reason.starts_with("zeInit failed with 0x"), "{reason}"),
            Err(LoadError::Library { .. }) => assert!(reason.contains("libze_loader"), "{reason}"),
            Err(LoadError::Symbol { symbol, .. }) => assert!(reason.contains(symbol), "{reason}"),
        }
    }

    let cl = row(&rows, "opencl");
    if cl["available"] == true {
        assert!(cl["name"].as_str().is_some_and(|n| !n.is_empty()));
    } else if required() {
        panic!("XPU_WORKBENCH_REQUIRE_OPENCL is set but OpenCL is unavailable: {}", cl["reason"]);
    } else {
        eprintln!("skipping the OpenCL half: {} (source scripts/env.sh)", cl["reason"]);
    }
    assert_eq!(row(&rows, "reference")["available"], true);
}

#[test]
fn devices_table_marks_the_picked_backend() {
    let text = devices(&[]);
    let picked: Vec<&str> = text.lines().filter(|l| l.starts_with('*') && !l.starts_with("* =")).collect();
    assert_eq!(picked.len(), 1, "{text}");
    for backend in ["level_zero", "opencl", "reference"] {
        assert!(text.contains(backend), "{text}");
    }
}
