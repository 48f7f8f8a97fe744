//! Repeated forwards on resident weights, as `bench models` and `profile` run them, on a real
//! zoo export and the inputs torch ran it on: the second forward takes every buffer from the
//! first's pool (no device allocation), its outputs are bit for bit those of the first and of
//! a one-off run that allocates everything fresh (and match torch's), and its host time is
//! accounted phase by phase within its wall time.

mod common;

use std::time::Instant;

use common::stages::{load_npy, rel_err};
use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::exec::Generator;
use xpu_workbench::runtime::plan::{build_modules, compile_plan, release_modules, run_on_device, run_resident, PlanRun, Resident};

#[test]
fn a_second_forward_reuses_the_first_ones_buffers_and_computes_the_same_outputs() {
    let Some(mut dev) = common::opencl_device() else { return };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/zoo/torch-2.15");
    let model = xpu_workbench::import::load(&dir.join("bert.pt2")).expect("bert loads");
    let graph = model.graphs.first().expect("a graph");
    // torch's own inputs and output at binding 0 of bert.expect.json (s43 = 2, s53 = 7).
    let bindings = xpu_workbench::shapes::resolve_bindings(&model, &[("s43".into(), 2), ("s53".into(), 7)]).expect("bindings");
    let inputs = [load_npy(&dir.join("bert.b0.in0.npy")), load_npy(&dir.join("bert.b0.in1.npy"))];
    let torch_out = load_npy(&dir.join("bert.b0.out0.npy"));
    let plan = xpu_workbench::lower::lower(&model, graph, Mode::Full, &Marks::default()).expect("lowers");
    let modules = compile_plan(&plan).expect("codegen");

    let fresh = run_on_device(&mut dev, &plan, &modules, &model, &inputs, &bindings).expect("one-off run");
    // A one-off run allocates every buffer it uses and keeps none.
    assert_eq!(fresh.phases.buffers_reused, 0);
    assert!(fresh.phases.buffers_allocated > 0);
    let err = rel_err(&fresh.outputs[0], &torch_out);
    assert!(err < 1e-4, "bert against torch's output: relative error {err}");

    let programs = build_modules(&mut dev, &modules).expect("builds");
    let weights = Resident::upload(&mut dev, &model, &plan).expect("weights upload");
    let mut runs = Vec::new();
    for _ in 0..3 {
        runs.push(run_resident(&mut dev, &plan, &programs, &weights, &inputs, &bindings, &Generator::default(), Instant::now()).expect("forward"));
    }
    weights.release(&mut dev).expect("release");
    release_modules(&mut dev, &programs).expect("release programs");

    let first = &runs[0].phases;
    assert!(first.buffers_allocated > 0 && first.buffers_reused == 0, "{first:?}");
    for later in &runs[1..] {
        let p = &later.phases;
        assert_eq!((p.buffers_allocated, p.buffers_reused), (0, first.buffers_allocated), "{p:?}");
        assert_eq!(p.launches as usize, plan.kernel_count());
        assert!(p.launch_ns > 0 && p.total_ns() <= later.wall_ns, "{p:?}, wall {}", later.wall_ns);
    }
    let bytes = |r: &PlanRun| r.outputs.iter().map(|t| t.to_le_bytes()).collect::<Vec<_>>();
    for (i, r) in runs.iter().enumerate() {
        assert!(bytes(r) == bytes(&fresh), "forward {i} on pooled buffers differs from the one-off run");
    }
}
