//! A fold over a broadcast product whose operands are costly pointwise cones, shrunk from
//! Bailing-hybrid's chunked linear attention (`tests/data/fold_operands`,
//! `scripts/gen_fold_operands.py`): `-(k_beta.unsqueeze(-2) * key.unsqueeze(-3) * decay).sum(-1)`
//! with `key` an L2 norm over a SiLU and `k_beta` that times a sigmoid, exported with the batch
//! dynamic and run at two bindings. In full mode the fold's kernel must read `key` and `k_beta`
//! from memory, each computed once in a kernel of its own (`lower::fold_operands`), not once per
//! partner position inside the fold's loop; every module must pass `spirv-val`, and the results
//! must match PyTorch's on OpenCL in modes none and full.

mod common;

use std::path::PathBuf;

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::lower::Step;
use xpu_workbench::opinfo;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/fold_operands")
}

/// Ops of the operands' cones: the L2 norm's square root and `beta`'s sigmoid.
const CONE_OPS: &[&str] = &["aten.sqrt.default", "aten.sigmoid.default"];

#[test]
fn broadcast_operands_of_a_fold_are_computed_once_and_match_pytorch_on_opencl() {
    let index = opinfo::read_index(&dir()).expect("index");
    let names = common::opinfo::case_names(&dir());
    assert_eq!(names.len(), index.cases.len());
    assert!(index.cases.len() >= 2, "the case at two bindings");
    let mut dev = common::opencl_device();
    let mut failures = Vec::new();
    for (case, name) in index.cases.iter().zip(&names) {
        let files = opinfo::read_archive(&dir(), &case.file).expect("archive");
        let model = opinfo::model(case, &files).expect("graph");
        let inputs = opinfo::inputs(case, &files).expect("inputs");
        let want = opinfo::outputs(case, &files).expect("PyTorch's outputs");
        for mode in [Mode::None, Mode::Full] {
            let what = format!("{name} ({mode:?})");
            let plan = xpu_workbench::lower::lower(&model, &model.graphs[0], mode, &Marks::default()).expect("lowers");
            if mode == Mode::Full {
                let fused: Vec<Vec<(String, String)>> = plan
                    .steps
                    .iter()
                    .filter_map(|s| match s {
                        Step::Fused { nodes, .. } => Some(nodes.iter().map(|n| (plan.graph.node(*n).name.clone(), plan.graph.node(*n).target.clone())).collect()),
                        _ => None,
                    })
                    .collect();
                // The broadcast fold: the kernel computing the last `sum` over the head dim.
                let is_fold = |k: &Vec<(String, String)>| k.iter().any(|(_, t)| t == "aten.sum.dim_IntList") && k.iter().any(|(_, t)| t == "aten.exp.default");
                let folds: Vec<&Vec<(String, String)>> = fused.iter().filter(|k| is_fold(k) && k.iter().any(|(_, t)| t == "aten.where.self")).collect();
                if folds.len() != 1 {
                    failures.push(format!("{what}: want one kernel with the decay-masked fold, got {}: {fused:?}", folds.len()));
                }
                for k in &folds {
                    if let Some((n, t)) = k.iter().find(|(_, t)| CONE_OPS.contains(&t.as_str())) {
                        failures.push(format!("{what}: the fold's kernel recomputes `{n}` ({t}) per partner: {k:?}"));
                    }
                }
                // Each cone op is computed in exactly one kernel.
                for (n, t) in fused.iter().flatten().filter(|(_, t)| CONE_OPS.contains(&t.as_str())) {
                    let holders = fused.iter().filter(|k| k.iter().any(|(m, _)| m == n)).count();
                    if holders != 1 {
                        failures.push(format!("{what}: `{n}` ({t}) is computed in {holders} kernels"));
                    }
                }
            }
            let Some(outputs) = common::opinfo::compile_and_run(&mut dev, &plan, &model, &inputs, &what, &mut failures) else { continue };
            if let Err(e) = common::opinfo::close(&what, &outputs[0], &want[0], case) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
