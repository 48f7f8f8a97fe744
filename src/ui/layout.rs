//! Automatic top-down layout of a graph: longest-path layering, then barycentric ordering within
//! each layer (a few down and up sweeps). Nodes of a collapsed module become one box.
//!
//! Pure and deterministic so it can run on a worker thread and be tested without a window.

use std::collections::{BTreeSet, HashMap};

use egui::{pos2, vec2, Pos2, Rect, Vec2};

use crate::ir::{Graph, InputKind, NodeId, ValueId};

/// World-space size of one node box; the canvas scales it by the zoom.
pub const NODE_SIZE: Vec2 = vec2(230.0, 54.0);
const H_GAP: f32 = 24.0;
const V_GAP: f32 = 40.0;
const SWEEPS: usize = 4;

/// What one box of the layout stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    Node(NodeId),
    /// A graph input the user feeds (parameters and buffers are not drawn: they would bury the graph).
    Input(ValueId),
    /// A collapsed module: every node under `path`.
    Group { path: String, class: String, members: Vec<NodeId> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub rect: Rect,
}

/// Positions of every box and the edges between boxes (deduplicated, producer → consumer).
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub items: Vec<Item>,
    /// Graph node → index of the item that shows it.
    pub node_item: Vec<u32>,
    pub edges: Vec<(u32, u32)>,
    pub bounds: Rect,
}

impl Layout {
    pub fn item_of(&self, node: NodeId) -> Option<usize> {
        self.node_item.get(node.index()).map(|&i| i as usize)
    }
}

/// The outermost collapsed module a node belongs to, if any.
fn collapsed_group<'a>(graph: &'a Graph, node: NodeId, collapsed: &BTreeSet<String>) -> Option<(&'a str, &'a str)> {
    if collapsed.is_empty() {
        return None;
    }
    graph
        .node(node)
        .meta
        .nn_module_stack
        .iter()
        .find(|f| !f.path.is_empty() && collapsed.contains(&f.path))
        .map(|f| (f.path.as_str(), f.class.as_str()))
}

/// Lays out `graph` with the modules in `collapsed` drawn as one box each.
pub fn layout(graph: &Graph, collapsed: &BTreeSet<String>) -> Layout {
    let mut kinds: Vec<ItemKind> = Vec::new();
    let mut node_item = vec![0u32; graph.nodes.len()];
    let mut group_index: HashMap<&str, u32> = HashMap::new();
    let mut value_item: HashMap<ValueId, u32> = HashMap::new();

    for (vid, kind) in &graph.inputs {
        if *kind == InputKind::UserInput {
            value_item.insert(*vid, kinds.len() as u32);
            kinds.push(ItemKind::Input(*vid));
        }
    }
    for id in graph.node_ids() {
        let item = match collapsed_group(graph, id, collapsed) {
            Some((path, class)) => *group_index.entry(path).or_insert_with(|| {
                kinds.push(ItemKind::Group { path: path.to_string(), class: class.to_string(), members: Vec::new() });
                kinds.len() as u32 - 1
            }),
            None => {
                kinds.push(ItemKind::Node(id));
                kinds.len() as u32 - 1
            }
        };
        if let ItemKind::Group { members, .. } = &mut kinds[item as usize] {
            members.push(id);
        }
        node_item[id.index()] = item;
        for &out in &graph.node(id).outputs {
            value_item.insert(out, item);
        }
    }

    let mut edges: Vec<(u32, u32)> = Vec::new();
    for id in graph.node_ids() {
        let to = node_item[id.index()];
        for v in graph.node(id).inputs() {
            if let Some(&from) = value_item.get(&v) {
                if from != to {
                    edges.push((from, to));
                }
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();

    let n = kinds.len();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut succs: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(a, b) in &edges {
        preds[b as usize].push(a);
        succs[a as usize].push(b);
    }

    // Items are created in topological order of their first member, but a group can read an item
    // created after it (a later member's input); relax to a fixpoint, bounded by the item count
    // so a cycle through a collapsed group cannot loop forever.
    let mut layer = vec![0usize; n];
    for _ in 0..n.max(1) {
        let mut changed = false;
        for i in 0..n {
            let l = preds[i].iter().map(|&p| layer[p as usize] + 1).max().unwrap_or(0);
            if l > layer[i] && l < n {
                layer[i] = l;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }

    let depth = layer.iter().copied().max().map_or(0, |m| m + 1);
    let mut layers: Vec<Vec<u32>> = vec![Vec::new(); depth];
    for (i, &l) in layer.iter().enumerate() {
        layers[l].push(i as u32);
    }
    let mut order = vec![0f32; n];
    for l in &layers {
        for (k, &i) in l.iter().enumerate() {
            order[i as usize] = k as f32;
        }
    }
    for sweep in 0..SWEEPS {
        let down = sweep % 2 == 0;
        let range: Box<dyn Iterator<Item = usize>> =
            if down { Box::new(1..depth) } else { Box::new((0..depth.saturating_sub(1)).rev()) };
        for li in range {
            let neighbours = if down { &preds } else { &succs };
            let mut keyed: Vec<(f32, u32)> = layers[li]
                .iter()
                .map(|&i| {
                    let ns = &neighbours[i as usize];
                    let key = if ns.is_empty() {
                        order[i as usize]
                    } else {
                        ns.iter().map(|&p| order[p as usize]).sum::<f32>() / ns.len() as f32
                    };
                    (key, i)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            layers[li] = keyed.iter().map(|&(_, i)| i).collect();
            for (k, &i) in layers[li].iter().enumerate() {
                order[i as usize] = k as f32;
            }
        }
    }

    let mut items: Vec<Item> = kinds.into_iter().map(|kind| Item { kind, rect: Rect::NOTHING }).collect();
    let mut bounds = Rect::NOTHING;
    for (li, l) in layers.iter().enumerate() {
        let width = l.len() as f32 * (NODE_SIZE.x + H_GAP) - H_GAP;
        let y = li as f32 * (NODE_SIZE.y + V_GAP);
        for (k, &i) in l.iter().enumerate() {
            let x = -width / 2.0 + k as f32 * (NODE_SIZE.x + H_GAP);
            let rect = Rect::from_min_size(pos2(x, y), NODE_SIZE);
            items[i as usize].rect = rect;
            bounds = bounds.union(rect);
        }
    }
    if items.is_empty() {
        bounds = Rect::from_min_size(Pos2::ZERO, NODE_SIZE);
    }
    Layout { items, node_item, edges, bounds }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::load_embedded_sample;

    #[test]
    fn producers_sit_above_consumers_and_boxes_do_not_overlap() {
        let model = load_embedded_sample().unwrap();
        let g = &model.graphs[0];
        let l = layout(g, &BTreeSet::new());
        assert_eq!(l.node_item.len(), g.nodes.len());
        for &(a, b) in &l.edges {
            assert!(l.items[a as usize].rect.max.y < l.items[b as usize].rect.min.y, "edge {a}->{b} goes up");
        }
        for (i, a) in l.items.iter().enumerate() {
            for b in &l.items[i + 1..] {
                assert!(!a.rect.shrink(1.0).intersects(b.rect.shrink(1.0)));
            }
        }
    }

    #[test]
    fn a_collapsed_module_is_one_box() {
        let model = load_embedded_sample().unwrap();
        let g = &model.graphs[0];
        let path = g.nodes.iter().find_map(|n| n.meta.nn_module_stack.first()).unwrap().path.clone();
        let members = g.nodes.iter().filter(|n| n.meta.nn_module_stack.iter().any(|f| f.path == path)).count();
        assert!(members > 1);
        let open = layout(g, &BTreeSet::new());
        let shut = layout(g, &BTreeSet::from([path.clone()]));
        assert_eq!(shut.items.len(), open.items.len() - members + 1);
        let group = shut.items.iter().find(|i| matches!(&i.kind, ItemKind::Group { path: p, .. } if *p == path));
        assert!(matches!(&group.unwrap().kind, ItemKind::Group { members: m, .. } if m.len() == members));
    }
}
