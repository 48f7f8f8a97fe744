//! `profile FILE --against-inductor LOG --inductor-trace TRACE`: each of our kernels' regions
//! beside Inductor's kernels for the same original nodes (`profile::against_inductor`).

use std::fmt::Write as _;

use crate::profile::against_inductor::Comparison;
use crate::profile::inductor_run::InductorRun;

/// The rows as a table, our slowest region first, then the totals.
pub fn table(c: &Comparison, run: &InductorRun) -> String {
    let mut out = String::new();
    let compiles: Vec<&str> = run.graphs.iter().map(|(id, _)| id.as_str()).collect();
    let _ = write!(out, "\nagainst Inductor: {} (compile {}, {} kernels)", run.log.file, compiles.join(", "), run.kernels.len());
    match run.call_median_us {
        Some(us) => {
            let _ = writeln!(out, "; {} runs of its call() in the trace, median {us:.1} µs", run.runs);
        }
        None => out.push('\n'),
    }
    let us = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    let ratio = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    let _ = writeln!(out, "{:>10}  {:>11}  {:>6}  region: our kernels | Inductor's kernels", "ours µs", "Inductor µs", "ratio");
    for r in &c.rows {
        let ours = if r.ours.is_empty() { "(none)".to_string() } else { r.ours.join(", ") };
        let theirs = if r.inductor.is_empty() { "(none)".to_string() } else { r.inductor.join(", ") };
        let _ = writeln!(out, "{:>10}  {:>11}  {:>6}  {ours} | {theirs}", us(r.ours_us), us(r.inductor_us), ratio(r.ratio));
        let _ = writeln!(out, "{:>33}nodes: {} | {}", "", r.ours_nodes.join(", "), r.inductor_nodes.join(", "));
        if !r.unpaired_ours.is_empty() || !r.unpaired_inductor.is_empty() {
            let none = |v: &[String]| if v.is_empty() { "-".to_string() } else { v.join(", ") };
            let _ = writeln!(out, "{:>33}no partner: {} | {}", "", none(&r.unpaired_ours), none(&r.unpaired_inductor));
        }
    }
    let _ = writeln!(
        out,
        "{:>10.1}  {:>11.1}  {:>6}  total (every kernel of each side; ratio = ours / Inductor's)",
        c.ours_total_us,
        c.inductor_total_us,
        ratio(c.ratio)
    );
    let both: Vec<_> = c.rows.iter().filter(|r| r.ratio.is_some()).collect();
    if !both.is_empty() {
        let (o, i): (f64, f64) = both.iter().fold((0.0, 0.0), |(o, i), r| (o + r.ours_us.unwrap_or(0.0), i + r.inductor_us.unwrap_or(0.0)));
        let _ = writeln!(out, "{o:>10.1}  {i:>11.1}  {:>6}  the {} regions both sides time", ratio((i > 0.0).then(|| o / i)), both.len());
    }
    for n in &run.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}
