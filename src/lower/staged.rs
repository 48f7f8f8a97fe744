//! Staged lowerings: ops whose output kernel reads what kernels of their own wrote first.
//!
//! Why: a kernel computes each output element independently, so an op that needs the whole
//! line ordered (a sort) would have each element redo the ordering. A sort done that way costs
//! O(n²) comparisons per element, O(n³) per line (197 s for `argsort` of 8,000 floats on the
//! OpenCL CPU device). Staged, the op's entry in the registry (`.staged(f)`) builds kernels
//! that run before its output kernel — a merge sort's passes, each O(log n) per element — and
//! declares the scratch buffers between them; the output kernel finds the names of the buffers
//! it should read in [`Ctx::staged`]. Split reductions (`kernel::split`) run two kernels per
//! node the same way.

use std::collections::{BTreeSet, HashSet};

use super::ctx::Ctx;
use super::kernel::{Kernel, KernelBuilder};
use super::LowerError;
use crate::ir::{Graph, Node, NodeId, TensorMeta, ValueId};

/// What a staged lowering adds before its node's output kernel.
pub struct Staged {
    /// The kernels, in launch order, each with the producers it inlined; their schedules are
    /// chosen, not yet finished.
    pub kernels: Vec<(Kernel, BTreeSet<NodeId>)>,
    /// The scratch buffers the kernels write and read: name and metadata (contiguous).
    pub scratch: Vec<(String, TensorMeta)>,
    /// The scratch buffers the output kernel reads, handed to it as [`Ctx::staged`].
    pub reads: Vec<String>,
}

/// Builds a node's staged kernels, or `None` when this node needs none (its output kernel
/// computes everything, as before).
pub type StagesFn = for<'a> fn(&Stager<'a>, &'a Node) -> Result<Option<Staged>, LowerError>;

/// What a [`StagesFn`] builds its kernels with.
pub struct Stager<'a> {
    pub(super) graph: &'a Graph,
    /// The plan's graph so far: scratch names must not clash with its values.
    pub(super) plan_graph: &'a Graph,
    pub(super) materialized: &'a HashSet<ValueId>,
    pub(super) fuse: Option<&'a HashSet<NodeId>>,
    /// `fallback` or `fused`, as the node's own kernel is named.
    pub(super) prefix: &'static str,
}

impl<'a> Stager<'a> {
    /// A context for one kernel of `node` over a domain of `rank` coordinates.
    pub fn ctx(&self, node: &'a Node, rank: usize) -> Ctx<'a> {
        Ctx {
            graph: self.graph,
            kb: KernelBuilder::new(rank),
            materialized: self.materialized,
            fuse: self.fuse,
            inlined: BTreeSet::new(),
            node: Some(node),
            mask: None,
            reads: Default::default(),
            staged: Vec::new(),
        }
    }

    /// A value name for a scratch buffer of `node`, unused in the plan's graph.
    pub fn scratch_name(&self, node: &Node, what: &str) -> String {
        super::fresh_name(self.plan_graph, &format!("{}_{what}", node.name))
    }

    /// The entry-point name of `node`'s kernel `what`.
    pub fn kernel_name(&self, node: &Node, what: &str) -> String {
        format!("{}_{}_{what}", self.prefix, super::ident(&node.name))
    }
}
