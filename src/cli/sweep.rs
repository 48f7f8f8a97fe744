//! `sweep`: a model's device time, traffic and guards across a dynamic dimension's range, per
//! decomposition mode, as a table, JSON or CSV.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use super::{fail, SweepArgs, EXIT_FAILED, EXIT_USAGE};
use crate::decomp::{Marks, Mode};
use crate::runtime::{pick_backend, probe_all, Backend};
use crate::shapes::parse_binding;
use crate::sweep::{self, profiles, Dim, Selection, Sweep, SweepOptions};

/// One line per value and mode; recompiles and flips marked where they happen.
pub fn table(s: &Sweep) -> String {
    let mut out = String::new();
    if s.backend == "profile" {
        let _ = writeln!(
            out,
            "sweep of {} over {}..{} from profiler traces ({}): medians over the compiled region's invocations in each trace",
            s.dim.symbol, s.dim.lo, s.dim.hi, s.device
        );
    } else {
        let _ = writeln!(
            out,
            "sweep of {} over {}..{} on {} ({}): medians of up to {} timed runs per point ({} ms budget), {} warm-up after each build",
            s.dim.symbol, s.dim.lo, s.dim.hi, s.device, s.backend, s.repeat, s.budget_ms, s.warmup
        );
    }
    let others: Vec<String> = s.bindings.iter().filter(|(k, _)| *k != s.dim.symbol).map(|(k, v)| format!("{k}={v}")).collect();
    if !others.is_empty() {
        let _ = writeln!(out, "other symbols: {}", others.join(", "));
    }
    let _ = writeln!(out, "{:>10}  {:<5}  {:>12}  {:>12}  {:>8}  {:>7}  {:>4}", s.dim.symbol, "mode", "device µs", "bytes", "GB/s", "kernels", "runs");
    for p in &s.points {
        let flips: Vec<String> = s.flips.iter().filter(|f| f.value == p.value).map(|f| format!("`{}` → {}", f.guard, f.to)).collect();
        let mut note = String::new();
        if p.recompiled {
            note.push_str("  recompiled");
        }
        if p.host_us > 0.0 {
            let _ = write!(note, "  + {:.3} µs host (sync, host fallback)", p.host_us);
        }
        if !flips.is_empty() && p.mode == s.points[0].mode {
            let _ = write!(note, "  guard flip: {}", flips.join(", "));
        }
        let _ = writeln!(
            out,
            "{:>10}  {:<5}  {:>12.3}  {:>12}  {:>8.3}  {:>7}  {:>4}{note}",
            p.value, p.mode, p.device_us, p.bytes, p.gb_per_s, p.kernels_launched, p.repetitions
        );
    }
    let compiles: Vec<String> = s.compiles.iter().map(|(m, n)| format!("{m} {n}")).collect();
    let _ = writeln!(out, "plans compiled: {}", compiles.join(", "));
    let how = match s.flip_search {
        sweep::FlipSearch::NoGuards => "the model has no guards".to_string(),
        sweep::FlipSearch::Exact { values } => format!("every one of the {values} values checked"),
        sweep::FlipSearch::Bisection { samples } => format!("bisected between {samples} log-spaced samples"),
    };
    if s.backend == "profile" {
        let _ = writeln!(out, "guards: profiler traces record none; a recompile shows as a compiled region naming a new compile");
    } else {
        let _ = writeln!(out, "guard flips: {} ({how})", s.flips.len());
    }
    out
}

pub fn run(a: &SweepArgs) -> ExitCode {
    let usage = |e: &dyn std::fmt::Display| fail(EXIT_USAGE, e);
    let wanted = match Backend::parse(&a.device.device) {
        Ok(w) => w,
        Err(e) => return usage(&e),
    };
    let mut modes = Vec::new();
    for m in &a.modes {
        match Mode::parse(m) {
            Some(mode) if !modes.contains(&mode) => modes.push(mode),
            Some(_) => {}
            None => return usage(&format!("unknown --mode `{m}`: expected none, core, lite or full")),
        }
    }
    let dim = match Dim::parse(&a.dim) {
        Ok(d) => d,
        Err(e) => return usage(&e),
    };
    let explicit: Result<Vec<(String, i64)>, _> = a.binds.iter().map(|s| parse_binding(s)).collect();
    let explicit = match explicit {
        Ok(e) => e,
        Err(e) => return usage(&e),
    };
    let model = match super::load(&a.file) {
        Ok(m) => m,
        Err(c) => return c,
    };
    let Some(graph) = model.graphs.first() else {
        return usage(&format!("{}: the model has no graph", a.file.display()));
    };
    let marks = match Marks::parse(&a.marks).and_then(|m| m.check_against(graph).map(|_| m)) {
        Ok(m) => m,
        Err(e) => return usage(&e),
    };
    let fixed = match sweep::prepare(&model, &dim, &explicit) {
        Ok(b) => b,
        Err(e) => return usage(&e),
    };
    let selection = if a.values.is_empty() { Selection::Count(a.points) } else { Selection::Values(a.values.to_vec()) };
    let points = match sweep::plan_points(&model, &dim, &fixed, &selection) {
        Ok(p) => p,
        Err(e) => return usage(&e),
    };
    let options = SweepOptions {
        modes,
        marks,
        backend: pick_backend(&probe_all(), wanted),
        warmup: a.warmup,
        repeat: a.repeat.max(1),
        budget: std::time::Duration::from_millis(a.budget_ms),
        seed: a.seed,
    };
    let never = AtomicBool::new(false);
    let s = match sweep::run_sweep(&model, graph, &dim, &fixed, &points, &options, &mut |_| {}, &never) {
        Ok(s) => s,
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    if a.json {
        super::print_json(&sweep::to_json(&s));
    } else if a.csv {
        print!("{}", sweep::to_csv(&s));
    } else {
        print!("{}", table(&s));
    }
    ExitCode::SUCCESS
}

/// `sweep-profiles`: the series of a folder, or `--log MODE=LOG` with `MODE@VALUE=TRACE` arguments.
pub fn run_profiles(dir: Option<&Path>, logs: &[String], traces: &[String], dim: &str, json: bool, csv: bool) -> ExitCode {
    let series = match dir {
        Some(d) => match profiles::series_in_dir(d) {
            Ok(s) => s,
            Err(e) => return fail(EXIT_USAGE, &e),
        },
        None => match series_from_args(logs, traces) {
            Ok(s) => s,
            Err(e) => return fail(EXIT_USAGE, &e),
        },
    };
    let s = match profiles::sweep_from_profiles(dim, &series) {
        Ok(s) => s,
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    if json {
        super::print_json(&sweep::to_json(&s));
    } else if csv {
        print!("{}", sweep::to_csv(&s));
    } else {
        print!("{}", table(&s));
    }
    ExitCode::SUCCESS
}

fn profile_mode(label: &str) -> Result<Mode, String> {
    match label {
        "default" => Ok(Mode::Full),
        other => Mode::parse(other).ok_or_else(|| format!("`{other}` is not a mode: expected lite, default (or full), none, core")),
    }
}

fn series_from_args(logs: &[String], traces: &[String]) -> Result<Vec<profiles::Series>, String> {
    let mut series: Vec<profiles::Series> = Vec::new();
    for l in logs {
        let (mode, log) = l.split_once('=').ok_or_else(|| format!("--log `{l}`: expected MODE=LOG"))?;
        series.push(profiles::Series { mode: profile_mode(mode)?, log: log.into(), traces: Vec::new() });
    }
    for t in traces {
        let bad = || format!("`{t}`: expected MODE@VALUE=TRACE");
        let (key, path) = t.split_once('=').ok_or_else(bad)?;
        let (mode, value) = key.split_once('@').ok_or_else(bad)?;
        let value: i64 = value.parse().map_err(|_| bad())?;
        let mode = profile_mode(mode)?;
        let s = series.iter_mut().find(|s| s.mode == mode).ok_or_else(|| format!("`{t}`: no --log for mode {}", mode.name()))?;
        s.traces.push((value, path.into()));
    }
    series.retain(|s| !s.traces.is_empty());
    Ok(series)
}
