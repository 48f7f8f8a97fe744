//! Training compiles. AOT autograd traces one joint graph (forward and backward) and its
//! partitioner splits it into a forward and a backward graph; the user's ops are judged on the
//! forward side, but the partitioner may leave an op out of the forward and compute it in the
//! backward instead (recomputation of cheap ops such as `arange`, `silu`): such an op was kept,
//! not decomposed. What the backward graph itself did with the gradients of the user's ops
//! (`gelu_backward` kept, or decomposed by Inductor's table, or expanded for want of a kernel) is
//! reported as notes: lite mode's promise concerns the ops the user wrote.

use std::collections::{BTreeMap, BTreeSet};

use super::graph::Buckets;
use crate::import::trace::{CompileRecord, Stage};
use crate::ir::{Graph, NodeId};
use crate::ops::backend::{self, functional_name, Backend, BackendTable};

/// One side of a compile: a whole graph, or one half of a joint graph.
pub(super) struct Side<'a> {
    pub(super) graph: &'a Graph,
    /// `0/0:aot_forward_graph`, or `0/0:aot_joint_graph (forward half)`.
    pub(super) name: String,
    /// The nodes on this side; `None` for all of them.
    nodes: Option<BTreeSet<NodeId>>,
}

impl<'a> Side<'a> {
    pub(super) fn whole(graph: &'a Graph) -> Side<'a> {
        Side { graph, name: graph.name.clone(), nodes: None }
    }

    pub(super) fn buckets(&self) -> Buckets {
        match &self.nodes {
            None => Buckets::new(self.graph),
            Some(set) => Buckets::new_where(self.graph, |n| set.contains(&n)),
        }
    }

    /// The nodes on this side.
    pub(super) fn node_ids(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.graph.node_ids().filter(move |n| self.nodes.as_ref().is_none_or(|s| s.contains(n)))
    }

    /// The functional names of the ATen ops on this side.
    pub(super) fn ops(&self) -> BTreeSet<String> {
        self.graph
            .node_ids()
            .filter(|n| self.nodes.as_ref().is_none_or(|s| s.contains(n)))
            .filter_map(|n| backend::aten_name(&self.graph.node(n).target).map(|(name, _)| functional_name(name).to_string()))
            .collect()
    }
}

/// The forward side (what the user's ops became) and, in training, the backward side of a compile:
/// the inference or forward graph and the backward graph, or the halves of the joint graph when the
/// partitioned graphs are not in the log (a compile restarted after tracing its joint graph).
pub(super) fn sides(rec: &CompileRecord) -> Vec<(Side<'_>, Option<Side<'_>>)> {
    let backward = rec.graph(Stage::AotBackward).map(Side::whole);
    let mut out: Vec<(Side, Option<Side>)> = Vec::new();
    if let Some(g) = rec.graph(Stage::AotInference) {
        out.push((Side::whole(g), None));
    }
    if let Some(g) = rec.graph(Stage::AotForward) {
        let bwd = backward.or_else(|| rec.graph(Stage::AotJoint).map(|j| joint_halves(j).1));
        out.push((Side::whole(g), bwd));
    } else if let Some(j) = rec.graph(Stage::AotJoint) {
        let (fwd, bwd) = joint_halves(j);
        out.push((fwd, Some(backward.unwrap_or(bwd))));
    }
    out
}

/// A joint graph's halves. Its outputs are the forward's results followed by one gradient per
/// `primals_N` input; the forward half is what those results are computed from, the backward half
/// the rest (everything that reads a tangent, and what only the gradients need). Where the outputs
/// do not have that shape, the backward half is what reads a tangent, directly or not.
pub(super) fn joint_halves(g: &Graph) -> (Side<'_>, Side<'_>) {
    let primals = g.inputs.iter().filter(|(v, _)| g.value(*v).name.starts_with("primals")).count();
    let results = g.outputs.len().checked_sub(primals).filter(|&k| k > 0);
    let forward: BTreeSet<NodeId> = match results {
        Some(k) => {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<NodeId> = g.outputs[..k].iter().flat_map(|a| a.values()).filter_map(|v| g.value(v).producer).collect();
            while let Some(n) = stack.pop() {
                if seen.insert(n) {
                    stack.extend(g.node(n).inputs().filter_map(|v| g.value(v).producer));
                }
            }
            seen
        }
        None => {
            let mut from_tangent = vec![false; g.values.len()];
            for (v, _) in &g.inputs {
                from_tangent[v.index()] = g.value(*v).name.starts_with("tangents");
            }
            let mut forward = BTreeSet::new();
            for id in g.node_ids() {
                let node = g.node(id);
                if node.inputs().any(|v| from_tangent[v.index()]) {
                    node.outputs.iter().for_each(|o| from_tangent[o.index()] = true);
                } else {
                    forward.insert(id);
                }
            }
            forward
        }
    };
    let backward: BTreeSet<NodeId> = g.node_ids().filter(|n| !forward.contains(n)).collect();
    let half = |nodes, which: &str| Side { graph: g, name: format!("{} ({which} half)", g.name), nodes: Some(nodes) };
    (half(forward, "forward"), half(backward, "backward"))
}

/// What the backward graph did with the gradient kernel of one of the user's ops.
#[derive(Clone, Debug, PartialEq)]
pub enum BackwardVerdict {
    /// `aten.<op>_backward` is there: kept whole.
    Kept,
    /// It has a kernel on the backend, yet is not there: a table decomposed it.
    Decomposed { inductor_table: bool },
    /// The backend has no kernel for it (others have), so tracing expanded it.
    NoKernel { backend: Backend, elsewhere: Vec<String> },
}

/// A note on one gradient kernel of a training compile's backward graph.
#[derive(Clone, Debug, PartialEq)]
pub struct BackwardNote {
    pub compile_id: String,
    /// The backward graph's name (or the joint graph's backward half).
    pub graph: String,
    /// The forward op whose gradient it is (`gelu`) and the gradient kernel (`gelu_backward`).
    pub forward_op: String,
    pub op: String,
    pub verdict: BackwardVerdict,
}

impl BackwardNote {
    pub fn class(&self) -> &'static str {
        match self.verdict {
            BackwardVerdict::Kept => "kept",
            BackwardVerdict::Decomposed { .. } => "decomposed",
            BackwardVerdict::NoKernel { .. } => "no_backend_kernel",
        }
    }
}

impl std::fmt::Display for BackwardNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: the gradient of aten.{} (aten.{}) ", self.graph, self.forward_op, self.op)?;
        match &self.verdict {
            BackwardVerdict::Kept => write!(f, "was kept whole"),
            BackwardVerdict::Decomposed { inductor_table } => write!(
                f,
                "has a kernel here but was decomposed{}",
                if *inductor_table { " (it is in Inductor's default decomposition table)" } else { " (its composite body)" }
            ),
            BackwardVerdict::NoKernel { backend, elsewhere } => write!(
                f,
                "was expanded: {backend} has no kernel for it (kernels on {}), so tracing expanded it",
                elsewhere.join(", ")
            ),
        }
    }
}

/// The gradient kernels of the forward ops (`<op>_backward`, as the table names them) that have a
/// kernel on some backend, each looked for in the backward side. `forward_ops` are the ops the
/// user's calls were expected to be at kernel level, and those the forward graph holds.
pub(super) fn backward_notes(
    compile_id: &str,
    forward_ops: &BTreeSet<String>,
    backward: &Side,
    backend: Option<Backend>,
    table: &BackendTable,
) -> Vec<BackwardNote> {
    let present = backward.ops();
    let mut notes = BTreeMap::new();
    for fwd in forward_ops {
        let op = format!("{fwd}_backward");
        let Some(facts) = table.op_by_name(&op) else { continue };
        if !facts.has_any_kernel() {
            // Composite everywhere: it always becomes other ops, which is no decision of the mode.
            continue;
        }
        let verdict = if present.contains(&op) {
            BackwardVerdict::Kept
        } else {
            match backend {
                Some(b) if !facts.has_kernel(b) => BackwardVerdict::NoKernel { backend: b, elsewhere: facts.kernels.clone() },
                _ => BackwardVerdict::Decomposed { inductor_table: facts.inductor },
            }
        };
        notes.insert(
            op.clone(),
            BackwardNote { compile_id: compile_id.to_string(), graph: backward.name.clone(), forward_op: fwd.clone(), op, verdict },
        );
    }
    notes.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decomp::lite_trace::{check_log, Verdict};
    use crate::import::trace::{parse_annotation, CompileRecord, TraceLog};
    use crate::ir::{Arg, InputKind, NamedArg, NodeMeta};

    fn arg(name: &str, arg: Arg) -> NamedArg {
        NamedArg { name: name.into(), arg, kwarg: false }
    }

    /// `x + torch.arange(8)`, as dynamo writes it.
    fn dynamo() -> Graph {
        let mut g = Graph::new("0/0:dynamo_output_graph");
        let x = g.add_input("l_x_", parse_annotation("f32[8][1]cpu").unwrap(), InputKind::UserInput).unwrap();
        let k = |t: &str| vec![(t.to_string(), parse_annotation("f32[8][1]cpu").unwrap())];
        g.add_node("arange", "torch.arange", vec![arg("arg0", Arg::Int(8))], k("arange"), NodeMeta::default()).unwrap();
        let a = g.value_id("arange").unwrap();
        g.add_node("add", "_operator.add", vec![arg("arg0", Arg::Tensor(x)), arg("arg1", Arg::Tensor(a))], k("add"), NodeMeta::default())
            .unwrap();
        let out = g.value_id("add").unwrap();
        g.outputs.push(Arg::Tensor(out));
        g
    }

    /// An AOT graph named `name` with the given aten ops, each reading the first input.
    fn aot(name: &str, inputs: &[&str], ops: &[&str]) -> Graph {
        let mut g = Graph::new(name);
        let mut first = None;
        for i in inputs {
            let v = g.add_input(i, parse_annotation("f32[8][1]cpu").unwrap(), InputKind::UserInput).unwrap();
            first.get_or_insert(v);
        }
        for (i, op) in ops.iter().enumerate() {
            let out = format!("n{i}");
            let args = vec![arg("arg0", Arg::Tensor(first.unwrap()))];
            g.add_node(&out, &format!("aten.{op}"), args, vec![(out.clone(), parse_annotation("f32[8][1]cpu").unwrap())], NodeMeta::default())
                .unwrap();
        }
        if let Some(n) = g.nodes.last().map(|n| n.outputs[0]) {
            g.outputs.push(Arg::Tensor(n));
        }
        g
    }

    fn check(graphs: Vec<(Stage, Graph)>) -> crate::decomp::lite_trace::LogCheck {
        let rec = CompileRecord { graphs, ..CompileRecord::default() };
        check_log(&TraceLog { file: "t.log".into(), compiles: vec![rec], warnings: Vec::new() })
    }

    /// The partitioner computes `arange` in the backward (it recomputes cheap ops rather than save
    /// them): absent from the forward, it was kept, not decomposed. Without the backward graph the
    /// same forward is a violation.
    #[test]
    fn an_op_the_partitioner_moved_to_the_backward_was_kept() {
        let fwd = aot("0/0:aot_forward_graph", &["primals_1"], &["add.Tensor"]);
        let bwd = aot("0/0:aot_backward_graph", &["tangents_1"], &["arange.default", "mul.Tensor"]);
        let c = check(vec![(Stage::DynamoOutput, dynamo()), (Stage::AotForward, fwd.clone()), (Stage::AotBackward, bwd)]);
        let arange = c.findings.iter().find(|f| f.node == "arange").unwrap();
        assert_eq!(arange.verdict, Verdict::InBackward { ops: vec!["arange".into()] }, "{arange}");
        assert_eq!(c.violations().count(), 0);
        assert!(c.unverified.is_empty(), "{:?}", c.unverified);
        let alone = check(vec![(Stage::DynamoOutput, dynamo()), (Stage::AotForward, fwd)]);
        assert!(alone.findings.iter().any(|f| f.node == "arange" && f.verdict.is_violation()), "{:?}", alone.findings);
    }

    /// A joint graph alone: its forward half (what the forward results are computed from) is
    /// compared, its backward half gives the notes; a gradient kernel that is missing is named.
    #[test]
    fn a_joint_graph_alone_is_split_into_halves() {
        let mut joint = aot("0/0:aot_joint_graph", &["primals_1", "tangents_1"], &["arange.default", "add.Tensor"]);
        let t = joint.value_id("tangents_1").unwrap();
        let gb = vec![("g".to_string(), parse_annotation("f32[8][1]cpu").unwrap())];
        joint.add_node("g", "aten.gelu_backward.default", vec![arg("arg0", Arg::Tensor(t))], gb, NodeMeta::default()).unwrap();
        let g = joint.value_id("g").unwrap();
        // Outputs: the result, then one gradient per primal.
        joint.outputs.push(Arg::Tensor(g));
        let (f, b) = joint_halves(&joint);
        assert_eq!((f.nodes.as_ref().unwrap().len(), b.nodes.as_ref().unwrap().len()), (1, 2), "add alone is what the result needs");
        let c = check(vec![(Stage::DynamoOutput, dynamo()), (Stage::AotJoint, joint)]);
        assert!(c.findings.iter().all(|f| f.graph == "0/0:aot_joint_graph (forward half)"));
        let arange = c.findings.iter().find(|f| f.node == "arange").unwrap();
        assert!(matches!(arange.verdict, Verdict::InBackward { .. }), "{arange}");
        assert_eq!(c.compared, 1);
    }
}
