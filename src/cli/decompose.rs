//! `decompose` and `check-lite` on torch.export archives.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;

use super::{fail, EXIT_FAILED, EXIT_USAGE};
use crate::decomp::{self, check_decomposed, check_lite, Decomposition, Marks, Mode};
use crate::ir::{Graph, Model};

fn marks_for(graph: &Graph, specs: &[String]) -> Result<Marks, ExitCode> {
    let marks = Marks::parse(specs).map_err(|e| fail(EXIT_USAGE, &e))?;
    marks.check_against(graph).map_err(|e| fail(EXIT_USAGE, &e))?;
    Ok(marks)
}

fn first_graph(model: &Model) -> Result<&Graph, ExitCode> {
    model.graphs.first().ok_or_else(|| fail(EXIT_USAGE, &format!("{}: the file holds no graph", model.source)))
}

/// The `decompose --json` document.
pub fn to_json(graph: &Graph, d: &Decomposition) -> serde_json::Value {
    json!({
        "mode": d.mode.name(),
        "graph": graph.name,
        "nodes": d.graph.nodes.len(),
        "ops": d.graph.op_histogram(),
        "decomposed": d.decomposed.iter().map(|x| {
            let n = graph.node(x.node);
            json!({"node": n.name, "op": n.target, "into": x.into})
        }).collect::<Vec<_>>(),
        "kept": d.kept.len(),
        "no_rule": d.no_rule.iter().map(|id| {
            let n = graph.node(*id);
            json!({"node": n.name, "op": n.target})
        }).collect::<Vec<_>>(),
    })
}

/// `against_torch`: the Python to compare with (`--against-torch [--python PATH]`).
pub fn run(file: &Path, mode: &str, mark_specs: &[String], as_json: bool, against_torch: Option<&str>) -> ExitCode {
    let Some(mode) = Mode::parse(mode) else {
        return fail(EXIT_USAGE, &format!("--mode {mode}: expected none, core, lite or full"));
    };
    let model = match super::load(file) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let graph = match first_graph(&model) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let marks = match marks_for(graph, mark_specs) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let d = match decomp::decompose(graph, mode, &marks) {
        Ok(d) => d,
        Err(e) => return fail(EXIT_FAILED, &format!("{}: {e}", model.source)),
    };
    for id in &d.no_rule {
        let n = graph.node(*id);
        eprintln!("warning: node `{}` ({}): no decomposition rule; kept whole", n.name, n.target);
    }
    if let Some(python) = against_torch {
        return super::against_torch::compare(file, graph, &d, python);
    }
    if as_json {
        super::print_json(&to_json(graph, &d));
    } else {
        println!("{} mode {}: {} → {} nodes, {} kept whole", model.source, mode.name(), graph.nodes.len(), d.graph.nodes.len(), d.kept.len());
        for x in &d.decomposed {
            let n = graph.node(x.node);
            let into: Vec<String> = x.into.iter().map(|(op, c)| format!("{op}×{c}")).collect();
            println!("  {:<24} {:<40} → {}", n.name, n.target, into.join(", "));
        }
    }
    ExitCode::SUCCESS
}

/// Exit 0 when lite mode decomposes no unmarked node (and keeps symbolic-size ops), else 1.
/// A graph that is already decomposed (its nodes record `from_node`) is checked as it is.
pub fn check_lite_pt2(model: &Model, mark_specs: &[String]) -> ExitCode {
    let graph = match first_graph(model) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let marks = match marks_for(graph, mark_specs) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let already = graph.nodes.iter().any(|n| n.meta.from_node.last().is_some_and(|o| o.target != n.target));
    let violations = if already {
        check_decomposed(graph, &marks)
    } else {
        match decomp::decompose(graph, Mode::Lite, &marks) {
            Ok(d) => check_lite(graph, &d, &marks),
            Err(e) => return fail(EXIT_FAILED, &format!("{}: {e}", model.source)),
        }
    };
    let what = if already { "the decomposed graph in the file" } else { "lite mode" };
    if violations.is_empty() {
        println!("ok: {what} decomposed no unmarked node ({})", model.source);
        return ExitCode::SUCCESS;
    }
    println!("{} violation(s) in {what} ({}):", violations.len(), model.source);
    for v in &violations {
        println!("  {v}");
    }
    ExitCode::from(EXIT_FAILED)
}
