//! What the app does with a worker's [`JobResult`] ([`App::on_job`]), and the view pipeline that
//! both commands and results drive: showing a graph, decomposing, lowering, laying out, a log's
//! kernels and stage diffs.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::app::App;
use super::jobs::{JobResult, Loaded};
use super::layout::layout;
use super::hierarchy::{Hierarchy, OPEN_BOXES};
use super::state::{Camera, Doc, Fit, Source, View};
use super::task::Stamp;
use crate::decomp::{decompose, Marks};

impl App {
    pub(super) fn on_job(&mut self, r: JobResult) {
        match r {
            JobResult::Loaded(loaded) => {
                let Some(Loaded { source, result, folded }) = loaded.if_current(self.load_generation) else { return };
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
            JobResult::Decomposed { view, result } => {
                let pane = self.state.pane_mut(view);
                let Some(result) = result.if_current(pane.generation) else { return };
                let stamp = Stamp::current(pane.generation);
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
                        self.request_lowering(view, stamp, d);
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
            JobResult::Lowered { view, error } => {
                let pane = self.state.pane_mut(view);
                if let Some(error) = error.if_current(pane.generation) {
                    pane.lower_error = error;
                }
            }
            JobResult::LaidOut { view, layout } => {
                let pane = self.state.pane_mut(view);
                if let Some(layout) = layout.if_current(pane.generation) {
                    pane.busy = None;
                    if let Some(rect) = pane.reveal.take().and_then(|r| r.rect(&layout)) {
                        pane.camera.fit_pending = Some(Fit::Reveal(rect));
                    }
                    pane.layout = Some(Arc::new(layout));
                }
            }
            JobResult::Picked { purpose, path: Some(path) } => self.picked(purpose, path),
            JobResult::Picked { path: None, .. } => {}
            JobResult::Devices(d) => self.state.profile.set_devices(d),
            JobResult::ProfileProgress(text) => {
                let p = &mut self.state.profile;
                if let Some(text) = text.if_current(p.generation).filter(|_| p.running.is_some()) {
                    p.running = Some(text);
                }
            }
            JobResult::Profiled { view, result } => {
                let p = &mut self.state.profile;
                let Some(result) = result.if_current(p.generation) else { return };
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
            JobResult::ImportedProfile { path, result } => {
                let p = &mut self.state.profile;
                let Some(result) = result.if_current(p.generation) else { return };
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
            JobResult::Kernels(result) => {
                let k = &mut self.state.kernels;
                let Some(result) = result.if_current(k.generation) else { return };
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
            JobResult::Compared(result) => {
                let c = &mut self.state.compare;
                let Some(result) = result.if_current(c.generation) else { return };
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
            JobResult::Exported(Ok(m)) | JobResult::Exported(Err(m)) => self.state.message(m),
        }
    }


    /// Shows graph `index` of `model` as the original, with the file's saved session.
    /// `folded`: the graph's first-view folding when a worker already worked it out.
    /// `redecompose`: compute our lite/full views of it now (else when the user asks).
    pub(super) fn show_graph(&mut self, source: Source, model: Arc<crate::ir::Model>, index: usize, folded: Option<BTreeSet<String>>, redecompose: bool) {
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


    /// Diffs the shown compile's adjacent stages on a worker, for the summary above them.
    pub(super) fn request_stage_diffs(&mut self, model: Arc<crate::ir::Model>, set: super::stages::StageSet) {
        self.state.stage_diffs.clear();
        self.jobs.spawn("stage diff", move || {
            let diffs = super::log_open::stage_diffs(&model, &set);
            JobResult::StageDiffs { compile_id: set.compile_id, diffs }
        });
    }


    /// Builds the compile's kernels stage on a worker: the log read again for its output code
    /// (the app keeps only its graphs), the post-grad graph grouped by kernel, laid out folded.
    pub(super) fn request_kernels(&mut self, compile_id: &str) {
        let s = &mut self.state;
        let k = &mut s.kernels;
        let stamp = Stamp::next(&mut k.generation);
        k.stage = None;
        k.selected = None;
        k.error = None;
        let log = match s.doc.as_ref().map(|d| &d.source) {
            Some(Source::File(p)) => p.clone(),
            _ => return,
        };
        let busy = format!("reading the kernels of compile {compile_id}");
        k.busy = Some(busy.clone());
        let id = compile_id.to_string();
        s.pane_mut(View::Kernels).busy = Some(busy);
        self.jobs.spawn("kernels", move || {
            let result = super::kernel_stage::build(&log, &id).map(|stage| {
                // Every kernel a box: a compile has tens to hundreds of them.
                let folded: BTreeSet<String> = stage.kernels.iter().map(super::kernel_stage::group_path).collect();
                let l = layout(&stage.graph, &folded);
                Box::new((stage, l))
            });
            JobResult::Kernels(stamp.tag(result))
        });
    }


    pub(super) fn request_decomposition(&mut self, view: View) {
        if !self.state.redecompose {
            return;
        }
        let Some(graph) = self.state.original().cloned() else { return };
        // The lite view shows what happens on the target backend: its forced expansions too.
        let marks = if view == View::Lite { self.state.lite_marks() } else { self.state.marks.clone() };
        let collapsed = self.state.collapsed.clone();
        let pane = self.state.pane_mut(view);
        let stamp = Stamp::next(&mut pane.generation);
        pane.busy = Some(format!("decomposing ({})", view.name()));
        self.jobs.spawn("decompose", move || {
            let result = decompose(&graph, view.mode(), &marks)
                .map(|d| {
                    let l = layout(&d.graph, &collapsed);
                    Box::new((d, l))
                })
                .map_err(|e| (e.to_string(), Some(e.node.clone())));
            JobResult::Decomposed { view, result: stamp.tag(result) }
        });
    }

    /// Lowers a decomposition on a worker, as Run & profile would, so the problems panel lists
    /// what would not lower before the user runs anything.
    fn request_lowering(&mut self, view: View, stamp: Stamp, d: Arc<crate::decomp::Decomposition>) {
        let Some(model) = self.state.doc.as_ref().map(|doc| doc.model.clone()) else { return };
        self.jobs.spawn("lower", move || {
            let error = crate::lower::lower_decomposed(&model, &d).err().map(|e| (e.to_string(), lowering_node(&e)));
            JobResult::Lowered { view, error: stamp.tag(error) }
        });
    }

    pub(super) fn request_layout(&mut self, view: View) {
        let collapsed = self.state.collapsed.clone();
        let pane = self.state.pane_mut(view);
        let Some(graph) = pane.graph.clone() else { return };
        if matches!(view, View::Lite | View::Full) && pane.decomp.is_none() {
            return self.request_decomposition(view);
        }
        let stamp = Stamp::next(&mut pane.generation);
        pane.busy = Some(format!("laying out ({})", view.name()));
        self.jobs.spawn("layout", move || JobResult::LaidOut { view, layout: stamp.tag(layout(&graph, &collapsed)) });
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
