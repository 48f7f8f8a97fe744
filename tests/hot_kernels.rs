//! Issue 28's hot kernels of the corpus sample, shrunk (`tests/data/hot_kernels`,
//! `scripts/gen_hot_kernels.py`): Bridgetower's MLP with its QuickGELU (rows blocked along a
//! static coordinate of 17, the last block ragged), AltCLIP's text projection (batch and
//! sequence dynamic, a row longer than the former 2¹⁴ limit of the blocked column schedule)
//! and a static linear layer of more than `SMALL_PRODUCT` multiply-adds over a short row.
//! Each is lowered in modes none and full, its product must get the schedule meant for its
//! shape (and in full mode one kernel with its epilogue), every module is validated by
//! `spirv-val`, and the results are compared with PyTorch's outputs on OpenCL.

mod common;

use std::path::PathBuf;

use xpu_workbench::codegen::spirv::disassemble;
use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::exec;
use xpu_workbench::lower::kernel::KExpr;
use xpu_workbench::lower::schedule::{Schedule, CHANNEL_BLOCK};
use xpu_workbench::opinfo;
use xpu_workbench::runtime::plan::{compile_plan, run_on_device};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/hot_kernels")
}

/// The schedule the product's kernel must get, by case name.
fn expected(name: &str) -> Option<Schedule> {
    let blocked = |group, coord, block| Some(Schedule::Channels { group, dims: 1, coord, block });
    match name {
        // [17, s, 64]: 64 columns in one group, the static 17 blocked by 8 (blocks 8, 8, 1;
        // the dynamic s is not blocked: equal blocks prefer the first coordinate).
        n if n.starts_with("quick_gelu_mlp_17x") => blocked(64, 0, CHANNEL_BLOCK),
        // [batch, seq, 320]: 320 columns in groups of 64 (none idle), the sequence blocked.
        n if n.starts_with("linear_dynamic_") => blocked(64, 1, CHANNEL_BLOCK),
        // [65, 128]: 128 columns, rows blocked by 8 (the ninth block ragged).
        "linear_relu_65x128_128" => blocked(128, 0, CHANNEL_BLOCK),
        _ => None,
    }
}

#[test]
fn hot_kernels_get_their_schedules_and_match_pytorch_on_opencl() {
    let index = opinfo::read_index(&dir()).expect("index");
    let names = common::opinfo::case_names(&dir());
    assert_eq!(names.len(), index.cases.len());
    let mut dev = common::opencl_device();
    let mut failures = Vec::new();
    for (case, name) in index.cases.iter().zip(&names) {
        let files = opinfo::read_archive(&dir(), &case.file).expect("archive");
        let model = opinfo::model(case, &files).expect("graph");
        let inputs = opinfo::inputs(case, &files).expect("inputs");
        let want = opinfo::outputs(case, &files).expect("PyTorch's outputs");
        let want_schedule = expected(name).unwrap_or_else(|| panic!("case `{name}` has no expected schedule in this test"));
        for mode in [Mode::None, Mode::Full] {
            let what = format!("{name} ({mode:?})");
            let plan = xpu_workbench::lower::lower(&model, &model.graphs[0], mode, &Marks::default()).expect("lowers");
            let schedules: Vec<Schedule> = plan.kernels().map(|k| k.schedule).collect();
            let products: Vec<Schedule> =
                plan.kernels().filter(|k| k.exprs.iter().any(|e| matches!(e, KExpr::Reduce { .. }))).map(|k| k.schedule).collect();
            if products != [want_schedule] {
                failures.push(format!("{what}: schedules {schedules:?}, expected one product kernel on {want_schedule:?}"));
            }
            if mode == Mode::Full && schedules.len() != products.len() {
                failures.push(format!("{what}: {} kernels besides the product's: {schedules:?}", schedules.len() - products.len()));
            }
            let modules = compile_plan(&plan).expect("compiles");
            for m in modules.iter().flatten() {
                if let Some(Err(e)) = common::spirv_val(m) {
                    failures.push(format!("{what}: spirv-val rejects `{}`: {}", m.name, e.lines().next().unwrap_or("")));
                }
                // The lanes' clamps (and every other i64 min or max) are a compare and a
                // select: the OpenCL CPU runtime's vectorizer takes the result of OpenCL's
                // `s_min` as varying, and gathered the blocked rows' loads.
                let text = disassemble(m);
                if text.contains(" s_min ") || text.contains(" s_max ") {
                    failures.push(format!("{what}: `{}` clamps with s_min/s_max", m.name));
                }
            }
            let Some(dev) = dev.as_mut() else { continue };
            let b = exec::infer_bindings(&model, &plan.graph, &inputs).expect("bindings");
            match run_on_device(dev, &plan, &modules, &model, &inputs, &b) {
                Ok(r) => {
                    if let Err(e) = common::opinfo::close(&what, &r.outputs[0], &want[0], case) {
                        failures.push(e);
                    }
                }
                Err(e) => failures.push(format!("{what}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
