//! The minimap: the whole graph in a corner of a pane that shows only part of it, with the view's
//! rectangle on it; a click or drag there moves the view.

use egui::{pos2, vec2, Color32, Pos2, Rect, Sense, Stroke, Ui, WidgetInfo, WidgetType};

use super::layout::{ItemKind, Layout};
use super::state::Camera;

/// Largest size of the minimap, in screen pixels.
const MAX: egui::Vec2 = vec2(110.0, 170.0);
/// Boxes drawn at most: a 12,000-node graph is drawn one box in [`MAX_BOXES`]th, enough for its shape.
const MAX_BOXES: usize = 1500;

/// Draws the minimap in `pane`'s bottom-right corner when the graph does not fit in the view;
/// returns the world point to centre on when the user clicked or dragged in it.
pub fn show(ui: &mut Ui, pane: Rect, layout: &Layout, cam: &Camera, dark: bool) -> Option<Pos2> {
    let world_view = Rect::from_center_size(cam.center, pane.size() / cam.zoom);
    let b = layout.bounds;
    if world_view.contains_rect(b) || b.width() <= 0.0 || b.height() <= 0.0 || pane.width() < 3.0 * MAX.x {
        return None;
    }
    let scale = (MAX.x / b.width()).min(MAX.y / b.height());
    let size = vec2((b.width() * scale).max(24.0), (b.height() * scale).max(24.0));
    let rect = Rect::from_min_size(pane.max - size - vec2(10.0, 10.0), size);
    let to_map = |p: Pos2| rect.center() + (p - b.center()) * scale;
    let painter = ui.painter_at(rect.expand(2.0));
    painter.rect_filled(rect.expand(2.0), 3.0, if dark { Color32::from_black_alpha(150) } else { Color32::from_white_alpha(170) });
    let stride = layout.items.len().div_ceil(MAX_BOXES).max(1);
    // Modules in their canvas colours (no status's; the light theme's darker outline sand, which
    // its box sand would be too faint for on the map), nodes plain.
    let node = if dark { Color32::from_white_alpha(110) } else { Color32::from_black_alpha(90) };
    let group = if dark { super::groups::group_fill(true) } else { super::groups::frame_colors(false).1 };
    for item in layout.items.iter().step_by(stride) {
        let r = Rect::from_min_max(to_map(item.rect.min), to_map(item.rect.max));
        let r = Rect::from_center_size(r.center(), vec2(r.width().max(1.0), r.height().max(1.0)));
        painter.rect_filled(r, 0.0, if matches!(item.kind, ItemKind::Group { .. }) { group } else { node });
    }
    let v = Rect::from_min_max(to_map(world_view.min), to_map(world_view.max)).intersect(rect);
    painter.rect_stroke(v, 0.0, Stroke::new(1.5, super::canvas::SELECT_COLOR));
    let resp = ui.interact(rect, ui.id().with("minimap"), Sense::click_and_drag());
    resp.widget_info(|| WidgetInfo::labeled(WidgetType::Other, true, "minimap"));
    if resp.clicked() || resp.dragged() {
        let p = resp.interact_pointer_pos()?;
        let world = b.center() + (p - rect.center()) / scale;
        return Some(pos2(world.x, world.y));
    }
    None
}
