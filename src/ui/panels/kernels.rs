//! The kernel list of the kernels stage: every Inductor kernel of the shown compile in launch
//! order of definition, coloured as in the graph; the picked one's nodes and its source (Triton
//! or C++ from the log's output code), or why the log has none.

use egui::RichText;

use crate::import::trace::{Kernel, KernelSource};
use crate::ui::command::Command;
use crate::ui::kernel_stage::{kernel_color, kind_name, KernelStage};
use crate::ui::state::{AppState, View};

/// Shown with a TORCH_TRACE compile's stages.
pub fn show(ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
    if state.stages.is_none() {
        return;
    }
    let k = &state.kernels;
    egui::SidePanel::left("kernels").default_width(340.0).max_width(560.0).resizable(true).show(ctx, |ui| {
        ui.heading("Kernels");
        if let Some(b) = &k.busy {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(b);
            });
        }
        if let Some(e) = &k.error {
            ui.label(RichText::new(e).color(ui.visuals().error_fg_color));
        }
        let Some(stage) = k.stage.clone() else { return };
        summary(ui, &stage);
        for n in &stage.notes {
            ui.label(RichText::new(format!("note: {n}")).small().color(ui.visuals().warn_fg_color));
        }
        let list_height = if k.selected.is_some() { ui.available_height() * 0.4 } else { ui.available_height() };
        egui::ScrollArea::vertical().id_salt("kernel list").max_height(list_height).show(ui, |ui| {
            list(ui, state, &stage, cmds);
        });
        if let Some(kernel) = k.selected.and_then(|i| stage.kernels.get(i)) {
            ui.separator();
            egui::ScrollArea::both().id_salt("kernel detail").show(ui, |ui| detail(ui, state, kernel, cmds));
        }
    });
}

fn summary(ui: &mut egui::Ui, stage: &KernelStage) {
    let count = |f: &dyn Fn(&Kernel) -> bool| stage.kernels.iter().filter(|k| f(k)).count();
    let generated = count(&|k| matches!(k.source, KernelSource::Code { .. } | KernelSource::NotInLog { .. }));
    let text = format!(
        "compile {}: {} kernels ({} generated, {} library or fallback calls)",
        stage.compile_id,
        stage.kernels.len(),
        generated,
        stage.kernels.len() - generated
    );
    ui.label(RichText::new(text).weak());
}

fn list(ui: &mut egui::Ui, state: &AppState, stage: &KernelStage, cmds: &mut Vec<Command>) {
    let dark = ui.visuals().dark_mode;
    for (i, k) in stage.kernels.iter().enumerate() {
        ui.horizontal(|ui| {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
            ui.painter().rect_filled(rect, 2.0, kernel_color(i, k.kind, dark));
            let picked = state.kernels.selected == Some(i);
            // Fused kernels' names run to a hundred characters: cut, whole on hover.
            let text = format!("{} · {} node(s)", cut(&k.name, 44), k.post_grad_nodes.len());
            let r = ui.selectable_label(picked, RichText::new(text).monospace().small()).on_hover_text(&k.name);
            let heard = format!("kernel: {} ({})", k.name, kind_name(k.kind));
            r.widget_info(|| egui::WidgetInfo::selected(egui::WidgetType::SelectableLabel, true, picked, heard.clone()));
            if r.clicked() {
                cmds.push(Command::SelectKernel(if picked { None } else { Some(i) }));
            }
        });
    }
}

fn detail(ui: &mut egui::Ui, state: &AppState, k: &Kernel, cmds: &mut Vec<Command>) {
    ui.add(egui::Label::new(RichText::new(&k.name).strong().monospace()).wrap());
    ui.label(RichText::new(format!("{} · {} call site(s) in call()", kind_name(k.kind), k.call_sites)).weak());
    links(ui, state, "computes (post-grad):", View::Kernels, &k.post_grad_nodes, cmds);
    links(ui, state, "original nodes:", View::Dynamo, &k.nodes, cmds);
    if let Some(t) = k.compile_time_us {
        ui.label(RichText::new(format!("compiled in {:.1} ms ({} config(s))", t as f64 / 1e3, k.num_configs.unwrap_or(0))).weak());
    }
    ui.separator();
    let text = match &k.source {
        KernelSource::Code { language, text } => {
            let heard = format!("kernel source ({language}) of {}: {text}", k.name);
            ui.horizontal(|ui| {
                ui.label(RichText::new(format!("source ({language}, {} lines)", text.lines().count())).strong());
                if ui.small_button("copy").clicked() {
                    cmds.push(Command::Copy(text.clone()));
                }
            });
            let r = ui.add(egui::Label::new(RichText::new(text).monospace().small()).wrap_mode(egui::TextWrapMode::Extend));
            r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Label, true, heard.clone()));
            return;
        }
        KernelSource::NotInLog { path, why } => match path {
            Some(p) if !std::path::Path::new(p).exists() => format!("kernel source not in the log: it names {p}, which is not on this machine ({why})"),
            Some(p) => format!("kernel source not in the log: {p} ({why})"),
            None => format!("kernel source not in the log, and no path to it ({why})"),
        },
        KernelSource::Library => format!("no source: `{}` is a library or ATen kernel, run as it is", k.callee),
    };
    let r = ui.label(RichText::new(&text).italics());
    r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Label, true, format!("kernel source of {}: {text}", k.name)));
}

/// Links to the named nodes in `view` (the first 30, then a count).
fn links(ui: &mut egui::Ui, state: &AppState, label: &str, view: View, names: &[String], cmds: &mut Vec<Command>) {
    const SHOWN: usize = 30;
    let graph = state.pane(view).graph.clone();
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(label).weak());
        if names.is_empty() {
            ui.label(RichText::new("none named").weak());
        }
        for n in names.iter().take(SHOWN) {
            match graph.as_deref().and_then(|g| g.node_by_name(n)) {
                Some(id) => {
                    let link = ui.link(RichText::new(n).monospace().small());
                    let heard = format!("in {}: {n}", view.name());
                    link.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Link, true, heard.clone()));
                    if link.clicked() {
                        cmds.push(Command::JumpTo(view, id));
                    }
                }
                None => {
                    ui.label(RichText::new(n).monospace().small());
                }
            }
        }
        if names.len() > SHOWN {
            ui.label(format!("… {} more", names.len() - SHOWN));
        }
    });
}

/// `s` cut to `n` characters, with an ellipsis when cut.
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}
