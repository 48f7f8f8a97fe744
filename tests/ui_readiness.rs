//! XPU readiness in the app, driven headlessly through AccessKit on real torch 2.15 artifacts
//! (scripts/gen_xpu_readiness_samples.py): the lite view colours the ops XPU's ATen sends to the
//! CPU (torch-xpu-ops' fallback list) or has nothing for, the inspector and the problems panel say
//! why and from which source, folded modules count them — from a `.pt2` and from a TORCH_TRACE log,
//! with the statuses `xpu-workbench readiness` prints (tests/readiness.rs). On CUDA and CPU the same
//! nodes are kept whole as plain eager fallbacks.

mod common;

use common::sample;
use common::ui::Harness;
use xpu_workbench::ir::{Graph, NodeId};
use xpu_workbench::ops::Backend;
use xpu_workbench::ui::layout::ItemKind;
use xpu_workbench::ui::state::NodeClass;
use xpu_workbench::ui::{groups, Command, Source, View};

fn node(g: &Graph, target: &str) -> NodeId {
    g.node_ids().find(|&id| g.node(id).target == target).unwrap_or_else(|| panic!("no {target} in {}", g.name))
}

/// The class of original node `id` in the original view and of what it became in the lite view.
fn classes(h: &Harness, id: NodeId) -> (NodeClass, Vec<NodeClass>) {
    let s = &h.app.state;
    let lite = &s.pane(View::Lite).classes;
    (s.pane(View::Original).classes[id.index()], s.products(View::Lite, id).iter().map(|p| lite[p.index()]).collect())
}

const FALLBACKS: [&str; 2] = ["aten.cholesky_inverse.default", "aten.linalg_matrix_exp.default"];

/// What the `.pt2` and the log share: the ops of torch 2.15's list drawn as CPU fallbacks in the
/// original and lite views, `linalg_lu` as not implemented, `dot` (an XPU kernel since 2.11) as a
/// plain kept op; the problems panel's link leads to the node, whose inspector names the list.
fn check_xpu(h: &mut Harness) {
    assert_eq!(h.app.state.target_backend, Some(Backend::Xpu));
    assert_eq!(h.app.state.backend_table.as_deref(), Some("2.15.0"));
    let g = h.app.state.original().unwrap().clone();
    for t in FALLBACKS {
        assert_eq!(classes(h, node(&g, t)), (NodeClass::CpuFallback, vec![NodeClass::CpuFallback]), "{t}");
    }
    assert_eq!(classes(h, node(&g, "aten.linalg_lu.default")), (NodeClass::NotImplemented, vec![NodeClass::NotImplemented]));
    assert_eq!(classes(h, node(&g, "aten.dot.default")), (NodeClass::Plain, vec![NodeClass::Fallback]));
    h.expect(|l| l == "falls back to CPU", "the legend entry");
    h.expect(|l| l == "not implemented on the target", "the legend entry");

    h.click_label(|l| l == "problem: go to cholesky_inverse", "the problems panel's link to cholesky_inverse");
    let ci = node(&g, "aten.cholesky_inverse.default");
    assert_eq!(h.app.state.selection.map(|s| (s.view, s.node)), Some((View::Original, ci)));
    h.expect(|l| l.starts_with("lite on XPU: `cholesky_inverse` is in the CPU-fallback list of torch-xpu-ops main"), "the problem line");
    let (_, reason) = h.expect(|l| l.starts_with("Falls back to the CPU: "), "the inspector's reason");
    let reason = reason.name().unwrap_or_default().to_string();
    for part in ["`cholesky_inverse`", "torch-xpu-ops main", "XPUFallback", "torch 2.15.0", "copied to the host"] {
        assert!(reason.contains(part), "{part:?} not in {reason:?}");
    }
    h.expect(|l| l == "cpu_fallback (cholesky_inverse, torch 2.15.0)", "the inspector's status row");
    // The node lite keeps, through the inspector's provenance link: the same reason.
    let name = g.node(ci).name.clone();
    h.click_label(|l| l == format!("in lite: {name} (cholesky_inverse)"), "the link to the lite node");
    assert_eq!(h.app.state.selection.map(|s| s.view), Some(View::Lite));
    h.expect(|l| l.starts_with("Falls back to the CPU: ") && l.contains("torch-xpu-ops main"), "the reason on the lite node");

    h.click_label(|l| l == "problem: go to linalg_lu", "the problems panel's link to linalg_lu");
    let (_, missing) = h.expect(|l| l.starts_with("Not implemented on the lite target: "), "the inspector's reason");
    let missing = missing.name().unwrap_or_default().to_string();
    assert!(missing.contains("no XPU kernel") && missing.contains("PYTORCH_ENABLE_XPU_FALLBACK=1"), "{missing}");
}

/// On CUDA and CPU nothing is sent to the CPU: the same nodes are kept whole as eager fallbacks,
/// and no readiness reason is shown or listed.
fn check_other_backends(h: &mut Harness) {
    let g = h.app.state.original().unwrap().clone();
    for b in [Backend::Cuda, Backend::Cpu] {
        h.apply(Command::SetTargetBackend(Some(b)));
        for t in FALLBACKS {
            let (orig, lite) = classes(h, node(&g, t));
            assert!(orig != NodeClass::CpuFallback && !lite.contains(&NodeClass::CpuFallback), "{b} {t}: {orig:?} {lite:?}");
        }
        assert_eq!(classes(h, node(&g, "aten.cholesky_inverse.default")), (NodeClass::Plain, vec![NodeClass::Fallback]), "{b}");
        assert!(h.find(|l| l.starts_with("Falls back to the CPU")).is_none(), "{b}");
        assert!(h.find(|l| l.contains("CPU-fallback list")).is_none(), "{b}");
    }
}

#[test]
fn an_export_with_cpu_fallback_ops_on_xpu() {
    let mut h = Harness::new(Source::File(sample("xpu/fallback_ops.pt2")));
    check_xpu(&mut h);
    check_other_backends(&mut h);
}

/// The log of the same function. It opens on torch's stages; asked for our re-decomposition, its
/// dynamo graph's torch-level calls are read through the ATen op each is at the kernel level
/// (`torch.cholesky_inverse`); then its AOT graph (what lite mode keeps, what `readiness LOG`
/// reads) picked as the original.
#[test]
fn a_torch_trace_log_with_cpu_fallback_ops_on_xpu() {
    let mut h = Harness::new(Source::File(sample("xpu/fallback_ops_lite_2.15.0.log.gz")));
    assert!(h.app.state.stages.is_some() && h.app.state.pane(View::Lite).decomp.is_none(), "a log opens on its stages");
    h.apply(Command::ShowStages(None));
    let g = h.app.state.original().unwrap().clone();
    assert!(g.name.ends_with(":dynamo_output_graph"), "{}", g.name);
    for (t, want) in [
        ("torch.cholesky_inverse", NodeClass::CpuFallback),
        ("torch._C._linalg.linalg_matrix_exp", NodeClass::CpuFallback),
        ("torch._C._linalg.linalg_lu", NodeClass::NotImplemented),
    ] {
        assert_eq!(classes(&h, node(&g, t)), (want, vec![want]), "{t}");
    }
    assert_eq!(classes(&h, node(&g, "torch.dot")), (NodeClass::Plain, vec![NodeClass::Fallback]));
    let graphs: Vec<String> = h.app.state.doc.as_ref().unwrap().model.graphs.iter().map(|g| g.name.clone()).collect();
    let aot = graphs.iter().position(|n| n.ends_with(":aot_inference_graph")).unwrap_or_else(|| panic!("no AOT graph in {graphs:?}"));
    h.apply(Command::PickGraph(aot));
    check_xpu(&mut h);
    check_other_backends(&mut h);
}

/// The text of the folded module box `path` in the original and lite views, as a screen reader
/// hears it, once the breadcrumbs brought it into view.
fn module_labels(h: &mut Harness, path: &str) -> [String; 2] {
    h.apply(Command::RevealModule(Some(path.to_string())));
    [View::Original, View::Lite].map(|view| {
        let prefix = format!("{} module: ▸ {path} ", view.name());
        let (_, n) = h.expect(|l| l.starts_with(&prefix), &format!("the folded {path} box in {}", view.name()));
        n.name().unwrap_or_default().to_string()
    })
}

/// Each submodule of `fallback_blocks.pt2` holds one class: folded, its box says how many of its
/// ops fall back to the CPU or are not implemented on XPU, and only on XPU.
#[test]
fn module_boxes_count_their_readiness() {
    let mut h = Harness::new(Source::File(sample("xpu/fallback_blocks.pt2")));
    for m in ["solve", "factor", "norm"] {
        if !h.app.state.collapsed.contains(m) {
            h.apply(Command::ToggleCollapse(m.to_string()));
        }
    }
    for view in [View::Original, View::Lite] {
        let layout = h.app.state.pane(view).layout.clone().expect("laid out");
        let members = |path: &str| {
            layout.items.iter().find_map(|i| match &i.kind {
                ItemKind::Group { path: p, members, .. } if p == path => Some(members.clone()),
                _ => None,
            })
        };
        let text = |path: &str| groups::summarize(&h.app.state, view, &members(path).expect("folded")).readiness_text(&h.app.state);
        assert_eq!(text("solve"), "2 ops fall back to CPU", "{}", view.name());
        assert_eq!(text("factor"), "1 op not implemented on XPU", "{}", view.name());
        assert_eq!(text("norm"), "", "{}", view.name());
    }
    for label in module_labels(&mut h, "solve") {
        assert!(label.ends_with(" 2 ops fall back to CPU"), "{label}");
    }
    for label in module_labels(&mut h, "factor") {
        assert!(label.ends_with(" 1 op not implemented on XPU"), "{label}");
    }
    for label in module_labels(&mut h, "norm") {
        assert!(!label.contains("fall back") && !label.contains("not implemented"), "{label}");
    }
    h.apply(Command::SetTargetBackend(Some(Backend::Cuda)));
    for label in module_labels(&mut h, "solve") {
        assert!(!label.contains("fall back"), "{label}");
    }
}
