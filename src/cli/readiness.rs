//! `readiness`: what a backend's ATen does with each op of a model (native, expanded, CPU
//! fallback, not implemented) in the model's torch version, and what that means in lite or
//! default mode; `--against-torch` shows what changed in another version. Parsing and printing
//! only: the statuses are `ops::readiness`.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;

use super::{fail, EXIT_FAILED, EXIT_USAGE};
use crate::ops::backend::{self, Backend};
use crate::ops::readiness::{changes, graphs_of, Mode, Report, Status};

pub struct Args<'a> {
    pub file: &'a Path,
    pub backend: &'a str,
    pub torch: Option<&'a str>,
    pub mode: &'a str,
    pub against: Option<&'a str>,
    pub json: bool,
}

pub fn run(a: Args) -> ExitCode {
    let Some(backend) = Backend::parse(a.backend).filter(|b| *b != Backend::Mps) else {
        return fail(EXIT_USAGE, &format!("--backend {}: expected xpu, cuda or cpu", a.backend));
    };
    let mode = match a.mode {
        "lite" => Mode::Lite,
        "default" | "full" => Mode::Default,
        m => return fail(EXIT_USAGE, &format!("--mode {m}: expected lite or default")),
    };
    for w in backend::table_warnings() {
        eprintln!("warning: {w}");
    }
    let model = match super::load(a.file) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let graphs = graphs_of(&model);
    if graphs.is_empty() {
        return fail(EXIT_USAGE, &format!("{}: the file holds no graph", model.source));
    }
    let version = a.torch.or(model.torch_version.as_deref());
    let Some(table) = backend::table_for(version) else {
        return fail(EXIT_FAILED, &"no op table is embedded in this build");
    };
    let report = Report::of_model(&model, table, backend);
    let against = a.against.and_then(|v| backend::table_for(Some(v))).map(|t| Report::of_model(&model, t, backend));
    let source = match (a.torch, model.torch_version.as_deref()) {
        (Some(t), _) => format!("--torch {t}"),
        (None, Some(v)) => format!("the file's torch {v}"),
        (None, None) => "the file names no torch version: newest table".to_string(),
    };
    let graph_names: Vec<&str> = graphs.iter().map(|g| g.name.as_str()).collect();
    if a.json {
        print_json(&report, against.as_ref(), mode, &source, &graph_names);
    } else {
        print_text(&report, against.as_ref(), mode, &source, &graph_names, &model.source);
    }
    ExitCode::from(report.exit_code())
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Lite => "lite",
        Mode::Default => "default",
    }
}

fn status_name(s: Option<Status>) -> &'static str {
    s.map(Status::key).unwrap_or("unknown")
}

fn print_text(r: &Report, against: Option<&Report>, mode: Mode, source: &str, graphs: &[&str], file: &str) {
    println!(
        "{file}: {} op(s) in {} on {} ({} mode); tables of torch {} ({source}){}",
        r.ops.len(),
        graphs.join(", "),
        r.backend,
        mode_name(mode),
        r.torch,
        r.fallback_source.as_ref().map(|s| format!("; CPU fallbacks from {s}")).unwrap_or_default()
    );
    for status in Status::ALL {
        for e in r.with(status) {
            let Ok(s) = &e.status else { continue };
            let nodes = e.nodes.iter().take(6).cloned().collect::<Vec<_>>().join(", ");
            let more = if e.nodes.len() > 6 { format!(", … {} more", e.nodes.len() - 6) } else { String::new() };
            println!("  {:<15} {:<40} ×{:<3} {}", status.key(), e.target, e.nodes.len(), s.meaning(mode, r.backend));
            println!("  {:15} nodes: {nodes}{more}", "");
            if e.from_dynamo {
                println!("  {:15} (called in the dynamo graph, gone from the AOT graph: the log's device expanded it, or Inductor's table decomposed it)", "");
            }
        }
    }
    for e in r.unknown() {
        let why = e.status.as_ref().err().map(String::as_str).unwrap_or("");
        println!("  {:<15} {:<40} ×{:<3} {why}", "unknown", e.target, e.nodes.len());
    }
    let counts: Vec<String> = Status::ALL
        .iter()
        .map(|s| format!("{} {}", r.with(*s).count(), s.key()))
        .chain(std::iter::once(format!("{} unknown", r.unknown().count())))
        .collect();
    println!("{}: {}", match r.exit_code() { 0 => "ready", 1 => "NOT READY", _ => "UNVERIFIED" }, counts.join(", "));
    if let Some(b) = against {
        let c = changes(r, b);
        println!("against torch {} ({} op(s) changed):", b.torch, c.len());
        for ch in c {
            println!("  {:<40} ×{:<3} {} in {} → {} in {}", ch.target, ch.nodes, status_name(ch.before), r.torch, status_name(ch.after), b.torch);
        }
    }
}

fn print_json(r: &Report, against: Option<&Report>, mode: Mode, source: &str, graphs: &[&str]) {
    let ops: Vec<_> = r
        .ops
        .iter()
        .map(|e| match &e.status {
            Ok(s) => json!({
                "target": e.target, "key": s.key, "status": s.status.key(), "nodes": e.nodes, "count": e.nodes.len(),
                "into": s.into, "kernels": s.elsewhere, "inductor_decomposes": s.inductor, "meaning": s.meaning(mode, r.backend),
                "from": if e.from_dynamo { "dynamo" } else { "graph" },
            }),
            Err(why) => json!({"target": e.target, "status": "unknown", "nodes": e.nodes, "count": e.nodes.len(), "reason": why}),
        })
        .collect();
    let mut counts = serde_json::Map::new();
    for s in Status::ALL {
        counts.insert(s.key().into(), json!(r.with(s).count()));
    }
    counts.insert("unknown".into(), json!(r.unknown().count()));
    let mut doc = json!({
        "backend": r.backend.key(), "mode": mode_name(mode), "torch": r.torch, "torch_source": source,
        "table": r.table_origin, "cpu_fallback_source": r.fallback_source, "graphs": graphs,
        "exit": r.exit_code(), "counts": counts, "ops": ops,
    });
    if let Some(b) = against {
        doc["against"] = json!({
            "torch": b.torch,
            "cpu_fallback_source": b.fallback_source,
            "changes": changes(r, b).iter().map(|c| json!({
                "target": c.target, "before": status_name(c.before), "after": status_name(c.after), "nodes": c.nodes,
            })).collect::<Vec<_>>(),
        });
    }
    super::print_json(&doc);
}
