//! Which ops of a graph the workbench cannot run, known before anything runs: every target
//! without an interpreter implementation or a kernel lowering, each with every node that calls
//! it — so a model's gaps are reported once, completely, instead of one failure at a time.

use std::collections::BTreeMap;

use crate::decomp::{self, rules, Decomposition, Mode};
use crate::ir::{Graph, NodeId};

/// One op the graph needs and a backend lacks, with the nodes that call it (graph order).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MissingOp {
    pub target: String,
    pub nodes: Vec<String>,
    /// Why expanding it through its decomposition did not help, where it has one (each reason
    /// once, in node order).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
}

/// The graph's ops for which `has` is false, grouped by target (in target order).
/// An in-place op (`relu_`) counts as covered when its functional form is: graphs are
/// functionalized before they run.
fn missing(graph: &Graph, has: impl Fn(&str) -> bool) -> Vec<MissingOp> {
    let mut by: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for n in &graph.nodes {
        let functional = crate::decomp::functionalize::functional_target(&n.target);
        if !has(&n.target) && !functional.is_some_and(|f| has(&f)) {
            by.entry(n.target.as_str()).or_default().push(n.name.clone());
        }
    }
    by.into_iter().map(|(t, nodes)| MissingOp { target: t.to_string(), nodes, why: Vec::new() }).collect()
}

/// Ops the reference interpreter has no implementation of.
pub fn missing_in_interpreter(graph: &Graph) -> Vec<MissingOp> {
    missing(graph, |t| crate::ops::run_fn(t).is_some())
}

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

/// "`aten.a` (nodes x, y); `aten.b` (node z)".
pub fn describe(ops: &[MissingOp]) -> String {
    ops.iter()
        .map(|m| {
            let shown: Vec<&str> = m.nodes.iter().take(8).map(String::as_str).collect();
            let more = if m.nodes.len() > shown.len() { format!(", … {} more", m.nodes.len() - shown.len()) } else { String::new() };
            let word = if m.nodes.len() == 1 { "node" } else { "nodes" };
            let why = if m.why.is_empty() { String::new() } else { format!(": {}", m.why.join("; ")) };
            format!("`{}` ({word} {}{more}{why})", m.target, shown.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_of_a_missing_op_is_listed_once_per_op() {
        let model = crate::import::load_embedded_sample().unwrap();
        let mut g = model.graphs[0].clone();
        let names: Vec<String> = g.nodes.iter().take(3).map(|n| n.name.clone()).collect();
        for n in g.nodes.iter_mut().take(2) {
            n.target = "aten.made_up.default".into();
        }
        g.nodes[2].target = "aten.other_made_up.default".into();
        let m = missing_in_interpreter(&g);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0], MissingOp { target: "aten.made_up.default".into(), nodes: names[..2].to_vec(), why: vec![] });
        assert_eq!(m[1].nodes, vec![names[2].clone()]);
        let text = describe(&m);
        assert!(text.contains(&names[0]) && text.contains(&names[1]) && text.contains("aten.other_made_up.default"), "{text}");
    }
}
