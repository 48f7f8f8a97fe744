//! The central area: the module breadcrumbs and folding controls, then the shown views side by
//! side, each a header and a canvas.

use egui::RichText;

use crate::ui::canvas;
use crate::ui::hierarchy::OPEN_BOXES;
use crate::ui::command::Command;
use crate::ui::state::{AppState, View};

pub fn show(ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
    egui::CentralPanel::default().frame(egui::Frame::none()).show(ctx, |ui| {
        breadcrumbs(ui, state, cmds);
        if state.stages.is_some() {
            stage_summary(ui, state, cmds);
        }
        let views: Vec<View> = match &state.stages {
            Some(set) => {
                let k = &state.kernels;
                let kernels = k.stage.is_some() || k.busy.is_some() || k.error.is_some();
                let has = |v: View| set.graph_of(v).is_some() || (v == View::Kernels && kernels);
                let shown = |v: View| v.stage_index().is_some_and(|i| state.stages_shown[i]);
                let views: Vec<View> = View::STAGES.into_iter().filter(|v| has(*v) && shown(*v)).collect();
                // All hidden: show what there is rather than nothing.
                if views.is_empty() {
                    View::STAGES.into_iter().filter(|v| has(*v)).collect()
                } else {
                    views
                }
            }
            None => View::ALL.into_iter().filter(|v| state.shown[v.index()]).collect(),
        };
        ui.columns(views.len().max(1), |cols| {
            for (col, view) in cols.iter_mut().zip(&views) {
                pane(col, state, *view, cmds);
            }
        });
    });
}

/// Above a log's stages: check-lite's verdict on the log, how much each stage differs from the one
/// before, and the way to our own lite/full re-decomposition of the dynamo graph (not computed
/// until asked for).
fn stage_summary(ui: &mut egui::Ui, state: &AppState, cmds: &mut Vec<Command>) {
    ui.horizontal_wrapped(|ui| {
        ui.add_space(6.0);
        match &state.log_verdict {
            Some(v) => {
                let color = if v.failed() {
                    egui::Color32::from_rgb(230, 90, 80)
                } else if v.unverified > 0 {
                    egui::Color32::from_rgb(220, 170, 60)
                } else {
                    egui::Color32::from_rgb(90, 190, 110)
                };
                ui.label(RichText::new(format!("check-lite: {}", v.summary)).color(color));
            }
            None => {
                ui.label(RichText::new("check-lite: no verdict (the log was not read for one)").weak());
            }
        }
    });
    ui.horizontal_wrapped(|ui| {
        ui.add_space(6.0);
        if state.stage_diffs.is_empty() {
            ui.label(RichText::new("stage diff: comparing adjacent stages…").weak());
        }
        for d in &state.stage_diffs {
            ui.label(RichText::new(format!("stage diff {}", d.describe())).weak());
            ui.separator();
        }
        let tip = "our lite and full decomposition of the dynamo graph, beside it (computed now; torch's own stages are what the log recorded)";
        if ui.small_button("Re-decompose the dynamo graph (lite/full)").on_hover_text(tip).clicked() {
            cmds.push(Command::ShowStages(None));
        }
    });
}

/// `graph › model › layers.0 › self_attn`: where the user is in the module tree; a click moves
/// the views there. Then folding for all of it: to the first view's level, all, none.
fn breadcrumbs(ui: &mut egui::Ui, state: &AppState, cmds: &mut Vec<Command>) {
    let Some(layout) = [state.focus, View::Original].iter().find_map(|v| state.pane(*v).layout.clone()) else { return };
    let h = &layout.hierarchy;
    ui.horizontal_wrapped(|ui| {
        ui.add_space(6.0);
        let crumb = |ui: &mut egui::Ui, text: &str, heard: String, current: bool| {
            let text = if current { RichText::new(text).strong() } else { RichText::new(text) };
            let r = ui.link(text);
            r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Link, true, heard.clone()));
            r.clicked()
        };
        if crumb(ui, "graph", "breadcrumb: graph".into(), state.module.is_none()) {
            cmds.push(Command::RevealModule(None));
        }
        let here = state.module.as_deref().map(|m| h.ancestry(m)).unwrap_or_default();
        let mut parent = "";
        for g in &here {
            ui.label("›");
            let short = g.path.strip_prefix(parent).and_then(|r| r.strip_prefix('.')).unwrap_or(&g.path);
            let current = state.module.as_deref() == Some(g.path.as_str());
            if crumb(ui, short, format!("breadcrumb: {}", g.path), current) {
                cmds.push(Command::RevealModule(Some(g.path.clone())));
            }
            parent = &g.path;
        }
        if h.is_empty() {
            ui.label(RichText::new("(no module hierarchy recorded)").weak());
            return;
        }
        if let Some(m) = &state.module {
            let folded = state.collapsed.contains(m);
            if ui.small_button(if folded { "open" } else { "fold" }).on_hover_text(format!("{} `{m}`", if folded { "open" } else { "fold" })).clicked() {
                cmds.push(Command::ToggleCollapse(m.clone()));
            }
        }
        ui.separator();
        if ui.small_button("fold to layers").on_hover_text("as the model opened: the deepest level that fits one screen").clicked() {
            cmds.push(Command::SetFolded(h.default_folded(OPEN_BOXES)));
        }
        if ui.small_button("fold all").clicked() {
            cmds.push(Command::SetFolded(h.all_paths().map(str::to_string).collect()));
        }
        if ui.small_button("open all").clicked() {
            cmds.push(Command::SetFolded(Default::default()));
        }
        let mut sync = state.sync_cameras;
        if ui.checkbox(&mut sync, "move views together").changed() {
            cmds.push(Command::SetSyncCameras(sync));
        }
    });
}

fn pane(ui: &mut egui::Ui, state: &AppState, view: View, cmds: &mut Vec<Command>) {
    let p = state.pane(view);
    let focused = state.focus == view;
    // Wrapped: four stages side by side leave each header a narrow column.
    ui.horizontal_wrapped(|ui| {
        let title = match &state.stages {
            Some(set) if view.is_stage() => format!("{} graph of compile {}", view.name(), set.compile_id),
            _ => format!("{} ({})", view.name(), view.index() + 1),
        };
        let title = RichText::new(title).strong();
        let title = if focused { title.color(canvas::SELECT_COLOR) } else { title };
        if ui.selectable_label(focused, title).clicked() {
            cmds.push(Command::Focus(view));
        }
        if let Some(g) = &p.graph {
            ui.label(RichText::new(format!("{} nodes", g.nodes.len())).weak());
        }
        if let Some(d) = &p.decomp {
            ui.label(RichText::new(format!("{} decomposed · {} kept", d.decomposed.len(), d.kept.len())).weak());
        }
        if let Some(b) = &p.busy {
            ui.spinner();
            ui.label(RichText::new(b).weak());
        }
        if ui.small_button("fit").clicked() {
            cmds.push(Command::Fit(view));
        }
    });
    let id = ui.id().with(("canvas", view));
    ui.push_id(id, |ui| canvas::show(ui, state, view, cmds));
}
