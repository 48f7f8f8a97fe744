//! The lite-mode invariant: nothing the user did not mark is decomposed, and symbolic-size ops
//! stay what they are. Checked two ways: on our own lite decomposition (through provenance), and
//! on a graph that is already decomposed (through the `from_node` history the file records).

use std::collections::BTreeMap;

use super::{Decomposition, Marks};
use crate::ir::Graph;

/// One node that lite mode should have kept whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub node: String,
    pub op: String,
    /// What it became: op → count.
    pub became: BTreeMap<String, usize>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let into: Vec<String> = self.became.iter().map(|(op, n)| format!("{op}×{n}")).collect();
        write!(f, "node `{}` ({}) is not marked but was decomposed into {}", self.node, self.op, into.join(", "))
    }
}

/// Whether an op only computes sizes (never a kernel, never a fallback).
pub fn is_symbolic_size_op(target: &str) -> bool {
    target.starts_with("aten.sym_") || target.starts_with("_operator.") || target.starts_with("aten._assert") || matches!(target, "torch.sym_float" | "math.ceil")
}

/// Checks a lite decomposition of `original` against `marks`.
///
/// Functionalization is not decomposition: an in-place node kept as its functional op, with the
/// views and scatters that write its result back ([`Decomposition::write_backs`]), is kept whole,
/// and so is a node dropped because nothing reads it.
pub fn check_lite(original: &Graph, lite: &Decomposition, marks: &Marks) -> Vec<Violation> {
    let mut out = Vec::new();
    let write_backs: std::collections::HashSet<_> = lite.write_backs.iter().copied().collect();
    for (i, node) in original.nodes.iter().enumerate() {
        let products = &lite.provenance.products[i];
        let own: Vec<_> = products.iter().filter(|p| !write_backs.contains(p)).collect();
        let functional = super::functionalize::functional_target(&node.target);
        // Nothing left of it (nothing read it, or only views taken again replace it) is not a
        // decomposition either.
        let kept_whole = own.is_empty()
            || own.len() == 1 && {
                let t = &lite.graph.node(*own[0]).target;
                *t == node.target || Some(t) == functional.as_ref()
            };
        let allowed = marks.marks(node) && !is_symbolic_size_op(&node.target);
        if !kept_whole && !allowed {
            let became = products.iter().fold(BTreeMap::new(), |mut h, p| {
                *h.entry(lite.graph.node(*p).target.clone()).or_insert(0) += 1;
                h
            });
            out.push(Violation { node: node.name.clone(), op: node.target.clone(), became });
        }
    }
    out
}

/// Checks a graph that was decomposed elsewhere (e.g. `run_decompositions()` output): every node
/// whose recorded original op differs from its own came from a decomposition, which is a
/// violation unless the original node was marked (its mark travels with what it became).
pub fn check_decomposed(graph: &Graph, marks: &Marks) -> Vec<Violation> {
    let mut by_origin: BTreeMap<(String, String), (bool, BTreeMap<String, usize>)> = BTreeMap::new();
    for node in &graph.nodes {
        let Some(origin) = node.meta.from_node.last() else { continue };
        if origin.target == node.target || is_symbolic_size_op(&origin.target) {
            continue;
        }
        let marked = node.meta.compile_with_inductor()
            || marks.names.contains(&origin.name)
            || marks.ops.iter().any(|o| origin.target == *o || origin.target.starts_with(&format!("{o}.")))
            || marks.matches_spec(node);
        let entry = by_origin.entry((origin.name.clone(), origin.target.clone())).or_default();
        entry.0 |= marked;
        *entry.1.entry(node.target.clone()).or_insert(0) += 1;
    }
    by_origin
        .into_iter()
        .filter(|(_, (marked, _))| !marked)
        .map(|((node, op), (_, became))| Violation { node, op, became })
        .collect()
}
