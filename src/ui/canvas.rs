//! The graph canvas: our own painter-drawn view, because it has to stay fluid at 12,000 nodes
//! (see docs/PERFORMANCE.md, "GUI"). Only boxes and edges inside the visible world rectangle are
//! drawn, and the level of detail drops with the zoom: text and curves when readable (never text
//! under [`MIN_TEXT`] pixels), plain boxes and straight lines when not. Modules are folded boxes or
//! open frames ([`super::groups`]); a minimap shows where the view is on a larger graph.
//!
//! Edges are drawn by `canvas_edges`.

use std::collections::HashSet;

use egui::{pos2, Color32, FontId, PointerButton, Pos2, Rect, Sense, Stroke, Ui, WidgetInfo, WidgetType};

use super::canvas_edges::{draw_edges, pixel_key, PixelSet};
use super::command::{Command, MarkTarget};
use super::groups::{self, group_fill};
use super::layout::{ItemKind, Layout};
use super::profiling::{heat_color, micros, NO_KERNEL_FILL};
use super::state::{format_dims, short_op, AppState, Camera, Fit, NodeClass, View};
use crate::ir::{Graph, NodeId};

/// The smallest text the canvas draws (screen pixels): below it boxes are drawn without text.
pub const MIN_TEXT: f32 = 8.0;
/// Text size at zoom 1.
const TEXT_SIZE: f32 = 11.0;
/// Below this zoom boxes are drawn without text (their text would be under [`MIN_TEXT`]).
pub const TEXT_ZOOM: f32 = MIN_TEXT / TEXT_SIZE;
/// Low enough that "fit" shows all of a 12,000-node chain (about a million world units tall).
const MIN_ZOOM: f32 = 0.0002;
const MAX_ZOOM: f32 = 3.0;

/// Fill colour of a node box by class, for the dark or light theme.
pub fn class_fill(class: NodeClass, dark: bool) -> Color32 {
    let (d, l) = match class {
        NodeClass::Plain => ((58, 60, 66), (226, 228, 232)),
        NodeClass::Decomposed => ((36, 84, 160), (178, 204, 248)),
        NodeClass::Fallback => ((150, 92, 20), (250, 208, 150)),
        NodeClass::Violation => ((176, 36, 36), (248, 160, 160)),
        NodeClass::NoRule => ((120, 112, 24), (238, 228, 140)),
        NodeClass::BackendExpanded => ((20, 130, 140), (150, 226, 232)),
        NodeClass::CpuFallback => ((172, 50, 132), (246, 172, 218)),
        NodeClass::NotImplemented => ((104, 58, 190), (214, 180, 250)),
    };
    let (r, g, b) = if dark { d } else { l };
    Color32::from_rgb(r, g, b)
}

pub fn class_name(class: NodeClass) -> &'static str {
    match class {
        NodeClass::Plain => "plain",
        NodeClass::Decomposed => "decomposed",
        NodeClass::Fallback => "kept (eager fallback)",
        NodeClass::Violation => "lite violation",
        NodeClass::NoRule => "no rule (kept)",
        NodeClass::BackendExpanded => "expanded by the backend",
        NodeClass::CpuFallback => "falls back to CPU",
        NodeClass::NotImplemented => "not implemented on the target",
    }
}

pub const MARK_COLOR: Color32 = Color32::from_rgb(190, 90, 230);
pub const SELECT_COLOR: Color32 = Color32::from_rgb(255, 214, 10);
const INPUT_FILL: Color32 = Color32::from_rgb(40, 120, 80);

/// The camera that shows all of `bounds` in `screen`.
pub fn fit(bounds: Rect, screen: Rect) -> Camera {
    let margin = 0.92;
    let zoom = (screen.width() / bounds.width().max(1.0)).min(screen.height() / bounds.height().max(1.0)) * margin;
    Camera { center: bounds.center(), zoom: zoom.clamp(MIN_ZOOM, 1.5), fit_pending: None }
}

/// A model's first view: the graph's width (never so small that text drops under [`MIN_TEXT`],
/// never larger than zoom 1), starting at its top; all of it when it fits. A graph wider than the
/// pane at the smallest readable zoom starts at its left edge, where a graph is read from (centring
/// it cut both sides off, the left one included).
pub fn first_view(bounds: Rect, screen: Rect) -> Camera {
    let zoom = (screen.width() * 0.96 / bounds.width().max(1.0)).clamp(TEXT_ZOOM, 1.0);
    let visible = screen.size() / zoom;
    let y = if bounds.height() + 24.0 <= visible.y { bounds.center().y } else { bounds.min.y - 12.0 + visible.y / 2.0 };
    let x = if bounds.width() + 24.0 <= visible.x { bounds.center().x } else { bounds.min.x - 12.0 + visible.x / 2.0 };
    Camera { center: pos2(x, y), zoom, fit_pending: None }
}

/// [`first_view`] of a graph whose boxes are `boxes`: where it is wider than the pane, it starts at
/// the leftmost box of the rows it shows rather than at the graph's left edge, which may be empty
/// at the top (a log's kernels stage: its leftmost kernels sit far below) and show a blank pane.
pub fn first_view_of(bounds: Rect, boxes: impl Iterator<Item = Rect>, screen: Rect) -> Camera {
    let mut cam = first_view(bounds, screen);
    let visible = screen.size() / cam.zoom;
    if bounds.width() + 24.0 <= visible.x {
        return cam;
    }
    let rows = Rect::from_center_size(cam.center, visible);
    let left = boxes.filter(|b| b.max.y >= rows.min.y && b.min.y <= rows.max.y).map(|b| b.min.x).fold(f32::INFINITY, f32::min);
    if left.is_finite() {
        cam.center.x = left - 12.0 + visible.x / 2.0;
    }
    cam
}

/// The camera a pending fit asks for, from the current one.
pub fn place(fit_kind: Fit, layout: &Layout, screen: Rect, current: Camera) -> Camera {
    let bounds = layout.bounds;
    match fit_kind {
        Fit::All => fit(bounds, screen),
        Fit::Top => first_view_of(bounds, layout.items.iter().map(|i| i.rect), screen),
        Fit::Reveal(r) => {
            let zoom = current.zoom.max(TEXT_ZOOM);
            let visible = screen.size() / zoom;
            let y = if r.height() + 24.0 <= visible.y { r.center().y } else { r.min.y - 12.0 + visible.y / 2.0 };
            let x = if r.width() <= visible.x { r.center().x } else { r.min.x - 12.0 + visible.x / 2.0 };
            Camera { center: pos2(x, y), zoom, fit_pending: None }
        }
    }
}

/// The text lines of one box: op (or what it stands for), symbolic shape, concrete shape; a
/// folded module's lines are [`groups::lines`].
pub fn item_lines(state: &AppState, view: View, graph: &Graph, kind: &ItemKind) -> Vec<String> {
    let pane = state.pane(view);
    match kind {
        ItemKind::Node(id) => {
            let n = graph.node(*id);
            let out = n.outputs.first().copied();
            let sym = out.and_then(|v| graph.value(v).tensor()).map(|t| format_dims(&t.sizes)).unwrap_or_default();
            let conc = out.map(|v| concrete_text(pane, v)).unwrap_or_default();
            vec![format!("{} · {}", short_op(&n.target), n.name), sym, conc]
        }
        ItemKind::Input(v) => {
            let val = graph.value(*v);
            let sym = val.tensor().map(|t| format_dims(&t.sizes)).unwrap_or_default();
            let conc = concrete_text(pane, *v);
            vec![format!("input · {}", val.name), sym, conc]
        }
        ItemKind::Group { .. } => groups::lines(state, view, graph, kind),
    }
}

/// `= [8, 128, 64]` under the current bindings, or why it does not evaluate.
fn concrete_text(pane: &super::state::Pane, v: crate::ir::ValueId) -> String {
    match pane.shapes.get(v.index()) {
        Some(Some(Ok(t))) => format!("= {}", format_dims(&t.shape)),
        Some(Some(Err(e))) => format!("= ? ({e})"),
        _ => String::new(),
    }
}

/// Draws `view`'s graph into all of `ui`'s remaining space.
pub fn show(ui: &mut Ui, state: &AppState, view: View, cmds: &mut Vec<Command>) {
    let pane = state.pane(view);
    let (rect, resp) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
    let dark = ui.visuals().dark_mode;
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, if dark { Color32::from_gray(24) } else { Color32::from_gray(248) });
    let (Some(graph), Some(layout)) = (pane.graph.as_deref(), pane.layout.as_deref()) else {
        let text = pane.error.clone().or(pane.busy.clone()).unwrap_or_else(|| "nothing loaded".into());
        painter.text(rect.center(), egui::Align2::CENTER_CENTER, text, FontId::proportional(14.0), ui.visuals().text_color());
        return;
    };

    let mut cam = pane.camera;
    let mut moved = false;
    if let Some(kind) = cam.fit_pending {
        cam = place(kind, layout, rect, cam);
        cmds.push(Command::PlaceCamera(view, cam));
    }
    if resp.dragged_by(PointerButton::Primary) || resp.dragged_by(PointerButton::Middle) {
        cam.pan_by(resp.drag_delta());
        moved = true;
    }
    if ui.rect_contains_pointer(rect) {
        let (scroll, pinch, pointer) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta(), i.pointer.hover_pos()));
        let factor = (scroll * 0.002).exp() * pinch;
        if (factor - 1.0).abs() > 1e-4 {
            let anchor = pointer.unwrap_or(rect.center());
            let world_at = cam.center + (anchor - rect.center()) / cam.zoom;
            cam.zoom = (cam.zoom * factor).clamp(MIN_ZOOM, MAX_ZOOM);
            cam.center = world_at - (anchor - rect.center()) / cam.zoom;
            moved = true;
        }
    }
    if moved {
        cmds.push(Command::SetCamera(view, cam));
    }

    let to_screen = |p: Pos2| rect.center() + (p - cam.center) * cam.zoom;
    let world_view = Rect::from_center_size(cam.center, rect.size() / cam.zoom);
    let detailed = cam.zoom >= TEXT_ZOOM;
    let related: HashSet<usize> = state.related(view).iter().filter_map(|n| layout.item_of(*n)).collect();

    // A click a module's box or title took is not also the background's (egui gives it to both).
    let mut widget_clicked = false;
    for frame in layout.frames.iter().filter(|f| f.rect.intersects(world_view)) {
        let srect = Rect::from_min_max(to_screen(frame.rect.min), to_screen(frame.rect.max));
        // A frame a few pixels wide only blurs the boxes it holds.
        if srect.width() < 8.0 || srect.height() < 8.0 {
            continue;
        }
        let focused = state.module.as_deref() == Some(frame.path.as_str());
        let tab = groups::title_rect(srect, rect, cam.zoom);
        groups::draw_frame(&painter, frame, srect, tab, detailed, dark, focused);
        if detailed {
            let tab = tab.intersect(rect);
            let label = format!("{} open module: {}", view.name(), groups::frame_label(frame));
            let r = ui.interact(tab, ui.id().with(("frame", view, &frame.path)), Sense::click()).on_hover_text("double-click to fold");
            r.widget_info(|| WidgetInfo::labeled(WidgetType::Button, true, label.clone()));
            widget_clicked |= r.clicked();
            if r.double_clicked() {
                cmds.push(Command::ToggleCollapse(frame.path.clone()));
            } else if r.clicked() {
                cmds.push(Command::FocusModule(Some(frame.path.clone())));
            }
        }
    }

    draw_edges(&painter, layout, &related, world_view, detailed, dark, &to_screen);

    // Fixed text colours: they sit on the coloured boxes, not on the panel background.
    let (text_color, weak_color) =
        if dark { (Color32::from_gray(240), Color32::from_gray(196)) } else { (Color32::from_gray(15), Color32::from_gray(60)) };
    let mut visible: Vec<(usize, Rect)> = Vec::new();
    let mut drawn: PixelSet = PixelSet::default();
    // Folded modules under the heat overlay: coloured by their summed device time against the
    // hottest folded module of this layout (its nodes' own ramp would saturate every box).
    let group_heat = groups::heat_by_item(state, view, graph, layout);
    for (i, item) in layout.items.iter().enumerate() {
        if !item.rect.intersects(world_view) {
            continue;
        }
        let mut srect = Rect::from_min_max(to_screen(item.rect.min), to_screen(item.rect.max));
        // Far out, a box is thinner than a pixel: keep it one pixel so the graph's shape shows.
        if srect.height() < 1.0 {
            srect = Rect::from_center_size(srect.center(), egui::vec2(srect.width().max(1.0), 1.0));
        }
        visible.push((i, srect));
        let (fill, marked) = match &item.kind {
            ItemKind::Node(id) => {
                let class = pane.classes.get(id.index()).copied().unwrap_or(NodeClass::Plain);
                // Marks are outlines: a box too small to outline skips the lookup.
                let marked = srect.width() >= 4.0 && state.origin(view, *id).is_some_and(|o| state.is_marked(o));
                let fill = match state.profile.heat_of(view, &graph.node(*id).name) {
                    Some(Some(t)) => heat_color(t),
                    Some(None) => NO_KERNEL_FILL,
                    None => super::diff_view::fill(state, view, *id, dark)
                        .or_else(|| kernel_fill(state, view, &graph.node(*id).name, dark))
                        .unwrap_or_else(|| class_fill(class, dark)),
                };
                (fill, marked)
            }
            ItemKind::Input(v) => (super::diff_view::input_fill(state, view, *v, dark).unwrap_or(INPUT_FILL), false),
            ItemKind::Group { path, members, .. } if view == View::Kernels => {
                let name = members.first().map(|m| graph.node(*m).name.as_str()).unwrap_or(path);
                (kernel_fill(state, view, name, dark).unwrap_or(group_fill(dark)), false)
            }
            ItemKind::Group { path, .. } => {
                let fill = match group_heat.get(&i) {
                    Some(t) => heat_color(*t),
                    None if group_heat.is_empty() => group_fill(dark),
                    None => NO_KERNEL_FILL,
                };
                (fill, state.marks.modules.contains(path))
            }
        };
        if srect.width() < 4.0 {
            // Zoomed far out, many boxes fall on the same pixels: draw each spot once.
            let spot = pixel_key(srect.min.x, srect.min.y, srect.width(), 0.0);
            if !drawn.insert(spot) && !related.contains(&i) {
                continue;
            }
            painter.rect_filled(srect, 0.0, fill);
            if related.contains(&i) {
                painter.rect_stroke(srect.expand(2.0), 0.0, Stroke::new(2.0, SELECT_COLOR));
            }
            continue;
        }
        let rounding = (4.0 * cam.zoom).min(6.0);
        painter.rect_filled(srect, rounding, fill);
        if let ItemKind::Group { members, path, .. } = &item.kind {
            let bar = Rect::from_min_max(pos2(srect.min.x, srect.max.y - (5.0 * cam.zoom).max(2.0)), srect.max);
            groups::class_bar(&painter, bar, state, view, members, dark);
            if state.module.as_deref() == Some(path.as_str()) {
                painter.rect_stroke(srect.expand(1.0), rounding, Stroke::new(1.5, SELECT_COLOR));
            }
        }
        if marked {
            painter.rect_stroke(srect, rounding, Stroke::new((2.5 * cam.zoom).max(1.0), MARK_COLOR));
        }
        if related.contains(&i) {
            painter.rect_stroke(srect.expand(2.0), rounding, Stroke::new(2.5, SELECT_COLOR));
        }
        if detailed {
            let lines = item_lines(state, view, graph, &item.kind);
            let text_painter = painter.with_clip_rect(srect.intersect(rect));
            let size = (TEXT_SIZE * cam.zoom).clamp(MIN_TEXT, 22.0);
            let pad = 5.0 * cam.zoom;
            let step = srect.height() / (lines.len() as f32 + 0.2);
            for (k, line) in lines.iter().enumerate() {
                let color = if k == 0 { text_color } else { weak_color };
                let at = pos2(srect.min.x + pad, srect.min.y + pad * 0.6 + k as f32 * step);
                text_painter.text(at, egui::Align2::LEFT_TOP, line, FontId::monospace(size), color);
            }
            // Readable boxes are what a person sees: give them to AccessKit (and the tests).
            let what = if matches!(item.kind, ItemKind::Group { .. }) { "module" } else { "node" };
            let mut label = format!("{} {what}: {}", view.name(), lines.join(" "));
            if let ItemKind::Node(id) = &item.kind {
                if let Some(ns) = state.profile.node_ns(view, &graph.node(*id).name) {
                    label.push_str(&format!(" · device {}", micros(ns)));
                }
                if let Some(c) = super::diff_view::class_of(state, view, *id) {
                    label.push_str(&format!(" [{}]", super::diff_links::class_name(c)));
                }
            }
            if (view.is_stage() || View::DIFF.contains(&view)) && related.contains(&i) {
                label.push_str(" [highlighted]");
            }
            let area = srect.intersect(rect);
            match &item.kind {
                // A folded module is a button: click to stand in it, double-click (or a screen
                // reader's activate, which is a click) to open it.
                ItemKind::Group { path, .. } => {
                    let r = ui
                        .interact(area, ui.id().with(("item", view, i)), Sense::click())
                        .on_hover_ui(|ui| {
                            ui.label(groups::details(state, view, graph, &item.kind));
                        });
                    r.widget_info(|| WidgetInfo::labeled(WidgetType::Button, true, label.clone()));
                    widget_clicked |= r.clicked();
                    if r.double_clicked() {
                        cmds.push(Command::ToggleCollapse(path.clone()));
                    } else if r.clicked() {
                        match kernel_of_group(state, view, path) {
                            Some(k) => cmds.push(Command::SelectKernel(Some(k))),
                            None => cmds.push(Command::FocusModule(Some(path.clone()))),
                        }
                    }
                    r.context_menu(|ui| module_menu(ui, state, path, cmds));
                }
                _ => {
                    ui.interact(area, ui.id().with(("item", view, i)), Sense::hover())
                        .widget_info(|| WidgetInfo::labeled(WidgetType::Label, true, label.clone()));
                }
            }
        }
    }

    // Last, so it is drawn over the boxes and takes the clicks on it.
    if let Some(c) = super::minimap::show(ui, rect, layout, &cam, dark) {
        cmds.push(Command::SetCamera(view, Camera { center: c, ..cam }));
    }

    let hit = |p: Pos2| visible.iter().rev().find(|(_, r)| r.contains(p)).map(|(i, _)| *i);
    let to_world = |p: Pos2| cam.center + (p - rect.center()) / cam.zoom;
    if widget_clicked {
        // Handled by the box or title above.
    } else if resp.double_clicked() {
        let at = resp.interact_pointer_pos();
        match at.and_then(hit).map(|i| &layout.items[i].kind) {
            Some(ItemKind::Group { path, .. }) => cmds.push(Command::ToggleCollapse(path.clone())),
            Some(_) => {}
            // Inside an open module's frame: fold it; on the bare background: fit.
            None => match at.and_then(|p| layout.frame_at(to_world(p))) {
                Some(f) => cmds.push(Command::ToggleCollapse(f.path.clone())),
                None => cmds.push(Command::Fit(view)),
            },
        }
    } else if resp.clicked() {
        match resp.interact_pointer_pos().and_then(hit) {
            Some(i) => match &layout.items[i].kind {
                ItemKind::Node(id) => cmds.push(Command::Select(view, *id)),
                ItemKind::Group { path, .. } => match kernel_of_group(state, view, path) {
                    Some(k) => cmds.push(Command::SelectKernel(Some(k))),
                    None => cmds.push(Command::FocusModule(Some(path.clone()))),
                },
                ItemKind::Input(_) => {}
            },
            None => cmds.push(Command::ClearSelection),
        }
    }
    let menu_id = ui.id().with(("menu-target", view));
    if resp.secondary_clicked() {
        let target = resp.interact_pointer_pos().and_then(hit);
        ui.data_mut(|d| d.insert_temp(menu_id, target));
    }
    resp.context_menu(|ui| {
        let target: Option<usize> = ui.data(|d| d.get_temp(menu_id)).flatten();
        match target.map(|i| &layout.items[i].kind) {
            Some(ItemKind::Node(id)) => node_menu(ui, state, view, *id, cmds),
            Some(ItemKind::Group { path, .. }) => module_menu(ui, state, path, cmds),
            _ => {
                if ui.button("Fit (F)").clicked() {
                    cmds.push(Command::Fit(view));
                    ui.close_menu();
                }
            }
        }
    });
}

/// In the kernels view, the colour of the kernel computing post-grad node `node`.
fn kernel_fill(state: &AppState, view: View, node: &str, dark: bool) -> Option<Color32> {
    let stage = state.kernels.stage.as_ref().filter(|_| view == View::Kernels)?;
    let &k = stage.kernel_of.get(node)?;
    Some(super::kernel_stage::kernel_color(k, stage.kernels[k].kind, dark))
}

/// The kernel a group of the kernels view stands for.
fn kernel_of_group(state: &AppState, view: View, path: &str) -> Option<usize> {
    state.kernels.stage.as_ref().filter(|_| view == View::Kernels)?.kernel_of_group(path)
}

/// Right-click menu of one node: marks act on the original node it came from.
pub fn node_menu(ui: &mut Ui, state: &AppState, view: View, id: NodeId, cmds: &mut Vec<Command>) {
    let Some(orig) = state.origin(view, id) else { return };
    let Some(g) = state.original() else { return };
    let node = g.node(orig);
    if ui.button("Select").clicked() {
        cmds.push(Command::Select(view, id));
        ui.close_menu();
    }
    let annotated = node.meta.compile_with_inductor();
    let by_user = state.marks.names.contains(&node.name);
    let label = if by_user { format!("Unmark `{}` for lite decomposition", node.name) } else { format!("Mark `{}` for lite decomposition", node.name) };
    if ui.add_enabled(!annotated, egui::Button::new(label)).on_disabled_hover_text("annotated compile_with_inductor in the file").clicked() {
        cmds.push(Command::SetMark(MarkTarget::Node(node.name.clone()), !by_user));
        ui.close_menu();
    }
    for frame in node.meta.nn_module_stack.iter().rev().filter(|f| !f.path.is_empty()) {
        ui.separator();
        module_menu(ui, state, &frame.path, cmds);
    }
}

/// Mark and collapse actions for a module path.
pub fn module_menu(ui: &mut Ui, state: &AppState, path: &str, cmds: &mut Vec<Command>) {
    let marked = state.marks.modules.iter().any(|m| m == path);
    // Groups the app made (runs of a module's own ops, kernels) cannot be marked.
    let kernel = state.kernels.stage.as_ref().is_some_and(|s| s.kernel_of_group(path).is_some());
    if super::hierarchy::is_op_run(path) || kernel {
        return fold_button(ui, state, path, cmds);
    }
    let label = if marked { format!("Unmark module `{path}`") } else { format!("Mark module `{path}` for lite decomposition") };
    if ui.button(label).clicked() {
        cmds.push(Command::SetMark(MarkTarget::Module(path.to_string()), !marked));
        ui.close_menu();
    }
    fold_button(ui, state, path, cmds);
}

fn fold_button(ui: &mut Ui, state: &AppState, path: &str, cmds: &mut Vec<Command>) {
    let collapsed = state.collapsed.contains(path);
    if ui.button(if collapsed { format!("Open module `{path}`") } else { format!("Fold module `{path}`") }).clicked() {
        cmds.push(Command::ToggleCollapse(path.to_string()));
        ui.close_menu();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::groups::{frame_colors, CLASSES};

    /// The world rectangle a camera shows in `screen`.
    fn shown(cam: Camera, screen: Rect) -> Rect {
        Rect::from_center_size(cam.center, screen.size() / cam.zoom)
    }

    /// The first view never cuts a graph off on the left: a narrow graph is shown whole, a wide one
    /// (a log's stage graph, its inputs in one long row) from its left edge at readable text.
    #[test]
    fn the_first_view_keeps_the_left_edge_in_view() {
        let screen = Rect::from_min_size(pos2(0.0, 0.0), egui::vec2(380.0, 700.0));
        let narrow = Rect::from_min_max(pos2(-100.0, 0.0), pos2(100.0, 300.0));
        let cam = first_view(narrow, screen);
        assert!(shown(cam, screen).contains_rect(narrow), "{cam:?}");
        assert_eq!(cam.zoom, 1.0);

        // The Llama log's dynamo graph, folded: 8,090 world units wide, 444 tall.
        let wide = Rect::from_min_max(pos2(-4045.0, 1364.0), pos2(4045.0, 1808.0));
        let cam = first_view(wide, screen);
        let view = shown(cam, screen);
        assert_eq!(cam.zoom, TEXT_ZOOM, "text stays readable");
        assert!(view.min.x <= wide.min.x && view.min.x >= wide.min.x - 24.0, "left edge in view, at the pane's left: {view:?}");
        assert!(view.min.y <= wide.min.y && view.max.y >= wide.max.y, "all of its height: {view:?}");

        // Wide, with nothing at the left of its top rows: from the leftmost box of those rows.
        let boxes = [Rect::from_min_size(pos2(-4045.0, 3000.0), egui::vec2(230.0, 54.0)), Rect::from_min_size(pos2(-600.0, 1400.0), egui::vec2(230.0, 54.0))];
        let tall = Rect::from_min_max(pos2(-4045.0, 1364.0), pos2(4045.0, 5000.0));
        let view = shown(first_view_of(tall, boxes.into_iter(), screen), screen);
        assert!(view.min.x <= -600.0 && view.min.x >= -624.0 && view.min.y <= 1364.0, "{view:?}");
        assert!(!view.intersects(boxes[0]), "the far-left box is rows below: {view:?}");

        // Tall and wide: the top-left corner.
        let big = Rect::from_min_max(pos2(0.0, 0.0), pos2(5000.0, 90000.0));
        let view = shown(first_view(big, screen), screen);
        assert!(view.min.x <= 0.0 && view.min.y <= 0.0 && view.max.y < 90000.0, "{view:?}");
    }

    /// Euclidean distance in RGB: crude, but two fills this far apart are told apart at a glance.
    fn distance(a: Color32, b: Color32) -> f32 {
        let d = |x: u8, y: u8| (x as f32 - y as f32).powi(2);
        (d(a.r(), b.r()) + d(a.g(), b.g()) + d(a.b(), b.b())).sqrt()
    }

    /// No two statuses share a colour, and a module (folded box, open frame's tab and outline) or a
    /// user input looks like none of them, in either theme. The readiness classes and the module
    /// colours keep a wider margin than the older statuses keep among themselves (orange "kept" and
    /// olive "no rule" are 25 apart in the light theme).
    #[test]
    fn statuses_and_modules_have_colours_of_their_own() {
        let wide = |c: NodeClass| matches!(c, NodeClass::CpuFallback | NodeClass::NotImplemented);
        for dark in [true, false] {
            let mut named: Vec<(String, Color32, bool)> =
                CLASSES.iter().map(|c| (class_name(*c).to_string(), class_fill(*c, dark), wide(*c))).collect();
            let (tab, outline) = frame_colors(dark);
            for (name, c) in [("module box", group_fill(dark)), ("module frame tab", tab), ("module frame outline", outline)] {
                named.push((name.into(), c, true));
            }
            named.push(("input".into(), INPUT_FILL, true));
            for (i, (a, ca, wa)) in named.iter().enumerate() {
                for (b, cb, wb) in &named[i + 1..] {
                    if a.starts_with("module") && b.starts_with("module") {
                        continue;
                    }
                    let least = if *wa || *wb { 40.0 } else { 24.0 };
                    let d = distance(*ca, *cb);
                    assert!(d >= least, "dark={dark}: {a} {ca:?} and {b} {cb:?} are {d:.0} apart");
                }
                for (stroke, c) in [("marked", MARK_COLOR), ("selected", SELECT_COLOR)] {
                    assert!(distance(*ca, c) >= 40.0, "dark={dark}: {a} looks like the {stroke} outline");
                }
            }
        }
    }
}
