//! Grouped matrix products (`tests/data/grouped_mm`, `scripts/gen_grouped_mm.py`) on the device
//! against PyTorch's own `_grouped_mm` and transformers' `grouped_mm_fallback`: group splits with
//! empty groups, rows past the last offset (zero in transformers' op), a transposed expert
//! weight with a dynamic row count, the batched 3-D × 3-D form, and transformers' MoE block in
//! miniature (router `topk` with distinct and with tied logits, `sort` of the routed expert ids
//! over a dynamic line, `histc`, `cumsum`, two grouped products). Each is lowered in modes
//! none and full and must run as kernels (no host step), every module validated by
//! `spirv-val`, and the results compared with PyTorch's outputs on OpenCL. Expert weights held
//! as parameters (`experts_*`, transformers' experts as the corpus exports them) put the
//! products on the column schedule, the weights read from copies stored transposed per expert.

mod common;

use std::path::PathBuf;

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::exec;
use xpu_workbench::lower::kernel::{KExpr, Layout};
use xpu_workbench::lower::schedule::Schedule;
use xpu_workbench::opinfo;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/grouped_mm")
}

#[test]
fn grouped_products_run_as_kernels_and_match_pytorch_on_opencl() {
    let index = opinfo::read_index(&dir()).expect("index");
    let names = common::opinfo::case_names(&dir());
    assert_eq!(names.len(), index.cases.len());
    assert!(names.len() >= 19, "the generator writes nineteen cases, found {}", names.len());
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
            if plan.host_steps() != 0 {
                failures.push(format!("{what}: {} host steps, expected the product as a kernel", plan.host_steps()));
            }
            // One kernel folds the dot products, on the elementwise-derived schedules (no tiles:
            // the weight a row reads depends on the row's group).
            let products: Vec<Schedule> =
                plan.kernels().filter(|k| k.exprs.iter().any(|e| matches!(e, KExpr::Reduce { .. }))).map(|k| k.schedule).collect();
            let block = name.starts_with("moe_block") || name.starts_with("experts");
            if !block && (products.len() != 1 || matches!(products[0], Schedule::Tiled { .. })) {
                failures.push(format!("{what}: product kernels on {products:?}, expected one, not tiled"));
            }
            let Some(outputs) = common::opinfo::compile_and_run(&mut dev, &plan, &model, &inputs, &what, &mut failures) else { continue };
            if outputs.len() != want.len() {
                failures.push(format!("{what}: {} outputs, PyTorch {}", outputs.len(), want.len()));
            }
            for (k, (got, want)) in outputs.iter().zip(&want).enumerate() {
                if let Err(e) = common::opinfo::close(&format!("{what} output {k}"), got, want, case) {
                    failures.push(e);
                }
            }
        }
        // The reference interpreter agrees with PyTorch too (it is what host steps ran).
        match exec::run(&model, &model.graphs[0], &inputs) {
            Ok(got) => {
                for (k, (got, want)) in got.iter().zip(&want).enumerate() {
                    if let Err(e) = common::opinfo::close(&format!("{name} (interpreter) output {k}"), got, want, case) {
                        failures.push(e);
                    }
                }
            }
            Err(e) => failures.push(format!("{name} (interpreter): {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// transformers' experts with their weights as parameters: every grouped product runs on the
/// column schedule (a work-item per output column, not a work-group per output), and reads its
/// weight transposed per expert where the export reads it transposed (`gate_up_proj`,
/// `down_proj`), plain where it is stored `[G, K, N]` already. Results: the test above.
#[test]
fn resident_expert_weights_put_grouped_products_on_the_column_schedule() {
    let index = opinfo::read_index(&dir()).expect("index");
    let names = common::opinfo::case_names(&dir());
    let mut seen = 0;
    let mut failures = Vec::new();
    for (case, name) in index.cases.iter().zip(&names).filter(|(_, n)| n.starts_with("experts")) {
        let files = opinfo::read_archive(&dir(), &case.file).expect("archive");
        let model = opinfo::model(case, &files).expect("graph");
        for mode in [Mode::None, Mode::Full] {
            let plan = xpu_workbench::lower::lower(&model, &model.graphs[0], mode, &Marks::default()).expect("lowers");
            let products: Vec<_> = plan.kernels().filter(|k| k.exprs.iter().any(|e| matches!(e, KExpr::Reduce { .. }))).collect();
            let want = if name.starts_with("experts_plain") { 1 } else { 2 };
            if products.len() != want {
                failures.push(format!("{name} ({mode:?}): {} product kernels, expected {want}", products.len()));
            }
            for k in products {
                if !matches!(k.schedule, Schedule::Columns { dims: 1, .. }) {
                    failures.push(format!("{name} ({mode:?}): `{}` on {:?}, expected the column schedule", k.name, k.schedule));
                }
                let weights: Vec<Layout> = k.buffers.iter().filter(|b| b.value.contains("proj") || b.value.ends_with("_w") || b.value == "w").map(|b| b.layout).collect();
                let want = if name.starts_with("experts_plain") { Layout::Plain } else { Layout::Transposed };
                if weights != [want] {
                    failures.push(format!("{name} ({mode:?}): `{}` reads its weight as {weights:?}, expected [{want:?}]", k.name));
                }
            }
        }
        seen += 1;
    }
    assert_eq!(seen, 7, "the generator writes seven experts cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
