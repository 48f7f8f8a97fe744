use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Map, Value as Json};

use super::{fail, EXIT_USAGE};
use crate::shapes::{evaluate_graph, evaluate_guards, parse_binding, resolve_bindings};

pub fn run(file: &Path, binds: &[String], as_json: bool) -> ExitCode {
    let model = match super::load(file) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let explicit = match binds.iter().map(|b| parse_binding(b)).collect::<Result<Vec<_>, _>>() {
        Ok(e) => e,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let bindings = match resolve_bindings(&model, &explicit) {
        Ok(b) => b,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let mut values = Map::new();
    let mut errors = Vec::new();
    for g in &model.graphs {
        for (v, shape) in g.values.iter().zip(evaluate_graph(g, &bindings)) {
            match shape {
                Some(Ok(t)) => {
                    values.insert(
                        v.name.clone(),
                        json!({"dtype": t.dtype.name(), "shape": t.shape, "strides": t.strides, "bytes": t.bytes}),
                    );
                }
                Some(Err(e)) => errors.push(format!("graph `{}`: value `{}`: {e}", g.name, v.name)),
                None => {}
            }
        }
    }
    if !errors.is_empty() {
        return fail(super::EXIT_FAILED, &errors.join("\n"));
    }
    let guards: Vec<Json> = model
        .guards
        .iter()
        .zip(evaluate_guards(&model, &bindings))
        .map(|(g, r)| match r {
            Ok(holds) => json!({"expr": g.expr.to_string(), "holds": holds}),
            Err(e) => json!({"expr": g.expr.to_string(), "holds": null, "error": e.to_string()}),
        })
        .collect();
    let doc = json!({"bindings": bindings, "values": values, "guards": guards});
    if as_json {
        super::print_json(&doc);
    } else {
        let b: Vec<String> = bindings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        println!("bindings: {}", b.join(" "));
        for (name, v) in &values {
            println!("  {name:<32} {} {} strides {}", v["dtype"].as_str().unwrap_or(""), v["shape"], v["strides"]);
        }
        for g in &guards {
            println!("  guard {} -> {}", g["expr"].as_str().unwrap_or(""), g["holds"]);
        }
    }
    ExitCode::SUCCESS
}
