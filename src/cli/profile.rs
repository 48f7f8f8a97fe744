//! `profile`: run a model's plan on a device with puffin on, print each kernel's median device
//! time, and write the Chrome trace and the puffin recording.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use super::{compile, fail, fail_pipeline, EXIT_FAILED, EXIT_USAGE};
use crate::pipeline;
use crate::profile::{CpuCapture, PlanProfile, ProfileOptions, Trace};
use crate::runtime::{pick_backend, probe_all, Backend};
use crate::shapes::{parse_binding, resolve_bindings};

/// Per node: median device time per repetition, its share of the median total, and the kernel.
pub fn summary(trace: &Trace) -> String {
    let timed = trace.frames.iter().filter(|f| !f.warmup).count();
    let warmup = trace.frames.len() - timed;
    let mut out = String::new();
    let _ = writeln!(out, "device: {} ({}), {timed} timed repetitions after {warmup} warm-up", trace.device, trace.backend);
    let medians = trace.node_median_ns();
    let total: u64 = medians.iter().map(|(_, ns)| ns).sum();
    let kernel_of = |node: &str| {
        trace.kernels.iter().find(|k| k.launch.node == node).map_or(String::new(), |k| k.launch.kernel.clone())
    };
    let width = medians.iter().map(|(n, _)| n.len()).max().unwrap_or(4).max(4);
    let _ = writeln!(out, "{:<width$}  {:>12}  {:>6}  kernel", "node", "median µs", "share");
    for (node, ns) in &medians {
        let share = if total > 0 { 100.0 * *ns as f64 / total as f64 } else { 0.0 };
        let _ = writeln!(out, "{node:<width$}  {:>12.3}  {share:>5.1}%  {}", *ns as f64 / 1e3, kernel_of(node));
    }
    let _ = writeln!(out, "{:<width$}  {:>12.3}", "total", total as f64 / 1e3);
    let host = trace.host_median_ns();
    if !host.is_empty() {
        let _ = writeln!(out, "steps on the host (host time, not device time):");
        for (kind, node, ns) in &host {
            let what = if *kind == crate::profile::HostSpan::SYNC { "sync: sizes read back" } else { "host fallback (interpreter)" };
            let _ = writeln!(out, "{node:<width$}  {:>12.3}          {what}", *ns as f64 / 1e3);
        }
    }
    if let Some(a) = trace.alignment {
        match a.error_ns() {
            Some(e) => {
                let _ = writeln!(out, "device clock aligned to the host clock within ±{:.1} µs", e as f64 / 1e3);
            }
            None => {
                let _ = writeln!(out, "warning: device and host clocks drifted apart during the run; the timeline is aligned at the last sync point");
            }
        }
    }
    out
}

/// Writes the requested exports, saying where.
pub fn write_outputs(trace: &Trace, chrome: Option<&Path>, puffin: Option<&Path>) -> std::io::Result<()> {
    if let Some(path) = chrome {
        trace.write_chrome(path)?;
        eprintln!("wrote {} (open in the Perfetto UI or chrome://tracing)", path.display());
    }
    if let Some(path) = puffin {
        trace.write_puffin(path)?;
        eprintln!("wrote {} (open with puffin_viewer)", path.display());
    }
    Ok(())
}

pub struct ProfileArgs<'a> {
    pub file: &'a Path,
    pub mode: &'a str,
    pub marks: &'a [String],
    pub binds: &'a [String],
    pub device: &'a str,
    pub warmup: u32,
    pub repeat: u32,
    pub trace: Option<&'a Path>,
    pub puffin: Option<&'a Path>,
    pub seed: u64,
    pub json: bool,
    /// A TORCH_TRACE log and a profiler trace of the same model compiled by Inductor.
    pub inductor: Option<(&'a Path, &'a Path)>,
}

/// The median of per-repetition times (the upper one of an even count).
fn median_ns(v: &[u64]) -> Option<u64> {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.get(s.len() / 2).copied()
}

pub fn run(a: ProfileArgs<'_>) -> ExitCode {
    let wanted = match Backend::parse(a.device) {
        Ok(w) => w,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    // The reference interpreter has no device clock: its steps' host times stand in, and the
    // trace's queue says so (the same as the app's profile panel).
    let backend = pick_backend(&probe_all(), wanted);
    // Started before import so the trace shows import, decomposition, lowering and codegen too.
    let capture = CpuCapture::start();
    // Read before the run, so a bad log or trace fails before minutes of profiling.
    let inductor = match a.inductor.map(|(log, trace)| crate::profile::inductor_run::load(log, trace)).transpose() {
        Ok(r) => r,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let lowered = match compile::lower_file(a.file, a.mode, a.marks) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let explicit: Result<Vec<(String, i64)>, _> = a.binds.iter().map(|s| parse_binding(s)).collect();
    let bindings = match explicit.map_err(|e| e.to_string()).and_then(|e| resolve_bindings(&lowered.model, &e).map_err(|e| e.to_string())) {
        Ok(b) => b,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let Some(graph) = lowered.model.graphs.first() else {
        return fail(EXIT_USAGE, &"the model has no graph");
    };
    let options = ProfileOptions { warmup: a.warmup, repeat: a.repeat.max(1) };
    let profiled =
        pipeline::profile_graph(capture, backend, &lowered.plan, &lowered.model, graph, &bindings, a.seed, options, &mut |_| {});
    let PlanProfile { trace, run_device_ns: run_totals, run_wall_ns, run_phases } = match profiled {
        Ok(p) => p,
        Err(e) => return fail_pipeline(&e),
    };
    let against = inductor.as_ref().zip(lowered.model.graphs.first()).map(|(run, graph)| {
        let ours = crate::profile::against_inductor::Ours {
            graph,
            kernels: crate::profile::against_inductor::our_kernels(&lowered.plan, graph, &trace),
        };
        (run, crate::profile::against_inductor::compare(&ours, &run.side()))
    });
    if a.json {
        let kernels: Vec<serde_json::Value> = trace
            .node_median_ns()
            .into_iter()
            .map(|(node, ns)| serde_json::json!({"node": node, "median_ns": ns}))
            .collect();
        super::print_json(&serde_json::json!({
            "backend": trace.backend,
            "device": trace.device,
            "mode": lowered.plan.mode.name(),
            "bindings": bindings,
            "warmup": options.warmup,
            "repeat": options.repeat,
            "kernels": kernels,
            "device_total_ns": trace.device_total_ns(),
            "run_device_ns": run_totals,
            "median_device_ns": median_ns(&run_totals),
            // One whole forward as a user waits for it, next to the device time it holds.
            "run_wall_ns": run_wall_ns,
            "median_wall_ns": median_ns(&run_wall_ns),
            // Where that wall time went on the host, per phase (median of each over the timed
            // repetitions; absent on the reference interpreter).
            "host_phases_median": (!run_phases.is_empty()).then(|| crate::runtime::plan::HostPhases::median(&run_phases)),
            "host_steps": trace.host_median_ns().into_iter().map(|(kind, node, ns)| serde_json::json!({"node": node, "kind": kind, "median_host_ns": ns})).collect::<Vec<_>>(),
            "host_total_ns": trace.host_total_ns(),
            "clock_alignment": trace.alignment,
            "against_inductor": against.as_ref().map(|(run, c)| serde_json::json!({
                "log": run.log.file,
                "compiles": run.graphs.iter().map(|(id, _)| id).collect::<Vec<_>>(),
                "runs": run.runs,
                "call_median_us": run.call_median_us,
                "notes": run.notes,
                "comparison": c,
            })),
        }));
    } else {
        print!("{}", summary(&trace));
        if trace.kernels.is_empty() {
            println!("(the plan launched no kernels: its steps ran on the host or were views)");
        }
        if let Some((run, c)) = &against {
            print!("{}", super::profile_inductor::table(c, run));
        }
    }
    match write_outputs(&trace, a.trace, a.puffin) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(EXIT_FAILED, &e),
    }
}
