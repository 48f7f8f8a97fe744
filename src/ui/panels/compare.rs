//! The comparison window: the open log (A) against another log of the same model (B), lite
//! against default mode. Kernel counts, how each original node ran in each (fused, library call,
//! fallback), and per-node and total device time when both have a profiler trace.

use egui::RichText;

use crate::profile::compare::{Comparison, NodeDiff};
use crate::ui::command::Command;
use crate::ui::comparing::CompareSlot;
use crate::ui::state::AppState;

pub fn show(ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
    let c = &state.compare;
    let mut open = c.open;
    egui::Window::new("Compare logs").open(&mut open).default_width(640.0).default_height(560.0).show(ctx, |ui| {
        inputs(ui, state, cmds);
        if let Some(r) = &c.running {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(r);
            });
        }
        if let Some(e) = &c.error {
            ui.label(RichText::new(e).color(ui.visuals().error_fg_color));
        }
        if let Some(r) = &c.result {
            ui.separator();
            counts(ui, r);
            ui.separator();
            nodes(ui, r, c.all_nodes, cmds);
        }
    });
    if !open {
        cmds.push(Command::ShowCompare(false));
    }
}

fn file_name(p: &std::path::Path) -> String {
    p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// The two logs and their profiles, each with a button that picks it.
fn inputs(ui: &mut egui::Ui, state: &AppState, cmds: &mut Vec<Command>) {
    let i = &state.compare.inputs;
    let a = match state.doc.as_ref().map(|d| &d.source) {
        Some(crate::ui::Source::File(p)) => file_name(p),
        _ => "(no log open)".into(),
    };
    let row = |ui: &mut egui::Ui, label: &str, value: Option<String>, slot: CompareSlot, cmds: &mut Vec<Command>| {
        ui.horizontal(|ui| {
            ui.label(RichText::new(label).weak());
            ui.label(RichText::new(value.unwrap_or_else(|| "none".into())).monospace());
            if ui.small_button("pick…").on_hover_text(format!("pick the {label}")).clicked() {
                cmds.push(Command::CompareDialog(slot));
            }
        });
    };
    ui.horizontal(|ui| {
        ui.label(RichText::new("A log").weak());
        ui.label(RichText::new(a).monospace());
    });
    row(ui, "A profile", i.profile_a.as_deref().map(file_name), CompareSlot::ProfileA, cmds);
    row(ui, "B log", i.other.as_deref().map(file_name), CompareSlot::OtherLog, cmds);
    row(ui, "B profile", i.profile_b.as_deref().map(file_name), CompareSlot::ProfileB, cmds);
}

fn counts(ui: &mut egui::Ui, r: &Comparison) {
    let us = |u: Option<f64>| u.map_or("-".to_string(), |u| format!("{u:.1} µs"));
    let delta = |a: f64, b: f64| format!("{:+}", b - a);
    let rows: [(&str, String, String, String); 5] = [
        ("generated kernels", r.a.generated.to_string(), r.b.generated.to_string(), delta(r.a.generated as f64, r.b.generated as f64)),
        ("library calls", r.a.library.to_string(), r.b.library.to_string(), delta(r.a.library as f64, r.b.library as f64)),
        ("ATen fallbacks", r.a.fallback.to_string(), r.b.fallback.to_string(), delta(r.a.fallback as f64, r.b.fallback as f64)),
        ("launches in call()", r.a.launches.to_string(), r.b.launches.to_string(), delta(r.a.launches as f64, r.b.launches as f64)),
        (
            "device time",
            us(r.a.device_us),
            us(r.b.device_us),
            match (r.a.device_us, r.b.device_us) {
                (Some(a), Some(b)) => format!("{:+.1} µs", b - a),
                _ => "-".into(),
            },
        ),
    ];
    egui::Grid::new("compare counts").striped(true).show(ui, |ui| {
        for h in ["", "A", "B", "B − A"] {
            ui.label(RichText::new(h).strong());
        }
        ui.end_row();
        for (what, a, b, d) in rows {
            let heard = format!("compare {what}: A {a}, B {b}, B − A {d}");
            ui.label(what).widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Label, true, heard.clone()));
            ui.label(RichText::new(a).monospace());
            ui.label(RichText::new(b).monospace());
            ui.label(RichText::new(d).monospace());
            ui.end_row();
        }
    });
}

fn nodes(ui: &mut egui::Ui, r: &Comparison, all: bool, cmds: &mut Vec<Command>) {
    let changed = r.nodes.iter().filter(|d| d.a != d.b).count();
    ui.horizontal(|ui| {
        ui.label(RichText::new(format!("{changed} of {} original nodes ran differently", r.nodes.len())).strong());
        let mut every = all;
        if ui.checkbox(&mut every, "every node").changed() {
            cmds.push(Command::SetCompareAllNodes(every));
        }
    });
    ui.label(RichText::new("fused: in a generated kernel · library: extern call · fallback: an ATen op run as it is; largest time difference first").weak().small());
    let shown: Vec<&NodeDiff> = r.nodes.iter().filter(|d| all || d.a != d.b).collect();
    let us = |u: Option<f64>| u.map_or("-".to_string(), |u| format!("{u:.1}"));
    egui::ScrollArea::vertical().id_salt("compare nodes").show(ui, |ui| {
        egui::Grid::new("compare nodes grid").striped(true).show(ui, |ui| {
            for h in ["node", "A", "B", "A µs", "B µs", "B − A µs"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for d in shown {
                let delta = match (d.a_us, d.b_us) {
                    (None, None) => "-".to_string(),
                    (a, b) => format!("{:+.1}", b.unwrap_or(0.0) - a.unwrap_or(0.0)),
                };
                let heard = format!("compare node {}: A {}, B {}, A {} µs, B {} µs, B − A {delta} µs", d.node, d.a, d.b, us(d.a_us), us(d.b_us));
                ui.label(RichText::new(&d.node).monospace()).widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Label, true, heard.clone()));
                ui.label(d.a);
                ui.label(d.b);
                ui.label(RichText::new(us(d.a_us)).monospace());
                ui.label(RichText::new(us(d.b_us)).monospace());
                ui.label(RichText::new(delta).monospace());
                ui.end_row();
            }
        });
    });
}
