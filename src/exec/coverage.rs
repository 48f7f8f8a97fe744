//! Which ops of a graph the reference interpreter cannot run, found before it runs anything, each
//! with every node that calls it — so a run fails once, naming all gaps, not one at a time.
//! `crate::coverage` builds the kernel side on the same grouping.

use std::collections::BTreeMap;

use crate::decomp;
use crate::ir::Graph;

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
pub(crate) fn missing(graph: &Graph, has: impl Fn(&str) -> bool) -> Vec<MissingOp> {
    let mut by: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for n in &graph.nodes {
        let functional = decomp::functionalize::functional_target(&n.target);
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
