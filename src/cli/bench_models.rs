//! `bench models`: every zoo model's lite and full plan on one device, median device time per
//! run of each, so "is full mode faster than lite on real models" is one command.
//!
//! Each plan is lowered and its modules built once, then run `warmup` untimed and `repeat` timed
//! times on the same random inputs at the model's hints (or `--bind` values where the model has
//! that symbol), the two modes' runs alternating so that both see the same load; a run's device
//! time is the sum of its kernels' device timestamps, its wall time the whole run (uploads,
//! launches, host steps, read-back). Both committed zoo sets by default. With `--against-torch
//! PY`, torch eager and `torch.compile` are timed on the same models first, in the same run
//! (`profile::torch_cpu`), and our full mode's wall time is reported against theirs, with a
//! summary (`summary`) and the machine and build it ran on (`report`); `--sample N --seed S`
//! measures a seeded random draw of the models (`sample`) instead of ones we picked, and
//! `--resume LOG` carries on from the stderr of a run that stopped (`resume`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use serde_json::{json, Value};

use crate::decomp::{Marks, Mode};
use crate::ir::Model;
use crate::profile::torch_cpu::{TorchModel, TorchModels};
use crate::runtime::{open, pick_backend, probe_all, Backend, Device};
use crate::runtime::plan::{build_modules, compile_plan, release_modules, run_resident_with, Resident, Timing};
use crate::shapes::resolve_bindings;

mod report;
mod resume;
mod sample;
mod summary;

use sample::Candidate;

/// The committed zoo sets, exported with two torch versions.
pub const ZOO: [&str; 2] = ["samples/zoo/torch-2.15", "samples/zoo/torch-2.11"];

pub struct ModelsArgs<'a> {
    pub dirs: &'a [PathBuf],
    pub device: &'a str,
    pub binds: &'a [(String, i64)],
    pub warmup: u32,
    pub repeat: u32,
    /// Only models whose file stem contains one of these (all when empty).
    pub only: &'a [String],
    /// A Python with torch: time torch eager and `torch.compile` on the same models first
    /// (`profile::torch_cpu`) and report our full mode's wall time against them.
    pub against_torch: Option<&'a Path>,
    /// Torch's times read from a document `scripts/bench_torch_cpu.py` printed before, instead
    /// of running it.
    pub torch_json: Option<&'a Path>,
    /// `--sample N --seed S`: N models of those `--only` leaves, drawn with seed S.
    pub sample: Option<usize>,
    pub seed: u64,
    /// Where to write the run as a markdown table.
    pub markdown: Option<&'a Path>,
    /// The stderr of an earlier run stopped part-way: its models are not run again.
    pub resume: Option<&'a Path>,
    /// torch's thread count (`torch.set_num_threads`); every core when `None`.
    pub torch_threads: Option<u32>,
}

/// The `.pt2` files of `dirs` whose stem contains one of `only` (all when empty), in folder
/// order, each folder's files sorted.
fn candidates(dirs: &[PathBuf], only: &[String]) -> Result<Vec<Candidate>, String> {
    let mut out = Vec::new();
    for dir in dirs {
        let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "pt2")).collect(),
            Err(e) => return Err(format!("{}: {e}", dir.display())),
        };
        files.sort();
        for file in files {
            let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            if only.is_empty() || only.iter().any(|o| stem.contains(o.as_str())) {
                out.push(Candidate { dir: dir.clone(), file, stem });
            }
        }
    }
    Ok(out)
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
    let mut machine = report::Machine::this(super::bench::load_average());
    let all = match candidates(a.dirs, a.only) {
        Ok(c) => c,
        Err(e) => return super::fail(super::EXIT_USAGE, &e),
    };
    let chosen = match a.sample {
        Some(n) => sample::sample(&all, n, a.seed),
        None => all.clone(),
    };
    if chosen.is_empty() {
        return super::fail(super::EXIT_USAGE, &"no .pt2 model in the folders matches --only");
    }
    let resumed = match a.resume.map(resume::read) {
        Some(Ok(r)) => r,
        Some(Err(e)) => return super::fail(super::EXIT_USAGE, &e),
        None => resume::Resumed::default(),
    };
    if a.sample.is_some() {
        // Listed before anything is timed, so a run stopped part-way still says what it drew.
        let listed: Vec<String> = chosen.iter().map(|c| c.file.display().to_string()).collect();
        eprintln!("{}", json!({"sample": chosen.len(), "of": all.len(), "seed": a.seed, "models": listed}));
    }
    // Torch first, before our device is open: the OpenCL CPU runtime's worker threads compete
    // with torch's for the cores (bert's eager forward took 517 ms instead of about 1 ms).
    let torch = match (a.torch_json, a.against_torch) {
        (Some(file), _) => match crate::profile::torch_cpu::read(file) {
            Ok(t) => Some(t),
            Err(e) => return super::fail(super::EXIT_USAGE, &e),
        },
        (None, Some(py)) => match time_torch(py, &chosen, &resumed, a.repeat, a.torch_threads) {
            Ok(t) => Some(t),
            Err(e) => return super::fail(super::EXIT_FAILED, &e),
        },
        (None, None) => None,
    };
    machine.load_average_before_ours = super::bench::load_average();
    let mut dev = match open(backend) {
        Ok(d) => d,
        Err(e) => return super::fail(super::EXIT_FAILED, &e),
    };
    let mut rows = Vec::new();
    for c in &chosen {
        let mut row = match (resumed.our_row(&c.stem, &c.dir), super::load(&c.file)) {
            (Some(row), _) => row,
            (None, Ok(model)) => one_model(dev.as_mut(), &model, &a),
            (None, Err(_)) => json!({"error": "could not load the model"}),
        };
        if let Some(t) = torch.as_ref().and_then(|t| t.find(&c.stem, &c.dir)) {
            against_torch(&mut row, t);
        }
        row["model"] = json!(c.stem);
        row["dir"] = json!(c.dir.display().to_string());
        eprintln!("{}", serde_json::to_string(&row).unwrap_or_default());
        rows.push(row);
    }
    machine.load_average_after = super::bench::load_average();
    let measured: Vec<&Value> = rows.iter().filter(|r| r.get("full_over_lite").is_some()).collect();
    let full_faster = measured.iter().filter(|r| r["full_over_lite"].as_f64().is_some_and(|x| x < 1.0)).count();
    let info = dev.info().clone();
    let device = format!("{} ({})", info.name, info.backend);
    let torch_side = torch.as_ref().map(torch_side);
    let outcomes: Vec<summary::Outcome> = rows.iter().map(summary::Outcome::from_row).collect();
    let verdict = summary::summarize(&outcomes);
    if let Some(path) = a.markdown {
        let header = report::Header {
            device: &device,
            machine: &machine,
            torch: torch_side.as_ref(),
            sample: a.sample.map(|_| (chosen.len(), all.len(), a.seed)),
            warmup: a.warmup,
            repeat: a.repeat,
        };
        if let Err(e) = std::fs::write(path, report::markdown(&header, &verdict, &outcomes)) {
            return super::fail(super::EXIT_FAILED, &format!("{}: {e}", path.display()));
        }
    }
    super::print_json(&json!({
        "device": device,
        "machine": machine,
        "torch": torch.as_ref().map(|t| json!({"torch": t.torch, "threads": t.threads, "repeat": t.repeat, "custom_ops": t.custom_ops})),
        "sample": a.sample.map(|n| json!({"requested": n, "sampled": chosen.len(), "of": all.len(), "seed": a.seed,
            "models": chosen.iter().map(|c| c.file.display().to_string()).collect::<Vec<_>>()})),
        // Against torch only when torch was timed: otherwise every model would be listed unmeasured.
        "summary": torch.as_ref().map(|_| &verdict),
        "warmup": a.warmup,
        "repeat": a.repeat,
        "models_measured": measured.len(),
        "models_full_faster": full_faster,
        "models": rows,
    }));
    ExitCode::SUCCESS
}

/// Torch's times of `chosen`: rows of the resumed log kept, the other models timed now (the
/// script is handed their files, so it times exactly the models we do).
fn time_torch(py: &Path, chosen: &[Candidate], resumed: &resume::Resumed, repeat: u32, threads: Option<u32>) -> Result<TorchModels, String> {
    let todo: Vec<PathBuf> = chosen.iter().filter(|c| resumed.torch_row(&c.stem, &c.dir).is_none()).map(|c| c.file.clone()).collect();
    let kept: Vec<&TorchModel> = chosen.iter().filter_map(|c| resumed.torch_row(&c.stem, &c.dir)).collect();
    // Printed again as the script prints them, so this run's log can be resumed in turn.
    if let Some(meta) = &resumed.torch {
        eprintln!("{}", json!({"torch": meta}));
    }
    for row in &kept {
        eprintln!("{}", json!({"torch": row}));
    }
    let mut t = if todo.is_empty() {
        resumed.torch.clone().ok_or("the resumed log has torch's rows but not its settings line")?
    } else {
        crate::profile::torch_cpu::run(py, &todo, &[], repeat, threads).map_err(|e| e.to_string())?
    };
    if let Some(before) = &resumed.torch {
        if (before.torch.as_str(), before.threads) != (t.torch.as_str(), t.threads) {
            return Err(format!("the resumed log timed torch {} on {} threads, this run torch {} on {}", before.torch, before.threads, t.torch, t.threads));
        }
    }
    t.models.extend(kept.into_iter().cloned());
    Ok(t)
}

fn torch_side(t: &TorchModels) -> report::TorchSide {
    report::TorchSide { torch: t.torch.clone(), threads: t.threads, repeat: t.repeat }
}

/// A plan built on the device and the device times of its runs.
struct Timed {
    plan: crate::lower::Plan,
    programs: std::collections::HashMap<String, crate::runtime::ProgramId>,
    /// The weights, uploaded once: a forward's wall time, as torch's, holds no weight upload.
    weights: Resident,
    totals: Vec<u64>,
    /// Wall time of each forward launched with device timestamps (the device-time runs).
    timed_walls: Vec<u64>,
    /// Wall time of each timed forward, launched without device timestamps: uploads, launches,
    /// host steps, syncs and read-back.
    walls: Vec<u64>,
    /// Device time of each kernel step, per timed run.
    steps: std::collections::HashMap<String, Vec<u64>>,
}

/// Both modes of one model: kernels launched and median device time of a run, or why not.
/// The runs of the two plans alternate (lite, full, lite, …), so both see the same machine
/// load; the warm-up runs are untimed.
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
    let modes = [Mode::Lite, Mode::Full];
    let mut timed: Vec<Result<Timed, String>> = modes
        .iter()
        .map(|mode| {
            let plan = crate::lower::lower(model, graph, *mode, &Marks::default()).map_err(|e| e.to_string())?;
            let modules = compile_plan(&plan).map_err(|e| e.to_string())?;
            let programs = build_modules(dev, &modules).map_err(|e| e.to_string())?;
            let weights = match Resident::upload(dev, model, &plan) {
                Ok(w) => w,
                Err(e) => return Err(released(dev, &programs, format!("uploading the weights: {e}"))),
            };
            Ok(Timed { plan, programs, weights, totals: Vec::new(), timed_walls: Vec::new(), walls: Vec::new(), steps: Default::default() })
        })
        .collect();
    // Each round runs each plan twice: with device timestamps, for the kernels' times, and
    // without, for the wall time: a forward as a user runs it creates no profiling event per
    // launch and reads no timestamps, and neither should the time it is compared by.
    for i in 0..a.warmup + a.repeat.max(1) {
        for t in timed.iter_mut() {
            let Ok(tm) = t else { continue };
            let gen = crate::exec::Generator::default();
            let run = |dev: &mut dyn Device, timing| run_resident_with(dev, &tm.plan, &tm.programs, &tm.weights, &inputs, &bindings, &gen, Instant::now(), timing);
            match run(dev, Timing::Kernels).and_then(|kernels| Ok((kernels, run(dev, Timing::WallOnly)?))) {
                Ok((kernels, wall)) if i >= a.warmup => {
                    tm.totals.push(kernels.total_device_ns);
                    tm.timed_walls.push(kernels.wall_ns);
                    tm.walls.push(wall.wall_ns);
                    for s in kernels.steps {
                        tm.steps.entry(s.name).or_default().push(s.device_ns);
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = tm.weights.release(dev);
                    *t = Err(released(dev, &tm.programs, e.to_string()));
                }
            }
        }
    }
    let mut medians = Vec::new();
    for (mode, t) in modes.iter().zip(timed) {
        let t = t.and_then(|tm| match release_modules(dev, &tm.programs).and_then(|()| tm.weights.release(dev)) {
            Ok(()) => Ok(tm),
            Err(e) => Err(format!("releasing its programs: {e}")),
        });
        out[mode.name()] = match t {
            Ok(mut tm) => {
                tm.totals.sort_unstable();
                tm.walls.sort_unstable();
                tm.timed_walls.sort_unstable();
                let median = tm.totals[tm.totals.len() / 2];
                medians.push(median);
                json!({
                    "kernels": tm.plan.kernel_count(),
                    "median_device_ms": median as f64 / 1e6,
                    "median_wall_ms": tm.walls[tm.walls.len() / 2] as f64 / 1e6,
                    "min_wall_ms": tm.walls[0] as f64 / 1e6,
                    "max_wall_ms": tm.walls[tm.walls.len() - 1] as f64 / 1e6,
                    // What the wall time was with a profiling event per launch, as before.
                    "median_wall_timed_ms": tm.timed_walls[tm.timed_walls.len() / 2] as f64 / 1e6,
                    "min_device_ms": tm.totals[0] as f64 / 1e6,
                    "max_device_ms": tm.totals[tm.totals.len() - 1] as f64 / 1e6,
                    "costliest_kernels": costliest(&mut tm.steps, 3),
                })
            }
            Err(e) => json!({"error": e}),
        };
    }
    if let [lite, full] = medians[..] {
        out["full_over_lite"] = json!(full as f64 / lite.max(1) as f64);
    }
    out
}

/// Torch's times of the model next to ours: our full mode's median wall time (a whole run,
/// as a user waits for it) over torch eager's and `torch.compile`'s wall time of a forward.
fn against_torch(row: &mut Value, t: &crate::profile::torch_cpu::TorchModel) {
    row["torch_eager_ms"] = json!(t.eager_ms);
    row["torch_compiled_ms"] = json!(t.compiled_ms);
    row["torch_eager_spread"] = json!(spread(t.eager_min_ms, t.eager_max_ms));
    row["torch_compiled_spread"] = json!(spread(t.compiled_min_ms, t.compiled_max_ms));
    row["torch_compile_s"] = json!(t.compile_s);
    if let Some(e) = &t.error {
        row["torch_error"] = json!(e);
    }
    if let Some(e) = &t.compile_error {
        row["torch_compile_error"] = json!(e);
    }
    let ours = row["full"]["median_wall_ms"].as_f64();
    if let (Some(w), Some(e)) = (ours, t.eager_ms.filter(|x| *x > 0.0)) {
        row["full_wall_over_torch_eager"] = json!(w / e);
    }
    if let (Some(w), Some(c)) = (ours, t.compiled_ms.filter(|x| *x > 0.0)) {
        row["full_wall_over_torch_compiled"] = json!(w / c);
    }
}

/// Slowest over fastest timed run, where both are known and positive.
fn spread(min: Option<f64>, max: Option<f64>) -> Option<f64> {
    match (min, max) {
        (Some(lo), Some(hi)) if lo > 0.0 => Some(hi / lo),
        _ => None,
    }
}

/// Error `e` of a plan's run, after releasing the programs the plan built (and why not).
fn released(dev: &mut dyn Device, programs: &std::collections::HashMap<String, crate::runtime::ProgramId>, e: String) -> String {
    match release_modules(dev, programs) {
        Ok(()) => e,
        Err(r) => format!("{e}; releasing its programs: {r}"),
    }
}

/// The `n` kernels with the largest median device time, with that median (ms).
fn costliest(steps: &mut std::collections::HashMap<String, Vec<u64>>, n: usize) -> Value {
    let mut m: Vec<(String, u64)> = steps
        .iter_mut()
        .map(|(k, v)| {
            v.sort_unstable();
            (k.clone(), v[v.len() / 2])
        })
        .collect();
    m.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    Value::Array(m.into_iter().take(n).map(|(k, ns)| json!({"kernel": k, "median_device_ms": ns as f64 / 1e6})).collect())
}
