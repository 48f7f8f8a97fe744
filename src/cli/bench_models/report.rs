//! What a `bench models` run says about where it ran (CPU, cores, load, build, torch), and its
//! `--markdown` table: the numbers docs/PERFORMANCE.md quotes, with the conditions that make
//! them reproducible written next to them.

use serde::Serialize;

use super::summary::{Outcome, Summary, UNSTEADY};

/// The machine and build a run measured on.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Machine {
    /// `model name` of /proc/cpuinfo (`None` where there is none to read).
    pub cpu: Option<String>,
    /// Hardware threads this process may use.
    pub cores: Option<usize>,
    /// 1-, 5- and 15-minute load averages before torch's side, before ours, and after ours.
    pub load_average_before: Option<[f64; 3]>,
    pub load_average_before_ours: Option<[f64; 3]>,
    pub load_average_after: Option<[f64; 3]>,
    pub build: Build,
}

/// How this binary was built: its timings depend on it more than on anything else.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Build {
    /// `debug` when debug assertions are on (cargo's dev profile), else `optimised`.
    pub profile: &'static str,
    pub debug_assertions: bool,
    /// The cargo profile folder the binary sits in (`debug`, `release`, or a custom profile's);
    /// cargo does not tell a crate its opt-level, so this is what names it.
    pub profile_dir: Option<String>,
}

impl Build {
    pub fn this() -> Build {
        let debug_assertions = cfg!(debug_assertions);
        let profile_dir = std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned()));
        Build { profile: if debug_assertions { "debug" } else { "optimised" }, debug_assertions, profile_dir }
    }
}

/// The first `model name` of a /proc/cpuinfo text.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "model name").then(|| v.trim().to_string())
    })
}

impl Machine {
    pub fn this(load_average_before: Option<[f64; 3]>) -> Machine {
        Machine {
            cpu: std::fs::read_to_string("/proc/cpuinfo").ok().as_deref().and_then(cpu_model),
            cores: std::thread::available_parallelism().ok().map(|n| n.get()),
            load_average_before,
            load_average_before_ours: None,
            load_average_after: None,
            build: Build::this(),
        }
    }
}

/// Torch's side as the header names it.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct TorchSide {
    pub torch: String,
    /// `torch.get_num_threads()` as the script ran.
    pub threads: u32,
    pub repeat: u32,
}

/// Everything the markdown header states.
pub struct Header<'a> {
    pub device: &'a str,
    pub machine: &'a Machine,
    pub torch: Option<&'a TorchSide>,
    /// `(sampled, of, seed)` when `--sample` chose the models.
    pub sample: Option<(usize, usize, u64)>,
    pub warmup: u32,
    pub repeat: u32,
}

/// A table cell: no `|` or line break may end the cell early.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// `x` with `digits` decimals, or in scientific notation where those would show only zeros
/// (a ratio of 1e-5 is not "0.00").
fn num(x: f64, digits: usize) -> String {
    if x != 0.0 && x.abs() < 10f64.powi(-(digits as i32)) {
        format!("{x:.1e}")
    } else {
        format!("{x:.digits$}")
    }
}

fn ms(t: &Result<f64, String>) -> String {
    t.as_ref().map_or_else(|_| "—".to_string(), |t| num(*t, 3))
}

fn ratio(a: &Result<f64, String>, b: &Result<f64, String>) -> String {
    match (a, b) {
        (Ok(a), Ok(b)) => num(a / b, 2),
        _ => "—".to_string(),
    }
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "—".to_string(), |x| num(x, digits))
}

fn load(l: Option<[f64; 3]>) -> String {
    l.map_or_else(|| "unknown".to_string(), |[a, b, c]| format!("{a:.2} {b:.2} {c:.2}"))
}

/// The run as markdown: conditions, the verdict against torch.compile and eager, one row per
/// model, and every model a side could not time with its reason.
pub fn markdown(h: &Header<'_>, s: &Summary, outcomes: &[Outcome]) -> String {
    let m = h.machine;
    let mut out = String::new();
    let cpu = m.cpu.as_deref().unwrap_or("unknown CPU");
    let cores = m.cores.map_or_else(|| "unknown".to_string(), |c| c.to_string());
    out += &format!("- Machine: {} ({cores} hardware threads); ours on {}\n", cell(cpu), cell(h.device));
    out += &format!(
        "- Load average (1, 5, 15 min): before torch {}, before ours {}, after {}\n",
        load(m.load_average_before),
        load(m.load_average_before_ours),
        load(m.load_average_after)
    );
    let dir = m.build.profile_dir.as_deref().map_or_else(String::new, |d| format!(", target/{d}"));
    out += &format!("- Our build: {} (debug assertions {}{dir}); {} warm-up + {} timed runs per mode, median\n", m.build.profile, if m.build.debug_assertions { "on" } else { "off" }, h.warmup, h.repeat);
    out += &match h.torch {
        Some(t) => format!("- torch {} ({} threads, {} timed calls, median)\n", cell(&t.torch), t.threads, t.repeat),
        None => "- torch: not timed\n".to_string(),
    };
    if let Some((n, of, seed)) = h.sample {
        out += &format!("- Models: a seeded sample, {n} of {of} (`--sample {n} --seed {seed}`)\n");
    }
    let pct = |x: Option<f64>| opt(x, 1);
    out += "\n| ours (full mode, wall) against | models | measured | ours ahead | % of models | % of measured | median ratio | geometric mean |\n";
    out += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (name, a) in [("torch.compile", &s.against_compiled), ("torch eager", &s.against_eager)] {
        out += &format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} |\n",
            s.models,
            a.measured,
            a.ahead,
            pct(Some(a.ahead_pct_of_models)),
            pct(a.ahead_pct_of_measured),
            opt(a.median_ratio, 2),
            opt(a.geomean_ratio, 2)
        );
    }
    out += "\nRatios are ours / torch (below 1: ours faster); a model either side could not time counts as not ahead.\n";
    out += "\n| model | ours full wall (ms) | torch eager (ms) | torch.compile (ms) | ours / compile | ours / eager | slowest / fastest run |\n";
    out += "|---|---:|---:|---:|---:|---:|---:|\n";
    for o in outcomes {
        out += &format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            cell(&o.model),
            ms(&o.ours),
            ms(&o.eager),
            ms(&o.compiled),
            ratio(&o.ours, &o.compiled),
            ratio(&o.ours, &o.eager),
            num(o.spread, 2)
        );
    }
    if !s.unsteady.is_empty() {
        out += &format!(
            "\nUnsteady: on {} of {} models a side's slowest timed run took over {UNSTEADY} × its fastest (the machine was busy); their medians are counted above.\n",
            s.unsteady.len(),
            s.models
        );
    }
    if !s.not_measured.is_empty() {
        out += "\nNot measured on both sides:\n\n";
        for n in &s.not_measured {
            // One torch reason when it is the same for both modes (a model torch could not load).
            let torch: &[(&str, &Option<String>)] = if n.torch_eager.is_some() && n.torch_eager == n.torch_compiled {
                &[("torch", &n.torch_eager)]
            } else {
                &[("torch eager", &n.torch_eager), ("torch.compile", &n.torch_compiled)]
            };
            let why: Vec<String> = std::iter::once(("ours", &n.ours))
                .chain(torch.iter().copied())
                .filter_map(|(side, r)| r.as_ref().map(|r| format!("{side}: {}", cell(r))))
                .collect();
            out += &format!("- {} ({}): {}\n", cell(&n.model), cell(&n.dir), why.join("; "));
        }
    }
    out
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
