//! Which ops of a graph the workbench cannot run, known before anything runs: every target
//! without an interpreter implementation or a kernel lowering, each with every node that calls
//! it — so a model's gaps are reported once, completely, instead of one failure at a time.

use std::collections::BTreeMap;

use crate::ir::Graph;

/// One op the graph needs and a backend lacks, with the nodes that call it (graph order).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MissingOp {
    pub target: String,
    pub nodes: Vec<String>,
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
    by.into_iter().map(|(t, nodes)| MissingOp { target: t.to_string(), nodes }).collect()
}

/// Ops the reference interpreter has no implementation of.
pub fn missing_in_interpreter(graph: &Graph) -> Vec<MissingOp> {
    missing(graph, |t| crate::ops::run_fn(t).is_some())
}

/// Ops a plan cannot run on a device: no kernel lowering (in lite mode every kept op needs
/// one), except the eager-only ops that run as host steps.
pub fn missing_in_kernels(graph: &Graph) -> Vec<MissingOp> {
    missing(graph, |t| crate::ops::lowering(t).is_some() || crate::ops::host_fallback(t))
}

/// Eager-only ops a plan runs as host steps through the interpreter (no kernel is generated).
pub fn host_fallbacks(graph: &Graph) -> Vec<MissingOp> {
    missing(graph, |t| !crate::ops::host_fallback(t))
}

/// "`aten.a` (nodes x, y); `aten.b` (node z)".
pub fn describe(ops: &[MissingOp]) -> String {
    ops.iter()
        .map(|m| {
            let shown: Vec<&str> = m.nodes.iter().take(8).map(String::as_str).collect();
            let more = if m.nodes.len() > shown.len() { format!(", … {} more", m.nodes.len() - shown.len()) } else { String::new() };
            let word = if m.nodes.len() == 1 { "node" } else { "nodes" };
            format!("`{}` ({word} {}{more})", m.target, shown.join(", "))
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
        assert_eq!(m[0], MissingOp { target: "aten.made_up.default".into(), nodes: names[..2].to_vec() });
        assert_eq!(m[1].nodes, vec![names[2].clone()]);
        let text = describe(&m);
        assert!(text.contains(&names[0]) && text.contains(&names[1]) && text.contains("aten.other_made_up.default"), "{text}");
    }
}
