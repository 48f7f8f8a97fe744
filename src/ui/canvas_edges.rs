//! The canvas's edges: straight lines or curves by zoom, and far out a set of screen pixels
//! already drawn on, so a 12,000-node frame draws each pixel's edge once. Apart from `canvas`
//! because the pixel set and its hasher serve only the edges.

use std::collections::HashSet;

use egui::epaint::CubicBezierShape;
use egui::{pos2, Color32, Pos2, Rect, Stroke, Vec2};

use super::canvas::SELECT_COLOR;
use super::layout::Layout;

/// Screen pixels already drawn on, far out: a set of packed keys with a multiplicative hash (the
/// default SipHash costs more than the boxes it saves in a 12,000-node frame).
pub(super) type PixelSet = HashSet<u64, std::hash::BuildHasherDefault<PixelHasher>>;

#[derive(Default)]
pub(super) struct PixelHasher(u64);

impl std::hash::Hasher for PixelHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    /// splitmix64's finalizer: every input bit reaches the low bits hashbrown picks buckets by.
    fn write_u64(&mut self, n: u64) {
        let mut z = (self.0 ^ n).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = z ^ (z >> 31);
    }
}

/// Four screen coordinates, whole pixels, 16 bits each.
pub(super) fn pixel_key(a: f32, b: f32, c: f32, d: f32) -> u64 {
    let q = |v: f32| (v as i32 as u64) & 0xffff;
    q(a) | (q(b) << 16) | (q(c) << 32) | (q(d) << 48)
}

pub(super) fn draw_edges(
    painter: &egui::Painter,
    layout: &Layout,
    related: &HashSet<usize>,
    world_view: Rect,
    detailed: bool,
    dark: bool,
    to_screen: &dyn Fn(Pos2) -> Pos2,
) {
    let base = if dark { Color32::from_gray(110) } else { Color32::from_gray(150) };
    let mut drawn: PixelSet = PixelSet::default();
    for &(a, b) in &layout.edges {
        let (ra, rb) = (layout.items[a as usize].rect, layout.items[b as usize].rect);
        let p0 = pos2(ra.center().x, ra.max.y);
        let p1 = pos2(rb.center().x, rb.min.y);
        if !Rect::from_two_pos(p0, p1).intersects(world_view) {
            continue;
        }
        let hot = related.contains(&(a as usize)) || related.contains(&(b as usize));
        let stroke = Stroke::new(if hot { 2.0 } else { 1.0 }, if hot { SELECT_COLOR } else { base });
        let (s0, s1) = (to_screen(p0), to_screen(p1));
        // Zoomed far out, most edges are shorter than a pixel: nothing to see, only vertices.
        if (s1 - s0).length_sq() < 1.0 {
            continue;
        }
        // An edge that only passes through the view (a mask or weight read by every layer of a
        // deep model) is a straight line: hundreds of off-screen curves would cost more than the
        // rest of the frame.
        if detailed && (world_view.contains(p0) || world_view.contains(p1)) {
            let dy = ((s1.y - s0.y) * 0.5).max(20.0);
            let pts = [s0, s0 + Vec2::new(0.0, dy), s1 - Vec2::new(0.0, dy), s1];
            painter.add(CubicBezierShape::from_points_stroke(pts, false, Color32::TRANSPARENT, stroke));
        } else {
            // Far out, many edges join the same pixels: draw each once.
            if hot || drawn.insert(pixel_key(s0.x, s0.y, s1.x, s1.y)) {
                painter.line_segment([s0, s1], stroke);
            }
        }
    }
}
