//! `bench models`: every zoo model's lite and full plan on one device, median device time per
//! run of each, so "is full mode faster than lite on real models" is one command.
//!
//! Each plan is lowered and its modules built once, then run `warmup` untimed and `repeat` timed
//! times on the same random inputs at the model's hints (or `--bind` values where the model has
//! that symbol); a run's device time is the sum of its kernels' device timestamps.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use serde_json::{json, Value};

use crate::decomp::{Marks, Mode};
use crate::ir::Model;
use crate::runtime::{open, pick_backend, probe_all, Backend, Device};
use crate::runtime::plan::{build_modules, compile_plan, release_modules, run_built};
use crate::shapes::resolve_bindings;

/// The committed zoo (`samples/zoo/torch-2.15`).
pub const ZOO: &str = "samples/zoo/torch-2.15";

pub struct ModelsArgs<'a> {
    pub dir: &'a Path,
    pub device: &'a str,
    pub binds: &'a [(String, i64)],
    pub warmup: u32,
    pub repeat: u32,
    /// Only models whose file stem contains one of these (all when empty).
    pub only: &'a [String],
}

pub fn models(a: ModelsArgs<'_>) -> ExitCode {
    let wanted = match Backend::parse(a.device) {
        Ok(w) => w,
        Err(e) => return super::fail(super::EXIT_USAGE, &e),
    };
    let backend = pick_backend(&probe_all(), wanted);
    if backend == Backend::Reference {
        return super::fail(super::EXIT_FAILED, &"`bench models` times device kernels: no Level Zero or OpenCL device is available");
    }
    let mut dev = match open(backend) {
        Ok(d) => d,
        Err(e) => return super::fail(super::EXIT_FAILED, &e),
    };
    let mut files: Vec<PathBuf> = match std::fs::read_dir(a.dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "pt2")).collect(),
        Err(e) => return super::fail(super::EXIT_USAGE, &format!("{}: {e}", a.dir.display())),
    };
    files.sort();
    let mut rows = Vec::new();
    for file in files {
        let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if !a.only.is_empty() && !a.only.iter().any(|o| stem.contains(o.as_str())) {
            continue;
        }
        let row = match super::load(&file) {
            Ok(model) => one_model(dev.as_mut(), &model, &a),
            Err(_) => json!({"error": "could not load the model"}),
        };
        let mut row = row;
        row["model"] = json!(stem);
        eprintln!("{}", serde_json::to_string(&row).unwrap_or_default());
        rows.push(row);
    }
    let info = dev.info().clone();
    super::print_json(&json!({
        "device": format!("{} ({})", info.name, info.backend),
        "warmup": a.warmup,
        "repeat": a.repeat,
        "models": rows,
    }));
    ExitCode::SUCCESS
}

/// Both modes of one model: kernels launched and median device time of a run, or why not.
fn one_model(dev: &mut dyn Device, model: &Model, a: &ModelsArgs<'_>) -> Value {
    let known: Vec<(String, i64)> =
        a.binds.iter().filter(|(s, _)| model.symbols.iter().any(|m| m.name == *s)).cloned().collect();
    let bindings = match resolve_bindings(model, &known) {
        Ok(b) => b,
        Err(e) => return json!({"error": e.to_string()}),
    };
    let Some(graph) = model.graphs.first() else { return json!({"error": "the model has no graph"}) };
    let inputs = match crate::exec::random_inputs(graph, &bindings, 0) {
        Ok(t) => t,
        Err(e) => return json!({"error": e}),
    };
    let mut out = json!({"bindings": bindings});
    let mut medians = Vec::new();
    for mode in [Mode::Lite, Mode::Full] {
        let r = (|| -> Result<Value, String> {
            let plan = crate::lower::lower(model, graph, mode, &Marks::default()).map_err(|e| e.to_string())?;
            let modules = compile_plan(&plan).map_err(|e| e.to_string())?;
            let programs = build_modules(dev, &modules).map_err(|e| e.to_string())?;
            let mut times = Vec::new();
            for i in 0..a.warmup + a.repeat.max(1) {
                let run = run_built(dev, &plan, &programs, model, &inputs, &bindings, Instant::now()).map_err(|e| e.to_string())?;
                if i >= a.warmup {
                    times.push(run.total_device_ns);
                }
            }
            release_modules(dev, &programs).map_err(|e| e.to_string())?;
            times.sort_unstable();
            let median = times[times.len() / 2];
            medians.push(median);
            Ok(json!({
                "kernels": plan.kernel_count(),
                "median_device_ms": median as f64 / 1e6,
                "min_device_ms": times[0] as f64 / 1e6,
                "max_device_ms": times[times.len() - 1] as f64 / 1e6,
            }))
        })();
        out[mode.name()] = r.unwrap_or_else(|e| json!({"error": e}));
    }
    if let [lite, full] = medians[..] {
        out["full_over_lite"] = json!(full as f64 / lite.max(1) as f64);
    }
    out
}
