//! The 12,000-node export, where lowering inlines a 4,000-node pointwise chain into one kernel
//! and recurses once per fused value: it overflowed the app worker's 2 MiB stack and the debug
//! CLI's 8 MiB main thread, aborting the process (not a panic: nothing could catch it). These
//! tests die the same way if that comes back.

mod common;

use std::path::PathBuf;

use common::ui::Harness;
use xpu_workbench::ui::Source;

#[test]
fn the_12k_node_export_opens_and_lowers_without_aborting() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/big12k.pt2");
    let h = Harness::new(Source::File(file));
    let labels = h.labels();
    assert!(!labels.iter().any(|l| l.contains("stack overflow")), "{labels:?}");
    assert!(!h.app.busy(), "the workers settled");
}

#[test]
fn the_cli_compiles_the_12k_node_export_in_full_mode() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/big12k.pt2");
    let emit = std::env::temp_dir().join(format!("xpu-workbench-big12k-{}", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xpu-workbench"))
        .args(["compile", "--mode", "full", "--emit"])
        .arg(&emit)
        .arg(&file)
        .output()
        .expect("the binary runs");
    let _ = std::fs::remove_dir_all(&emit);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{:?}\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("1 kernel (full mode)"), "{stdout}");
}
