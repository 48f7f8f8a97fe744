//! The profile's timeline: one row per device queue, one for the plan's steps that ran on the
//! host (syncs, host fallbacks: host time), then one per CPU thread and scope depth.
//! Scroll zooms around the pointer, drag pans, double-click fits the repetitions; hovering a span shows its name,
//! duration and, for kernels, the tensor shapes it saw.

use egui::{pos2, vec2, Align2, Color32, FontId, Rect, Sense, Stroke, Ui, WidgetInfo, WidgetType};

use crate::profile::Trace;
use crate::ui::profiling::micros;

const ROW: f32 = 18.0;
const LABEL_W: f32 = 150.0;
/// CPU scopes deeper than this are left out: the rows would outnumber the screen.
const MAX_DEPTH: u32 = 3;

/// The visible window, in ns since the trace's origin; kept in egui's memory per result.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Window {
    generation: u64,
    t0: f64,
    t1: f64,
}

struct Span<'a> {
    row: usize,
    start: f64,
    dur: f64,
    name: &'a str,
    detail: String,
}

fn color_of(name: &str) -> Color32 {
    let h = name.bytes().fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
    egui::ecolor::Hsva::new((h % 360) as f32 / 360.0, 0.55, 0.75, 1.0).into()
}

pub fn show(ui: &mut Ui, trace: &Trace, generation: u64) {
    let origin = trace.origin_ns();
    let mut rows: Vec<String> = trace.queues.iter().map(|q| format!("device: {q}")).collect();
    let mut spans: Vec<Span<'_>> = Vec::new();
    for k in &trace.kernels {
        let mut detail = format!("kernel {}\n{}", k.launch.kernel, micros(k.dur_ns));
        for (param, shape) in &k.launch.shapes {
            detail.push_str(&format!("\n{param}: {shape:?}"));
        }
        spans.push(Span { row: k.queue as usize, start: (k.start_ns - origin) as f64, dur: k.dur_ns as f64, name: &k.launch.node, detail });
    }
    let labels: Vec<String> = trace.host.iter().map(|h| h.label()).collect();
    if !trace.host.is_empty() {
        let row = rows.len();
        rows.push("host steps (host time)".into());
        for (h, label) in trace.host.iter().zip(&labels) {
            let detail = format!("{}
{} on the host, not on the device", h.kind, micros(h.dur_ns));
            spans.push(Span { row, start: (h.start_ns - origin) as f64, dur: h.dur_ns as f64, name: label, detail });
        }
    }
    let mut cpu_rows: Vec<(String, u32)> = Vec::new();
    for s in trace.cpu.iter().filter(|s| s.depth <= MAX_DEPTH) {
        let key = (s.thread.clone(), s.depth);
        let row = match cpu_rows.iter().position(|r| *r == key) {
            Some(i) => i,
            None => {
                cpu_rows.push(key);
                cpu_rows.len() - 1
            }
        };
        let detail = format!("{} {}\n{}\n{}", s.name, s.data, micros(s.dur_ns.max(0) as u64), s.location);
        spans.push(Span { row: rows.len() + row, start: (s.start_ns - origin) as f64, dur: s.dur_ns.max(0) as f64, name: &s.name, detail });
    }
    rows.extend(cpu_rows.iter().map(|(t, d)| format!("cpu {t} · {d}")));
    let end = spans.iter().map(|s| s.start + s.dur).fold(1.0f64, f64::max);

    // The repetitions, not the lowering and code generation before them, are what a user came
    // to see: the first view fits them.
    let reps = match (trace.frames.first(), trace.frames.last()) {
        (Some(a), Some(b)) => Window { generation, t0: (a.start_ns - origin) as f64, t1: (b.end_ns - origin) as f64 },
        _ => Window { generation, t0: 0.0, t1: end },
    };
    let id = ui.id().with("timeline-window");
    let mut win = ui.data(|d| d.get_temp::<Window>(id)).filter(|w| w.generation == generation).unwrap_or(reps);
    ui.horizontal(|ui| {
        ui.label(format!("timeline · {} kernels · {} CPU scopes", trace.kernels.len(), trace.cpu.len()));
        if ui.small_button("fit to width").on_hover_text("the whole capture, lowering included").clicked() {
            win = Window { generation, t0: 0.0, t1: end };
        }
        if ui.small_button("repetitions").on_hover_text("the profiled runs only").clicked() {
            win = reps;
        }
        ui.label(egui::RichText::new(format!("{:.3} – {:.3} ms", win.t0 / 1e6, win.t1 / 1e6)).weak());
    });
    let height = (rows.len() as f32 * ROW).max(ROW);
    egui::ScrollArea::vertical().id_salt("timeline-scroll").show(ui, |ui| {
        let (rect, resp) = ui.allocate_exact_size(vec2(ui.available_width(), height), Sense::click_and_drag());
        let plot = Rect::from_min_max(pos2(rect.left() + LABEL_W, rect.top()), rect.max);
        let span_w = (win.t1 - win.t0).max(1.0);
        if resp.dragged() {
            let dt = -resp.drag_delta().x as f64 / plot.width() as f64 * span_w;
            win.t0 += dt;
            win.t1 += dt;
        }
        if resp.double_clicked() {
            win = reps;
        }
        if let Some(p) = resp.hover_pos() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y + i.smooth_scroll_delta.x);
            let factor = (-(scroll as f64) * 0.003).exp() / ui.input(|i| i.zoom_delta()) as f64;
            if (factor - 1.0).abs() > 1e-4 && p.x >= plot.left() {
                let at = win.t0 + (p.x - plot.left()) as f64 / plot.width() as f64 * span_w;
                win.t0 = at - (at - win.t0) * factor;
                win.t1 = at + (win.t1 - at) * factor;
            }
        }
        ui.data_mut(|d| d.insert_temp(id, win));
        let span_w = (win.t1 - win.t0).max(1.0);
        let x_of = |t: f64| plot.left() + ((t - win.t0) / span_w * plot.width() as f64) as f32;

        let painter = ui.painter_at(rect);
        let text = ui.visuals().text_color();
        for (i, r) in rows.iter().enumerate() {
            let y = rect.top() + i as f32 * ROW;
            if i % 2 == 0 {
                painter.rect_filled(Rect::from_min_size(pos2(rect.left(), y), vec2(rect.width(), ROW)), 0.0, ui.visuals().faint_bg_color);
            }
            painter.with_clip_rect(Rect::from_min_size(pos2(rect.left(), y), vec2(LABEL_W - 4.0, ROW))).text(
                pos2(rect.left() + 2.0, y + ROW / 2.0),
                Align2::LEFT_CENTER,
                r,
                FontId::proportional(11.0),
                text,
            );
        }
        let plot_painter = painter.with_clip_rect(plot);
        let mut hovered: Option<&Span<'_>> = None;
        let pointer = resp.hover_pos();
        for s in &spans {
            let (x0, x1) = (x_of(s.start), x_of(s.start + s.dur));
            if x1 < plot.left() || x0 > plot.right() {
                continue;
            }
            let y = rect.top() + s.row as f32 * ROW;
            let r = Rect::from_min_max(pos2(x0, y + 2.0), pos2(x1.max(x0 + 1.0), y + ROW - 2.0));
            plot_painter.rect_filled(r, 2.0, color_of(s.name));
            if r.width() > 30.0 {
                plot_painter.with_clip_rect(r.intersect(plot)).text(
                    r.left_center() + vec2(3.0, 0.0),
                    Align2::LEFT_CENTER,
                    s.name,
                    FontId::proportional(10.0),
                    Color32::BLACK,
                );
            }
            if pointer.is_some_and(|p| r.expand2(vec2(1.0, 0.0)).contains(p)) {
                hovered = Some(s);
                plot_painter.rect_stroke(r, 2.0, Stroke::new(1.5, ui.visuals().strong_text_color()));
            }
        }
        if let Some(s) = hovered {
            let text = format!("{}\n{}", s.name, s.detail);
            egui::show_tooltip_at_pointer(ui.ctx(), ui.layer_id(), id.with("tip"), |ui| ui.label(text));
        }
        let label = format!("timeline: {} rows, {} spans", rows.len(), spans.len());
        resp.widget_info(|| WidgetInfo::labeled(WidgetType::Other, true, label.clone()));
    });
}
