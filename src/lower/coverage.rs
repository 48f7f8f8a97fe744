//! Which ops of a graph a plan cannot run as kernels, found before lowering, each with every node
//! that calls it, and which run as host steps: the kernel half of `crate::coverage` (the
//! interpreter half is `exec::coverage`). Here because the lowering itself reports with it
//! ([`LowerError::NoLowerings`](super::LowerError)), so `lower` need not import a module above it.

use std::collections::BTreeMap;

use crate::decomp::{self, rules, Decomposition, Mode};
use crate::exec::coverage::{missing, MissingOp};
use crate::ir::{Graph, NodeId};

/// Ops a plan cannot run, as the lowering meets them (in lite mode every kept op needs a
/// kernel; eager-only ops run as host steps): in-place ops as their functional form, and an op with no kernel of its own covered
/// where its decomposition expands it into ops that all lower ([`decomp::expand_for_lowering`],
/// what the lowering does with it).
pub fn missing_in_kernels(graph: &Graph) -> Vec<MissingOp> {
    let functional = match decomp::functionalize::mutates(graph) {
        true => match decomp::functionalize(graph) {
            Ok(f) => Some(f),
            // The lowering reports why; here, the ops as they stand.
            Err(_) => return missing(graph, |t| crate::ops::lowering(t).is_some() || crate::ops::host_fallback(t)),
        },
        false => None,
    };
    let g = functional.as_ref().map_or(graph, |f| &f.graph);
    match decomp::expand_for_lowering(g, Mode::None) {
        Ok(ex) => missing_after_expansion(graph, &ex, |n| functional.as_ref().map_or(n, |f| f.provenance.origin[n.index()])),
        Err(_) => missing(graph, |t| crate::ops::lowering(t).is_some() || crate::ops::host_fallback(t)),
    }
}

/// Ops a plan runs as host steps through the interpreter (no kernel is generated): eager-only
/// ops, and every node that reads or produces a complex tensor ([`crate::lower::runs_on_host`]).
pub fn host_fallbacks(graph: &Graph) -> Vec<MissingOp> {
    let mut by: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for n in graph.nodes.iter().filter(|n| crate::lower::runs_on_host(graph, n)) {
        by.entry(n.target.as_str()).or_default().push(n.name.clone());
    }
    by.into_iter().map(|(t, nodes)| MissingOp { target: t.to_string(), nodes, why: Vec::new() }).collect()
}

/// The nodes of `ex`'s graph (an [`decomp::expand_for_lowering`] of a graph derived from
/// `user`) that have no kernel lowering, reported as the `user` nodes they stand for:
/// `to_user` maps a node of the expanded graph's input to the `user` node it came from.
pub fn missing_after_expansion(user: &Graph, ex: &Decomposition, to_user: impl Fn(NodeId) -> NodeId) -> Vec<MissingOp> {
    let mut by: BTreeMap<String, MissingOp> = BTreeMap::new();
    let mut seen_nodes = std::collections::HashSet::new();
    for (i, n) in ex.graph.nodes.iter().enumerate() {
        if crate::ops::lowering(&n.target).is_some() || crate::lower::runs_on_host(&ex.graph, n) {
            continue;
        }
        let from = ex.provenance.origin[i];
        let u = user.node(to_user(from));
        let why = if ex.decomposed.iter().any(|x| x.node == from) {
            Some(format!("its decomposition emits `{}`, which has no kernel lowering either", n.target))
        } else if let Some((_, e)) = ex.failed.iter().find(|(f, _)| *f == from) {
            Some(format!("its decomposition fails: {e}"))
        } else if rules::find(rules::Table::Lowering, &n.target).is_some() {
            Some("its decomposition declines these arguments".to_string())
        } else if n.target != u.target {
            Some(format!("it needs `{}`, which has no kernel lowering", n.target))
        } else {
            None
        };
        let m = by.entry(u.target.clone()).or_insert_with(|| MissingOp { target: u.target.clone(), nodes: Vec::new(), why: Vec::new() });
        if seen_nodes.insert(u.name.clone()) {
            m.nodes.push(u.name.clone());
        }
        if let Some(w) = why.filter(|w| !m.why.contains(w)) {
            m.why.push(w);
        }
    }
    by.into_values().collect()
}
