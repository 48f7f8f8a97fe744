//! The verdict of a `bench models --against-torch` run, for issue 28's bar ("whole-model wall
//! time ahead of torch.compile on at least 80 % of the corpus's architectures"): how many models
//! were measured on both sides, on how many our full mode's median wall time is below torch's,
//! the median and geometric-mean ratio, and every model that could not be measured with why.
//!
//! A model either side could not run is never a win: the share of wins is given over all the
//! models of the run (the bar's measure) and, apart, over the models measured on both sides.

use serde::Serialize;
use serde_json::Value;

/// One model's times as the summary reads them from its row, or why a side has none.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub model: String,
    pub dir: String,
    /// Our full mode's median wall time of a forward (ms).
    pub ours: Result<f64, String>,
    pub eager: Result<f64, String>,
    pub compiled: Result<f64, String>,
    /// The largest slowest-over-fastest ratio of the timed runs on any side (1 when unknown).
    pub spread: f64,
}

/// A side whose slowest timed run took this much longer than its fastest was measured while
/// something else ran: its median is listed, and flagged.
pub const UNSTEADY: f64 = 1.5;

/// A time that is there and positive, or the first reason found for its absence.
fn time(v: &Value, reasons: &[Option<&str>], none: &str) -> Result<f64, String> {
    match v.as_f64() {
        Some(t) if t > 0.0 && t.is_finite() => Ok(t),
        Some(t) => Err(format!("a time of {t} ms cannot be compared")),
        None => Err(reasons.iter().flatten().next().map_or_else(|| none.to_string(), |r| r.to_string())),
    }
}

impl Outcome {
    /// Reads a row of `bench models` (after `against_torch` joined torch's times to it).
    pub fn from_row(row: &Value) -> Outcome {
        let s = |k: &str| row[k].as_str();
        let full = &row["full"];
        let ours = time(&full["median_wall_ms"], &[full["error"].as_str(), s("error")], "our full mode has no wall time");
        let no_torch = if row.get("torch_eager_ms").is_none() && s("torch_error").is_none() {
            Some("torch did not time this model (no --against-torch or --torch-json row)")
        } else {
            None
        };
        let eager = time(&row["torch_eager_ms"], &[no_torch, s("torch_error")], "torch eager has no time");
        let compiled = time(
            &row["torch_compiled_ms"],
            &[no_torch, s("torch_error"), s("torch_compile_error")],
            "torch.compile was not timed (the script ran with --no-compile)",
        );
        let ours_spread = match (full["min_wall_ms"].as_f64(), full["max_wall_ms"].as_f64()) {
            (Some(lo), Some(hi)) if lo > 0.0 => hi / lo,
            _ => 1.0,
        };
        let spread = [ours_spread, row["torch_eager_spread"].as_f64().unwrap_or(1.0), row["torch_compiled_spread"].as_f64().unwrap_or(1.0)]
            .into_iter()
            .fold(1.0, f64::max);
        let (model, dir) = (s("model").unwrap_or_default().to_string(), s("dir").unwrap_or_default().to_string());
        Outcome { model, dir, ours, eager, compiled, spread }
    }
}

/// Our full wall time against one torch mode.
#[derive(Serialize, Debug, PartialEq)]
pub struct Against {
    /// Models with a time on both sides.
    pub measured: usize,
    /// Of those, models where our full wall time is below torch's.
    pub ahead: usize,
    /// `ahead` over all the run's models, failures counted as not ahead (the bar's measure).
    pub ahead_pct_of_models: f64,
    /// `ahead` over `measured` (`None` when nothing was measured).
    pub ahead_pct_of_measured: Option<f64>,
    /// Median and geometric mean of ours / torch over the measured models (below 1: ours faster).
    pub median_ratio: Option<f64>,
    pub geomean_ratio: Option<f64>,
}

/// A model some side could not time, with each side's reason.
#[derive(Serialize, Debug, PartialEq)]
pub struct NotMeasured {
    pub model: String,
    pub dir: String,
    pub ours: Option<String>,
    pub torch_eager: Option<String>,
    pub torch_compiled: Option<String>,
}

#[derive(Serialize, Debug, PartialEq)]
pub struct Summary {
    pub models: usize,
    pub against_compiled: Against,
    pub against_eager: Against,
    pub not_measured: Vec<NotMeasured>,
    /// Models with a side whose timed runs spread by more than [`UNSTEADY`] (still counted).
    pub unsteady: Vec<Unsteady>,
}

#[derive(Serialize, Debug, PartialEq)]
pub struct Unsteady {
    pub model: String,
    pub dir: String,
    /// Slowest over fastest timed run, on the side where that is largest.
    pub spread: f64,
}

fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

fn against(outcomes: &[Outcome], theirs: impl Fn(&Outcome) -> &Result<f64, String>) -> Against {
    let mut ratios: Vec<f64> =
        outcomes.iter().filter_map(|o| match (&o.ours, theirs(o)) { (Ok(a), Ok(b)) => Some(a / b), _ => None }).collect();
    ratios.sort_by(f64::total_cmp);
    let ahead = ratios.iter().filter(|r| **r < 1.0).count();
    let pct = |n: usize| if n == 0 { None } else { Some(100.0 * ahead as f64 / n as f64) };
    Against {
        measured: ratios.len(),
        ahead,
        ahead_pct_of_models: pct(outcomes.len()).unwrap_or(0.0),
        ahead_pct_of_measured: pct(ratios.len()),
        median_ratio: median(&ratios),
        geomean_ratio: (!ratios.is_empty()).then(|| (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp()),
    }
}

pub fn summarize(outcomes: &[Outcome]) -> Summary {
    let not_measured = outcomes
        .iter()
        .filter(|o| o.ours.is_err() || o.eager.is_err() || o.compiled.is_err())
        .map(|o| NotMeasured {
            model: o.model.clone(),
            dir: o.dir.clone(),
            ours: o.ours.clone().err(),
            torch_eager: o.eager.clone().err(),
            torch_compiled: o.compiled.clone().err(),
        })
        .collect();
    Summary {
        models: outcomes.len(),
        against_compiled: against(outcomes, |o| &o.compiled),
        against_eager: against(outcomes, |o| &o.eager),
        not_measured,
        unsteady: outcomes
            .iter()
            .filter(|o| o.spread > UNSTEADY)
            .map(|o| Unsteady { model: o.model.clone(), dir: o.dir.clone(), spread: o.spread })
            .collect(),
    }
}

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;
