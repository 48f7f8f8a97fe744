//! The profile panel's "against Inductor" section (store: `ui::against_inductor`): the two
//! files' pickers, then one row per region, our slowest first, as `profile --against-inductor`
//! prints them.

use egui::{RichText, Ui};

use crate::ui::against_inductor::AgainstCommand;
use crate::ui::command::Command;
use crate::ui::state::AppState;

pub fn show(ui: &mut Ui, state: &AppState, cmds: &mut Vec<Command>) {
    let a = &state.against;
    ui.add_space(8.0);
    egui::CollapsingHeader::new(RichText::new("against Inductor").strong()).id_salt("against-inductor").default_open(true).show(ui, |ui| {
        ui.label(
            RichText::new("Inductor's kernels for the same original nodes: a TORCH_TRACE log of torch.compile of this model and a torch.profiler trace of it on this machine")
                .weak()
                .small(),
        );
        for (is_log, label, path) in [(true, "Inductor log", &a.log), (false, "its profiler trace", &a.trace)] {
            ui.horizontal(|ui| {
                ui.label(RichText::new(label).weak());
                let name = path.as_ref().and_then(|p| p.file_name()).map_or("none".to_string(), |n| n.to_string_lossy().into_owned());
                ui.label(RichText::new(name).monospace());
                if ui.small_button("pick…").on_hover_text(format!("pick the {label}")).clicked() {
                    cmds.push(Command::AgainstInductor(AgainstCommand::Pick { log: is_log }));
                }
            });
        }
        if a.busy() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("comparing with Inductor…");
            });
        }
        if let Some(e) = &a.error {
            ui.label(RichText::new(e).color(ui.visuals().error_fg_color));
        }
        let ours_missing = state.profile.result.as_ref().is_none_or(|r| r.ours.is_none());
        if ours_missing && a.log.is_some() && a.trace.is_some() {
            ui.label(RichText::new("the comparison needs a run of our own (Run & profile, Ctrl+R): an imported trace has no kernels of ours").weak());
        }
        let Some(r) = &a.result else { return };
        let c = &r.comparison;
        let us = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        let ratio = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        let mut head = format!("{} regions · ours {:.1} µs, Inductor {:.1} µs, ratio {}", c.rows.len(), c.ours_total_us, c.inductor_total_us, ratio(c.ratio));
        if let Some(call) = r.call_median_us {
            head.push_str(&format!(" · Inductor's call() median {call:.1} µs over {} runs", r.runs));
        }
        ui.label(RichText::new(head).strong());
        egui::Grid::new("against-inductor-rows").striped(true).num_columns(5).show(ui, |ui| {
            for h in ["ours µs", "Inductor µs", "ratio", "our kernels", "Inductor's kernels"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for row in &c.rows {
                let ours = if row.ours.is_empty() { "(none)".to_string() } else { row.ours.join(", ") };
                let theirs = if row.inductor.is_empty() { "(none)".to_string() } else { row.inductor.join(", ") };
                let heard = format!(
                    "against Inductor region: ours {ours} {} µs, Inductor {theirs} {} µs, ratio {}",
                    us(row.ours_us),
                    us(row.inductor_us),
                    ratio(row.ratio)
                );
                let mut nodes = format!("our nodes: {}\nInductor's nodes: {}", row.ours_nodes.join(", "), row.inductor_nodes.join(", "));
                for (side, v) in [("ours", &row.unpaired_ours), ("Inductor's", &row.unpaired_inductor)] {
                    if !v.is_empty() {
                        nodes.push_str(&format!("\nno partner ({side}): {}", v.join(", ")));
                    }
                }
                ui.label(RichText::new(us(row.ours_us)).monospace()).widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Label, true, heard.clone()));
                ui.label(RichText::new(us(row.inductor_us)).monospace());
                ui.label(RichText::new(ratio(row.ratio)).monospace());
                ui.label(RichText::new(ours).monospace().small()).on_hover_text(&nodes);
                ui.label(RichText::new(theirs).monospace().small()).on_hover_text(&nodes);
                ui.end_row();
            }
        });
        for n in &r.notes {
            ui.label(RichText::new(format!("note: {n}")).weak().small());
        }
    });
}
