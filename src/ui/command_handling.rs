//! What the app does in answer to a [`Command`]: [`App::apply`], the one place the state changes
//! for the user, and the actions it starts (open, profile, import, compare, export, stages, folding).

use std::path::PathBuf;
use std::sync::Arc;

use super::app::App;
use super::command::{Command, ExportKind, MarkTarget};
use super::file_dialog::Purpose;
use super::jobs::{JobResult, Loaded};
use super::hierarchy::{Hierarchy, OPEN_BOXES};
use super::state::{Fit, Reveal, Source, View};
use super::task::Stamp;
use crate::import;
use crate::ir::NodeId;
use crate::pipeline::{self, PipelineError};
use crate::profile::CpuCapture;

impl App {
    /// The one place the state changes in answer to the user.
    pub fn apply(&mut self, cmd: Command, ctx: &egui::Context) {
        let s = &mut self.state;
        match cmd {
            Command::Open(source) => self.open(source),
            Command::OpenDialog => self.dialog(Purpose::Open),
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
            Command::ExportDialog(kind) => self.dialog(Purpose::Export(kind)),
            Command::Export(kind, path) => self.export(kind, path),
            Command::ExportReportDialog => match super::report_export::purpose(&self.state) {
                Some(purpose) => self.dialog(purpose),
                None => super::report_export::refuse(&self.jobs),
            },
            Command::ExportReport(path) => super::report_export::write(&self.jobs, &self.state, path),
            Command::ImportProfileDialog => self.dialog(Purpose::ImportProfile),
            Command::ImportProfile(path) => self.import_profile(path),
            Command::CompareDialog(slot) => self.dialog(Purpose::Compare(slot)),
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


    pub(super) fn open(&mut self, source: Source) {
        if self.dirty_since.is_some() {
            self.save();
        }
        let stamp = Stamp::next(&mut self.load_generation);
        self.state.loading = Some(source.label());
        let src = source.clone();
        self.jobs.spawn("load", move || {
            let result = match &src {
                Source::Embedded => import::load_embedded_sample().map(|m| (m, None)).map_err(|e| e.to_string()),
                Source::File(p) => super::log_open::load(p),
            };
            // The first graph's module tree is built here, not on the UI thread (12,000 nodes).
            let folded = result.as_ref().ok().and_then(|(m, _)| m.graphs.first()).map(|g| Hierarchy::of(g).default_folded(OPEN_BOXES));
            JobResult::Loaded(stamp.tag(Loaded { source: src, result, folded }))
        });
    }

    /// Asks for a file for `purpose` (the answer is [`App::picked`]), or says why this build cannot.
    fn dialog(&mut self, purpose: Purpose) {
        if let Err(why) = super::file_dialog::ask(&self.jobs, purpose) {
            self.state.message(why);
        }
    }

    /// The user picked `path` for `purpose` in a file dialog.
    pub(super) fn picked(&mut self, purpose: Purpose, path: PathBuf) {
        match purpose {
            Purpose::Open => self.open(Source::File(path)),
            Purpose::Compare(slot) => {
                let mut inputs = self.state.compare.inputs.clone();
                inputs.set(slot, path);
                self.compare(inputs);
            }
            Purpose::ImportProfile => self.import_profile(path),
            Purpose::Export(kind) => self.export(kind, path),
            Purpose::Report { .. } => super::report_export::write(&self.jobs, &self.state, path),
        }
    }

    /// Imports a torch.profiler trace of the open TORCH_TRACE log's run on a worker: the log's
    /// kernels (Inductor's output code), each device kernel attributed to one of them, then to graph
    /// nodes — the same path as `xpu-workbench kernels LOG --profile TRACE`.
    pub(super) fn import_profile(&mut self, path: std::path::PathBuf) {
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
        let stamp = Stamp::next(&mut p.generation);
        p.open = true;
        p.error = None;
        p.running = Some(format!("importing {}", path.display()));
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
            JobResult::ImportedProfile { path, result: stamp.tag(result) }
        });
    }

    /// Compares the open log with `inputs.other` (each with its profile, if given) on a worker.
    pub(super) fn compare(&mut self, inputs: super::comparing::CompareInputs) {
        let c = &mut self.state.compare;
        c.open = true;
        c.inputs = inputs.clone();
        let stamp = Stamp::next(&mut c.generation);
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
        self.jobs.spawn("compare", move || {
            let result = super::comparing::run(log, inputs).map(Box::new);
            JobResult::Compared(stamp.tag(result))
        });
    }

    /// Profiles the focused view's graph (its mode, the lite marks) on the picked device, through
    /// `pipeline::profile_graph` like the `profile` command, on a worker that reports progress.
    pub(super) fn run_profile(&mut self) {
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
        let stamp = Stamp::next(&mut p.generation);
        p.open = true;
        p.error = None;
        p.running = Some(format!("lowering the {} view", view.name()));
        let progress = self.jobs.progress();
        self.jobs.spawn("profile", move || {
            let capture = CpuCapture::start();
            let result = crate::lower::lower(&model, &graph, view.mode(), &marks)
                .map_err(|e| e.to_string())
                .and_then(|plan| {
                    let mut report = |text| progress.send(JobResult::ProfileProgress(stamp.tag(text)));
                    // Seed 0: the inputs `profile` draws by default, so both time the same run.
                    pipeline::profile_graph(capture, backend, &plan, &model, &graph, &bindings, 0, super::profiling::OPTIONS, &mut report)
                        .map(|p| {
                            let ours = super::against_inductor::OurRun::new(&plan, graph, &p.trace);
                            Box::new((p.trace, ours))
                        })
                        .map_err(|e| match e {
                            PipelineError::Run(e) => format!("on {}: {e}", backend.name()),
                            e => e.to_string(),
                        })
                });
            JobResult::Profiled { view, result: stamp.tag(result) }
        });
    }

    /// Writes the last profile with `profile`'s exporters, on a worker.
    pub(super) fn export(&mut self, kind: ExportKind, path: std::path::PathBuf) {
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
    pub(super) fn show_stages(&mut self, compile_id: Option<String>) {
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


    /// The decomposition views were asked for: our lite/full re-decomposition of the original
    /// graph, computed once (a log does not compute it on open).
    pub(super) fn redecompose(&mut self) {
        if self.state.redecompose {
            return;
        }
        self.state.redecompose = true;
        self.request_decomposition(View::Lite);
        self.request_decomposition(View::Full);
        self.state.classify();
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

}
