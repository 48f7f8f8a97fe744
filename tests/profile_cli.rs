//! The profiling commands as users call them.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xpu-workbench")).args(args).output().expect("run binary");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

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
