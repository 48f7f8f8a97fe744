//! Blocks torch.export keeps as higher-order ops with a body (`samples/grad_blocks/`, made by
//! `scripts/gen_grad_blocks_sample.py` with torch 2.15): two `torch.no_grad()` blocks
//! (`wrap_with_set_grad_enabled`) and a `torch.autocast(enabled=False)` block
//! (`wrap_with_autocast`). The importer inlines their bodies (`import::pt2::inline`), so the
//! graph holds torch's own ops of each body and every mode computes what PyTorch computed.

mod common;

use std::path::PathBuf;

use xpu_workbench::decomp::{decompose, Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::runtime::plan::{compile_plan, run_on_device};
use xpu_workbench::{import, lower, npy};

fn file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
}

fn npy_tensor(name: &str) -> Tensor {
    let a = npy::read(&file(name)).unwrap();
    Tensor::from_le_bytes(a.dtype, &a.shape, &a.data).unwrap()
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    assert_eq!(a.shape(), b.shape());
    a.to_f64_vec().iter().zip(b.to_f64_vec()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn the_wrappers_bodies_are_inlined_op_for_op() {
    let model = import::load(&file("grad_blocks/grad_blocks.pt2")).unwrap();
    let exp: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file("grad_blocks/grad_blocks.expect.json")).unwrap()).unwrap();
    let g = &model.graphs[0];
    assert!(exp["ops"]["exported"].as_object().unwrap().keys().any(|k| k.contains("wrap_with")), "the sample holds the wrappers");
    assert_eq!(g.op_histogram(), common::archive_histogram(&exp["ops"]["inlined"]));
    // The body's nodes keep their source and module.
    let cos = g.nodes.iter().find(|n| n.target == "aten.cos.default").expect("the no_grad body's cos");
    assert!(cos.meta.stack_trace.as_deref().is_some_and(|s| s.contains("emb.cos()")), "{:?}", cos.meta.stack_trace);
}

#[test]
fn every_mode_computes_what_pytorch_computed() {
    let model = import::load(&file("grad_blocks/grad_blocks.pt2")).unwrap();
    let g = &model.graphs[0];
    let (x, want) = (npy_tensor("grad_blocks/grad_blocks.in0.npy"), npy_tensor("grad_blocks/grad_blocks.out0.npy"));
    for mode in [Mode::None, Mode::Core, Mode::Lite, Mode::Full] {
        let d = decompose(g, mode, &Marks::default()).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        let got = exec::run(&model, &d.graph, std::slice::from_ref(&x)).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        let err = max_abs_diff(&got[0], &want);
        assert!(err < 1e-5, "{mode:?}: max abs error {err}");
        let plan = lower::lower(&model, g, mode, &Marks::default()).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        let modules = compile_plan(&plan).unwrap();
        let Some(mut dev) = common::opencl_device() else { continue };
        let bindings = exec::infer_bindings(&model, g, std::slice::from_ref(&x)).unwrap();
        let r = run_on_device(&mut dev, &plan, &modules, &model, std::slice::from_ref(&x), &bindings).unwrap();
        let err = max_abs_diff(&r.outputs[0], &want);
        assert!(err < 1e-4, "{mode:?} on OpenCL: max abs error {err}");
    }
}

#[test]
fn a_llama_with_a_no_grad_rotary_embedding_lowers_in_every_mode() {
    // The rotary embedding under `@torch.no_grad()` was one `wrap_with_set_grad_enabled` node
    // that no mode could lower.
    let model = import::load(&file("tiny_llama_auto.pt2")).unwrap();
    let g = &model.graphs[0];
    assert!(!g.nodes.iter().any(|n| n.target.contains("wrap_with")));
    for mode in [Mode::None, Mode::Lite, Mode::Full] {
        lower::lower(&model, g, mode, &Marks::default()).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
    }
}
