//! A bound on how many reductions one kernel computes inline.
//!
//! Each inlined reduction (a small row's sum, a matrix product in its epilogue) is a loop of its
//! own in its consumer's kernel, and a kernel has at most 128 loop variables
//! (`KernelBuilder::fresh_var`). Models that unroll a Python loop into the graph chain reductions
//! one after another: DeepSeek-V4's Sinkhorn normalisation divides by a row sum, then a column
//! sum, twenty times; Bailing's hybrid attention inverts a 64×64 triangle row by row, 63 sums
//! each reading the last. Every one of them is small and static, so all were inlinable, and the
//! last node's kernel needed more loops than a kernel can have: the model did not lower.
//!
//! Reads are memoised per value and coordinates (`Ctx::read`), so a kernel's loops are about the
//! distinct reductions in the cone it inlines, not the paths to them. Walking the graph in order,
//! each node's cone is the union of its inlined producers' cones; where a cone would pass
//! [`MAX_INLINED_REDUCTIONS`], its largest producers are realized (their own kernels, read from
//! memory) until it fits. Every realized producer's own cone already fits, by the same walk.
//!
//! A reduction read at coordinates that vary inside another's loop (DeepSeek-V4 alternates row
//! and column sums) is lowered once per such read, so the loops can outnumber the reductions:
//! where a kernel still runs out, lowering builds the plan again under half the budget
//! ([`out_of_loops`]), down to one reduction per kernel.

use std::collections::{BTreeSet, HashSet};

use super::kernel::KernelError;
use super::{through_views, LowerError, OpKind};
use crate::ir::{Graph, NodeId};

/// Reductions one kernel computes inline, at most, to begin with: well under the 128 loop
/// variables, since a reduction over several dimensions takes one per dimension.
pub(super) const MAX_INLINED_REDUCTIONS: usize = 32;

/// Whether lowering failed because a kernel needed more loop variables than a kernel can have.
pub(super) fn out_of_loops(e: &LowerError) -> bool {
    match e {
        LowerError::Expr(KernelError::TooManyVars) => true,
        LowerError::At { source, .. } => out_of_loops(source),
        _ => false,
    }
}

/// Removes from `inlinable` the producers that would make a kernel inline more than `budget`
/// reductions; returns them, in graph order.
pub(super) fn bound_inlined_reductions(graph: &Graph, kinds: &[OpKind], inlinable: &mut HashSet<NodeId>, budget: usize) -> Vec<NodeId> {
    let mut cones: Vec<BTreeSet<NodeId>> = vec![BTreeSet::new(); graph.nodes.len()];
    let mut realized = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        if kinds[i] == OpKind::View || kinds[i] == OpKind::Meta {
            continue;
        }
        // The inlined producers this node reads, each once, through views.
        let mut producers: Vec<NodeId> = Vec::new();
        for v in node.inputs() {
            if let Some(p) = graph.value(through_views(graph, v)).producer {
                if inlinable.contains(&p) && !producers.contains(&p) {
                    producers.push(p);
                }
            }
        }
        let own = kinds[i] != OpKind::Pointwise;
        let cone = loop {
            let mut cone: BTreeSet<NodeId> = producers.iter().flat_map(|p| cones[p.index()].iter().copied()).collect();
            if own {
                cone.insert(NodeId(i as u32));
            }
            if cone.len() <= budget || producers.is_empty() {
                break cone;
            }
            // The producer whose cone is largest goes to memory; ties go to the latest.
            let Some(at) = (0..producers.len()).max_by_key(|k| (cones[producers[*k].index()].len(), producers[*k])) else {
                break cone;
            };
            let p = producers.swap_remove(at);
            inlinable.remove(&p);
            realized.push(p);
        };
        cones[i] = cone;
    }
    realized.sort();
    realized
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Arg, DType, InputKind, NamedArg, NodeMeta, TensorMeta, ValueKind};
    use crate::sym::Expr;

    fn arg(name: &str, arg: Arg) -> NamedArg {
        NamedArg { name: name.into(), arg, kwarg: false }
    }

    /// A Sinkhorn-like chain: `x_k = x_{k-1} / sum(x_{k-1}, -1, keepdim)`, `n` times, on a 4×4
    /// input; the graph and its nodes' kinds.
    fn chain(n: usize) -> (Graph, Vec<OpKind>) {
        let mut g = Graph::default();
        let meta = |cols| ValueKind::Tensor(TensorMeta::contiguous(DType::F32, vec![Expr::int(4), Expr::int(cols)]));
        let mut x = g.add_input("x", meta(4), InputKind::UserInput).expect("input");
        let mut kinds = Vec::new();
        for k in 0..n {
            let args = vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Ints(vec![-1])), arg("keepdim", Arg::Bool(true))];
            let s = g.add_node(&format!("sum_{k}"), "aten.sum.dim_IntList", args, vec![(format!("sum_{k}"), meta(1))], NodeMeta::default());
            let sv = g.node(s.expect("sum")).outputs[0];
            kinds.push(OpKind::Reduction);
            let args = vec![arg("self", Arg::Tensor(x)), arg("other", Arg::Tensor(sv))];
            let d = g.add_node(&format!("div_{k}"), "aten.div.Tensor", args, vec![(format!("div_{k}"), meta(4))], NodeMeta::default());
            x = g.node(d.expect("div")).outputs[0];
            kinds.push(OpKind::Pointwise);
        }
        (g, kinds)
    }

    /// The most reductions any kernel inlines under `inlinable`: per node, the distinct
    /// reductions reached through inlined producers, itself included.
    fn widest_cone(g: &Graph, kinds: &[OpKind], inlinable: &HashSet<NodeId>) -> usize {
        let mut cones: Vec<BTreeSet<NodeId>> = vec![BTreeSet::new(); g.nodes.len()];
        for (i, node) in g.nodes.iter().enumerate() {
            let mut cone = BTreeSet::new();
            if kinds[i] == OpKind::Reduction {
                cone.insert(NodeId(i as u32));
            }
            for v in node.inputs() {
                if let Some(p) = g.value(v).producer.filter(|p| inlinable.contains(p)) {
                    cone.extend(cones[p.index()].iter().copied());
                }
            }
            cones[i] = cone;
        }
        cones.iter().map(BTreeSet::len).max().unwrap_or(0)
    }

    #[test]
    fn a_long_chain_of_small_reductions_is_cut_where_it_passes_the_budget() {
        let (g, kinds) = chain(80);
        let mut inlinable: HashSet<NodeId> = g.node_ids().collect();
        assert_eq!(widest_cone(&g, &kinds, &inlinable), 80);
        let realized = bound_inlined_reductions(&g, &kinds, &mut inlinable, MAX_INLINED_REDUCTIONS);
        assert!(widest_cone(&g, &kinds, &inlinable) <= MAX_INLINED_REDUCTIONS);
        // Two cuts are the fewest that split 80 into runs of at most 32; a cut per node would
        // also fit the budget and lose all fusion.
        assert!((2..=3).contains(&realized.len()), "{realized:?}");
        for r in &realized {
            assert!(!inlinable.contains(r));
        }
    }

    #[test]
    fn a_short_chain_stays_inline() {
        let (g, kinds) = chain(10);
        let mut inlinable: HashSet<NodeId> = g.node_ids().collect();
        assert!(bound_inlined_reductions(&g, &kinds, &mut inlinable, MAX_INLINED_REDUCTIONS).is_empty());
        assert_eq!(inlinable.len(), g.nodes.len());
    }
}
