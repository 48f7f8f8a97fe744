//! Dynamic dimensions: a slider and a text box per symbol, and every guard with its value at the
//! traced hints and now (or why it cannot be evaluated). Sliders stop at a sensible bound (ranges
//! such as `[2, ∞)` are common); the text box takes any value in the full range.

use egui::{Color32, RichText};

use crate::ui::command::Command;
use crate::ui::state::{clamp_i64, AppState};

/// The slider's upper end: ranges can be huge, a slider over them useless.
pub const SLIDER_MAX: i64 = 4096;

pub fn show(ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
    egui::SidePanel::left("dims").default_width(270.0).resizable(true).show(ctx, |ui| {
        ui.heading("Dynamic dimensions");
        let Some(doc) = &state.doc else {
            ui.label("nothing loaded");
            return;
        };
        if doc.model.symbols.is_empty() {
            ui.label("this graph has static shapes only");
        }
        egui::ScrollArea::vertical().show(ui, |ui| {
            for sym in &doc.model.symbols {
                let value = state.bindings.get(&sym.name).unwrap_or(0);
                let lo = clamp_i64(sym.range.min);
                let hi = sym.range.max.map_or(i64::MAX, clamp_i64);
                let slider_hi = soft_max(lo, hi, sym.hint, value);
                let recompile = state.guards.iter().any(|g| g.flipped() && g.symbols.contains(&sym.name));
                ui.separator();
                ui.horizontal(|ui| {
                    ui.label(RichText::new(&sym.name).strong().monospace());
                    ui.label(RichText::new(format!("∈ {}", range_text(&sym.range))).weak());
                    if let Some(h) = sym.hint {
                        ui.label(RichText::new(format!("hint {h}")).weak());
                    }
                });
                let mut v = value;
                let slider = egui::Slider::new(&mut v, lo..=slider_hi).clamping(egui::SliderClamping::Always).text(sym.name.as_str());
                if ui.add(slider).changed() && v != value {
                    cmds.push(Command::SetBinding(sym.name.clone(), v));
                }
                let id = ui.id().with(("dim-text", &sym.name));
                let mut text: String = ui.data(|d| d.get_temp::<String>(id)).unwrap_or_else(|| value.to_string());
                let edit = ui.add(egui::TextEdit::singleline(&mut text).desired_width(140.0).hint_text("value"));
                if slider_hi < hi {
                    ui.label(RichText::new(format!("slider to {slider_hi}; type any value in {}", range_text(&sym.range))).weak().small());
                }
                if edit.has_focus() || edit.changed() {
                    ui.data_mut(|d| d.insert_temp(id, text.clone()));
                } else {
                    ui.data_mut(|d| d.remove::<String>(id));
                }
                match text.trim().parse::<i64>() {
                    Ok(n) if n == value => {}
                    Ok(n) if sym.range.contains(n) => {
                        if edit.changed() {
                            cmds.push(Command::SetBinding(sym.name.clone(), n));
                        }
                    }
                    Ok(_) => {
                        ui.colored_label(Color32::from_rgb(220, 80, 80), format!("outside {}", range_text(&sym.range)));
                    }
                    Err(_) if edit.has_focus() => {
                        ui.colored_label(Color32::from_rgb(220, 80, 80), "not an integer");
                    }
                    Err(_) => {}
                }
                if recompile {
                    ui.colored_label(Color32::from_rgb(230, 90, 60), format!("{} = {value}: needs recompile", sym.name));
                }
            }
            if !state.explicit.is_empty() && ui.button("Reset to hints").clicked() {
                cmds.push(Command::ResetBindings);
            }
            ui.separator();
            ui.heading(format!("Guards ({})", state.guards.len()));
            if state.guards.is_empty() {
                ui.label(RichText::new("none recorded").weak());
            }
            for g in &state.guards {
                let show = |r: &Result<bool, String>| match r {
                    Ok(b) => b.to_string(),
                    Err(e) => format!("error: {e}"),
                };
                let line = match (&g.at_hint, &g.now) {
                    (Err(a), Err(b)) if a == b => format!("{}  ({a})", g.text),
                    _ => format!("{}  (hint: {}, now: {})", g.text, show(&g.at_hint), show(&g.now)),
                };
                if g.flipped() {
                    ui.label(RichText::new(format!("⚠ {line} — flipped: needs recompile")).color(Color32::from_rgb(230, 90, 60)));
                } else {
                    ui.label(RichText::new(line).monospace().small());
                }
            }
        });
    });
}

/// `[2, 64]`, or `[2, ∞)`.
fn range_text(r: &crate::sym::Range) -> String {
    match r.max {
        Some(m) => format!("[{}, {m}]", r.min),
        None => format!("[{}, ∞)", r.min),
    }
}

/// The slider's upper end. A range up to [`SLIDER_MAX`] wide is the slider's whole range; a wider
/// or unbounded one (`[2, ∞)`) gets a soft end: four times the traced hint, at least 64 above the
/// minimum, and twice the current value when that is larger, so the slider follows a typed value.
pub fn soft_max(lo: i64, hi: i64, hint: Option<i64>, value: i64) -> i64 {
    if hi.saturating_sub(lo) <= SLIDER_MAX {
        return hi.max(lo);
    }
    let want = lo.saturating_add(64).max(hint.unwrap_or(lo).saturating_mul(4)).max(value.saturating_mul(2));
    let pow2 = if want <= 1 { 1 } else { 1i64.checked_shl(64 - (want - 1).leading_zeros()).unwrap_or(i64::MAX) };
    pow2.min(hi).max(lo)
}
