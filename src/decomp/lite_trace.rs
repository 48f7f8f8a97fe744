//! The lite-mode check of a real `torch.compile` run (a TORCH_TRACE log): every op of each
//! compile's dynamo graph is looked for in its AOT graph, and each one that is not there is
//! classified — marked (fine), composite on every backend (expected), the log's backend has no
//! kernel for it (violation), or decomposed although it has a kernel (violation). What the check
//! cannot attribute is reported as unverified, never passed.
//!
//! What a call is expected to become comes from the op registry ([`crate::ops::backend`]): the
//! traced expansion of the torch-level call (PyTorch's OpInfo samples through `make_fx` with no
//! decomposition table) and, per ATen op, which backends have a kernel of their own. Provenance
//! between the stages is the source location torch writes above each node (`# File: ...`); where a
//! graph has none (code run from `python -c`), the whole graph is one location.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::import::trace::{node_location, CompileRecord, SourceLoc, Stage, TraceLog};
use crate::ir::{Graph, NodeId, ValueKind};
use crate::ops::backend::{self, functional_name, Backend, BackendTable, OpFacts};

/// Why an op of the dynamo graph is, or is not, in the AOT graph.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The op itself is there: lite mode kept it.
    Kept,
    /// Not an op with a kernel anywhere: tracing always expands it (`linear` → `t` + `addmm`).
    Composite { into: Vec<String> },
    /// Marked `compile_with_inductor`: decomposing it was asked for.
    Marked,
    /// A no-op at these shapes: its output has its input's dtype, device, sizes and strides
    /// (`x.to(x.device)`, `x.contiguous()` on a contiguous tensor), so tracing returned the input.
    Elided,
    /// `op` (the call itself, or what it always expands to) has a CompositeImplicitAutograd body and a
    /// kernel on other backends but none on this one, so tracing expanded it: lite mode could not keep it.
    NoKernel { backend: Backend, op: String, elsewhere: Vec<String> },
    /// `op` has a kernel on this backend, yet it was decomposed although not marked.
    Decomposed { op: String, inductor_table: bool },
}

impl Verdict {
    pub fn is_violation(&self) -> bool {
        matches!(self, Verdict::NoKernel { .. } | Verdict::Decomposed { .. })
    }

    /// A short class name for tables and JSON.
    pub fn class(&self) -> &'static str {
        match self {
            Verdict::Kept => "kept",
            Verdict::Composite { .. } => "composite",
            Verdict::Marked => "marked",
            Verdict::Elided => "elided_no_op",
            Verdict::NoKernel { .. } => "no_backend_kernel",
            Verdict::Decomposed { .. } => "decomposed_unmarked",
        }
    }
}

/// One op of a dynamo graph, checked against one AOT graph of the same compile.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub compile_id: String,
    /// The AOT graph's name (`0/0:aot_inference_graph`).
    pub graph: String,
    /// The dynamo node and its target (`_fused_rms_norm`, `aten._fused_rms_norm`).
    pub node: String,
    pub node_id: NodeId,
    pub target: String,
    pub location: Option<SourceLoc>,
    pub backend: Option<Backend>,
    pub verdict: Verdict,
    /// The AOT ops at the same location: op → count (what it became).
    pub became: BTreeMap<String, usize>,
    /// The dynamo node carries `compile_with_inductor` (a kept marked node is worth a note: the
    /// mark allowed a decomposition that did not happen).
    pub marked: bool,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let became: Vec<String> = self.became.iter().map(|(op, n)| if *n > 1 { format!("{op}×{n}") } else { op.clone() }).collect();
        let into = if became.is_empty() { "nothing".to_string() } else { became.join(", ") };
        write!(f, "{}: node `{}` ({}) ", self.graph, self.node, self.target)?;
        match &self.verdict {
            Verdict::Kept if self.marked => write!(f, "is marked compile_with_inductor, yet was kept whole (became {into})")?,
            Verdict::Kept => write!(f, "kept")?,
            Verdict::Composite { into: c } if self.marked => {
                write!(f, "is marked compile_with_inductor, yet was kept whole as {}", c.join(", "))?
            }
            Verdict::Composite { into: c } => write!(f, "is composite on every backend, expected to become {}", c.join(", "))?,
            Verdict::Marked => write!(f, "is marked compile_with_inductor and became {into}")?,
            Verdict::Elided => write!(f, "is a no-op at these shapes (its output is its input) and was elided")?,
            Verdict::NoKernel { backend, op, elsewhere } => write!(
                f,
                "became {into}: {backend} has no kernel for aten.{op} (kernels on {}; CompositeImplicitAutograd elsewhere), so tracing expanded it before lite mode could keep it",
                elsewhere.join(", ")
            )?,
            Verdict::Decomposed { op, inductor_table } => write!(
                f,
                "became {into}: aten.{op} has a kernel here but was decomposed although not marked{}",
                if *inductor_table { " (it is in Inductor's default decomposition table)" } else { "" }
            )?,
        }
        if let Some(l) = &self.location {
            write!(f, " at {l}")?;
        }
        Ok(())
    }
}

/// Something the check could not look at: named, with why.
#[derive(Clone, Debug, PartialEq)]
pub struct Unverified {
    pub compile_id: String,
    /// The node (`graph: node (target)`) or the whole compile.
    pub what: String,
    pub reason: String,
}

impl std::fmt::Display for Unverified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.compile_id, self.what, self.reason)
    }
}

#[derive(Clone, Debug, Default)]
pub struct LogCheck {
    pub findings: Vec<Finding>,
    pub unverified: Vec<Unverified>,
    /// The torch version the log names (`pytorch_version` in its compilation metrics).
    pub log_torch: Option<String>,
    /// The table used for kernels and expansions.
    pub table_torch: String,
    /// Compiles with graphs that were compared.
    pub compared: usize,
}

impl LogCheck {
    pub fn violations(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.verdict.is_violation())
    }
}

/// Checks every compile of a log against the table of the log's torch version.
pub fn check_log(log: &TraceLog) -> LogCheck {
    let log_torch = log.compiles.iter().find_map(|c| c.metrics.as_ref().and_then(|m| m.pytorch_version.clone()));
    let Some(table) = backend::table_for(log_torch.as_deref()) else {
        return LogCheck {
            unverified: vec![Unverified {
                compile_id: "*".into(),
                what: log.file.clone(),
                reason: "no backend table is available".into(),
            }],
            log_torch,
            ..LogCheck::default()
        };
    };
    let mut out = LogCheck { log_torch, table_torch: table.torch.clone(), ..LogCheck::default() };
    for rec in &log.compiles {
        check_compile(rec, table, &mut out);
    }
    if out.compared == 0 && out.unverified.is_empty() {
        out.unverified.push(Unverified {
            compile_id: "*".into(),
            what: log.file.clone(),
            reason: "no compile in the log has a dynamo graph with ops and an AOT graph to compare".into(),
        });
    }
    out
}

fn check_compile(rec: &CompileRecord, table: &BackendTable, out: &mut LogCheck) {
    let id = rec.id.to_string();
    let dynamo = rec.graph(Stage::DynamoOutput);
    // The forward half is where the user's ops are; a joint graph stands in when it is alone.
    let mut aot: Vec<&Graph> = [Stage::AotInference, Stage::AotForward].iter().filter_map(|s| rec.graph(*s)).collect();
    if aot.is_empty() {
        aot.extend(rec.graph(Stage::AotJoint));
    }
    let Some(dynamo) = dynamo else {
        if !aot.is_empty() {
            out.unverified.push(Unverified {
                compile_id: id,
                what: "the whole compile".into(),
                reason: "its AOT graph is in the log but its dynamo graph is not (skipped or cut off), so nothing can be attributed".into(),
            });
        }
        return;
    };
    let ops = compared_ops(dynamo);
    if ops.is_empty() {
        return;
    }
    if aot.is_empty() {
        let why = rec.metrics.as_ref().and_then(|m| m.fail_reason.clone()).map(|r| format!(" (compile failed: {r})")).unwrap_or_default();
        out.unverified.push(Unverified {
            compile_id: id,
            what: "the whole compile".into(),
            reason: format!("its dynamo graph has {} op(s) but the log has no AOT graph for it{why}", ops.len()),
        });
        return;
    }
    out.compared += 1;
    for g in aot {
        let (findings, unverified) = check_pair(&id, dynamo, g, &ops, table);
        out.findings.extend(findings);
        out.unverified.extend(unverified);
    }
}

/// One compile's dynamo graph against one of its AOT graphs (the app's stage views call this for
/// the compile they show). The findings carry the dynamo node's id in [`Finding::node_id`].
pub fn check_graphs(compile_id: &str, dynamo: &Graph, aot: &Graph, table: &BackendTable) -> (Vec<Finding>, Vec<Unverified>) {
    check_pair(compile_id, dynamo, aot, &compared_ops(dynamo), table)
}

/// The dynamo nodes compared: tensor ops something reads. A node nothing reads (dynamo keeps some,
/// `head_arange = None`) is dropped by AOT's dead-code elimination, not decomposed.
fn compared_ops(dynamo: &Graph) -> Vec<NodeId> {
    let users = dynamo.users();
    let outputs: BTreeSet<crate::ir::ValueId> = dynamo.outputs.iter().flat_map(|a| a.values()).collect();
    let live = |n: NodeId| dynamo.node(n).outputs.iter().any(|v| outputs.contains(v) || !users[v.index()].is_empty());
    dynamo.node_ids().filter(|&n| is_tensor_op(dynamo, n) && live(n)).collect()
}

fn check_pair(id: &str, dynamo: &Graph, g: &Graph, ops: &[NodeId], table: &BackendTable) -> (Vec<Finding>, Vec<Unverified>) {
    let (mut findings, mut unverified) = (Vec::new(), Vec::new());
    let buckets = Buckets::new(g);
    let graph_backend = graph_device(dynamo);
    // The AOT ops each location's kept calls account for: what a vanished no-op may leave.
    let mut claimed: HashMap<Option<(String, u32, String)>, BTreeSet<String>> = HashMap::new();
    for &n in ops {
        let loc = node_location(dynamo, n);
        let present: BTreeSet<&str> = buckets.at(loc.as_ref()).iter().map(|(op, _)| op.as_str()).collect();
        if let Ok(alts) = alternatives(table, &dynamo.node(n).target) {
            if let Some(alt) = alts.iter().find(|a| a.ops.iter().all(|op| present.contains(op.as_str()))) {
                claimed.entry(loc.map(|l| (l.file, l.line, l.code))).or_default().extend(alt.ops.iter().cloned());
            }
        }
    }
    for &n in ops {
        let loc = node_location(dynamo, n);
        let loc_key = loc.clone().map(|l| (l.file, l.line, l.code));
        let claimed_here = claimed.get(&loc_key).cloned().unwrap_or_default();
        let node = dynamo.node(n);
        match check_node(table, dynamo, n, &buckets, graph_backend, &claimed_here) {
            Ok(verdict) => findings.push(Finding {
                compile_id: id.to_string(),
                graph: g.name.clone(),
                node: node.name.clone(),
                node_id: n,
                target: node.target.clone(),
                backend: node_device(dynamo, n).or(graph_backend),
                verdict,
                became: buckets.counts(loc.as_ref()),
                location: loc,
                marked: node.meta.compile_with_inductor(),
            }),
            Err(reason) => unverified.push(Unverified {
                compile_id: id.to_string(),
                what: format!("{}: node `{}` ({})", g.name, node.name, node.target),
                reason,
            }),
        }
    }
    (findings, unverified)
}

/// The AOT graph's ATen ops by source location (functional names), or all in one when the
/// graph carries no locations.
struct Buckets {
    located: bool,
    by_loc: HashMap<Option<(String, u32, String)>, Vec<(String, bool)>>,
}

impl Buckets {
    fn new(g: &Graph) -> Buckets {
        let mut by_loc: HashMap<_, Vec<(String, bool)>> = HashMap::new();
        let mut located = false;
        for id in g.node_ids() {
            let node = g.node(id);
            let Some((name, _)) = backend::aten_name(&node.target) else { continue };
            let loc = node_location(g, id).map(|l| (l.file, l.line, l.code));
            located |= loc.is_some();
            by_loc.entry(loc).or_default().push((functional_name(name).to_string(), node.meta.compile_with_inductor()));
        }
        Buckets { located, by_loc }
    }

    fn at(&self, loc: Option<&SourceLoc>) -> Vec<&(String, bool)> {
        if !self.located {
            return self.by_loc.values().flatten().collect();
        }
        let key = loc.map(|l| (l.file.clone(), l.line, l.code.clone()));
        self.by_loc.get(&key).map(|v| v.iter().collect()).unwrap_or_default()
    }

    fn counts(&self, loc: Option<&SourceLoc>) -> BTreeMap<String, usize> {
        self.at(loc).into_iter().fold(BTreeMap::new(), |mut m, (op, _)| {
            *m.entry(op.clone()).or_insert(0) += 1;
            m
        })
    }
}

/// A node that computes tensors (not sizes, not tuple indexing, not a graph input).
fn is_tensor_op(g: &Graph, n: crate::ir::NodeId) -> bool {
    let node = g.node(n);
    if node.target == "_operator.getitem" {
        // Picking an output of a multi-output op is no op of its own; indexing a tensor is a view.
        return false;
    }
    // Python-level size arithmetic (`torch.Size(...)`, `torch._sym_sqrt`, `math.ceil`): never a tensor.
    let t = node.target.as_str();
    if t == "torch.Size" || ["torch.sym_", "torch._sym_", "math.", "builtins."].iter().any(|p| t.starts_with(p)) {
        return false;
    }
    node.outputs.iter().any(|&v| match &g.value(v).kind {
        ValueKind::Tensor(_) => true,
        // Unannotated: a tuple (`_fused_rms_norm`'s two tensors) or a `torch.Size` (`x.size()`);
        // what its users pick out of it tells which.
        ValueKind::Other(text) if text.starts_with("Sym(") => false,
        ValueKind::Other(_) => {
            let picked: Vec<&ValueKind> = g
                .nodes
                .iter()
                .filter(|u| u.target == "_operator.getitem" && u.inputs().next() == Some(v))
                .flat_map(|u| u.outputs.iter().map(|&o| &g.value(o).kind))
                .collect();
            picked.is_empty() || picked.iter().any(|k| matches!(k, ValueKind::Tensor(_) | ValueKind::Other(_)))
        }
        _ => false,
    })
}

/// Whether `op` spells the words of `stem` in order (`scaled_dot_product_attention` in
/// `_scaled_dot_product_flash_attention`, `layer_norm` in `native_layer_norm`): a backend's own
/// kernel for the call under another name.
fn names_same_op(op: &str, stem: &str) -> bool {
    let mut words = op.split('_').filter(|w| !w.is_empty());
    let wanted: Vec<&str> = stem.split('_').filter(|w| !w.is_empty()).collect();
    !wanted.is_empty() && wanted.iter().all(|w| words.any(|o| o == *w))
}

/// Whether the node's (single) output has the dtype, device, sizes and strides of one of its tensor
/// inputs: then tracing may return the input itself, and the op leaves nothing behind.
fn is_identity(g: &Graph, n: NodeId) -> bool {
    let node = g.node(n);
    let [out] = node.outputs.as_slice() else { return false };
    let Some(o) = g.value(*out).tensor() else { return false };
    node.inputs().filter_map(|v| g.value(v).tensor()).any(|i| {
        i.dtype == o.dtype && i.device == o.device && i.sizes == o.sizes && i.strides == o.strides
    })
}

fn node_device(g: &Graph, n: crate::ir::NodeId) -> Option<Backend> {
    let node = g.node(n);
    node.outputs.iter().copied().chain(node.inputs()).find_map(|v| g.value(v).tensor().and_then(|t| Backend::parse(&t.device)))
}

/// The device of the graph's tensor inputs (most of them), for nodes that say none themselves.
fn graph_device(g: &Graph) -> Option<Backend> {
    let mut count: BTreeMap<Backend, usize> = BTreeMap::new();
    for (v, _) in &g.inputs {
        if let Some(b) = g.value(*v).tensor().and_then(|t| Backend::parse(&t.device)) {
            *count.entry(b).or_insert(0) += 1;
        }
    }
    count.into_iter().max_by_key(|(_, c)| *c).map(|(b, _)| b)
}

/// What a dynamo-graph call is expected to become, as alternative sets of ATen op names (views
/// left out): from the traced expansions of every embedded table (this version's first), or for an
/// ATen op with a kernel somewhere, the op itself.
/// One way a call can come out of tracing: its ATen ops (views left out), and whether the trace
/// stopped at kernel level (the op itself, or CUDA's trace, which has a kernel for nearly
/// everything) or went on through ops another backend lacks (a CPU trace).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Alt {
    ops: Vec<String>,
    kernel_level: bool,
}

fn alternatives(table: &BackendTable, target: &str) -> Result<Vec<Alt>, String> {
    let keys = expansion_keys(target);
    let mut alts: Vec<(Vec<String>, bool)> = Vec::new();
    let own = backend::aten_name(target).and_then(|(n, _)| table.op_by_name(n).map(|f| (n, f)));
    if let Some((name, facts)) = &own {
        if facts.has_any_kernel() {
            alts.push((vec![functional_name(name).to_string()], true));
        }
    }
    let tables = std::iter::once(table).chain(backend::embedded().iter().filter(|t| !std::ptr::eq(*t, table)));
    for t in tables {
        for k in &keys {
            if let Some(exp) = t.expansions.get(k) {
                for dev in ["cuda", "cpu"] {
                    alts.extend(exp.get(dev).into_iter().flatten().map(|a| (a.clone(), dev == "cuda")));
                }
            }
        }
    }
    if alts.is_empty() {
        // A call the traces do not cover: by name, if that names an ATen op with a kernel.
        let name = keys.last().and_then(|k| k.rsplit('.').next()).unwrap_or(target);
        return match table.op_by_name(name) {
            Some(f) if f.has_any_kernel() => Ok(vec![Alt { ops: vec![functional_name(name).to_string()], kernel_level: true }]),
            Some(_) => Err(format!("aten.{name} is composite and no traced expansion of `{target}` is in the table (torch {})", table.torch)),
            None => Err(format!("`{target}` is neither an ATen op nor a call whose expansion the table holds (torch {})", table.torch)),
        };
    }
    let mut seen = BTreeSet::new();
    Ok(alts
        .into_iter()
        .map(|(a, kernel_level)| {
            let mut ops: Vec<String> = a.into_iter().filter(|op| !table.op_by_name(op).is_some_and(|f| f.view)).collect();
            ops.sort();
            ops.dedup();
            Alt { ops, kernel_level }
        })
        .filter(|a| seen.insert(a.clone()))
        .collect())
}

/// The spellings a target may have in the expansion table: dynamo writes `torch.softmax`,
/// `Tensor.softmax`, `_operator.add`, `torch.nn.functional.layer_norm`, `aten._fused_rms_norm`.
fn expansion_keys(target: &str) -> Vec<String> {
    let mut keys = vec![target.to_string()];
    if let Some((name, ov)) = backend::aten_name(target) {
        keys.push(format!("torch.ops.aten.{name}"));
        if let Some(o) = ov {
            keys.push(format!("torch.ops.aten.{name}.{o}"));
        }
    }
    if let Some(rest) = target.strip_prefix("operator.") {
        keys.push(format!("_operator.{rest}"));
    }
    keys
}

fn check_node(
    table: &BackendTable,
    dynamo: &Graph,
    n: NodeId,
    buckets: &Buckets,
    graph_backend: Option<Backend>,
    claimed: &BTreeSet<String>,
) -> Result<Verdict, String> {
    let node = dynamo.node(n);
    let loc = node_location(dynamo, n);
    let here = buckets.at(loc.as_ref());
    let present: BTreeSet<&str> = here.iter().map(|(op, _)| op.as_str()).collect();
    let alts = alternatives(table, &node.target)?;
    // The call's own op name: `aten._fused_rms_norm` → `_fused_rms_norm`, `_operator.add` → `add`.
    let own = functional_name(backend::aten_name(&node.target).map(|(n, _)| n).unwrap_or_else(|| node.target.rsplit('.').next().unwrap_or(&node.target))).to_string();
    let fits = |a: &Alt| a.ops.iter().all(|op| present.contains(op.as_str()));
    let kept = |a: &Alt| {
        if a.ops.is_empty() || (a.ops.len() == 1 && a.ops[0] == own) {
            Verdict::Kept
        } else {
            Verdict::Composite { into: a.ops.clone() }
        }
    };
    if let Some(alt) = alts.iter().find(|a| a.kernel_level && fits(a)) {
        return Ok(kept(alt));
    }
    let Some(backend) = node_device(dynamo, n).or(graph_backend) else {
        return match alts.iter().find(|a| fits(a)) {
            Some(alt) => Ok(kept(alt)),
            None => Err("no tensor of the node or graph names a device, so no backend's kernels apply".into()),
        };
    };
    // What the call becomes at kernel level holds an op this backend has no kernel for (but
    // another has, and a composite body): whatever CPU's trace shows, tracing expanded it here
    // (`F.rms_norm` → `_fused_rms_norm` → pow, mean, ... on CPU).
    let forced = alts.iter().filter(|a| a.kernel_level).flat_map(|a| &a.ops).find_map(|op| {
        let f = table.op_by_name(op)?;
        (!f.has_kernel(backend) && f.composite && !f.inductor_backends().is_empty()).then(|| (op.clone(), f))
    });
    if let Some((op, f)) = &forced {
        if node.meta.compile_with_inductor() || here.iter().any(|(_, marked)| *marked) {
            return Ok(Verdict::Marked);
        }
        return Ok(Verdict::NoKernel { backend, op: op.clone(), elsewhere: f.kernels.clone() });
    }
    if let Some(alt) = alts.iter().find(|a| fits(a)) {
        return Ok(kept(alt));
    }
    // The backend's own kernel under another name (`layer_norm` → `native_layer_norm`,
    // `scaled_dot_product_attention` → `_scaled_dot_product_flash_attention`): kept.
    let stem = node.target.rsplit('.').next().unwrap_or(&node.target);
    if stem.trim_start_matches('_').len() >= 4 {
        if let Some(op) = present.iter().find(|op| names_same_op(op, stem) && table.op_by_name(op).is_some_and(|f| f.has_kernel(backend))) {
            return Ok(Verdict::Composite { into: vec![op.to_string()] });
        }
    }
    if node.meta.compile_with_inductor() || here.iter().any(|(_, marked)| *marked) {
        return Ok(Verdict::Marked);
    }
    // Nothing at its location is left unexplained by the calls kept there, and its output is its
    // input: a no-op that tracing returned as is, not a decomposition (which leaves its products).
    if is_identity(dynamo, n) && present.iter().all(|op| claimed.contains(*op)) {
        return Ok(Verdict::Elided);
    }
    // The alternative closest to what is there names what went missing.
    let best = alts
        .iter()
        .max_by_key(|a| (a.ops.iter().filter(|op| present.contains(op.as_str())).count(), usize::MAX - a.ops.len()))
        .map(|a| a.ops.clone())
        .unwrap_or_default();
    let missing: Vec<(String, Option<OpFacts>)> =
        best.into_iter().filter(|op| !present.contains(op.as_str())).map(|op| {
            let f = table.op_by_name(&op);
            (op, f)
        }).collect();
    for (op, f) in &missing {
        if let Some(f) = f {
            if !f.has_kernel(backend) && f.composite && !f.inductor_backends().is_empty() {
                return Ok(Verdict::NoKernel { backend, op: op.clone(), elsewhere: f.kernels.clone() });
            }
        }
    }
    for (op, f) in &missing {
        if let Some(f) = f {
            if f.has_kernel(backend) {
                return Ok(Verdict::Decomposed { op: op.clone(), inductor_table: f.inductor });
            }
        }
    }
    let names: Vec<&str> = missing.iter().map(|(op, _)| op.as_str()).collect();
    Err(format!(
        "expected {} at its location, and they are kernels of other backends only: the table (torch {}) has no trace of this call on {backend}",
        names.join(", "),
        table.torch
    ))
}

#[cfg(test)]
mod tests {
    use super::names_same_op;

    #[test]
    fn backend_kernels_under_other_names() {
        assert!(names_same_op("_scaled_dot_product_flash_attention", "scaled_dot_product_attention"));
        assert!(names_same_op("native_layer_norm", "layer_norm"));
        assert!(names_same_op("_fused_rms_norm", "rms_norm"));
        assert!(names_same_op("_softmax", "softmax"));
        assert!(!names_same_op("var_mean", "layer_norm"));
        assert!(!names_same_op("add", "addmm"));
        assert!(!names_same_op("anything", ""));
    }
}
