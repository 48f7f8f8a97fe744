//! Search (Ctrl+F): nodes of the focused view whose name or op contains the text; a click jumps
//! to the node.

use crate::ui::command::Command;
use crate::ui::state::{short_op, AppState};

const MAX_RESULTS: usize = 200;

pub fn show(ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
    let view = state.focus;
    let mut open = true;
    egui::Window::new(format!("Search {}", view.name())).open(&mut open).default_width(320.0).show(ctx, |ui| {
        let mut text = state.search.clone();
        let edit = ui.add(egui::TextEdit::singleline(&mut text).hint_text("node name or op").desired_width(f32::INFINITY));
        if !edit.has_focus() && text.is_empty() {
            edit.request_focus();
        }
        if edit.changed() {
            cmds.push(Command::SetSearch(text.clone()));
        }
        let Some(graph) = state.pane(view).graph.clone() else { return };
        let needle = text.trim().to_lowercase();
        if needle.is_empty() {
            return;
        }
        let hits: Vec<_> = graph
            .node_ids()
            .filter(|id| {
                let n = graph.node(*id);
                n.name.to_lowercase().contains(&needle) || n.target.to_lowercase().contains(&needle)
            })
            .take(MAX_RESULTS + 1)
            .collect();
        if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
            if let Some(first) = hits.first() {
                cmds.push(Command::JumpTo(view, *first));
                cmds.push(Command::CloseSearch);
            }
        }
        ui.label(format!("{}{} matches", hits.len().min(MAX_RESULTS), if hits.len() > MAX_RESULTS { "+" } else { "" }));
        egui::ScrollArea::vertical().max_height(360.0).show(ui, |ui| {
            for id in hits.iter().take(MAX_RESULTS) {
                let n = graph.node(*id);
                if ui.selectable_label(false, format!("{}  {}", n.name, short_op(&n.target))).clicked() {
                    cmds.push(Command::JumpTo(view, *id));
                }
            }
        });
    });
    if !open {
        cmds.push(Command::CloseSearch);
    }
}
