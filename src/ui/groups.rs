//! How modules are drawn on the canvas: a folded one as a box that says what it holds (op count,
//! input → output shape, what lite and full did inside it, a bar of those colours), an open one
//! as a frame with a title tab around its boxes.

use std::collections::HashMap;

use egui::{pos2, Color32, FontId, Painter, Rect, Stroke};

use super::canvas::class_fill;
use super::layout::{Frame, ItemKind, Layout};
use super::state::{format_dims, short_op, AppState, NodeClass, Pane, View};
use crate::ir::{Graph, NodeId, ValueId};

/// Every class, in the order a module's bar shows them.
pub const CLASSES: [NodeClass; 8] = [
    NodeClass::Plain,
    NodeClass::Decomposed,
    NodeClass::Fallback,
    NodeClass::CpuFallback,
    NodeClass::NotImplemented,
    NodeClass::Violation,
    NodeClass::NoRule,
    NodeClass::BackendExpanded,
];

/// A folded module's fill: slate in the dark theme, sand in the light one — hues no node status
/// uses (the teal it had was the "expanded by the backend" teal's neighbour; a unit test in
/// `canvas.rs` keeps them apart).
pub fn group_fill(dark: bool) -> Color32 {
    if dark {
        Color32::from_rgb(84, 88, 120)
    } else {
        Color32::from_rgb(214, 202, 178)
    }
}

/// An open module's title tab fill and outline, of the same family as [`group_fill`].
pub fn frame_colors(dark: bool) -> (Color32, Color32) {
    if dark {
        (Color32::from_rgb(48, 54, 108), Color32::from_rgb(120, 126, 160))
    } else {
        (Color32::from_rgb(222, 212, 190), Color32::from_rgb(170, 150, 110))
    }
}

/// What a folded module holds, in the terms of one view.
pub struct Summary {
    /// Nodes of this view inside it.
    pub ops: usize,
    /// Original nodes they stand for.
    pub origins: usize,
    /// Of those, how many lite and full decomposed (when that decomposition is known).
    pub lite: Option<usize>,
    pub full: Option<usize>,
    /// Nodes of each class, in [`CLASSES`] order.
    pub classes: [usize; CLASSES.len()],
}

pub fn summarize(state: &AppState, view: View, members: &[NodeId]) -> Summary {
    let pane = state.pane(view);
    let mut classes = [0usize; CLASSES.len()];
    for m in members {
        let c = pane.classes.get(m.index()).copied().unwrap_or(NodeClass::Plain);
        classes[CLASSES.iter().position(|x| *x == c).unwrap_or(0)] += 1;
    }
    let mut origins: Vec<NodeId> = members.iter().filter_map(|m| state.origin(view, *m)).collect();
    origins.sort_unstable();
    origins.dedup();
    let count = |v: View| {
        let d = &state.pane(v).decomposed_origin;
        (!d.is_empty() && !view.is_stage()).then(|| origins.iter().filter(|o| d.get(o.index()).copied().unwrap_or(false)).count())
    };
    Summary { ops: members.len(), origins: origins.len(), lite: count(View::Lite), full: count(View::Full), classes }
}

impl Summary {
    /// "3 of 12 decomposed in lite · 12 in full", or empty when neither is known yet.
    pub fn decomposed_text(&self) -> String {
        match (self.lite, self.full) {
            (Some(l), Some(f)) => format!("{l} of {} decomposed in lite · {f} in full", self.origins),
            (Some(l), None) => format!("{l} of {} decomposed in lite", self.origins),
            (None, Some(f)) => format!("{f} of {} decomposed in full", self.origins),
            (None, None) => String::new(),
        }
    }

    /// How many of its nodes the lite target sends to the CPU or has nothing for.
    pub fn readiness_text(&self, state: &AppState) -> String {
        let n = |c: NodeClass| CLASSES.iter().position(|x| *x == c).map_or(0, |k| self.classes[k]);
        super::readiness::summary(n(NodeClass::CpuFallback), n(NodeClass::NotImplemented), state.readiness.backend)
    }
}

/// The text lines of a folded module's box (`group`: an [`ItemKind::Group`]).
pub fn lines(state: &AppState, view: View, graph: &Graph, group: &ItemKind) -> Vec<String> {
    let ItemKind::Group { path, class, members, inputs, outputs } = group else { return Vec::new() };
    let pane = state.pane(view);
    let s = summarize(state, view, members);
    let (ins, outs) = (shapes(graph, inputs), shapes(graph, outputs));
    let (cin, cout) = (concrete(pane, inputs), concrete(pane, outputs));
    let mut out = vec![
        format!("▸ {path}"),
        format!("{class} · {} ops", s.ops),
        format!("{ins} → {outs}"),
        if cin.is_empty() && cout.is_empty() { String::new() } else { format!("= {cin} → {cout}") },
        s.decomposed_text(),
    ];
    // A sixth line only where there is something to say: most modules run natively.
    let ready = s.readiness_text(state);
    if !ready.is_empty() {
        out.push(ready);
    }
    if let Some(t) = state.profile.group_time(view, member_names(graph, members)) {
        out.push(t.text());
    }
    out
}

fn member_names<'g>(graph: &'g Graph, members: &'g [NodeId]) -> impl Iterator<Item = &'g str> {
    members.iter().map(|m| graph.node(*m).name.as_str())
}

/// Per folded module of `layout` (by item index), its heat in [0, 1]: its summed device time over
/// the largest such sum. Empty when the overlay does not show `view`; a module none of whose nodes
/// ran a kernel is absent.
pub fn heat_by_item(state: &AppState, view: View, graph: &Graph, layout: &Layout) -> HashMap<usize, f32> {
    let times: Vec<(usize, u64)> = layout
        .items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match &item.kind {
            ItemKind::Group { members, .. } => state.profile.group_time(view, member_names(graph, members)).map(|t| (i, t.ns)),
            _ => None,
        })
        .collect();
    let max = times.iter().map(|(_, ns)| *ns).max().unwrap_or(0);
    times.into_iter().map(|(i, ns)| (i, if max == 0 { 0.0 } else { ns as f32 / max as f32 })).collect()
}

/// A folded module's hover text: its ops by count, every input and output shape, how to open it.
pub fn details(state: &AppState, view: View, graph: &Graph, group: &ItemKind) -> String {
    let ItemKind::Group { path, members, inputs, outputs, .. } = group else { return String::new() };
    let ready = summarize(state, view, members).readiness_text(state);
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for m in members {
        *counts.entry(short_op(&graph.node(*m).target)).or_default() += 1;
    }
    let mut ops: Vec<(&str, usize)> = counts.into_iter().collect();
    ops.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut text = format!("{path}: {} ops\n", members.len());
    if !ready.is_empty() {
        text.push_str(&format!("{ready} (lite target, torch {})\n", state.readiness.torch));
    }
    if let Some(t) = state.profile.group_time(view, member_names(graph, members)) {
        text.push_str(&format!("{} (mean of the profile's timed runs)\n", t.text()));
    }
    for (op, n) in ops.iter().take(12) {
        text.push_str(&format!("  {n} × {op}\n"));
    }
    if ops.len() > 12 {
        text.push_str(&format!("  … {} more kinds\n", ops.len() - 12));
    }
    let pane = state.pane(view);
    let list = |values: &[ValueId]| -> String {
        values
            .iter()
            .filter_map(|v| {
                let t = graph.value(*v).tensor()?;
                let c = pane.shapes.get(v.index()).and_then(|r| r.as_ref()).and_then(|r| r.as_ref().ok());
                Some(format!("  {} {}{}\n", graph.value(*v).name, format_dims(&t.sizes), c.map(|c| format!(" = {}", format_dims(&c.shape))).unwrap_or_default()))
            })
            .collect()
    };
    text.push_str(&format!("in:\n{}out:\n{}", list(inputs), list(outputs)));
    text.push_str("double-click to open");
    text
}

/// The first tensor's symbolic shape, and how many more there are.
fn shapes(graph: &Graph, values: &[ValueId]) -> String {
    let tensors: Vec<String> = values.iter().filter_map(|v| graph.value(*v).tensor()).map(|t| format_dims(&t.sizes)).collect();
    more(tensors)
}

fn concrete(pane: &Pane, values: &[ValueId]) -> String {
    let tensors: Vec<String> = values
        .iter()
        .filter_map(|v| pane.shapes.get(v.index())?.as_ref()?.as_ref().ok())
        .map(|t| format_dims(&t.shape))
        .collect();
    more(tensors)
}

fn more(list: Vec<String>) -> String {
    match list.len() {
        0 => "()".into(),
        1 => list[0].clone(),
        n => format!("{} (+{})", list[0], n - 1),
    }
}

/// A bar along the bottom of a folded module: the share of each class inside it.
pub fn class_bar(painter: &Painter, rect: Rect, state: &AppState, view: View, members: &[NodeId], dark: bool) {
    let s = summarize(state, view, members);
    let total = s.ops.max(1) as f32;
    let mut x = rect.min.x;
    for (k, n) in s.classes.iter().enumerate() {
        if *n == 0 {
            continue;
        }
        let w = rect.width() * *n as f32 / total;
        painter.rect_filled(Rect::from_min_max(pos2(x, rect.min.y), pos2(x + w, rect.max.y)), 0.0, class_fill(CLASSES[k], dark));
        x += w;
    }
}

/// The title tab of an open module's frame, in screen space: its top-left corner, moved right to
/// stay in `view` when the frame starts left of it (a wide module keeps its name on screen).
pub fn title_rect(frame_screen: Rect, view: Rect, zoom: f32) -> Rect {
    let h = super::layout::TITLE_H * zoom;
    let left = frame_screen.min.x.max(view.min.x).min(frame_screen.max.x);
    let w = (frame_screen.max.x - left).min(420.0 * zoom.max(0.5));
    Rect::from_min_size(egui::pos2(left, frame_screen.min.y), egui::vec2(w, h))
}

/// An open module: a faint fill by depth, an outline and a title tab.
pub fn draw_frame(painter: &Painter, frame: &Frame, srect: Rect, tab: Rect, detailed: bool, dark: bool, focused: bool) {
    let zoom = tab.height() / super::layout::TITLE_H;
    let shade = if dark { 30 + 8 * (frame.depth as u8 % 4) } else { 240 - 8 * (frame.depth as u8 % 4) };
    painter.rect_filled(srect, 6.0, Color32::from_gray(shade));
    let (tab_fill, outline) = frame_colors(dark);
    let outline = if focused { super::canvas::SELECT_COLOR } else { outline };
    painter.rect_stroke(srect, 6.0, Stroke::new(if focused { 2.0 } else { 1.0 }, outline));
    if detailed {
        painter.rect_filled(tab, 4.0, tab_fill);
        let text = if dark { Color32::from_gray(230) } else { Color32::from_gray(20) };
        let size = (11.0 * zoom).clamp(super::canvas::MIN_TEXT, 16.0);
        painter.with_clip_rect(tab).text(
            pos2(tab.min.x + 4.0, tab.center().y),
            egui::Align2::LEFT_CENTER,
            frame_label(frame),
            FontId::proportional(size),
            text,
        );
    }
}

/// `▾ model.layers.0 · LlamaDecoderLayer`
pub fn frame_label(frame: &Frame) -> String {
    format!("▾ {} · {}", frame.path, frame.class)
}
