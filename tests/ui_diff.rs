//! The diff mode of the app on real pairs (the ones tests/graph_diff.rs checks against torch's own
//! graphs), driven headlessly: what it lists, selects, highlights and copies must be what
//! `xpu-workbench diff` finds, read back from the AccessKit tree as a screen reader would.

mod common;

use common::sample;
use common::ui::Harness;
use egui::{Key, Modifiers};
use xpu_workbench::diff::{diff_files, text, Class, Entry, GraphDiff};
use xpu_workbench::ir::NodeId;
use xpu_workbench::ui::diff_links::{node_of, step_order, summary, Side};
use xpu_workbench::ui::diff_view::DiffCommand;
use xpu_workbench::ui::{Command, Source, View};

fn open_diff(h: &mut Harness, b: &std::path::Path) {
    h.apply(Command::Diff(DiffCommand::Open(b.to_path_buf())));
}

/// The selected node's name, in the pane it was selected in.
fn selected(h: &Harness) -> (View, String) {
    let sel = h.app.state.selection.expect("a selection");
    let g = h.app.state.pane(sel.view).graph.clone().expect("the pane's graph");
    (sel.view, g.node(sel.node).name.clone())
}

/// Where the diff mode should select an entry: its node in A, else in B.
fn expected_selection(e: &Entry) -> (View, String) {
    match (&e.a, &e.b) {
        (Some(a), _) if a.index.is_some() => (View::DiffA, a.name.clone()),
        (_, Some(b)) => (View::DiffB, b.name.clone()),
        _ => panic!("an entry with no node: {e:?}"),
    }
}

fn names_in_order(d: &GraphDiff) -> Vec<(View, String)> {
    step_order(d).into_iter().map(|i| expected_selection(&d.entries[i])).collect()
}

/// CUDA (A) against CPU (B), lite mode, torch 2.11: CUDA keeps `_fused_rms_norm`, CPU expands it.
/// The diff opens on the first pair that differs, at its first difference, and n / p / F7 /
/// Shift+F7 step through the differences in the list's order, wrapping at the ends.
#[test]
fn the_diff_mode_steps_through_the_rms_norm_expansion() {
    let (cuda, cpu) = (sample("lite/rmsfn_cuda_lite_2.11.0.log.gz"), sample("lite/rmsfn_cpu_lite_2.11.0.log.gz"));
    let mut h = Harness::new(Source::File(cuda.clone()));
    open_diff(&mut h, &cpu);
    let expected = diff_files(&cuda, &cpu, None).expect("diff");
    let first = expected.pairs.iter().position(|p| p.diff.differs()).expect("a pair that differs");
    let want = &expected.pairs[first];
    assert!(!expected.pairs[0].diff.differs(), "dynamo records the call, not its expansion");
    let d = &h.app.state.diff;
    assert!(d.open && d.error.is_none(), "{:?}", d.error);
    assert_eq!(d.pair, first);
    h.expect(|l| l == format!("diff summary: {}", summary(&want.diff.counts)), "the summary line");

    // Opened at the first difference: the fused call, only in A, coloured and highlighted.
    assert_eq!(h.app.state.diff.cursor, Some(0));
    assert_eq!(selected(&h), (View::DiffA, "_fused_rms_norm".to_string()));
    h.expect(|l| l.starts_with("diff A node: _fused_rms_norm") && l.ends_with("[only in A] [highlighted]"), "the fused call, highlighted");
    h.expect(|l| l.starts_with("difference: - _fused_rms_norm"), "the fused call in the list");

    let order = names_in_order(&want.diff);
    assert!(order.iter().any(|(v, n)| *v == View::DiffB && n == "rsqrt"), "{order:?}");
    for (k, want) in order.iter().enumerate().skip(1) {
        h.key(Key::N, Modifiers::NONE);
        assert_eq!(h.app.state.diff.cursor, Some(k));
        assert_eq!(&selected(&h), want, "difference {k}");
    }
    let last = order.len() - 1;
    h.key(Key::N, Modifiers::NONE);
    assert_eq!(h.app.state.diff.cursor, Some(0), "n wraps to the first");
    h.key(Key::P, Modifiers::NONE);
    assert_eq!(h.app.state.diff.cursor, Some(last), "p wraps to the last");
    h.key(Key::F7, Modifiers::NONE);
    assert_eq!(h.app.state.diff.cursor, Some(0));
    h.key(Key::F7, Modifiers::SHIFT);
    assert_eq!(h.app.state.diff.cursor, Some(last));
    assert_eq!(selected(&h), order[last]);
    // Clicking a row steps there.
    let (view, name) = order[1].clone();
    let mark = if view == View::DiffA { '-' } else { '+' };
    h.click_label(|l| l.starts_with(&format!("difference: {mark} {name} ")), "the second row");
    assert_eq!(h.app.state.diff.cursor, Some(1));

    // What Copy puts on the clipboard is the CLI's text.
    assert_eq!(h.app.state.diff.text().expect("text"), text::file_diff(&expected));

    // The dynamo graphs are the same: nothing to list or step to.
    h.apply(Command::Diff(DiffCommand::PickPair(0)));
    h.expect(|l| l == format!("diff summary: {}", summary(&expected.pairs[0].diff.counts)), "the dynamo pair's summary");
    assert!(h.find(|l| l.starts_with("difference: ")).is_none());
    h.key(Key::N, Modifiers::NONE);
    assert_eq!(h.app.state.diff.cursor, None);
    assert!(h.find(|l| l.starts_with("diff A node: ") && l.ends_with("[same]")).is_some(), "{:#?}", h.labels());
    // Out of range: ignored.
    h.apply(Command::Diff(DiffCommand::PickPair(99)));
    h.apply(Command::Diff(DiffCommand::StepTo(99)));
    assert_eq!((h.app.state.diff.pair, h.app.state.diff.cursor), (0, None));

    // Leaving the mode gives the graph views back: a log's are torch's stages.
    h.key(Key::Escape, Modifiers::NONE);
    assert!(!h.app.state.diff.open);
    assert!(h.find(|l| l.starts_with("diff A node")).is_none());
    assert!(h.find(|l| l.starts_with("dynamo node")).is_some(), "{:#?}", h.labels());
}

/// A matched node picked on one side highlights its partner on the other and brings it to the
/// middle of that pane; the stage pickers diff again with what `--stage` takes.
#[test]
fn a_picked_node_shows_its_partner_and_stages_can_be_picked() {
    let (cuda, cpu) = (sample("lite/rmsfn_cuda_lite_2.11.0.log.gz"), sample("lite/rmsfn_cpu_lite_2.11.0.log.gz"));
    let mut h = Harness::new(Source::File(cuda.clone()));
    h.apply(Command::Diff(DiffCommand::SetStages(Some("post_grad".into()), Some("post_grad".into()))));
    assert!(!h.app.state.diff.open, "no second file yet: nothing runs");
    open_diff(&mut h, &cpu);
    h.apply(Command::Diff(DiffCommand::SetStages(Some("post_grad".into()), Some("post_grad".into()))));
    let expected = diff_files(&cuda, &cpu, Some("post_grad")).expect("diff");
    let r = h.app.state.diff.result.clone().expect("a result");
    assert_eq!(r.file, expected, "the app's diff is the CLI's");
    assert_eq!(r.file.pairs.len(), 1);
    assert!(r.file.pairs[0].a.contains("post_grad"), "{}", r.file.pairs[0].a);

    let d = &expected.pairs[0].diff;
    let same = d.entries.iter().rev().find(|e| e.class == Class::Same && node_of(e, Side::A).is_some()).expect("a matched node");
    let (a, b) = (node_of(same, Side::A).unwrap(), node_of(same, Side::B).unwrap());
    let b_name = same.b.as_ref().unwrap().name.clone();
    h.apply(Command::Select(View::DiffA, a));
    assert_eq!(h.app.state.related(View::DiffB), vec![b]);
    h.expect(|l| l.starts_with("diff B node: ") && l.contains(&format!(" · {b_name} ")) && l.ends_with("[same] [highlighted]"), "the partner");
    let pane = h.app.state.pane(View::DiffB);
    let layout = pane.layout.clone().expect("laid out");
    let rect = layout.items[layout.item_of(b).expect("drawn")].rect;
    assert!((pane.camera.center - rect.center()).length() < 1.0, "partner at {:?}, camera at {:?}", rect.center(), pane.camera.center);

    // Moving A's camera onto a matched node moves B's onto its partner.
    let layout_a = h.app.state.pane(View::DiffA).layout.clone().expect("laid out");
    let a_rect = layout_a.items[layout_a.item_of(a).expect("drawn")].rect;
    let mut cam = h.app.state.pane(View::DiffA).camera;
    cam.center = a_rect.center() + egui::vec2(3.0, 5.0);
    h.apply(Command::SetCamera(View::DiffA, cam));
    let b_cam = h.app.state.pane(View::DiffB).camera;
    assert!((b_cam.center - (rect.center() + egui::vec2(3.0, 5.0))).length() < 1.0, "B at {:?}, partner at {:?}", b_cam.center, rect.center());

    // An unmatched node has no partner to highlight.
    let only = d.entries.iter().find(|e| e.class == Class::OnlyB).expect("an expansion node");
    h.apply(Command::Select(View::DiffB, node_of(only, Side::B).unwrap()));
    assert_eq!(h.app.state.related(View::DiffA), Vec::<NodeId>::new());
}

/// vit exported by torch 2.11 (A) and 2.15 (B): two `view`s became `reshape`s, deep inside the
/// encoder layers; each change is shown coloured on both sides, the partner highlighted.
#[test]
fn changes_deep_in_modules_are_shown_on_both_sides() {
    let (old, new) = (sample("zoo/torch-2.11/vit.pt2"), sample("zoo/torch-2.15/vit.pt2"));
    let mut h = Harness::new(Source::File(old));
    open_diff(&mut h, &new);
    h.expect(|l| l.starts_with("diff summary: 2 changed · 0 only in A · 0 only in B · "), "two changes");
    h.expect(|l| l.starts_with("diff A node: view · view_6 ") && l.ends_with("[changed] [highlighted]"), "view_6 in A");
    h.expect(|l| l.starts_with("diff B node: reshape · reshape_1 ") && l.ends_with("[changed] [highlighted]"), "its partner in B");
    h.key(Key::N, Modifiers::NONE);
    h.expect(|l| l.starts_with("diff A node: view · view_14 ") && l.ends_with("[changed] [highlighted]"), "view_14 in A");
    h.expect(|l| l.starts_with("diff B node: reshape · reshape_2 ") && l.ends_with("[changed] [highlighted]"), "its partner in B");
    h.expect(|l| l.starts_with("difference: ~ view_14 ↔ reshape_2 (reshape): op"), "the row");
}

/// A second file that cannot be diffed: the mode says which file and why, and the app goes on.
#[test]
fn a_second_file_that_fails_is_named_with_why() {
    let cuda = sample("lite/rmsfn_cuda_lite_2.11.0.log.gz");
    let mut h = Harness::new(Source::File(cuda.clone()));
    open_diff(&mut h, std::path::Path::new("/nonexistent/b.pt2"));
    let (_, n) = h.expect(|l| l.starts_with("diff error: "), "an error");
    assert!(n.name().unwrap().contains("/nonexistent/b.pt2"), "{:?}", n.name());
    assert!(h.app.state.diff.result.is_none());

    // Not a graph at all.
    let not_graph = sample("../Cargo.toml");
    open_diff(&mut h, &not_graph);
    let (_, n) = h.expect(|l| l.starts_with("diff error: "), "an error");
    assert!(n.name().unwrap().contains("Cargo.toml"), "{:?}", n.name());

    // A stage the logs do not have.
    open_diff(&mut h, &cuda);
    assert!(h.app.state.diff.error.is_none());
    h.apply(Command::Diff(DiffCommand::SetStages(Some("aot_backward".into()), Some("aot_backward".into()))));
    let (_, n) = h.expect(|l| l.starts_with("diff error: "), "an error");
    assert!(n.name().unwrap().contains("no aot_backward graph in the log"), "{:?}", n.name());
    // And back to a diff that works.
    h.apply(Command::Diff(DiffCommand::SetStages(None, None)));
    assert!(h.app.state.diff.error.is_none() && h.app.state.diff.result.is_some());
    assert!(!h.app.state.diff.result.as_ref().unwrap().file.differs(), "a file against itself");

    // The embedded sample has no file to diff.
    let mut h = Harness::new(Source::Embedded);
    open_diff(&mut h, &cuda);
    h.expect(|l| l.starts_with("diff error: ") && l.contains("embedded sample"), "why not");
}

/// `xpu-workbench A --diff B` opens the diff mode once A is open, on the first pair that differs.
#[test]
fn the_command_line_opens_the_diff_mode() {
    let (cuda, cpu) = (sample("lite/rmsfn_cuda_lite_2.11.0.log.gz"), sample("lite/rmsfn_cpu_lite_2.11.0.log.gz"));
    let mut h = Harness::new(Source::File(cuda));
    assert!(!h.app.state.diff.open);
    h.app.state.diff.pending = Some(cpu);
    h.settle();
    let d = &h.app.state.diff;
    assert!(d.open && d.error.is_none(), "{:?}", d.error);
    let (pair, _) = d.shown().expect("a pair shown");
    assert!(pair.diff.differs() && pair.a.contains("aot"), "{}", pair.a);
    h.expect(|l| l.starts_with("diff A node: _fused_rms_norm") && l.ends_with("[only in A] [highlighted]"), "the first difference");
}
