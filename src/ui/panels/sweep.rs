//! The sweep panel: which dimension over which range, progress and cancel, then device time
//! against the dimension per mode, each kernel's share as stacked areas, guard flips as vertical
//! lines with their text, and a table of the points. Clicking a point (or its value in the table)
//! binds the dimension there, so the graph, shapes and heat overlay follow.

use egui::{Color32, RichText, Ui};
use egui_plot::{GridMark, Legend, Line, MarkerShape, Plot, PlotPoint, PlotPoints, Points, Polygon, Text, VLine};

use crate::decomp::Mode;
use crate::sweep::SweepPoint;
use crate::ui::command::Command;
use crate::ui::state::AppState;
use crate::ui::sweeping::{SweepCommand, SweepState, MODES};

fn cmd(c: SweepCommand) -> Command {
    Command::Sweep(c)
}

pub fn mode_color(m: Mode) -> Color32 {
    match m {
        Mode::Lite => Color32::from_rgb(240, 150, 40),
        _ => Color32::from_rgb(70, 150, 240),
    }
}

fn kernel_color(i: usize) -> Color32 {
    egui::ecolor::Hsva::new((i as f32 * 0.618_034).fract(), 0.55, 0.85, 1.0).into()
}

/// Plot coordinates of the dimension and of a time, as the log toggles ask.
#[cfg(test)]
mod tests {
    #[test]
    fn times_print_short_with_a_unit() {
        let t = super::time_text;
        assert_eq!([t(0.0), t(12.5), t(100.0), t(1000.0), t(12_340.0), t(1e6), t(13_208_000.0)], ["0 µs", "12.5 µs", "100 µs", "1 ms", "12.3 ms", "1 s", "13.2 s"]);
    }
}

#[derive(Clone, Copy)]
struct Axes {
    log_x: bool,
    log_y: bool,
}

impl Axes {
    fn x(self, v: i64) -> f64 {
        if self.log_x { (v as f64).max(0.5).log10() } else { v as f64 }
    }
    fn y(self, us: f64) -> f64 {
        if self.log_y { us.max(1e-3).log10() } else { us }
    }
    fn unx(self, x: f64) -> f64 {
        if self.log_x { 10f64.powf(x) } else { x }
    }
    fn uny(self, y: f64) -> f64 {
        if self.log_y { 10f64.powf(y) } else { y }
    }
}

/// A dimension's tick: whole values as integers (1, 10, 100), others with two decimals.
fn tick(v: f64) -> String {
    if v.abs() >= 10.0 || (v - v.round()).abs() < 1e-6 { format!("{v:.0}") } else { format!("{v:.2}") }
}

/// A time in µs with a unit that keeps it short: 12.5 µs, 3.2 ms, 14 s.
pub fn time_text(us: f64) -> String {
    // Three significant digits at most, no trailing zeros: 12.5 ms, 100 ms, 1.25 s.
    let short = |v: f64| {
        let t = if v.abs() >= 100.0 { format!("{v:.0}") } else if v.abs() >= 10.0 { format!("{v:.1}") } else { format!("{v:.2}") };
        if t.contains('.') { t.trim_end_matches('0').trim_end_matches('.').to_string() } else { t }
    };
    match us.abs() {
        a if a >= 1e6 => format!("{} s", short(us / 1e6)),
        a if a >= 1e3 => format!("{} ms", short(us / 1e3)),
        _ => format!("{} µs", short(us)),
    }
}

pub fn show(ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
    let mut open = state.sweep.open;
    egui::Window::new("Sweep").open(&mut open).default_size([980.0, 640.0]).resizable(true).show(ctx, |ui| {
        controls(ui, state, cmds);
        let s = &state.sweep;
        if let Some(e) = &s.error {
            ui.label(RichText::new(format!("sweep failed: {e}")).color(ui.visuals().error_fg_color));
        }
        if let Some(n) = &s.note {
            ui.label(RichText::new(n).weak());
        }
        if s.measured.is_empty() {
            if !s.running() {
                ui.label("pick a dimension and a range, then Sweep: each mode's plan is built once and timed at every point on the picked device");
            }
            return;
        }
        ui.separator();
        egui::ScrollArea::vertical().id_salt("sweep-scroll").show(ui, |ui| {
            time_plot(ui, s, cmds);
            stacked_plot(ui, s, cmds);
            table(ui, s, cmds);
        });
    });
    if open != state.sweep.open {
        cmds.push(cmd(SweepCommand::Show(open)));
    }
}

fn controls(ui: &mut Ui, state: &AppState, cmds: &mut Vec<Command>) {
    let s = &state.sweep;
    let Some(doc) = &state.doc else {
        ui.label("nothing loaded");
        return;
    };
    let picked = s.dim.clone().filter(|d| doc.model.symbol(d).is_some());
    let dim = picked.clone().or_else(|| doc.model.symbols.first().map(|x| x.name.clone()));
    if picked.is_none() {
        // The first symbol until the user picks one (or after another model opened), with its range.
        if let Some(d) = &dim {
            cmds.push(cmd(SweepCommand::SetDim(d.clone())));
        }
    }
    ui.horizontal_wrapped(|ui| {
        egui::ComboBox::from_label("dimension").selected_text(dim.clone().unwrap_or_else(|| "(none)".into())).show_ui(ui, |ui| {
            for sym in &doc.model.symbols {
                if ui.selectable_label(dim.as_deref() == Some(sym.name.as_str()), format!("{} ∈ {}", sym.name, sym.range)).clicked() {
                    cmds.push(cmd(SweepCommand::SetDim(sym.name.clone())));
                }
            }
        });
        let (mut lo, mut hi) = (s.lo, s.hi);
        let a = ui.add(egui::DragValue::new(&mut lo).prefix("from "));
        let b = ui.add(egui::DragValue::new(&mut hi).prefix("to "));
        if a.changed() || b.changed() {
            cmds.push(cmd(SweepCommand::SetRange(lo, hi)));
        }
        let mut n = s.points;
        if ui.add(egui::DragValue::new(&mut n).range(2..=256).suffix(" points")).changed() {
            cmds.push(cmd(SweepCommand::SetPoints(n)));
        }
        for m in MODES {
            let mut on = s.modes.contains(&m);
            if ui.checkbox(&mut on, m.name()).changed() {
                cmds.push(cmd(SweepCommand::SetMode(m, on)));
            }
        }
        ui.separator();
        if s.running() {
            if ui.button("■ Cancel sweep").clicked() {
                cmds.push(cmd(SweepCommand::Cancel));
            }
        } else {
            let ready = dim.is_some() && !s.modes.is_empty() && state.profile.device.is_some();
            let device = state.profile.device.map_or("no device yet".to_string(), |b| b.name().to_string());
            if ui.add_enabled(ready, egui::Button::new("▶ Sweep")).on_hover_text(format!("on {device} (the toolbar's device)")).clicked() {
                cmds.push(cmd(SweepCommand::Run));
            }
        }
        if !s.running() && ui.button("Load profiles…").on_hover_text("a folder of torch.profiler traces at several sizes, with the TORCH_TRACE log of each mode (scripts/gen_profile_sweep.py)").clicked() {
            cmds.push(cmd(SweepCommand::LoadProfiles));
        }
        if s.result.is_some() && ui.button("Export CSV…").clicked() {
            cmds.push(cmd(SweepCommand::ExportCsv));
        }
        // The window as last drawn: what the PNG shows.
        let window = ui.ctx().memory(|m| m.area_rect(egui::Id::new("Sweep")));
        if let (true, Some(rect)) = (s.result.is_some(), window) {
            if ui.button("Export PNG…").on_hover_text("this panel as an image").clicked() {
                cmds.push(cmd(SweepCommand::ExportPng(rect)));
            }
        }
        let mut lx = s.log_x;
        if ui.checkbox(&mut lx, "log x").changed() {
            cmds.push(cmd(SweepCommand::SetLogX(lx)));
        }
        let mut ly = s.log_y;
        if ui.checkbox(&mut ly, "log time").changed() {
            cmds.push(cmd(SweepCommand::SetLogY(ly)));
        }
    });
    if let Some((text, done, total)) = &s.progress {
        let frac = if *total > 0 { *done as f32 / *total as f32 } else { 0.0 };
        ui.add(egui::ProgressBar::new(frac).animate(true).text(format!("sweeping: {text} ({done} of {total})")));
    }
}

/// The measured values nearest `x` (plot coordinates), to bind on a click.
fn nearest(s: &SweepState, ax: Axes, x: f64) -> Option<i64> {
    s.measured.iter().map(|p| p.value).min_by(|a, b| (ax.x(*a) - x).abs().total_cmp(&(ax.x(*b) - x).abs()))
}

fn summary(s: &SweepState) -> String {
    let Some(d) = &s.swept else { return String::new() };
    let values = { let mut v: Vec<i64> = s.measured.iter().map(|p| p.value).collect(); v.dedup(); v.len() };
    let modes: Vec<&str> = MODES.iter().filter(|m| s.measured.iter().any(|p| p.mode == m.name())).map(|m| m.name()).collect();
    let recompiles = s.measured.iter().filter(|p| p.recompiled).count();
    let device = s.result.as_ref().map_or(String::new(), |r| format!(" on {} ({})", r.device, r.backend));
    format!(
        "sweep plot: {} over {}..{}{device}: {values} values × {} modes ({}), {} guard flips, {recompiles} recompiles",
        d.symbol, d.lo, d.hi, modes.len(), modes.join(", "), s.flips.len()
    )
}

fn time_plot(ui: &mut Ui, s: &SweepState, cmds: &mut Vec<Command>) {
    let Some(d) = &s.swept else { return };
    let ax = Axes { log_x: s.log_x, log_y: s.log_y };
    let label = summary(s);
    ui.label(RichText::new(&label).strong());
    let symbol = d.symbol.clone();
    let top = s.measured.iter().map(|p| ax.y(p.device_us)).fold(f64::MIN, f64::max);
    let plot = Plot::new("sweep-time")
        .height(260.0)
        // Top left: on log-log axes the small sizes sit low, and the flips' text runs along the top right.
        .legend(Legend::default().position(egui_plot::Corner::LeftTop))
        .x_axis_label(format!("{symbol}{}", if ax.log_x { " (log)" } else { "" }))
        .y_axis_label(format!("device time{}", if ax.log_y { " (log)" } else { "" }))
        .y_axis_min_width(56.0)
        .x_axis_formatter(move |m: GridMark, _| tick(ax.unx(m.value)))
        .y_axis_formatter(move |m: GridMark, _| time_text(ax.uny(m.value)))
        .label_formatter(move |name, p: &PlotPoint| {
            let head = if name.is_empty() { String::new() } else { format!("{name}\n") };
            format!("{head}{symbol} = {:.0}\n{}", ax.unx(p.x), time_text(ax.uny(p.y)))
        });
    let r = plot.show(ui, |pui| {
        for m in MODES {
            let pts: Vec<&SweepPoint> = s.measured.iter().filter(|p| p.mode == m.name()).collect();
            if pts.is_empty() {
                continue;
            }
            let xy: Vec<[f64; 2]> = pts.iter().map(|p| [ax.x(p.value), ax.y(p.device_us)]).collect();
            pui.line(Line::new(PlotPoints::from(xy.clone())).name(m.name()).color(mode_color(m)).width(2.0));
            pui.points(Points::new(PlotPoints::from(xy)).name(m.name()).color(mode_color(m)).radius(3.0));
            let rec: Vec<[f64; 2]> = pts.iter().filter(|p| p.recompiled).map(|p| [ax.x(p.value), ax.y(p.device_us)]).collect();
            if !rec.is_empty() {
                pui.points(Points::new(PlotPoints::from(rec)).name("recompiled").shape(MarkerShape::Diamond).radius(7.0).filled(false).color(mode_color(m)));
            }
        }
        for f in &s.flips {
            let x = ax.x(f.value);
            let text = format!("{} → {} at {}", f.guard, f.to, f.value);
            pui.vline(VLine::new(x).name(&text).color(Color32::from_rgb(220, 60, 60)).style(egui_plot::LineStyle::dashed_dense()));
            pui.text(Text::new(PlotPoint::new(x, top), RichText::new(&text).small()).anchor(egui::Align2::LEFT_TOP).color(Color32::from_rgb(220, 60, 60)));
        }
        pui.pointer_coordinate()
    });
    r.response.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Other, true, &label));
    if r.response.clicked() {
        if let Some(v) = r.inner.and_then(|p| nearest(s, ax, p.x)) {
            cmds.push(Command::BindSweepPoint(d.symbol.clone(), v));
        }
    }
}

/// Each kernel's median, stacked, for one mode: which kernels grow with the dimension.
fn stacked_plot(ui: &mut Ui, s: &SweepState, cmds: &mut Vec<Command>) {
    let Some(d) = &s.swept else { return };
    let ax = Axes { log_x: s.log_x, log_y: false };
    ui.horizontal(|ui| {
        ui.label(RichText::new("per-kernel device time, stacked:").strong());
        for m in MODES {
            if ui.radio(s.stacked == m, m.name()).clicked() {
                cmds.push(cmd(SweepCommand::SetStacked(m)));
            }
        }
    });
    let pts: Vec<&SweepPoint> = s.measured.iter().filter(|p| p.mode == s.stacked.name()).collect();
    let mut names: Vec<&str> = Vec::new();
    for p in &pts {
        for k in &p.kernels {
            if !names.contains(&k.name.as_str()) {
                names.push(&k.name);
            }
        }
    }
    // Cumulative tops per kernel, per point.
    let mut below = vec![0.0f64; pts.len()];
    let mut layers: Vec<(usize, Vec<f64>, Vec<f64>)> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let lo = below.clone();
        for (j, p) in pts.iter().enumerate() {
            below[j] += p.kernels.iter().find(|k| k.name == *name).map_or(0.0, |k| k.median_us);
        }
        layers.push((i, lo, below.clone()));
    }
    let symbol = d.symbol.clone();
    let plot = Plot::new("sweep-kernels")
        .height(240.0)
        // Top left: the stack grows to the right, where a legend would cover it.
        .legend(Legend::default().position(egui_plot::Corner::LeftTop))
        .x_axis_label(format!("{symbol}{}", if ax.log_x { " (log)" } else { "" }))
        .y_axis_label("device time")
        .y_axis_min_width(56.0)
        .x_axis_formatter(move |m: GridMark, _| tick(ax.unx(m.value)))
        .y_axis_formatter(move |m: GridMark, _| time_text(m.value))
        .label_formatter(move |name, p: &PlotPoint| format!("{name}\n{symbol} = {:.0}\n{} (stacked)", ax.unx(p.x), time_text(p.y)));
    let r = plot.show(ui, |pui| {
        for (i, lo, hi) in &layers {
            let color = kernel_color(*i);
            // One quad per segment: egui fills convex polygons only, and each of these is.
            for j in 1..pts.len() {
                let (x0, x1) = (ax.x(pts[j - 1].value), ax.x(pts[j].value));
                let quad = vec![[x0, lo[j - 1]], [x1, lo[j]], [x1, hi[j]], [x0, hi[j - 1]]];
                pui.polygon(Polygon::new(PlotPoints::from(quad)).name(names[*i]).fill_color(color.gamma_multiply(0.6)).stroke(egui::Stroke::new(1.0, color)));
            }
            let tops: Vec<[f64; 2]> = pts.iter().zip(hi).map(|(p, y)| [ax.x(p.value), *y]).collect();
            pui.line(Line::new(PlotPoints::from(tops)).name(names[*i]).color(color));
        }
        for f in &s.flips {
            pui.vline(VLine::new(ax.x(f.value)).color(Color32::from_rgb(220, 60, 60)).style(egui_plot::LineStyle::dashed_dense()));
        }
        pui.pointer_coordinate()
    });
    if r.response.clicked() {
        if let Some(v) = r.inner.and_then(|p| nearest(s, ax, p.x)) {
            cmds.push(Command::BindSweepPoint(d.symbol.clone(), v));
        }
    }
}

fn table(ui: &mut Ui, s: &SweepState, cmds: &mut Vec<Command>) {
    let Some(d) = &s.swept else { return };
    egui::CollapsingHeader::new(format!("{} measurements", s.measured.len())).default_open(false).show(ui, |ui| {
        egui::Grid::new("sweep-rows").striped(true).num_columns(8).show(ui, |ui| {
            for h in [d.symbol.as_str(), "mode", "device time", "bytes", "GB/s", "kernels", "runs", "plan"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for p in &s.measured {
                if ui.link(format!("{} = {}", d.symbol, p.value)).on_hover_text("bind the dimension here").clicked() {
                    cmds.push(Command::BindSweepPoint(d.symbol.clone(), p.value));
                }
                ui.label(RichText::new(p.mode).color(mode_color(Mode::parse(p.mode).unwrap_or(Mode::Full))));
                ui.label(time_text(p.device_us));
                ui.label(p.bytes.to_string());
                ui.label(format!("{:.3}", p.gb_per_s));
                ui.label(p.kernels_launched.to_string());
                ui.label(p.repetitions.to_string());
                let guards: Vec<String> = p.guards.iter().map(|g| format!("{} = {}", g.expr, g.value.map_or("?".into(), |v| v.to_string()))).collect();
                ui.label(if p.recompiled { "recompiled" } else { "reused" }).on_hover_text(if guards.is_empty() { "no guards".into() } else { guards.join("\n") });
                ui.end_row();
            }
        });
    });
}
