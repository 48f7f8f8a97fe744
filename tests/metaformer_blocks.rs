//! EfficientFormer's Meta4D block against PyTorch (`tests/data/metaformer_blocks`,
//! `scripts/gen_metaformer_blocks.py`: timm's own modules in eval mode, batch dynamic). In full
//! mode the pooling token mixer `x + ls · (avg_pool(x) − x)` is one kernel (the pool computed
//! inside its epilogue), and a 1×1 convolution's batch norm + GELU is computed in the
//! convolution's kernel though the GELU reads the norm's output twice: one fold per output
//! element, shared by both reads (`lower::fusion::fuse_conv_epilogues`). Every module passes
//! `spirv-val`, and the outputs of modes none and full match PyTorch's on OpenCL.

mod common;

use std::path::PathBuf;

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::lower::kernel::KExpr;
use xpu_workbench::lower::schedule::Schedule;
use xpu_workbench::lower::{Plan, Step};
use xpu_workbench::opinfo;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/metaformer_blocks")
}

/// Per case: the kernels of its full plan, and groups of graph nodes (by name before the
/// decomposition's `_d` suffix) that must share one kernel.
fn expected(name: &str) -> (usize, &'static [&'static [&'static str]]) {
    match name {
        // The mixer (pool, `− x`, layer scale, residual); fc1 + BN + GELU; fc2 + BN + layer
        // scale + residual.
        "meta4d_block" => (3, &[&["avg_pool2d", "sub", "add"], &["convolution_d1", "erf_d20"], &["convolution_d23", "add_1"]]),
        "pool_mixer" => (1, &[&["avg_pool2d", "sub", "add"]]),
        "conv_bn_gelu" => (1, &[&["convolution_d1", "erf_d20"]]),
        _ => panic!("case `{name}` has no expectation in this test"),
    }
}

/// The fused kernels' node names, and each kernel's outermost folds (`Reduce` expressions
/// inside no other fold's body) per output element: per lane on the channel schedule, whose
/// stores are `block` lane copies (`None` where the folds are not a whole number per lane).
fn fused(plan: &Plan) -> Vec<(Vec<String>, Option<usize>)> {
    plan.steps
        .iter()
        .filter_map(|s| match s {
            Step::Fused { nodes, kernel } => {
                let mut inner = vec![false; kernel.exprs.len()];
                for e in &kernel.exprs {
                    let KExpr::Reduce { body, .. } = e else { continue };
                    let mut stack = vec![*body];
                    while let Some(x) = stack.pop() {
                        if !std::mem::replace(&mut inner[x.0 as usize], true) {
                            stack.extend(kernel.children(x));
                        }
                    }
                }
                let outer = (0..kernel.exprs.len()).filter(|i| matches!(kernel.exprs[*i], KExpr::Reduce { .. }) && !inner[*i]).count();
                let lanes = match kernel.schedule {
                    Schedule::Channels { block, .. } => block as usize,
                    _ => 1,
                };
                Some((nodes.iter().map(|n| plan.graph.node(*n).name.clone()).collect(), (outer % lanes == 0).then(|| outer / lanes)))
            }
            _ => None,
        })
        .collect()
}

/// Whether node `n` is graph node `base` or one of the nodes its decomposition made.
fn from(n: &str, base: &str) -> bool {
    n == base || n.strip_prefix(base).is_some_and(|t| t.starts_with("_d"))
}

#[test]
fn metaformer_blocks_fuse_their_epilogues_and_match_pytorch_on_opencl() {
    let index = opinfo::read_index(&dir()).expect("index");
    let names = common::opinfo::case_names(&dir());
    assert_eq!(names.len(), 3);
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
                let (count, groups) = expected(name);
                let kernels = fused(&plan);
                if plan.kernel_count() != count {
                    failures.push(format!("{what}: {} kernels, expected {count}: {kernels:?}", plan.kernel_count()));
                }
                for group in groups {
                    // The kernel whose nodes include the group's first node holds all of it,
                    // with one fold: the pool's window or the convolution's input channels,
                    // however often the epilogue reads it.
                    let holder = kernels.iter().find(|(nodes, _)| nodes.iter().any(|n| from(n, group[0])));
                    match holder {
                        Some((nodes, folds)) if group.iter().all(|g| nodes.iter().any(|n| from(n, g))) && *folds == Some(1) => {}
                        _ => failures.push(format!("{what}: {group:?} not one kernel with one fold: {kernels:?}")),
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
