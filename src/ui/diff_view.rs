//! The diff mode's store: the open file (A) against a second file (B), diffed on a worker by
//! `diff::graph_pairs_picked` and `diff::diff` (what `xpu-workbench diff A B --stage S` runs), both
//! graphs of one pair shown side by side in the `DiffA` / `DiffB` panes, and the difference the
//! user stepped to. `panels::diff` draws it; the derived data (links, stepping order, colours)
//! is `diff_links`.
//!
//! Like the sweep panel it keeps its own worker channel, so the app only forwards its commands
//! and polls it once a frame. What it returns are the views to lay out again, which the app
//! does on its layout workers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use egui::{Color32, Key, Modifiers};

use super::diff_links::{self, node_of, Links, Side};
use super::hierarchy::{Hierarchy, OPEN_BOXES};
use super::layout::ItemKind;
use super::state::{AppState, Reveal, Selection, Source, View};
use super::task::{Stamp, Stamped};
use crate::diff::{self, Class, FileDiff, GraphDiff, GraphPair};
use crate::ir::{Format, Graph, NodeId};

#[derive(Clone, Debug, PartialEq)]
pub enum DiffCommand {
    /// Ask for B with the system dialog (on a worker: the dialog blocks).
    OpenDialog,
    /// Diff the open file against this one, every graph of each (on a worker).
    Open(PathBuf),
    /// Diff again with these stages of A and of B (`None`: every graph of that file).
    SetStages(Option<String>, Option<String>),
    /// Show this pair of graphs (index into the file diff's pairs).
    PickPair(usize),
    /// Select and centre the next (`true`) or previous difference.
    Step(bool),
    /// Select and centre this difference (its position in the list).
    StepTo(usize),
    /// Copy the differences as the CLI prints them.
    Copy,
    Close,
}

/// One pair of graphs as the panes show them.
pub struct PairView {
    pub a: Arc<Graph>,
    pub b: Arc<Graph>,
    pub links: Links,
    /// The differences (entry indices) in list order.
    pub order: Vec<usize>,
    /// Modules folded to fit a screen, and the ones kept open because they hold a difference.
    fold: BTreeSet<String>,
    keep_open: BTreeSet<String>,
}

/// What the worker computed.
pub struct DiffResult {
    pub file: FileDiff,
    /// One per `file.pairs`.
    pub views: Vec<PairView>,
    pub formats: (Format, Format),
}

enum Msg {
    Picked(Option<PathBuf>),
    Done(Stamped<Result<Box<DiffResult>, String>>),
}

pub struct DiffState {
    /// The diff mode is on: its panes replace the graph views.
    pub open: bool,
    pub a_file: Option<PathBuf>,
    pub b_file: Option<PathBuf>,
    /// The stage of each file diffed (`None`: every graph), as `--stage` spells them.
    pub stage_a: Option<String>,
    pub stage_b: Option<String>,
    pub running: Option<String>,
    pub error: Option<String>,
    pub result: Option<Arc<DiffResult>>,
    /// The pair shown.
    pub pair: usize,
    /// The difference stepped to: a position in the pair's `order`.
    pub cursor: Option<usize>,
    /// Step to the first difference once both panes are laid out.
    first_pending: bool,
    /// Diff against this file as soon as a file is open (`xpu-workbench A --diff B`).
    pub pending: Option<PathBuf>,
    dialog: bool,
    /// Bumped per run, so a superseded run's result is dropped.
    generation: u64,
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
}

impl Default for DiffState {
    fn default() -> Self {
        let (tx, rx) = channel();
        DiffState {
            open: false,
            a_file: None,
            b_file: None,
            stage_a: None,
            stage_b: None,
            running: None,
            error: None,
            result: None,
            pair: 0,
            cursor: None,
            first_pending: false,
            pending: None,
            dialog: false,
            generation: 0,
            tx,
            rx,
        }
    }
}

impl DiffState {
    pub fn busy(&self) -> bool {
        self.running.is_some() || self.dialog
    }

    /// The pair shown, with its diff.
    pub fn shown(&self) -> Option<(&GraphPair, &PairView)> {
        let r = self.result.as_deref()?;
        Some((r.file.pairs.get(self.pair)?, r.views.get(self.pair)?))
    }

    /// The differences as `xpu-workbench diff` prints them: what Copy puts on the clipboard.
    pub fn text(&self) -> Option<String> {
        self.result.as_ref().map(|r| diff::text::file_diff(&r.file))
    }
}

/// Which side a pane shows.
pub fn side_of(view: View) -> Option<Side> {
    match view {
        View::DiffA => Some(Side::A),
        View::DiffB => Some(Side::B),
        _ => None,
    }
}

fn view_of(side: Side) -> View {
    match side {
        Side::A => View::DiffA,
        Side::B => View::DiffB,
    }
}

/// Loads both files, pairs their graphs and diffs each pair: on a worker.
pub fn compute(a: &Path, b: &Path, stage_a: Option<&str>, stage_b: Option<&str>) -> Result<DiffResult, String> {
    let formats = (crate::import::detect(a).map_err(|e| e.to_string())?, crate::import::detect(b).map_err(|e| e.to_string())?);
    let p = diff::graph_pairs_picked(a, b, stage_a, stage_b).map_err(|e| e.to_string())?;
    if p.pairs.is_empty() {
        return Err(format!("{} and {}: no graph of one pairs with a graph of the other", p.a_file, p.b_file));
    }
    let mut pairs = Vec::with_capacity(p.pairs.len());
    let mut views = Vec::with_capacity(p.pairs.len());
    for (la, ga, lb, gb) in p.pairs {
        let d = diff::diff(&ga, &gb);
        views.push(pair_view(ga, gb, &d));
        pairs.push(GraphPair { a: la, b: lb, diff: d });
    }
    let file = FileDiff { a_file: p.a_file, b_file: p.b_file, pairs, only_a: p.only_a, only_b: p.only_b, warnings: p.warnings };
    Ok(DiffResult { file, views, formats })
}

fn pair_view(a: Graph, b: Graph, d: &GraphDiff) -> PairView {
    let mut fold = BTreeSet::new();
    let mut keep_open = BTreeSet::new();
    for (g, side) in [(&a, Side::A), (&b, Side::B)] {
        let h = Hierarchy::of(g);
        fold.extend(h.default_folded(OPEN_BOXES));
        for n in d.differences().filter_map(|e| node_of(e, side)) {
            keep_open.extend(h.frames_of(n).iter().map(|(p, _)| p.clone()));
        }
    }
    PairView { a: Arc::new(a), b: Arc::new(b), links: Links::of(d), order: diff_links::step_order(d), fold, keep_open }
}

/// The diff's worker threads.
fn worker(name: &str) -> std::thread::Builder {
    super::jobs::worker_thread(name)
}

/// Starts diffing the open file against `b` with the stages in the store.
fn start(state: &mut AppState, b: PathBuf, ctx: &egui::Context) {
    let d = &mut state.diff;
    d.open = true;
    d.b_file = Some(b.clone());
    let stamp = Stamp::next(&mut d.generation);
    let a = match state.doc.as_ref().map(|doc| &doc.source) {
        Some(Source::File(p)) => p.clone(),
        Some(Source::Embedded) => {
            d.error = Some("the embedded sample is not a file to diff: open a file (log, .pt2 or .onnx) first".into());
            return;
        }
        None => {
            d.error = Some("open a file first: it is A, the file picked is B".into());
            return;
        }
    };
    d.a_file = Some(a.clone());
    d.error = None;
    d.running = Some(format!("diffing against {}", b.display()));
    let (sa, sb, tx, ctx) = (d.stage_a.clone(), d.stage_b.clone(), d.tx.clone(), ctx.clone());
    let spawned = worker("job-diff").spawn(move || {
        // A bug in the diff must not leave the app waiting for ever: it is reported as one.
        let result = std::panic::catch_unwind(|| compute(&a, &b, sa.as_deref(), sb.as_deref()))
            .unwrap_or_else(|_| Err(format!("diffing {} against {} stopped on an internal error", a.display(), b.display())));
        let _ = tx.send(Msg::Done(stamp.tag(result.map(Box::new))));
        ctx.request_repaint();
    });
    if let Err(e) = spawned {
        d.running = None;
        d.error = Some(format!("cannot start the diff: {e}"));
    }
}

#[cfg(feature = "file-dialog")]
fn dialog(state: &mut AppState, ctx: &egui::Context) {
    let (tx, ctx) = (state.diff.tx.clone(), ctx.clone());
    state.diff.dialog = true;
    let spawned = worker("job-dialog").spawn(move || {
        let picked = rfd::FileDialog::new()
            .set_title("Compare graph with… (the file to diff against the open one)")
            .add_filter("graph (TORCH_TRACE log, torch.export archive, ONNX)", &["log", "gz", "pt2", "zip", "onnx"])
            .add_filter("any file", &["*"])
            .pick_file();
        let _ = tx.send(Msg::Picked(picked));
        ctx.request_repaint();
    });
    if spawned.is_err() {
        state.diff.dialog = false;
    }
}

#[cfg(not(feature = "file-dialog"))]
fn dialog(state: &mut AppState, _ctx: &egui::Context) {
    state.message("this build has no file dialog: use `xpu-workbench diff A B`");
}

/// Applies a diff command; returns the views to lay out again.
pub fn apply(state: &mut AppState, cmd: DiffCommand, ctx: &egui::Context) -> Vec<View> {
    match cmd {
        DiffCommand::OpenDialog => dialog(state, ctx),
        DiffCommand::Open(b) => {
            state.diff.stage_a = None;
            state.diff.stage_b = None;
            start(state, b, ctx);
        }
        DiffCommand::SetStages(a, b) => {
            state.diff.stage_a = a;
            state.diff.stage_b = b;
            if let Some(b) = state.diff.b_file.clone() {
                start(state, b, ctx);
            }
        }
        DiffCommand::PickPair(i) => return show_pair(state, i),
        DiffCommand::Step(forward) => {
            let len = state.diff.shown().map_or(0, |(_, v)| v.order.len());
            if let Some(pos) = diff_links::step(state.diff.cursor, len, forward) {
                return step_to(state, pos);
            }
        }
        DiffCommand::StepTo(pos) => return step_to(state, pos),
        DiffCommand::Copy => match state.diff.text() {
            Some(t) => ctx.copy_text(t),
            None => state.message("nothing to copy: no diff yet"),
        },
        DiffCommand::Close => return close(state),
    }
    Vec::new()
}

/// Leaves the diff mode; the graph views lay out again with the folding the diff changed.
fn close(state: &mut AppState) -> Vec<View> {
    state.diff.open = false;
    if state.selection.is_some_and(|s| side_of(s.view).is_some()) {
        state.selection = None;
    }
    if side_of(state.focus).is_some() {
        state.focus = View::Original;
    }
    View::ALL.into_iter().chain(View::STAGES).collect()
}

/// Once a frame: takes the worker's answers and reads the stepping keys. Returns the views to
/// lay out again.
pub fn frame(state: &mut AppState, ctx: &egui::Context) -> Vec<View> {
    let mut relayout = Vec::new();
    while let Ok(m) = state.diff.rx.try_recv() {
        match m {
            Msg::Picked(p) => {
                state.diff.dialog = false;
                if let Some(b) = p {
                    state.diff.stage_a = None;
                    state.diff.stage_b = None;
                    start(state, b, ctx);
                }
            }
            Msg::Done(result) => {
                let d = &mut state.diff;
                let Some(result) = result.if_current(d.generation) else { continue };
                d.running = None;
                match result {
                    Ok(r) => {
                        // The first pair that differs: that is what the user came to see.
                        let first = r.file.pairs.iter().position(|p| p.diff.differs()).unwrap_or(0);
                        d.result = Some(Arc::from(r));
                        d.error = None;
                        relayout = show_pair(state, first);
                    }
                    Err(e) => {
                        d.result = None;
                        d.error = Some(e.clone());
                        state.message(format!("diff: {e}"));
                        for v in View::DIFF {
                            *state.pane_mut(v) = Default::default();
                        }
                    }
                }
            }
        }
    }
    if state.doc.is_some() && state.loading.is_none() {
        if let Some(b) = state.diff.pending.take() {
            start(state, b, ctx);
        }
    }
    if !state.diff.open {
        return relayout;
    }
    // A file opened since: A is gone.
    let a_now = state.doc.as_ref().and_then(|d| match &d.source {
        Source::File(p) => Some(p.clone()),
        Source::Embedded => None,
    });
    if state.diff.a_file.is_some() && a_now != state.diff.a_file {
        // A new channel too: a run still going for the old file answers nobody.
        state.diff = DiffState::default();
        for v in View::DIFF {
            *state.pane_mut(v) = Default::default();
        }
        return relayout;
    }
    let laid_out = View::DIFF.iter().all(|v| state.pane(*v).layout.is_some() && state.pane(*v).busy.is_none());
    if state.diff.first_pending && laid_out {
        state.diff.first_pending = false;
        relayout.extend(apply(state, DiffCommand::Step(true), ctx));
    }
    if state.diff.result.is_some() && !ctx.wants_keyboard_input() {
        let (mut next, mut prev, mut esc) = (false, false, false);
        ctx.input_mut(|i| {
            // Shift+F7 first: a key asked for with no modifiers matches it shifted too.
            prev = i.consume_key(Modifiers::SHIFT, Key::F7) || i.consume_key(Modifiers::NONE, Key::P);
            next = i.consume_key(Modifiers::NONE, Key::N) || i.consume_key(Modifiers::NONE, Key::F7);
            esc = !state.search_open && i.consume_key(Modifiers::NONE, Key::Escape);
        });
        for (on, forward) in [(next, true), (prev, false)] {
            if on {
                relayout.extend(apply(state, DiffCommand::Step(forward), ctx));
            }
        }
        if esc {
            relayout.extend(close(state));
        }
    }
    relayout
}

/// Shows pair `i` in the diff panes: the graphs, folded to fit with every module that holds a
/// difference open, laid out by the app.
fn show_pair(state: &mut AppState, i: usize) -> Vec<View> {
    let Some(r) = state.diff.result.clone() else { return Vec::new() };
    let Some(v) = r.views.get(i) else { return Vec::new() };
    let d = &mut state.diff;
    d.open = true;
    d.pair = i;
    d.cursor = None;
    d.first_pending = true;
    state.collapsed.extend(v.fold.iter().cloned());
    state.collapsed.retain(|p| !v.keep_open.contains(p));
    for (view, g) in [(View::DiffA, &v.a), (View::DiffB, &v.b)] {
        let pane = state.pane_mut(view);
        let generation = pane.generation;
        *pane = Default::default();
        pane.generation = generation;
        pane.graph = Some(g.clone());
    }
    if state.selection.is_some_and(|s| side_of(s.view).is_some()) {
        state.selection = None;
    }
    state.focus = View::DiffA;
    View::DIFF.to_vec()
}

/// Selects difference `pos` of the list and brings it into view on both sides: a side that
/// lacks the node shows where it would be (the partner of the nearest matched node before it).
fn step_to(state: &mut AppState, pos: usize) -> Vec<View> {
    let Some((pair, v)) = state.diff.shown() else { return Vec::new() };
    let Some(&entry) = v.order.get(pos) else { return Vec::new() };
    let e = &pair.diff.entries[entry];
    let anchor = |side: Side| {
        node_of(e, side).or_else(|| pair.diff.entries[..entry].iter().rev().find_map(|p| node_of(p, side).filter(|_| node_of(p, side.other()).is_some())))
    };
    let targets = [(Side::A, anchor(Side::A)), (Side::B, anchor(Side::B))];
    let own = [Side::A, Side::B].into_iter().find_map(|s| node_of(e, s).map(|n| (s, n)));
    // A graph input has no node: its box, where the input is drawn (weights are not).
    let inputs: Vec<(Side, String)> = [(Side::A, &e.a), (Side::B, &e.b)]
        .into_iter()
        .filter_map(|(s, r)| r.as_ref().filter(|r| r.index.is_none()).map(|r| (s, r.name.clone())))
        .collect();
    state.diff.cursor = Some(pos);
    if let Some((side, node)) = own {
        state.selection = Some(Selection { view: view_of(side), node });
        state.focus = view_of(side);
    } else {
        state.selection = None;
    }
    for (side, name) in inputs {
        let pane = state.pane_mut(view_of(side));
        let (Some(g), Some(l)) = (pane.graph.clone(), pane.layout.clone()) else { continue };
        let drawn = l.items.iter().find(|i| matches!(i.kind, ItemKind::Input(v) if g.value(v).name == name));
        if let Some(item) = drawn {
            pane.camera.center = item.rect.center();
            pane.camera.zoom = pane.camera.zoom.max(0.8);
            pane.camera.fit_pending = None;
        }
    }
    reveal(state, &targets)
}

/// Centres each side's pane on its node, opening the folded modules that hide it; returns the
/// panes to lay out again when any opened.
fn reveal(state: &mut AppState, targets: &[(Side, Option<NodeId>)]) -> Vec<View> {
    let mut unfolded = false;
    for (side, node) in targets {
        let Some(node) = *node else { continue };
        let Some(layout) = state.pane(view_of(*side)).layout.clone() else { continue };
        for (path, _) in layout.hierarchy.frames_of(node) {
            if state.collapsed.remove(path) {
                state.collapsed.extend(layout.hierarchy.children(path));
                unfolded = true;
            }
        }
    }
    for (side, node) in targets {
        let Some(node) = *node else { continue };
        let pane = state.pane_mut(view_of(*side));
        if unfolded {
            pane.reveal = Some(Reveal::Node(node));
        } else if let Some(rect) = pane.layout.as_ref().and_then(|l| l.item_of(node).map(|i| l.items[i].rect)) {
            pane.camera.center = rect.center();
            pane.camera.zoom = pane.camera.zoom.max(0.8);
            pane.camera.fit_pending = None;
        }
    }
    if unfolded {
        View::DIFF.to_vec()
    } else {
        Vec::new()
    }
}

/// The user picked a node in a diff pane: the list follows when it is a difference, and the
/// other pane centres its partner. Returns the panes to lay out again.
pub fn selected(state: &mut AppState, view: View, node: NodeId) -> Vec<View> {
    let Some(side) = side_of(view) else { return Vec::new() };
    let Some((pair, v)) = state.diff.shown() else { return Vec::new() };
    let entry = v.links.entry(side, node);
    let pos = entry.and_then(|e| v.order.iter().position(|&x| x == e));
    let partner = v.links.partner(&pair.diff, side, node);
    if pos.is_some() {
        state.diff.cursor = pos;
    }
    reveal(state, &[(side.other(), partner)])
}

/// What to highlight in diff pane `view` for a selection: the node itself, or its partner.
pub fn related(state: &AppState, sel: Selection, view: View) -> Vec<NodeId> {
    let (Some(from), Some(to)) = (side_of(sel.view), side_of(view)) else { return Vec::new() };
    if from == to {
        return vec![sel.node];
    }
    state.diff.shown().and_then(|(p, v)| v.links.partner(&p.diff, from, sel.node)).into_iter().collect()
}

/// The class of node `node` of diff pane `view`.
pub fn class_of(state: &AppState, view: View, node: NodeId) -> Option<Class> {
    let side = side_of(view)?;
    let (p, v) = state.diff.shown()?;
    v.links.class(&p.diff, side, node)
}

/// The fill of graph input `value` of diff pane `view`, by its class: in the diff panes an
/// input is the same, or not, like any node.
pub fn input_fill(state: &AppState, view: View, value: crate::ir::ValueId, dark: bool) -> Option<Color32> {
    let side = side_of(view)?;
    let (p, v) = state.diff.shown()?;
    let name = &state.pane(view).graph.as_deref()?.values.get(value.index())?.name;
    v.links.input_class(&p.diff, side, name).map(|c| diff_links::class_fill(c, dark))
}

/// The fill of node `node` of diff pane `view`; `None` outside the diff panes.
pub fn fill(state: &AppState, view: View, node: NodeId, dark: bool) -> Option<Color32> {
    class_of(state, view, node).map(|c| diff_links::class_fill(c, dark))
}

/// Moves the other diff pane to where `from`'s camera is: the partner of the node nearest its
/// centre (or the same module), at the same zoom — the decomposition views' `camera_sync`.
pub fn follow(state: &mut AppState, from: View) {
    let (Some(side), Some(src)) = (side_of(from), state.pane(from).layout.clone()) else { return };
    let to = view_of(side.other());
    let Some(dst) = state.pane(to).layout.clone() else { return };
    let cam = state.pane(from).camera;
    let Some(anchor) = super::camera_sync::nearest(&src, cam.center) else { return };
    let target = match &src.items[anchor].kind {
        ItemKind::Node(n) => state
            .diff
            .shown()
            .and_then(|(p, v)| v.links.partner(&p.diff, side, *n))
            .and_then(|m| dst.item_of(m))
            .map(|i| dst.items[i].rect),
        ItemKind::Group { path, .. } => dst.rect_of_module(path),
        ItemKind::Input(_) => None,
    };
    let Some(target) = target else { return };
    let offset = cam.center - src.items[anchor].rect.center();
    let pane = state.pane_mut(to);
    if pane.camera.fit_pending.is_none() {
        pane.camera.center = target.center() + offset;
        pane.camera.zoom = cam.zoom;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::layout::layout;

    fn sample(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
    }

    /// The 12,000-node export against itself, on the thread the app diffs on: it must not run
    /// out of stack.
    #[test]
    fn a_large_pair_diffs_on_the_worker() {
        let f = sample("big12k.pt2");
        let r = worker("test-diff").spawn(move || compute(&f, &f, None, None).map(|r| r.file.differs())).expect("spawn").join();
        assert_eq!(r.expect("the worker finished"), Ok(false));
    }

    /// A model that opens folded (its layers are boxes) against its full decomposition: with the
    /// folding the diff mode lays it out with, every difference is a box of its own on its side.
    #[test]
    fn differences_are_never_hidden_in_a_folded_module() {
        let f = sample("tiny_llama_auto.pt2");
        let r = compute(&f, &f, Some("none"), Some("full")).expect("diff");
        let (p, v) = (&r.file.pairs[0], &r.views[0]);
        assert!(p.diff.differs());
        assert!(!v.fold.is_empty(), "the model opens folded");
        let mut collapsed = v.fold.clone();
        collapsed.retain(|m| !v.keep_open.contains(m));
        for (g, side) in [(&v.a, Side::A), (&v.b, Side::B)] {
            let l = layout(g, &collapsed);
            for n in p.diff.differences().filter_map(|e| node_of(e, side)) {
                let item = l.item_of(n).expect("drawn");
                assert_eq!(l.items[item].kind, ItemKind::Node(n), "{side:?} {}: inside a folded module", g.node(n).name);
            }
        }
    }
}
