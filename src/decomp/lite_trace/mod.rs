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
use crate::ir::{Graph, NodeId};
use crate::ops::backend::{self, Backend, BackendTable};
use crate::ops::traced::TracedCalls;

mod call;
mod count;
mod cse;
mod expect;
mod graph;
mod node;
mod train;

use expect::{alternatives, Alt};
use graph::{graph_device, is_tensor_op, node_device, Buckets, LocKey};
use node::check_node;
use train::Side;
pub use train::{BackwardNote, BackwardVerdict};

pub use call::{call_spec, explain_untraced, untraced_calls};

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
    /// Training: not in the forward graph, but `ops` are in the backward graph — the partitioner
    /// moved or recomputed the call there (it computes `arange`, `silu` again rather than saving
    /// them), so it was kept, not decomposed.
    InBackward { ops: Vec<String> },
    /// Training: the same op on the same inputs as the earlier node `with`; AOT's
    /// common-subexpression elimination computes both once, so this call has no ops of its own
    /// (see `cse`). Its fate is `with`'s.
    Merged { with: String },
}

impl Verdict {
    pub fn is_violation(&self) -> bool {
        matches!(self, Verdict::NoKernel { .. } | Verdict::Decomposed { .. })
    }

    /// Fine, yet worth a line of its own in a report.
    pub fn is_note(&self) -> bool {
        matches!(self, Verdict::Composite { .. } | Verdict::Marked | Verdict::Elided | Verdict::InBackward { .. } | Verdict::Merged { .. })
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
            Verdict::InBackward { .. } => "in_backward",
            Verdict::Merged { .. } => "merged_identical",
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
            Verdict::InBackward { ops } => write!(
                f,
                "is not in the forward graph, but {} is in the backward graph (moved or recomputed there by the partitioner): kept",
                ops.join(", ")
            )?,
            Verdict::Merged { with } => {
                write!(f, "is the same op on the same inputs as `{with}`: AOT's common-subexpression elimination computes them once")?
            }
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
    /// The dynamo node whose call no table has a trace of (at its arguments, on its device): a trace
    /// with the user's own torch (`check-lite --python`) can settle it.
    pub untraced: Option<NodeId>,
}

/// Why one node could not be checked.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct NotChecked {
    pub(super) reason: String,
    /// A trace of the call is what is missing.
    pub(super) untraced: bool,
}

impl NotChecked {
    pub(super) fn untraced(reason: String) -> NotChecked {
        NotChecked { reason, untraced: true }
    }
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
    /// Training compiles: what the backward graph did with the gradients of the user's ops
    /// (notes, not violations: lite mode concerns the user's forward ops).
    pub backward: Vec<BackwardNote>,
}

impl LogCheck {
    pub fn violations(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.verdict.is_violation())
    }

    /// The verdict in one line, as `check-lite` ends with it (`ok: …`, `FAIL: …`, `UNVERIFIED: …`),
    /// so the CLI and the app say the same thing about a log.
    pub fn summary(&self) -> String {
        let table = format!("op tables of torch {} (log: {})", self.table_torch, self.log_torch.as_deref().unwrap_or("version not recorded"));
        let kept = self.findings.iter().filter(|f| f.verdict == Verdict::Kept).count();
        let summary = format!("{} op(s) compared in {} compile(s); {kept} kept", self.findings.len(), self.compared);
        let violations = self.violations().count();
        if violations > 0 {
            let mut ops: Vec<&str> = self.violations().map(|f| f.target.as_str()).collect();
            ops.sort();
            ops.dedup();
            format!("FAIL: {violations} unmarked op(s) decomposed: {}; {summary} ({table})", ops.join(", "))
        } else if !self.unverified.is_empty() {
            format!("UNVERIFIED: {} thing(s) could not be checked; no violation in the rest; {summary} ({table})", self.unverified.len())
        } else {
            format!("ok: {summary}; only marked ops were decomposed ({table})")
        }
    }

    /// What to do about the calls no table has a trace of, when there are any.
    pub fn untraced_hint(&self) -> Option<String> {
        let untraced = self.unverified.iter().filter(|u| u.untraced.is_some()).count();
        (untraced > 0).then(|| {
            format!("{untraced} call(s) have no trace in the tables; `--python PATH` (a python with torch) traces them at this log's shapes")
        })
    }
}

/// The torch version a log names (`pytorch_version` in its compilation metrics).
pub fn log_torch(log: &TraceLog) -> Option<String> {
    log.compiles.iter().find_map(|c| c.metrics.as_ref().and_then(|m| m.pytorch_version.clone()))
}

/// Checks every compile of a log against the tables of the log's torch version and what the user's
/// torch traced of calls they lack ([`TracedCalls::user`]).
pub fn check_log(log: &TraceLog) -> LogCheck {
    let (traced, _) = TracedCalls::user(log_torch(log).as_deref());
    check_log_with(log, &traced)
}

/// [`check_log`] with the traced calls given.
pub fn check_log_with(log: &TraceLog, traced: &TracedCalls) -> LogCheck {
    let log_torch = log_torch(log);
    let Some(table) = backend::table_for(log_torch.as_deref()) else {
        return LogCheck {
            unverified: vec![Unverified {
                compile_id: "*".into(),
                what: log.file.clone(),
                reason: "no backend table is available".into(),
                untraced: None,
            }],
            log_torch,
            ..LogCheck::default()
        };
    };
    let mut out = LogCheck { log_torch, table_torch: table.torch.clone(), ..LogCheck::default() };
    for rec in &log.compiles {
        check_compile(rec, table, traced, &mut out);
    }
    if out.compared == 0 && out.unverified.is_empty() {
        out.unverified.push(Unverified {
            compile_id: "*".into(),
            what: log.file.clone(),
            reason: "no compile in the log has a dynamo graph with ops and an AOT graph to compare".into(),
            untraced: None,
        });
    }
    out
}

fn check_compile(rec: &CompileRecord, table: &BackendTable, traced: &TracedCalls, out: &mut LogCheck) {
    let id = rec.id.to_string();
    let dynamo = rec.graph(Stage::DynamoOutput);
    // The forward side is where the user's ops are; a joint graph's forward half stands in when
    // the partitioned graphs are not in the log.
    let aot = train::sides(rec);
    let Some(dynamo) = dynamo else {
        if !aot.is_empty() {
            out.unverified.push(Unverified {
                compile_id: id,
                what: "the whole compile".into(),
                reason: "its AOT graph is in the log but its dynamo graph is not (skipped or cut off), so nothing can be attributed".into(),
                untraced: None,
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
            untraced: None,
        });
        return;
    }
    out.compared += 1;
    for (fwd, bwd) in aot {
        let (findings, unverified) = check_pair(&id, dynamo, &fwd, bwd.as_ref(), &ops, table, traced);
        if let Some(bwd) = &bwd {
            // The gradients of what the forward holds, and of what the user's calls should have
            // been where the forward lacks them (a decomposed op's gradient was decomposed too).
            let mut forward_ops = fwd.ops();
            for f in &findings {
                match &f.verdict {
                    Verdict::Decomposed { op, .. } | Verdict::NoKernel { op, .. } => forward_ops.insert(op.clone()),
                    _ => false,
                };
            }
            let backend = graph_device(dynamo).or_else(|| ops.iter().find_map(|&n| node_device(dynamo, n)));
            out.backward.extend(train::backward_notes(&id, &forward_ops, bwd, backend, table));
        }
        out.findings.extend(findings);
        out.unverified.extend(unverified);
    }
}

/// One compile's dynamo graph against one of its AOT graphs (the app's stage views call this for
/// the compile they show). The findings carry the dynamo node's id in [`Finding::node_id`].
pub fn check_graphs(compile_id: &str, dynamo: &Graph, aot: &Graph, table: &BackendTable, traced: &TracedCalls) -> (Vec<Finding>, Vec<Unverified>) {
    check_pair(compile_id, dynamo, &Side::whole(aot), None, &compared_ops(dynamo), table, traced)
}

/// The dynamo nodes compared: tensor ops the graph's outputs depend on. A node nothing reads, or
/// whose readers are themselves dead (BigBird's pooler: `linear` read only by a `tanh` whose result
/// dynamo sets to None), is dropped by AOT's dead-code elimination, not decomposed. In-place calls
/// (`Tensor.add_`) write their inputs and count as read.
fn compared_ops(dynamo: &Graph) -> Vec<NodeId> {
    let live = live_nodes(dynamo);
    dynamo.node_ids().filter(|&n| is_tensor_op(dynamo, n) && live[n.index()]).collect()
}

/// Which nodes the outputs (or an in-place write) depend on, walking producers back from them.
fn live_nodes(g: &Graph) -> Vec<bool> {
    let mut producer: Vec<Option<NodeId>> = vec![None; g.values.len()];
    for n in g.node_ids() {
        for v in &g.node(n).outputs {
            producer[v.index()] = Some(n);
        }
    }
    let writes = |n: NodeId| writes_input(&g.node(n).target);
    let mut live = vec![false; g.nodes.len()];
    let mut stack: Vec<crate::ir::ValueId> = g.outputs.iter().flat_map(|a| a.values()).collect();
    for n in g.node_ids().filter(|&n| writes(n)) {
        live[n.index()] = true;
        stack.extend(g.node(n).inputs());
    }
    while let Some(v) = stack.pop() {
        let Some(p) = producer.get(v.index()).copied().flatten() else { continue };
        if !live[p.index()] {
            live[p.index()] = true;
            stack.extend(g.node(p).inputs());
        }
    }
    live
}

/// Whether a call writes its input: an in-place method or op (`Tensor.add_`, `aten.add_.Tensor`)
/// or an augmented assignment (`_operator.iadd`). Python's plain operators `and_`, `or_`, `not_`
/// end in `_` only to dodge keywords: `mask & m` writes nothing, and a mask built from it that
/// nothing reads is dead (transformers' causal mask beside the sliding one). `setitem` writes too,
/// but is left as it was (unread, so not compared): no table knows what `x[i] = v` becomes.
fn writes_input(target: &str) -> bool {
    if let Some(op) = target.strip_prefix("_operator.").or_else(|| target.strip_prefix("operator.")) {
        const AUGMENTED: &[&str] =
            &["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior", "ixor", "ilshift", "irshift", "imatmul", "iconcat"];
        return AUGMENTED.contains(&op);
    }
    let name = target.rsplit('.').next().unwrap_or(target);
    let name = if backend::aten_name(target).is_some() { target.split('.').nth(1).unwrap_or(name) } else { name };
    name.ends_with('_') && !name.ends_with("__")
}

fn check_pair(
    id: &str,
    dynamo: &Graph,
    side: &Side,
    backward: Option<&Side>,
    ops: &[NodeId],
    table: &BackendTable,
    traced: &TracedCalls,
) -> (Vec<Finding>, Vec<Unverified>) {
    let (mut findings, mut unverified) = (Vec::new(), Vec::new());
    let buckets = side.buckets();
    // Forward and backward together: where an op the forward lacks may have gone.
    let both = backward.map(|b| buckets.merged(&b.buckets()));
    let graph_backend = graph_device(dynamo);
    // Training compiles are CSE'd by AOT's partitioner: a twin call has no ops of its own.
    let merged = if backward.is_some() { cse::duplicates(dynamo) } else { HashMap::new() };
    // What each call may become, looked up once: the claims below and the verdicts both need it.
    let expected: Vec<Result<Vec<Alt>, String>> = ops.iter().map(|&n| alternatives(table, traced, &dynamo.node(n).target)).collect();
    // Calls whose line's ops their neighbours' calls account for: checked without that op.
    let unmatched = count::unmatched(dynamo, ops, &expected, side, &buckets, &merged);
    // The AOT ops each location's kept calls account for: what a vanished no-op may leave.
    let mut claimed: HashMap<LocKey, BTreeSet<String>> = HashMap::new();
    for (&n, alts) in ops.iter().zip(&expected) {
        let loc = node_location(dynamo, n);
        let present: BTreeSet<&str> = buckets.at(loc.as_ref()).iter().map(|(op, _)| op.as_str()).collect();
        if let Ok(alts) = alts {
            if let Some(alt) = alts.iter().find(|a| a.ops.iter().all(|op| present.contains(op.as_str()))) {
                claimed.entry(loc.map(|l| (l.file, l.line, l.code))).or_default().extend(alt.ops.iter().cloned());
            }
        }
    }
    for (&n, alts) in ops.iter().zip(&expected) {
        let loc = node_location(dynamo, n);
        let loc_key = loc.clone().map(|l| (l.file, l.line, l.code));
        let claimed_here = claimed.get(&loc_key).cloned().unwrap_or_default();
        let node = dynamo.node(n);
        let finding = |verdict: Verdict, became: BTreeMap<String, usize>, location: Option<SourceLoc>| Finding {
            compile_id: id.to_string(),
            graph: side.name.clone(),
            node: node.name.clone(),
            node_id: n,
            target: node.target.clone(),
            backend: node_device(dynamo, n).or(graph_backend),
            verdict,
            became,
            location,
            marked: node.meta.compile_with_inductor(),
        };
        if let Some(&first) = merged.get(&n) {
            findings.push(finding(Verdict::Merged { with: dynamo.node(first).name.clone() }, buckets.counts(loc.as_ref()), loc));
            continue;
        }
        let fewer = unmatched.get(&n).map(|op| buckets.without(loc.as_ref(), op));
        let seen = fewer.as_ref().unwrap_or(&buckets);
        let mut verdict = check_node(table, dynamo, n, alts.as_deref().map_err(String::clone), seen, graph_backend, &claimed_here);
        if let (Some(both), true) = (&both, !matches!(&verdict, Ok(v) if !v.is_violation())) {
            verdict = in_backward(table, dynamo, n, alts, &buckets, both, graph_backend, &claimed_here).map(Ok).unwrap_or(verdict);
        }
        // A call its line's neighbours took the op from: what went missing is that op (Canine's
        // 1×1 `matmul` lost its `bmm`), not whichever other trace is closest.
        if let (Some(op), Ok(Verdict::Decomposed { .. })) = (unmatched.get(&n), &verdict) {
            let backend = node_device(dynamo, n).or(graph_backend);
            if let Some(f) = table.op_by_name(op).filter(|f| backend.is_some_and(|b| f.has_kernel(b)) && (f.inductor || f.composite)) {
                verdict = Ok(Verdict::Decomposed { op: op.clone(), inductor_table: f.inductor });
            }
        }
        match verdict {
            Ok(verdict) => findings.push(finding(verdict, seen.counts(loc.as_ref()), loc)),
            Err(NotChecked { reason, untraced }) => unverified.push(Unverified {
                compile_id: id.to_string(),
                what: format!("{}: node `{}` ({})", side.name, node.name, node.target),
                reason,
                untraced: untraced.then_some(n),
            }),
        }
    }
    (findings, unverified)
}

/// A call the forward graph alone does not account for, judged with the backward graph's ops too:
/// when that finds it kept, the ops of its expected forms that only the backward holds say where
/// it went. `None` when the backward explains nothing.
#[allow(clippy::too_many_arguments)]
fn in_backward(
    table: &BackendTable,
    dynamo: &Graph,
    n: NodeId,
    alts: &Result<Vec<Alt>, String>,
    forward: &Buckets,
    both: &Buckets,
    graph_backend: Option<Backend>,
    claimed: &BTreeSet<String>,
) -> Option<Verdict> {
    let v = check_node(table, dynamo, n, alts.as_deref().map_err(String::clone), both, graph_backend, claimed).ok()?;
    if v.is_violation() {
        return None;
    }
    let loc = node_location(dynamo, n);
    let fwd: BTreeSet<String> = forward.at(loc.as_ref()).into_iter().map(|(op, _)| op.clone()).collect();
    let all: BTreeSet<String> = both.at(loc.as_ref()).into_iter().map(|(op, _)| op.clone()).collect();
    let expected: BTreeSet<&String> = alts.as_ref().ok()?.iter().flat_map(|a| &a.ops).collect();
    let moved: Vec<String> = all.difference(&fwd).filter(|op| expected.contains(op)).cloned().collect();
    (!moved.is_empty()).then_some(Verdict::InBackward { ops: moved })
}

#[cfg(test)]
mod tests {
    use super::writes_input;

    #[test]
    fn keyword_dodging_operators_write_nothing_and_augmented_ones_do() {
        for t in ["_operator.and_", "_operator.or_", "_operator.not_", "operator.and_", "_operator.add", "torch.cat"] {
            assert!(!writes_input(t), "{t}");
        }
        for t in ["_operator.iand", "_operator.iadd", "Tensor.add_", "aten.index_put_.default", "Tensor.masked_fill_"] {
            assert!(writes_input(t), "{t}");
        }
        assert!(!writes_input("Tensor.__and__"));
    }
}
