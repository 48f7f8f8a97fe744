//! `bench ops`: every OpInfo-style case timed through the OpenCL kernels (lowered in `none`
//! mode, each op its own kernel, as eager runs it) and through the interpreter, next to torch
//! eager on the same CPU, listing the cases whose kernels take more than a threshold (10×)
//! times torch's.
//!
//! A pathological case must not hang the run: cases run in a worker process (the same binary,
//! `bench ops --worker`) that reads case keys on stdin and answers one JSON line per case; the
//! supervisor ([`run_cases`]) waits at most `max_seconds` for each answer, kills a worker that
//! overruns, records the case as timed out (slow) and starts a fresh worker for the next one.
//!
//! Torch's side: `scripts/bench_ops_torch.py` (embedded as [`TORCH_SCRIPT`]) times each case's
//! exported module (`torch.export.load(...).module()`) on its committed inputs; its output is
//! committed as `DIR/torch_times.json` (torch version, machine, thread count, date), or the
//! script runs live with the user's Python ([`torch_live`]) so that both sides share the run.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{Case, Members, OpinfoError};
use crate::decomp::{Marks, Mode};
use crate::exec;
use crate::runtime::opencl::OpenClDevice;
use crate::runtime::plan::{build_modules, compile_plan, release_modules, run_built};

/// The torch timing script, run live by [`torch_live`].
pub const TORCH_SCRIPT: &str = include_str!("../../scripts/bench_ops_torch.py");

/// The file in a case set's folder holding torch's committed timings.
pub const TORCH_TIMES: &str = "torch_times.json";

/// What `bench ops` can fail on as a whole (a failing case is a row, not an error).
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Cases(#[from] OpinfoError),
    #[error("{file}: {message}")]
    Torch { file: String, message: String },
    #[error("worker `{command}`: {message}")]
    Worker { command: String, message: String },
}

/// One case's times (milliseconds, medians over the timed runs).
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct CaseTiming {
    pub key: String,
    pub op: String,
    pub dtype: String,
    pub shapes: Vec<Vec<usize>>,
    /// The reference interpreter, one whole run.
    pub interp_ms: Option<f64>,
    /// The case's kernels: the sum of their device timestamps in one run.
    pub device_ms: Option<f64>,
    /// One whole OpenCL run: uploads, launches, host steps, read-back.
    pub wall_ms: Option<f64>,
    /// Kernels the plan launches.
    pub kernels: usize,
    /// Timed OpenCL runs.
    pub runs: usize,
    /// Torch eager, one call of the exported module (filled in by [`attach_torch`]).
    pub torch_ms: Option<f64>,
    /// Why a side has no time.
    pub error: Option<String>,
    /// The worker did not answer within the limit: the case is slow, its times unknown.
    pub timed_out: bool,
    /// Seconds the case took in all (lowering, builds, every run), as the supervisor saw it.
    pub seconds: f64,
}

impl CaseTiming {
    /// How many times torch eager's time this case's `metric` is.
    pub fn ratio(&self, metric: Metric) -> Option<f64> {
        let ours = match metric {
            Metric::Device => self.device_ms?,
            Metric::Wall => self.wall_ms?,
        };
        self.torch_ms.filter(|t| *t > 0.0).map(|t| ours / t)
    }

    /// Slow: above `threshold` times torch eager, or timed out.
    pub fn is_slow(&self, metric: Metric, threshold: f64) -> bool {
        self.timed_out || self.ratio(metric).is_some_and(|r| r > threshold)
    }
}

/// Which of our times is held against torch eager's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// The kernels' summed device time: what the op's kernels cost.
    Device,
    /// A whole run's wall time, copies and launches included.
    Wall,
}

fn median(v: &mut [f64]) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// Times one case: the interpreter and, when `dev` is given, the OpenCL plan (built once, one
/// untimed run, then up to `repeat` timed runs while less than `budget` has been spent).
pub fn time_case(dev: Option<&mut OpenClDevice>, case: &Case, files: &Members, repeat: usize, budget: Duration) -> CaseTiming {
    let mut t = CaseTiming {
        key: case.key(),
        op: case.op.clone(),
        dtype: case.dtype.clone(),
        shapes: case.inputs.iter().map(|(_, s)| s.clone()).collect(),
        ..Default::default()
    };
    let start = Instant::now();
    let mut errors = Vec::new();
    let loaded = super::model(case, files).and_then(|m| Ok((m, super::inputs(case, files)?)));
    let (model, inputs) = match loaded {
        Ok(x) => x,
        Err(e) => {
            t.error = Some(e.to_string());
            return t;
        }
    };
    let Some(graph) = model.graphs.first() else {
        t.error = Some("the case has no graph".into());
        return t;
    };
    let repeat = repeat.max(1);
    let mut interp = Vec::new();
    while interp.len() < repeat && (interp.is_empty() || start.elapsed() < budget / 4) {
        let t0 = Instant::now();
        if let Err(e) = exec::run(&model, graph, &inputs) {
            errors.push(format!("interpreter: {e}"));
            break;
        }
        interp.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    t.interp_ms = median(&mut interp);
    if let Some(dev) = dev {
        match time_opencl(dev, &model, graph, &inputs, repeat, budget, start) {
            Ok((device, wall, kernels)) => {
                t.runs = device.len();
                t.kernels = kernels;
                t.device_ms = median(&mut device.clone());
                t.wall_ms = median(&mut wall.clone());
            }
            Err(e) => errors.push(format!("opencl: {e}")),
        }
    } else {
        errors.push("opencl: no device".into());
    }
    t.error = (!errors.is_empty()).then(|| errors.join("; "));
    t.seconds = start.elapsed().as_secs_f64();
    t
}

type Runs = (Vec<f64>, Vec<f64>, usize);

fn time_opencl(dev: &mut OpenClDevice, model: &crate::ir::Model, graph: &crate::ir::Graph, inputs: &[exec::Tensor], repeat: usize, budget: Duration, start: Instant) -> Result<Runs, String> {
    let plan = crate::lower::lower(model, graph, Mode::None, &Marks::default()).map_err(|e| e.to_string())?;
    let modules = compile_plan(&plan).map_err(|e| e.to_string())?;
    let bindings = exec::infer_bindings(model, &plan.graph, inputs).map_err(|e| e.to_string())?;
    let programs = build_modules(dev, &modules).map_err(|e| e.to_string())?;
    let gen = exec::Generator::default();
    let mut runs = (Vec::new(), Vec::new(), plan.steps.iter().filter(|s| s.kernel().is_some()).count());
    let mut result = Ok(());
    // One untimed run first: drivers finish compiling at the first launch.
    for i in 0..=repeat {
        if i > 1 && start.elapsed() >= budget / 2 {
            break;
        }
        match run_built(dev, &plan, &programs, model, inputs, &bindings, &gen, Instant::now()) {
            Ok(r) if i > 0 => {
                runs.0.push(r.total_device_ns as f64 / 1e6);
                runs.1.push(r.wall_ns as f64 / 1e6);
            }
            Ok(_) => {}
            Err(e) => {
                result = Err(e.to_string());
                break;
            }
        }
    }
    let released = release_modules(dev, &programs).map_err(|e| e.to_string());
    result.and(released).map(|()| runs)
}

/// The worker's loop: case keys in (one per line), one [`CaseTiming`] JSON line out per key.
pub fn worker(dir: &Path, repeat: usize, budget: Duration, input: impl BufRead, mut out: impl Write) -> Result<(), BenchError> {
    let index = super::read_index(dir)?;
    let by_key: HashMap<String, &Case> = index.cases.iter().map(|c| (c.key(), c)).collect();
    let mut dev = OpenClDevice::open().ok();
    let mut archive: Option<(String, Result<Members, String>)> = None;
    let io = |e: std::io::Error| BenchError::Worker { command: "bench ops --worker".into(), message: e.to_string() };
    for line in input.lines() {
        let key = line.map_err(io)?;
        let timing = match by_key.get(key.trim()) {
            None => CaseTiming { key: key.clone(), error: Some(format!("no case `{key}` in {}", dir.display())), ..Default::default() },
            Some(case) => {
                if archive.as_ref().is_none_or(|(f, _)| *f != case.file) {
                    archive = Some((case.file.clone(), super::read_archive(dir, &case.file).map_err(|e| e.to_string())));
                }
                match archive.as_ref().map(|(_, a)| a) {
                    Some(Ok(files)) => time_case(dev.as_mut(), case, files, repeat, budget),
                    Some(Err(e)) => CaseTiming { key: key.clone(), op: case.op.clone(), error: Some(e.clone()), ..Default::default() },
                    None => CaseTiming { key: key.clone(), error: Some("archive not read".into()), ..Default::default() },
                }
            }
        };
        let text = serde_json::to_string(&timing).map_err(|e| BenchError::Worker { command: "bench ops --worker".into(), message: e.to_string() })?;
        writeln!(out, "{text}").and_then(|()| out.flush()).map_err(io)?;
    }
    Ok(())
}

/// A running worker process and the lines it has answered.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Worker {
    fn spawn(mut command: Command) -> Result<Worker, String> {
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().map_err(|e| e.to_string())?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("no pipes to the worker".into());
        };
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Worker { child, stdin, lines })
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `cases` through workers made by `command`, at most `max_seconds` each; `each` sees
/// every row as it comes (progress).
pub fn run_cases(cases: &[Case], command: &dyn Fn() -> Command, max_seconds: f64, each: &mut dyn FnMut(&CaseTiming)) -> Vec<CaseTiming> {
    let limit = Duration::from_secs_f64(max_seconds.max(0.001));
    let mut worker: Option<Worker> = None;
    let mut rows = Vec::with_capacity(cases.len());
    for case in cases {
        let mut row = CaseTiming {
            key: case.key(),
            op: case.op.clone(),
            dtype: case.dtype.clone(),
            shapes: case.inputs.iter().map(|(_, s)| s.clone()).collect(),
            ..Default::default()
        };
        let started = Instant::now();
        let w = match worker.take().map_or_else(|| Worker::spawn(command()), Ok) {
            Ok(w) => w,
            Err(e) => {
                row.error = Some(format!("could not start a worker: {e}"));
                each(&row);
                rows.push(row);
                continue;
            }
        };
        let mut w = w;
        if let Err(e) = writeln!(w.stdin, "{}", row.key).and_then(|()| w.stdin.flush()) {
            row.error = Some(format!("worker: {e}"));
            w.stop();
        } else {
            match w.lines.recv_timeout(limit) {
                Ok(line) => {
                    match serde_json::from_str::<CaseTiming>(&line) {
                        Ok(mut t) => {
                            t.seconds = started.elapsed().as_secs_f64();
                            row = t;
                        }
                        Err(e) => row.error = Some(format!("worker answered `{}`: {e}", line.chars().take(80).collect::<String>())),
                    }
                    worker = Some(w);
                }
                Err(RecvTimeoutError::Timeout) => {
                    row.timed_out = true;
                    row.error = Some(format!("no answer within {max_seconds} s: stopped"));
                    row.seconds = started.elapsed().as_secs_f64();
                    w.stop();
                }
                Err(RecvTimeoutError::Disconnected) => {
                    row.error = Some("the worker exited (crashed) on this case".into());
                    row.seconds = started.elapsed().as_secs_f64();
                    w.stop();
                }
            }
        }
        each(&row);
        rows.push(row);
    }
    if let Some(w) = worker {
        w.stop();
    }
    rows
}

/// Torch eager's timings of a case set and where they were taken.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct TorchTimes {
    pub torch: String,
    pub machine: String,
    pub threads: u32,
    pub date: String,
    #[serde(default)]
    pub command: String,
    pub cases: BTreeMap<String, TorchCase>,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct TorchCase {
    pub median_ms: Option<f64>,
    pub calls: Option<u32>,
    pub error: Option<String>,
}

/// The committed timings of the case set in `dir` (`DIR/torch_times.json`), or `file`.
pub fn torch_committed(file: &Path) -> Result<TorchTimes, BenchError> {
    let bad = |message: String| BenchError::Torch { file: file.display().to_string(), message };
    let text = std::fs::read_to_string(file).map_err(|e| bad(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| bad(format!("not torch timings: {e}")))
}

/// Times the cases of `dir` (only ops `only`, when given) with torch eager now, through
/// `python` running [`TORCH_SCRIPT`].
pub fn torch_live(python: &Path, dir: &Path, only: &[String]) -> Result<TorchTimes, BenchError> {
    let bad = |message: String| BenchError::Torch { file: python.display().to_string(), message };
    let mut args: Vec<std::ffi::OsString> = vec!["--dir".into(), dir.into()];
    if !only.is_empty() {
        args.extend(["--only".into(), only.join(",").into()]);
    }
    crate::python::run_json(python, "bench_ops_torch", TORCH_SCRIPT, &args).map_err(bad)
}

/// Fills in each row's torch time.
pub fn attach_torch(rows: &mut [CaseTiming], torch: &TorchTimes) {
    for r in rows {
        r.torch_ms = torch.cases.get(&r.key).and_then(|c| c.median_ms);
    }
}

/// The cases of `index` to run: those of ops in `only` (all when empty).
pub fn pick(cases: &[Case], only: &[String]) -> Vec<Case> {
    cases.iter().filter(|c| only.is_empty() || only.iter().any(|o| *o == c.op)).cloned().collect()
}

/// The default case set: `tests/data/opinfo` under the current folder, else this source tree's.
pub fn default_dir() -> PathBuf {
    let here = PathBuf::from("tests/data/opinfo");
    if here.join("index.json").is_file() {
        here
    } else {
        super::committed_dir()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(device: Option<f64>, torch: Option<f64>) -> CaseTiming {
        CaseTiming { device_ms: device, wall_ms: device.map(|d| d * 2.0), torch_ms: torch, ..Default::default() }
    }

    #[test]
    fn slow_means_above_the_threshold_or_timed_out() {
        assert!(row(Some(11.0), Some(1.0)).is_slow(Metric::Device, 10.0));
        assert!(!row(Some(9.0), Some(1.0)).is_slow(Metric::Device, 10.0));
        assert!(row(Some(6.0), Some(1.0)).is_slow(Metric::Wall, 10.0));
        // No torch time: no ratio, so not listed as slow on a guess.
        assert!(!row(Some(100.0), None).is_slow(Metric::Device, 10.0));
        let t = CaseTiming { timed_out: true, ..Default::default() };
        assert!(t.is_slow(Metric::Device, 10.0));
    }

    #[test]
    fn a_worker_that_never_answers_is_stopped_and_reported_slow() {
        let case: Case = serde_json::from_value(serde_json::json!({
            "op": "argsort", "dtype": "float32", "file": "argsort.zip.gz", "case": 0, "targets": [],
            "inputs": [["float32", [8000]]], "outputs": [], "rtol": [], "atol": []
        }))
        .unwrap();
        // `sleep` reads nothing and answers nothing: the pathological case.
        let command = || {
            let mut c = Command::new("sleep");
            c.arg("30");
            c
        };
        let t0 = Instant::now();
        let rows = run_cases(&[case.clone(), case], &command, 0.2, &mut |_| {});
        assert!(t0.elapsed() < Duration::from_secs(10), "the supervisor waited for the worker");
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.timed_out && r.is_slow(Metric::Device, 10.0)));
    }
}
