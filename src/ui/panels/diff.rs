//! The diff mode: a list of the differences on the left (the files, the stage of each, the pair
//! of graphs, the counts, then the differences grouped per module, stepped with n / p), and both
//! graphs side by side in the centre, coloured by class, a node's partner highlighted on the
//! other side.

use egui::{Color32, RichText};

use crate::diff::{Class, GraphPair};
use crate::ir::Format;
use crate::ui::canvas;
use crate::ui::command::Command;
use crate::ui::diff_links::{class_fill, class_name, row, summary};
use crate::ui::diff_view::{DiffCommand, DiffState, PairView};
use crate::ui::state::{AppState, View};

pub fn show(ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
    let d = &state.diff;
    egui::SidePanel::left("diff list").default_width(420.0).resizable(true).show(ctx, |ui| {
        ui.horizontal(|ui| {
            ui.heading("Diff");
            if ui.small_button("close (Esc)").on_hover_text("back to the graph views").clicked() {
                cmds.push(Command::Diff(DiffCommand::Close));
            }
        });
        files(ui, d, cmds);
        if let Some(r) = &d.running {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(r);
            });
        }
        if let Some(e) = &d.error {
            ui.label(RichText::new(e).color(ui.visuals().error_fg_color)).widget_info(|| {
                egui::WidgetInfo::labeled(egui::WidgetType::Label, true, format!("diff error: {e}"))
            });
        }
        let Some(result) = &d.result else { return };
        stages(ui, d, result.formats, cmds);
        pairs(ui, d, cmds);
        let Some((pair, view)) = d.shown() else { return };
        ui.separator();
        header(ui, state, pair, view, cmds);
        ui.separator();
        list(ui, d, pair, view, cmds);
    });
    egui::CentralPanel::default().frame(egui::Frame::none()).show(ctx, |ui| {
        if d.shown().is_none() {
            ui.centered_and_justified(|ui| {
                let text = d.running.clone().or(d.error.clone()).unwrap_or_else(|| "pick a file to compare with (File › Compare graph with…)".into());
                ui.label(text);
            });
            return;
        }
        ui.columns(2, |cols| {
            for (col, view) in cols.iter_mut().zip(View::DIFF) {
                pane(col, state, view, cmds);
            }
        });
    });
}

fn file_name(p: &std::path::Path) -> String {
    p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
}

fn files(ui: &mut egui::Ui, d: &DiffState, cmds: &mut Vec<Command>) {
    egui::Grid::new("diff files").num_columns(2).show(ui, |ui| {
        ui.label(RichText::new("A").weak());
        ui.label(RichText::new(d.a_file.as_deref().map_or("(the open file)".into(), file_name)).monospace())
            .on_hover_text(d.a_file.as_deref().map_or(String::new(), |p| p.display().to_string()));
        ui.end_row();
        ui.label(RichText::new("B").weak());
        ui.horizontal(|ui| {
            ui.label(RichText::new(d.b_file.as_deref().map_or("none".into(), file_name)).monospace())
                .on_hover_text(d.b_file.as_deref().map_or(String::new(), |p| p.display().to_string()));
            if ui.small_button("pick…").on_hover_text("the file to compare the open one with").clicked() {
                cmds.push(Command::Diff(DiffCommand::OpenDialog));
            }
        });
        ui.end_row();
    });
}

/// One picker per file, offering what `--stage` takes for its format.
fn stages(ui: &mut egui::Ui, d: &DiffState, formats: (Format, Format), cmds: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        for (side, format, current) in [("A", formats.0, &d.stage_a), ("B", formats.1, &d.stage_b)] {
            let every = if format == Format::TorchTrace { "every graph" } else { "as exported" };
            let text = current.clone().unwrap_or_else(|| every.to_string());
            egui::ComboBox::from_label(format!("stage of {side}")).selected_text(text).show_ui(ui, |ui| {
                let mut pick = |s: Option<String>| {
                    let (a, b) = if side == "A" { (s, d.stage_b.clone()) } else { (d.stage_a.clone(), s) };
                    cmds.push(Command::Diff(DiffCommand::SetStages(a, b)));
                };
                if ui.selectable_label(current.is_none(), every).clicked() {
                    pick(None);
                }
                for s in crate::diff::stage_choices(format) {
                    if ui.selectable_label(current.as_deref() == Some(*s), format!("{side}: {s}")).clicked() {
                        pick(Some(s.to_string()));
                    }
                }
            });
        }
    });
}

fn pair_label(p: &GraphPair) -> String {
    let name = if p.a == p.b { p.a.clone() } else { format!("{} ↔ {}", p.a, p.b) };
    let c = p.diff.counts;
    if p.diff.differs() {
        format!("{name} ({} differences)", c.changed + c.only_a + c.only_b)
    } else {
        format!("{name} (same)")
    }
}

/// Which pair of graphs is shown, and the graphs only one file has.
fn pairs(ui: &mut egui::Ui, d: &DiffState, cmds: &mut Vec<Command>) {
    let Some(r) = &d.result else { return };
    let f = &r.file;
    if f.pairs.len() > 1 {
        let shown = f.pairs.get(d.pair).map(pair_label).unwrap_or_default();
        egui::ComboBox::from_label("graph pair").selected_text(shown).width(300.0).show_ui(ui, |ui| {
            for (i, p) in f.pairs.iter().enumerate() {
                if ui.selectable_label(i == d.pair, format!("pair: {}", pair_label(p))).clicked() {
                    cmds.push(Command::Diff(DiffCommand::PickPair(i)));
                }
            }
        });
    }
    for (tag, list) in [("A", &f.only_a), ("B", &f.only_b)] {
        for g in list {
            ui.label(RichText::new(format!("{g}: only in {tag}")).small());
        }
    }
    if !f.warnings.is_empty() {
        ui.label(RichText::new(format!("{} import warning(s)", f.warnings.len())).small()).on_hover_text(f.warnings.join("\n"));
    }
}

/// The counts, the renamed symbols and devices, stepping and copying.
fn header(ui: &mut egui::Ui, state: &AppState, pair: &GraphPair, view: &PairView, cmds: &mut Vec<Command>) {
    let d = &state.diff;
    let g = &pair.diff;
    let text = summary(&g.counts);
    ui.label(RichText::new(&text).strong()).widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Label, true, format!("diff summary: {text}")));
    let dark = ui.visuals().dark_mode;
    ui.horizontal_wrapped(|ui| {
        for c in [Class::Changed, Class::OnlyA, Class::OnlyB, Class::Same] {
            swatch(ui, class_fill(c, dark));
            ui.label(RichText::new(class_name(c)).small());
        }
    });
    let renames = |pairs: &[(String, String)]| pairs.iter().map(|(p, q)| format!("{p} → {q}")).collect::<Vec<_>>().join(", ");
    for (what, pairs) in [("symbols", &g.symbols), ("devices", &g.devices)] {
        if !pairs.is_empty() {
            ui.label(RichText::new(format!("{what}: {}", renames(pairs))).small());
        }
    }
    ui.horizontal(|ui| {
        let any = !view.order.is_empty();
        let at = d.cursor.map_or("–".to_string(), |c| (c + 1).to_string());
        ui.label(format!("{at} / {}", view.order.len()));
        if ui.add_enabled(any, egui::Button::new("◀ previous (p)")).on_hover_text("previous difference (p, Shift+F7)").clicked() {
            cmds.push(Command::Diff(DiffCommand::Step(false)));
        }
        if ui.add_enabled(any, egui::Button::new("next (n) ▶")).on_hover_text("next difference (n, F7)").clicked() {
            cmds.push(Command::Diff(DiffCommand::Step(true)));
        }
        if ui.button("copy as text").on_hover_text("the differences as `xpu-workbench diff` prints them").clicked() {
            cmds.push(Command::Diff(DiffCommand::Copy));
        }
    });
    let mut sync = state.sync_cameras;
    if ui.checkbox(&mut sync, "move views together").on_hover_text("moving one side moves the other to the partner of the node in the middle").changed() {
        cmds.push(Command::SetSyncCameras(sync));
    }
    // What the difference stepped to changed, side by side.
    if let Some(e) = d.cursor.and_then(|c| view.order.get(c)).and_then(|&i| g.entries.get(i)) {
        egui::Grid::new("diff changes").num_columns(3).striped(true).show(ui, |ui| {
            for c in &e.changes {
                ui.label(RichText::new(&c.what).weak());
                ui.label(RichText::new(&c.a).monospace());
                ui.label(RichText::new(format!("→ {}", c.b)).monospace());
                ui.end_row();
            }
        });
    }
}

fn swatch(ui: &mut egui::Ui, fill: Color32) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
    ui.painter().rect_filled(rect, 2.0, fill);
}

/// A line of the list: a group's name, or a difference (its position in the stepping order).
enum Line<'d> {
    Group(&'d str),
    Difference(usize),
}

/// The differences grouped per module, each row a link that steps there. Only the rows in view
/// are built: a full decomposition of a large model differs in thousands of nodes.
fn list(ui: &mut egui::Ui, d: &DiffState, pair: &GraphPair, view: &PairView, cmds: &mut Vec<Command>) {
    let g = &pair.diff;
    if view.order.is_empty() {
        ui.label("no differences: every node and input has a partner that computes the same");
        return;
    }
    // `order` runs group by group: a header wherever the group changes.
    let mut lines = Vec::with_capacity(view.order.len() + g.groups.len());
    let mut group: Option<&str> = None;
    for (pos, &i) in view.order.iter().enumerate() {
        let name = g.entries[i].group.as_str();
        if group != Some(name) {
            lines.push(Line::Group(if name.is_empty() { "(top level)" } else { name }));
            group = Some(name);
        }
        lines.push(Line::Difference(pos));
    }
    let dark = ui.visuals().dark_mode;
    let row_h = ui.spacing().interact_size.y;
    let step = row_h + ui.spacing().item_spacing.y;
    // Scroll to the current row only when it changes, so the user can scroll away from it.
    let seen_id = ui.id().with("diff cursor seen");
    let seen: Option<(usize, Option<usize>)> = ui.data(|m| m.get_temp(seen_id));
    ui.data_mut(|m| m.insert_temp(seen_id, (d.pair, d.cursor)));
    let mut area = egui::ScrollArea::vertical().auto_shrink([false, false]);
    if seen != Some((d.pair, d.cursor)) {
        if let Some(at) = d.cursor.and_then(|c| lines.iter().position(|l| matches!(l, Line::Difference(p) if *p == c))) {
            area = area.vertical_scroll_offset((at as f32 * step - ui.available_height() / 2.0).max(0.0));
        }
    }
    area.show_rows(ui, row_h, lines.len(), |ui, range| {
        for line in &lines[range] {
            match line {
                Line::Group(name) => {
                    ui.label(RichText::new(*name).strong().monospace());
                }
                Line::Difference(pos) => {
                    let e = &g.entries[view.order[*pos]];
                    ui.horizontal(|ui| {
                        ui.add_space(8.0);
                        swatch(ui, class_fill(e.class, dark));
                        let current = d.cursor == Some(*pos);
                        let text = row(e);
                        let r = ui.selectable_label(current, RichText::new(&text).monospace());
                        r.widget_info(|| egui::WidgetInfo::selected(egui::WidgetType::SelectableLabel, true, current, format!("difference: {text}")));
                        if r.clicked() {
                            cmds.push(Command::Diff(DiffCommand::StepTo(*pos)));
                        }
                    });
                }
            }
        }
    });
}

/// One side: its file, graph and node count over the canvas.
fn pane(ui: &mut egui::Ui, state: &AppState, view: View, cmds: &mut Vec<Command>) {
    let d = &state.diff;
    let p = state.pane(view);
    ui.horizontal(|ui| {
        let (file, graph) = match (view, d.shown()) {
            (View::DiffA, Some((pair, _))) => (d.a_file.as_deref(), pair.a.as_str()),
            (_, Some((pair, _))) => (d.b_file.as_deref(), pair.b.as_str()),
            _ => (None, ""),
        };
        let title = format!("{} · {} · {graph}", if view == View::DiffA { "A" } else { "B" }, file.map_or(String::new(), file_name));
        if let Some(g) = &p.graph {
            ui.label(RichText::new(format!("{} nodes", g.nodes.len())).weak());
        }
        if ui.small_button("fit").clicked() {
            cmds.push(Command::Fit(view));
        }
        if let Some(b) = &p.busy {
            ui.spinner();
            ui.label(RichText::new(b).weak());
        }
        // Last and cut to the column: file and graph names are long.
        let title = RichText::new(title).strong();
        let title = if state.focus == view { title.color(canvas::SELECT_COLOR) } else { title };
        ui.add(egui::Label::new(title).truncate());
    });
    ui.push_id(("diff canvas", view), |ui| canvas::show(ui, state, view, cmds));
}

/// The inspector's rows for a node of a diff pane: its class, what it was matched with (a link
/// that selects it) and by which evidence, and what changed.
pub fn inspector_rows(ui: &mut egui::Ui, state: &AppState, view: View, id: crate::ir::NodeId, cmds: &mut Vec<Command>) {
    let (Some(side), Some((pair, v))) = (crate::ui::diff_view::side_of(view), state.diff.shown()) else { return };
    let Some(e) = v.links.entry(side, id).and_then(|i| pair.diff.entries.get(i)) else { return };
    let row = |ui: &mut egui::Ui, key: &str, value: &str| {
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(key).weak());
            ui.label(RichText::new(value).monospace());
        });
    };
    row(ui, "diff", class_name(e.class));
    let other = if view == View::DiffA { View::DiffB } else { View::DiffA };
    if let Some(p) = v.links.partner(&pair.diff, side, id) {
        let name = state.pane(other).graph.as_deref().filter(|g| p.index() < g.nodes.len()).map(|g| g.node(p).name.clone()).unwrap_or_default();
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(format!("partner in {}", if other == View::DiffA { "A" } else { "B" })).weak());
            if ui.link(RichText::new(&name).monospace()).on_hover_text("select it").clicked() {
                cmds.push(Command::Select(other, p));
            }
            if let Some(how) = e.matched_by {
                ui.label(RichText::new(format!("(matched by {})", format!("{how:?}").to_lowercase())).weak());
            }
        });
    }
    for c in &e.changes {
        row(ui, &c.what, &format!("{} → {}", c.a, c.b));
    }
}
