//! The sweep panel driven headlessly through the real `App`, read back from the AccessKit tree
//! by label (as `ui_headless.rs` does): a small sweep on the reference device with a guard that
//! flips, the plot's summary, a point bound by clicking it in the table, cancel, CSV export, and
//! the UI thread's frame times while the worker measures.

mod common;

use std::time::{Duration, Instant};

use egui::accesskit::{Action, ActionRequest, Node, NodeId, Role};
use egui::{pos2, Event, Rect};
use xpu_workbench::ui::sweeping::SweepCommand;
use xpu_workbench::ui::{App, Command, Source};

struct Harness {
    ctx: egui::Context,
    app: App,
    events: Vec<Event>,
    nodes: Vec<(NodeId, Node)>,
}

impl Harness {
    fn new(source: Source) -> Harness {
        let ctx = egui::Context::default();
        ctx.enable_accesskit();
        let mut h = Harness { ctx, app: App::new(source, None), events: Vec::new(), nodes: Vec::new() };
        h.settle();
        h
    }

    /// One frame; returns how long `App::ui` took.
    fn frame(&mut self) -> Duration {
        let input = egui::RawInput {
            screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), egui::vec2(1600.0, 1000.0))),
            events: std::mem::take(&mut self.events),
            ..Default::default()
        };
        let app = &mut self.app;
        let t = Instant::now();
        let out = self.ctx.run(input, |ctx| app.ui(ctx));
        let took = t.elapsed();
        if let Some(update) = out.platform_output.accesskit_update {
            self.nodes = update.nodes;
        }
        took
    }

    /// Frames until nothing is busy, then two more; the frame times of the busy ones.
    fn settle(&mut self) -> Vec<Duration> {
        let start = Instant::now();
        let mut times = vec![self.frame()];
        while self.app.busy() {
            assert!(start.elapsed() < Duration::from_secs(120), "the app stayed busy for two minutes");
            std::thread::sleep(Duration::from_millis(5));
            times.push(self.frame());
        }
        self.frame();
        self.frame();
        times
    }

    fn labels(&self) -> Vec<String> {
        self.nodes.iter().filter_map(|(_, n)| n.name().map(str::to_string)).collect()
    }

    fn expect(&self, pred: impl Fn(&str) -> bool, what: &str) -> (NodeId, Node) {
        match self.nodes.iter().find(|(_, n)| n.name().is_some_and(&pred)) {
            Some((id, n)) => (*id, n.clone()),
            None => panic!("nothing displayed matches {what}; labels: {:#?}", self.labels()),
        }
    }

    fn click(&mut self, pred: impl Fn(&str) -> bool, what: &str) -> Vec<Duration> {
        let (target, _) = self.expect(pred, what);
        self.events.push(Event::AccessKitActionRequest(ActionRequest { action: Action::Default, target, data: None }));
        self.frame();
        self.settle()
    }

    fn command(&mut self, c: SweepCommand) {
        let ctx = self.ctx.clone();
        self.app.apply(Command::Sweep(c), &ctx);
        self.frame();
    }

    fn pick_reference(&mut self) {
        let (picker, _) = self.nodes.iter().find(|(_, n)| n.role() == Role::ComboBox && n.name() == Some("device")).cloned().expect("the device picker");
        self.events.push(Event::AccessKitActionRequest(ActionRequest { action: Action::Default, target: picker, data: None }));
        self.frame();
        self.settle();
        self.click(|l| l.starts_with("reference: "), "the reference device");
        assert_eq!(self.app.state.profile.device.map(|b| b.name()), Some("reference"));
    }
}

/// `samples/mlp.pt2` with the guard `x.size(0) <= 16` in its `guards_code`.
fn guarded_mlp() -> std::path::PathBuf {
    let bytes = common::edit_model_json("mlp.pt2", |v| v["guards_code"] = serde_json::json!(["L['x'].size()[0] <= 16"]));
    let path = std::env::temp_dir().join(format!("xpu-wb-ui-sweep-{}.pt2", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn sweeps_on_the_reference_device_plots_flips_binds_and_exports() {
    let file = guarded_mlp();
    let mut h = Harness::new(Source::File(file.clone()));
    h.pick_reference();
    h.click(|l| l == "sweep panel", "the sweep panel toggle");
    h.expect(|l| l == "▶ Sweep", "the sweep button");
    // The first symbol is picked with its own range.
    assert_eq!(h.app.state.sweep.dim.as_deref(), Some("s77"));
    assert_eq!((h.app.state.sweep.lo, h.app.state.sweep.hi), (1, 1024));
    h.command(SweepCommand::SetRange(1, 100));
    h.command(SweepCommand::SetPoints(3));
    let frames = h.click(|l| l == "▶ Sweep", "the sweep button");
    let s = &h.app.state.sweep;
    assert!(s.error.is_none(), "{:?}", s.error);
    // 1, 10, 100 and both sides of the flip, in both modes.
    let values: Vec<i64> = s.measured.iter().filter(|p| p.mode == "full").map(|p| p.value).collect();
    assert_eq!(values, vec![1, 10, 16, 17, 100]);
    assert_eq!(s.measured.len(), 10);
    assert!(s.measured.iter().all(|p| p.recompiled == (p.value == 17)));
    let (_, plot) = h.expect(|l| l.starts_with("sweep plot: s77 over 1..100"), "the time plot");
    let text = plot.name().unwrap().to_string();
    assert!(text.contains("5 values × 2 modes (lite, full), 1 guard flips, 2 recompiles"), "{text}");
    h.expect(|l| l == "per-kernel device time, stacked:", "the stacked plot's heading");

    // The UI thread kept drawing while the worker measured.
    let mut ms: Vec<f64> = frames.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    eprintln!("frames while sweeping: {}, median {:.2} ms, max {:.2} ms", ms.len(), ms[ms.len() / 2], ms[ms.len() - 1]);
    // Had the UI thread run the sweep, the click's frame would have returned with the app
    // idle: one frame. How many more it draws depends on how fast the sweep is (5 points × 2
    // modes of a small MLP: a few milliseconds here), so only "more than one" is checked.
    assert!(ms.len() > 1, "the sweep ran inside one frame: the UI thread waited for it");

    // With the heat overlay on a run of ours, a clicked point binds the slider there, and the
    // shapes, the guards and the overlay (profiled again at the point) follow.
    let ctx = h.ctx.clone();
    h.app.apply(Command::RunProfile, &ctx);
    h.app.apply(Command::SetHeat(true), &ctx);
    h.settle();
    let before = h.app.state.profile.generation;
    assert!(h.app.state.profile.result.is_some(), "{:?}", h.app.state.profile.error);
    h.click(|l| l == "10 measurements", "the table's header");
    h.click(|l| l == "s77 = 17", "the point at 17");
    assert_eq!(h.app.state.bindings.get("s77"), Some(17));
    assert!(h.app.state.guards.iter().any(|g| g.flipped()), "the guard shows as flipped at 17");
    assert_eq!(h.app.state.profile.generation, before + 1, "the overlay's profile ran again at the point");
    assert!(h.app.state.profile.result.is_some() && h.app.state.profile.error.is_none(), "{:?}", h.app.state.profile.error);

    let csv = std::env::temp_dir().join(format!("xpu-wb-ui-sweep-{}.csv", std::process::id()));
    h.command(SweepCommand::ExportCsvTo(csv.clone()));
    h.settle();
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 11);
    assert!(text.starts_with("s77,mode,device_us,"));
    let _ = std::fs::remove_file(csv);
    let _ = std::fs::remove_file(file);
}

#[test]
fn a_long_sweep_can_be_cancelled_and_the_app_goes_on() {
    let mut h = Harness::new(Source::File(common::sample("transformer_block.pt2")));
    h.pick_reference();
    h.click(|l| l == "sweep panel", "the sweep panel toggle");
    h.command(SweepCommand::SetDim("s27".into()));
    h.command(SweepCommand::SetPoints(64));
    h.command(SweepCommand::Run);
    // Let it measure a little, then cancel.
    let start = Instant::now();
    while h.app.state.sweep.measured.len() < 2 {
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(5));
        h.frame();
    }
    h.click(|l| l == "■ Cancel sweep", "the cancel button");
    let s = &h.app.state.sweep;
    assert!(!s.running() && s.error.is_none());
    assert!(s.note.as_deref().is_some_and(|n| n.starts_with("cancelled after")), "{:?}", s.note);
    assert!(s.measured.len() < 2 * 64);
    h.expect(|l| l == "▶ Sweep", "the sweep button, back");
}

/// For docs/PERFORMANCE.md: the UI thread's frame times (App::ui + tessellation, headless) at a
/// 60 Hz pace while the 16-point lite/full sweep of the transformer runs on OpenCL.
/// `cargo test --test ui_sweep -- --ignored --nocapture` after `source scripts/env.sh`.
#[test]
#[ignore]
fn frame_times_while_the_transformer_sweeps_on_opencl() {
    if common::opencl_device().is_none() {
        return;
    }
    let mut h = Harness::new(Source::File(common::sample("transformer_block.pt2")));
    let cl = h.app.state.profile.devices.iter().find(|d| d.backend.name() == "opencl").map(|d| d.backend).unwrap();
    let ctx = h.ctx.clone();
    h.app.apply(Command::PickDevice(cl), &ctx);
    h.click(|l| l == "sweep panel", "the sweep panel toggle");
    h.command(SweepCommand::SetDim("s27".into()));
    h.command(SweepCommand::SetRange(2, 512));
    h.command(SweepCommand::SetPoints(16));
    h.command(SweepCommand::Run);
    let start = Instant::now();
    let mut ms = Vec::new();
    while h.app.state.sweep.running() {
        let t = Instant::now();
        let input = egui::RawInput {
            screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), egui::vec2(1600.0, 1000.0))),
            ..Default::default()
        };
        let app = &mut h.app;
        let out = h.ctx.run(input, |ctx| app.ui(ctx));
        let _ = h.ctx.tessellate(out.shapes, out.pixels_per_point);
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        std::thread::sleep(Duration::from_millis(16).saturating_sub(t.elapsed()));
    }
    let wall = start.elapsed().as_secs_f64();
    assert!(h.app.state.sweep.error.is_none(), "{:?}", h.app.state.sweep.error);
    assert_eq!(h.app.state.sweep.measured.len(), 32);
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| ms[((ms.len() - 1) as f64 * p) as usize];
    let over = ms.iter().filter(|m| **m > 16.7).count();
    eprintln!(
        "sweep {wall:.1} s; {} frames: median {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms, {over} over 16.7 ms",
        ms.len(),
        pct(0.5),
        pct(0.95),
        pct(0.99),
        ms[ms.len() - 1]
    );
}

/// A folder of real profiler traces (the tiny Llama at seven sequence lengths, default and lite,
/// H100, torch 2.11) plotted in the panel like a measured sweep, without touching a device.
#[test]
fn the_panel_plots_a_sweep_of_imported_profiler_traces() {
    let mut h = Harness::new(Source::File(common::sample("mlp.pt2")));
    h.click(|l| l == "sweep panel", "the sweep panel toggle");
    h.expect(|l| l == "Load profiles…", "the load-profiles button");
    h.command(SweepCommand::LoadProfilesFrom(common::sample("inductor/sweep")));
    h.settle();
    let s = &h.app.state.sweep;
    assert!(s.error.is_none(), "{:?}", s.error);
    assert_eq!(s.measured.len(), 14);
    let lite: Vec<i64> = s.measured.iter().filter(|p| p.mode == "lite").map(|p| p.value).collect();
    assert_eq!(lite, vec![16, 32, 64, 128, 256, 512, 1024]);
    let (_, plot) = h.expect(|l| l.starts_with("sweep plot: seq over 16..1024"), "the time plot");
    assert!(plot.name().unwrap().contains("7 values × 2 modes"), "{:?}", plot.name());
    let missing = std::env::temp_dir().join("xpu-wb-no-such-profiles");
    h.command(SweepCommand::LoadProfilesFrom(missing.clone()));
    h.settle();
    let e = h.app.state.sweep.error.clone().unwrap_or_default();
    assert!(e.contains(&missing.display().to_string()), "{e}");
}
