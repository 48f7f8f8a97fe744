//! A graph as the report carries it: its nodes with their producers, grouped by module (or by
//! source file and function where the graph records no modules) with the same hierarchy and first
//! folding the app uses, so the page lays out one module's contents at a time and a 12k-node model
//! costs tens of bytes per node rather than a drawn SVG of every node.

use std::collections::HashMap;

use super::types::{GraphView, GroupView, NodeView};
use crate::ir::Graph;
use crate::hierarchy::{Hierarchy, OPEN_BOXES};

/// What a node gets drawn with besides its op: check-lite's class, device time, kernels.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    pub verdict: Option<String>,
    pub device_us: Option<f64>,
    pub kernels: Vec<String>,
}

/// The view of `graph`; `overlay` is keyed by node name.
pub fn view(graph: &Graph, label: &str, overlay: &HashMap<String, Overlay>) -> GraphView {
    let h = Hierarchy::of(graph);
    let index: HashMap<&str, usize> = h.groups.iter().enumerate().map(|(i, g)| (g.path.as_str(), i)).collect();
    let groups = h.groups.iter().map(|g| GroupView { p: g.path.clone(), c: g.class.clone(), up: g.parent, n: g.nodes }).collect();
    let nodes = graph
        .node_ids()
        .map(|id| {
            let node = graph.node(id);
            let mut inputs: Vec<usize> = node.inputs().filter_map(|v| graph.value(v).producer).map(|p| p.index()).collect();
            inputs.sort_unstable();
            inputs.dedup();
            let o = overlay.get(&node.name);
            NodeView {
                n: node.name.clone(),
                op: node.target.clone(),
                g: h.frames_of(id).last().and_then(|(p, _)| index.get(p.as_str()).copied()),
                i: inputs,
                s: shape(graph, id),
                v: o.and_then(|o| o.verdict.clone()),
                t: o.and_then(|o| o.device_us),
                kn: o.map(|o| o.kernels.clone()).unwrap_or_default(),
            }
        })
        .collect();
    let folded = h.default_folded(OPEN_BOXES).iter().filter_map(|p| index.get(p.as_str()).copied()).collect();
    let mut v = GraphView { name: graph.name.clone(), label: label.to_string(), groups, nodes, folded };
    chunk_long_runs(&mut v);
    v
}

/// A module (or the graph's top level) holding more than this many nodes of its own is shown as
/// runs of [`CHUNK`] consecutive nodes, each folded: a flat graph of 12k nodes (no module records
/// where its nodes came from) opens as 60 boxes, not 12k.
const MAX_OWN: usize = 300;
const CHUNK: usize = 200;

fn chunk_long_runs(v: &mut GraphView) {
    let mut own: std::collections::BTreeMap<Option<usize>, Vec<usize>> = Default::default();
    for (i, n) in v.nodes.iter().enumerate() {
        own.entry(n.g).or_default().push(i);
    }
    for (parent, members) in own.into_iter().filter(|(_, m)| m.len() > MAX_OWN) {
        let prefix = parent.map(|p| format!("{} · ", v.groups[p].p)).unwrap_or_default();
        for run in members.chunks(CHUNK) {
            let (first, last) = (run[0], run[run.len() - 1]);
            let g = v.groups.len();
            let (a, b) = (&v.nodes[first].n, &v.nodes[last].n);
            v.groups.push(GroupView { p: format!("{prefix}nodes {a} … {b}"), c: "run of nodes".into(), up: parent, n: run.len() });
            v.folded.push(g);
            for &i in run {
                v.nodes[i].g = Some(g);
            }
        }
    }
}

/// The first output's dtype and sizes (`f32[s0, 64]`), or empty.
fn shape(graph: &Graph, id: crate::ir::NodeId) -> String {
    let Some(t) = graph.node(id).outputs.first().and_then(|&v| graph.value(v).tensor()) else { return String::new() };
    let dims: Vec<String> = t.sizes.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", t.dtype, dims.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_keep_their_producers_and_modules() {
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny_llama_auto.pt2"));
        let model = crate::import::load(path).unwrap();
        let g = &model.graphs[0];
        let mut overlay = HashMap::new();
        let last = g.nodes.last().unwrap().name.clone();
        overlay.insert(last.clone(), Overlay { verdict: Some("kept".into()), device_us: Some(2.5), kernels: vec!["k0".into()] });
        let v = view(g, "before", &overlay);
        assert_eq!(v.nodes.len(), g.nodes.len());
        // Every producer comes earlier: the graph is in topological order and the page relies on it.
        for (i, n) in v.nodes.iter().enumerate() {
            assert!(n.i.iter().all(|&p| p < i), "{} reads a later node", n.n);
        }
        // tiny llama records its modules: the layers are groups, and nodes sit in them.
        assert!(v.groups.iter().any(|gr| gr.p.ends_with("layers.0")), "{:?}", v.groups.iter().map(|g| &g.p).collect::<Vec<_>>());
        assert!(v.nodes.iter().filter(|n| n.g.is_some()).count() > g.nodes.len() / 2);
        assert!(!v.folded.is_empty());
        let n = v.nodes.iter().find(|n| n.n == last).unwrap();
        assert_eq!((n.v.as_deref(), n.t, n.kn.len()), (Some("kept"), Some(2.5), 1));
    }

    #[test]
    fn a_flat_graph_is_shown_as_folded_runs() {
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/big12k.pt2"));
        let model = crate::import::load(path).unwrap();
        let v = view(&model.graphs[0], "before", &HashMap::new());
        assert!(v.nodes.len() >= 12_000);
        // No node is left loose at the top level, and every run is folded at first.
        assert!(v.nodes.iter().all(|n| n.g.is_some()));
        let runs: Vec<usize> = (0..v.groups.len()).filter(|&g| v.groups[g].c == "run of nodes").collect();
        assert_eq!(runs.len(), v.nodes.len().div_ceil(CHUNK));
        assert!(runs.iter().all(|g| v.folded.contains(g)));
        assert!(runs.iter().all(|&g| v.groups[g].n <= CHUNK));
    }
}
