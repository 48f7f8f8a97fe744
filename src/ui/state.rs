//! The app's store: what is loaded, what each view shows, what the user chose. Panels read it and
//! emit [`Command`](super::Command)s; only [`App::apply`](super::App) changes it, and heavy work
//! it asks for (loading, decomposing, laying out) runs on workers.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use egui::{Pos2, Vec2};
use serde::{Deserialize, Serialize};

use super::layout::Layout;
use crate::decomp::{Decomposition, Marks, Mode};
use crate::import::EMBEDDED_SAMPLE_NAME;
use crate::ir::{Graph, Model, NodeId};
use crate::shapes::{evaluate_graph, evaluate_guards, ConcreteTensor};
use crate::sym::{Bindings, SymError};

mod classify;
mod related;

/// The three graphs the app compares, and the three stages of a TORCH_TRACE compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum View {
    Original,
    Lite,
    Full,
    /// Dynamo's output graph of the picked compile id.
    Dynamo,
    /// Its AOT autograd graph (inference, else forward, else joint).
    Aot,
    /// Inductor's post-grad graph.
    PostGrad,
    /// The post-grad graph grouped and coloured by the Inductor kernel computing each node.
    Kernels,
    /// The diff mode's two graphs: the open file's (A) and the one compared with it (B).
    DiffA,
    DiffB,
}

impl View {
    /// The decomposition views (keys 1, 2, 3).
    pub const ALL: [View; 3] = [View::Original, View::Lite, View::Full];
    /// The TORCH_TRACE stage views, in pipeline order.
    pub const STAGES: [View; 4] = [View::Dynamo, View::Aot, View::PostGrad, View::Kernels];
    /// The diff mode's panes (`ui::diff_view`).
    pub const DIFF: [View; 2] = [View::DiffA, View::DiffB];

    pub fn is_stage(self) -> bool {
        View::STAGES.contains(&self)
    }

    /// Its place in [`View::STAGES`].
    pub fn stage_index(self) -> Option<usize> {
        View::STAGES.iter().position(|v| *v == self)
    }

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            View::Original => "original",
            View::Lite => "lite",
            View::Full => "full",
            View::Dynamo => "dynamo",
            View::Aot => "aot",
            View::PostGrad => "post-grad",
            View::Kernels => "kernels",
            View::DiffA => "diff A",
            View::DiffB => "diff B",
        }
    }

    pub fn mode(self) -> Mode {
        match self {
            View::Lite => Mode::Lite,
            View::Full => Mode::Full,
            _ => Mode::None,
        }
    }
}

/// Where a model comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Embedded,
    File(PathBuf),
}

impl Source {
    pub fn label(&self) -> String {
        match self {
            Source::Embedded => format!("{EMBEDDED_SAMPLE_NAME} (embedded)"),
            Source::File(p) => p.display().to_string(),
        }
    }

    /// The key a session is stored under.
    pub fn session_key(&self) -> String {
        match self {
            Source::Embedded => format!("embedded:{EMBEDDED_SAMPLE_NAME}"),
            Source::File(p) => std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()).display().to_string(),
        }
    }
}

/// How a node is drawn: what decomposition did to it (or to the node it came from).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeClass {
    Plain,
    /// Made by decomposing a node (or, in the original view, a node that lite mode decomposes).
    Decomposed,
    /// Kept whole in lite mode: runs as an eager fallback kernel.
    Fallback,
    /// Decomposed although lite mode should have kept it.
    Violation,
    /// The mode would decompose it but there is no rule: kept and reported.
    NoRule,
    /// Not marked, but the target backend has no kernel for it: tracing expands it in lite mode too.
    BackendExpanded,
    /// Kept whole in lite mode, and the target sends it to the CPU at run time (torch-xpu-ops'
    /// fallback list): a device round trip per call.
    CpuFallback,
    /// Kept whole in lite mode, and the target has nothing for it: NotImplementedError at run time.
    NotImplemented,
}

/// How a camera is placed on the graph once the pane's size is known (only while drawing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// The whole graph (key F, the pane's "fit" button).
    All,
    /// The first view of a model: readable text, the graph's width, its top.
    Top,
    /// Show this world rectangle (a module just opened or picked in the breadcrumbs) at the
    /// current zoom: all of it when it fits, else its top.
    Reveal(egui::Rect),
}

/// Pan and zoom of one graph pane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// World point at the pane's centre.
    pub center: Pos2,
    pub zoom: f32,
    /// Placed on the next frame.
    pub fit_pending: Option<Fit>,
}

impl Default for Camera {
    fn default() -> Self {
        Camera { center: Pos2::ZERO, zoom: 1.0, fit_pending: Some(Fit::Top) }
    }
}

impl Camera {
    pub fn pan_by(&mut self, screen_delta: Vec2) {
        self.center -= screen_delta / self.zoom;
    }
}

/// What a pane brings into view once laid out.
#[derive(Clone, Debug, PartialEq)]
pub enum Reveal {
    Module(String),
    Node(NodeId),
}

impl Reveal {
    /// Where it is in `layout`.
    pub fn rect(&self, layout: &Layout) -> Option<egui::Rect> {
        match self {
            Reveal::Module(p) => layout.rect_of_module(p),
            Reveal::Node(n) => layout.item_of(*n).map(|i| layout.items[i].rect),
        }
    }
}

/// Everything one view shows.
#[derive(Default)]
pub struct Pane {
    pub graph: Option<Arc<Graph>>,
    /// `None` for the original view.
    pub decomp: Option<Arc<Decomposition>>,
    pub layout: Option<Arc<Layout>>,
    /// Concrete shape of each value of `graph` under the current bindings.
    pub shapes: Vec<Option<Result<ConcreteTensor, SymError>>>,
    pub classes: Vec<NodeClass>,
    /// What the pane waits for ("decomposing", "laying out"), shown instead of a stale graph.
    pub busy: Option<String>,
    pub error: Option<String>,
    /// The node a failed decomposition names (a node of the original graph).
    pub error_node: Option<String>,
    /// Why this view's decomposition does not lower to kernels, and the node (of this view's
    /// graph) it names; checked on a worker after each decomposition.
    pub lower_error: Option<(String, Option<String>)>,
    /// Per original node: whether this view's decomposition decomposed it (lite and full only).
    pub decomposed_origin: Vec<bool>,
    pub camera: Camera,
    /// What to bring into view when the next layout arrives (a module just opened or folded, a
    /// node a link jumped to inside folded modules).
    pub reveal: Option<Reveal>,
    /// Bumped on every request so a late worker result for an older request is dropped.
    pub generation: u64,
}

/// A node picked by the user, in the view it was picked in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    pub view: View,
    pub node: NodeId,
}

/// A model and what the user did with it.
pub struct Doc {
    pub source: Source,
    pub model: Arc<Model>,
    /// Index into `model.graphs` of the graph shown.
    pub graph: usize,
}

/// One guard's truth at the traced hints and now.
#[derive(Clone, Debug, PartialEq)]
pub struct GuardState {
    pub text: String,
    /// The symbols it reads: a flip is blamed on them.
    pub symbols: Vec<String>,
    pub at_hint: Result<bool, String>,
    pub now: Result<bool, String>,
}

impl GuardState {
    /// A guard whose value differs from the one the artifact was traced with: PyTorch recompiles.
    pub fn flipped(&self) -> bool {
        matches!((&self.at_hint, &self.now), (Ok(a), Ok(b)) if a != b)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Theme {
    #[default]
    Dark,
    Light,
}

/// The app's whole state apart from widgets.
pub struct AppState {
    pub doc: Option<Doc>,
    /// What is being opened, if anything.
    pub loading: Option<String>,
    /// One per [`View`], decomposition views first.
    pub panes: [Pane; 9],
    /// The TORCH_TRACE compile whose stages are shown instead of the decomposition views.
    pub stages: Option<super::stages::StageSet>,
    /// The view the keyboard and the inspector follow.
    pub focus: View,
    /// Which views are shown side by side.
    pub shown: [bool; 3],
    /// Which of [`View::STAGES`] are shown side by side (when the log has them).
    pub stages_shown: [bool; 4],
    pub marks: Marks,
    /// The backend the lite view is derived for (`None`: marks alone decide). Nodes it has no
    /// kernel for are expanded by tracing whatever the marks say.
    pub target_backend: Option<crate::ops::Backend>,
    /// The original graph's nodes the target backend expands while tracing (no kernel there, a
    /// composite body), with why, by node.
    pub backend_fates: HashMap<NodeId, crate::decomp::predict::NodeFate>,
    /// The torch version of the kernel table the fates come from.
    pub backend_table: Option<String>,
    /// What the target's ATen does with each original node, from the same table.
    pub readiness: super::readiness::Readiness,
    /// check-lite's verdict on each dynamo node of the shown compile (stage views), by node.
    pub stage_findings: HashMap<NodeId, crate::decomp::lite_trace::Finding>,
    /// What check-lite could not compare in the shown compile.
    pub stage_unverified: Vec<String>,
    /// check-lite's verdict on the whole open log (`None` for other files).
    pub log_verdict: Option<Arc<super::log_open::LogVerdict>>,
    /// How each shown stage differs from the one before, once a worker has diffed them.
    pub stage_diffs: Vec<super::log_open::StageDiff>,
    /// Whether our lite/full re-decomposition of the original graph is computed: on open for an
    /// export, for a log only once the user asks (a dynamo graph is torch's to lower, not ours).
    pub redecompose: bool,
    /// Symbol values the user chose (the others take their hint).
    pub explicit: BTreeMap<String, i64>,
    pub bindings: Bindings,
    pub guards: Vec<GuardState>,
    /// Bumped on every re-evaluation, so views that cache text know it is stale.
    pub shape_version: u64,
    /// Folded modules: each is drawn as one box (the outermost folded one of a node wins).
    pub collapsed: BTreeSet<String>,
    /// The module the user is in (breadcrumbs): the last one opened, clicked or selected into.
    pub module: Option<String>,
    /// Move the other decomposition views' cameras with the one the user moves.
    pub sync_cameras: bool,
    pub selection: Option<Selection>,
    pub search_open: bool,
    pub search: String,
    pub show_neighbourhood: bool,
    /// The problems panel; `None` until the user chooses: shown while there are problems.
    pub show_problems: Option<bool>,
    pub theme: Theme,
    pub recent: Vec<PathBuf>,
    /// Messages for the status bar, newest last.
    pub messages: Vec<String>,
    pub profile: super::profiling::ProfileState,
    /// The profile panel's comparison with Inductor's kernels.
    pub against: super::against_inductor::AgainstState,
    pub sweep: super::sweeping::SweepState,
    /// The kernels stage of the shown compile and the kernel picked in it.
    pub kernels: super::kernel_stage::KernelsState,
    /// The open log compared with another log of the same model.
    pub compare: super::comparing::CompareState,
    /// The diff mode: the open file against a second one.
    pub diff: super::diff_view::DiffState,
}

impl Default for AppState {
    fn default() -> Self {
        AppState {
            doc: None,
            loading: None,
            panes: Default::default(),
            stages: None,
            focus: View::Original,
            shown: [true, true, false],
            stages_shown: [true; 4],
            marks: Marks::default(),
            target_backend: Some(crate::ops::Backend::Xpu),
            backend_fates: HashMap::new(),
            backend_table: None,
            readiness: Default::default(),
            stage_findings: HashMap::new(),
            stage_unverified: Vec::new(),
            log_verdict: None,
            stage_diffs: Vec::new(),
            redecompose: true,
            explicit: BTreeMap::new(),
            bindings: Bindings::new(),
            guards: Vec::new(),
            shape_version: 0,
            collapsed: BTreeSet::new(),
            module: None,
            sync_cameras: true,
            selection: None,
            search_open: false,
            search: String::new(),
            show_neighbourhood: true,
            show_problems: None,
            theme: Theme::Dark,
            recent: Vec::new(),
            messages: Vec::new(),
            profile: Default::default(),
            against: Default::default(),
            sweep: Default::default(),
            kernels: Default::default(),
            compare: Default::default(),
            diff: Default::default(),
        }
    }
}

impl AppState {
    pub fn pane(&self, v: View) -> &Pane {
        &self.panes[v.index()]
    }

    pub fn pane_mut(&mut self, v: View) -> &mut Pane {
        &mut self.panes[v.index()]
    }

    pub fn original(&self) -> Option<&Graph> {
        self.doc.as_ref().map(|d| &d.model.graphs[d.graph])
    }

    /// Whether a worker is still busy on something the user will see.
    pub fn busy(&self) -> bool {
        self.loading.is_some()
            || self.panes.iter().any(|p| p.busy.is_some())
            || self.profile.running.is_some()
            || self.sweep.busy()
            || self.kernels.busy.is_some()
            || self.compare.running.is_some()
            || self.diff.busy()
            || self.against.busy()
    }

    pub fn message(&mut self, text: impl Into<String>) {
        self.messages.push(text.into());
        if self.messages.len() > 50 {
            self.messages.remove(0);
        }
    }

    /// Resolves the bindings (user values, then hints; a symbol with no hint takes its minimum)
    /// and re-evaluates every shape, stride, byte size and guard. This is the slider's hot path.
    pub fn rebind(&mut self) {
        let Some(doc) = &self.doc else { return };
        let model = doc.model.clone();
        let mut b = Bindings::new();
        for s in &model.symbols {
            let v = self.explicit.get(&s.name).copied().or(s.hint).unwrap_or_else(|| clamp_i64(s.range.min));
            b.set(&s.name, v);
        }
        self.bindings = b;
        self.shape_version += 1;
        for pane in &mut self.panes {
            pane.shapes = match &pane.graph {
                Some(g) => evaluate_graph(g, &self.bindings),
                None => Vec::new(),
            };
        }
        let hints: Bindings = model
            .symbols
            .iter()
            .map(|s| (s.name.clone(), s.hint.unwrap_or_else(|| clamp_i64(s.range.min))))
            .collect();
        let at_hint = evaluate_guards(&model, &hints);
        let now = evaluate_guards(&model, &self.bindings);
        self.guards = model
            .guards
            .iter()
            .zip(at_hint.into_iter().zip(now))
            .map(|(g, (h, n))| GuardState {
                text: g.expr.to_string(),
                symbols: g.expr.free_symbols().iter().map(|s| s.to_string()).collect(),
                at_hint: h.map_err(|e| e.to_string()),
                now: n.map_err(|e| e.to_string()),
            })
            .collect();
        // Listed too, with why they are not evaluated: a guard the file records is never hidden.
        self.guards.extend(model.unread_guards.iter().map(|g| {
            let why = format!("not evaluated: {}", g.reason);
            GuardState { text: g.source.clone(), symbols: Vec::new(), at_hint: Err(why.clone()), now: Err(why) }
        }));
    }

    /// Concrete shape of `node`'s first tensor output in `view`, if it evaluates.
    pub fn concrete(&self, view: View, node: NodeId) -> Option<&ConcreteTensor> {
        let pane = self.pane(view);
        let g = pane.graph.as_ref()?;
        g.node(node).outputs.iter().find_map(|v| pane.shapes.get(v.index())?.as_ref()?.as_ref().ok())
    }
}

pub fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// `aten.layer_norm.default` → `layer_norm`: what fits on a node box.
pub fn short_op(target: &str) -> &str {
    let t = target.strip_prefix("aten.").unwrap_or(target);
    t.strip_suffix(".default").unwrap_or(t)
}

/// `[s77, 64]`
pub fn format_dims<T: std::fmt::Display>(dims: &[T]) -> String {
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}
