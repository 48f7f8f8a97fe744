//! `eval`: run a model's graph through the reference interpreter on `.npy` inputs and save the
//! outputs as `.npy`, after the decomposition `--mode` (none, core, lite or full); random ops
//! draw from Philox keyed by `--seed` (`crate::ops::rng`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use super::{fail, fail_pipeline, EXIT_FAILED, EXIT_USAGE};
use crate::decomp::{self, Marks, Mode};
use crate::exec;
use crate::pipeline;

pub fn run(
    file: &Path,
    mode: &str,
    mark_specs: &[String],
    inputs: &[PathBuf],
    save: Option<&Path>,
    seed: u64,
    as_json: bool,
) -> ExitCode {
    let Some(mode) = Mode::parse(mode) else {
        return fail(EXIT_USAGE, &format!("unknown --mode `{mode}`: expected none, core, lite or full"));
    };
    let model = match super::load(file) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let Some(graph) = model.graphs.first() else {
        return fail(EXIT_USAGE, &format!("{}: the model has no graph", file.display()));
    };
    let marks = match Marks::parse(mark_specs).and_then(|m| m.check_against(graph).map(|_| m)) {
        Ok(m) => m,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let decomposed = match decomp::decompose(graph, mode, &marks) {
        Ok(d) => d,
        Err(e) => return fail(EXIT_FAILED, &format!("{}: {e}", file.display())),
    };
    let graph = &decomposed.graph;
    let tensors = match pipeline::read_inputs(inputs) {
        Ok(t) => t,
        Err(e) => return fail_pipeline(&e),
    };
    let bindings = match exec::infer_bindings(&model, graph, &tensors) {
        Ok(b) => b,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let outputs = match exec::run_with_generator(&model, graph, &tensors, &bindings, &exec::Generator::seeded(seed)).and_then(|v| exec::outputs(graph, &v)) {
        Ok(o) => o,
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    let mut saved = Vec::new();
    if let Some(dir) = save {
        match pipeline::save_outputs(dir, &outputs) {
            Ok(paths) => saved.extend(paths.iter().map(|p| Some(p.display().to_string()))),
            Err(e) => return fail_pipeline(&e),
        }
    }
    saved.resize(outputs.len(), None);
    if as_json {
        let outs: Vec<_> = outputs
            .iter()
            .zip(&saved)
            .map(|(t, f)| json!({"dtype": t.dtype().name(), "shape": t.shape(), "file": f}))
            .collect();
        super::print_json(&json!({"file": file.display().to_string(), "mode": mode.name(), "bindings": bindings, "outputs": outs}));
    } else {
        let b: Vec<String> = bindings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        println!("bindings: {}", if b.is_empty() { "(none)".to_string() } else { b.join(" ") });
        for (i, (t, f)) in outputs.iter().zip(&saved).enumerate() {
            let to = f.as_ref().map(|f| format!(" -> {f}")).unwrap_or_default();
            println!("  out{i}: {} {:?}{to}", t.dtype(), t.shape());
        }
    }
    ExitCode::SUCCESS
}
