//! The profiler: the device picker (in the toolbar), and a bottom panel with the run's progress
//! or error, exports, the heat-overlay toggle and legend, the timeline and the per-kernel table.

use egui::{RichText, Ui};

use super::timeline;
use crate::ui::command::{Command, ExportKind, UiCommand};
use crate::ui::profiling::{heat_color, micros, ProfileResult, OPTIONS};
use crate::ui::state::AppState;

/// Every backend of `runtime::probe_all`; unavailable ones greyed, their probe's reason on hover.
pub fn device_picker(ui: &mut Ui, state: &AppState, cmds: &mut Vec<Command>) {
    let p = &state.profile;
    let selected = match p.device_report() {
        Some(d) => format!("{} ({})", d.backend.name(), d.name),
        None => "probing…".into(),
    };
    egui::ComboBox::from_label("device").selected_text(selected).width(260.0).show_ui(ui, |ui| {
        for d in &p.devices {
            let label = format!("{}: {}", d.backend.name(), d.name);
            let chosen = p.device == Some(d.backend);
            let resp = ui.add_enabled(d.available, egui::SelectableLabel::new(chosen, label));
            let resp = match &d.reason {
                Some(why) => resp.on_disabled_hover_text(why),
                None => resp,
            };
            if resp.clicked() {
                cmds.push(Command::PickDevice(d.backend));
            }
        }
    });
    let can_run = state.doc.is_some() && p.running.is_none() && p.device.is_some();
    let run = UiCommand::RunProfile;
    if ui.add_enabled(can_run, egui::Button::new(run.label())).on_hover_text(run.tooltip(state)).clicked() {
        cmds.push(run.command(state));
    }
    let mut open = p.open;
    if ui.checkbox(&mut open, "profile panel").changed() {
        cmds.push(Command::ShowProfile(open));
    }
    let mut sweep = state.sweep.open;
    if ui.checkbox(&mut sweep, "sweep panel").on_hover_text("device time across a dynamic dimension's range, lite against full").changed() {
        cmds.push(Command::Sweep(crate::ui::sweeping::SweepCommand::Show(sweep)));
    }
}

pub fn show(ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
    let p = &state.profile;
    egui::TopBottomPanel::bottom("profile").resizable(true).default_height(320.0).min_height(220.0).show(ctx, |ui| {
        ui.horizontal_wrapped(|ui| {
            ui.heading("Profile");
            if let Some(step) = &p.running {
                ui.spinner();
                ui.label(format!("profiling: {step}"));
            }
            if let Some(r) = &p.result {
                ui.label(format!(
                    "{} view on {} ({}) · {} timed repetitions after {} warm-up · {} device total",
                    r.view.name(),
                    r.trace.device,
                    r.trace.backend,
                    OPTIONS.repeat,
                    OPTIONS.warmup,
                    micros(r.trace.device_total_ns() / OPTIONS.repeat.max(1) as u64),
                ));
                if !r.host_rows.is_empty() {
                    ui.label(format!("+ {} host time (sync, host fallback)", micros(r.trace.host_total_ns() / OPTIONS.repeat.max(1) as u64)));
                }
                ui.separator();
                let mut heat = p.heat;
                if ui.checkbox(&mut heat, "heat overlay").on_hover_text("colour the graph's nodes by device time").changed() {
                    cmds.push(Command::SetHeat(heat));
                }
                if p.heat {
                    legend(ui, r);
                }
                ui.separator();
                if ui.button("Export Chrome trace…").on_hover_text("trace-event JSON for Perfetto or chrome://tracing").clicked() {
                    cmds.push(Command::ExportDialog(ExportKind::Chrome));
                }
                if ui.button("Export .puffin…").on_hover_text("for puffin_viewer").clicked() {
                    cmds.push(Command::ExportDialog(ExportKind::Puffin));
                }
            } else if p.running.is_none() && p.error.is_none() {
                ui.label(format!("pick a device and press Run & profile ({}) to run the focused view's plan", UiCommand::RunProfile.shortcut_text()));
            }
        });
        if let Some(e) = &p.error {
            ui.label(RichText::new(format!("profile failed: {e}")).color(ui.visuals().error_fg_color));
        }
        let Some(r) = &p.result else { return };
        ui.separator();
        ui.columns(2, |cols| {
            timeline::show(&mut cols[0], &r.trace, p.generation);
            table(&mut cols[1], state, r, cmds);
        });
    });
}

/// The heat scale: the ramp from 0 to the slowest node's time.
fn legend(ui: &mut Ui, r: &ProfileResult) {
    ui.label(RichText::new("device time per node: 0").small());
    let (rect, _) = ui.allocate_exact_size(egui::vec2(120.0, 12.0), egui::Sense::hover());
    let n = 24;
    for i in 0..n {
        let x0 = rect.left() + rect.width() * i as f32 / n as f32;
        let x1 = rect.left() + rect.width() * (i + 1) as f32 / n as f32;
        let cell = egui::Rect::from_min_max(egui::pos2(x0, rect.top()), egui::pos2(x1, rect.bottom()));
        ui.painter().rect_filled(cell, 0.0, heat_color((i as f32 + 0.5) / n as f32));
    }
    ui.label(RichText::new(micros(r.max_node_ns)).small());
}

fn table(ui: &mut Ui, state: &AppState, r: &ProfileResult, cmds: &mut Vec<Command>) {
    ui.label(RichText::new(format!("{} kernels, by median device time", r.rows.len())).strong());
    let graph = state.pane(r.view).graph.clone();
    egui::ScrollArea::both().id_salt("kernel-table").show(ui, |ui| {
        egui::Grid::new("kernel-rows").striped(true).num_columns(5).show(ui, |ui| {
            for h in ["node", "median", "share", "kernel", "shapes"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for row in &r.rows {
                let first = row.launch.nodes.first().unwrap_or(&row.node);
                let target = graph.as_ref().and_then(|g| g.node_by_name(first));
                let link = ui.link(RichText::new(&row.node).monospace()).on_hover_text("show it in the graph");
                if link.clicked() {
                    if let Some(id) = target {
                        cmds.push(Command::JumpTo(r.view, id));
                    }
                }
                ui.label(micros(row.median_ns));
                ui.label(format!("{:.1}%", row.share));
                ui.label(RichText::new(&row.launch.kernel).monospace().weak());
                let shapes: Vec<String> = row.launch.shapes.iter().map(|(k, s)| format!("{k}{s:?}")).collect();
                ui.label(RichText::new(shapes.join(" ")).small());
                ui.end_row();
            }
        });
        host_table(ui, &graph, r, cmds);
        super::against_inductor::show(ui, state, cmds);
    });
}

/// The plan's steps that ran on the host: host time, apart from the kernels' device time.
fn host_table(ui: &mut Ui, graph: &Option<std::sync::Arc<crate::ir::Graph>>, r: &ProfileResult, cmds: &mut Vec<Command>) {
    if r.host_rows.is_empty() {
        return;
    }
    ui.add_space(8.0);
    ui.label(RichText::new(format!("{} steps on the host, by median host time (not device time)", r.host_rows.len())).strong());
    egui::Grid::new("host-rows").striped(true).num_columns(3).show(ui, |ui| {
        for h in ["node", "median (host)", "step"] {
            ui.label(RichText::new(h).strong());
        }
        ui.end_row();
        for row in &r.host_rows {
            let target = graph.as_ref().and_then(|g| g.node_by_name(&row.node));
            if ui.link(RichText::new(&row.node).monospace()).on_hover_text("show it in the graph").clicked() {
                if let Some(id) = target {
                    cmds.push(Command::JumpTo(r.view, id));
                }
            }
            ui.label(micros(row.median_ns));
            let what = if row.kind == crate::profile::HostSpan::SYNC {
                "sync: data-dependent sizes read back"
            } else {
                "host fallback (interpreter): no kernel"
            };
            ui.label(RichText::new(what).weak());
            ui.end_row();
        }
    });
}
