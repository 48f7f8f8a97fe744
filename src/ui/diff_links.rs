//! What the diff mode derives from a [`GraphDiff`], apart from any widget: which node of one graph
//! is which node of the other (the links a selection follows across), the order the difference
//! list is stepped through, the colour of each class and the summary line.

use std::collections::HashMap;

use egui::Color32;

use crate::diff::{Class, Counts, Entry, GraphDiff};
use crate::ir::NodeId;

/// One graph of the pair: A is the open file's, B the one it is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
}

/// Each node's entry of the diff, per side: a node's partner is the other side of its entry.
/// Graph inputs have no node: their entries are found by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Links {
    a: HashMap<NodeId, usize>,
    b: HashMap<NodeId, usize>,
    inputs_a: HashMap<String, usize>,
    inputs_b: HashMap<String, usize>,
}

impl Links {
    pub fn of(d: &GraphDiff) -> Links {
        let mut links = Links::default();
        for (i, e) in d.entries.iter().enumerate() {
            if let Some(n) = e.a.as_ref().and_then(|r| r.index) {
                links.a.insert(NodeId(n), i);
            }
            if let Some(n) = e.b.as_ref().and_then(|r| r.index) {
                links.b.insert(NodeId(n), i);
            }
            if let Some(r) = e.a.as_ref().filter(|r| r.index.is_none()) {
                links.inputs_a.insert(r.name.clone(), i);
            }
            if let Some(r) = e.b.as_ref().filter(|r| r.index.is_none()) {
                links.inputs_b.insert(r.name.clone(), i);
            }
        }
        links
    }

    /// The entry node `node` of `side` is listed in.
    pub fn entry(&self, side: Side, node: NodeId) -> Option<usize> {
        match side {
            Side::A => self.a.get(&node).copied(),
            Side::B => self.b.get(&node).copied(),
        }
    }

    /// The node of the other side that node `node` of `side` was matched with.
    pub fn partner(&self, d: &GraphDiff, side: Side, node: NodeId) -> Option<NodeId> {
        let e = d.entries.get(self.entry(side, node)?)?;
        node_of(e, side.other())
    }

    pub fn class(&self, d: &GraphDiff, side: Side, node: NodeId) -> Option<Class> {
        Some(d.entries.get(self.entry(side, node)?)?.class)
    }

    /// The class of `side`'s graph input named `name`.
    pub fn input_class(&self, d: &GraphDiff, side: Side, name: &str) -> Option<Class> {
        let i = match side {
            Side::A => self.inputs_a.get(name),
            Side::B => self.inputs_b.get(name),
        };
        Some(d.entries.get(*i?)?.class)
    }
}

/// The node an entry names on `side` (`None` for a graph input or a node the side lacks).
pub fn node_of(e: &Entry, side: Side) -> Option<NodeId> {
    let r = match side {
        Side::A => e.a.as_ref(),
        Side::B => e.b.as_ref(),
    };
    r.and_then(|r| r.index).map(NodeId)
}

/// The differences (entry indices) in the order the list shows them: group by group, groups in
/// order of first appearance, entries in graph order within each. The CLI's text lists them so.
pub fn step_order(d: &GraphDiff) -> Vec<usize> {
    d.groups.iter().flat_map(|g| g.entries.iter().copied()).filter(|&i| d.entries.get(i).is_some_and(|e| e.class != Class::Same)).collect()
}

/// The position after `at` (or before it, backwards) in a list of `len`, wrapping around at
/// either end; from nowhere, the first (or the last). `None` when the list is empty.
pub fn step(at: Option<usize>, len: usize, forward: bool) -> Option<usize> {
    if len == 0 {
        return None;
    }
    Some(match (at.filter(|&i| i < len), forward) {
        (None, true) => 0,
        (None, false) => len - 1,
        (Some(i), true) => (i + 1) % len,
        (Some(i), false) => (i + len - 1) % len,
    })
}

/// Fill of a node box by class, for the dark or light theme. `Same` is the canvas's plain fill,
/// so a diff with few differences reads as grey with a few coloured boxes; the others are the
/// usual diff colours (red removed, green added, amber changed).
pub fn class_fill(class: Class, dark: bool) -> Color32 {
    let (d, l) = match class {
        Class::Same => ((58, 60, 66), (226, 228, 232)),
        Class::Changed => ((168, 104, 0), (250, 200, 110)),
        Class::OnlyA => ((170, 40, 48), (246, 158, 160)),
        Class::OnlyB => ((30, 128, 60), (150, 222, 160)),
    };
    let (r, g, b) = if dark { d } else { l };
    Color32::from_rgb(r, g, b)
}

pub fn class_name(class: Class) -> &'static str {
    match class {
        Class::Same => "same",
        Class::Changed => "changed",
        Class::OnlyA => "only in A",
        Class::OnlyB => "only in B",
    }
}

/// `2 changed · 3 only in A · 5 only in B · 120 same`: the counts of the CLI's header line.
pub fn summary(c: &Counts) -> String {
    format!("{} changed · {} only in A · {} only in B · {} same", c.changed, c.only_a, c.only_b, c.same)
}

/// One row of the difference list: the CLI's mark (`-`, `+`, `~`), the node's name (both, where
/// they differ), its op and, for a changed pair, what changed.
pub fn row(e: &Entry) -> String {
    let (a, b) = (e.a.as_ref(), e.b.as_ref());
    match (e.class, a, b) {
        (Class::Changed, Some(a), Some(b)) => {
            let names = if a.name == b.name { a.name.clone() } else { format!("{} ↔ {}", a.name, b.name) };
            let kinds: std::collections::BTreeSet<_> = e.changes.iter().map(|c| c.kind).collect();
            let kinds: Vec<&str> = kinds.into_iter().map(|k| k.name()).collect();
            format!("~ {names} ({}): {}", short(&b.op), kinds.join(", "))
        }
        (Class::OnlyA, Some(r), _) => format!("- {} ({})", r.name, short(&r.op)),
        (Class::OnlyB, _, Some(r)) => format!("+ {} ({})", r.name, short(&r.op)),
        (_, Some(r), _) | (_, None, Some(r)) => format!("  {} ({})", r.name, short(&r.op)),
        (_, None, None) => String::new(),
    }
}

/// `torch.ops.aten.mean.dim` → `mean.dim`: what fits a list row.
fn short(op: &str) -> &str {
    let t = op.strip_prefix("torch.ops.").unwrap_or(op);
    super::state::short_op(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{diff_files, FileDiff};

    fn sample(name: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
    }

    fn cuda_cpu(stage: &str) -> FileDiff {
        diff_files(&sample("lite/rmsfn_cuda_lite_2.11.0.log.gz"), &sample("lite/rmsfn_cpu_lite_2.11.0.log.gz"), Some(stage)).expect("diff")
    }

    fn rows(d: &GraphDiff) -> Vec<String> {
        step_order(d).into_iter().map(|i| row(&d.entries[i])).collect()
    }

    /// CUDA keeps `_fused_rms_norm`, CPU expands it (tests/graph_diff.rs quotes torch's graphs):
    /// stepping visits the fused call and its getitems (A), then the expansion (B), and nothing
    /// that is the same.
    #[test]
    fn stepping_visits_the_rms_norm_expansion_in_list_order() {
        let f = cuda_cpu("post_grad");
        let d = &f.pairs[0].diff;
        let got = rows(d);
        assert_eq!(got.len(), d.counts.changed + d.counts.only_a + d.counts.only_b);
        assert!(got[0].starts_with("- _fused_rms_norm (_fused_rms_norm"), "{got:?}");
        assert!(got.iter().any(|r| r.starts_with("+ rsqrt (rsqrt")), "{got:?}");
        assert!(got.iter().all(|r| r.starts_with('-') || r.starts_with('+')), "{got:?}");
        // The list's order is the text's: the text names the same nodes in the same order.
        let text = crate::diff::text::graph_diff("x", d);
        let mut at = 0;
        for i in step_order(d) {
            let e = &d.entries[i];
            let name = &e.a.as_ref().or(e.b.as_ref()).unwrap().name;
            let found = text[at..].find(&format!(" {name} ")).unwrap_or_else(|| panic!("{name} after byte {at} of\n{text}"));
            at += found + 1;
        }
    }

    #[test]
    fn the_same_graphs_have_nothing_to_step_through() {
        let f = cuda_cpu("dynamo");
        let d = &f.pairs[0].diff;
        assert!(step_order(d).is_empty());
        assert_eq!(step(None, 0, true), None);
        assert_eq!(summary(&d.counts), format!("0 changed · 0 only in A · 0 only in B · {} same", d.counts.same));
    }

    #[test]
    fn stepping_wraps_at_both_ends() {
        assert_eq!(step(None, 3, true), Some(0));
        assert_eq!(step(None, 3, false), Some(2));
        assert_eq!(step(Some(2), 3, true), Some(0));
        assert_eq!(step(Some(0), 3, false), Some(2));
        assert_eq!(step(Some(1), 3, true), Some(2));
        // A position left over from a longer list starts again.
        assert_eq!(step(Some(7), 3, true), Some(0));
    }

    /// Every matched node links to its partner and back; an unmatched one to nothing. vit by torch
    /// 2.11 and 2.15: 2.15's `reshape` is 2.11's `view`, matched through its neighbours.
    #[test]
    fn links_go_both_ways_between_matched_nodes() {
        let f = diff_files(&sample("zoo/torch-2.11/vit.pt2"), &sample("zoo/torch-2.15/vit.pt2"), None).expect("diff");
        let d = &f.pairs[0].diff;
        let links = Links::of(d);
        let mut matched = 0;
        for e in &d.entries {
            match (node_of(e, Side::A), node_of(e, Side::B)) {
                (Some(a), Some(b)) => {
                    assert_eq!(links.partner(d, Side::A, a), Some(b));
                    assert_eq!(links.partner(d, Side::B, b), Some(a));
                    matched += 1;
                }
                (Some(a), None) => assert_eq!(links.partner(d, Side::A, a), None),
                (None, Some(b)) => assert_eq!(links.partner(d, Side::B, b), None),
                (None, None) => {}
            }
        }
        // Nothing is only on one side: every node of A is linked.
        let nodes_a = d.entries.iter().filter(|e| node_of(e, Side::A).is_some()).count();
        assert_eq!((d.counts.only_a, d.counts.only_b), (0, 0));
        assert_eq!(matched, nodes_a);
        assert!(matched > 50, "{matched}");
        let order = step_order(d);
        assert_eq!(order.len(), 2);
        let e = &d.entries[order[0]];
        assert_eq!(row(e), "~ view_6 ↔ reshape_1 (reshape): op");
        let a = node_of(e, Side::A).unwrap();
        assert_eq!(links.class(d, Side::A, a), Some(Class::Changed));
    }

    /// The rms pair's unmatched nodes link to nothing and carry their side's class.
    #[test]
    fn unmatched_nodes_have_no_partner_and_their_own_class() {
        let f = cuda_cpu("aot");
        let d = &f.pairs[0].diff;
        let links = Links::of(d);
        let fused = d.entries.iter().find(|e| e.a.as_ref().is_some_and(|r| r.name == "_fused_rms_norm")).unwrap();
        let a = node_of(fused, Side::A).unwrap();
        assert_eq!((links.partner(d, Side::A, a), links.class(d, Side::A, a)), (None, Some(Class::OnlyA)));
        // The graph inputs are matched by name and position, each the same.
        for e in d.entries.iter().filter(|e| e.a.as_ref().is_some_and(|r| r.index.is_none())) {
            let name = &e.a.as_ref().unwrap().name;
            assert_eq!(links.input_class(d, Side::A, name), Some(Class::Same), "{name}");
        }
        assert_eq!(links.input_class(d, Side::A, "no such input"), None);
        let rsqrt = d.entries.iter().find(|e| e.b.as_ref().is_some_and(|r| r.name == "rsqrt")).unwrap();
        let b = node_of(rsqrt, Side::B).unwrap();
        assert_eq!((links.partner(d, Side::B, b), links.class(d, Side::B, b)), (None, Some(Class::OnlyB)));
    }

    /// Four classes, four fills far enough apart to tell at a glance, none like the selection
    /// outline or a folded module, in both themes.
    #[test]
    fn each_class_has_its_own_colour() {
        let distance = |a: Color32, b: Color32| {
            let d = |x: u8, y: u8| (x as f32 - y as f32).powi(2);
            (d(a.r(), b.r()) + d(a.g(), b.g()) + d(a.b(), b.b())).sqrt()
        };
        let classes = [Class::Same, Class::Changed, Class::OnlyA, Class::OnlyB];
        for dark in [true, false] {
            for (i, x) in classes.iter().enumerate() {
                for y in &classes[i + 1..] {
                    let d = distance(class_fill(*x, dark), class_fill(*y, dark));
                    assert!(d >= 60.0, "dark={dark}: {} and {} are {d:.0} apart", class_name(*x), class_name(*y));
                }
                assert!(distance(class_fill(*x, dark), super::super::canvas::SELECT_COLOR) >= 60.0, "{}", class_name(*x));
                let module = super::super::groups::group_fill(dark);
                assert!(distance(class_fill(*x, dark), module) >= 40.0, "dark={dark}: {} looks like a folded module", class_name(*x));
            }
        }
    }

    /// Every stage the pickers offer is one `--stage` takes: on a log, each picks graphs or says
    /// the log has none of that stage, never that the word is wrong.
    #[test]
    fn every_offered_stage_is_understood() {
        use crate::diff::{graph_pairs_picked, stage_choices, DiffError};
        use crate::ir::Format;
        let log = sample("lite/rmsfn_cpu_lite_2.11.0.log.gz");
        for s in stage_choices(Format::TorchTrace) {
            match graph_pairs_picked(&log, &log, Some(s), Some(s)) {
                Ok(p) => assert!(!p.pairs.is_empty(), "{s}"),
                Err(DiffError::NoStage { .. }) => {}
                Err(e) => panic!("{s}: {e}"),
            }
        }
        let pt2 = sample("mlp.pt2");
        for s in stage_choices(Format::Pt2) {
            let p = graph_pairs_picked(&pt2, &pt2, Some(s), Some("none")).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(p.pairs.len(), 1, "{s}");
        }
    }
}
