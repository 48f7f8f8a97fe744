//! The menu bar: open (dialog, recent files), views shown side by side, theme, legend.

use egui::{Color32, RichText};

use crate::ui::canvas::{class_fill, class_name, MARK_COLOR, SELECT_COLOR};
use crate::ui::command::{Command, UiCommand};
use crate::ui::state::{AppState, NodeClass, Source, Theme, View};

pub fn show(ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
    egui::TopBottomPanel::top("top").show(ctx, |ui| {
        ui.horizontal_wrapped(|ui| {
            ui.menu_button("File", |ui| {
                let open = UiCommand::Open;
                if ui.button(open.label()).on_hover_text(open.tooltip(state)).clicked() {
                    cmds.push(open.command(state));
                    ui.close_menu();
                }
                if ui.button("Import torch.profiler trace… (of the open log's run)").clicked() {
                    cmds.push(Command::ImportProfileDialog);
                    ui.close_menu();
                }
                if ui.button("Compare graph with… (diff, n/p step)").on_hover_text("diff the open file's graphs against another log, .pt2 or .onnx: both side by side, differences coloured and listed").clicked() {
                    cmds.push(Command::Diff(crate::ui::diff_view::DiffCommand::OpenDialog));
                    ui.close_menu();
                }
                if ui.button("Compare with another log… (lite vs default)").clicked() {
                    cmds.push(Command::CompareDialog(crate::ui::comparing::CompareSlot::OtherLog));
                    ui.close_menu();
                }
                if ui.button("Export report… (one HTML file to share)").clicked() {
                    cmds.push(Command::ExportReportDialog);
                    ui.close_menu();
                }
                if ui.button("Open the embedded sample").clicked() {
                    cmds.push(Command::Open(Source::Embedded));
                    ui.close_menu();
                }
                ui.separator();
                ui.label(RichText::new("Recent files").weak());
                if state.recent.is_empty() {
                    ui.label(RichText::new("(none yet)").weak());
                }
                for p in &state.recent {
                    ui.horizontal(|ui| {
                        if ui.button(p.display().to_string()).clicked() {
                            cmds.push(Command::Open(Source::File(p.clone())));
                            ui.close_menu();
                        }
                        if ui.small_button("✕").on_hover_text("forget").clicked() {
                            cmds.push(Command::ForgetRecent(p.clone()));
                        }
                    });
                }
            });
            ui.separator();
            graph_pickers(ui, state, cmds);
            if state.stages.is_some() {
                for (k, v) in View::STAGES.into_iter().enumerate() {
                    let mut on = state.stages_shown[k];
                    if ui.checkbox(&mut on, v.name()).on_hover_text(format!("show the compile's {} stage", v.name())).changed() {
                        cmds.push(Command::SetStageShown(v, on));
                    }
                }
            } else {
                for (k, v) in View::ALL.into_iter().enumerate() {
                    let mut on = state.shown[v.index()];
                    let label = format!("{} {}", k + 1, v.name());
                    if ui.checkbox(&mut on, label).on_hover_text(format!("show the {} graph (key {})", v.name(), k + 1)).changed() {
                        cmds.push(Command::SetShown(v, on));
                    }
                }
            }
            ui.separator();
            for c in [UiCommand::Search, UiCommand::Fit] {
                if ui.button(c.label()).on_hover_text(c.tooltip(state)).clicked() {
                    cmds.push(c.command(state));
                }
            }
            let mut nb = state.show_neighbourhood;
            if ui.checkbox(&mut nb, "neighbourhood").changed() {
                cmds.push(Command::ToggleNeighbourhood);
            }
            let next = match state.theme {
                Theme::Dark => Theme::Light,
                Theme::Light => Theme::Dark,
            };
            if ui.button(if state.theme == Theme::Dark { "☀ light" } else { "🌙 dark" }).clicked() {
                cmds.push(Command::SetTheme(next));
            }
            ui.separator();
            target_backend_picker(ui, state, cmds);
            ui.separator();
            super::profile::device_picker(ui, state, cmds);
            ui.separator();
            legend(ui);
        });
    });
}

/// Which graph of a multi-graph model is the original; for a TORCH_TRACE log, which compile's
/// stages to show side by side.
fn graph_pickers(ui: &mut egui::Ui, state: &AppState, cmds: &mut Vec<Command>) {
    let Some(doc) = &state.doc else { return };
    if doc.model.graphs.len() > 1 {
        egui::ComboBox::from_label("original graph").selected_text(&doc.model.graphs[doc.graph].name).show_ui(ui, |ui| {
            for (i, g) in doc.model.graphs.iter().enumerate() {
                if ui.selectable_label(i == doc.graph, format!("graph: {}", g.name)).clicked() {
                    cmds.push(Command::PickGraph(i));
                }
            }
        });
    }
    if doc.model.format == crate::ir::Format::TorchTrace {
        let shown = state.stages.as_ref().map(|s| s.compile_id.clone());
        let text = shown.clone().unwrap_or_else(|| "(our re-decomposition)".into());
        egui::ComboBox::from_label("compile id").selected_text(text).show_ui(ui, |ui| {
            if ui.selectable_label(shown.is_none(), "stages: off (our lite/full re-decomposition)").clicked() {
                cmds.push(Command::ShowStages(None));
            }
            for id in crate::ui::stages::compile_ids(&doc.model) {
                if ui.selectable_label(shown.as_deref() == Some(id.as_str()), format!("stages of compile {id}")).clicked() {
                    cmds.push(Command::ShowStages(Some(id)));
                }
            }
        });
        ui.separator();
    }
}

/// The backend the lite view is derived for: its missing kernels force expansions ([`UiCommand::CycleBackend`] cycles).
fn target_backend_picker(ui: &mut egui::Ui, state: &AppState, cmds: &mut Vec<Command>) {
    use crate::ops::Backend;
    let name = |b: Option<Backend>| b.map_or("any (marks only)".to_string(), |b| b.key().to_string());
    let forced = state.backend_fates.len();
    let tip = match (state.target_backend, &state.backend_table) {
        (Some(b), Some(t)) => {
            let n = |c: NodeClass| state.pane(View::Original).classes.iter().filter(|x| **x == c).count();
            format!(
                "lite mode on {b}: {forced} unmarked node(s) expanded because {b} has no kernel for them, {} kept that fall back to the CPU, {} kept with nothing to run them (kernel table of torch {t}{}); {} cycles",
                n(NodeClass::CpuFallback),
                n(NodeClass::NotImplemented),
                state.readiness.source.as_ref().map(|s| format!("; CPU fallbacks from {s}")).unwrap_or_default(),
                UiCommand::CycleBackend.shortcut_text()
            )
        }
        _ => format!("lite mode decided by the marks alone; {} cycles", UiCommand::CycleBackend.shortcut_text()),
    };
    egui::ComboBox::from_label("lite target")
        .selected_text(name(state.target_backend))
        .show_ui(ui, |ui| {
            for b in [Some(Backend::Xpu), Some(Backend::Cuda), Some(Backend::Cpu), None] {
                if ui.selectable_label(state.target_backend == b, name(b)).clicked() {
                    cmds.push(Command::SetTargetBackend(b));
                }
            }
        })
        .response
        .on_hover_text(tip);
}

fn swatch(ui: &mut egui::Ui, fill: Color32, stroke: Option<Color32>, text: &str) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
    ui.painter().rect_filled(rect, 2.0, fill);
    if let Some(c) = stroke {
        ui.painter().rect_stroke(rect, 2.0, egui::Stroke::new(2.0, c));
    }
    ui.label(RichText::new(text).small());
}

/// What the colours of the graph mean.
pub fn legend(ui: &mut egui::Ui) {
    let dark = ui.visuals().dark_mode;
    for class in [
        NodeClass::Decomposed,
        NodeClass::Fallback,
        NodeClass::Violation,
        NodeClass::BackendExpanded,
        NodeClass::CpuFallback,
        NodeClass::NotImplemented,
        NodeClass::NoRule,
    ] {
        swatch(ui, class_fill(class, dark), None, class_name(class));
    }
    swatch(ui, crate::ui::groups::group_fill(dark), None, "folded module");
    swatch(ui, class_fill(NodeClass::Plain, dark), Some(MARK_COLOR), "marked");
    swatch(ui, class_fill(NodeClass::Plain, dark), Some(SELECT_COLOR), "selected / related");
}
