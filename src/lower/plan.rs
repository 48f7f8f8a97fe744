//! What lowering produces: a [`Plan`] of [`Step`]s over the decomposed graph, and the queries
//! runners, traces and listings make of it (which node a kernel is attributed to).

use super::{Expanded, Kernel, SyncValue};
use crate::decomp::Mode;
use crate::ir::{Graph, NodeId};

/// One step of a plan.
#[derive(Clone, Debug)]
pub enum Step {
    /// A kept node run as its own single-op kernel, as eager PyTorch would.
    Fallback { node: NodeId, kernel: Kernel },
    /// A fusion group: `nodes` (graph order, the root last) computed by one kernel.
    Fused { nodes: Vec<NodeId>, kernel: Kernel },
    /// A node that needs no kernel: symbolic-int arithmetic, or a view read through by consumers.
    /// Runtime assertions (`_assert_scalar`, `sym_constrain_range*`) are checked here with the
    /// symbols bound so far.
    Meta { node: NodeId },
    /// The sizes `node`'s outputs take from data (unbacked symbols, see `lower::sizes`): `kernel`
    /// writes `values` into a small i64 buffer; the runner waits for the queue, reads them back
    /// and binds the symbols before any later launch. The node's outputs are computed by the
    /// steps after this one, at the bound sizes.
    Sync { node: NodeId, kernel: Kernel, values: Vec<SyncValue> },
    /// An op Inductor never lowers and calls eagerly (`.eager()` in the registry), run on the
    /// host: the runner finishes the queue, reads the node's inputs back, runs the interpreter's
    /// implementation and hands the outputs to later kernels. It costs host time, not device
    /// time, and is never a generated kernel.
    Host { node: NodeId },
}

impl Step {
    /// The generated kernel the step launches (a sync step's size kernel included).
    pub fn kernel(&self) -> Option<&Kernel> {
        match self {
            Step::Fallback { kernel, .. } | Step::Fused { kernel, .. } | Step::Sync { kernel, .. } => Some(kernel),
            Step::Meta { .. } | Step::Host { .. } => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Step::Fallback { .. } => "fallback",
            Step::Fused { .. } => "fused",
            Step::Meta { .. } => "meta",
            Step::Sync { .. } => "sync",
            Step::Host { .. } => "host",
        }
    }

    /// What the step is, in words, for plan listings and traces.
    pub fn describe(&self) -> &'static str {
        match self {
            Step::Fallback { .. } => "single-op kernel",
            Step::Fused { .. } => "fused kernel",
            Step::Meta { .. } => "no kernel",
            Step::Sync { .. } => "size kernel, then a sync: the host reads the data-dependent sizes back",
            Step::Host { .. } => "host fallback (interpreter): inputs read back, run on the host, outputs uploaded",
        }
    }

    pub fn nodes(&self) -> Vec<NodeId> {
        match self {
            Step::Fallback { node, .. } | Step::Meta { node } | Step::Sync { node, .. } | Step::Host { node } => vec![*node],
            Step::Fused { nodes, .. } => nodes.clone(),
        }
    }
}

/// A lowered graph: the decomposed graph it runs, its steps, and what it assumes.
#[derive(Clone, Debug)]
pub struct Plan {
    pub mode: Mode,
    /// The decomposed graph, with the nodes that had no kernel lowering expanded.
    pub graph: Graph,
    pub steps: Vec<Step>,
    /// Conditions the compiled kernels assume (the model's guards and symbol ranges): a binding
    /// that flips one needs a new plan; any other binding reuses every binary.
    pub guards: Vec<String>,
    /// The nodes expanded for lowering (no direct kernel), in graph order.
    pub expanded: Vec<Expanded>,
    /// Per node of `graph`: its entry in `expanded`, if it is a product of one.
    pub(super) expansion: Vec<Option<usize>>,
}

impl Plan {
    /// The node that kernels computing node `n` of `graph` are attributed to: `n` itself, or the
    /// node whose expansion emitted it (the user's node, in mode `none`).
    pub fn attributed(&self, n: NodeId) -> &str {
        self.expansion_of(n).map_or(self.graph.node(n).name.as_str(), |x| x.node.as_str())
    }

    /// The expanded node that node `n` of `graph` is a product of, if any.
    pub fn expansion_of(&self, n: NodeId) -> Option<&Expanded> {
        self.expansion.get(n.index()).copied().flatten().and_then(|i| self.expanded.get(i))
    }

    /// The nodes `step` is attributed to ([`Self::attributed`]), in order, each once.
    pub fn step_names(&self, step: &Step) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for n in step.nodes() {
            let name = self.attributed(n);
            if !names.iter().any(|m| m == name) {
                names.push(name.to_string());
            }
        }
        names
    }

    pub fn kernels(&self) -> impl Iterator<Item = &Kernel> {
        self.steps.iter().filter_map(Step::kernel)
    }

    pub fn kernel_count(&self) -> usize {
        self.kernels().count()
    }

    /// Steps that run on the host through the interpreter.
    pub fn host_steps(&self) -> usize {
        self.steps.iter().filter(|s| matches!(s, Step::Host { .. })).count()
    }

    /// Steps that wait for the device to read data-dependent sizes back.
    pub fn sync_steps(&self) -> usize {
        self.steps.iter().filter(|s| matches!(s, Step::Sync { .. })).count()
    }
}
