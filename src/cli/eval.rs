//! `eval`: run a model's graph through the reference interpreter on `.npy` inputs and save the
//! outputs as `.npy`, after the decomposition `--mode` (none, core, lite or full); random ops
//! draw from Philox keyed by `--seed` (`crate::ops::rng`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use super::{fail, EXIT_FAILED, EXIT_USAGE};
use crate::exec::{self, Tensor};
use crate::decomp::{self, Marks, Mode};
use crate::npy;

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
    let outputs = match exec::run_with_generator(&model, graph, &tensors, &bindings, &exec::Generator::seeded(seed)).and_then(|v| exec::outputs(graph, &v)) {
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
