//! The module tree the graph views are folded by: `nn_module_stack` where the file records it
//! (torch.export), else the source location (TORCH_TRACE graphs: the Python file, then the
//! function in it). A model opens folded at the deepest level that still fits on one screen
//! (Model Explorer's habit: a transformer opens as its layers).
//!
//! Pure data, built on workers with the layout and read by the canvas and the breadcrumbs, and by
//! the HTML report (`report::graph`): it sits below both so the report does not import the UI.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::import::trace::SourceLoc;
use crate::ir::{Graph, InputKind, Node, NodeId};

/// At most this many boxes on the first view (groups, loose nodes and user inputs).
pub const OPEN_BOXES: usize = 50;

/// One module (or source file / function) and everything under it.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub path: String,
    /// The module's class (`LlamaDecoderLayer`), or `file` / `function` for source locations.
    pub class: String,
    /// 0 for the outermost modules.
    pub depth: usize,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Nodes under it, nested ones included.
    pub nodes: usize,
    /// Nodes directly in it (in none of its children).
    pub direct: usize,
}

/// Every group of one graph, parents before children.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hierarchy {
    pub groups: Vec<Group>,
    /// Grouped by source location: no node of the graph records an `nn_module_stack`.
    pub by_source: bool,
    index: HashMap<String, usize>,
    /// How many nodes sit directly at each depth (0: in no group, 1: in a depth-0 group only…).
    nodes_at_depth: Vec<usize>,
    user_inputs: usize,
    /// Per node: the groups it sits in, outermost first.
    node_frames: Vec<Vec<(String, String)>>,
}

/// Drops outer groups that hold every node (a whole graph traced from one file and function):
/// their frame would only say what the title bar says.
fn without_common_outer(mut node_frames: Vec<Vec<(String, String)>>) -> Vec<Vec<(String, String)>> {
    loop {
        let Some(first) = node_frames.first().and_then(|f| f.first()).cloned() else { return node_frames };
        if node_frames.len() < 2 || !node_frames.iter().all(|f| f.first() == Some(&first)) {
            return node_frames;
        }
        for f in &mut node_frames {
            f.remove(0);
        }
    }
}

/// Own ops of a module are grouped when this many follow one another.
const MIN_RUN: usize = 4;

/// A module that holds other modules and also many ops of its own (LlamaModel builds the
/// attention mask and position ids itself) cannot be opened without flooding the view: each run
/// of at least [`MIN_RUN`] consecutive own ops becomes a group of its own (`model · ops 1`).
/// Runs are consecutive in graph order, so these groups never interleave with their siblings.
fn with_op_runs(mut node_frames: Vec<Vec<(String, String)>>) -> Vec<Vec<(String, String)>> {
    let mut parents: HashSet<String> = HashSet::new();
    for fs in &node_frames {
        for w in fs.windows(2) {
            parents.insert(w[0].0.clone());
        }
    }
    let mut counters: HashMap<String, usize> = HashMap::new();
    let mut i = 0;
    while i < node_frames.len() {
        let last = node_frames[i].last().cloned();
        let mut j = i + 1;
        while j < node_frames.len() && node_frames[j].last() == last.as_ref() {
            j += 1;
        }
        if let Some((path, class)) = last.filter(|(p, _)| parents.contains(p) && j - i >= MIN_RUN) {
            let k = counters.entry(path.clone()).or_insert(0);
            *k += 1;
            let frame = (format!("{path} · ops {k}"), format!("own ops of {class}"));
            for fs in &mut node_frames[i..j] {
                fs.push(frame.clone());
            }
        }
        i = j;
    }
    node_frames
}

/// A numbered child of a ModuleList or Sequential (`model.layers.0`): one of a model's repeated blocks.
fn is_block(path: &str) -> bool {
    path.rsplit('.').next().is_some_and(|last| !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `path` is a group [`with_op_runs`] made, not a module of the model (it cannot be marked).
pub fn is_op_run(path: &str) -> bool {
    path.contains(" · ops ")
}

/// torch.export's stand-in frame for nodes it made outside any module: not a module of the model.
const EXPORT_PLACEHOLDER: &str = "_empty_nn_module_stack";

/// The module frames a node sits in, outermost first: `(path, class)`.
fn module_frames(node: &Node) -> impl Iterator<Item = (String, String)> + '_ {
    node.meta
        .nn_module_stack
        .iter()
        .filter(|f| !f.path.is_empty() && !f.path.starts_with(EXPORT_PLACEHOLDER))
        .map(|f| (f.path.clone(), short_class(&f.class).to_string()))
}

/// The groups a node sits in, outermost first: `(path, class)`. `by_source`: by its source
/// location (file, then function) instead of its modules.
pub fn frames(node: &Node, by_source: bool) -> Vec<(String, String)> {
    if !by_source {
        return module_frames(node).collect();
    }
    let Some(loc) = node.meta.stack_trace.as_deref().and_then(SourceLoc::from_stack_trace) else { return Vec::new() };
    let file = loc.file.rsplit('/').next().unwrap_or(&loc.file).to_string();
    let function = format!("{file}:{}", loc.function);
    vec![(file, "file".into()), (function, "function".into())]
}

/// `torch.nn.modules.linear.Linear` → `Linear`.
pub fn short_class(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

impl Hierarchy {
    pub fn of(graph: &Graph) -> Hierarchy {
        let mut h = Hierarchy {
            user_inputs: graph.inputs.iter().filter(|(_, k)| *k == InputKind::UserInput).count(),
            by_source: !graph.nodes.iter().any(|n| module_frames(n).next().is_some()),
            ..Default::default()
        };
        h.node_frames = with_op_runs(without_common_outer(graph.nodes.iter().map(|n| frames(n, h.by_source)).collect()));
        for fs in &h.node_frames {
            let fs = fs.clone();
            let d = fs.len();
            if h.nodes_at_depth.len() <= d {
                h.nodes_at_depth.resize(d + 1, 0);
            }
            h.nodes_at_depth[d] += 1;
            let mut parent = None;
            for (depth, (path, class)) in fs.into_iter().enumerate() {
                let i = match h.index.get(&path) {
                    Some(&i) => i,
                    None => {
                        let i = h.groups.len();
                        h.groups.push(Group { path: path.clone(), class, depth, parent, children: Vec::new(), nodes: 0, direct: 0 });
                        if let Some(p) = parent {
                            h.groups[p].children.push(i);
                        }
                        h.index.insert(path, i);
                        i
                    }
                };
                h.groups[i].nodes += 1;
                parent = Some(i);
            }
            if let Some(p) = parent {
                h.groups[p].direct += 1;
            }
        }
        h
    }

    /// The groups `node` sits in, outermost first.
    pub fn frames_of(&self, node: NodeId) -> &[(String, String)] {
        self.node_frames.get(node.index()).map_or(&[], Vec::as_slice)
    }

    pub fn get(&self, path: &str) -> Option<&Group> {
        self.index.get(path).map(|&i| &self.groups[i])
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The paths from the outermost group down to `path` (breadcrumbs).
    pub fn ancestry(&self, path: &str) -> Vec<&Group> {
        let mut out = Vec::new();
        let mut at = self.index.get(path).copied();
        while let Some(i) = at {
            out.push(&self.groups[i]);
            at = self.groups[i].parent;
        }
        out.reverse();
        out
    }

    /// The paths of `path`'s direct children: what is folded when it opens.
    pub fn children(&self, path: &str) -> Vec<String> {
        self.get(path).map(|g| g.children.iter().map(|&c| self.groups[c].path.clone()).collect()).unwrap_or_default()
    }

    /// The groups folded on the first view. It starts with the outermost groups folded and opens
    /// one whole level at a time while the view keeps at most `max_boxes` boxes, and stops at the
    /// level of repeated blocks (`model.layers.0`, `encoder.layer.3`, `layer1.0`: a numbered child
    /// of a ModuleList or Sequential), so a transformer opens as its layers, all folded — never
    /// some open and some not. A flat graph folds nothing. A group of one node is never folded (its
    /// box would say less than the node's); a run of a module's own ops is never opened.
    pub fn default_folded(&self, max_boxes: usize) -> BTreeSet<String> {
        let mut level: Vec<usize> = (0..self.groups.len()).filter(|&i| self.groups[i].parent.is_none()).collect();
        let mut boxes = level.len() + self.nodes_at_depth.first().copied().unwrap_or(0) + self.user_inputs;
        let mut folded = BTreeSet::new();
        while !level.is_empty() {
            // Runs of a module's own ops (mask and position bookkeeping) stay folded: they are not
            // what the first view is for.
            let (runs, modules): (Vec<usize>, Vec<usize>) = level.iter().partition(|&&i| is_op_run(&self.groups[i].path));
            folded.extend(runs.iter().map(|&i| self.groups[i].path.clone()));
            let open: Vec<usize> = modules.into_iter().filter(|&i| self.groups[i].nodes > 1).collect();
            let after = boxes + open.iter().map(|&i| self.groups[i].children.len() + self.groups[i].direct - 1).sum::<usize>();
            let blocks = open.iter().any(|&i| is_block(&self.groups[i].path));
            if open.is_empty() || blocks || after > max_boxes {
                folded.extend(open.iter().map(|&i| self.groups[i].path.clone()));
                break;
            }
            boxes = after;
            level = open.iter().flat_map(|&i| self.groups[i].children.iter().copied()).collect();
        }
        folded
    }

    /// Boxes shown with `folded` folded (the outermost folded group of a node wins).
    pub fn boxes(&self, folded: &BTreeSet<String>) -> usize {
        fn walk(h: &Hierarchy, i: usize, folded: &BTreeSet<String>) -> usize {
            let g = &h.groups[i];
            if folded.contains(&g.path) {
                1
            } else {
                g.direct + g.children.iter().map(|&c| walk(h, c, folded)).sum::<usize>()
            }
        }
        let roots = (0..self.groups.len()).filter(|&i| self.groups[i].parent.is_none());
        roots.map(|i| walk(self, i, folded)).sum::<usize>() + self.nodes_at_depth.first().copied().unwrap_or(0) + self.user_inputs
    }

    /// Every group: the most folded view (the breadcrumbs' "collapse all").
    pub fn all_paths(&self) -> impl Iterator<Item = &str> {
        self.groups.iter().map(|g| g.path.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny_llama() -> crate::ir::Model {
        crate::import::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny_llama_auto.pt2"))).unwrap()
    }

    #[test]
    fn groups_nest_and_count_their_nodes() {
        let model = tiny_llama();
        let g = &model.graphs[0];
        let h = Hierarchy::of(g);
        assert!(!h.is_empty());
        for (i, group) in h.groups.iter().enumerate() {
            let under = g.node_ids().filter(|n| h.frames_of(*n).iter().any(|(p, _)| *p == group.path)).count();
            assert_eq!(group.nodes, under, "{}", group.path);
            for &c in &group.children {
                assert_eq!(h.groups[c].parent, Some(i));
                assert_eq!(h.groups[c].depth, group.depth + 1);
            }
        }
        let deepest = h.groups.iter().max_by_key(|g| g.depth).unwrap();
        let crumbs = h.ancestry(&deepest.path);
        assert_eq!(crumbs.len(), deepest.depth + 1);
        assert_eq!(crumbs.last().unwrap().path, deepest.path);
    }

    #[test]
    fn the_first_view_opens_whole_levels_that_fit() {
        let model = tiny_llama();
        let h = Hierarchy::of(&model.graphs[0]);
        let all: usize = h.groups.iter().filter(|g| g.parent.is_none()).map(|g| g.nodes).sum();
        for max in [1, 5, 12, OPEN_BOXES] {
            let folded = h.default_folded(max);
            let boxes = h.boxes(&folded);
            let outermost = h.boxes(&h.groups.iter().filter(|g| g.parent.is_none()).map(|g| g.path.clone()).collect());
            assert!(boxes <= max.max(outermost), "{boxes} boxes for at most {max}");
            assert!(boxes >= outermost.min(all));
        }
        // With room for one box only, it folds to the outermost modules.
        let tight = h.default_folded(1);
        assert!(tight.iter().all(|p| h.get(p).unwrap().depth == 0));
        // A two-layer Llama opens as its layers, each folded.
        let first = h.default_folded(OPEN_BOXES);
        assert!(first.contains("model.layers.0") && first.contains("model.layers.1"), "{first:?}");
    }

    #[test]
    fn a_modules_own_ops_are_grouped_and_graphs_without_modules_group_by_source() {
        let model = tiny_llama();
        let h = Hierarchy::of(&model.graphs[0]);
        assert!(!h.by_source);
        let ops = h.get("model · ops 1").expect("LlamaModel's own ops are a group");
        assert_eq!(h.groups[ops.parent.unwrap()].path, "model");
        assert!(is_op_run(&ops.path));
        let mut g = model.graphs[0].clone();
        for n in &mut g.nodes {
            n.meta.nn_module_stack.clear();
        }
        let by_source = Hierarchy::of(&g);
        assert!(by_source.by_source);
        assert!(by_source.groups.iter().any(|g| g.path == "modeling_llama.py" && g.class == "file"), "{:?}", by_source.groups.iter().map(|g| &g.path).collect::<Vec<_>>());
    }
}
