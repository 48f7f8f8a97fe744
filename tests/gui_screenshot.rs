//! The app as a person starts it: under a virtual X server, on the embedded sample, it must draw
//! a window with a graph in it. Skips (saying why) only where Xvfb is missing and
//! XPU_WORKBENCH_REQUIRE_GUI is unset; scripts/install_gui_test_deps.sh installs what it needs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn have(tool: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().is_ok_and(|o| o.status.success())
}

/// A binary PPM (P6, maxval 255): width, height, RGB bytes.
fn read_ppm(path: &Path) -> (usize, usize, Vec<u8>) {
    let bytes = std::fs::read(path).expect("read the capture");
    let mut fields = Vec::new();
    let mut i = 0;
    while fields.len() < 4 {
        while bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if bytes[i] == b'#' {
            while bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        while !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        fields.push(String::from_utf8_lossy(&bytes[start..i]).into_owned());
    }
    assert_eq!(fields[0], "P6", "not a binary PPM");
    assert_eq!(fields[3], "255");
    let (w, h) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    (w, h, bytes[i + 1..].to_vec())
}

/// Luminance variance of a region.
fn variance(w: usize, rgb: &[u8], x0: usize, y0: usize, x1: usize, y1: usize) -> f64 {
    let mut sum = 0.0;
    let mut sq = 0.0;
    let mut n = 0.0;
    for y in y0..y1 {
        for x in x0..x1 {
            let p = &rgb[(y * w + x) * 3..(y * w + x) * 3 + 3];
            let l = 0.299 * p[0] as f64 + 0.587 * p[1] as f64 + 0.114 * p[2] as f64;
            sum += l;
            sq += l * l;
            n += 1.0;
        }
    }
    sq / n - (sum / n).powi(2)
}

#[test]
fn the_app_starts_on_the_embedded_sample_and_draws_a_graph() {
    if !(have("xvfb-run") && have("import") && have("convert")) {
        if std::env::var_os("XPU_WORKBENCH_REQUIRE_GUI").is_some() {
            panic!("XPU_WORKBENCH_REQUIRE_GUI is set but xvfb-run or ImageMagick is missing: run scripts/install_gui_test_deps.sh");
        }
        eprintln!("skipped: xvfb-run or ImageMagick (import, convert) not installed; scripts/install_gui_test_deps.sh installs them");
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gui-screenshot");
    let status = Command::new("bash")
        .arg(root.join("scripts/gui_screenshot.sh"))
        .arg(env!("CARGO_BIN_EXE_xpu-workbench"))
        .arg(&out)
        .status()
        .expect("run scripts/gui_screenshot.sh");
    assert!(status.success(), "the screenshot script failed");
    let (w, h, rgb) = read_ppm(&out.with_extension("ppm"));
    assert_eq!((w, h), (1600, 1000));
    let whole = variance(w, &rgb, 0, 0, w, h);
    assert!(whole > 100.0, "the screen is blank (luminance variance {whole:.1})");
    // The graph panes fill the middle of the window, between the side panels and above the
    // neighbourhood panel: there must be boxes and edges, not just background.
    let middle = variance(w, &rgb, 320, 80, 1220, 680);
    assert!(middle > 20.0, "no graph drawn in the middle of the window (variance {middle:.1})");
    println!("screenshot: {} (variance {whole:.0}, graph area {middle:.0})", out.with_extension("png").display());
}
