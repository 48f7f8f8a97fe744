//! `bench ops`: arguments and printing; the timing, the worker processes and torch's side are
//! `crate::opinfo::bench`.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;

use serde_json::json;

use crate::opinfo::bench::{self, CaseTiming, Metric, TorchTimes};

pub struct OpsArgs {
    pub dir: Option<PathBuf>,
    pub only: Vec<String>,
    pub max_seconds: f64,
    pub repeat: usize,
    pub threshold: f64,
    pub metric: String,
    pub against_torch: Option<PathBuf>,
    pub torch_times: Option<PathBuf>,
    pub json: bool,
    pub worker: bool,
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.3}"))
}

pub fn ops(a: OpsArgs) -> ExitCode {
    let dir = a.dir.clone().unwrap_or_else(bench::default_dir);
    let budget = Duration::from_secs_f64(a.max_seconds.max(0.001));
    if a.worker {
        let stdin = std::io::stdin();
        return match bench::worker(&dir, a.repeat, budget, stdin.lock(), std::io::stdout().lock()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => super::fail(super::EXIT_FAILED, &e),
        };
    }
    let metric = match a.metric.as_str() {
        "device" => Metric::Device,
        "wall" => Metric::Wall,
        other => return super::fail(super::EXIT_USAGE, &format!("--metric {other}: expected device or wall")),
    };
    let index = match crate::opinfo::read_index(&dir) {
        Ok(i) => i,
        Err(e) => return super::fail(super::EXIT_USAGE, &e),
    };
    let cases = bench::pick(&index.cases, &a.only);
    if cases.is_empty() {
        return super::fail(super::EXIT_USAGE, &format!("no case of {} in {}", a.only.join(","), dir.display()));
    }
    // Torch first when live: the two sides then share the machine's state as closely as a
    // sequential run can.
    let torch: Result<TorchTimes, _> = match &a.against_torch {
        Some(py) => bench::torch_live(py, &dir, &a.only),
        None => bench::torch_committed(&a.torch_times.clone().unwrap_or_else(|| dir.join(bench::TORCH_TIMES))),
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return super::fail(super::EXIT_FAILED, &format!("cannot find this program to start workers: {e}")),
    };
    let command = || {
        let mut c = Command::new(&exe);
        c.args(["bench", "ops", "--worker", "--repeat"]).arg(a.repeat.to_string()).arg("--max-seconds").arg(a.max_seconds.to_string()).arg("--dir").arg(&dir);
        c
    };
    let load_before = super::bench::load_average();
    let total = cases.len();
    let mut done = 0;
    let mut rows = bench::run_cases(&cases, &command, a.max_seconds, &mut |r: &CaseTiming| {
        done += 1;
        eprintln!("[{done}/{total}] {} {}: device {} ms, wall {} ms, interpreter {} ms{}", r.key, r.dtype, ms(r.device_ms), ms(r.wall_ms), ms(r.interp_ms), if r.timed_out { " TIMED OUT" } else { "" });
    });
    let load_after = super::bench::load_average();
    let torch_doc = match &torch {
        Ok(t) => {
            bench::attach_torch(&mut rows, t);
            json!({"torch": t.torch, "machine": t.machine, "threads": t.threads, "date": t.date, "live": a.against_torch.is_some()})
        }
        Err(e) => json!({"error": e.to_string()}),
    };
    let mut slow: Vec<&CaseTiming> = rows.iter().filter(|r| r.is_slow(metric, a.threshold)).collect();
    slow.sort_by(|x, y| {
        let key = |r: &CaseTiming| if r.timed_out { f64::INFINITY } else { r.ratio(metric).unwrap_or(0.0) };
        key(y).total_cmp(&key(x))
    });
    if a.json {
        let doc = json!({
            "dir": dir.display().to_string(),
            "metric": metric,
            "threshold": a.threshold,
            "max_seconds": a.max_seconds,
            "torch": torch_doc,
            "load_average_before": load_before,
            "load_average_after": load_after,
            "cases": rows.len(),
            "timed_out": rows.iter().filter(|r| r.timed_out).count(),
            "without_torch_time": rows.iter().filter(|r| r.torch_ms.is_none()).count(),
            "slow": slow.iter().map(|r| json!({"key": r.key, "op": r.op, "ratio": r.ratio(metric)})).collect::<Vec<_>>(),
            "rows": rows,
        });
        super::print_json(&doc);
    } else {
        println!("{} cases of {}; torch: {torch_doc}; load average {load_before:?} → {load_after:?}", rows.len(), dir.display());
        println!("above {}× torch eager ({} time), or stopped after {} s:", a.threshold, a.metric, a.max_seconds);
        println!("{:<40} {:<9} {:>12} {:>12} {:>12} {:>12} {:>9}", "case", "dtype", "device ms", "wall ms", "interp ms", "torch ms", "ratio");
        for r in &slow {
            let ratio = if r.timed_out { "timeout".to_string() } else { r.ratio(metric).map_or("-".into(), |x| format!("{x:.1}×")) };
            println!("{:<40} {:<9} {:>12} {:>12} {:>12} {:>12} {:>9}", format!("{} ({})", r.key, r.op), r.dtype, ms(r.device_ms), ms(r.wall_ms), ms(r.interp_ms), ms(r.torch_ms), ratio);
        }
        if slow.is_empty() {
            println!("(none)");
        }
    }
    ExitCode::SUCCESS
}
