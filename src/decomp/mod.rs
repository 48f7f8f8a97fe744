//! Decomposition: what Inductor's decomposition tables do to a graph, under four policies.
//!
//! - `none`: the graph as exported.
//! - `core`: torch.export's core-ATen decompositions (what `ep.run_decompositions()` produces).
//! - `full`: Inductor's default table (what the AOT graph of a default `torch.compile` shows).
//! - `lite`: `torch.compile(mode="lite")`: only nodes the user marked are decomposed (with the
//!   full table); every other node is kept whole and runs as an eager fallback kernel.
//!
//! Rules live with their ops in the op registry (`crate::ops`), one small builder per op
//! overload. Every output node records the input node it came from ([`Provenance`]).

mod check;
mod emit;
mod emit_rw;
pub mod functionalize;
mod marks;
mod prune;
mod relayout;
pub mod rules;

use std::collections::BTreeMap;

use crate::ir::{Graph, NodeId, ValueId};

pub mod lite_trace;
pub mod predict;
pub use check::{check_decomposed, check_lite, is_symbolic_size_op, Violation};
pub use emit::RuleError;
pub(crate) use emit::infer_by_rule;
pub use marks::{MarkError, Marks};

/// The decomposition policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    None,
    Core,
    Lite,
    Full,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::None => "none",
            Mode::Core => "core",
            Mode::Lite => "lite",
            Mode::Full => "full",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "none" => Mode::None,
            "core" => Mode::Core,
            "lite" => Mode::Lite,
            "full" => Mode::Full,
            _ => return None,
        })
    }

    /// The rule table a node is decomposed with under this mode, if any.
    pub(crate) fn table(self) -> Option<rules::Table> {
        match self {
            Mode::None => None,
            Mode::Core => Some(rules::Table::Core),
            Mode::Lite | Mode::Full => Some(rules::Table::Inductor),
        }
    }
}

/// Which output nodes came from which input node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Provenance {
    /// Output node → the input node it came from.
    pub origin: Vec<NodeId>,
    /// Input node → the output nodes made from it (one when kept whole, several when decomposed).
    pub products: Vec<Vec<NodeId>>,
}

/// One input node that a rule replaced.
#[derive(Clone, Debug, PartialEq)]
pub struct Decomposed {
    pub node: NodeId,
    /// Histogram of the ops it became.
    pub into: BTreeMap<String, usize>,
}

/// The result of a decomposition pass.
#[derive(Clone, Debug)]
pub struct Decomposition {
    pub mode: Mode,
    pub graph: Graph,
    pub provenance: Provenance,
    /// Input nodes that were decomposed, in graph order.
    pub decomposed: Vec<Decomposed>,
    /// Input nodes kept whole (in lite mode: the eager fallbacks).
    pub kept: Vec<NodeId>,
    /// Input nodes the mode would decompose but no rule exists for: kept, and reported.
    pub no_rule: Vec<NodeId>,
    /// Input nodes whose rule failed on their arguments and that were kept whole, with why:
    /// only [`expand_for_lowering`] keeps going past a failing rule (the modes stop there).
    pub failed: Vec<(NodeId, RuleError)>,
    /// Input nodes of in-place ops (`relu_`) that became their functional overload first.
    pub functionalized: Vec<NodeId>,
    /// Output nodes functionalization itself emitted (views taken again, scatters back into a
    /// base): not a decomposition of the node they came from.
    pub write_backs: Vec<NodeId>,
    /// Graph inputs (user inputs, buffers) written in place, as export records them: PyTorch's
    /// functional graph returns their new values (`BUFFER_MUTATION`, `USER_INPUT_MUTATION`).
    pub mutations: Vec<Mutation>,
}

/// One graph input written in place by the graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Mutation {
    /// The input, in the output graph.
    pub input: ValueId,
    /// Its value when the graph ends, in the output graph.
    pub value: ValueId,
    /// The input nodes that wrote it, in graph order.
    pub by: Vec<NodeId>,
}

/// Why a decomposition failed: a rule met arguments it cannot handle. Names node and op.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("decomposing node `{node}` ({target}): {source}")]
pub struct DecompError {
    pub node: String,
    pub target: String,
    #[source]
    pub source: RuleError,
}

/// Applies `mode` to `graph`. `marks` matter only in lite mode.
pub fn decompose(graph: &Graph, mode: Mode, marks: &Marks) -> Result<Decomposition, DecompError> {
    puffin::profile_scope!("decompose", mode.name());
    emit::run(graph, mode, emit::Select::Marked(marks), mode != Mode::None)
}

/// Expands every node of `graph` whose op has no kernel lowering through its decomposition
/// rule (Inductor's, else core's), and what that emits that still has none, to a fixpoint: the
/// lowering's way to run an op as eager PyTorch runs a composite op, as its body. Lite mode's
/// machinery with [`rules::Table::Lowering`] for every node; `mode` is the plan's, recorded
/// only. Nothing else changes and nothing is pruned; provenance maps products to `graph`'s
/// nodes. A node whose rule declines or fails stays whole (`failed` says why it failed).
pub fn expand_for_lowering(graph: &Graph, mode: Mode) -> Result<Decomposition, DecompError> {
    puffin::profile_scope!("expand_for_lowering");
    emit::run(graph, mode, emit::Select::NoKernel, false)
}

/// The graph as exported, with in-place writes made functional (and written back through views
/// into their bases) and nothing decomposed: what the interpreter and the lowering run in mode
/// `none`, as Inductor functionalizes before anything else. The `none` view itself stays
/// [`decompose`]'s: the graph as exported, mutations shown.
pub fn functionalize(graph: &Graph) -> Result<Decomposition, DecompError> {
    puffin::profile_scope!("functionalize");
    emit::run(graph, Mode::None, emit::Select::Marked(&Marks::default()), true)
}
