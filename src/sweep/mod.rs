//! Shape sweeps: one model measured across a dynamic dimension's range, per decomposition mode.
//!
//! Each mode's plan is lowered and its SPIR-V built once and reused at every point while the
//! model's guards keep the truth values they had when it was built (kernels take sizes as
//! arguments, so one binary serves every legal binding); where a guard flips the plan is lowered
//! and built again, as Inductor would recompile, and the point says so. Per point and mode: the
//! median device time in total and per kernel, the bytes the kernels read and write, achieved
//! GB/s, kernels launched and the guards' values.

mod export;
mod measure;
pub mod points;
pub mod profiles;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;

use crate::decomp::{Marks, Mode};
use crate::ir::{Graph, Model};
use crate::lower::{self, LowerError};
use crate::runtime::{open, reference_info, Backend, Device};
use crate::shapes::{resolve_bindings, BindError};
use crate::sym::{Bindings, Range};
pub use export::{to_csv, to_json};
use measure::Compiled;
pub use points::{Flip, FlipSearch, Points, Selection};

/// The swept dimension: a symbol of the model and the sub-range of its legal values to cover.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Dim {
    pub symbol: String,
    pub lo: i64,
    pub hi: i64,
}

impl Dim {
    /// Parses `SYM=LO..HI`.
    pub fn parse(text: &str) -> Result<Dim, SweepError> {
        let bad = || SweepError::Syntax(text.to_string());
        let (symbol, range) = text.split_once('=').ok_or_else(bad)?;
        let (lo, hi) = range.split_once("..").ok_or_else(bad)?;
        let int = |s: &str| s.trim().parse::<i64>().map_err(|_| bad());
        Ok(Dim { symbol: symbol.trim().to_string(), lo: int(lo)?, hi: int(hi)? })
    }
}

/// What to measure besides the dimension.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    pub modes: Vec<Mode>,
    pub marks: Marks,
    pub backend: Backend,
    /// Untimed runs after each build of a plan (module finalization, driver caches); later
    /// points reuse the warm binary.
    pub warmup: u32,
    /// Most timed runs per point and mode.
    pub repeat: u32,
    /// Fewer timed runs (but at least one) once a point has taken this long: slow points would
    /// otherwise dominate the sweep's time, and their medians need fewer runs.
    pub budget: Duration,
    /// Seed of the random inputs (the same at every point).
    pub seed: u64,
}

/// One kernel's median device time at a point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelTime {
    pub name: String,
    pub median_us: f64,
}

/// A guard's value at a point; `None` where it could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GuardValue {
    pub expr: String,
    pub value: Option<bool>,
}

/// One mode measured at one value of the dimension.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepPoint {
    pub value: i64,
    pub mode: &'static str,
    /// Median over the timed repetitions of the kernels' summed device time.
    pub device_us: f64,
    /// Bytes read plus bytes written.
    pub bytes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// `bytes / device_us`, in GB/s (0 when nothing was timed).
    pub gb_per_s: f64,
    pub kernels_launched: usize,
    /// Timed runs the medians are over (fewer than asked where the time budget ran out).
    pub repetitions: u32,
    pub kernels: Vec<KernelTime>,
    pub guards: Vec<GuardValue>,
    /// The plan was lowered and built again here because a guard flipped.
    pub recompiled: bool,
}

/// A finished sweep.
#[derive(Clone, Debug, Serialize)]
pub struct Sweep {
    pub dim: Dim,
    pub bindings: Bindings,
    pub backend: &'static str,
    pub device: String,
    pub warmup: u32,
    pub repeat: u32,
    pub budget_ms: u64,
    pub flips: Vec<Flip>,
    pub flip_search: FlipSearch,
    /// Plans lowered and built per mode (1 + its recompiles), in `modes` order.
    pub compiles: Vec<(&'static str, usize)>,
    /// Mode-major within value: all modes at the first value, then the next value.
    pub points: Vec<SweepPoint>,
}

/// What a running sweep reports.
#[derive(Clone, Debug)]
pub enum Progress {
    /// What it is doing, with `done` of `total` measurements finished.
    Status { text: String, done: usize, total: usize },
    /// A measurement finished.
    Point(SweepPoint),
}

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("`{0}` is not of the form SYM=LO..HI")]
    Syntax(String),
    #[error("--dim {symbol}: not a symbol of this model; its symbols are: {known}")]
    UnknownSymbol { symbol: String, known: String },
    #[error("--dim {symbol}={lo}..{hi}: empty range (LO must not exceed HI)")]
    Empty { symbol: String, lo: i64, hi: i64 },
    #[error("--dim {symbol}={lo}..{hi}: outside the symbol's legal range {range}")]
    OutOfRange { symbol: String, lo: i64, hi: i64, range: Range },
    #[error("--values: {symbol} = {value} is outside the swept range {lo}..{hi}")]
    ValueOutside { symbol: String, value: i64, lo: i64, hi: i64 },
    #[error("--bind {0}: the swept symbol takes each point's value; it cannot also be bound")]
    BoundTwice(String),
    #[error(transparent)]
    Bind(#[from] BindError),
    #[error("no modes to sweep")]
    NoModes,
    #[error("{mode} mode at {symbol}={value}: {source}")]
    Lower { mode: &'static str, symbol: String, value: i64, source: Box<LowerError> },
    #[error("{mode} mode at {symbol}={value} on {backend}: {message}")]
    Run { mode: &'static str, symbol: String, value: i64, backend: &'static str, message: String },
    #[error("cancelled")]
    Cancelled,
    #[error(transparent)]
    Profiles(#[from] profiles::ProfileSweepError),
}

/// Checks `dim` against the model and resolves the other symbols (`explicit`, else their hints).
pub fn prepare(model: &Model, dim: &Dim, explicit: &[(String, i64)]) -> Result<Bindings, SweepError> {
    let Some(sym) = model.symbol(&dim.symbol) else {
        let known = model.symbols.iter().map(|s| format!("{} ∈ {}", s.name, s.range)).collect::<Vec<_>>();
        let known = if known.is_empty() { "(none: the model is static)".to_string() } else { known.join(", ") };
        return Err(SweepError::UnknownSymbol { symbol: dim.symbol.clone(), known });
    };
    if dim.lo > dim.hi {
        return Err(SweepError::Empty { symbol: dim.symbol.clone(), lo: dim.lo, hi: dim.hi });
    }
    if !sym.range.contains(dim.lo) || !sym.range.contains(dim.hi) {
        return Err(SweepError::OutOfRange { symbol: dim.symbol.clone(), lo: dim.lo, hi: dim.hi, range: sym.range });
    }
    if explicit.iter().any(|(n, _)| *n == dim.symbol) {
        return Err(SweepError::BoundTwice(dim.symbol.clone()));
    }
    let mut with_dim = explicit.to_vec();
    with_dim.push((dim.symbol.clone(), dim.lo));
    Ok(resolve_bindings(model, &with_dim)?)
}

/// The values to measure for `selection`, checked against the range.
pub fn plan_points(model: &Model, dim: &Dim, fixed: &Bindings, selection: &Selection) -> Result<Points, SweepError> {
    if let Selection::Values(vs) = selection {
        if let Some(v) = vs.iter().find(|v| !(dim.lo..=dim.hi).contains(*v)) {
            return Err(SweepError::ValueOutside { symbol: dim.symbol.clone(), value: *v, lo: dim.lo, hi: dim.hi });
        }
    }
    Ok(points::choose(model, &dim.symbol, dim.lo, dim.hi, fixed, selection))
}

/// Measures every mode of `options` at every value of `points` on `graph` of `model`.
/// `progress` hears each finished point; `cancel` is read between measurements.
#[allow(clippy::too_many_arguments)]
pub fn run_sweep(
    model: &Model,
    graph: &Graph,
    dim: &Dim,
    fixed: &Bindings,
    points: &Points,
    options: &SweepOptions,
    progress: &mut dyn FnMut(Progress),
    cancel: &AtomicBool,
) -> Result<Sweep, SweepError> {
    puffin::profile_function!();
    if options.modes.is_empty() {
        return Err(SweepError::NoModes);
    }
    let backend = options.backend;
    let run_err = |mode: Mode, value: i64, message: String| SweepError::Run {
        mode: mode.name(),
        symbol: dim.symbol.clone(),
        value,
        backend: backend.name(),
        message,
    };
    let first = points.values.first().copied().unwrap_or(dim.lo);
    let mut device: Option<Box<dyn Device>> = match backend {
        Backend::Reference => None,
        b => Some(open(b).map_err(|e| run_err(options.modes[0], first, e.to_string()))?),
    };
    let device_name = device.as_ref().map_or_else(|| reference_info().name, |d| d.info().name.clone());
    let mut compiled: Vec<Option<Compiled>> = options.modes.iter().map(|_| None).collect();
    let mut compiles = vec![0usize; options.modes.len()];
    let total = points.values.len() * options.modes.len();
    let mut out = Vec::with_capacity(total);
    let mut b = fixed.clone();
    for &value in &points.values {
        b.set(&dim.symbol, value);
        let guards = points::guard_values(model, &b);
        let inputs = crate::exec::random_inputs(graph, &b, options.seed).map_err(|m| run_err(options.modes[0], value, m))?;
        for (m, &mode) in options.modes.iter().enumerate() {
            if cancel.load(Ordering::Relaxed) {
                return Err(SweepError::Cancelled);
            }
            let text = format!("{} mode at {}={value}", mode.name(), dim.symbol);
            progress(Progress::Status { text, done: out.len(), total });
            let stale = compiled[m].as_ref().is_none_or(|c| c.under != guards);
            let recompiled = stale && compiled[m].is_some();
            if stale {
                let plan = lower::lower(model, graph, mode, &options.marks)
                    .map_err(|e| SweepError::Lower { mode: mode.name(), symbol: dim.symbol.clone(), value, source: Box::new(e) })?;
                if let Some(old) = compiled[m].take() {
                    old.release(&mut device).map_err(|e| run_err(mode, value, e.to_string()))?;
                }
                compiled[m] = Some(Compiled::new(plan, guards.clone(), &mut device).map_err(|e| run_err(mode, value, e.to_string()))?);
                compiles[m] += 1;
            }
            let c = compiled[m].as_ref().expect("compiled above");
            let warmup = if stale { options.warmup } else { 0 };
            let mut point = c
                .measure(&mut device, model, &inputs, &b, warmup, options.repeat.max(1), options.budget)
                .map_err(|e| run_err(mode, value, e.to_string()))?;
            point.value = value;
            point.recompiled = recompiled;
            point.guards = model
                .guards
                .iter()
                .zip(&guards)
                .map(|(g, v)| GuardValue { expr: g.source.clone(), value: *v })
                .collect();
            progress(Progress::Point(point.clone()));
            out.push(point);
        }
    }
    Ok(Sweep {
        dim: dim.clone(),
        bindings: fixed.clone(),
        backend: backend.name(),
        device: device_name,
        warmup: options.warmup,
        repeat: options.repeat,
        budget_ms: options.budget.as_millis() as u64,
        flips: points.flips.clone(),
        flip_search: points.search,
        compiles: options.modes.iter().map(|m| m.name()).zip(compiles).collect(),
        points: out,
    })
}

#[cfg(test)]
mod tests;
