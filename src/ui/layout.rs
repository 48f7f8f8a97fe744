//! Automatic top-down layout of a graph: longest-path layering (inputs and constants moved down to
//! their first reader), then barycentric ordering within each layer (a few down and up sweeps).
//! Nodes of a folded module become one box; open modules become frames around their boxes.
//!
//! Pure and deterministic so it can run on a worker thread and be tested without a window.

use std::collections::{BTreeSet, HashMap};

use egui::{pos2, vec2, Pos2, Rect, Vec2};

use super::hierarchy::Hierarchy;
use crate::ir::{Graph, InputKind, NodeId, ValueId};

/// World-space size of one node box; the canvas scales it by the zoom.
pub const NODE_SIZE: Vec2 = vec2(230.0, 54.0);
/// A folded module: a title, its class and op count, its input → output shape, what the
/// decompositions did inside it, and a bar of those colours.
pub const GROUP_SIZE: Vec2 = vec2(290.0, 86.0);
const H_GAP: f32 = 28.0;
const V_GAP: f32 = 44.0;
const SWEEPS: usize = 4;
/// Space between an open module's frame and what it holds, per level of nesting inside it.
pub const FRAME_PAD: f32 = 6.0;
/// Height of an open module's title row.
pub const TITLE_H: f32 = 18.0;

/// What one box of the layout stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    Node(NodeId),
    /// A graph input the user feeds (parameters and buffers are not drawn: they would bury the graph).
    Input(ValueId),
    /// A folded module: every node under `path`, the values it reads from outside (weights
    /// left out) and the values read after it.
    Group { path: String, class: String, members: Vec<NodeId>, inputs: Vec<ValueId>, outputs: Vec<ValueId> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub rect: Rect,
}

/// An open module drawn as a frame around what it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub path: String,
    pub class: String,
    pub depth: usize,
    pub rect: Rect,
}

/// Positions of every box and the edges between boxes (deduplicated, producer → consumer).
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub items: Vec<Item>,
    /// Graph node → index of the item that shows it.
    pub node_item: Vec<u32>,
    pub edges: Vec<(u32, u32)>,
    /// Open modules, outermost first (so inner frames are drawn over outer ones).
    pub frames: Vec<Frame>,
    pub hierarchy: Hierarchy,
    pub bounds: Rect,
}

impl Layout {
    pub fn item_of(&self, node: NodeId) -> Option<usize> {
        self.node_item.get(node.index()).map(|&i| i as usize)
    }

    /// The box of a folded module, or the frame of an open one.
    pub fn rect_of_module(&self, path: &str) -> Option<Rect> {
        let group = self.items.iter().find(|i| matches!(&i.kind, ItemKind::Group { path: p, .. } if p == path));
        group.map(|i| i.rect).or_else(|| self.frames.iter().find(|f| f.path == path).map(|f| f.rect))
    }

    /// The innermost open module whose frame holds `p`.
    pub fn frame_at(&self, p: Pos2) -> Option<&Frame> {
        self.frames.iter().filter(|f| f.rect.contains(p)).max_by_key(|f| f.depth)
    }
}

/// Lays out `graph` with the modules in `collapsed` drawn as one box each (the outermost folded
/// module of a node wins) and the open modules around them as frames.
pub fn layout(graph: &Graph, collapsed: &BTreeSet<String>) -> Layout {
    let hierarchy = Hierarchy::of(graph);
    let node_frames: Vec<&[(String, String)]> = graph.node_ids().map(|n| hierarchy.frames_of(n)).collect();
    // Index of the folded frame in each node's stack (its length when none is folded).
    let folded_at: Vec<usize> = node_frames
        .iter()
        .map(|fs| fs.iter().position(|(p, _)| collapsed.contains(p)).unwrap_or(fs.len()))
        .collect();

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
        let k = folded_at[id.index()];
        let item = match node_frames[id.index()].get(k) {
            Some((path, class)) => *group_index.entry(path.as_str()).or_insert_with(|| {
                kinds.push(ItemKind::Group {
                    path: path.clone(),
                    class: class.clone(),
                    members: Vec::new(),
                    inputs: Vec::new(),
                    outputs: Vec::new(),
                });
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
            match value_item.get(&v) {
                Some(&from) if from != to => {
                    edges.push((from, to));
                    add_unique(&mut kinds[to as usize], v, true);
                    add_unique(&mut kinds[from as usize], v, false);
                }
                _ => {}
            }
        }
    }
    for v in graph.outputs.iter().flat_map(|a| a.values()) {
        if let Some(&from) = value_item.get(&v) {
            add_unique(&mut kinds[from as usize], v, false);
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

    let layer = layers(&preds, &succs);
    let depth = layer.iter().copied().max().map_or(0, |m| m + 1);
    let mut layers: Vec<Vec<u32>> = vec![Vec::new(); depth];
    for (i, &l) in layer.iter().enumerate() {
        layers[l].push(i as u32);
    }
    order_layers(&mut layers, &preds, &succs, n);
    // The open modules each item sits in: a node's open frames, a folded module's open parents.
    let mut chains: Vec<&[(String, String)]> = vec![&[]; n];
    for id in graph.node_ids() {
        let item = node_item[id.index()] as usize;
        chains[item] = &node_frames[id.index()][..folded_at[id.index()]];
    }
    cluster_layers(&mut layers, &chains);

    let size_of = |k: &ItemKind| if matches!(k, ItemKind::Group { .. }) { GROUP_SIZE } else { NODE_SIZE };
    let mut items: Vec<Item> = kinds.into_iter().map(|kind| Item { rect: Rect::from_min_size(Pos2::ZERO, size_of(&kind)), kind }).collect();
    let spans = frame_spans(&hierarchy, &node_frames, &folded_at, &node_item, &layer);
    // Each open module that starts on a layer gets a title row above it.
    let mut titles = vec![0usize; depth];
    for sp in spans.values() {
        titles[sp.first] += 1;
    }
    let mut bounds = Rect::NOTHING;
    let mut rows = Vec::with_capacity(depth);
    let mut y = 0.0;
    for (li, l) in layers.iter().enumerate() {
        y += titles[li] as f32 * TITLE_H;
        let width: f32 = l.iter().map(|&i| items[i as usize].rect.width() + H_GAP).sum::<f32>() - H_GAP;
        let height = l.iter().map(|&i| items[i as usize].rect.height()).fold(0.0, f32::max);
        let mut x = -width / 2.0;
        for &i in l {
            let size = items[i as usize].rect.size();
            let rect = Rect::from_min_size(pos2(x, y), size);
            items[i as usize].rect = rect;
            bounds = bounds.union(rect);
            x += size.x + H_GAP;
        }
        rows.push((y, y + height));
        y += height + V_GAP;
    }
    if items.is_empty() {
        bounds = Rect::from_min_size(Pos2::ZERO, NODE_SIZE);
    }
    let mut frames = open_frames(&hierarchy, &spans, &node_frames, &folded_at, &node_item, &items, &rows);
    if move_out_of_corridors(&mut items, &layers, &rows, &chains, &frames) {
        frames = open_frames(&hierarchy, &spans, &node_frames, &folded_at, &node_item, &items, &rows);
        bounds = items.iter().fold(Rect::NOTHING, |b, i| b.union(i.rect));
    }
    for f in &frames {
        bounds = bounds.union(f.rect);
    }
    Layout { items, node_item, edges, frames, hierarchy, bounds }
}

/// Adds `v` to a group's inputs (`input`) or outputs once; other kinds hold no list.
fn add_unique(kind: &mut ItemKind, v: ValueId, input: bool) {
    if let ItemKind::Group { inputs, outputs, .. } = kind {
        let list = if input { inputs } else { outputs };
        if !list.contains(&v) {
            list.push(v);
        }
    }
}

/// Longest-path layering, then every item moved down to just above its first reader: an input, a
/// constant or a mask slice sits next to what reads it instead of at the top with a long edge
/// across the graph (and a module's frame does not reach up to it).
fn layers(preds: &[Vec<u32>], succs: &[Vec<u32>]) -> Vec<usize> {
    let n = preds.len();
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
    // As late as possible: from the bottom up, each item moves down to just above its first
    // reader. Producers stay above readers (a reader is already placed when its producer moves).
    let mut by_layer: Vec<usize> = (0..n).collect();
    by_layer.sort_by_key(|&i| std::cmp::Reverse(layer[i]));
    for i in by_layer {
        if let Some(first) = succs[i].iter().map(|&s| layer[s as usize]).min() {
            if first > layer[i] + 1 {
                layer[i] = first - 1;
            }
        }
    }
    layer
}

/// Barycentric ordering within each layer: a few sweeps down and up.
fn order_layers(layers: &mut [Vec<u32>], preds: &[Vec<u32>], succs: &[Vec<u32>], n: usize) {
    let depth = layers.len();
    let mut order = vec![0f32; n];
    for l in layers.iter() {
        for (k, &i) in l.iter().enumerate() {
            order[i as usize] = k as f32;
        }
    }
    for sweep in 0..SWEEPS {
        let down = sweep % 2 == 0;
        let range: Box<dyn Iterator<Item = usize>> =
            if down { Box::new(1..depth) } else { Box::new((0..depth.saturating_sub(1)).rev()) };
        for li in range {
            let neighbours = if down { preds } else { succs };
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
}

/// Which layers an open module's boxes occupy, and how many open levels it holds.
struct Span {
    first: usize,
    last: usize,
    inside: usize,
    depth: usize,
}

/// A module of one node gets no frame: its node box is the whole of it (the inspector names it).
fn frame_spans<'a>(
    hierarchy: &Hierarchy,
    node_frames: &'a [&'a [(String, String)]],
    folded_at: &[usize],
    node_item: &[u32],
    layer: &[usize],
) -> HashMap<&'a str, Span> {
    let mut spans: HashMap<&str, Span> = HashMap::new();
    for (n, fs) in node_frames.iter().enumerate() {
        let k = folded_at[n];
        let l = layer[node_item[n] as usize];
        for (d, (path, _)) in fs.iter().take(k).enumerate() {
            if hierarchy.get(path).is_some_and(|g| g.nodes < 2) {
                continue;
            }
            let sp = spans.entry(path.as_str()).or_insert(Span { first: l, last: l, inside: 0, depth: d });
            sp.first = sp.first.min(l);
            sp.last = sp.last.max(l);
            sp.inside = sp.inside.max(k - 1 - d);
        }
    }
    spans
}

/// Keeps the boxes of one open module side by side in every layer, so its frame does not take in
/// its neighbours: each layer is sorted by the mean position of the item's outermost open module
/// in that layer, then of the next one in, and so on, then by its own position.
fn cluster_layers(layers: &mut [Vec<u32>], chains: &[&[(String, String)]]) {
    for l in layers.iter_mut() {
        if l.iter().all(|&i| chains[i as usize].is_empty()) {
            continue;
        }
        let mut mean: HashMap<&str, (f32, f32)> = HashMap::new();
        for (k, &i) in l.iter().enumerate() {
            for (path, _) in chains[i as usize] {
                let e = mean.entry(path.as_str()).or_insert((0.0, 0.0));
                e.0 += k as f32;
                e.1 += 1.0;
            }
        }
        let mut keyed: Vec<(Vec<f32>, u32)> = l
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let mut key: Vec<f32> = chains[i as usize].iter().map(|(p, _)| mean[p.as_str()].0 / mean[p.as_str()].1).collect();
                key.push(k as f32);
                (key, i)
            })
            .collect();
        keyed.sort_by(|a, b| {
            a.0.iter().zip(&b.0).map(|(x, y)| x.total_cmp(y)).find(|o| o.is_ne()).unwrap_or(a.0.len().cmp(&b.0.len()))
        });
        *l = keyed.into_iter().map(|(_, i)| i).collect();
    }
}

/// A frame spans every layer from its module's first box to its last; on a layer where the module
/// has no box, another module's box can sit inside the frame and look like part of it (a rotary
/// embedding inside a decoder layer). Such a box moves out to the frame's nearer side, and the
/// boxes after it in its layer along. Whether anything moved (the frames are then computed again).
fn move_out_of_corridors(items: &mut [Item], layers: &[Vec<u32>], rows: &[(f32, f32)], chains: &[&[(String, String)]], frames: &[Frame]) -> bool {
    let mut touched = vec![false; layers.len()];
    for f in frames {
        // Only the layers the frame spans (rows are in y order).
        let first = rows.partition_point(|r| r.1 < f.rect.min.y);
        let last = rows.partition_point(|r| r.0 <= f.rect.max.y);
        for li in first..last.min(layers.len()) {
            for &i in &layers[li] {
                let r = items[i as usize].rect;
                if !r.intersects(f.rect) || chains[i as usize].iter().any(|(p, _)| *p == f.path) {
                    continue;
                }
                let x = if r.center().x < f.rect.center().x { f.rect.min.x - H_GAP - r.width() } else { f.rect.max.x + H_GAP };
                items[i as usize].rect = r.translate(vec2(x - r.min.x, 0.0));
                touched[li] = true;
            }
        }
    }
    // Moving may have put boxes of a layer on top of each other: sweep them apart.
    for (_, l) in layers.iter().enumerate().filter(|(li, _)| touched[*li]) {
        let mut row = l.clone();
        row.sort_by(|a, b| items[*a as usize].rect.min.x.total_cmp(&items[*b as usize].rect.min.x));
        let mut free = f32::NEG_INFINITY;
        for &i in &row {
            let r = items[i as usize].rect;
            if r.min.x < free {
                items[i as usize].rect = r.translate(vec2(free - r.min.x, 0.0));
            }
            free = items[i as usize].rect.max.x + H_GAP;
        }
    }
    touched.contains(&true)
}

/// A frame around every open module that holds something shown: the union of its boxes, padded
/// more for each open level inside it so nested frames do not touch, with its title row on top
/// (inner titles nearer the boxes, so nested titles stack instead of overlapping).
fn open_frames(
    hierarchy: &Hierarchy,
    spans: &HashMap<&str, Span>,
    node_frames: &[&[(String, String)]],
    folded_at: &[usize],
    node_item: &[u32],
    items: &[Item],
    rows: &[(f32, f32)],
) -> Vec<Frame> {
    let mut xs: HashMap<&str, (f32, f32)> = HashMap::new();
    for (n, fs) in node_frames.iter().enumerate() {
        let r = items[node_item[n] as usize].rect;
        for (path, _) in fs.iter().take(folded_at[n]) {
            let e = xs.entry(path.as_str()).or_insert((f32::INFINITY, f32::NEG_INFINITY));
            *e = (e.0.min(r.min.x), e.1.max(r.max.x));
        }
    }
    let mut starting: HashMap<usize, Vec<usize>> = HashMap::new();
    for sp in spans.values() {
        starting.entry(sp.first).or_default().push(sp.depth);
    }
    hierarchy
        .groups
        .iter()
        .filter_map(|g| {
            let sp = spans.get(g.path.as_str())?;
            let (x0, x1) = xs.get(g.path.as_str())?;
            let pad = FRAME_PAD * (sp.inside as f32 + 1.0);
            // Titles of deeper modules that start on the same layer sit below this one's.
            let deeper = starting[&sp.first].iter().filter(|&&d| d > sp.depth).count();
            let top = rows[sp.first].0 - pad - (deeper as f32 + 1.0) * TITLE_H;
            let bottom = rows[sp.last].1 + pad;
            Some(Frame { path: g.path.clone(), class: g.class.clone(), depth: g.depth, rect: Rect::from_min_max(pos2(x0 - pad, top), pos2(x1 + pad, bottom)) })
        })
        .collect()
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
        let model = crate::import::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny_gpt2.pt2"))).unwrap();
        let g = &model.graphs[0];
        let h = Hierarchy::of(g);
        let group = h.groups.iter().find(|g| g.nodes > 1).unwrap();
        let (path, members) = (group.path.clone(), group.nodes);
        assert!(members > 1);
        let open = layout(g, &BTreeSet::new());
        let shut = layout(g, &BTreeSet::from([path.clone()]));
        assert_eq!(shut.items.len(), open.items.len() - members + 1);
        let group = shut.items.iter().find(|i| matches!(&i.kind, ItemKind::Group { path: p, .. } if *p == path));
        assert!(matches!(&group.unwrap().kind, ItemKind::Group { members: m, .. } if m.len() == members));
        assert!(open.frames.iter().any(|f| f.path == path), "an open module gets a frame");
        assert!(!shut.frames.iter().any(|f| f.path == path), "a folded one does not");
    }

    #[test]
    fn another_modules_box_does_not_sit_inside_an_open_layer() {
        let model = crate::import::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/tiny_llama_auto.pt2"))).unwrap();
        let g = &model.graphs[0];
        let mut folded = Hierarchy::of(g).default_folded(crate::ui::hierarchy::OPEN_BOXES);
        assert!(folded.remove("model.layers.0"));
        folded.extend(Hierarchy::of(g).children("model.layers.0"));
        let l = layout(g, &folded);
        let frame = l.frames.iter().find(|f| f.path == "model.layers.0").expect("the open layer's frame");
        // The rotary embedding runs between the layer's first norm and its attention.
        // (Its body, which torch.export keeps inside a `wrap_with_set_grad_enabled`, is inlined at
        // import: its `cos` stands for it.)
        let rotary = g.node_ids().find(|&n| g.node(n).target == "aten.cos.default").unwrap();
        let r = l.items[l.item_of(rotary).unwrap()].rect;
        assert!(!r.intersects(frame.rect), "the rotary embedding {r:?} inside the layer's frame {:?}", frame.rect);
    }
}
