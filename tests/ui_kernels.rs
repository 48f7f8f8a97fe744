//! The kernels stage of a real TORCH_TRACE log in the app, driven headlessly through AccessKit:
//! nodes grouped by the Inductor kernel computing them, a kernel picked in the list or in the
//! graph shows its source and lights its nodes up in every stage.

mod common;

use common::sample;
use common::ui::Harness;
use egui::accesskit::{Action, Role};
use xpu_workbench::import::trace::{self, KernelKind, KernelSource};
use xpu_workbench::ui::{Command, Source, View};

/// The names of the nodes highlighted in `view`, sorted.
fn names(h: &Harness, v: View) -> Vec<String> {
    let g = h.app.state.pane(v).graph.clone().unwrap();
    let mut n: Vec<String> = h.app.state.related(v).into_iter().map(|id| g.node(id).name.clone()).collect();
    n.sort();
    n
}

/// The first compile of `log` with output code, and its kernels as `kernels` lists them.
fn compile_with_kernels(log: &std::path::Path) -> (String, Vec<trace::Kernel>) {
    let l = trace::load_log(log).unwrap();
    let c = l.compiles.iter().find(|c| !c.output_code.is_empty()).expect("a compile with output code");
    (c.id.to_string(), trace::kernels(c, &l.file_access()).into_iter().flat_map(|t| t.kernels).collect())
}

fn show_stages(h: &mut Harness, id: &str) {
    let picker = h.find_role(Role::ComboBox, "compile id");
    h.action(picker, Action::Default);
    let entry = format!("stages of compile {id}");
    h.click_label(|l| l == entry, "the compile's entry");
}

#[test]
fn the_kernels_stage_groups_nodes_by_kernel_and_shows_a_kernels_source() {
    let path = sample("inductor/cpu215_llama_default.log.gz");
    let (id, kernels) = compile_with_kernels(&path);
    let mut h = Harness::new(Source::File(path));
    show_stages(&mut h, &id);
    assert!(h.app.state.kernels.error.is_none(), "{:?}", h.app.state.kernels.error);
    h.expect(|l| l == format!("kernels graph of compile {id}"), "the kernels pane header");
    let stage = h.app.state.kernels.stage.clone().expect("the kernels stage");
    assert_eq!(stage.kernels.len(), kernels.len(), "every kernel of the log, as `kernels` lists them");

    // Every node a kernel computes sits in that kernel's group (the first kernel's, where a
    // later one recomputes it: Inductor recomputes cheap views inside fused kernels), and each
    // kernel is one folded box.
    let g = h.app.state.pane(View::Kernels).graph.clone().unwrap();
    let layout = h.app.state.pane(View::Kernels).layout.clone().unwrap();
    let mut owner: std::collections::BTreeMap<&str, &str> = Default::default();
    for k in &kernels {
        for n in &k.post_grad_nodes {
            owner.entry(n.as_str()).or_insert(k.name.as_str());
        }
    }
    for (n, k) in &owner {
        let node = g.node(g.node_by_name(n).unwrap_or_else(|| panic!("{k}: post-grad node {n} not in the graph")));
        let frames: Vec<&str> = node.meta.nn_module_stack.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(frames, [*k], "{n}");
    }
    let groups = layout.items.iter().filter(|i| matches!(i.kind, xpu_workbench::ui::layout::ItemKind::Group { .. })).count();
    let owners: std::collections::BTreeSet<&str> = owner.values().copied().collect();
    assert_eq!(groups, owners.len(), "one folded box per kernel");

    // Pick a C++ kernel in the list: its source shows, its nodes light up in every stage.
    let (ki, cpp) = kernels.iter().enumerate().find(|(_, k)| k.kind == KernelKind::Cpp && k.nodes.len() >= 2).expect("a fused C++ kernel");
    let entry = format!("kernel: {} (C++ kernel)", cpp.name);
    h.click_label(|l| l == entry, "the kernel's list entry");
    assert_eq!(h.app.state.kernels.selected, Some(ki));
    let (_, src) = h.expect(|l| l.starts_with(&format!("kernel source (c++) of {}: ", cpp.name)), "the kernel's source");
    let KernelSource::Code { text, .. } = &cpp.source else { panic!("{}: no inline source", cpp.name) };
    assert!(src.name().unwrap().ends_with(text.as_str()) && text.contains("extern \"C\""), "the log's C++ source, whole");
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    assert_eq!(names(&h, View::Kernels), sorted(&cpp.post_grad_nodes));
    assert_eq!(names(&h, View::PostGrad), sorted(&cpp.post_grad_nodes));
    assert_eq!(names(&h, View::Dynamo), sorted(&cpp.nodes), "the original nodes it came from");
    let boxed = format!("kernels module: ▸ {} C++ kernel", cpp.name);
    h.expect(|l| l.starts_with(&boxed) && l.ends_with("[highlighted]"), "the kernel's box, brought into view and highlighted");

    // Pick another kernel by its box in the graph: a library GEMM, which has no source.
    let (_, shown) = h.expect(|l| l.starts_with("kernels module: ▸ extern_kernels.mm"), "a GEMM's box on screen");
    let name = shown.name().unwrap().trim_start_matches("kernels module: ▸ ").split(' ').next().unwrap().to_string();
    let (mi, mm) = kernels.iter().enumerate().find(|(_, k)| k.name == name).expect("the GEMM among the kernels");
    assert_eq!(mm.kind, KernelKind::Extern);
    h.click_label(|l| l.starts_with(&format!("kernels module: ▸ {name} ")), "the GEMM's box");
    assert_eq!(h.app.state.kernels.selected, Some(mi));
    h.expect(|l| l.starts_with(&format!("kernel source of {}: no source: `extern_kernels.mm` is a library", mm.name)), "why there is no source");
    assert_eq!(names(&h, View::Dynamo), sorted(&mm.nodes));

    // Four stages side by side are narrow: each can be hidden.
    let aot = h.find_role(Role::CheckBox, "aot");
    h.action(aot, Action::Default);
    assert!(h.find(|l| l.starts_with("aot graph of compile")).is_none(), "the AOT pane is hidden");
    h.expect(|l| l == format!("kernels graph of compile {id}"), "the kernels pane, still shown");

    // Back to the decomposition views: nothing is picked any more.
    h.apply(Command::ShowStages(None));
    assert!(h.app.state.kernels.stage.is_none() && h.app.state.kernels.selected.is_none());
}

/// A lite log: every node a fallback, each its own kernel; the marked node alone is generated.
#[test]
fn a_lite_logs_kernels_stage_shows_the_fallbacks_and_the_one_generated_kernel() {
    let path = sample("inductor/cpu215_symviews_marked_lite.log.gz");
    let (id, kernels) = compile_with_kernels(&path);
    let mut h = Harness::new(Source::File(path));
    show_stages(&mut h, &id);
    let stage = h.app.state.kernels.stage.clone().expect("the kernels stage");
    let generated: Vec<&str> = stage.kernels.iter().filter(|k| k.kind == KernelKind::Cpp).map(|k| k.name.as_str()).collect();
    assert_eq!(generated, ["cpp_fused_relu_0"]);
    assert_eq!(stage.kernels.len(), kernels.len());
    h.expect(|l| l == "kernel: cpp_fused_relu_0 (C++ kernel)", "the generated kernel in the list");
    h.expect(|l| l.starts_with("kernel: aten.reshape.default"), "a fallback in the list");
}

/// A log that holds only the output code's path, on a machine where that file is not: the
/// kernels stage says so instead of showing an empty list as if there were no kernels.
#[test]
fn a_log_with_only_the_output_codes_path_says_the_sources_are_not_here() {
    use std::io::{Read, Write};
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(sample("inductor/cpu215_symviews_marked_lite.log.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    // Drop the output code's payload (its tab-indented lines) and the envelope's payload hash.
    let mut out = String::new();
    let mut skipping = false;
    for line in text.lines() {
        if skipping && line.starts_with('\t') {
            continue;
        }
        skipping = false;
        if line.contains("{\"inductor_output_code\"") {
            let cut = line.find(", \"has_payload\"").expect("a payload hash");
            out.push_str(&line[..cut]);
            out.push_str("}\n");
            skipping = true;
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    let dir = std::env::temp_dir().join(format!("xpu-wb-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("path_only.log");
    std::fs::File::create(&log).unwrap().write_all(out.as_bytes()).unwrap();
    let (id, kernels) = compile_with_kernels(&log);
    assert!(kernels.is_empty());
    let mut h = Harness::new(Source::File(log));
    show_stages(&mut h, &id);
    h.expect(|l| l.starts_with("note: the log holds only the path of the output code") && l.contains("not on this machine"), "the note");
    std::fs::remove_dir_all(&dir).ok();
}

/// Lite against default in the app: the open default-mode Llama log (A) compared with the lite
/// one (B), each with its torch.profiler trace (torch 2.11, H100), as `kernels A --against B`
/// compares them.
#[test]
fn the_app_compares_a_lite_log_with_the_default_one_as_the_cli_does() {
    use xpu_workbench::ui::comparing::CompareInputs;
    let p = |n: &str| sample(&format!("inductor/cuda211_llama_{n}"));
    let mut h = Harness::new(Source::File(p("default.log.gz")));
    h.apply(Command::Compare(CompareInputs {
        other: Some(p("lite.log.gz")),
        profile_a: Some(p("default.profile.json.gz")),
        profile_b: Some(p("lite.profile.json.gz")),
    }));
    let c = &h.app.state.compare;
    assert!(c.error.is_none(), "{:?}", c.error);
    let r = c.result.clone().expect("a comparison");

    let (code, out, err) = common::run_cli(&[
        "kernels",
        p("default.log.gz").to_str().unwrap(),
        "--profile",
        p("default.profile.json.gz").to_str().unwrap(),
        "--against",
        p("lite.log.gz").to_str().unwrap(),
        "--against-profile",
        p("lite.profile.json.gz").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let cli: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cli = &cli["comparison"];
    assert_eq!(r.a.generated as u64, cli["a"]["generated"].as_u64().unwrap());
    assert_eq!(r.b.fallback as u64, cli["b"]["fallback"].as_u64().unwrap());
    assert_eq!(r.nodes.len(), cli["nodes"].as_array().unwrap().len());
    let (a_us, b_us) = (r.a.device_us.unwrap(), r.b.device_us.unwrap());
    assert!((a_us - cli["a"]["device_us"].as_f64().unwrap()).abs() < 1e-6);

    // What the window shows: counts, and each node run differently with its times.
    let gen = format!("compare generated kernels: A {}, B 0, B − A -{}", r.a.generated, r.a.generated);
    h.expect(|l| l == gen, "the generated-kernel counts");
    let time = format!("compare device time: A {a_us:.1} µs, B {b_us:.1} µs, B − A {:+.1} µs", b_us - a_us);
    h.expect(|l| l == time, "the total device times");
    assert!(b_us > a_us, "lite mode runs every node as its own ATen kernel: slower than the fused graph");
    h.expect(|l| l.starts_with("compare node silu: A fused, B fallback, A ") , "silu: fused in default, a fallback in lite");
    let changed = r.nodes.iter().filter(|d| d.a != d.b).count();
    h.expect(|l| l == format!("{changed} of {} original nodes ran differently", r.nodes.len()), "the count of nodes run differently");
}

/// `xpu-workbench LOG --stages ID --kernel NAME`: the app opens there, the kernel picked and shown
/// beside the dynamo graph.
#[test]
fn the_app_opens_a_log_at_a_compiles_kernel() {
    let path = sample("inductor/cuda211_llama_default.log.gz");
    let (id, kernels) = compile_with_kernels(&path);
    let k = kernels.iter().position(|k| k.kind == KernelKind::Triton).expect("a Triton kernel");
    let ctx = egui::Context::default();
    let mut app = xpu_workbench::ui::App::new(Source::File(path), None);
    app.show_stages_when_open(id.clone(), Some(kernels[k].name.clone()));
    let start = std::time::Instant::now();
    while app.state.kernels.selected.is_none() {
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "never picked; {:?}", app.state.messages);
        let input = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(egui::pos2(0.0, 0.0), egui::vec2(1600.0, 1000.0))),
            ..Default::default()
        };
        let _ = ctx.run(input, |ctx| app.ui(ctx));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(app.state.kernels.selected, Some(k));
    assert_eq!(app.state.stages.as_ref().map(|s| s.compile_id.clone()), Some(id));
    assert_eq!(app.state.stages_shown, [true, false, false, true], "dynamo and kernels");
}
