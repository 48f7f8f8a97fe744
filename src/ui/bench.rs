//! Headless measurements behind docs/PERFORMANCE.md ("GUI"): one frame of a graph view is
//! `Context::run` (layout and painting) plus `tessellate` (shapes to triangles), on a 1600×1000
//! screen, without a GPU. The same frames drive both renderers so their numbers compare.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui::{pos2, vec2, Rect};

use super::canvas;
use super::hierarchy::{Hierarchy, OPEN_BOXES};
use super::layout::layout;
use super::neighbourhood::{build_editor, NodeData, NoTemplates, UserState};
use super::state::{AppState, Camera, Doc, NodeClass, Source, View};
use crate::decomp::{decompose, Marks};
use crate::ir::{Graph, Model, NodeId};

pub const SCREEN: egui::Vec2 = vec2(1600.0, 1000.0);

/// Which renderer draws the frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renderer {
    /// egui_node_graph2 holding every node.
    NodeGraph,
    /// Our canvas, zoomed out to fit the whole graph (every box visible, no text).
    CanvasFit,
    /// Our canvas at zoom 1 (readable text, culled to the screen).
    CanvasReadable,
    /// Our canvas as a model opens: folded to the level that fits one screen, the first view
    /// (fit width at the top, readable), the minimap when the graph is larger than the view.
    CanvasFirstView,
    /// Every module folded (one box for the largest), at the first view: the most members a
    /// folded box summarizes per frame.
    CanvasFoldAll,
}

impl Renderer {
    pub fn name(self) -> &'static str {
        match self {
            Renderer::NodeGraph => "egui_node_graph2",
            Renderer::CanvasFit => "canvas (fit: all visible)",
            Renderer::CanvasReadable => "canvas (zoom 1, culled)",
            Renderer::CanvasFirstView => "canvas (first view, folded as opened)",
            Renderer::CanvasFoldAll => "canvas (first view, all folded)",
        }
    }
}

/// The first `n` nodes of `graph` (a prefix is still a valid graph: values are defined before use).
pub fn prefix(graph: &Graph, n: usize) -> Graph {
    let mut g = graph.clone();
    g.nodes.truncate(n);
    g
}

fn raw_input() -> egui::RawInput {
    egui::RawInput { screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), SCREEN)), ..Default::default() }
}

/// Frame times, and the triangle vertices of the last frame (proof that something was drawn).
pub struct Frames {
    pub times: Vec<Duration>,
    pub vertices: usize,
    /// Boxes inside the visible world rectangle (canvas only; the node graph holds every node).
    pub visible: usize,
    pub zoom: f32,
    /// Building the state drawn: hierarchy, layout and every shape (worker jobs in the app, not frames).
    pub layout: Duration,
}

fn time_frames(ctx: &egui::Context, frames: usize, mut draw: impl FnMut(&egui::Context)) -> Frames {
    let mut times = Vec::with_capacity(frames);
    let mut vertices = 0;
    // Two warm-up frames: fonts and caches are built on the first.
    for k in 0..frames + 2 {
        let t0 = Instant::now();
        let out = ctx.run(raw_input(), |ctx| draw(ctx));
        let prims = ctx.tessellate(out.shapes, out.pixels_per_point);
        let elapsed = t0.elapsed();
        vertices = prims
            .iter()
            .map(|p| match &p.primitive {
                egui::epaint::Primitive::Mesh(m) => m.vertices.len(),
                egui::epaint::Primitive::Callback(_) => 0,
            })
            .sum();
        if k >= 2 {
            times.push(elapsed);
        }
    }
    Frames { times, vertices, visible: 0, zoom: 1.0, layout: Duration::ZERO }
}

/// An app state showing `model`'s first graph in the original view with the modules in
/// `folded` folded, shapes evaluated at the hints.
pub fn state_for(model: Model, source: Source, folded: &BTreeSet<String>) -> AppState {
    let graph = model.graphs[0].clone();
    let mut s = AppState { collapsed: folded.clone(), ..AppState::default() };
    let l = layout(&graph, folded);
    s.doc = Some(Doc { source, model: Arc::new(model), graph: 0 });
    let pane = s.pane_mut(View::Original);
    pane.classes = vec![NodeClass::Plain; graph.nodes.len()];
    pane.graph = Some(Arc::new(graph));
    pane.layout = Some(Arc::new(l));
    s.rebind();
    s
}

/// Frame times of `renderer` drawing the first `n` nodes of `model`'s first graph.
pub fn frame_times(model: &Model, n: usize, renderer: Renderer, frames: usize) -> Frames {
    let mut m = model.clone();
    m.graphs[0] = prefix(&model.graphs[0], n);
    let hierarchy = Hierarchy::of(&m.graphs[0]);
    let folded = match renderer {
        Renderer::CanvasFirstView => hierarchy.default_folded(OPEN_BOXES),
        Renderer::CanvasFoldAll => hierarchy.all_paths().map(str::to_string).collect(),
        _ => BTreeSet::new(),
    };
    let t0 = Instant::now();
    let mut state = state_for(m, Source::File(model.source.clone().into()), &folded);
    let layout_time = t0.elapsed();
    let ctx = egui::Context::default();
    match renderer {
        Renderer::NodeGraph => {
            let graph = state.pane(View::Original).graph.clone().expect("graph");
            let l = state.pane(View::Original).layout.clone().expect("layout");
            let nodes: Vec<(NodeId, egui::Pos2)> =
                graph.node_ids().map(|id| (id, l.items[l.item_of(id).expect("item")].rect.min)).collect();
            let describe = |id: NodeId| NodeData { node: id, class: NodeClass::Plain, shape: String::new(), concrete: String::new() };
            let (mut ed, _) = build_editor(&graph, &nodes, &describe);
            let mut f = time_frames(&ctx, frames, |ctx| {
                egui::CentralPanel::default().show(ctx, |ui| {
                    let _ = ed.draw_graph_editor(ui, NoTemplates, &mut UserState { dark: true }, Vec::new());
                });
            });
            f.visible = nodes.len();
            f
        }
        _ => {
            let bounds = state.pane(View::Original).layout.as_ref().expect("layout").bounds;
            let screen = Rect::from_min_size(pos2(0.0, 0.0), SCREEN);
            state.pane_mut(View::Original).camera = match renderer {
                Renderer::CanvasFit => canvas::fit(bounds, screen),
                Renderer::CanvasFirstView | Renderer::CanvasFoldAll => canvas::first_view(bounds, screen),
                _ => Camera { center: bounds.center(), zoom: 1.0, fit_pending: None },
            };
            let mut f = time_frames(&ctx, frames, |ctx| {
                egui::CentralPanel::default().show(ctx, |ui| {
                    let mut cmds = Vec::new();
                    canvas::show(ui, &state, View::Original, &mut cmds);
                });
            });
            let cam = state.pane(View::Original).camera;
            let world = Rect::from_center_size(cam.center, SCREEN / cam.zoom);
            let l = state.pane(View::Original).layout.clone().expect("layout");
            f.visible = l.items.iter().filter(|i| i.rect.intersects(world)).count();
            f.zoom = cam.zoom;
            f.layout = layout_time;
            f
        }
    }
}

/// What a slider move costs: re-resolving the bindings and re-evaluating every shape and guard.
pub struct SliderTimes {
    pub symbol: String,
    /// Values per view: (view, nodes, tensors).
    pub views: Vec<(View, usize, usize)>,
    pub original_only: Vec<Duration>,
    pub all_views: Vec<Duration>,
}

/// Moves the first symbol's slider back and forth `repeat` times, first with only the original
/// graph loaded, then with the lite and full decompositions as well.
pub fn slider(model: &Model, repeat: usize) -> Result<SliderTimes, String> {
    let sym = model.symbols.first().ok_or("the model has no dynamic dimension")?.clone();
    let lo = super::state::clamp_i64(sym.range.min);
    let hi = sym.range.max.map_or(lo.saturating_add(64), super::state::clamp_i64).min(lo.saturating_add(64));
    let mut state = state_for(model.clone(), Source::File(model.source.clone().into()), &BTreeSet::new());
    let run = |state: &mut AppState| {
        let mut times = Vec::with_capacity(repeat);
        for k in 0..repeat {
            state.explicit.insert(sym.name.clone(), if k % 2 == 0 { hi } else { lo });
            let t0 = Instant::now();
            state.rebind();
            times.push(t0.elapsed());
        }
        times
    };
    let original_only = run(&mut state);
    let graph = model.graphs[0].clone();
    for view in [View::Lite, View::Full] {
        let d = decompose(&graph, view.mode(), &Marks::default()).map_err(|e| e.to_string())?;
        let pane = state.pane_mut(view);
        pane.graph = Some(Arc::new(d.graph.clone()));
        pane.decomp = Some(Arc::new(d));
    }
    let all_views = run(&mut state);
    let views = View::ALL
        .iter()
        .map(|v| {
            let p = state.pane(*v);
            let tensors = p.shapes.iter().flatten().count();
            (*v, p.graph.as_ref().map_or(0, |g| g.nodes.len()), tensors)
        })
        .collect();
    Ok(SliderTimes { symbol: sym.name, views, original_only, all_views })
}
