//! A sweep from imported profiles: torch.profiler traces of one compiled model, recorded at
//! several values of a dynamic dimension on a machine with the GPU (`scripts/gen_profile_sweep.py`),
//! turned into the same [`Sweep`] our own runs give, so the CLI's JSON/CSV and the app's Sweep
//! panel plot them alike.
//!
//! Each series is one mode's TORCH_TRACE log and its traces. Every device op of a trace is
//! attributed to an Inductor kernel of the log (`profile::attribute`), and grouped by the
//! invocation of the compiled region (`Torch-Compiled Region: 0/0`) whose host code launched it;
//! a point's device time is the median over invocations of their summed device time, and each
//! kernel's time the median over invocations of its own sum. A region naming a compile the
//! previous point did not use marks the point `recompiled` (a guard failed and dynamo compiled
//! again). Profiles hold no byte counts: `bytes` and `gb_per_s` are 0.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Dim, FlipSearch, KernelTime, Sweep, SweepPoint};
use crate::decomp::Mode;
use crate::import::trace::{self, KernelTable};
use crate::profile::attribute::{attribute, CompiledKernels, Owner};
use crate::profile::kineto::{self, KinetoTrace};
use crate::sym::Bindings;

/// One mode: its log and its traces by value of the dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub mode: Mode,
    pub log: PathBuf,
    pub traces: Vec<(i64, PathBuf)>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileSweepError {
    #[error("{0}")]
    Log(String),
    #[error("{0}")]
    Trace(String),
    #[error("{file}: no kernels with output code in the log; it cannot attribute a profile")]
    NoKernels { file: String },
    #[error("{file}: no `Torch-Compiled Region` in the trace; was it recorded around the compiled model?")]
    NoRegion { file: String },
    #[error("no traces given")]
    Empty,
    #[error("{dir}: {message}")]
    Dir { dir: String, message: String },
}

/// The sweep over every series' traces, points ordered by value, then by series.
pub fn sweep_from_profiles(symbol: &str, series: &[Series]) -> Result<Sweep, ProfileSweepError> {
    let values: Vec<i64> = series.iter().flat_map(|s| s.traces.iter().map(|(v, _)| *v)).collect();
    let (Some(&lo), Some(&hi)) = (values.iter().min(), values.iter().max()) else { return Err(ProfileSweepError::Empty) };
    let mut points = Vec::new();
    let mut compiles = Vec::new();
    let mut device = String::new();
    let mut steps = 0u32;
    for s in series {
        let log = trace::load_log(&s.log).map_err(|e| ProfileSweepError::Log(e.to_string()))?;
        let (ids, tables): (Vec<String>, Vec<Vec<KernelTable>>) =
            log.compiles.iter().filter(|c| !c.output_code.is_empty()).map(|c| (c.id.to_string(), trace::kernels(c, &log.file_access()))).unzip();
        if ids.is_empty() {
            return Err(ProfileSweepError::NoKernels { file: s.log.display().to_string() });
        }
        let compiled: Vec<CompiledKernels<'_>> =
            ids.iter().zip(&tables).map(|(id, t)| CompiledKernels { compile: id, tables: t }).collect();
        compiles.push((s.mode.name(), ids.len()));
        let mut traces = s.traces.clone();
        traces.sort_by_key(|(v, _)| *v);
        let mut last_regions: Option<Vec<String>> = None;
        for (value, path) in &traces {
            let t = kineto::load(path).map_err(|e| ProfileSweepError::Trace(e.to_string()))?;
            if device.is_empty() {
                device = t.device_name.clone().unwrap_or_else(|| format!("{:?}", t.flavour));
            }
            let m = measure(&t, &compiled, path)?;
            steps = steps.max(m.invocations as u32);
            let recompiled = last_regions.as_ref().is_some_and(|prev| m.regions.iter().any(|r| !prev.contains(r)));
            last_regions = Some(m.regions.clone());
            let kernels = m
                .per_kernel
                .into_iter()
                .map(|((c, tb, k), us)| KernelTime { name: tables[c][tb].kernels[k].name.clone(), median_us: median(us) })
                .collect();
            points.push(SweepPoint {
                value: *value,
                mode: s.mode.name(),
                device_us: median(m.per_invocation),
                host_us: 0.0,
                bytes: 0,
                bytes_read: 0,
                bytes_written: 0,
                gb_per_s: 0.0,
                kernels_launched: m.launches / m.invocations.max(1),
                repetitions: m.invocations as u32,
                kernels,
                guards: Vec::new(),
                recompiled,
            });
        }
    }
    let order = |m: &str| series.iter().position(|s| s.mode.name() == m).unwrap_or(usize::MAX);
    points.sort_by_key(|p| (p.value, order(p.mode)));
    Ok(Sweep {
        dim: Dim { symbol: symbol.to_string(), lo, hi },
        bindings: Bindings::default(),
        backend: "profile",
        device,
        warmup: 0,
        repeat: steps,
        budget_ms: 0,
        flips: Vec::new(),
        flip_search: FlipSearch::NoGuards,
        compiles,
        points,
    })
}

/// One trace's device time, grouped by invocation of the compiled region.
struct Measured {
    /// Summed device time of each invocation, in µs.
    per_invocation: Vec<f64>,
    /// Per kernel (compile, table, kernel): its summed time in each invocation.
    per_kernel: BTreeMap<(usize, usize, usize), Vec<f64>>,
    invocations: usize,
    launches: usize,
    /// The compile ids the regions named.
    regions: Vec<String>,
}

fn measure(t: &KinetoTrace, compiled: &[CompiledKernels<'_>], path: &Path) -> Result<Measured, ProfileSweepError> {
    const REGION: &str = "Torch-Compiled Region";
    let parents = t.parents();
    let by_corr = t.launches_by_correlation();
    let region_of = |mut h: usize| loop {
        if t.host[h].name.starts_with(REGION) {
            // The outermost region: a nested one is part of the same invocation.
            let mut top = h;
            let mut up = parents[h];
            while let Some(p) = up {
                if t.host[p].name.starts_with(REGION) {
                    top = p;
                }
                up = parents[p];
            }
            return Some(top);
        }
        h = parents[h]?;
    };
    let regions: Vec<usize> = (0..t.host.len()).filter(|&h| t.host[h].name.starts_with(REGION) && region_of(h) == Some(h)).collect();
    if regions.is_empty() {
        return Err(ProfileSweepError::NoRegion { file: path.display().to_string() });
    }
    let slot: BTreeMap<usize, usize> = regions.iter().enumerate().map(|(i, &h)| (h, i)).collect();
    let mut per_invocation = vec![0.0; regions.len()];
    let mut per_kernel: BTreeMap<(usize, usize, usize), Vec<f64>> = BTreeMap::new();
    let mut launches = 0;
    for (op, owner) in t.device.iter().zip(attribute(t, compiled)) {
        let Some(&launch) = op.correlation.as_ref().and_then(|c| by_corr.get(c)) else { continue };
        let Some(i) = region_of(launch).and_then(|r| slot.get(&r)).copied() else { continue };
        let us = op.dur_ns as f64 / 1e3;
        per_invocation[i] += us;
        launches += 1;
        if let Owner::Kernel { kernel, .. } = owner {
            per_kernel.entry((kernel.compile, kernel.table, kernel.kernel)).or_insert_with(|| vec![0.0; regions.len()])[i] += us;
        }
    }
    let mut names: Vec<String> = regions.iter().map(|&h| t.host[h].name.rsplit(": ").next().unwrap_or("").trim().to_string()).collect();
    names.sort();
    names.dedup();
    Ok(Measured { per_invocation, per_kernel, invocations: regions.len(), launches, regions: names })
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The series in a folder as `scripts/gen_profile_sweep.py` writes it: `NAME_MODE.log[.gz]` and
/// `NAME_MODE_sVALUE.json[.gz]`, where MODE is `default` (Inductor's full table: mode `full`) or
/// `lite`.
pub fn series_in_dir(dir: &Path) -> Result<Vec<Series>, ProfileSweepError> {
    let err = |message: String| ProfileSweepError::Dir { dir: dir.display().to_string(), message };
    let entries = std::fs::read_dir(dir).map_err(|e| err(e.to_string()))?;
    let mut logs: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut traces: BTreeMap<String, Vec<(i64, PathBuf)>> = BTreeMap::new();
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        let stem = name.strip_suffix(".gz").unwrap_or(&name);
        if let Some(base) = stem.strip_suffix(".log") {
            if let Some(mode) = base.rsplit('_').next() {
                logs.insert(mode.to_string(), path);
            }
        } else if let Some(base) = stem.strip_suffix(".json") {
            let mut parts = base.rsplitn(3, '_');
            let (Some(size), Some(mode)) = (parts.next(), parts.next()) else { continue };
            if let Some(v) = size.strip_prefix('s').and_then(|v| v.parse::<i64>().ok()) {
                traces.entry(mode.to_string()).or_default().push((v, path));
            }
        }
    }
    let mut out = Vec::new();
    for (label, log) in logs {
        let mode = match label.as_str() {
            "default" | "full" => Mode::Full,
            other => Mode::parse(other).ok_or_else(|| err(format!("`{other}` is not a mode (default, lite, full, none)")))?,
        };
        let traces = traces.remove(&label).unwrap_or_default();
        if !traces.is_empty() {
            out.push(Series { mode, log, traces });
        }
    }
    if out.is_empty() {
        return Err(err("no NAME_MODE.log with NAME_MODE_sVALUE.json traces beside it".into()));
    }
    // Lite first, as the app's sweep plots it.
    out.sort_by_key(|s| s.mode != Mode::Lite);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_even_and_odd_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(vec![]), 0.0);
    }

    #[test]
    fn a_folder_without_series_is_an_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("xpu-wb-psweep-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = series_in_dir(&dir).unwrap_err().to_string();
        assert!(e.contains(&dir.display().to_string()), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
