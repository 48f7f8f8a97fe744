//! Matrix products reading their row operand through a view, against PyTorch: the cases of
//! `tests/data/view_products` (`scripts/gen_view_products.py`: a small decoder's output
//! projection of attention's `[B, H, S, E]` output transposed and reshaped to `[B, S, H·E]`, and
//! its language-model head over a sliced `[B, S, D]` hidden state; batch and sequence dynamic,
//! run at sequence 1, at the corpus exports' 3 × 12 and at sequences no row block divides)
//! lowered in modes none and full, every module validated by `spirv-val`, run on OpenCL and
//! compared with PyTorch's outputs.
//!
//! Each product must leave the tiles with its rows blocked ([`Schedule::Channels`]) and keep no
//! division by a run-time size inside its contraction: the view's splits of `D·row + k` by
//! `D·S` (the batch) and by `E` (the head) fold to a division of the row alone and to constant
//! divisions of `k` (`lower::kernel::index`). Left in the loop, they made the corpus decoders'
//! head 5× and their output projection 3–4× slower than a product read contiguously
//! (docs/PERFORMANCE.md, "Issue 28: small decoders' products and attention").

mod common;

use std::path::PathBuf;

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::lower::kernel::Kernel;
use xpu_workbench::lower::schedule::Schedule;
use xpu_workbench::opinfo;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/view_products")
}

#[test]
fn products_read_through_views_match_pytorch_on_opencl() {
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
            // The products are the kernels reading a weight (the norm reads none); in full mode
            // `linear` is decomposed into `mm` and views, one kernel per product.
            let products: Vec<&Kernel> = plan.kernels().filter(|k| k.buffers.iter().any(|b| b.value.ends_with("_weight"))).collect();
            if products.len() != 2 {
                failures.push(format!("{what}: {} kernels with a fold, expected the two products", products.len()));
            }
            for k in &products {
                if !matches!(k.schedule, Schedule::Channels { .. }) {
                    failures.push(format!("{what}: `{}` on {:?}, expected rows blocked on the column schedule", k.name, k.schedule));
                }
                let n = common::opinfo::divisions_in_folds(k);
                if n > 0 {
                    failures.push(format!("{what}: `{}` keeps {n} divisions by a run-time size inside its contraction", k.name));
                }
            }
            let Some(outputs) = common::opinfo::compile_and_run(&mut dev, &plan, &model, &inputs, &what, &mut failures) else { continue };
            for (i, w) in want.iter().enumerate() {
                match outputs.get(i) {
                    Some(got) => {
                        if let Err(e) = common::opinfo::close(&format!("{what} output {i}"), got, w, case) {
                            failures.push(e);
                        }
                    }
                    None => failures.push(format!("{what}: no output {i}")),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
