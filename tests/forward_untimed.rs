//! Forwards launched without device timestamps (how `bench models` times a forward's wall
//! time), on a real zoo export and the inputs torch ran it on: they compute bit for bit what
//! timed forwards compute, and when the model's symbols change between forwards on the same
//! resident weights and kernel objects (bert's batch and sequence length), every launch still
//! gets the new sizes and buffers, although the device sets only the arguments that changed.

mod common;

use std::time::Instant;

use common::stages::{load_npy, rel_err};
use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::exec::{Generator, Tensor};
use xpu_workbench::runtime::plan::{build_modules, compile_plan, release_modules, run_on_device, run_resident_with, PlanRun, Resident, Timing};
use xpu_workbench::sym::Bindings;

/// bert's inputs, torch's output and the bindings of expectation `b` (b0: s43 = 2, s53 = 7;
/// b1: other sizes, bert.expect.json).
fn case(model: &xpu_workbench::ir::Model, b: usize) -> (Bindings, Vec<Tensor>, Tensor) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/zoo/torch-2.15");
    let expect: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("bert.expect.json")).expect("expect.json")).expect("json");
    let binds: Vec<(String, i64)> = expect["bindings"][b]["bindings"]
        .as_object()
        .expect("bindings")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_i64().expect("an integer")))
        .collect();
    let bindings = xpu_workbench::shapes::resolve_bindings(model, &binds).expect("bindings");
    let inputs = vec![load_npy(&dir.join(format!("bert.b{b}.in0.npy"))), load_npy(&dir.join(format!("bert.b{b}.in1.npy")))];
    (bindings, inputs, load_npy(&dir.join(format!("bert.b{b}.out0.npy"))))
}

fn bytes(r: &PlanRun) -> Vec<Vec<u8>> {
    r.outputs.iter().map(|t| t.to_le_bytes()).collect()
}

#[test]
fn untimed_forwards_match_timed_ones_while_the_symbols_change_between_them() {
    let Some(mut dev) = common::opencl_device() else { return };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/zoo/torch-2.15/bert.pt2");
    let model = xpu_workbench::import::load(&path).expect("bert loads");
    let graph = model.graphs.first().expect("a graph");
    let plan = xpu_workbench::lower::lower(&model, graph, Mode::Full, &Marks::default()).expect("lowers");
    let modules = compile_plan(&plan).expect("codegen");
    let cases = [case(&model, 0), case(&model, 1)];
    assert_ne!(cases[0].0, cases[1].0, "the two expectations bind the symbols differently");
    // One-off timed runs, each on fresh buffers and kernel objects: the reference.
    let fresh: Vec<PlanRun> = cases.iter().map(|(b, inputs, _)| run_on_device(&mut dev, &plan, &modules, &model, inputs, b).expect("one-off run")).collect();
    for ((_, _, torch), run) in cases.iter().zip(&fresh) {
        let err = rel_err(&run.outputs[0], torch);
        assert!(err < 1e-4, "bert against torch's output: relative error {err}");
    }

    let programs = build_modules(&mut dev, &modules).expect("builds");
    let weights = Resident::upload(&mut dev, &model, &plan).expect("weights upload");
    // Sizes change between consecutive forwards (b0, b1, b0, …), and the same sizes come back
    // after others ran: the kernel objects hold the other case's arguments each time.
    let order = [0, 0, 1, 1, 0, 1, 0];
    let mut runs = Vec::new();
    for (i, &c) in order.iter().enumerate() {
        let (b, inputs, _) = &cases[c];
        let timing = if i % 2 == 0 { Timing::WallOnly } else { Timing::Kernels };
        let run = run_resident_with(&mut dev, &plan, &programs, &weights, inputs, b, &Generator::default(), Instant::now(), timing).expect("forward");
        runs.push((c, timing, run));
    }
    weights.release(&mut dev).expect("release");
    release_modules(&mut dev, &programs).expect("release programs");

    for (i, (c, timing, run)) in runs.iter().enumerate() {
        assert!(bytes(run) == bytes(&fresh[*c]), "forward {i} ({timing:?}, case b{c}) differs from the one-off run at the same sizes");
        assert_eq!(run.phases.launches as usize, plan.kernel_count(), "forward {i}");
        match timing {
            Timing::WallOnly => assert!(run.total_device_ns == 0 && run.steps.iter().all(|s| s.device_ns == 0), "forward {i} was timed"),
            Timing::Kernels => assert!(run.steps.iter().filter(|s| s.kind == "fused").all(|s| s.device_ns > 0), "forward {i} lacks device times"),
        }
        assert!(run.phases.enqueue_ns > 0 && run.phases.enqueue_ns <= run.phases.launch_ns, "{:?}", run.phases);
    }
    // A forward at the sizes of the one before takes every buffer from the pool.
    let (second, fourth) = (&runs[1].2.phases, &runs[3].2.phases);
    assert_eq!((second.buffers_allocated, fourth.buffers_allocated), (0, 0), "{second:?} {fourth:?}");
}
