//! Small matrix products off the tiled schedule (`lower::schedule::small_product`) against
//! PyTorch: the cases of `tests/data/matmul_blocks` (`scripts/gen_matmul_blocks.py`: the
//! transformer_block sample's up-projection with its bias and GELU, sizes no tile divides, a
//! batched product, a 128³ product, a linear layer with a dynamic row count run at five row
//! counts, the up-projection with dynamic batch and sequence at three bindings, a dynamic-row
//! product over rows of 128 · 160) lowered in modes
//! none and full, every module validated by `spirv-val`, run on OpenCL and compared with PyTorch's outputs (assert_close's
//! float32 tolerances). Each case's product must also get the schedule meant for its shape:
//! output columns across the work-items (in a group sized to them) with output rows blocked per
//! work-item where the product is small or its static row is at most `SMALL_ROW` (a dynamic row
//! count's last block of rows bounds-checked; `tests/schedules.rs` checks that longer rows keep
//! the tiles) — and in full
//! mode one kernel for the product and its epilogue.

mod common;

use std::path::PathBuf;

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::lower::kernel::KExpr;
use xpu_workbench::lower::schedule::{Schedule, CHANNEL_BLOCK};
use xpu_workbench::opinfo::{self, Case};
use xpu_workbench::runtime::plan::{compile_plan, run_on_device};

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
        // 128³ multiply-adds, more than `SMALL_PRODUCT`, over rows of 128 · 128 (at most
        // `SMALL_ROW`): blocked like the small ones. (The case is named for the tiles it had
        // when it was written; they took 163 µs on the OpenCL CPU device, the blocks 51 µs.)
        ("mm_large_tiled_128", _) => blocked(128, 0, CHANNEL_BLOCK),
        // A dynamic row count with a short row (32 · 64 multiply-adds): 64 columns in one
        // group, rows in blocks of 8, the last block bounds-checked at run time — at every row
        // count, 1 (a lone ragged block) and 8 (one whole block) included.
        (n, _) if n.starts_with("linear_dynamic_rows_") => blocked(64, 0, CHANNEL_BLOCK),
        // Batch and sequence dynamic: the sequence (the later coordinate) is blocked.
        (n, _) if n.starts_with("linear_gelu_dynamic_") => blocked(128, 1, CHANNEL_BLOCK),
        // A dynamic row count over 128 · 160 multiply-adds a row (named for the tiles it had
        // under the former limit of 2¹⁴ a row): at most `SMALL_ROW`, so 160 columns in groups
        // of 32, rows blocked.
        ("mm_dynamic_rows_wide_tiled_3", _) => blocked(32, 0, CHANNEL_BLOCK),
        _ => None,
    }
}

fn names() -> Vec<String> {
    let text = std::fs::read_to_string(dir().join("index.json")).expect("tests/data/matmul_blocks/index.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("index.json is JSON");
    v["cases"].as_array().expect("a case list").iter().map(|c| c["name"].as_str().expect("every case is named").to_string()).collect()
}

fn close(what: &str, got: &Tensor, want: &Tensor, case: &Case) -> Result<(), String> {
    if got.shape() != want.shape() {
        return Err(format!("{what}: shape {:?}, PyTorch {:?}", got.shape(), want.shape()));
    }
    let (rtol, atol) = (case.rtol[0], case.atol[0]);
    let (a, b) = (got.to_f64_vec(), want.to_f64_vec());
    match a.iter().zip(&b).position(|(x, y)| !((x - y).abs() <= atol + rtol * y.abs())) {
        Some(i) => Err(format!("{what}: element {i}: {}, PyTorch {}", a[i], b[i])),
        None => Ok(()),
    }
}

#[test]
fn small_products_match_pytorch_on_opencl() {
    let index = opinfo::read_index(&dir()).expect("index");
    let names = names();
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
                    if let Err(e) = close(&what, &r.outputs[0], &want[0], case) {
                        failures.push(e);
                    }
                }
                Err(e) => failures.push(format!("{what}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
