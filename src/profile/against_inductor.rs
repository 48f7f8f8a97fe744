//! Our kernels beside Inductor's, region by region: our profile of a model (each kernel's
//! median device time and the original nodes it computes) next to Inductor's kernels of the same
//! model compiled by `torch.compile` (a TORCH_TRACE log) and their times in a `torch.profiler`
//! trace of it, on the same machine.
//!
//! The two sides name their nodes differently: ours are the export's (`linear`, `gelu`),
//! Inductor's are dynamo's (`linear`, `x`), and their ops differ in spelling
//! (`aten.gelu.default` against `torch._C._nn.gelu`). Nodes are paired, strongest evidence
//! first, by
//! 1. the user's source line (the innermost frame of the node's stack trace outside torch's own
//!    package, so a `Linear` in the export, whose innermost frame is `linear.py`, meets dynamo's,
//!    whose trace stops at the caller's line; files compared by their path inside
//!    `site-packages`, else by name, so an export made in another environment still pairs) and
//!    the op, in graph order among equals;
//! 2. the source line alone, for what is left at a line on both sides (an op spelled apart);
//! 3. the name and op, for nodes without a source line;
//! 4. the op, in order, among what is left (a longest common subsequence of their ops, kept only
//!    where it does not cross a pair already made): an export whose stack traces skip a frame
//!    that dynamo's keep (torchvision's `_forward_impl`) still pairs its stem's nodes.
//!
//! Then our kernels, Inductor's kernels and the paired nodes form a graph (a kernel joins the
//! nodes it computes, a pair joins its two nodes), and each connected component is one row:
//! what one side fuses into one kernel and the other splits in two lands in one row with both of
//! the other's kernels. A row with one side's kernels only is a region the other side runs
//! without a kernel (views) or whose nodes found no partner.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::trace::Trace;
use crate::import::trace::KernelKind;
use crate::ir::Graph;
use crate::lower::Plan;

/// One of our kernels: its median device time per run and the original nodes it computes (a
/// kernel that no timed repetition launched has 0).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OurKernel {
    pub name: String,
    pub nodes: Vec<String>,
    pub median_us: f64,
}

/// One of Inductor's kernels (a generated kernel, or one library or fallback call site).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InductorKernel {
    pub compile: String,
    pub name: String,
    pub kind: KernelKind,
    /// Original (dynamo) nodes, of the compile's graph.
    pub nodes: Vec<String>,
    /// Median per run of the compiled graph; `None` when the trace holds no call of it.
    pub median_us: Option<f64>,
}

/// Our side: the model's graph (original nodes, with their source lines) and our kernels.
pub struct Ours<'a> {
    pub graph: &'a Graph,
    pub kernels: Vec<OurKernel>,
}

/// Inductor's side: dynamo's graph per compile and the kernels.
pub struct Inductor<'a> {
    pub graphs: Vec<(String, &'a Graph)>,
    pub kernels: Vec<InductorKernel>,
}

/// What paired two nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairedBy {
    LineAndOp,
    Line,
    NameAndOp,
    /// The same op at the same place in order among what is left, between paired nodes.
    Order,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodePair {
    pub ours: String,
    pub compile: String,
    pub inductor: String,
    pub by: PairedBy,
}

/// One region: a connected component of kernels and nodes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// Original nodes our kernels of the region compute, and Inductor's kernels'.
    pub ours_nodes: Vec<String>,
    pub inductor_nodes: Vec<String>,
    pub ours: Vec<String>,
    pub ours_us: Option<f64>,
    /// Inductor's kernels, each `name (kind)`.
    pub inductor: Vec<String>,
    /// The sum of its kernels' medians; `None` when none of them has a time.
    pub inductor_us: Option<f64>,
    /// `ours_us / inductor_us`: above 1, ours is slower.
    pub ratio: Option<f64>,
    /// Nodes of the row that found no partner on the other side: computed by one side's
    /// kernels only as far as the pairing can tell (a view Inductor folds into a kernel, an op
    /// one side spells in a way the other has no line for).
    pub unpaired_ours: Vec<String>,
    pub unpaired_inductor: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub rows: Vec<Row>,
    pub pairs: Vec<NodePair>,
    pub ours_total_us: f64,
    pub inductor_total_us: f64,
    pub ratio: Option<f64>,
}

fn kind_name(k: KernelKind) -> &'static str {
    match k {
        KernelKind::Triton => "triton",
        KernelKind::Cpp => "c++",
        KernelKind::Generated => "generated",
        KernelKind::Extern => "library",
        KernelKind::Fallback => "fallback",
    }
}

/// Whether a frame is inside torch's own package (`torch/nn/modules/linear.py`): the export's
/// trace goes into module code that dynamo's stops before.
fn in_torch(file: &str) -> bool {
    let f = file.replace('\\', "/");
    ["site-packages/torch/", "dist-packages/torch/"].iter().any(|p| f.contains(p)) || f.starts_with("torch/")
}

/// A frame's file as both sides can share it: under a `site-packages` (or `dist-packages`)
/// folder the path below it (`torchvision/models/resnet.py`), else the file's name, so an export
/// made in another environment or folder still meets the log's frames.
fn shared_file(file: &str) -> String {
    let f = file.replace('\\', "/");
    for p in ["site-packages/", "dist-packages/"] {
        if let Some(at) = f.rfind(p) {
            return f[at + p.len()..].to_string();
        }
    }
    f.rsplit('/').next().unwrap_or(&f).to_string()
}

/// The innermost frame of a Python traceback outside torch's package: `(file, line)`, the file
/// as [`shared_file`] spells it.
pub fn user_line(stack: &str) -> Option<(String, u32)> {
    let frames: Vec<(String, u32)> = stack
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("File \"")?;
            let (file, rest) = rest.split_once('"')?;
            let line = rest.trim_start_matches(", line ").split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
            Some((file.to_string(), line))
        })
        .collect();
    frames.iter().rev().find(|(f, _)| !in_torch(f)).or(frames.last()).map(|(f, l)| (shared_file(f), *l))
}

/// The op a target names, spelled one way for both graphs: `aten.relu_.default`,
/// `torch.nn.functional.relu` and `torch.relu` are all `relu`; `_operator.iadd` is `add`.
pub fn op_concept(target: &str) -> String {
    let t = target.strip_prefix("torch.ops.").unwrap_or(target);
    let parts: Vec<&str> = t.split('.').collect();
    let op = match parts.as_slice() {
        ["aten" | "prims", op, ..] => op,
        [.., op] => op,
        [] => "",
    };
    let op = op.trim_matches('_');
    let op = match parts.first() {
        Some(&"_operator") if op.len() > 1 && op.starts_with('i') && !matches!(op, "invert" | "is_" | "index") => &op[1..],
        _ => op,
    };
    op.to_string()
}

/// A compute node of a graph: name, op, source line.
struct Site {
    name: String,
    op: String,
    line: Option<(String, u32)>,
}

fn sites(g: &Graph) -> Vec<Site> {
    g.nodes
        .iter()
        .map(|n| Site { name: n.name.clone(), op: op_concept(&n.target), line: n.meta.stack_trace.as_deref().and_then(user_line) })
        .collect()
}

/// Pairs our graph's nodes with Inductor's graphs' (see the module docs).
pub fn pair_nodes(ours: &Graph, theirs: &[(String, &Graph)]) -> Vec<NodePair> {
    let a = sites(ours);
    let b: Vec<(usize, Site)> = theirs.iter().enumerate().flat_map(|(gi, (_, g))| sites(g).into_iter().map(move |s| (gi, s))).collect();
    let mut paired_a = vec![false; a.len()];
    let mut paired_b = vec![false; b.len()];
    let mut out = Vec::new();
    let mut push = |i: usize, j: usize, by: PairedBy, pa: &mut [bool], pb: &mut [bool]| {
        pa[i] = true;
        pb[j] = true;
        out.push(NodePair { ours: a[i].name.clone(), compile: theirs[b[j].0].0.clone(), inductor: b[j].1.name.clone(), by });
    };
    let mut at_a: BTreeMap<&(String, u32), Vec<usize>> = BTreeMap::new();
    for (i, s) in a.iter().enumerate() {
        if let Some(l) = &s.line {
            at_a.entry(l).or_default().push(i);
        }
    }
    let mut at_b: BTreeMap<&(String, u32), Vec<usize>> = BTreeMap::new();
    for (j, (_, s)) in b.iter().enumerate() {
        if let Some(l) = &s.line {
            at_b.entry(l).or_default().push(j);
        }
    }
    for (line, is) in &at_a {
        let Some(js) = at_b.get(line) else { continue };
        // The k-th node of an op at this line with the k-th of the same op on the other side.
        let mut by_op: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for &j in js {
            by_op.entry(b[j].1.op.as_str()).or_default().push(j);
        }
        let mut taken: HashMap<&str, usize> = HashMap::new();
        for &i in is {
            let k = taken.entry(a[i].op.as_str()).or_insert(0);
            if let Some(&j) = by_op.get(a[i].op.as_str()).and_then(|v| v.get(*k)) {
                *k += 1;
                push(i, j, PairedBy::LineAndOp, &mut paired_a, &mut paired_b);
            }
        }
        // An op spelled apart on the two sides: what is left at the line pairs with what is left,
        // when that is few enough to mean the same code (not every node of a loop body).
        let left_a: Vec<usize> = is.iter().copied().filter(|&i| !paired_a[i]).collect();
        let left_b: Vec<usize> = js.iter().copied().filter(|&j| !paired_b[j]).collect();
        if !left_a.is_empty() && !left_b.is_empty() && left_a.len() <= 2 && left_b.len() <= 2 {
            for &i in &left_a {
                for &j in &left_b {
                    push(i, j, PairedBy::Line, &mut paired_a, &mut paired_b);
                }
            }
        }
    }
    let mut by_name: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (j, (_, s)) in b.iter().enumerate() {
        by_name.entry((s.name.as_str(), s.op.as_str())).or_default().push(j);
    }
    for i in 0..a.len() {
        if paired_a[i] {
            continue;
        }
        if let Some([j]) = by_name.get(&(a[i].name.as_str(), a[i].op.as_str())).map(Vec::as_slice) {
            if !paired_b[*j] {
                push(i, *j, PairedBy::NameAndOp, &mut paired_a, &mut paired_b);
            }
        }
    }
    let late = in_order(&a, &b, theirs, &paired_a, &paired_b, &out);
    out.extend(late.into_iter().map(|(i, j)| NodePair { ours: a[i].name.clone(), compile: theirs[b[j].0].0.clone(), inductor: b[j].1.name.clone(), by: PairedBy::Order }));
    out
}

/// Pass 4: the unpaired nodes of both sides aligned by op in graph order, each pair kept only
/// where every pair made so far lies wholly before or wholly after it on both sides.
fn in_order(
    a: &[Site],
    b: &[(usize, Site)],
    compiles: &[(String, &Graph)],
    paired_a: &[bool],
    paired_b: &[bool],
    made: &[NodePair],
) -> Vec<(usize, usize)> {
    let left_a: Vec<usize> = (0..a.len()).filter(|&i| !paired_a[i]).collect();
    let left_b: Vec<usize> = (0..b.len()).filter(|&j| !paired_b[j]).collect();
    let ops_a: Vec<&str> = left_a.iter().map(|&i| a[i].op.as_str()).collect();
    let ops_b: Vec<&str> = left_b.iter().map(|&j| b[j].1.op.as_str()).collect();
    // Positions of the pairs made so far: (ours index, theirs index).
    let index_a: HashMap<&str, usize> = a.iter().enumerate().map(|(i, s)| (s.name.as_str(), i)).collect();
    let index_b: HashMap<(usize, &str), usize> = b.iter().enumerate().map(|(j, (g, s))| ((*g, s.name.as_str()), j)).collect();
    let graph_of: HashMap<&str, usize> = compiles.iter().enumerate().map(|(g, (id, _))| (id.as_str(), g)).collect();
    let anchors: Vec<(usize, usize)> = made
        .iter()
        .filter_map(|p| Some((*index_a.get(p.ours.as_str())?, *index_b.get(&(*graph_of.get(p.compile.as_str())?, p.inductor.as_str()))?)))
        .collect();
    // Per ours position: the largest theirs position paired before it and the smallest after.
    let mut before = vec![None::<usize>; a.len() + 1];
    let mut after = vec![None::<usize>; a.len() + 1];
    for &(i, j) in &anchors {
        before[i + 1] = Some(before[i + 1].map_or(j, |x: usize| x.max(j)));
        after[i] = Some(after[i].map_or(j, |x: usize| x.min(j)));
    }
    for i in 1..=a.len() {
        before[i] = before[i].max(before[i - 1]);
    }
    for i in (0..a.len()).rev() {
        after[i] = match (after[i], after[i + 1]) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
    }
    crate::diff::lcs::align(&ops_a, &ops_b)
        .into_iter()
        .map(|(x, y)| (left_a[x], left_b[y]))
        .filter(|&(i, j)| before[i + 1].is_none_or(|lo| lo < j) && after[i].is_none_or(|hi| j < hi))
        .collect()
}

/// Union-find over the vertices of the region graph.
struct Sets(Vec<usize>);

impl Sets {
    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }
    fn join(&mut self, x: usize, y: usize) {
        let (x, y) = (self.find(x), self.find(y));
        if x != y {
            self.0[x.max(y)] = x.min(y);
        }
    }
}

pub fn compare(ours: &Ours<'_>, theirs: &Inductor<'_>) -> Comparison {
    let pairs = pair_nodes(ours.graph, &theirs.graphs);
    // Vertices: our kernels, Inductor's kernels, then nodes as met (ours, theirs by compile).
    let (na, nb) = (ours.kernels.len(), theirs.kernels.len());
    let mut node_ids: HashMap<(bool, String, String), usize> = HashMap::new();
    let mut sets = Sets((0..na + nb).collect());
    let mut node = |sets: &mut Sets, key: (bool, String, String)| {
        let next = sets.0.len();
        let id = *node_ids.entry(key).or_insert(next);
        if id == next {
            sets.0.push(id);
        }
        id
    };
    for (k, kernel) in ours.kernels.iter().enumerate() {
        for n in &kernel.nodes {
            let v = node(&mut sets, (false, String::new(), n.clone()));
            sets.join(k, v);
        }
    }
    for (k, kernel) in theirs.kernels.iter().enumerate() {
        for n in &kernel.nodes {
            let v = node(&mut sets, (true, kernel.compile.clone(), n.clone()));
            sets.join(na + k, v);
        }
    }
    for p in &pairs {
        let x = node(&mut sets, (false, String::new(), p.ours.clone()));
        let y = node(&mut sets, (true, p.compile.clone(), p.inductor.clone()));
        sets.join(x, y);
    }
    let mut groups: BTreeMap<usize, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for k in 0..na + nb {
        let root = sets.find(k);
        let g = groups.entry(root).or_default();
        if k < na {
            g.0.push(k);
        } else {
            g.1.push(k - na);
        }
    }
    let several = theirs.graphs.len() > 1;
    let paired_ours: std::collections::HashSet<&str> = pairs.iter().map(|p| p.ours.as_str()).collect();
    let paired_theirs: std::collections::HashSet<(&str, &str)> = pairs.iter().map(|p| (p.compile.as_str(), p.inductor.as_str())).collect();
    let mut rows: Vec<Row> = groups
        .into_values()
        .map(|(a, b)| {
            let mut ours_nodes: Vec<String> = Vec::new();
            for &k in &a {
                for n in &ours.kernels[k].nodes {
                    if !ours_nodes.contains(n) {
                        ours_nodes.push(n.clone());
                    }
                }
            }
            let mut inductor_nodes: Vec<String> = Vec::new();
            let mut unpaired_inductor: Vec<String> = Vec::new();
            for &k in &b {
                let kernel = &theirs.kernels[k];
                for n in &kernel.nodes {
                    let shown = if several { format!("{} [{}]", n, kernel.compile) } else { n.clone() };
                    if !paired_theirs.contains(&(kernel.compile.as_str(), n.as_str())) && !unpaired_inductor.contains(&shown) {
                        unpaired_inductor.push(shown.clone());
                    }
                    if !inductor_nodes.contains(&shown) {
                        inductor_nodes.push(shown);
                    }
                }
            }
            let unpaired_ours: Vec<String> = ours_nodes.iter().filter(|n| !paired_ours.contains(n.as_str())).cloned().collect();
            let ours_us = (!a.is_empty()).then(|| a.iter().map(|&k| ours.kernels[k].median_us).sum::<f64>());
            let timed: Vec<f64> = b.iter().filter_map(|&k| theirs.kernels[k].median_us).collect();
            let inductor_us = (!timed.is_empty()).then(|| timed.iter().sum::<f64>());
            let ratio = match (ours_us, inductor_us) {
                (Some(o), Some(i)) if i > 0.0 => Some(o / i),
                _ => None,
            };
            Row {
                ours_nodes,
                inductor_nodes,
                ours: a.iter().map(|&k| ours.kernels[k].name.clone()).collect(),
                ours_us,
                inductor: b.iter().map(|&k| format!("{} ({})", theirs.kernels[k].name, kind_name(theirs.kernels[k].kind))).collect(),
                inductor_us,
                ratio,
                unpaired_ours,
                unpaired_inductor,
            }
        })
        .collect();
    let key = |r: &Row| r.ours_us.or(r.inductor_us).unwrap_or(0.0);
    rows.sort_by(|x, y| y.ours_us.is_some().cmp(&x.ours_us.is_some()).then(key(y).total_cmp(&key(x))));
    let ours_total_us: f64 = ours.kernels.iter().map(|k| k.median_us).sum();
    let inductor_total_us: f64 = theirs.kernels.iter().filter_map(|k| k.median_us).sum();
    let ratio = (inductor_total_us > 0.0).then(|| ours_total_us / inductor_total_us);
    Comparison { rows, pairs, ours_total_us, inductor_total_us, ratio }
}

/// Our kernels of `plan` with their median device time per timed repetition of `trace`, each
/// with the nodes of `original` (the model's graph, before decomposition) it computes: a
/// decomposed or expanded node's origin is the deepest entry of its `from_node` chain that
/// names a node of `original`.
pub fn our_kernels(plan: &Plan, original: &Graph, trace: &Trace) -> Vec<OurKernel> {
    let names: std::collections::HashSet<&str> = original.nodes.iter().map(|n| n.name.as_str()).collect();
    let mut per_rep: HashMap<&str, BTreeMap<u32, u64>> = HashMap::new();
    for k in trace.timed_kernels() {
        *per_rep.entry(k.launch.kernel.as_str()).or_default().entry(k.repetition).or_insert(0) += k.dur_ns;
    }
    plan.steps
        .iter()
        .filter_map(|step| {
            let k = step.kernel()?;
            let mut nodes: Vec<String> = Vec::new();
            for n in step.nodes() {
                let node = plan.graph.node(n);
                let origin = node
                    .meta
                    .from_node
                    .iter()
                    .rev()
                    .map(|o| o.name.as_str())
                    .chain([node.name.as_str(), plan.attributed(n)])
                    .find(|name| names.contains(name))
                    .unwrap_or_else(|| plan.attributed(n));
                if !nodes.iter().any(|m| m == origin) {
                    nodes.push(origin.to_string());
                }
            }
            // The upper median of an even count, as `profile`'s own per-node table takes it.
            let mut reps: Vec<u64> = per_rep.get(k.name.as_str()).map_or(Vec::new(), |r| r.values().copied().collect());
            reps.sort_unstable();
            let median_us = reps.get(reps.len() / 2).map_or(0.0, |&ns| ns as f64 / 1e3);
            Some(OurKernel { name: k.name.clone(), nodes, median_us })
        })
        .collect()
}

#[cfg(test)]
#[path = "against_inductor_tests.rs"]
mod tests;
