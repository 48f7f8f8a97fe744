//! Norms whose statistics were folded once per output of their consumer, shrunk from issue
//! 28's costliest reduction kernels (`tests/data/norm_reductions`,
//! `scripts/gen_norm_reductions.py`): a layer norm over the channels of an NCHW map (timm's
//! `LayerNorm2d` through `permute`, with the head's global pool; ConvNeXt's `channels_first`
//! norm) and the token mean over a layer norm or an RMS norm (EfficientFormer's and AIMv2's
//! heads), each exported with dynamic dims and run at two bindings. In full mode the norm's
//! statistics must have a kernel of their own (`lower::recompute`), a statistic over the
//! channels of an NCHW map must run one work-item per pixel (`lower::strided_rows`), every
//! module must pass `spirv-val`, and the results must match PyTorch's on OpenCL.

mod common;

use std::path::PathBuf;

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::lower::schedule::Schedule;
use xpu_workbench::lower::Step;
use xpu_workbench::opinfo;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/norm_reductions")
}

/// What each case's statistics kernels must look like, by the case's op: the graph nodes that
/// must each be the root of a kernel of their own, and the schedule of the first of them.
fn expected(op: &str) -> (&'static [&'static str], fn(&Schedule) -> bool) {
    let per_pixel: fn(&Schedule) -> bool = |s| matches!(s, Schedule::Rows { coop: false, .. });
    let elementwise: fn(&Schedule) -> bool = |s| matches!(s, Schedule::Elementwise);
    let cooperative: fn(&Schedule) -> bool = |s| matches!(s, Schedule::Rows { coop: true, .. });
    match op {
        // The permuted layer norm's var_mean over C (stride H·W) for each pixel (n, h, w).
        "channel_norm_pool" => (&["var_mean"], per_pixel),
        // `mean(1, keepdim)` of [N, C, H, W] (H and W dynamic: no static column), then the
        // variance's `mean(1)` over the centred squares.
        "channel_norm" => (&["mean", "mean_1"], elementwise),
        // A norm over the last dim: a row per token, folded by a work-group.
        "token_mean_layer_norm" => (&["var_mean"], cooperative),
        "token_mean_rms_norm" => (&["mean"], cooperative),
        _ => panic!("case op `{op}` has no expectation in this test"),
    }
}

#[test]
fn norm_statistics_are_folded_once_and_match_pytorch_on_opencl() {
    let index = opinfo::read_index(&dir()).expect("index");
    let names = common::opinfo::case_names(&dir());
    assert_eq!(names.len(), index.cases.len());
    assert!(index.cases.len() >= 8, "every case at two bindings");
    let mut dev = common::opencl_device();
    let mut failures = Vec::new();
    for (case, name) in index.cases.iter().zip(&names) {
        let files = opinfo::read_archive(&dir(), &case.file).expect("archive");
        let model = opinfo::model(case, &files).expect("graph");
        let inputs = opinfo::inputs(case, &files).expect("inputs");
        let want = opinfo::outputs(case, &files).expect("PyTorch's outputs");
        let (roots, schedule_ok) = expected(&case.op);
        for mode in [Mode::None, Mode::Full] {
            let what = format!("{name} ({mode:?})");
            let plan = xpu_workbench::lower::lower(&model, &model.graphs[0], mode, &Marks::default()).expect("lowers");
            if mode == Mode::Full {
                // Each statistic is the last node (the root) of exactly one kernel, and no
                // other kernel computes it inline.
                let fused: Vec<(Vec<String>, Schedule)> = plan
                    .steps
                    .iter()
                    .filter_map(|s| match s {
                        Step::Fused { nodes, kernel } => Some((nodes.iter().map(|n| plan.graph.node(*n).name.clone()).collect(), kernel.schedule)),
                        _ => None,
                    })
                    .collect();
                let stat = |n: &str, root: &str| n == root || n.strip_prefix(root).is_some_and(|t| t.starts_with("_d"));
                for (i, root) in roots.iter().enumerate() {
                    let holders: Vec<&(Vec<String>, Schedule)> = fused.iter().filter(|(nodes, _)| nodes.iter().any(|n| stat(n, root))).collect();
                    match holders[..] {
                        [(nodes, schedule)] if nodes.last().is_some_and(|n| stat(n, root)) => {
                            if i == 0 && !schedule_ok(schedule) {
                                failures.push(format!("{what}: `{root}`'s kernel is on {schedule:?}"));
                            }
                        }
                        _ => failures.push(format!("{what}: `{root}` is not the root of one kernel of its own: {fused:?}")),
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
