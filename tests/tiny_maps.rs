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

use xpu_workbench::lower::kernel::Layout;
use xpu_workbench::lower::schedule::Schedule;
use xpu_workbench::lower::tiny_map::SPREAD_GROUP;
use xpu_workbench::lower::wide_block::WIDE_CHANNEL_BLOCK;

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
    // On the spread schedule the weight is read only from its transposed copy.
    let failures = common::opinfo::conv_cases_on_opencl(&dir(), expected, |k| {
        let layouts: Vec<Layout> = k.buffers.iter().filter(|b| b.value.contains("weight")).map(|b| b.layout).collect();
        let want_layouts = if matches!(k.schedule, Schedule::Spread { .. }) { [Layout::LeadingLast] } else { [Layout::Plain] };
        match layouts == want_layouts {
            true => Ok(()),
            false => Err(format!("the weight's buffers have layouts {layouts:?}, expected {want_layouts:?}")),
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
