use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value as Json};

use crate::ir::{Arg, Graph, Model, ValueId, ValueKind};

pub fn run(file: &Path, as_json: bool) -> ExitCode {
    let model = match super::load(file) {
        Ok(m) => m,
        Err(code) => return code,
    };
    for w in &model.warnings {
        eprintln!("warning: {w}");
    }
    if as_json {
        super::print_json(&to_json(&model));
    } else {
        print!("{}", summary(&model));
    }
    ExitCode::SUCCESS
}

/// The `inspect --json` document (the contract other tools rely on).
pub fn to_json(model: &Model) -> Json {
    let graphs: Vec<Json> = model
        .graphs
        .iter()
        .map(|g| {
            json!({
                "name": g.name,
                "nodes": g.nodes.len(),
                "ops": g.op_histogram(),
                "inputs": g.inputs.iter().map(|(v, kind)| {
                    let mut j = value_json(g, *v);
                    j["kind"] = json!(kind.name());
                    j
                }).collect::<Vec<_>>(),
                "outputs": g.outputs.iter().map(|a| output_json(g, a)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "format": model.format.name(),
        "graphs": graphs,
        "symbols": model.symbols.iter().map(|s| json!({
            "name": s.name,
            "min": s.range.min,
            "max": s.range.max,
            "hint": s.hint,
        })).collect::<Vec<_>>(),
        "guards": model.guards.iter().map(|g| json!({"expr": g.expr.to_string(), "source": g.source})).collect::<Vec<_>>(),
    })
}

fn value_json(g: &Graph, v: ValueId) -> Json {
    let value = g.value(v);
    match &value.kind {
        ValueKind::Tensor(t) => json!({
            "name": value.name,
            "dtype": t.dtype.name(),
            "shape": t.sizes.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        }),
        ValueKind::SymInt(e) => json!({"name": value.name, "dtype": "sym_int", "shape": [], "expr": e.to_string()}),
        ValueKind::SymBool(e) => json!({"name": value.name, "dtype": "sym_bool", "shape": [], "expr": e.to_string()}),
        ValueKind::SymFloat(e) => json!({"name": value.name, "dtype": "sym_float", "shape": [], "expr": e.to_string()}),
        ValueKind::Other(what) => json!({"name": value.name, "dtype": what, "shape": []}),
    }
}

fn output_json(g: &Graph, a: &Arg) -> Json {
    match a.values().as_slice() {
        [v] => value_json(g, *v),
        _ => json!({"name": format!("{a:?}"), "dtype": "constant", "shape": []}),
    }
}

/// The readable summary: one block per graph, then symbols and guards.
pub fn summary(model: &Model) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} ({})", model.source, model.format.name());
    for g in &model.graphs {
        let _ = writeln!(s, "\ngraph `{}`: {} nodes, {} values", g.name, g.nodes.len(), g.values.len());
        let _ = writeln!(s, "  inputs:");
        for (v, kind) in &g.inputs {
            let _ = writeln!(s, "    {:<28} {:<14} {}", g.value(*v).name, kind.name(), describe(g, *v));
        }
        let _ = writeln!(s, "  outputs:");
        for a in &g.outputs {
            for v in a.values() {
                let _ = writeln!(s, "    {:<28} {}", g.value(v).name, describe(g, v));
            }
        }
        let _ = writeln!(s, "  ops:");
        for (op, n) in g.op_histogram() {
            let _ = writeln!(s, "    {n:>5}  {op}");
        }
    }
    if !model.symbols.is_empty() {
        let _ = writeln!(s, "\nsymbols:");
        for sym in &model.symbols {
            let hint = sym.hint.map(|h| format!(" (hint {h})")).unwrap_or_default();
            let _ = writeln!(s, "  {} ∈ {}{}", sym.name, sym.range, hint);
        }
    }
    if !model.guards.is_empty() {
        let _ = writeln!(s, "\nguards:");
        for g in &model.guards {
            let _ = writeln!(s, "  {}", g.expr);
        }
    }
    s
}

fn describe(g: &Graph, v: ValueId) -> String {
    match &g.value(v).kind {
        ValueKind::Tensor(t) => {
            let dims: Vec<String> = t.sizes.iter().map(|e| e.to_string()).collect();
            format!("{}[{}]", t.dtype.short_name(), dims.join(", "))
        }
        ValueKind::SymInt(e) => format!("sym_int {e}"),
        ValueKind::SymBool(e) => format!("sym_bool {e}"),
        ValueKind::SymFloat(e) => format!("sym_float {e}"),
        ValueKind::Other(what) => what.clone(),
    }
}
