//! Convolutions on tiny output maps (`lower::tiny_map`, `Schedule::Spread`: the output channels
//! across the work-items, batch × pixels unrolled per work-item, the weight parameter read from
//! a copy stored transposed) against PyTorch: the cases of `tests/data/tiny_maps`
//! (`scripts/gen_tiny_maps.py`: stride 2, padding, with and without bias, a fused residual add
//! and ReLU, 72 output channels (a ragged group), batch 1–3, 1×1 and 4×4 maps, a 1-D convolution)
//! lowered in modes none and full, every module validated by `spirv-val`, run on OpenCL and
//! compared with PyTorch's outputs. Each case must get its expected schedule: a 5×5 map keeps
//! the blocked-pixel schedule; a batch of 5 (20 lanes) and a dynamic batch go on the grid's rows.

mod common;

use std::path::PathBuf;

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::lower::kernel::{KExpr, Layout};
use xpu_workbench::lower::schedule::Schedule;
use xpu_workbench::lower::tiny_map::SPREAD_GROUP;
use xpu_workbench::lower::wide_block::WIDE_CHANNEL_BLOCK;
use xpu_workbench::opinfo;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny_maps")
}

/// The schedule each case's convolution kernel must get, by the case's name in the index.
fn expected(name: &str) -> Option<Schedule> {
    let spread = |lanes| Some(Schedule::Spread { group: SPREAD_GROUP, coord: 1, lanes, outer: 0 });
    match name {
        // Batch × output pixels: 3 × 2×2, 1 × 2×2, 3 × 2×2, 2 × 1×1, 2 × 4.
        "s2_bias_relu_b3" | "residual_ragged_72_b3" => spread(12),
        "pad_no_bias_b1" => spread(4),
        "map_1x1_b2" => spread(2),
        "map_4x4_b1" => spread(16),
        // A dynamic batch on the grid's rows, the 2×2 map's pixels as lanes.
        "dynamic_batch_b3" => Some(Schedule::Spread { group: SPREAD_GROUP, coord: 1, lanes: 4, outer: 1 }),
        "conv1d_map_4_b2" => spread(8),
        // 25 pixels: more than a tiny map; padded to groups of 16 as before.
        "map_5x5_stays_blocked" => Some(Schedule::Channels { group: 16, dims: 2, coord: 1, block: WIDE_CHANNEL_BLOCK }),
        // 5 × 4 = 20 lanes, more than `tiny_map::MAX_LANES`: the batch on the grid's rows.
        "batch_5_rows_on_the_grid" => Some(Schedule::Spread { group: SPREAD_GROUP, coord: 1, lanes: 4, outer: 1 }),
        _ => None,
    }
}

#[test]
fn tiny_map_convolutions_match_pytorch_on_opencl() {
    let index = opinfo::read_index(&dir()).expect("index");
    let names = common::opinfo::case_names(&dir());
    assert_eq!(names.len(), index.cases.len());
    let mut dev = common::opencl_device();
    let mut failures = Vec::new();
    for (case, name) in index.cases.iter().zip(&names) {
        let want_schedule = expected(name).unwrap_or_else(|| panic!("case `{name}` has no expected schedule in this test"));
        let files = opinfo::read_archive(&dir(), &case.file).expect("archive");
        let model = opinfo::model(case, &files).expect("graph");
        let inputs = opinfo::inputs(case, &files).expect("inputs");
        let want = opinfo::outputs(case, &files).expect("PyTorch's outputs");
        for mode in [Mode::None, Mode::Full] {
            let what = format!("{name} ({mode:?})");
            let plan = xpu_workbench::lower::lower(&model, &model.graphs[0], mode, &Marks::default()).expect("lowers");
            // The convolution's kernel: the one with a fold (mode none also has epilogue kernels).
            let schedules: Vec<Schedule> = plan.kernels().map(|k| k.schedule).collect();
            let conv = plan.kernels().find(|k| k.exprs.iter().any(|e| matches!(e, KExpr::Reduce { .. })));
            match conv {
                Some(k) if k.schedule == want_schedule => {
                    // On the spread schedule the weight is read only from its transposed copy.
                    let layouts: Vec<Layout> = k.buffers.iter().filter(|b| b.value.contains("weight")).map(|b| b.layout).collect();
                    let want_layouts = if matches!(want_schedule, Schedule::Spread { .. }) { [Layout::LeadingLast] } else { [Layout::Plain] };
                    if layouts != want_layouts {
                        failures.push(format!("{what}: the weight's buffers have layouts {layouts:?}, expected {want_layouts:?}"));
                    }
                }
                _ => failures.push(format!("{what}: schedules {schedules:?}, expected the convolution on {want_schedule:?}")),
            }
            let Some(outputs) = common::opinfo::compile_and_run(&mut dev, &plan, &model, &inputs, &what, &mut failures) else { continue };
            if let Err(e) = common::opinfo::close(&what, &outputs[0], &want[0], case) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
