//! The app on the 12,000-node export: opening it starts lowering on a worker, whose recursion
//! along fused chains overflowed a spawned thread's default 2 MiB stack and aborted the whole app
//! (the process, not a panic: nothing could catch it). This test dies the same way if it returns.

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
