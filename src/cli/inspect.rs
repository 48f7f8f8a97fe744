use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value as Json};

use crate::import::{self, trace::TraceLog};
use crate::ir::{Arg, Format, Graph, Model, ValueId, ValueKind};

pub fn run(file: &Path, as_json: bool) -> ExitCode {
    // A TORCH_TRACE log has more to show than its graphs: one section per compile id.
    let (model, log) = if matches!(import::detect(file), Ok(Format::TorchTrace)) {
        match import::trace::load_log(file) {
            Ok(log) => (log.clone().into_model(), Some(log)),
            Err(e) => return super::fail(super::EXIT_USAGE, &e),
        }
    } else {
        match super::load(file) {
            Ok(m) => (m, None),
            Err(code) => return code,
        }
    };
    for w in &model.warnings {
        eprintln!("warning: {w}");
    }
    if as_json {
        let mut doc = to_json(&model);
        if let Some(log) = &log {
            doc["compile_ids"] = compile_ids_json(log);
        }
        super::print_json(&doc);
    } else {
        print!("{}", summary(&model));
        if let Some(log) = &log {
            print!("{}", compile_ids_summary(log));
        }
    }
    ExitCode::SUCCESS
}

/// One entry per compile id of a TORCH_TRACE log: its stage graphs, symbols, guards,
/// specializations, metrics and whether Inductor's output code is in the log.
pub fn compile_ids_json(log: &TraceLog) -> Json {
    let compiles: Vec<Json> = log
        .compiles
        .iter()
        .map(|c| {
            json!({
                "id": c.id.to_string(),
                "stages": c.graphs.iter().map(|(stage, g)| json!({"stage": stage.name(), "graph": g.name, "nodes": g.nodes.len()})).collect::<Vec<_>>(),
                "symbols": c.symbols.iter().map(|s| json!({"name": s.name, "min": s.range.min, "max": s.range.max, "hint": s.hint})).collect::<Vec<_>>(),
                "float_symbols": c.float_symbols.iter().map(|(n, v)| json!({"name": n, "value": v})).collect::<Vec<_>>(),
                "guards": c.guards.iter().map(|g| json!({"expr": g.expr.to_string(), "source": g.source})).collect::<Vec<_>>(),
                "specializations": c.specializations.iter().map(|s| json!({"symbol": s.symbol, "value": s.value, "reason": s.reason, "sources": s.sources})).collect::<Vec<_>>(),
                "metrics": c.metrics.as_ref().map(|m| json!({
                    "co_name": m.co_name, "co_filename": m.co_filename, "co_firstlineno": m.co_firstlineno,
                    "guard_count": m.guard_count, "shape_env_guard_count": m.shape_env_guard_count,
                    "graph_op_count": m.graph_op_count, "graph_node_count": m.graph_node_count,
                    "entire_frame_compile_time_s": m.entire_frame_compile_time_s,
                    "fail_type": m.fail_type, "fail_reason": m.fail_reason, "restart_reasons": m.restart_reasons,
                })),
                "output_code": c.output_code.iter().map(|o| json!({"filename": o.filename, "bytes": o.code.len()})).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!(compiles)
}

fn compile_ids_summary(log: &TraceLog) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "
compile ids:");
    for c in &log.compiles {
        let stages: Vec<&str> = c.graphs.iter().map(|(st, _)| st.name()).collect();
        let _ = writeln!(s, "  {}: {}", c.id, stages.join(", "));
        for sym in &c.symbols {
            let _ = writeln!(s, "    symbol {} ∈ {}{}", sym.name, sym.range, sym.hint.map(|h| format!(" (hint {h})")).unwrap_or_default());
        }
        for g in &c.guards {
            let _ = writeln!(s, "    guard {}", g.expr);
        }
        for sp in &c.specializations {
            let _ = writeln!(s, "    specialized {} = {} ({})", sp.symbol, sp.value, sp.reason);
        }
        if let Some(r) = c.metrics.as_ref().filter(|m| !m.restart_reasons.is_empty()) {
            let _ = writeln!(s, "    restarted: {}", r.restart_reasons.join("; "));
        }
    }
    s
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
                "missing_interpreter": crate::coverage::missing_in_interpreter(g),
                "missing_kernels": crate::coverage::missing_in_kernels(g),
                "host_fallbacks": crate::coverage::host_fallbacks(g),
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
        let writes: Vec<String> = g
            .nodes
            .iter()
            .filter_map(|n| crate::decomp::functionalize::describe_write(g, n).map(|w| format!("    {}: {w}", n.name)))
            .collect();
        if !writes.is_empty() {
            let _ = writeln!(s, "  in-place writes (functionalized before running):");
            for w in writes {
                let _ = writeln!(s, "{w}");
            }
        }
        // What will not run, said before anything runs.
        for (what, missing) in [
            ("no interpreter implementation", crate::coverage::missing_in_interpreter(g)),
            ("no kernel lowering", crate::coverage::missing_in_kernels(g)),
            ("host fallback (interpreter, no kernel: eager-only ops, complex values)", crate::coverage::host_fallbacks(g)),
        ] {
            if !missing.is_empty() {
                let _ = writeln!(s, "  {what}:");
                for m in &missing {
                    let why = if m.why.is_empty() { String::new() } else { format!(": {}", m.why.join("; ")) };
                    let _ = writeln!(s, "    {}  ({}){why}", m.target, m.nodes.join(", "));
                }
            }
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
