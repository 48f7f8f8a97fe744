//! Opening a real compiled run's TORCH_TRACE log (Llama, torch 2.11, CUDA, default mode) in the
//! app, driven headlessly through AccessKit: it opens on torch's own stages of the compile that
//! ran, each pane placed with its left edge in view, check-lite's verdict on the log above them
//! and first in the problems, and how each stage differs from the one before; our own
//! re-decomposition of the dynamo graph (and its "does not lower" problems) waits to be asked for.

mod common;

use common::sample;
use common::ui::Harness;
use xpu_workbench::decomp::lite_trace;
use xpu_workbench::import::trace;
use xpu_workbench::ui::layout::ItemKind;
use xpu_workbench::ui::{Source, View};

const LOG: &str = "inductor/cuda211_llama_default.log.gz";

/// check-lite reads the traces the user's own torch made (`check-lite --python` caches them):
/// none here, whoever runs the tests. Every test sets the same empty folder before it reads a log.
fn without_user_traces() {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| common::ops_dir("ui-log-open"));
    std::env::set_var("XPU_WORKBENCH_OPS_DIR", dir);
}

/// The start of the AccessKit label the canvas gives a box it draws.
fn box_label(h: &Harness, view: View, kind: &ItemKind) -> String {
    let g = h.app.state.pane(view).graph.clone().expect("a graph");
    match kind {
        ItemKind::Input(v) => format!("{} node: input · {} ", view.name(), g.value(*v).name),
        ItemKind::Node(n) => format!("{} node: {} · {} ", view.name(), xpu_workbench::ui::state::short_op(&g.node(*n).target), g.node(*n).name),
        ItemKind::Group { path, .. } => format!("{} module: ▸ {path} ", view.name()),
    }
}

#[test]
fn a_log_opens_on_torchs_stages_with_check_lites_verdict_and_the_stage_diffs() {
    without_user_traces();
    let path = sample(LOG);
    let mut h = Harness::new(Source::File(path.clone()));
    let s = &h.app.state;

    // The opening view: torch's stages of the compile that ran (0/0 was restarted: no post-grad
    // graph), dynamo focused, each stage pane shown.
    let set = s.stages.clone().expect("a log opens on its stages");
    assert_eq!(set.compile_id, "0/0_1");
    assert_eq!(s.focus, View::Dynamo);
    assert_eq!(s.original().unwrap().name, "0/0_1:dynamo_output_graph", "the original is the shown compile's dynamo graph");
    for v in View::STAGES {
        h.expect(|l| l == format!("{} graph of compile 0/0_1", v.name()), "a stage pane's header");
    }

    // Our re-decomposition is not computed, so nothing of it is listed as a problem.
    assert!(!s.redecompose);
    for v in [View::Lite, View::Full] {
        assert!(s.pane(v).decomp.is_none() && s.pane(v).lower_error.is_none(), "{v:?} was decomposed on open");
    }
    for noise in ["does not lower", "no decomposition rule", "lite decomposed `", "the lite target expands", "lite on "] {
        assert!(h.find(|l| l.contains(noise)).is_none(), "a problem of our re-decomposition on open: {noise}");
    }

    // check-lite's verdict on the whole log, word for word what `check-lite LOG` prints, above the
    // stages and in the problems, with each violation linked to its dynamo node.
    let log = trace::load_log(&path).unwrap();
    let check = lite_trace::check_log(&log);
    assert!(check.violations().count() > 0, "a default-mode log: Inductor's table decomposed unmarked ops");
    let verdict = format!("check-lite: {}", check.summary());
    let shown = h.labels().into_iter().filter(|l| *l == verdict).count();
    assert_eq!(shown, 2, "the verdict above the stages and as the first problem: {verdict}");
    let v = h.app.state.log_verdict.clone().expect("a verdict");
    assert_eq!(v.violations, check.violations().count());
    let silu = check.violations().find(|f| f.compile_id == "0/0_1" && f.node == "silu").expect("silu decomposed in 0/0_1");
    h.expect(|l| l == format!("check-lite: 0/0_1: {silu}"), "the violation's problem line");
    h.click_label(|l| l == "problem: go to silu", "the violation's link");
    let sel = h.app.state.selection.expect("the link selects");
    assert_eq!(sel.view, View::Dynamo);
    assert_eq!(sel.node, silu.node_id);

    // Each stage pair's summary is the graph diff's, as `diff LOG LOG --stage A,B` pairs them.
    for (pick, from, to) in [("dynamo,aot", View::Dynamo, View::Aot), ("aot,post_grad", View::Aot, View::PostGrad)] {
        let d = xpu_workbench::diff::diff_files(&path, &path, Some(pick)).unwrap();
        let pair = d.pairs.iter().find(|p| p.a.starts_with("0/0_1 ")).expect("the compile's pair");
        let c = pair.diff.counts;
        let (a, b) = (from.name(), to.name());
        let want = format!("stage diff {a} → {b}: {} same · {} changed · {} only in {a} · {} only in {b}", c.same, c.changed, c.only_a, c.only_b);
        h.expect(|l| l == want, "the stage pair's diff summary");
    }
}

/// Every stage pane opens placed on its graph with nothing cut off on the left (the first
/// view cut the dynamo graph off there): boxes are drawn, and, read off a box drawn whole, the
/// pane's left edge falls at or left of every box of the rows it shows.
#[test]
fn every_stage_pane_opens_with_the_left_of_its_rows_in_view() {
    use xpu_workbench::ui::layout::Item;
    without_user_traces();
    let h = Harness::new(Source::File(sample(LOG)));
    for v in View::STAGES {
        let p = h.app.state.pane(v);
        let layout = p.layout.clone().unwrap_or_else(|| panic!("{v:?} laid out"));
        let zoom = p.camera.zoom;
        assert!(p.camera.fit_pending.is_none(), "{v:?}: the first view was placed");
        let (_, header) = h.expect(|l| l == format!("{} graph of compile 0/0_1", v.name()), "the pane header");
        let pane_left = header.bounds().expect("header bounds").x0 as f32;
        // Where each drawn box is on screen, by its AccessKit label.
        let drawn: Vec<(&Item, egui::accesskit::Rect)> = layout
            .items
            .iter()
            .filter_map(|i| {
                let label = box_label(&h, v, &i.kind);
                h.find(|l| l.starts_with(&label)).and_then(|(_, n)| n.bounds()).map(|b| (i, b))
            })
            .collect();
        let whole = |i: &Item, b: &egui::accesskit::Rect| ((b.x1 - b.x0) as f32 - i.rect.width() * zoom).abs() < 1.5;
        let (item, b) = drawn.iter().find(|(i, b)| whole(i, b)).unwrap_or_else(|| panic!("{v:?}: the first view draws no box whole"));
        let world_at_pane_left = item.rect.min.x - (b.x0 as f32 - pane_left) / zoom;
        // The rows on screen: from the highest drawn box to the lowest.
        let top = drawn.iter().map(|(i, _)| i.rect.min.y).fold(f32::INFINITY, f32::min);
        let bottom = drawn.iter().map(|(i, _)| i.rect.max.y).fold(f32::NEG_INFINITY, f32::max);
        let row_left =
            layout.items.iter().filter(|i| i.rect.min.y >= top && i.rect.max.y <= bottom).map(|i| i.rect.min.x).fold(f32::INFINITY, f32::min);
        assert!(world_at_pane_left <= row_left + 0.5, "{v:?}: the pane starts at world x {world_at_pane_left}, right of a shown box at {row_left}");
    }
}

/// The decomposition views are a request: then, and only then, our lite/full re-decomposition of
/// the dynamo graph is computed. An export still decomposes as it opens.
#[test]
fn our_re_decomposition_runs_when_asked_for_and_exports_decompose_on_open() {
    without_user_traces();
    let mut h = Harness::new(Source::File(sample(LOG)));
    h.click_label(|l| l == "Re-decompose the dynamo graph (lite/full)", "the re-decompose button");
    let s = &h.app.state;
    assert!(s.stages.is_none() && s.redecompose);
    assert!(s.pane(View::Lite).decomp.is_some() && s.pane(View::Full).decomp.is_some());
    h.expect(|l| l == "lite (2)", "the lite pane header");
    // The verdict stays first among the problems: it is still a fact about the log.
    assert!(h.find(|l| l.starts_with("check-lite: FAIL: ")).is_some());

    let h = Harness::new(Source::File(sample("mlp.pt2")));
    let s = &h.app.state;
    assert!(s.stages.is_none() && s.redecompose && s.log_verdict.is_none());
    assert!(s.pane(View::Lite).decomp.is_some());
}

/// A CPU lite log whose calls no table has a trace of (`torch.as_tensor`), dropped on the window
/// over an open export: it opens on its stages, the verdict is UNVERIFIED, each call is named, and
/// the problems say how `--python` settles them.
#[test]
fn a_dropped_cpu_log_lists_what_check_lite_could_not_verify_and_the_python_hint() {
    without_user_traces();
    let path = sample("lite/untraced_calls_cpu_lite_2.15.0.log.gz");
    let mut h = Harness::new(Source::Embedded);
    assert!(h.app.state.stages.is_none() && h.app.state.pane(View::Lite).decomp.is_some());
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(egui::pos2(0.0, 0.0), egui::vec2(1600.0, 1000.0))),
        dropped_files: vec![egui::DroppedFile { path: Some(path.clone()), ..Default::default() }],
        ..Default::default()
    };
    let app = &mut h.app;
    let _ = h.ctx.run(input, |ctx| app.ui(ctx));
    h.settle();
    let s = &h.app.state;
    assert!(s.stages.is_some(), "the dropped log opens on its stages");
    assert!(!s.redecompose && s.pane(View::Lite).decomp.is_none(), "the export's re-decomposition is not carried over");
    let check = lite_trace::check_log(&trace::load_log(&path).unwrap());
    assert_eq!(check.violations().count(), 0);
    let summary = format!("check-lite: {}", check.summary());
    assert!(summary.starts_with("check-lite: UNVERIFIED: "), "{summary}");
    h.expect(|l| l == summary, "the verdict");
    h.expect(|l| l.starts_with("check-lite could not verify ") && l.contains("torch.as_tensor"), "the unverified call");
    h.expect(|l| l.starts_with("check-lite: ") && l.contains("--python PATH"), "the --python hint");
    assert!(h.find(|l| l.contains("does not lower")).is_none());
}
