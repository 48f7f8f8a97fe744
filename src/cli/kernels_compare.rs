//! `kernels A --against B`: two logs of one model (lite against default mode, or two torch
//! versions) side by side. Nodes are matched by their original (dynamo) names, which both runs
//! share when they traced the same model.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use crate::import::trace::{KernelKind, KernelTable};
use crate::profile::kernel_time::KernelTimes;

/// One side: a log's kernel tables per compile and, with a profile, their times.
pub struct Side<'a> {
    pub file: &'a str,
    pub tables: &'a [Vec<KernelTable>],
    pub times: Option<&'a KernelTimes>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Counts {
    pub file: String,
    /// Generated (Triton, C++, other) kernels.
    pub generated: usize,
    /// Library call sites (`extern_kernels.*`).
    pub library: usize,
    /// ATen fallback call sites.
    pub fallback: usize,
    pub launches: usize,
    pub device_us: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct NodeDiff {
    pub node: String,
    /// `fused` (in a generated kernel), `library`, `fallback`, or `absent`.
    pub a: &'static str,
    pub b: &'static str,
    pub a_us: Option<f64>,
    pub b_us: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub a: Counts,
    pub b: Counts,
    /// Every original node either side names, with how each ran it.
    pub nodes: Vec<NodeDiff>,
}

fn how(kind: KernelKind) -> &'static str {
    match kind {
        KernelKind::Triton | KernelKind::Cpp | KernelKind::Generated => "fused",
        KernelKind::Extern => "library",
        KernelKind::Fallback => "fallback",
    }
}

/// Per original node: how it ran (a node in a generated kernel anywhere counts as fused) and its
/// device time, from one side.
fn per_node(s: &Side<'_>) -> (Counts, BTreeMap<String, &'static str>, BTreeMap<String, f64>) {
    let mut c = Counts { file: s.file.to_string(), ..Counts::default() };
    let mut ran: BTreeMap<String, &'static str> = BTreeMap::new();
    for tables in s.tables {
        for t in tables {
            c.launches += t.launches.len();
            for k in &t.kernels {
                match how(k.kind) {
                    "fused" => c.generated += 1,
                    "library" => c.library += 1,
                    _ => c.fallback += 1,
                }
                for n in &k.nodes {
                    let e = ran.entry(n.clone()).or_insert(how(k.kind));
                    if how(k.kind) == "fused" {
                        *e = "fused";
                    }
                }
            }
        }
    }
    let mut us = BTreeMap::new();
    if let Some(t) = s.times {
        c.device_us = Some(t.attributed_us);
        for n in &t.nodes {
            *us.entry(n.node.clone()).or_insert(0.0) += n.device_us;
        }
    }
    (c, ran, us)
}

pub fn compare(a: &Side<'_>, b: &Side<'_>) -> Comparison {
    let (ca, ra, ua) = per_node(a);
    let (cb, rb, ub) = per_node(b);
    let names: BTreeSet<&String> = ra.keys().chain(rb.keys()).collect();
    let mut nodes: Vec<NodeDiff> = names
        .into_iter()
        .map(|n| NodeDiff {
            node: n.clone(),
            a: ra.get(n).copied().unwrap_or("absent"),
            b: rb.get(n).copied().unwrap_or("absent"),
            a_us: ua.get(n).copied(),
            b_us: ub.get(n).copied(),
        })
        .collect();
    let diff = |d: &NodeDiff| (d.b_us.unwrap_or(0.0) - d.a_us.unwrap_or(0.0)).abs();
    nodes.sort_by(|x, y| diff(y).total_cmp(&diff(x)).then(x.node.cmp(&y.node)));
    Comparison { a: ca, b: cb, nodes }
}

pub fn summary(c: &Comparison) -> String {
    let mut s = String::new();
    for (tag, k) in [("A", &c.a), ("B", &c.b)] {
        let time = k.device_us.map(|u| format!(", {u:.1} us attributed device time")).unwrap_or_default();
        let _ = writeln!(
            s,
            "{tag}: {}: {} generated kernels, {} library calls, {} fallbacks, {} launches{time}",
            k.file, k.generated, k.library, k.fallback, k.launches
        );
    }
    let changed: Vec<&NodeDiff> = c.nodes.iter().filter(|d| d.a != d.b).collect();
    let _ = writeln!(s, "\nnodes run differently ({} of {}):", changed.len(), c.nodes.len());
    for d in changed.iter().take(40) {
        let _ = writeln!(s, "  {:<40} A {:<8} B {}", d.node, d.a, d.b);
    }
    if changed.len() > 40 {
        let _ = writeln!(s, "  ... {} more", changed.len() - 40);
    }
    if c.nodes.iter().any(|d| d.a_us.is_some() || d.b_us.is_some()) {
        let _ = writeln!(s, "\nper node device time (largest differences first):");
        let fmt = |u: Option<f64>| u.map_or("-".to_string(), |u| format!("{u:.1}"));
        for d in c.nodes.iter().take(30) {
            let delta = d.b_us.unwrap_or(0.0) - d.a_us.unwrap_or(0.0);
            let _ = writeln!(s, "  {:<40} A {:>9} us  B {:>9} us  B-A {:>+9.1} us", d.node, fmt(d.a_us), fmt(d.b_us), delta);
        }
        if let (Some(a), Some(b)) = (c.a.device_us, c.b.device_us) {
            let _ = writeln!(s, "  total: A {a:.1} us, B {b:.1} us, B-A {:+.1} us", b - a);
        }
    }
    s
}
