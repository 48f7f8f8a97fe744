//! Functionalization on a model torch.export left non-functional (`samples/mutation/`, made by
//! `scripts/gen_mutation_sample.py` with torch 2.15): a buffer written in place, a user input
//! written through `slice` and `permute`+`select` views, a fresh mask filled through two slices,
//! and a view taken before a write and read after it. Every mode must compute what PyTorch's
//! eager call computed, and the writes into graph inputs must be recorded with the values
//! PyTorch left in them.

mod common;

use std::path::PathBuf;

use xpu_workbench::decomp::{decompose, functionalize, Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::{InputKind, Model};
use xpu_workbench::{import, lower, npy};

fn file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/mutation").join(name)
}

fn npy_tensor(name: &str) -> Tensor {
    let a = npy::read(&file(name)).unwrap();
    Tensor::from_le_bytes(a.dtype, &a.shape, &a.data).unwrap()
}

fn load() -> Model {
    import::load(&file("mutating.pt2")).unwrap()
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    assert_eq!(a.shape(), b.shape());
    a.to_f64_vec().iter().zip(b.to_f64_vec()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn the_none_view_shows_the_writes_as_exported() {
    let model = load();
    let exp: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file("mutating.expect.json")).unwrap()).unwrap();
    let d = decompose(&model.graphs[0], Mode::None, &Marks::default()).unwrap();
    assert_eq!(d.graph.op_histogram(), common::archive_histogram(&exp["ops"]["none"]));
    assert!(d.functionalized.is_empty() && d.mutations.is_empty());
}

#[test]
fn every_mode_computes_what_pytorch_computed() {
    let model = load();
    let g = &model.graphs[0];
    let (x, want) = (npy_tensor("mutating.in0.npy"), npy_tensor("mutating.out0.npy"));
    for mode in [Mode::None, Mode::Core, Mode::Lite, Mode::Full] {
        let d = decompose(g, mode, &Marks::default()).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        let got = exec::run(&model, &d.graph, std::slice::from_ref(&x)).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        assert_eq!(got.len(), 1, "{mode:?}: the user output only");
        let err = max_abs_diff(&got[0], &want);
        assert!(err < 1e-5, "{mode:?}: max abs error {err}");
    }
}

#[test]
fn writes_into_graph_inputs_are_recorded_with_pytorchs_final_values() {
    let model = load();
    let g = &model.graphs[0];
    let x = npy_tensor("mutating.in0.npy");
    for d in [functionalize(g).unwrap(), decompose(g, Mode::Core, &Marks::default()).unwrap()] {
        assert_eq!(d.mutations.len(), 2, "{:?}: the buffer and the user input", d.mode);
        let values = exec::run_all(&model, &d.graph, std::slice::from_ref(&x)).unwrap();
        for m in &d.mutations {
            let kind = d.graph.inputs.iter().find(|(v, _)| *v == m.input).map(|(_, k)| k.clone()).unwrap();
            let want = match kind {
                InputKind::Buffer { fqn, .. } => {
                    assert_eq!(fqn, "count");
                    npy_tensor("mutating.count_after.npy")
                }
                InputKind::UserInput => npy_tensor("mutating.x_after.npy"),
                other => panic!("unexpected mutated input {other:?}"),
            };
            let got = values.tensor(m.value).unwrap();
            let err = max_abs_diff(got, &want);
            assert!(err < 1e-6, "{:?}: final value of `{}` off by {err}", d.mode, d.graph.value(m.input).name);
            assert!(!m.by.is_empty());
        }
    }
}

#[test]
fn the_none_mode_lowering_runs_the_functionalized_graph_on_opencl() {
    use xpu_workbench::runtime::plan::{compile_plan, run_on_device};
    let model = load();
    let g = &model.graphs[0];
    let plan = lower::lower(&model, g, Mode::None, &Marks::default()).unwrap();
    assert!(plan.graph.nodes.iter().all(|n| !n.target.trim_end_matches(|c: char| c != '.').ends_with("_.")), "no in-place op left");
    let modules = compile_plan(&plan).unwrap();
    for m in modules.iter().flatten() {
        if let Some(r) = common::spirv_val(m) {
            r.unwrap_or_else(|e| panic!("{}: {e}", m.name));
        }
    }
    let Some(mut dev) = common::opencl_device() else { return };
    let x = npy_tensor("mutating.in0.npy");
    let inputs = vec![x];
    let bindings = exec::infer_bindings(&model, g, &inputs).unwrap();
    let r = run_on_device(&mut dev, &plan, &modules, &model, &inputs, &bindings).unwrap();
    let err = max_abs_diff(&r.outputs[0], &npy_tensor("mutating.out0.npy"));
    assert!(err < 1e-5, "max abs error {err}");
}

#[test]
fn functionalizing_an_unmarked_node_is_not_a_lite_violation() {
    let model = load();
    let g = &model.graphs[0];
    let marks = Marks::default();
    let lite = decompose(g, Mode::Lite, &marks).unwrap();
    assert!(!lite.write_backs.is_empty(), "the writes through views were carried back");
    let violations = xpu_workbench::decomp::check_lite(g, &lite, &marks);
    assert!(violations.is_empty(), "{violations:?}");
    // A real decomposition of an unmarked node still is one: full mode decomposes the fills.
    let full = decompose(g, Mode::Full, &marks).unwrap();
    assert!(!xpu_workbench::decomp::check_lite(g, &full, &marks).is_empty());
}
