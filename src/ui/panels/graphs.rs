//! The central area: the shown views side by side, each a header and a canvas.

use egui::RichText;

use crate::ui::canvas;
use crate::ui::command::Command;
use crate::ui::state::{AppState, View};

pub fn show(ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
    egui::CentralPanel::default().frame(egui::Frame::none()).show(ctx, |ui| {
        let views: Vec<View> = match &state.stages {
            Some(set) => View::STAGES.into_iter().filter(|v| set.graph_of(*v).is_some()).collect(),
            None => View::ALL.into_iter().filter(|v| state.shown[v.index()]).collect(),
        };
        ui.columns(views.len().max(1), |cols| {
            for (col, view) in cols.iter_mut().zip(&views) {
                pane(col, state, *view, cmds);
            }
        });
    });
}

fn pane(ui: &mut egui::Ui, state: &AppState, view: View, cmds: &mut Vec<Command>) {
    let p = state.pane(view);
    let focused = state.focus == view;
    ui.horizontal(|ui| {
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
