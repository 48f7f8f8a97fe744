//! The eframe app: each frame it takes worker results, reads shortcuts and dropped files, draws the
//! panels (which only read [`AppState`] and push [`Command`]s), then applies the commands.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui::{Key, KeyboardShortcut, Modifiers};

use super::command::{Command, ExportKind, MarkTarget};
use super::jobs::{JobResult, Jobs};
use super::layout::layout;
use super::neighbourhood::Neighbourhood;
use super::panels;
use super::session::{Session, Settings, Store};
use super::hierarchy::{Hierarchy, OPEN_BOXES};
use super::state::{AppState, Camera, Doc, Fit, Reveal, Source, Theme, View};
use crate::decomp::{decompose, Marks};
use crate::import;
use crate::ir::NodeId;
use crate::profile::{profile_plan, CpuCapture};
use crate::runtime::probe_all;

const SAVE_EVERY: Duration = Duration::from_millis(750);

pub struct App {
    pub state: AppState,
    jobs: Jobs,
    store: Option<Store>,
    commands: Vec<Command>,
    neighbourhood: Neighbourhood,
    applied_theme: Option<Theme>,
    fonts_set: bool,
    load_generation: u64,
    dirty_since: Option<Instant>,
    /// Run & profile (heat overlay on) once the model is open and the devices are probed.
    profile_when_open: bool,
    /// Show this compile's stages once the log is open, then pick this kernel in them.
    stages_when_open: Option<String>,
    kernel_when_shown: Option<String>,
}

impl App {
    /// An app that opens `source`; `store` is where sessions persist (`None`: nowhere).
    pub fn new(source: Source, store: Option<Store>) -> App {
        let settings = store.as_ref().map(Store::load_settings).unwrap_or_default();
        let state = AppState { theme: settings.theme, recent: settings.recent, ..AppState::default() };
        let mut app = App {
            state,
            jobs: Jobs::default(),
            store,
            commands: vec![Command::Open(source)],
            neighbourhood: Neighbourhood::default(),
            applied_theme: None,
            fonts_set: false,
            load_generation: 0,
            dirty_since: None,
            profile_when_open: false,
            stages_when_open: None,
            kernel_when_shown: None,
        };
        app.state.loading = Some("starting".into());
        // Probing loads the OpenCL and Level Zero libraries: not on the UI thread.
        app.jobs.spawn("probe", || JobResult::Devices(probe_all()));
        app
    }

    /// Runs & profiles the model, with the heat overlay on, as soon as it is open.
    pub fn profile_when_open(&mut self) {
        self.profile_when_open = true;
    }

    /// Shows compile `id`'s stages as soon as the log is open, and picks `kernel` in them.
    pub fn show_stages_when_open(&mut self, id: String, kernel: Option<String>) {
        self.stages_when_open = Some(id);
        self.kernel_when_shown = kernel;
    }

    /// Whether a load, decomposition or layout is still running (tests wait for this).
    pub fn busy(&self) -> bool {
        self.state.busy() || self.jobs.running() > 0 || !self.commands.is_empty()
    }

    /// Draws one frame. `eframe::App::update` calls this; headless tests call it directly.
    pub fn ui(&mut self, ctx: &egui::Context) {
        self.jobs.set_context(ctx);
        while let Some(r) = self.jobs.try_recv() {
            self.on_job(r);
        }
        super::sweeping::frame(&mut self.state, ctx);
        for v in super::diff_view::frame(&mut self.state, ctx) {
            self.request_layout(v);
        }
        super::against_inductor::frame(&mut self.state, ctx);
        if !self.fonts_set {
            ctx.set_fonts(super::assets::fonts());
            self.fonts_set = true;
        }
        if self.applied_theme != Some(self.state.theme) {
            ctx.set_visuals(match self.state.theme {
                Theme::Dark => egui::Visuals::dark(),
                Theme::Light => egui::Visuals::light(),
            });
            self.applied_theme = Some(self.state.theme);
        }
        self.shortcuts(ctx);
        if self.profile_when_open && self.state.doc.is_some() && self.state.profile.device.is_some() && !self.busy() {
            self.profile_when_open = false;
            self.state.profile.heat = true;
            self.commands.push(Command::RunProfile);
        }
        if self.state.doc.is_some() && self.state.loading.is_none() {
            if let Some(id) = self.stages_when_open.take() {
                self.commands.push(Command::ShowStages(Some(id)));
            }
        }
        // Once the kernels pane has placed its first camera, which would otherwise replace the
        // picked kernel's.
        let placed = self.state.pane(View::Kernels).camera.fit_pending.is_none();
        if let Some(stage) = self.state.kernels.stage.clone().filter(|_| self.kernel_when_shown.is_some() && placed) {
            let name = self.kernel_when_shown.take().unwrap_or_default();
            match stage.kernels.iter().position(|k| k.name == name) {
                Some(i) => {
                    // The kernel beside the dynamo graph it came from; the other stages can be
                    // ticked back on.
                    for v in [View::Aot, View::PostGrad] {
                        self.commands.push(Command::SetStageShown(v, false));
                    }
                    self.commands.push(Command::SelectKernel(Some(i)));
                    // Applied after this frame is drawn: draw another to show them.
                    ctx.request_repaint();
                }
                None => self.state.message(format!("compile {}: no kernel `{name}`", stage.compile_id)),
            }
        }
        if self.stages_when_open.is_some() || self.kernel_when_shown.is_some() {
            // Waiting on the load and the first layout, which need frames to arrive.
            ctx.request_repaint_after(Duration::from_millis(50));
        }
        for f in ctx.input(|i| i.raw.dropped_files.clone()) {
            if let Some(path) = f.path {
                self.commands.push(Command::Open(Source::File(path)));
            }
        }

        let mut cmds = std::mem::take(&mut self.commands);
        panels::top::show(ctx, &self.state, &mut cmds);
        let problems = panels::problems::collect(&self.state);
        panels::status::show(ctx, &self.state, problems.len(), &mut cmds);
        panels::problems::show(ctx, &self.state, &problems, &mut cmds);
        panels::dims::show(ctx, &self.state, &mut cmds);
        panels::inspector::show(ctx, &self.state, &mut cmds);
        panels::kernels::show(ctx, &self.state, &mut cmds);
        if self.state.profile.open {
            panels::profile::show(ctx, &self.state, &mut cmds);
        }
        if self.state.compare.open {
            panels::compare::show(ctx, &self.state, &mut cmds);
        }
        if self.state.sweep.open {
            panels::sweep::show(ctx, &self.state, &mut cmds);
        }
        if self.state.show_neighbourhood {
            self.neighbourhood.show(ctx, &self.state, &mut cmds);
        }
        if self.state.diff.open {
            panels::diff::show(ctx, &self.state, &mut cmds);
        } else {
            panels::graphs::show(ctx, &self.state, &mut cmds);
        }
        if self.state.search_open {
            panels::search::show(ctx, &self.state, &mut cmds);
        }
        for c in cmds {
            self.apply(c, ctx);
        }

        if self.state.busy() || self.jobs.running() > 0 {
            ctx.request_repaint_after(Duration::from_millis(100));
        }
        if self.dirty_since.is_some_and(|t| t.elapsed() >= SAVE_EVERY) {
            self.save();
        } else if self.dirty_since.is_some() {
            ctx.request_repaint_after(SAVE_EVERY);
        }
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        let typing = ctx.wants_keyboard_input();
        let mut out = Vec::new();
        ctx.input_mut(|i| {
            if i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::O)) {
                out.push(Command::OpenDialog);
            }
            if i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::R)) {
                out.push(Command::RunProfile);
            }
            if i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::F)) {
                out.push(Command::OpenSearch);
            }
            if i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::B)) {
                use crate::ops::Backend;
                let order = [Some(Backend::Xpu), Some(Backend::Cuda), Some(Backend::Cpu), None];
                let at = order.iter().position(|b| *b == self.state.target_backend).unwrap_or(0);
                out.push(Command::SetTargetBackend(order[(at + 1) % order.len()]));
            }
            if i.consume_key(Modifiers::NONE, Key::Escape) && self.state.search_open {
                out.push(Command::CloseSearch);
            }
            if typing {
                return;
            }
            if i.consume_key(Modifiers::NONE, Key::F) {
                out.push(Command::Fit(self.state.focus));
            }
            for (key, view) in [(Key::Num1, View::Original), (Key::Num2, View::Lite), (Key::Num3, View::Full)] {
                if i.consume_key(Modifiers::NONE, key) {
                    out.push(Command::Focus(view));
                }
            }
        });
        self.commands.extend(out);
    }

    /// The one place the state changes in answer to the user.
    pub fn apply(&mut self, cmd: Command, ctx: &egui::Context) {
        let s = &mut self.state;
        match cmd {
            Command::Open(source) => self.open(source),
            Command::OpenDialog => self.open_dialog(),
            Command::Focus(v) => {
                // Keys 1/2/3 while a log's stages are shown go back to the decomposition views.
                if !v.is_stage() {
                    s.stages = None;
                    s.stage_diffs.clear();
                }
                s.focus = v;
                if let Some(shown) = s.shown.get_mut(v.index()) {
                    *shown = true;
                }
                // Our decomposition views, for a log: the user asks for our re-decomposition.
                if View::ALL.contains(&v) {
                    self.redecompose();
                }
                self.touch();
            }
            Command::SetShown(v, on) => {
                s.shown[v.index()] = on;
                if !s.shown.iter().any(|x| *x) {
                    s.shown[View::Original.index()] = true;
                }
                self.touch();
            }
            Command::SetStageShown(v, on) => {
                if let Some(i) = v.stage_index() {
                    s.stages_shown[i] = on;
                    if !s.stages_shown.iter().any(|x| *x) {
                        s.stages_shown[i] = true;
                    }
                }
            }
            Command::Select(view, node) => {
                s.selection = Some(super::state::Selection { view, node });
                s.focus = view;
                if matches!(view, View::Kernels | View::PostGrad) {
                    let name = s.pane(view).graph.as_deref().filter(|g| node.index() < g.nodes.len()).map(|g| g.node(node).name.clone());
                    let k = s.kernels.stage.as_ref().zip(name).and_then(|(st, n)| st.kernel_of.get(&n).copied());
                    s.kernels.selected = k;
                }
                if let Some(l) = s.pane(view).layout.as_deref() {
                    s.module = l.hierarchy.frames_of(node).last().map(|(path, _)| path.clone());
                }
                for v in super::diff_view::selected(s, view, node) {
                    self.request_layout(v);
                }
            }
            Command::ClearSelection => s.selection = None,
            Command::JumpTo(view, node) => {
                if self.unfold_to(view, node) {
                    return;
                }
                let s = &mut self.state;
                s.selection = Some(super::state::Selection { view, node });
                s.focus = view;
                if let Some(shown) = s.shown.get_mut(view.index()) {
                    *shown = true;
                }
                let pane = s.pane_mut(view);
                if let Some(rect) = pane.layout.as_ref().and_then(|l| l.item_of(node).map(|i| l.items[i].rect)) {
                    pane.camera.center = rect.center();
                    pane.camera.zoom = pane.camera.zoom.max(0.8);
                    pane.camera.fit_pending = None;
                }
            }
            Command::SetMark(target, on) => {
                let list = match &target {
                    MarkTarget::Node(_) => &mut s.marks.names,
                    MarkTarget::Module(_) => &mut s.marks.modules,
                };
                let (MarkTarget::Node(name) | MarkTarget::Module(name)) = target;
                list.retain(|x| *x != name);
                if on {
                    list.push(name);
                }
                self.state.refresh_backend_fates();
                self.request_decomposition(View::Lite);
                self.state.classify();
                self.touch();
            }
            Command::SetTargetBackend(b) => {
                s.target_backend = b;
                self.state.refresh_backend_fates();
                self.request_decomposition(View::Lite);
                self.state.classify();
            }
            Command::SetBinding(name, value) => {
                s.explicit.insert(name, value);
                s.rebind();
                self.touch();
            }
            Command::BindSweepPoint(name, value) => {
                s.explicit.insert(name, value);
                s.rebind();
                let p = &s.profile;
                let follow = p.heat && p.running.is_none() && p.result.as_ref().is_some_and(|r| !r.imported);
                self.touch();
                if follow {
                    self.run_profile();
                }
            }
            Command::ResetBindings => {
                s.explicit.clear();
                s.rebind();
                self.touch();
            }
            Command::ToggleCollapse(path) => {
                if s.collapsed.remove(&path) {
                    // Opening shows the module's children folded, not everything under it.
                    let children = s.panes.iter().filter_map(|p| p.layout.as_ref()).map(|l| l.hierarchy.children(&path)).find(|c| !c.is_empty());
                    s.collapsed.extend(children.unwrap_or_default());
                } else {
                    s.collapsed.insert(path.clone());
                }
                s.module = Some(path.clone());
                self.relayout(Some(path));
            }
            Command::SetFolded(set) => {
                s.collapsed = set;
                let keep = s.module.clone();
                self.relayout(keep);
            }
            Command::FocusModule(path) => s.module = path,
            Command::RevealModule(path) => {
                s.module = path.clone();
                for v in View::ALL.into_iter().chain(View::STAGES) {
                    let pane = s.pane_mut(v);
                    let rect = match (&path, &pane.layout) {
                        (Some(p), Some(l)) => l.rect_of_module(p),
                        _ => None,
                    };
                    pane.camera.fit_pending = Some(rect.map_or(Fit::Top, Fit::Reveal));
                }
            }
            Command::SetSyncCameras(on) => s.sync_cameras = on,
            Command::PlaceCamera(v, cam) => s.pane_mut(v).camera = cam,
            Command::ShowProblems(on) => s.show_problems = Some(on),
            Command::Fit(v) => s.pane_mut(v).camera.fit_pending = Some(Fit::All),
            Command::SetCamera(v, cam) => {
                s.pane_mut(v).camera = cam;
                if s.sync_cameras && View::ALL.contains(&v) {
                    super::camera_sync::follow(s, v);
                } else if s.sync_cameras && View::DIFF.contains(&v) {
                    super::diff_view::follow(s, v);
                }
                self.touch();
            }
            Command::OpenSearch => s.search_open = true,
            Command::CloseSearch => s.search_open = false,
            Command::SetSearch(text) => s.search = text,
            Command::SetTheme(t) => {
                s.theme = t;
                self.save_settings();
            }
            Command::ToggleNeighbourhood => s.show_neighbourhood = !s.show_neighbourhood,
            Command::Copy(text) => ctx.copy_text(text),
            Command::ForgetRecent(p) => {
                s.recent.retain(|r| *r != p);
                self.save_settings();
            }
            Command::PickDevice(b) => s.profile.device = Some(b),
            Command::PickGraph(i) => {
                if let Some(doc) = &s.doc {
                    if i < doc.model.graphs.len() && i != doc.graph {
                        let (source, model) = (doc.source.clone(), doc.model.clone());
                        self.show_graph(source, model, i, None, true);
                    }
                }
            }
            Command::ShowStages(id) => self.show_stages(id),
            Command::SelectKernel(k) => {
                let path = s.kernels.stage.as_ref().zip(k).and_then(|(st, i)| st.kernels.get(i)).map(super::kernel_stage::group_path);
                s.kernels.selected = k;
                // The kernel's nodes are what is highlighted now, not a node picked before.
                s.selection = None;
                // Bring the kernel's box into view in the kernels pane.
                let pane = s.pane_mut(View::Kernels);
                if let Some(rect) = path.as_deref().and_then(|p| pane.layout.as_ref()?.rect_of_module(p)) {
                    pane.camera.fit_pending = Some(Fit::Reveal(rect));
                }
                if path.is_some() {
                    s.module = path;
                }
            }
            Command::RunProfile => self.run_profile(),
            Command::Sweep(c) => super::sweeping::apply(&mut self.state, c, ctx),
            Command::AgainstInductor(c) => super::against_inductor::apply(&mut self.state, c, ctx),
            Command::ShowProfile(on) => s.profile.open = on,
            Command::SetHeat(on) => s.profile.heat = on,
            Command::ExportDialog(kind) => self.export_dialog(kind),
            Command::Export(kind, path) => self.export(kind, path),
            Command::ExportReportDialog => super::report_export::dialog(&self.jobs, &self.state),
            Command::ExportReport(path) => super::report_export::write(&self.jobs, &self.state, path),
            Command::ImportProfileDialog => self.import_profile_dialog(),
            Command::ImportProfile(path) => self.import_profile(path),
            Command::CompareDialog(slot) => self.compare_dialog(slot),
            Command::Compare(inputs) => self.compare(inputs),
            Command::ShowCompare(on) => s.compare.open = on,
            Command::SetCompareAllNodes(on) => s.compare.all_nodes = on,
            Command::Diff(c) => {
                for v in super::diff_view::apply(s, c, ctx) {
                    self.request_layout(v);
                }
            }
        }
    }

    fn touch(&mut self) {
        if self.dirty_since.is_none() {
            self.dirty_since = Some(Instant::now());
        }
    }

    fn open(&mut self, source: Source) {
        if self.dirty_since.is_some() {
            self.save();
        }
        self.load_generation += 1;
        let generation = self.load_generation;
        self.state.loading = Some(source.label());
        let src = source.clone();
        self.jobs.spawn("load", move || {
            let result = match &src {
                Source::Embedded => import::load_embedded_sample().map(|m| (m, None)).map_err(|e| e.to_string()),
                Source::File(p) => super::log_open::load(p),
            };
            // The first graph's module tree is built here, not on the UI thread (12,000 nodes).
            let folded = result.as_ref().ok().and_then(|(m, _)| m.graphs.first()).map(|g| Hierarchy::of(g).default_folded(OPEN_BOXES));
            JobResult::Loaded { generation, source: src, result, folded }
        });
    }

    #[cfg(feature = "file-dialog")]
    fn open_dialog(&mut self) {
        self.pick_file("Open a model or a TORCH_TRACE log", ("model or log", &["pt2", "zip", "onnx", "log", "gz"]), JobResult::Picked);
    }

    /// The system's file dialog on a worker (it blocks); `done` turns the pick into a result.
    #[cfg(feature = "file-dialog")]
    fn pick_file(&mut self, title: &'static str, filter: (&'static str, &'static [&'static str]), done: fn(Option<std::path::PathBuf>) -> JobResult) {
        self.jobs.spawn("dialog", move || {
            let picked =
                rfd::FileDialog::new().set_title(title).add_filter(filter.0, filter.1).add_filter("any file", &["*"]).pick_file();
            done(picked)
        });
    }

    #[cfg(not(feature = "file-dialog"))]
    fn open_dialog(&mut self) {
        self.state.message("this build has no file dialog: drop a file on the window or pass it on the command line");
    }

    fn on_job(&mut self, r: JobResult) {
        match r {
            JobResult::Loaded { generation, source, result, folded } => {
                if generation != self.load_generation {
                    return;
                }
                self.state.loading = None;
                match result {
                    Ok((model, _)) if model.graphs.is_empty() => {
                        self.state.message(format!("{}: the file holds no graph", source.label()))
                    }
                    Ok((model, verdict)) => {
                        // A log opens on torch's own stages; our re-decomposition waits to be asked for.
                        let open_on = self.stages_when_open.take().or_else(|| super::log_open::opening_compile(&model));
                        let redecompose = super::log_open::decomposes_on_open(&model, open_on.as_deref());
                        let index = super::log_open::original_index(&model, open_on.as_deref());
                        // The worker folded the first graph only.
                        let folded = folded.filter(|_| index == 0);
                        self.show_graph(source, Arc::new(model), index, folded, redecompose);
                        self.state.log_verdict = verdict.map(Arc::new);
                        if open_on.is_some() {
                            self.show_stages(open_on);
                        }
                        // A compile id with no stage graph (`--stages` mistyped): our views, not empty panes.
                        if self.state.stages.is_none() {
                            self.redecompose();
                        }
                    }
                    Err(e) => self.state.message(e),
                }
            }
            JobResult::Decomposed { view, generation, result } => {
                let pane = self.state.pane_mut(view);
                if generation != pane.generation {
                    return;
                }
                pane.busy = None;
                match result.map(|b| *b) {
                    Ok((d, l)) => {
                        if let Some(rect) = pane.reveal.take().and_then(|r| r.rect(&l)) {
                            pane.camera.fit_pending = Some(Fit::Reveal(rect));
                        }
                        pane.graph = Some(Arc::new(d.graph.clone()));
                        let d = Arc::new(d);
                        pane.decomp = Some(d.clone());
                        pane.layout = Some(Arc::new(l));
                        pane.error = None;
                        pane.error_node = None;
                        pane.lower_error = None;
                        self.state.rebind();
                        self.state.classify();
                        self.request_lowering(view, generation, d);
                    }
                    Err((e, node)) => {
                        pane.error = Some(e.clone());
                        pane.error_node = node;
                        // The view shows no stale graph of another marking.
                        pane.graph = None;
                        pane.decomp = None;
                        pane.layout = None;
                        pane.lower_error = None;
                        self.state.classify();
                        self.state.message(e);
                    }
                }
            }
            JobResult::StageDiffs { compile_id, diffs } => {
                if self.state.stages.as_ref().is_some_and(|s| s.compile_id == compile_id) {
                    self.state.stage_diffs = diffs;
                }
            }
            JobResult::Lowered { view, generation, error } => {
                let pane = self.state.pane_mut(view);
                if generation == pane.generation {
                    pane.lower_error = error;
                }
            }
            JobResult::LaidOut { view, generation, layout } => {
                let pane = self.state.pane_mut(view);
                if generation == pane.generation {
                    pane.busy = None;
                    if let Some(rect) = pane.reveal.take().and_then(|r| r.rect(&layout)) {
                        pane.camera.fit_pending = Some(Fit::Reveal(rect));
                    }
                    pane.layout = Some(Arc::new(layout));
                }
            }
            JobResult::Picked(Some(path)) => self.open(Source::File(path)),
            JobResult::Picked(None) => {}
            JobResult::Devices(d) => self.state.profile.set_devices(d),
            JobResult::ProfileProgress { generation, text } => {
                let p = &mut self.state.profile;
                if generation == p.generation && p.running.is_some() {
                    p.running = Some(text);
                }
            }
            JobResult::Profiled { generation, view, result } => {
                let p = &mut self.state.profile;
                if generation != p.generation {
                    return;
                }
                p.running = None;
                match result {
                    Ok(run) => {
                        let (trace, ours) = *run;
                        let mut r = super::profiling::ProfileResult::new(view, trace);
                        r.ours = Some(Arc::new(ours));
                        p.result = Some(Arc::new(r));
                        p.error = None;
                    }
                    Err(e) => {
                        p.error = Some(e.clone());
                        self.state.message(format!("profile failed: {e}"));
                    }
                }
            }
            JobResult::ImportedProfile { generation, path, result } => {
                let p = &mut self.state.profile;
                if generation != p.generation {
                    return;
                }
                p.running = None;
                match result {
                    Ok(trace) => {
                        let mut r = super::profiling::ProfileResult::new(View::Original, *trace);
                        r.imported = true;
                        r.imported_from = Some(path);
                        p.result = Some(Arc::new(r));
                        p.heat = true;
                        p.error = None;
                    }
                    Err(e) => {
                        p.error = Some(e.clone());
                        self.state.message(format!("profile import failed: {e}"));
                    }
                }
            }
            JobResult::Kernels { generation, result } => {
                let k = &mut self.state.kernels;
                if generation != k.generation {
                    return;
                }
                k.busy = None;
                match result.map(|b| *b) {
                    Ok((stage, layout)) => {
                        let graph = Arc::new(stage.graph.clone());
                        // Folded as laid out, so that a later relayout keeps each kernel a box.
                        self.state.collapsed.extend(stage.kernels.iter().map(super::kernel_stage::group_path));
                        let k = &mut self.state.kernels;
                        k.stage = Some(Arc::new(stage));
                        k.error = None;
                        let pane = self.state.pane_mut(View::Kernels);
                        pane.graph = Some(graph);
                        pane.layout = Some(Arc::new(layout));
                        pane.busy = None;
                        self.state.rebind();
                    }
                    Err(e) => {
                        self.state.pane_mut(View::Kernels).busy = None;
                        self.state.pane_mut(View::Kernels).error = Some(e.clone());
                        self.state.kernels.error = Some(e);
                    }
                }
            }
            JobResult::ComparePicked(slot, Some(path)) => {
                let mut inputs = self.state.compare.inputs.clone();
                inputs.set(slot, path);
                self.compare(inputs);
            }
            JobResult::ComparePicked(_, None) => {}
            JobResult::Compared { generation, result } => {
                let c = &mut self.state.compare;
                if generation != c.generation {
                    return;
                }
                c.running = None;
                match result {
                    Ok(r) => {
                        c.result = Some(Arc::new(*r));
                        c.error = None;
                    }
                    Err(e) => {
                        c.result = None;
                        c.error = Some(e);
                    }
                }
            }
            JobResult::ProfilePicked(Some(path)) => self.import_profile(path),
            JobResult::ProfilePicked(None) => {}
            JobResult::ExportPicked(kind, Some(path)) => self.export(kind, path),
            JobResult::ExportPicked(_, None) | JobResult::ReportPicked(None) => {}
            JobResult::ReportPicked(Some(path)) => super::report_export::write(&self.jobs, &self.state, path),
            JobResult::Exported(Ok(m)) | JobResult::Exported(Err(m)) => self.state.message(m),
        }
    }

    /// Shows graph `index` of `model` as the original, with the file's saved session.
    /// `folded`: the graph's first-view folding when a worker already worked it out.
    /// `redecompose`: compute our lite/full views of it now (else when the user asks).
    fn show_graph(&mut self, source: Source, model: Arc<crate::ir::Model>, index: usize, folded: Option<BTreeSet<String>>, redecompose: bool) {
        let session = self.store.as_ref().and_then(|s| s.load_session(&source.session_key())).unwrap_or_default();
        let graph = model.graphs[index].clone();
        let s = &mut self.state;
        s.doc = Some(Doc { source: source.clone(), model, graph: index });
        s.stages = None;
        s.redecompose = redecompose;
        for v in View::STAGES {
            *s.pane_mut(v) = Default::default();
        }
        if s.focus.is_stage() {
            s.focus = View::Original;
        }
        s.selection = None;
        let node_names: BTreeSet<&str> = graph.nodes.iter().map(|n| n.name.as_str()).collect();
        let modules: BTreeSet<&str> =
            graph.nodes.iter().flat_map(|n| n.meta.nn_module_stack.iter().map(|f| f.path.as_str())).collect();
        s.marks = Marks {
            names: session.mark_nodes.into_iter().filter(|n| node_names.contains(n.as_str())).collect(),
            ops: Vec::new(),
            modules: session.mark_modules.into_iter().filter(|m| modules.contains(m.as_str())).collect(),
        };
        s.collapsed = session.collapsed.into_iter().filter(|m| modules.contains(m.as_str())).collect();
        // A model opens folded to the level that fits one screen (its layers, for a transformer).
        if s.collapsed.is_empty() {
            s.collapsed = folded.unwrap_or_else(|| Hierarchy::of(&graph).default_folded(OPEN_BOXES));
        }
        s.module = None;
        let symbols = s.doc.as_ref().map(|d| d.model.symbols.clone()).unwrap_or_default();
        s.explicit = session
            .bindings
            .into_iter()
            .filter(|(k, v)| symbols.iter().any(|sym| sym.name == *k && sym.range.contains(*v)))
            .collect();
        if let Some(f) = session.focus.filter(|f| !f.is_stage() && !View::DIFF.contains(f)) {
            s.focus = f;
        }
        if let Some(shown) = session.shown {
            if shown.iter().any(|x| *x) {
                s.shown = shown;
            }
        }
        for v in View::ALL {
            let pane = s.pane_mut(v);
            *pane = Default::default();
            if let Some([x, y, zoom]) = session.cameras.get(v.name()) {
                pane.camera = Camera { center: egui::pos2(*x, *y), zoom: *zoom, fit_pending: None };
            }
        }
        s.pane_mut(View::Original).graph = Some(Arc::new(graph));
        s.rebind();
        s.refresh_backend_fates();
        self.request_layout(View::Original);
        self.request_decomposition(View::Lite);
        self.request_decomposition(View::Full);
        self.state.classify();
        if let Source::File(p) = &source {
            let path = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            let mut settings = self.settings();
            settings.remember(&path);
            self.state.recent = settings.recent;
            self.save_settings();
        }
    }

    /// Profiles the focused view's graph (its mode, the lite marks) on the picked device, through
    /// `profile::profile_plan` like the `profile` command, on a worker that reports progress.
    /// Imports a torch.profiler trace of the open TORCH_TRACE log's run on a worker: the log's
    /// kernels (Inductor's output code), each device kernel attributed to one of them, then to graph
    /// nodes — the same path as `xpu-workbench kernels LOG --profile TRACE`.
    fn import_profile(&mut self, path: std::path::PathBuf) {
        let s = &mut self.state;
        let log = match s.doc.as_ref().map(|d| (&d.source, d.model.format)) {
            Some((Source::File(f), crate::ir::Format::TorchTrace)) => f.clone(),
            _ => {
                s.profile.open = true;
                s.profile.error = Some(
                    "a torch.profiler trace is attributed through the TORCH_TRACE log of the same run: open that log first".into(),
                );
                return;
            }
        };
        let p = &mut s.profile;
        p.generation += 1;
        p.open = true;
        p.error = None;
        p.running = Some(format!("importing {}", path.display()));
        let generation = p.generation;
        self.jobs.spawn("import profile", move || {
            use crate::profile::attribute::{attribute, CompiledKernels};
            let result = (|| -> Result<Box<crate::profile::Trace>, String> {
                let log = crate::import::trace::load_log(&log).map_err(|e| e.to_string())?;
                let (ids, tables): (Vec<String>, Vec<_>) = log
                    .compiles
                    .iter()
                    .filter(|c| !c.output_code.is_empty())
                    .map(|c| (c.id.to_string(), crate::import::trace::kernels(c, &log.file_access())))
                    .unzip();
                if ids.is_empty() {
                    return Err(format!("{}: no compile in the log has Inductor's output code, so no kernel to attribute to", log.file));
                }
                let compiled: Vec<CompiledKernels<'_>> =
                    ids.iter().zip(&tables).map(|(id, t)| CompiledKernels { compile: id, tables: t }).collect();
                let t = crate::profile::kineto::load(&path).map_err(|e| e.to_string())?;
                let owners = attribute(&t, &compiled);
                Ok(Box::new(crate::profile::kernel_time::attributed_trace(&t, &compiled, &owners)))
            })();
            JobResult::ImportedProfile { generation, path, result }
        });
    }

    /// Compares the open log with `inputs.other` (each with its profile, if given) on a worker.
    fn compare(&mut self, inputs: super::comparing::CompareInputs) {
        let c = &mut self.state.compare;
        c.open = true;
        c.inputs = inputs.clone();
        c.generation += 1;
        let log = match self.state.doc.as_ref().map(|d| (&d.source, d.model.format)) {
            Some((Source::File(f), crate::ir::Format::TorchTrace)) => f.clone(),
            _ => {
                c.error = Some("logs are compared with the open TORCH_TRACE log: open one first".into());
                return;
            }
        };
        if inputs.other.is_none() {
            c.error = None;
            return;
        }
        c.running = Some("reading both logs".into());
        let generation = c.generation;
        self.jobs.spawn("compare", move || {
            let result = super::comparing::run(log, inputs).map(Box::new);
            JobResult::Compared { generation, result }
        });
    }

    #[cfg(feature = "file-dialog")]
    fn compare_dialog(&mut self, slot: super::comparing::CompareSlot) {
        use super::comparing::CompareSlot;
        let (title, filter): (&str, (&str, &[&str])) = match slot {
            CompareSlot::OtherLog => ("Compare with another TORCH_TRACE log of the same model", ("TORCH_TRACE log", &["log", "gz"])),
            CompareSlot::ProfileA => ("The torch.profiler trace of the open log's run", ("Chrome / Kineto trace", &["json", "gz"])),
            CompareSlot::ProfileB => ("The torch.profiler trace of the other log's run", ("Chrome / Kineto trace", &["json", "gz"])),
        };
        let (title, name, exts) = (title.to_string(), filter.0.to_string(), filter.1.to_vec());
        self.jobs.spawn("dialog", move || {
            let picked = rfd::FileDialog::new().set_title(title).add_filter(name, &exts).add_filter("any file", &["*"]).pick_file();
            JobResult::ComparePicked(slot, picked)
        });
    }

    #[cfg(not(feature = "file-dialog"))]
    fn compare_dialog(&mut self, _slot: super::comparing::CompareSlot) {
        self.state.message("this build has no file dialog: use `xpu-workbench kernels A.log --against B.log`");
    }

    #[cfg(feature = "file-dialog")]
    fn import_profile_dialog(&mut self) {
        self.pick_file("Import a torch.profiler trace of this log's run", ("Chrome / Kineto trace", &["json", "gz"]), JobResult::ProfilePicked);
    }

    #[cfg(not(feature = "file-dialog"))]
    fn import_profile_dialog(&mut self) {
        self.state.message("this build has no file dialog: use `xpu-workbench kernels LOG --profile TRACE`");
    }

    fn run_profile(&mut self) {
        let s = &mut self.state;
        let (Some(doc), Some(backend)) = (&s.doc, s.profile.device) else {
            s.profile.open = true;
            s.profile.error = Some("nothing to profile yet: open a model and wait for the device probe".into());
            return;
        };
        if s.profile.running.is_some() {
            return;
        }
        let model = doc.model.clone();
        let view = s.focus;
        // A stage view profiles its own graph; the decomposition views the original, decomposed.
        let graph = match s.pane(view).graph.as_deref() {
            Some(g) if view.is_stage() => g.clone(),
            _ => model.graphs[doc.graph].clone(),
        };
        let marks = if s.focus == View::Lite { s.lite_marks() } else { s.marks.clone() };
        let bindings = s.bindings.clone();
        let p = &mut s.profile;
        p.generation += 1;
        p.open = true;
        p.error = None;
        p.running = Some(format!("lowering the {} view", view.name()));
        let generation = p.generation;
        let progress = self.jobs.progress();
        self.jobs.spawn("profile", move || {
            let capture = CpuCapture::start();
            let result = crate::lower::lower(&model, &graph, view.mode(), &marks)
                .map_err(|e| e.to_string())
                .and_then(|plan| {
                    let inputs = crate::exec::random_inputs(&graph, &bindings, 0)?;
                    let mut report = |text| progress.send(JobResult::ProfileProgress { generation, text });
                    profile_plan(capture, backend, &plan, &model, &inputs, &bindings, super::profiling::OPTIONS, &mut report)
                        .map(|p| {
                            let ours = super::against_inductor::OurRun::new(&plan, graph, &p.trace);
                            Box::new((p.trace, ours))
                        })
                        .map_err(|e| format!("on {}: {e}", backend.name()))
                });
            JobResult::Profiled { generation, view, result }
        });
    }

    #[cfg(feature = "file-dialog")]
    fn export_dialog(&mut self, kind: ExportKind) {
        self.jobs.spawn("dialog", move || {
            let picked = rfd::FileDialog::new()
                .set_title("Export the profile")
                .set_file_name(format!("profile.{}", kind.extension()))
                .save_file();
            JobResult::ExportPicked(kind, picked)
        });
    }

    #[cfg(not(feature = "file-dialog"))]
    fn export_dialog(&mut self, kind: ExportKind) {
        self.export(kind, std::path::PathBuf::from(format!("profile.{}", kind.extension())));
    }

    /// Writes the last profile with `profile`'s exporters, on a worker.
    fn export(&mut self, kind: ExportKind, path: std::path::PathBuf) {
        let Some(result) = self.state.profile.result.clone() else {
            return self.state.message("nothing to export: run a profile first");
        };
        self.jobs.spawn("export", move || {
            let written = match kind {
                ExportKind::Chrome => result.trace.write_chrome(&path),
                ExportKind::Puffin => result.trace.write_puffin(&path),
            };
            JobResult::Exported(match written {
                Ok(()) => Ok(format!("wrote {}", path.display())),
                Err(e) => Err(format!("cannot write {}: {e}", path.display())),
            })
        });
    }

    /// Fills the stage views with `compile_id`'s graphs and lays them out (on workers).
    fn show_stages(&mut self, compile_id: Option<String>) {
        let s = &mut self.state;
        let Some(doc) = &s.doc else { return };
        let model = doc.model.clone();
        let Some(id) = compile_id else {
            s.stages = None;
            s.stage_diffs.clear();
            s.kernels.stage = None;
            s.kernels.selected = None;
            if s.focus.is_stage() {
                s.focus = View::Original;
            }
            return self.redecompose();
        };
        let set = super::stages::StageSet::of(&model, &id);
        if set.graphs.iter().all(Option::is_none) {
            return s.message(format!("compile {id}: the log holds none of its stage graphs"));
        }
        if s.selection.is_some_and(|sel| sel.view.is_stage()) {
            s.selection = None;
        }
        for v in View::STAGES {
            let pane = s.pane_mut(v);
            let generation = pane.generation;
            *pane = Default::default();
            pane.generation = generation;
            pane.graph = set.graph_of(v).map(|i| Arc::new(model.graphs[i].clone()));
        }
        // Stage graphs are folded by source location, each to what fits one screen.
        for v in View::STAGES {
            if let Some(g) = s.pane(v).graph.clone() {
                let folded = Hierarchy::of(&g).default_folded(OPEN_BOXES);
                s.collapsed.extend(folded);
            }
        }
        s.focus = View::STAGES.into_iter().find(|v| set.graph_of(*v).is_some()).unwrap_or(View::Dynamo);
        let set_for_diff = set.clone();
        s.stages = Some(set);
        s.rebind();
        s.classify_stages();
        for v in View::STAGES {
            self.request_layout(v);
        }
        self.request_kernels(&id);
        self.request_stage_diffs(model, set_for_diff);
    }

    /// Diffs the shown compile's adjacent stages on a worker, for the summary above them.
    fn request_stage_diffs(&mut self, model: Arc<crate::ir::Model>, set: super::stages::StageSet) {
        self.state.stage_diffs.clear();
        self.jobs.spawn("stage diff", move || {
            let diffs = super::log_open::stage_diffs(&model, &set);
            JobResult::StageDiffs { compile_id: set.compile_id, diffs }
        });
    }

    /// The decomposition views were asked for: our lite/full re-decomposition of the original
    /// graph, computed once (a log does not compute it on open).
    fn redecompose(&mut self) {
        if self.state.redecompose {
            return;
        }
        self.state.redecompose = true;
        self.request_decomposition(View::Lite);
        self.request_decomposition(View::Full);
        self.state.classify();
    }

    /// Builds the compile's kernels stage on a worker: the log read again for its output code
    /// (the app keeps only its graphs), the post-grad graph grouped by kernel, laid out folded.
    fn request_kernels(&mut self, compile_id: &str) {
        let s = &mut self.state;
        let k = &mut s.kernels;
        k.generation += 1;
        k.stage = None;
        k.selected = None;
        k.error = None;
        let log = match s.doc.as_ref().map(|d| &d.source) {
            Some(Source::File(p)) => p.clone(),
            _ => return,
        };
        let busy = format!("reading the kernels of compile {compile_id}");
        k.busy = Some(busy.clone());
        let (generation, id) = (k.generation, compile_id.to_string());
        s.pane_mut(View::Kernels).busy = Some(busy);
        self.jobs.spawn("kernels", move || {
            let result = super::kernel_stage::build(&log, &id).map(|stage| {
                // Every kernel a box: a compile has tens to hundreds of them.
                let folded: BTreeSet<String> = stage.kernels.iter().map(super::kernel_stage::group_path).collect();
                let l = layout(&stage.graph, &folded);
                Box::new((stage, l))
            });
            JobResult::Kernels { generation, result }
        });
    }

    /// Opens the folded modules that hide `node`, keeping their other children folded, selects it
    /// and brings it into view once laid out. False when nothing hid it.
    fn unfold_to(&mut self, view: View, node: NodeId) -> bool {
        let s = &mut self.state;
        // The hierarchy the worker built with the view's layout: none on the UI thread.
        let Some(layout) = s.pane(view).layout.clone() else { return false };
        let hierarchy = &layout.hierarchy;
        let path: Vec<String> = hierarchy.frames_of(node).iter().map(|(p, _)| p.clone()).collect();
        if !path.iter().any(|p| s.collapsed.contains(p)) {
            return false;
        }
        for p in &path {
            if s.collapsed.remove(p) {
                s.collapsed.extend(hierarchy.children(p));
            }
        }
        s.selection = Some(super::state::Selection { view, node });
        s.focus = view;
        s.module = path.last().cloned();
        self.relayout(None);
        self.state.pane_mut(view).reveal = Some(Reveal::Node(node));
        true
    }

    /// Lays every view out again after the folding changed; `reveal`: the module to keep in view.
    fn relayout(&mut self, reveal: Option<String>) {
        for v in View::ALL.into_iter().chain(View::STAGES).chain(View::DIFF) {
            self.state.pane_mut(v).reveal = reveal.clone().map(Reveal::Module);
            self.request_layout(v);
        }
        self.touch();
    }

    fn request_decomposition(&mut self, view: View) {
        if !self.state.redecompose {
            return;
        }
        let Some(graph) = self.state.original().cloned() else { return };
        // The lite view shows what happens on the target backend: its forced expansions too.
        let marks = if view == View::Lite { self.state.lite_marks() } else { self.state.marks.clone() };
        let collapsed = self.state.collapsed.clone();
        let pane = self.state.pane_mut(view);
        pane.generation += 1;
        pane.busy = Some(format!("decomposing ({})", view.name()));
        let generation = pane.generation;
        self.jobs.spawn("decompose", move || {
            let result = decompose(&graph, view.mode(), &marks)
                .map(|d| {
                    let l = layout(&d.graph, &collapsed);
                    Box::new((d, l))
                })
                .map_err(|e| (e.to_string(), Some(e.node.clone())));
            JobResult::Decomposed { view, generation, result }
        });
    }

    /// Lowers a decomposition on a worker, as Run & profile would, so the problems panel lists
    /// what would not lower before the user runs anything.
    fn request_lowering(&mut self, view: View, generation: u64, d: Arc<crate::decomp::Decomposition>) {
        let Some(model) = self.state.doc.as_ref().map(|doc| doc.model.clone()) else { return };
        self.jobs.spawn("lower", move || {
            let error = crate::lower::lower_decomposed(&model, &d).err().map(|e| (e.to_string(), lowering_node(&e)));
            JobResult::Lowered { view, generation, error }
        });
    }

    fn request_layout(&mut self, view: View) {
        let collapsed = self.state.collapsed.clone();
        let pane = self.state.pane_mut(view);
        let Some(graph) = pane.graph.clone() else { return };
        if matches!(view, View::Lite | View::Full) && pane.decomp.is_none() {
            return self.request_decomposition(view);
        }
        pane.generation += 1;
        pane.busy = Some(format!("laying out ({})", view.name()));
        let generation = pane.generation;
        self.jobs.spawn("layout", move || JobResult::LaidOut { view, generation, layout: layout(&graph, &collapsed) });
    }

    fn settings(&self) -> Settings {
        Settings { theme: self.state.theme, recent: self.state.recent.clone() }
    }

    fn save_settings(&mut self) {
        if let Some(store) = &self.store {
            if let Err(e) = store.save_settings(&self.settings()) {
                let msg = format!("cannot save settings in {}: {e}", store.dir.display());
                self.state.message(msg);
            }
        }
    }

    /// Writes this file's session now.
    pub fn save(&mut self) {
        self.dirty_since = None;
        let (Some(store), Some(doc)) = (&self.store, &self.state.doc) else { return };
        let s = &self.state;
        let session = Session {
            source: doc.source.label(),
            mark_nodes: s.marks.names.clone(),
            mark_modules: s.marks.modules.clone(),
            bindings: s.explicit.clone(),
            focus: Some(s.focus),
            shown: Some(s.shown),
            collapsed: s.collapsed.clone(),
            cameras: View::ALL
                .iter()
                .map(|v| {
                    let c = s.pane(*v).camera;
                    (v.name().to_string(), [c.center.x, c.center.y, c.zoom])
                })
                .collect(),
        };
        if let Err(e) = store.save_session(&doc.source.session_key(), &session) {
            let msg = format!("cannot save the session in {}: {e}", store.dir.display());
            self.state.message(msg);
        }
    }
}

impl eframe::App for App {
    fn update(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        self.ui(ctx);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.save();
    }
}

/// The node a lowering error names (of the decomposed graph it lowered).
fn lowering_node(e: &crate::lower::LowerError) -> Option<String> {
    use crate::lower::LowerError as E;
    match e {
        E::Decomp(d) => Some(d.node.clone()),
        E::NoLowering { node, .. } | E::NotExpanded { node, .. } | E::Unsupported { node, .. } | E::At { node, .. } => {
            Some(node.clone())
        }
        _ => None,
    }
}
