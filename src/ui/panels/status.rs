//! The status bar: what is open, what is running, the last message.

use crate::ui::command::Command;
use crate::ui::state::AppState;

/// `problems`: how many the problems panel lists; the button shows or hides it.
pub fn show(ctx: &egui::Context, state: &AppState, problems: usize, cmds: &mut Vec<Command>) {
    egui::TopBottomPanel::bottom("status").show(ctx, |ui| {
        ui.horizontal(|ui| {
            let shown = state.show_problems.unwrap_or(problems > 0);
            let text = if problems == 0 { "no problems".to_string() } else { format!("⚠ {problems} problems") };
            if ui.selectable_label(shown, text).on_hover_text("show or hide the problems panel").clicked() {
                cmds.push(Command::ShowProblems(!shown));
            }
            ui.separator();
            if let Some(l) = &state.loading {
                ui.spinner();
                ui.label(format!("opening {l}"));
            } else if let Some(doc) = &state.doc {
                let g = &doc.model.graphs[doc.graph];
                ui.label(format!("{} · graph `{}` · {} nodes", doc.source.label(), g.name, g.nodes.len()));
            }
            for p in &state.panes {
                if let Some(b) = &p.busy {
                    ui.spinner();
                    ui.label(b);
                }
            }
            if let Some(m) = state.messages.last() {
                ui.separator();
                ui.label(egui::RichText::new(m).color(ui.visuals().warn_fg_color));
            }
        });
    });
}
