//! `check-lite FILE`: did lite mode decompose only what the user marked?
//!
//! - a TORCH_TRACE log: every op of each compile's dynamo graph is looked for in its AOT graph and
//!   each missing one classified ([`crate::decomp::lite_trace`]);
//! - a `.pt2` with `--backend cpu|cuda|xpu`: which unmarked nodes lite mode cannot keep on that
//!   backend, read off the kernel tables ([`crate::decomp::predict`]);
//! - a `.pt2` without: our lite decomposition (or the file's own decomposed graph) against the marks.
//!
//! Exit 0: checked, clean. 1: violations, each named. 3: something could not be checked (named),
//! and no violation was found in the rest. 2: bad input. A check never says "ok" about a graph it
//! did not compare.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;

use super::{fail, EXIT_FAILED, EXIT_UNVERIFIED, EXIT_USAGE};
use crate::decomp::lite_trace::{self, LogCheck};
use crate::decomp::predict::{self, NodeFate};
use crate::decomp::Marks;
use crate::import::{self, trace};
use crate::ir::{Format, Model};
use crate::ops::traced::{self, TracedCalls};
use crate::ops::{self, Backend};

pub struct Args<'a> {
    pub file: &'a Path,
    pub marks: &'a [String],
    pub backend: Option<&'a str>,
    pub torch: Option<&'a str>,
    /// A python with torch that traces the calls the tables lack (logs only).
    pub python: Option<&'a Path>,
    pub json: bool,
}

pub fn run(a: Args) -> ExitCode {
    let backend = match a.backend.map(|b| Backend::parse(b).ok_or(b)) {
        Some(Err(b)) => return fail(EXIT_USAGE, &format!("--backend {b}: expected cpu, cuda, xpu or mps")),
        Some(Ok(b)) => Some(b),
        None => None,
    };
    match import::detect(a.file) {
        Ok(Format::TorchTrace) if !a.marks.is_empty() || backend.is_some() => super::fail(
            EXIT_USAGE,
            &format!(
                "{}: a log records its marks (compile_with_inductor) and its backend (the tensors' devices); --mark and --backend apply to .pt2 files",
                a.file.display()
            ),
        ),
        Ok(Format::TorchTrace) => run_log(a.file, a.python, a.json),
        Ok(_) if a.python.is_some() => super::fail(
            EXIT_USAGE,
            &format!("{}: --python traces the calls of a TORCH_TRACE log; a .pt2 is predicted from the kernel tables", a.file.display()),
        ),
        Ok(Format::Pt2) => match super::load(a.file) {
            Ok(model) => match backend {
                Some(b) => run_predict(&model, b, a.marks, a.torch, a.json),
                None => super::decompose::check_lite_pt2(&model, a.marks),
            },
            Err(code) => code,
        },
        Ok(other) => super::fail(
            EXIT_USAGE,
            &format!("{}: check-lite reads .pt2 archives and TORCH_TRACE logs, not {} files", a.file.display(), other.name()),
        ),
        Err(e) => super::fail(EXIT_USAGE, &e),
    }
}

fn run_log(file: &Path, python: Option<&Path>, as_json: bool) -> ExitCode {
    let log = match trace::load_log(file) {
        Ok(l) => l,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    for w in &log.warnings {
        eprintln!("warning: {w}");
    }
    let (mut known, warning) = TracedCalls::user(lite_trace::log_torch(&log).as_deref());
    if let Some(w) = warning {
        eprintln!("warning: {w}");
    }
    let mut check = lite_trace::check_log_with(&log, &known);
    let mut traced_note = None;
    if let Some(py) = python {
        match trace_missing(&log, &check, py, &mut known) {
            Ok(note) => {
                check = lite_trace::check_log_with(&log, &known);
                traced_note = Some(note);
            }
            Err(e) => return fail(EXIT_USAGE, &e),
        }
    }
    lite_trace::explain_untraced(&log, &mut check, &known, python.is_some());
    let code = exit_code(check.violations().count(), check.unverified.len());
    if as_json {
        let mut out = log_json(&check, code);
        out["traced"] = json!(traced_note);
        super::print_json(&out);
        return ExitCode::from(code);
    }
    if let Some(note) = &traced_note {
        println!("{note}");
    }
    for f in check.violations() {
        println!("{}: {f}", f.compile_id);
    }
    let noted = |f: &&lite_trace::Finding| f.verdict.is_note() || (f.verdict == lite_trace::Verdict::Kept && f.marked);
    for f in check.findings.iter().filter(noted) {
        println!("note: {}: {f}", f.compile_id);
    }
    // Training: the backward graph's gradients, notes only (lite mode concerns the forward ops).
    for b in &check.backward {
        println!("note: backward: {}: {b}", b.compile_id);
    }
    for u in &check.unverified {
        println!("unverified: {u}");
    }
    println!("{}", check.summary());
    if let Some(hint) = check.untraced_hint().filter(|_| python.is_none()) {
        println!("hint: {hint}");
    }
    ExitCode::from(code)
}

/// Traces the calls `check` could not settle with `python`'s torch, adds them to `known` and to the
/// user's cache of that torch version; says what it did.
fn trace_missing(log: &trace::TraceLog, check: &LogCheck, python: &Path, known: &mut TracedCalls) -> Result<String, String> {
    let calls: Vec<traced::CallSpec> = lite_trace::untraced_calls(log, check).into_iter().filter_map(|(_, c)| c.ok()).collect();
    let s = traced::trace_and_cache(python, &calls, known).map_err(|e| e.to_string())?;
    Ok(describe_trace(&s, python, lite_trace::log_torch(log).as_deref()))
}

/// One line on a trace: how many calls, which torch, where they were cached.
pub(super) fn describe_trace(s: &traced::TraceSummary, python: &Path, log_torch: Option<&str>) -> String {
    if s.answered + s.failed == 0 {
        return format!("traced nothing with {}: no call is missing a trace it could give", python.display());
    }
    let release = |v: &str| {
        let (major, minor, _) = ops::backend::version_key(v);
        (major, minor)
    };
    let other = match log_torch {
        Some(v) if release(v) != release(&s.torch) => format!(" (the log is from torch {v}: these traces say what {} does)", s.torch),
        _ => String::new(),
    };
    let cached = match &s.cached {
        Ok(p) => format!("cached in {}", p.display()),
        Err(e) => format!("not cached: {e}"),
    };
    format!("traced {} call(s) with torch {} ({}): {} answered, {} failed{other}; {cached}", s.answered + s.failed, s.torch, python.display(), s.answered, s.failed)
}

fn exit_code(violations: usize, unverified: usize) -> u8 {
    if violations > 0 {
        EXIT_FAILED
    } else if unverified > 0 {
        EXIT_UNVERIFIED
    } else {
        0
    }
}

fn log_json(check: &LogCheck, code: u8) -> serde_json::Value {
    json!({
        "status": match code { 0 => "ok", EXIT_FAILED => "violations", _ => "unverified" },
        "log_torch": check.log_torch,
        "table_torch": check.table_torch,
        "compiles_compared": check.compared,
        "findings": check.findings.iter().map(|f| json!({
            "compile_id": f.compile_id,
            "graph": f.graph,
            "node": f.node,
            "target": f.target,
            "class": f.verdict.class(),
            "violation": f.verdict.is_violation(),
            "marked": f.marked,
            "backend": f.backend.map(|b| b.key()),
            "location": f.location.as_ref().map(|l| l.to_string()),
            "became": f.became,
            "detail": f.to_string(),
        })).collect::<Vec<_>>(),
        "unverified": check.unverified.iter().map(|u| json!({"compile_id": u.compile_id, "what": u.what, "reason": u.reason, "untraced": u.untraced.is_some()})).collect::<Vec<_>>(),
        "backward": check.backward.iter().map(|b| json!({
            "compile_id": b.compile_id, "graph": b.graph, "forward_op": b.forward_op, "op": b.op,
            "class": b.class(), "violation": false, "detail": b.to_string(),
        })).collect::<Vec<_>>(),
    })
}

fn run_predict(model: &Model, backend: Backend, mark_specs: &[String], torch: Option<&str>, as_json: bool) -> ExitCode {
    let Some(graph) = model.graphs.first() else {
        return fail(EXIT_USAGE, &format!("{}: the file holds no graph", model.source));
    };
    let marks = match Marks::parse(mark_specs).and_then(|m| m.check_against(graph).map(|()| m)) {
        Ok(m) => m,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let version = torch.or(model.torch_version.as_deref());
    let Some(table) = ops::table_for(version) else {
        return fail(EXIT_FAILED, &"no op table is embedded in this build");
    };
    let fates = predict::predict(graph, backend, table, &marks);
    let bad: Vec<&NodeFate> = fates.iter().filter(|f| f.is_violation()).collect();
    let unknown: Vec<&NodeFate> = fates.iter().filter(|f| matches!(f.fate, predict::Fate::Unknown { .. })).collect();
    let code = exit_code(bad.len(), unknown.len());
    let source = match (torch, model.torch_version.as_deref()) {
        (Some(t), _) => format!("--torch {t}"),
        (None, Some(v)) => format!("the archive's torch {v}"),
        (None, None) => "the archive names no torch version: newest table".to_string(),
    };
    if as_json {
        super::print_json(&json!({
            "status": match code { 0 => "ok", EXIT_FAILED => "violations", _ => "unverified" },
            "backend": backend.key(),
            "table_torch": table.torch,
            "nodes": fates.iter().map(|f| json!({
                "node": f.name, "target": f.target, "violation": f.is_violation(),
                "fate": format!("{:?}", f.fate).split([' ', '{', '(']).next().unwrap_or(""),
                "detail": f.describe(backend, &table.torch),
            })).collect::<Vec<_>>(),
        }));
        return ExitCode::from(code);
    }
    for f in &bad {
        println!("{}", f.describe(backend, &table.torch));
    }
    for f in fates.iter().filter(|f| matches!(f.fate, predict::Fate::Composite | predict::Fate::Marked | predict::Fate::CpuFallback { .. })) {
        println!("note: {}", f.describe(backend, &table.torch));
    }
    for f in &unknown {
        println!("unverified: {}", f.describe(backend, &table.torch));
    }
    let tables = format!("kernel table of torch {} ({source})", table.torch);
    match code {
        0 => println!("ok: lite mode keeps every unmarked node of {} on {backend}: {} node(s) checked, {tables}", model.source, fates.len()),
        EXIT_FAILED => println!("FAIL: {} unmarked node(s) of {} cannot be kept on {backend}; {tables}", bad.len(), model.source),
        _ => println!("UNVERIFIED: {} node(s) of {} have ops the table does not know; no violation in the rest; {tables}", unknown.len(), model.source),
    }
    ExitCode::from(code)
}
