//! `eval`: run a model's graph through the reference interpreter on `.npy` inputs and save the
//! outputs as `.npy`. The graph may first be transformed by a decomposition mode; each mode is
//! one `fn(&Graph) -> Graph`, so new modes slot in without touching the run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use super::{fail, EXIT_FAILED, EXIT_USAGE};
use crate::exec::{self, Tensor};
use crate::ir::Graph;
use crate::npy;

/// A graph-to-graph transform applied before running.
type Transform = fn(&Graph) -> Graph;

/// The transform for `mode`: `None` runs the graph as loaded.
fn transform_for(mode: &str) -> Result<Option<Transform>, String> {
    match mode {
        "none" => Ok(None),
        "core" | "lite" | "full" => {
            Err(format!("--mode {mode} is not available yet: this build has no decomposition pass; use --mode none"))
        }
        other => Err(format!("unknown --mode `{other}`: expected none, core, lite or full")),
    }
}

pub fn run(file: &Path, mode: &str, inputs: &[PathBuf], save: Option<&Path>, as_json: bool) -> ExitCode {
    let transform = match transform_for(mode) {
        Ok(t) => t,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let model = match super::load(file) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let Some(graph) = model.graphs.first() else {
        return fail(EXIT_USAGE, &format!("{}: the model has no graph", file.display()));
    };
    let transformed;
    let graph = match transform {
        Some(t) => {
            transformed = t(graph);
            &transformed
        }
        None => graph,
    };
    let mut tensors = Vec::with_capacity(inputs.len());
    for p in inputs {
        let loaded = npy::read(p).and_then(|a| {
            Tensor::from_le_bytes(a.dtype, &a.shape, &a.data)
                .map_err(|message| npy::NpyError::Format { file: p.display().to_string(), message })
        });
        match loaded {
            Ok(t) => tensors.push(t),
            Err(e) => return fail(EXIT_USAGE, &e),
        }
    }
    let bindings = match exec::infer_bindings(&model, graph, &tensors) {
        Ok(b) => b,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let outputs = match exec::run_with(&model, graph, &tensors, &bindings).and_then(|v| exec::outputs(graph, &v)) {
        Ok(o) => o,
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    let mut saved = Vec::new();
    if let Some(dir) = save {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return fail(EXIT_USAGE, &format!("{}: cannot create: {e}", dir.display()));
        }
        for (i, t) in outputs.iter().enumerate() {
            let path = dir.join(format!("out{i}.npy"));
            let a = npy::NpyArray { dtype: t.dtype(), shape: t.shape().to_vec(), data: t.to_le_bytes() };
            if let Err(e) = npy::write(&path, &a) {
                return fail(EXIT_FAILED, &e);
            }
            saved.push(Some(path.display().to_string()));
        }
    }
    saved.resize(outputs.len(), None);
    if as_json {
        let outs: Vec<_> = outputs
            .iter()
            .zip(&saved)
            .map(|(t, f)| json!({"dtype": t.dtype().name(), "shape": t.shape(), "file": f}))
            .collect();
        super::print_json(&json!({"file": file.display().to_string(), "mode": mode, "bindings": bindings, "outputs": outs}));
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
