//! `trace-calls LOG... --python PATH`: the calls of many logs that no table has a trace of, traced
//! in one run of the user's torch and cached (what `check-lite --python` does for one log), then
//! every log checked again. Run over a corpus's logs, the cache is what
//! `scripts/merge_traced_calls.py` folds into the embedded tables.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use super::{fail, EXIT_UNVERIFIED, EXIT_USAGE};
use crate::decomp::lite_trace;
use crate::import::trace;
use crate::ops::traced::{self, TracedCalls};

pub fn run(logs: &[PathBuf], python: &Path, as_json: bool) -> ExitCode {
    let mut loaded = Vec::new();
    for f in logs {
        match trace::load_log(f) {
            Ok(l) => loaded.push(l),
            Err(e) => return fail(EXIT_USAGE, &e),
        }
    }
    // One cache for every log: the traces are the user's torch's, whatever versions the logs name.
    let (mut known, warning) = TracedCalls::user(python_release(python).as_deref());
    if let Some(w) = warning {
        eprintln!("warning: {w}");
    }
    let mut before = Vec::new();
    let mut calls: Vec<traced::CallSpec> = Vec::new();
    for l in &loaded {
        let check = lite_trace::check_log_with(l, &known);
        before.push(check.unverified.len());
        calls.extend(lite_trace::untraced_calls(l, &check).into_iter().filter_map(|(_, c)| c.ok()));
    }
    let summary = match traced::trace_and_cache(python, &calls, &mut known) {
        Ok(s) => s,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let mut rows = Vec::new();
    for (l, before) in loaded.iter().zip(before) {
        let check = lite_trace::check_log_with(l, &known);
        let status = if check.violations().count() > 0 { "violations" } else if check.unverified.is_empty() { "ok" } else { "unverified" };
        rows.push(json!({
            "log": l.file, "status": status, "unverified_before": before, "unverified": check.unverified.len(),
            "still": check.unverified.iter().map(|u| u.to_string()).collect::<Vec<_>>(),
        }));
    }
    let left = rows.iter().filter(|r| r["status"] == "unverified").count();
    let line = super::check_lite::describe_trace(&summary, python, None);
    if as_json {
        super::print_json(&json!({ "traced": line, "logs": rows }));
    } else {
        println!("{line}");
        for r in &rows {
            println!("{}: {} (unverified {} -> {})", r["log"].as_str().unwrap_or(""), r["status"].as_str().unwrap_or(""), r["unverified_before"], r["unverified"]);
            for s in r["still"].as_array().into_iter().flatten() {
                println!("  unverified: {}", s.as_str().unwrap_or(""));
            }
        }
        println!("{} log(s): {} with a verdict, {left} still unverified", rows.len(), rows.len() - left);
    }
    ExitCode::from(if left > 0 { EXIT_UNVERIFIED } else { 0 })
}

/// The torch release `python` imports, for the cache to start from; `None` when it cannot be asked
/// (the trace itself then says why).
fn python_release(python: &Path) -> Option<String> {
    traced::python_torch(python).ok()
}
