//! The three decomposition views keep the same camera where the graphs allow: when the user moves
//! one, the others move to the same place of the model, found through provenance (a node → what
//! it became) or the module path (a folded module is one box in every view), at the same zoom.

use egui::{Pos2, Rect};

use super::layout::{ItemKind, Layout};
use super::state::{AppState, View};

/// Moves every other shown decomposition view to where `from`'s camera is.
pub fn follow(state: &mut AppState, from: View) {
    let Some(src) = state.pane(from).layout.clone() else { return };
    let cam = state.pane(from).camera;
    let Some(anchor) = nearest(&src, cam.center) else { return };
    let offset = cam.center - src.items[anchor].rect.center();
    for to in View::ALL {
        if to == from || !state.shown[to.index()] {
            continue;
        }
        let Some(dst) = state.pane(to).layout.clone() else { continue };
        let Some(target) = counterpart(state, from, &src.items[anchor].kind, to, &dst) else { continue };
        let pane = state.pane_mut(to);
        if pane.camera.fit_pending.is_some() {
            continue;
        }
        pane.camera.center = target.center() + offset;
        pane.camera.zoom = cam.zoom;
    }
}

/// The node or module box nearest to `p` (inputs are matched by neither provenance nor path).
pub fn nearest(layout: &Layout, p: Pos2) -> Option<usize> {
    layout
        .items
        .iter()
        .enumerate()
        .filter(|(_, i)| !matches!(i.kind, ItemKind::Input(_)))
        .min_by(|(_, a), (_, b)| a.rect.distance_sq_to_pos(p).total_cmp(&b.rect.distance_sq_to_pos(p)))
        .map(|(k, _)| k)
}

/// Where `kind` of view `from` is shown in view `to`.
fn counterpart(state: &AppState, from: View, kind: &ItemKind, to: View, dst: &Layout) -> Option<Rect> {
    match kind {
        ItemKind::Node(id) => {
            let orig = state.origin(from, *id)?;
            let node = *state.products(to, orig).first()?;
            dst.item_of(node).map(|i| dst.items[i].rect)
        }
        ItemKind::Group { path, .. } => dst.rect_of_module(path),
        ItemKind::Input(_) => None,
    }
}
