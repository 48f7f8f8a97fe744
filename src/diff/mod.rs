//! Graph diff: two graphs — one stage of two TORCH_TRACE logs, two exports, or two stages of one
//! file — aligned node to node, and what differs, grouped per module.
//!
//! Alignment runs in passes, strongest evidence first (see [`align`]): graph inputs by name, then
//! position; nodes computing the same op on already-matched values (structure); what remains by
//! provenance (the original node a decomposition came from, the source line, the module path) and
//! op, in order; then a node whose op changed but whose inputs and consumers are matched. Every
//! pass is a linear walk with hash lookups (the in-order alignment is a Myers diff per provenance
//! group), and ties break by graph order, so the result is deterministic.
//!
//! Names are not identity: torch renames values between versions and stages (`view_6` in one
//! export is `reshape_1` in the next), so a node's name is shown, never matched on.

mod align;
mod compare;
pub(crate) mod lcs;
pub mod select;
pub mod text;

use serde::{Deserialize, Serialize};

use crate::ir::Graph;

pub use select::{diff_files, graph_pairs, graph_pairs_picked, stage_choices, DiffError, FileDiff, GraphPair, Pairs, StagePick};

/// How one node (or graph input) of A relates to B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Same,
    Changed,
    OnlyA,
    OnlyB,
}

/// What differs between two matched nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Op,
    Arguments,
    Shape,
    Strides,
    Dtype,
}

impl ChangeKind {
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Op => "op",
            ChangeKind::Arguments => "arguments",
            ChangeKind::Shape => "shape",
            ChangeKind::Strides => "strides",
            ChangeKind::Dtype => "dtype",
        }
    }
}

/// One difference of a matched pair, with A's and B's side as text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub kind: ChangeKind,
    /// What it is about: `op`, `arg 1 (size)`, `output 0`.
    pub what: String,
    pub a: String,
    pub b: String,
}

/// Which evidence paired two nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// Graph inputs: the same name (parameter fqn, placeholder), else the same position.
    Input,
    /// The same op on matched values with the same constant arguments.
    Structure,
    /// The same op at the same place in the same provenance group (original node, source line,
    /// module path).
    Provenance,
    /// The same op in graph order, where neither graph records any provenance.
    Order,
    /// A different op reading the same matched values and read by the same matched consumers.
    Neighbours,
}

/// One side of an entry: a node (or graph input) of that graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeRef {
    /// Index in the graph's node list; `None` for a graph input.
    pub index: Option<u32>,
    pub name: String,
    /// The op target (`aten.view.default`), or `input` for a graph input.
    pub op: String,
    /// Each output as `f32[s77, 16]` (or `Sym(s77)`, or the kind of a non-tensor value).
    pub outputs: Vec<String>,
}

/// One row of the diff.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub class: Class,
    /// The module path (`layers.0.attn`), else the source line (`model.py:19`), else empty.
    pub group: String,
    pub a: Option<NodeRef>,
    pub b: Option<NodeRef>,
    pub matched_by: Option<MatchedBy>,
    /// Empty unless `class` is `Changed`.
    pub changes: Vec<Change>,
}

/// How many entries of each class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub same: usize,
    pub changed: usize,
    pub only_a: usize,
    pub only_b: usize,
}

impl Counts {
    fn add(&mut self, c: Class) {
        match c {
            Class::Same => self.same += 1,
            Class::Changed => self.changed += 1,
            Class::OnlyA => self.only_a += 1,
            Class::OnlyB => self.only_b += 1,
        }
    }

    pub fn differs(&self) -> bool {
        self.changed + self.only_a + self.only_b > 0
    }
}

/// The entries of one group, in entry order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub name: String,
    pub counts: Counts,
    /// Indices into [`GraphDiff::entries`].
    pub entries: Vec<usize>,
}

/// The diff of two graphs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphDiff {
    pub a_graph: String,
    pub b_graph: String,
    pub counts: Counts,
    /// Symbols of A renamed in B (`s77` → `s27`), read off matched inputs; shapes are compared
    /// through it.
    pub symbols: Vec<(String, String)>,
    /// Devices of A that are another device in B (`cuda:0` → `cpu`), read off matched inputs:
    /// a CUDA log against a CPU log differs in every tensor's device, which says nothing about
    /// any one node, so devices are compared through this map.
    pub devices: Vec<(String, String)>,
    /// Graph inputs first, then nodes: A's order, B's own nodes where B places them.
    pub entries: Vec<Entry>,
    /// Groups in order of first appearance.
    pub groups: Vec<Group>,
}

impl GraphDiff {
    pub fn differs(&self) -> bool {
        self.counts.differs()
    }

    /// The entries that are not `Same`.
    pub fn differences(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.class != Class::Same)
    }
}

/// Aligns `a` and `b` and classifies every node and graph input of each.
pub fn diff(a: &Graph, b: &Graph) -> GraphDiff {
    puffin::profile_function!();
    let m = align::align(a, b);
    let entries = compare::entries(a, b, &m);
    let mut counts = Counts::default();
    let mut groups: Vec<Group> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = Default::default();
    for (i, e) in entries.iter().enumerate() {
        counts.add(e.class);
        let g = *index.entry(e.group.as_str()).or_insert_with(|| {
            groups.push(Group { name: e.group.clone(), counts: Counts::default(), entries: Vec::new() });
            groups.len() - 1
        });
        groups[g].counts.add(e.class);
        groups[g].entries.push(i);
    }
    GraphDiff {
        a_graph: a.name.clone(),
        b_graph: b.name.clone(),
        counts,
        symbols: m.norm.symbols(),
        devices: m.norm.devices(),
        entries,
        groups,
    }
}

#[cfg(test)]
mod tests;
