//! Two TORCH_TRACE logs of one model side by side (lite against default mode, or two torch
//! versions), each with the device time of its profiler trace when there is one: kernel counts,
//! how each original node ran in each (fused into a generated kernel, a library call, an ATen
//! fallback), and per-node and total device time. Nodes are matched by their original (dynamo)
//! names, which both runs share when they traced the same model.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use super::attribute::{attribute, CompiledKernels};
use super::kernel_time::{kernel_times, KernelTimes};
use crate::import::trace::{self, KernelKind, KernelTable};

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

/// One log read with its kernels per compile and, with a profile, their device time: what a
/// [`Side`] borrows.
pub struct Analysed {
    pub file: String,
    pub compiles: Vec<String>,
    pub tables: Vec<Vec<KernelTable>>,
    pub times: Option<KernelTimes>,
    /// The log's and the profile's warnings.
    pub warnings: Vec<String>,
}

impl Analysed {
    pub fn side(&self) -> Side<'_> {
        Side { file: &self.file, tables: &self.tables, times: self.times.as_ref() }
    }
}

/// Reads `log` (every compile with output code) and attributes `profile`'s device time to its
/// kernels, as `kernels LOG --profile TRACE` does.
pub fn analyse(log: &Path, profile: Option<&Path>) -> Result<Analysed, String> {
    let l = trace::load_log(log).map_err(|e| e.to_string())?;
    let mut a = Analysed { file: log.display().to_string(), compiles: Vec::new(), tables: Vec::new(), times: None, warnings: l.warnings.clone() };
    for c in l.compiles.iter().filter(|c| !c.output_code.is_empty()) {
        a.compiles.push(c.id.to_string());
        a.tables.push(trace::kernels(c, &l.file_access()));
    }
    if a.compiles.is_empty() {
        return Err(format!("{}: no compile in the log has Inductor's output code: no kernels to compare", a.file));
    }
    if let Some(p) = profile {
        let t = super::kineto::load(p).map_err(|e| e.to_string())?;
        a.warnings.extend(t.warnings.iter().map(|w| w.to_string()));
        let compiled: Vec<CompiledKernels<'_>> =
            a.compiles.iter().zip(&a.tables).map(|(id, t)| CompiledKernels { compile: id, tables: t }).collect();
        let owners = attribute(&t, &compiled);
        a.times = Some(kernel_times(&t, &compiled, &owners));
    }
    Ok(a)
}
