//! The real app driven headlessly: an egui `Context` runs `App::ui` frame after frame, input goes in
//! as events (pointer, keys, AccessKit actions), and assertions read what is displayed from the
//! AccessKit tree by label, as a screen reader would.

mod common;

use std::time::{Duration, Instant};

use egui::accesskit::{Action, ActionData, ActionRequest, Node, NodeId, Role};
use egui::{pos2, Event, Key, Modifiers, PointerButton, Rect};
use xpu_workbench::ui::session::Store;
use xpu_workbench::ui::state::NodeClass;
use xpu_workbench::ui::{App, Source, View};

struct Harness {
    ctx: egui::Context,
    app: App,
    events: Vec<Event>,
    nodes: Vec<(NodeId, Node)>,
}

impl Harness {
    fn new(source: Source) -> Harness {
        Harness::with_store(source, None)
    }

    fn with_store(source: Source, store: Option<Store>) -> Harness {
        let ctx = egui::Context::default();
        ctx.enable_accesskit();
        let mut h = Harness { ctx, app: App::new(source, store), events: Vec::new(), nodes: Vec::new() };
        h.settle();
        h
    }

    fn frame(&mut self) {
        let input = egui::RawInput {
            screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), egui::vec2(1600.0, 1000.0))),
            events: std::mem::take(&mut self.events),
            ..Default::default()
        };
        let app = &mut self.app;
        let out = self.ctx.run(input, |ctx| app.ui(ctx));
        if let Some(update) = out.platform_output.accesskit_update {
            self.nodes = update.nodes;
        }
    }

    /// Runs frames until no worker is busy, then two more so the display catches up.
    fn settle(&mut self) {
        let start = Instant::now();
        self.frame();
        while self.app.busy() {
            assert!(start.elapsed() < Duration::from_secs(60), "the app stayed busy for a minute");
            std::thread::sleep(Duration::from_millis(5));
            self.frame();
        }
        self.frame();
        self.frame();
    }

    fn labels(&self) -> Vec<String> {
        self.nodes.iter().filter_map(|(_, n)| n.name().map(str::to_string)).collect()
    }

    fn find_role(&self, role: Role, name: &str) -> NodeId {
        match self.nodes.iter().find(|(_, n)| n.role() == role && n.name() == Some(name)) {
            Some((id, _)) => *id,
            None => panic!("no {role:?} named {name:?}; labels: {:#?}", self.labels()),
        }
    }

    fn find(&self, pred: impl Fn(&str) -> bool) -> Option<(NodeId, &Node)> {
        self.nodes.iter().find(|(_, n)| n.name().is_some_and(&pred)).map(|(id, n)| (*id, n))
    }

    fn expect(&self, pred: impl Fn(&str) -> bool, what: &str) -> (NodeId, Node) {
        match self.find(pred) {
            Some((id, n)) => (id, n.clone()),
            None => panic!("nothing displayed matches {what}; labels: {:#?}", self.labels()),
        }
    }

    fn action(&mut self, target: NodeId, action: Action, data: Option<ActionData>) {
        self.events.push(Event::AccessKitActionRequest(ActionRequest { action, target, data }));
        self.frame();
        self.settle();
    }

    fn click_label(&mut self, pred: impl Fn(&str) -> bool, what: &str) {
        let (id, _) = self.expect(pred, what);
        self.action(id, Action::Default, None);
    }

    fn key(&mut self, key: Key, modifiers: Modifiers) {
        for pressed in [true, false] {
            self.events.push(Event::Key { key, physical_key: None, pressed, repeat: false, modifiers });
        }
        self.frame();
        self.settle();
    }

    fn type_text(&mut self, text: &str) {
        self.events.push(Event::Text(text.to_string()));
        self.frame();
        self.settle();
    }

    /// Presses `button` at the centre of the displayed node.
    fn press_on(&mut self, node: &Node, button: PointerButton) {
        let b = node.bounds().expect("bounds");
        let at = pos2(((b.x0 + b.x1) / 2.0) as f32, ((b.y0 + b.y1) / 2.0) as f32);
        self.events.push(Event::PointerMoved(at));
        self.frame();
        for pressed in [true, false] {
            self.events.push(Event::PointerButton { pos: at, button, pressed, modifiers: Modifiers::NONE });
            self.frame();
        }
        self.settle();
    }

    /// Jumps to the first node matching `text` with the search window (Ctrl+F, type, Enter).
    fn search_and_jump(&mut self, text: &str) {
        self.key(Key::F, Modifiers::COMMAND);
        self.type_text(text);
        self.key(Key::Enter, Modifiers::NONE);
    }
}

#[test]
fn opens_the_embedded_sample_and_shows_all_views() {
    let h = Harness::new(Source::Embedded);
    let doc = h.app.state.doc.as_ref().expect("loaded");
    assert!(doc.model.graphs[0].nodes.len() > 10);
    h.expect(|l| l.starts_with("original (1)"), "the original pane header");
    h.expect(|l| l.starts_with("lite (2)"), "the lite pane header");
    assert!(h.find(|l| l.starts_with("full (3)")).is_none(), "the full view starts hidden");
    for v in View::ALL {
        assert!(h.app.state.pane(v).layout.is_some(), "{v:?} laid out");
    }
}

#[test]
fn keys_switch_views() {
    let mut h = Harness::new(Source::Embedded);
    h.key(Key::Num3, Modifiers::NONE);
    assert_eq!(h.app.state.focus, View::Full);
    h.expect(|l| l.starts_with("full (3)"), "the full pane header after pressing 3");
    h.key(Key::Num2, Modifiers::NONE);
    assert_eq!(h.app.state.focus, View::Lite);
    // Search follows the focused view: lite keeps layer_norm whole, so no var_mean is found there.
    h.key(Key::F, Modifiers::COMMAND);
    assert!(h.app.state.search_open);
    h.type_text("var_mean");
    h.expect(|l| l == "0 matches", "no var_mean in the lite view");
}

#[test]
fn marking_a_node_decomposes_it_in_the_lite_view() {
    let mut h = Harness::new(Source::Embedded);
    // Jump to the first layer_norm of the original graph: it is drawn readable and selected.
    h.key(Key::Num1, Modifiers::NONE);
    h.search_and_jump("layer_norm");
    let sel = h.app.state.selection.expect("the search selected a node");
    let name = h.app.state.original().unwrap().node(sel.node).name.clone();
    // Before marking, lite keeps it whole: the inspector links to one layer_norm in lite.
    h.expect(|l| l == format!("in lite: {name} (layer_norm)"), "the lite product link (kept whole)");
    assert!(h.find(|l| l.starts_with("in lite:") && l.contains("(var_mean")).is_none());

    let (_, node) = h.expect(|l| l.starts_with("original node: layer_norm") && l.contains(&name), "the layer_norm box");
    h.press_on(&node, PointerButton::Secondary);
    h.click_label(|l| l == format!("Mark `{name}` for lite decomposition"), "the mark menu entry");
    assert!(h.app.state.marks.names.contains(&name));

    // The lite view re-derived: the inspector's lite links now name what layer_norm became,
    // and the lite graph draws those nodes as decomposed.
    h.expect(|l| l.starts_with("in lite:") && l.contains("(var_mean"), "a var_mean product in the lite links");
    let lite = h.app.state.pane(View::Lite);
    let products = h.app.state.products(View::Lite, sel.node);
    assert!(products.len() > 1);
    for p in products {
        assert_eq!(lite.classes[p.index()], NodeClass::Decomposed);
    }
    // Jumping there shows the decomposed boxes in the lite pane.
    h.click_label(|l| l.starts_with("in lite:") && l.contains("(var_mean"), "the var_mean link");
    h.expect(|l| l.starts_with("lite node: var_mean"), "a var_mean box in the lite pane");

    // Unmarking restores the kept layer_norm.
    h.key(Key::Num1, Modifiers::NONE);
    h.search_and_jump(&name);
    let (_, node) = h.expect(|l| l.starts_with("original node: layer_norm") && l.contains(&name), "the layer_norm box");
    h.press_on(&node, PointerButton::Secondary);
    h.click_label(|l| l == format!("Unmark `{name}` for lite decomposition"), "the unmark menu entry");
    assert!(h.app.state.products(View::Lite, sel.node).len() == 1);
}

#[test]
fn moving_a_slider_updates_the_displayed_shapes_and_guards() {
    let mut h = Harness::new(Source::Embedded);
    let sym = h.app.state.doc.as_ref().unwrap().model.symbols[0].clone();
    h.search_and_jump("layer_norm");
    let before = h.expect(|l| l.starts_with("concrete shape ["), "the inspector's concrete shape").1;
    let before = before.name().unwrap().to_string();
    let old = h.app.state.bindings.get(&sym.name).unwrap();
    let new = if sym.range.contains(old + 3) { old + 3 } else { old - 1 };
    let slider = h.find_role(Role::Slider, &sym.name);
    h.action(slider, Action::SetValue, Some(ActionData::NumericValue(new as f64)));
    assert_eq!(h.app.state.bindings.get(&sym.name), Some(new));
    let after = h.expect(|l| l.starts_with("concrete shape ["), "the inspector's concrete shape").1;
    let after = after.name().unwrap().to_string();
    assert_ne!(before, after, "the displayed concrete shape did not change");
    // The canvas boxes show the new concrete shape too.
    let shown = format!("= {}", &after["concrete shape ".len()..]);
    h.expect(|l| l.starts_with("original node: layer_norm") && l.ends_with(&shown), "the layer_norm box with the new shape");
}

#[test]
fn marks_and_bindings_survive_a_restart() {
    let dir = std::env::temp_dir().join(format!("xpu-wb-ui-session-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Store { dir: dir.clone() };
    let mut h = Harness::with_store(Source::Embedded, Some(store.clone()));
    let sym = h.app.state.doc.as_ref().unwrap().model.symbols[0].clone();
    let slider = h.find_role(Role::Slider, &sym.name);
    let value = h.app.state.bindings.get(&sym.name).unwrap() + 1;
    h.action(slider, Action::SetValue, Some(ActionData::NumericValue(value as f64)));
    h.search_and_jump("gelu");
    let (_, node) = h.expect(|l| l.starts_with("original node: gelu"), "the gelu box");
    h.press_on(&node, PointerButton::Secondary);
    h.click_label(|l| l == "Mark `gelu` for lite decomposition", "the mark menu entry");
    h.app.save();

    let again = Harness::with_store(Source::Embedded, Some(store));
    assert_eq!(again.app.state.bindings.get(&sym.name), Some(value));
    assert_eq!(again.app.state.marks.names, vec!["gelu".to_string()]);
    let gelu = again.app.state.original().unwrap().node_by_name("gelu").unwrap();
    assert!(again.app.state.products(View::Lite, gelu).len() > 1, "the restored mark decomposes gelu in lite");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_already_decomposed_file_shows_its_lite_violations() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/annotated.inductor.pt2");
    let h = Harness::new(Source::File(path));
    let g = h.app.state.original().expect("loaded");
    let classes = &h.app.state.pane(View::Original).classes;
    let violating: Vec<&str> = g
        .node_ids()
        .filter(|id| classes[id.index()] == NodeClass::Violation)
        .filter_map(|id| g.node(id).meta.from_node.last().map(|o| o.name.as_str()))
        .collect();
    // check-lite names gelu, linear, linear_1 and softmax for this file (docs/DECOMPOSITION.md).
    for name in ["gelu", "linear", "linear_1", "softmax"] {
        assert!(violating.contains(&name), "{name} not drawn as a violation: {violating:?}");
    }
    h.expect(|l| l == "lite violation", "the legend entry");
}

impl Harness {
    /// Picks the backend named `backend` in the toolbar's device picker.
    fn pick_device(&mut self, backend: &str) {
        let picker = self.find_role(Role::ComboBox, "device");
        self.action(picker, Action::Default, None);
        let prefix = format!("{backend}: ");
        self.click_label(|l| l.starts_with(&prefix), "the device entry");
        assert_eq!(self.app.state.profile.device.map(|b| b.name()), Some(backend));
    }

    /// Ctrl+R, then frames until the worker has answered.
    fn run_profile(&mut self) -> std::sync::Arc<xpu_workbench::ui::profiling::ProfileResult> {
        self.key(Key::R, Modifiers::COMMAND);
        let p = &self.app.state.profile;
        assert!(p.running.is_none());
        if let Some(e) = &p.error {
            panic!("the profile failed: {e}");
        }
        p.result.clone().expect("a profile result")
    }
}

#[test]
fn profiles_on_the_reference_device_with_timeline_table_and_heat() {
    let mut h = Harness::new(Source::Embedded);
    // Every backend is listed; the reference interpreter always is available.
    let devices = &h.app.state.profile.devices;
    assert_eq!(devices.len(), 3, "{devices:?}");
    assert!(devices.iter().any(|d| d.backend.name() == "reference" && d.available));
    h.pick_device("reference");
    let r = h.run_profile();
    assert_eq!(r.view, View::Original);
    assert!(!r.rows.is_empty(), "no kernel rows");
    // Rows are sorted slowest first and named after nodes of the profiled graph.
    assert!(r.rows.windows(2).all(|w| w[0].median_ns >= w[1].median_ns));
    let g = h.app.state.original().unwrap();
    let row = &r.rows[0];
    let first = row.launch.nodes.first().unwrap_or(&row.node);
    assert!(g.node_by_name(first).is_some(), "{first} is not a node of the graph");
    h.expect(|l| l == row.node, "the slowest kernel's row in the table");
    h.expect(|l| l.starts_with("timeline: ") && !l.contains(" 0 spans"), "the timeline");
    h.expect(|l| l.contains("kernels, by median device time"), "the table header");

    // The heat overlay colours nodes and adds their device time; toggling it off removes it.
    h.click_label(|l| l == "heat overlay", "the heat toggle");
    assert!(h.app.state.profile.heat);
    h.expect(|l| l.starts_with("device time per node"), "the heat legend");
    h.expect(|l| l.starts_with("original node: ") && l.contains(" · device "), "a node box with its device time");
    h.click_label(|l| l == "heat overlay", "the heat toggle");
    assert!(!h.app.state.profile.heat);
    assert!(h.find(|l| l.starts_with("original node: ") && l.contains(" · device ")).is_none());

    // The exports write the files the `profile` command writes.
    let dir = std::env::temp_dir().join(format!("xpu-wb-ui-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (chrome, puffin) = (dir.join("t.json"), dir.join("t.puffin"));
    let ctx = h.ctx.clone();
    h.app.apply(xpu_workbench::ui::Command::Export(xpu_workbench::ui::ExportKind::Chrome, chrome.clone()), &ctx);
    h.app.apply(xpu_workbench::ui::Command::Export(xpu_workbench::ui::ExportKind::Puffin, puffin.clone()), &ctx);
    h.settle();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&chrome).unwrap()).unwrap();
    assert!(json.to_string().contains(&row.node));
    assert!(std::fs::metadata(&puffin).unwrap().len() > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn profiles_the_lite_view_on_opencl() {
    let mut h = Harness::new(Source::Embedded);
    let cl = h.app.state.profile.devices.iter().find(|d| d.backend.name() == "opencl").cloned().unwrap();
    if !cl.available {
        assert!(std::env::var_os("XPU_WORKBENCH_REQUIRE_OPENCL").is_none(), "no OpenCL: {:?}", cl.reason);
        eprintln!("skipped: no OpenCL ({:?})", cl.reason);
        return;
    }
    h.key(Key::Num2, Modifiers::NONE);
    h.pick_device("opencl");
    let r = h.run_profile();
    assert_eq!(r.view, View::Lite);
    assert_eq!(r.trace.backend, "opencl");
    assert!(!r.rows.is_empty());
    h.expect(|l| l == r.rows[0].node, "the slowest kernel's row in the table");
}

#[test]
fn torch_trace_stage_views_relate_nodes_by_source_line() {
    use xpu_workbench::import::trace::stage_provenance;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/traces/trace_default.log.gz");
    let mut h = Harness::new(Source::File(path));
    assert_eq!(h.app.state.doc.as_ref().unwrap().model.format, xpu_workbench::ir::Format::TorchTrace);
    let picker = h.find_role(Role::ComboBox, "compile id");
    h.action(picker, Action::Default, None);
    h.click_label(|l| l == "stages of compile 0/1", "the compile id 0/1 entry");
    assert_eq!(h.app.state.stages.as_ref().map(|s| s.compile_id.as_str()), Some("0/1"));
    for stage in ["dynamo", "aot", "post-grad"] {
        h.expect(|l| l.starts_with(&format!("{stage} graph of compile 0/1")), "a stage pane header");
    }

    // Pick, in the AOT view, a node whose source line dynamo's graph also has.
    let aot = h.app.state.pane(View::Aot).graph.clone().expect("an AOT graph");
    let dynamo = h.app.state.pane(View::Dynamo).graph.clone().expect("a dynamo graph");
    let mapped: Vec<_> = stage_provenance(&dynamo, &aot).into_iter().filter(|(_, e)| !e.is_empty()).collect();
    assert!(!mapped.is_empty(), "no AOT node shares a source line with dynamo");
    h.click_label(|l| l.starts_with("aot graph of compile"), "the AOT pane header");
    assert_eq!(h.app.state.focus, View::Aot);
    let (node, earlier) = mapped
        .iter()
        .find(|(n, _)| {
            let name = &aot.node(*n).name;
            !aot.nodes.iter().take(n.index()).any(|m| m.name.contains(name.as_str()) || m.target.contains(name.as_str()))
        })
        .expect("an AOT node found first by its name");
    h.search_and_jump(&aot.node(*node).name);
    assert_eq!(h.app.state.selection.map(|s| (s.view, s.node)), Some((View::Aot, *node)));

    // The dynamo nodes of the same line are highlighted: listed in the inspector, and drawn
    // highlighted once jumped to.
    let d = dynamo.node(earlier[0]);
    let link = format!("in dynamo: {} (", d.name);
    h.expect(|l| l.starts_with(&link), "the inspector's link to the dynamo node");
    assert!(h.app.state.related(View::Dynamo).contains(&earlier[0]));
    h.click_label(|l| l.starts_with(&link), "the dynamo link");
    h.expect(|l| l.starts_with("dynamo node: ") && l.contains(&d.name) && l.ends_with("[highlighted]"), "the highlighted dynamo box");

    // Key 1 goes back to the decomposition views.
    h.key(Key::Num1, Modifiers::NONE);
    assert!(h.app.state.stages.is_none());
    h.expect(|l| l.starts_with("original (1)"), "the original pane header");
}

#[test]
fn a_multi_graph_model_lets_the_user_pick_the_original() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/traces/trace_default.log.gz");
    let mut h = Harness::new(Source::File(path));
    let graphs: Vec<String> = h.app.state.doc.as_ref().unwrap().model.graphs.iter().map(|g| g.name.clone()).collect();
    assert!(graphs.len() > 1);
    let picker = h.find_role(Role::ComboBox, "original graph");
    h.action(picker, Action::Default, None);
    let want = format!("graph: {}", graphs[1]);
    h.click_label(|l| l == want, "the second graph's entry");
    assert_eq!(h.app.state.original().unwrap().name, graphs[1]);
    assert!(h.app.state.pane(View::Lite).layout.is_some());
}

#[test]
fn a_failed_profile_shows_its_error_and_the_app_goes_on() {
    let mut h = Harness::new(Source::Embedded);
    let l0 = h.app.state.profile.devices.iter().find(|d| d.backend.name() != "opencl" && d.backend.name() != "reference").cloned().unwrap();
    if l0.available {
        eprintln!("skipped: Level Zero is available here, so the profile would not fail");
        return;
    }
    // The picker greys it out; a stale pick (a device that went away) reaches the run anyway.
    let ctx = h.ctx.clone();
    h.app.apply(xpu_workbench::ui::Command::PickDevice(l0.backend), &ctx);
    h.key(Key::R, Modifiers::COMMAND);
    let p = &h.app.state.profile;
    assert!(p.running.is_none() && p.result.is_none());
    let error = p.error.clone().expect("an error");
    h.expect(|l| l.starts_with("profile failed: ") && l.contains(&error), "the error in the profile panel");
    // The app still answers: pick the reference interpreter and profile.
    h.pick_device("reference");
    let r = h.run_profile();
    assert!(!r.rows.is_empty());
    assert!(h.app.state.profile.error.is_none());
}

fn sample(name: &str) -> Source {
    Source::File(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(name))
}

impl Harness {
    /// Two clicks at the centre of the displayed node, a frame apart: a double-click.
    fn double_click_on(&mut self, node: &Node) {
        let b = node.bounds().expect("bounds");
        let at = pos2(((b.x0 + b.x1) / 2.0) as f32, ((b.y0 + b.y1) / 2.0) as f32);
        // Far enough (in egui's time, 1/60 s a frame) from any earlier click not to make a triple.
        for _ in 0..40 {
            self.frame();
        }
        self.events.push(Event::PointerMoved(at));
        self.frame();
        for _ in 0..2 {
            for pressed in [true, false] {
                self.events.push(Event::PointerButton { pos: at, button: PointerButton::Primary, pressed, modifiers: Modifiers::NONE });
                self.frame();
            }
        }
        self.settle();
    }
}

#[test]
fn a_transformer_opens_folded_to_its_layers_and_double_click_opens_and_folds() {
    let mut h = Harness::new(sample("tiny_llama_auto.pt2"));
    let layout = h.app.state.pane(View::Original).layout.clone().expect("laid out");
    assert!(layout.items.len() <= 50, "{} boxes on the first view", layout.items.len());
    // Each layer is one box that says what it holds.
    let (_, layer) = h.expect(|l| l.starts_with("original module: ▸ model.layers.0 LlamaDecoderLayer"), "the folded first layer");
    let text = layer.name().unwrap().to_string();
    assert!(text.contains(" ops") && text.contains(" → ") && text.contains("decomposed in lite"), "{text}");
    // The first view is readable: boxes at zoom >= 8/11 (text at least 8 px), the top of the graph.
    let cam = h.app.state.pane(View::Original).camera;
    assert!(cam.zoom >= xpu_workbench::ui::canvas::TEXT_ZOOM - 1e-4, "zoom {}", cam.zoom);
    h.expect(|l| l.starts_with("original node: input · input_ids") || l.starts_with("original module: "), "the top of the graph");

    // Hovering it lists its ops by count and every input and output shape.
    let b = layer.bounds().unwrap();
    h.events.push(Event::PointerMoved(pos2(((b.x0 + b.x1) / 2.0) as f32, ((b.y0 + b.y1) / 2.0) as f32)));
    for _ in 0..45 {
        h.frame();
    }
    let (_, tip) = h.expect(|l| l.starts_with("model.layers.0: 67 ops"), "the folded layer's hover text");
    let tip = tip.name().unwrap().to_string();
    assert!(tip.contains("7 × linear") && tip.contains("in:") && tip.contains("out:"), "{tip}");

    h.double_click_on(&layer);
    assert!(!h.app.state.collapsed.contains("model.layers.0"), "the layer opened");
    assert!(h.app.state.collapsed.contains("model.layers.0.self_attn"), "its children stay folded");
    h.expect(|l| l == "original open module: ▾ model.layers.0 · LlamaDecoderLayer", "the open layer's frame title");
    h.expect(|l| l.starts_with("original module: ▸ model.layers.0.self_attn"), "the folded attention inside it");
    // The breadcrumbs say where the user is; their fold button folds it again.
    h.expect(|l| l == "breadcrumb: model", "the outer crumb");
    h.expect(|l| l == "breadcrumb: model.layers.0", "the current crumb");
    let fold = h.find_role(Role::Button, "fold");
    h.action(fold, Action::Default, None);
    assert!(h.app.state.collapsed.contains("model.layers.0"));
    let (_, layer) = h.expect(|l| l.starts_with("original module: ▸ model.layers.0 "), "the folded layer again");

    // Double-click on the folded box again, then on its frame's title: open, then fold.
    h.double_click_on(&layer);
    let (_, title) = h.expect(|l| l == "original open module: ▾ model.layers.0 · LlamaDecoderLayer", "the frame title");
    h.double_click_on(&title);
    assert!(h.app.state.collapsed.contains("model.layers.0"), "double-click on the title folds it");
}

/// A profiled model opens folded: under the heat overlay each folded module carries its nodes'
/// summed device time and share, and is coloured by it (issue 28: a profiled model showed no heat
/// until every box was opened).
#[test]
fn folded_modules_carry_their_device_time_under_the_heat_overlay() {
    let mut h = Harness::new(sample("zoo/torch-2.15/resnet.pt2"));
    h.pick_device("reference");
    let r = h.run_profile();
    h.click_label(|l| l == "heat overlay", "the heat toggle");
    h.settle();
    let g = h.app.state.original().unwrap();
    let layout = h.app.state.pane(View::Original).layout.clone().unwrap();
    let groups: Vec<(String, Vec<xpu_workbench::ir::NodeId>)> = layout
        .items
        .iter()
        .filter_map(|it| match &it.kind {
            xpu_workbench::ui::layout::ItemKind::Group { path, members, .. } => Some((path.clone(), members.clone())),
            _ => None,
        })
        .collect();
    assert!(groups.len() >= 2, "ResNet opens folded: {} module boxes", groups.len());
    let mut shown = 0;
    for (path, members) in &groups {
        // The box's number is the sum of its nodes' device times in the result.
        let sum: u64 = members.iter().filter_map(|m| r.node_ns.get(&g.node(*m).name)).sum();
        let prefix = format!("original module: ▸ {path} ");
        let Some((_, node)) = h.find(|l| l.starts_with(&prefix)) else { continue };
        let text = node.name().unwrap().to_string();
        if sum > 0 {
            assert!(text.contains(&format!("{} · ", xpu_workbench::ui::profiling::micros(sum))) && text.contains("% of device time"), "{text} vs {sum} ns");
            shown += 1;
        }
    }
    assert!(shown >= 1, "no folded module box on screen said its device time");
    h.click_label(|l| l == "heat overlay", "the heat toggle");
    assert!(h.find(|l| l.starts_with("original module: ") && l.contains("% of device time")).is_none());
}

#[test]
fn the_problems_panel_lists_a_decomposition_error_and_links_to_its_node() {
    // ResNet with its global pool given three output sizes (a 2-D pool takes two): the rule's
    // `_adaptive_avg_pool2d` cannot be formed, so full mode fails naming the node. (A 2×2 pool
    // decomposes since non-global adaptive pooling has a rule.)
    let bytes = common::edit_model_json("zoo/torch-2.15/resnet.pt2", |m| {
        for n in m["graph_module"]["graph"]["nodes"].as_array_mut().unwrap() {
            if n["target"] == "torch.ops.aten.adaptive_avg_pool2d.default" {
                n["inputs"][1]["arg"] = serde_json::json!({"as_ints": [2, 2, 2]});
            }
        }
    });
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("resnet_pool2x2.pt2");
    std::fs::write(&path, bytes).unwrap();
    let mut h = Harness::new(Source::File(path));
    h.expect(|l| l.starts_with("full decomposition failed: decomposing node `adaptive_avg_pool2d`"), "the full-mode error");
    h.expect(|l| l.contains("1 problems") || l.contains("problems"), "the status bar count");
    h.click_label(|l| l == "problem: go to adaptive_avg_pool2d", "the link to the failing node");
    let sel = h.app.state.selection.expect("the link selects the node");
    assert_eq!(sel.view, View::Original);
    assert_eq!(h.app.state.original().unwrap().node(sel.node).name, "adaptive_avg_pool2d");
    // Its one-node module is not folded away: the node shows.
    assert!(!h.app.state.collapsed.contains("avgpool"));
    h.expect(|l| l.starts_with("original node: adaptive_avg_pool2d"), "the failing node's box");
}

#[test]
fn swin_writes_through_views_are_functionalized_not_problems() {
    // Swin's attention mask is written through views (`fill_` of a `slice`): every mode
    // functionalizes it, so no view reports a decomposition error or a lite violation for it.
    let h = Harness::new(sample("zoo/torch-2.15/swin.pt2"));
    let labels = h.labels();
    assert!(!labels.iter().any(|l| l.contains("decomposition failed")), "{labels:#?}");
    assert!(!labels.iter().any(|l| l.starts_with("problem: go to fill_")), "{labels:#?}");
}

#[test]
fn every_guard_is_listed_and_unbounded_ranges_take_any_value() {
    let mut h = Harness::new(sample("guarded.pt2"));
    let model = h.app.state.doc.as_ref().unwrap().model.clone();
    assert_eq!(model.guards.len() + model.unread_guards.len(), 14, "the archive's 14 guards_code entries");
    h.expect(|l| l == "Guards (14)", "the guard heading counts all of them");
    // `torch.sym_max` guards were once left unread; they parse now and are evaluated like the rest.
    assert!(model.unread_guards.is_empty(), "{:?}", model.unread_guards);
    h.expect(|l| l == "Eq(Max(1, s27//4), s27//4)  (hint: true, now: true)", "the sym_max guard, evaluated");
    assert!(h.find(|l| l.contains("is not evaluated")).is_none(), "no unread guard in the problems panel");
    h.expect(|l| l.contains("∈ [2, ∞)"), "the range written with ∞");

    // An unbounded range: the slider ends at a soft maximum; the text box takes any legal value.
    let sym = model.symbols[0].name.clone();
    let slider = h.find_role(Role::Slider, &sym);
    let node = h.nodes.iter().find(|(id, _)| *id == slider).unwrap().1.clone();
    let soft = node.max_numeric_value().unwrap();
    assert!((64.0..=4096.0).contains(&soft), "soft maximum {soft}");
    h.expect(|l| l.starts_with(&format!("slider to {soft}")), "the note on the soft maximum");
    let text = h
        .nodes
        .iter()
        .filter(|(_, n)| n.role() == Role::TextInput)
        .map(|(id, _)| *id)
        .next()
        .expect("the first symbol's text box");
    h.action(text, Action::Focus, None);
    h.key(Key::A, Modifiers::COMMAND);
    h.type_text("100000");
    assert_eq!(h.app.state.bindings.get(&sym), Some(100000));
    let node = h.nodes.iter().find(|(_, n)| n.role() == Role::Slider && n.name() == Some(sym.as_str())).unwrap().1.clone();
    assert!(node.max_numeric_value().unwrap() >= 100000.0, "the slider follows a typed value");
}

impl Harness {
    /// Drags with the primary button from `from` by `by`, in a few moves.
    fn drag(&mut self, from: egui::Pos2, by: egui::Vec2) {
        self.events.push(Event::PointerMoved(from));
        self.frame();
        self.events.push(Event::PointerButton { pos: from, button: PointerButton::Primary, pressed: true, modifiers: Modifiers::NONE });
        self.frame();
        for k in 1..=4 {
            self.events.push(Event::PointerMoved(from + by * (k as f32 / 4.0)));
            self.frame();
        }
        self.events.push(Event::PointerButton { pos: from + by, button: PointerButton::Primary, pressed: false, modifiers: Modifiers::NONE });
        self.frame();
        self.settle();
    }
}

#[test]
fn the_views_move_together_unless_told_not_to() {
    let mut h = Harness::new(sample("tiny_llama_auto.pt2"));
    let (_, pane) = h.expect(|l| l.starts_with("original (1)"), "the original pane header");
    let b = pane.bounds().unwrap();
    let start = pos2(b.x0 as f32 + 40.0, b.y1 as f32 + 300.0);
    let lite_before = h.app.state.pane(View::Lite).camera;
    let orig_before = h.app.state.pane(View::Original).camera;
    h.drag(start, egui::vec2(0.0, -200.0));
    let orig = h.app.state.pane(View::Original).camera;
    let lite = h.app.state.pane(View::Lite).camera;
    assert!(orig.center.y > orig_before.center.y + 50.0, "the drag panned the original view");
    // It follows the content (the same node at the same place on screen), not the distance, so
    // the two moves differ by how the two layouts differ.
    let (moved, followed) = (orig.center.y - orig_before.center.y, lite.center.y - lite_before.center.y);
    assert!(followed > moved * 0.5, "the lite view followed: {lite_before:?} -> {lite:?} ({moved} in the original)");
    assert_eq!(lite.zoom, orig.zoom);

    h.click_label(|l| l == "move views together", "the checkbox");
    assert!(!h.app.state.sync_cameras);
    h.drag(start, egui::vec2(0.0, -200.0));
    assert_eq!(h.app.state.pane(View::Lite).camera.center, lite.center, "the lite view stays");
}

/// The model zoo's archives (`samples/zoo/torch-*/`, or `XPU_WORKBENCH_ZOO=DIR`), if there are any.
fn zoo_models() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/zoo");
    let dirs: Vec<std::path::PathBuf> = match std::env::var_os("XPU_WORKBENCH_ZOO") {
        Some(d) => vec![d.into()],
        None => std::fs::read_dir(&root).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default(),
    };
    let mut out: Vec<std::path::PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).map(|r| r.flatten().map(|e| e.path()).collect::<Vec<_>>()).unwrap_or_default())
        .filter(|p| p.extension().is_some_and(|e| e == "pt2"))
        .collect();
    out.sort();
    out
}

#[test]
fn every_zoo_model_opens_folded_readable_with_its_guards_and_problems() {
    let models = zoo_models();
    if models.is_empty() {
        eprintln!("skipped: no samples/zoo/ yet (the zoo branch) and XPU_WORKBENCH_ZOO unset");
        return;
    }
    for path in models {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let h = Harness::new(Source::File(path.clone()));
        let model = h.app.state.doc.as_ref().unwrap_or_else(|| panic!("{name} did not open")).model.clone();
        let layout = h.app.state.pane(View::Original).layout.clone().expect("laid out");
        let outermost: std::collections::BTreeSet<String> =
            layout.hierarchy.groups.iter().filter(|g| g.parent.is_none()).map(|g| g.path.clone()).collect();
        let most_folded = layout.hierarchy.boxes(&outermost);
        assert!(
            layout.items.len() <= 50.max(most_folded),
            "{name}: {} boxes on the first view (folded to the outermost modules: {most_folded})",
            layout.items.len()
        );
        // A graph that fits in 50 boxes opens with everything open.
        if layout.hierarchy.boxes(&Default::default()) > 50 {
            let folded = layout.items.iter().any(|i| matches!(i.kind, xpu_workbench::ui::layout::ItemKind::Group { .. }));
            assert!(folded, "{name}: opens with no module folded");
        }
        let cam = h.app.state.pane(View::Original).camera;
        assert!(cam.zoom >= xpu_workbench::ui::canvas::TEXT_ZOOM - 1e-4, "{name}: first view at zoom {}", cam.zoom);
        let guards = model.guards.len() + model.unread_guards.len();
        h.expect(|l| l == format!("Guards ({guards})"), &format!("{name}: every guard listed"));
        for v in [View::Lite, View::Full] {
            if let Some(e) = &h.app.state.pane(v).error {
                h.expect(|l| l.contains(e.as_str()), &format!("{name}: the {} error in the problems panel", v.name()));
            }
            if let Some((e, _)) = &h.app.state.pane(v).lower_error {
                let line = format!("{} does not lower to kernels: {e}", v.name());
                h.expect(|l| l == line, &format!("{name}: the {} lowering error in the problems panel", v.name()));
            }
        }
        println!("{name}: {} boxes, {} guards, zoom {:.2}", layout.items.len(), guards, cam.zoom);
    }
}

/// PyTorch's lite-mode case in the app: on the XPU target (torch 2.11's kernels) the unmarked
/// `_fused_rms_norm` is expanded in the lite view, in its own colour, with the reason in the
/// inspector; Ctrl+B moves the target to CUDA, which keeps it whole.
#[test]
fn the_lite_target_backend_expands_what_it_has_no_kernel_for() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/lite/fused_rms_norm.pt2");
    let mut h = Harness::new(Source::File(path));
    assert_eq!(h.app.state.target_backend, Some(xpu_workbench::ops::Backend::Xpu));
    assert_eq!(h.app.state.backend_table.as_deref(), Some("2.11.0"));
    let g = h.app.state.original().unwrap().clone();
    let rms = g.node_ids().find(|&id| g.node(id).target == "aten._fused_rms_norm.default").expect("the op");
    assert_eq!(h.app.state.pane(View::Original).classes[rms.index()], NodeClass::BackendExpanded);
    let products = h.app.state.products(View::Lite, rms);
    let lite = h.app.state.pane(View::Lite);
    let lite_graph = lite.graph.clone().unwrap();
    let ops: Vec<&str> = products.iter().map(|p| lite_graph.node(*p).target.as_str()).collect();
    assert!(ops.contains(&"aten.rsqrt.default") && ops.contains(&"aten.mean.dim"), "{ops:?}");
    for p in &products {
        assert_eq!(lite.classes[p.index()], NodeClass::BackendExpanded);
    }
    h.expect(|l| l == "lite target", "the lite target picker");
    h.key(Key::Num1, Modifiers::NONE);
    h.search_and_jump("_fused_rms_norm");
    h.expect(|l| l.starts_with("Expanded by the lite target:") && l.contains("XPU has no kernel for aten._fused_rms_norm"), "the reason");

    h.key(Key::B, Modifiers::COMMAND);
    assert_eq!(h.app.state.target_backend, Some(xpu_workbench::ops::Backend::Cuda));
    let products = h.app.state.products(View::Lite, rms);
    assert_eq!(products.len(), 1, "CUDA has the kernel: kept whole");
    assert_eq!(h.app.state.pane(View::Lite).classes[products[0].index()], NodeClass::Fallback);
    assert!(h.find(|l| l.starts_with("Expanded by the lite target:")).is_none());
}

/// A CPU lite log of PyTorch's test case in the stage views: check-lite's verdict colours the
/// dynamo node teal (the backend had no kernel) and the AOT ops it became, and the inspector says why.
#[test]
fn stage_views_show_check_lite_on_the_compile() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/lite/rms_cpu_lite_2.11.0.log.gz");
    let mut h = Harness::new(Source::File(path));
    let picker = h.find_role(Role::ComboBox, "compile id");
    h.action(picker, Action::Default, None);
    h.click_label(|l| l == "stages of compile 0/0", "the compile id 0/0 entry");
    let dynamo = h.app.state.pane(View::Dynamo).graph.clone().expect("a dynamo graph");
    let rms = dynamo.node_ids().find(|&n| dynamo.node(n).target == "aten._fused_rms_norm").expect("the op");
    assert_eq!(h.app.state.pane(View::Dynamo).classes[rms.index()], NodeClass::BackendExpanded);
    let aot = h.app.state.pane(View::Aot).graph.clone().expect("an AOT graph");
    let rsqrt = aot.node_ids().find(|&n| aot.node(n).target == "aten.rsqrt.default").expect("rsqrt");
    assert_eq!(h.app.state.pane(View::Aot).classes[rsqrt.index()], NodeClass::BackendExpanded);
    h.click_label(|l| l.starts_with("dynamo graph of compile"), "the dynamo pane header");
    h.search_and_jump("_fused_rms_norm");
    h.expect(|l| l.contains("CPU has no kernel for aten._fused_rms_norm"), "the inspector's check-lite reason");
}

/// A torch.profiler trace of a real compiled run (Llama, torch 2.11, H100) imported into the app
/// on top of its TORCH_TRACE log: the profile panel and the heat overlay show it as they would a
/// run of our own, with device time on the log's graph nodes.
#[test]
fn an_imported_profiler_trace_feeds_the_profile_panel_and_heat() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/inductor");
    let mut h = Harness::new(Source::File(dir.join("cuda211_llama_default.log.gz")));
    let cmd = xpu_workbench::ui::Command::ImportProfile(dir.join("cuda211_llama_default.profile.json.gz"));
    h.app.apply(cmd, &h.ctx.clone());
    h.settle();
    let p = &h.app.state.profile;
    assert!(p.error.is_none(), "{:?}", p.error);
    let r = p.result.clone().expect("an imported profile");
    assert!(r.imported && p.heat);
    assert!(!r.rows.is_empty() && r.max_node_ns > 0);
    // The heat lands on nodes of the log's graphs shown in the app.
    let g = h.app.state.original().unwrap().clone();
    let hot = g.nodes.iter().filter(|n| p.node_ns(View::Original, &n.name).is_some_and(|ns| ns > 0)).count();
    assert!(hot > 0, "no node of {} has device time; profiled nodes: {:?}", g.name, r.node_ns.keys().take(8).collect::<Vec<_>>());

    // Without a log open, the import says what it needs.
    let mut h = Harness::new(Source::Embedded);
    h.app.apply(xpu_workbench::ui::Command::ImportProfile(dir.join("cuda211_llama_default.profile.json.gz")), &h.ctx.clone());
    h.settle();
    assert!(h.app.state.profile.error.as_deref().is_some_and(|e| e.contains("TORCH_TRACE log")));
}
