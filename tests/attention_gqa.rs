//! Grouped-query attention against PyTorch: the cases of `tests/data/attention_gqa`
//! (`scripts/gen_attention_gqa.py`: key and value heads repeated through `expand` + `reshape`
//! as transformers' `repeat_kv` does, a float mask, batch and sequence dynamic; 4 query heads
//! over 2 key/value heads and over 1; run at one key, at Llama's 12, and at sequences no group
//! divides) lowered in modes none and full, every module validated by `spirv-val`, run on
//! OpenCL and compared with PyTorch's outputs (assert_close's float32 tolerances).
//!
//! The attention kernel must be on the cooperative row schedule with its scores computed once
//! per row (cached in local memory before the row's maximum and denominator, which read them:
//! `codegen::spirv::rowcache`), and no division by a run-time size may be left inside its folds: the key head behind the reshape,
//! `(h·8s + 8j + e) / 16s`, is `h / 2`, a row constant (`lower::kernel::index`). Left as a
//! division per key element it made Llama's attention kernel 6× slower (docs/PERFORMANCE.md,
//! "Issue 28: attention, scores once per row").

mod common;

use std::path::PathBuf;

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::lower::kernel::Kernel;
use xpu_workbench::lower::schedule::Schedule;
use xpu_workbench::opinfo;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/attention_gqa")
}

#[test]
fn grouped_query_attention_matches_pytorch_on_opencl() {
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
            let plan = xpu_workbench::lower::lower(&model, &model.graphs[0], mode, &Marks::default()).expect("lowers");
            let attention: Vec<&Kernel> = plan.kernels().filter(|k| k.name.contains("scaled_dot_product")).collect();
            match &attention[..] {
                [k] => {
                    if !matches!(k.schedule, Schedule::Rows { coop: true, .. }) {
                        failures.push(format!("{what}: attention on {:?}, not the cooperative row schedule", k.schedule));
                    }
                    // The scores cached once per row, read by the maximum's and the
                    // denominator's folds, then the softmax weights cached from them.
                    let cached: Vec<(bool, usize)> =
                        xpu_workbench::codegen::spirv::row_vectors(k).iter().map(|rv| (rv.early, rv.aliases.len())).collect();
                    if cached != [(true, 2), (false, 0)] {
                        failures.push(format!("{what}: row vectors (early, copies in the statistics) {cached:?}, expected the scores then the weights"));
                    }
                    let n = common::opinfo::divisions_in_folds(k);
                    if n > 0 {
                        failures.push(format!("{what}: {n} divisions by a run-time size inside the attention's folds"));
                    }
                }
                other => failures.push(format!("{what}: {} attention kernels, expected one", other.len())),
            }
            let Some(outputs) = common::opinfo::compile_and_run(&mut dev, &plan, &model, &inputs, &what, &mut failures) else { continue };
            if let Err(e) = common::opinfo::close(&what, &outputs[0], &want[0], case) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
