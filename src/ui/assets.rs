//! What the app loads besides models, embedded at build time (`assets/README.md` says where each
//! file comes from and under which licence): the binary runs with no files beside it.

use egui::{FontData, FontDefinitions, FontFamily};

/// DejaVu Sans: egui's default fonts have no `→`, `∞` or `∈`, which shapes and ranges are written with.
pub const MATH_FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
/// The window icon (256×256 PNG); `assets/xpu-workbench.desktop` names the same picture.
pub const ICON_PNG: &[u8] = include_bytes!("../../assets/icons/xpu-workbench.png");

const MATH_FONT_NAME: &str = "DejaVuSans";

/// egui's default fonts with DejaVu Sans as the last fallback of both families, so it supplies
/// only the glyphs the defaults lack and the UI keeps its look.
pub fn fonts() -> FontDefinitions {
    let mut fonts = FontDefinitions::default();
    fonts.font_data.insert(MATH_FONT_NAME.to_owned(), FontData::from_static(MATH_FONT));
    for family in [FontFamily::Proportional, FontFamily::Monospace] {
        fonts.families.entry(family).or_default().push(MATH_FONT_NAME.to_owned());
    }
    fonts
}

/// The window icon, or `None` if the embedded PNG does not decode (the window opens without one).
pub fn icon() -> Option<egui::IconData> {
    eframe::icon_data::from_png_bytes(ICON_PNG).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_icon_decodes_and_the_font_has_the_glyphs_the_ui_writes() {
        let icon = icon().expect("icon decodes");
        assert_eq!((icon.width, icon.height), (256, 256));
        let ctx = egui::Context::default();
        ctx.set_fonts(fonts());
        let _ = ctx.run(Default::default(), |_| {});
        for c in ['→', '∞', '∈', '≤', '×'] {
            let has = ctx.fonts(|f| f.has_glyph(&egui::FontId::proportional(12.0), c) && f.has_glyph(&egui::FontId::monospace(12.0), c));
            assert!(has, "no glyph for {c}");
        }
    }
}
