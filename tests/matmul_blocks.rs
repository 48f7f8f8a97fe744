//! Matrix products off the tiled schedule (`lower::schedule::small_product`,
//! `lower::gemm::large_product`) against PyTorch: the cases of `tests/data/matmul_blocks`
//! (`scripts/gen_matmul_blocks.py`: the transformer_block sample's up-projection with its bias
//! and GELU, sizes no tile divides, a batched product, a 128³ product, a linear layer with a
//! dynamic row count run at five row counts, the up-projection with dynamic batch and sequence
//! at three bindings, a dynamic-row product over a long row, and large linear layers whose
//! weight is a parameter, static and with a dynamic row count) lowered in modes none and full,
//! every module validated by `spirv-val`, run on OpenCL and compared with PyTorch's outputs
//! (assert_close's float32 tolerances). Each case's product must also get the schedule meant
//! for its shape: output columns across the work-items (in a group sized to them) with output
//! rows blocked per work-item (the last block bounds-checked where it is ragged), a parameter
//! weight read from its transposed copy, and in full mode one kernel for the product and its
//! epilogue.

mod common;

use std::path::PathBuf;

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::lower::kernel::{KExpr, Layout};
use xpu_workbench::lower::schedule::{Schedule, CHANNEL_BLOCK};
use xpu_workbench::opinfo::{self, Case};
use xpu_workbench::exec::Generator;
use xpu_workbench::ir::Model;
use xpu_workbench::lower::Plan;
use xpu_workbench::runtime::plan::{build_modules, compile_plan, release_modules, run_on_device, run_resident, Resident};
use xpu_workbench::runtime::Device;
use xpu_workbench::sym::Bindings;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/matmul_blocks")
}

/// What the product's kernel must get, by case name and mode.
#[derive(Debug)]
enum Want {
    /// Exactly this schedule.
    Exactly(Schedule),
}

fn expected(name: &str, mode: Mode) -> Option<Want> {
    let blocked = |group, coord, block| Some(Want::Exactly(Schedule::Channels { group, dims: 1, coord, block }));
    match (name, mode) {
        // [2, 7, 128] in both modes (full mode's `addmm` is read through views of it): the 7
        // rows of a batch form one block, 128 columns one group.
        ("linear_gelu_2x7x32_128", _) => blocked(128, 1, 7),
        // Column groups sized to the few columns: 19 in a group of 32 (16 would leave as many
        // idle), 10 in a group of 16; rows in blocks of up to 8.
        ("mm_13x23_23x19", _) => blocked(32, 0, CHANNEL_BLOCK),
        ("addmm_5x40_40x10", _) => blocked(16, 0, 5),
        // 33 columns in groups of 16; the batches share no operand, the 9 rows of a batch
        // their `b`.
        ("bmm_3x9x17_17x33", _) => blocked(16, 1, CHANNEL_BLOCK),
        // 128³ multiply-adds, more than `SMALL_PRODUCT`: a large product (`lower::gemm`),
        // blocked the same way.
        ("mm_large_128", _) => blocked(128, 0, CHANNEL_BLOCK),
        // A dynamic row count with a short row (32 · 64 multiply-adds): 64 columns in one
        // group, rows in blocks of 8, the last block bounds-checked at run time — at every row
        // count, 1 (a lone ragged block) and 8 (one whole block) included.
        (n, _) if n.starts_with("linear_dynamic_rows_") => blocked(64, 0, CHANNEL_BLOCK),
        // Batch and sequence dynamic: the sequence (the later coordinate) is blocked.
        (n, _) if n.starts_with("linear_gelu_dynamic_") => blocked(128, 1, CHANNEL_BLOCK),
        // A dynamic row count over 128 · 160 multiply-adds a row, above `SMALL_DYNAMIC_ROW`:
        // large, 160 columns in groups of 32.
        ("mm_dynamic_rows_wide_3", _) => blocked(32, 0, CHANNEL_BLOCK),
        // Large products of a parameter weight: 240 and 272 columns in groups of 16 (no larger
        // group leaves none idle), 32 in one group; the 33 rows of a batch in blocks of 8.
        ("linear_param_70x64_240", _) => blocked(16, 0, CHANNEL_BLOCK),
        ("linear_param_gelu_2x33x512_32", _) => blocked(32, 1, CHANNEL_BLOCK),
        (n, _) if n.starts_with("linear_param_dynamic_rows_") => blocked(16, 0, CHANNEL_BLOCK),
        _ => None,
    }
}

#[test]
fn small_products_match_pytorch_on_opencl() {
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
        for mode in [Mode::None, Mode::Full] {
            let what = format!("{name} ({mode:?})");
            let want_schedule = expected(name, mode).unwrap_or_else(|| panic!("case `{name}` has no expected schedule in this test"));
            let plan = xpu_workbench::lower::lower(&model, &model.graphs[0], mode, &Marks::default()).expect("lowers");
            let schedules: Vec<Schedule> = plan.kernels().map(|k| k.schedule).collect();
            let products: Vec<Schedule> =
                plan.kernels().filter(|k| k.exprs.iter().any(|e| matches!(e, KExpr::Reduce { .. }))).map(|k| k.schedule).collect();
            let ok = match (&products[..], &want_schedule) {
                ([got], Want::Exactly(s)) => got == s,
                _ => false,
            };
            if !ok {
                failures.push(format!("{what}: schedules {schedules:?}, expected one product kernel on {want_schedule:?}"));
            }
            // A parameter weight is read from the copy the runtime stores transposed; operands
            // that are graph inputs keep their layout.
            let layouts: Vec<(String, Layout)> = plan.kernels().flat_map(|k| k.buffers.iter().map(|b| (b.value.clone(), b.layout))).collect();
            let transposed: Vec<&str> = layouts.iter().filter(|(_, l)| *l == Layout::Transposed).map(|(v, _)| v.as_str()).collect();
            let want_transposed: Vec<&str> = if name.starts_with("linear_param_") { vec!["p_fc_weight"] } else { vec![] };
            if transposed != want_transposed {
                failures.push(format!("{what}: buffers read transposed {transposed:?}, expected {want_transposed:?}"));
            }
            // Full mode keeps the epilogue (bias, GELU) in the product's kernel; mode none runs
            // every node as its own kernel.
            if mode == Mode::Full && schedules.len() != products.len() {
                failures.push(format!("{what}: {} kernels besides the product's: {schedules:?}", schedules.len() - products.len()));
            }
            let modules = compile_plan(&plan).expect("compiles");
            for m in modules.iter().flatten() {
                if let Some(Err(e)) = common::spirv_val(m) {
                    failures.push(format!("{what}: spirv-val rejects `{}`: {}", m.name, e.lines().next().unwrap_or("")));
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
            // As `profile` and `bench models` run: weights uploaded once (the transposed copies
            // made there), two forwards on them.
            if name.starts_with("linear_param_") {
                if let Err(e) = resident_forwards(dev, &plan, &modules, &model, &inputs, &b, &want[0], case, &what) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Two forwards of `plan` on weights uploaded once by `Resident::upload`, each compared with
/// PyTorch's output.
#[allow(clippy::too_many_arguments)]
fn resident_forwards(
    dev: &mut dyn Device,
    plan: &Plan,
    modules: &[Option<xpu_workbench::codegen::spirv::SpirvModule>],
    model: &Model,
    inputs: &[Tensor],
    b: &Bindings,
    want: &Tensor,
    case: &Case,
    what: &str,
) -> Result<(), String> {
    let programs = build_modules(dev, modules).map_err(|e| format!("{what}: build: {e}"))?;
    let weights = Resident::upload(dev, model, plan).map_err(|e| format!("{what}: upload: {e}"))?;
    let mut result = Ok(());
    for forward in 0..2 {
        let run = run_resident(dev, plan, &programs, &weights, inputs, b, &Generator::default(), std::time::Instant::now());
        result = run.map_err(|e| e.to_string()).and_then(|r| common::opinfo::close(&format!("{what}, resident forward {forward}"), &r.outputs[0], want, case));
        if result.is_err() {
            break;
        }
    }
    let released = weights.release(dev).and_then(|()| release_modules(dev, &programs));
    result.and(released.map_err(|e| format!("{what}: release: {e}")))
}
