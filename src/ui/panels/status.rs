//! The status bar: what is open, what is running, the last message.

use crate::ui::state::AppState;

pub fn show(ctx: &egui::Context, state: &AppState) {
    egui::TopBottomPanel::bottom("status").show(ctx, |ui| {
        ui.horizontal(|ui| {
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
