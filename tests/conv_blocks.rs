//! The output-channel blocking of convolutions (`lower::schedule::Schedule::Channels`) against
//! PyTorch: the cases of `tests/data/conv_blocks` (`scripts/gen_conv_blocks.py`: stride,
//! padding, dilation, groups, 1-, 2- and 3-D, output channel counts the block does not divide,
//! 3×3 and 5×5 output maps, a fused ReLU, deep folds blocked by 16) lowered in modes none and full, every module
//! validated by `spirv-val`, run on OpenCL and compared with PyTorch's outputs (assert_close's
//! float32 tolerances). Each case must also get the schedule the scheduler is meant to pick for
//! its shape: blocked where lanes of output channels share their input taps (a smaller block
//! where a group has fewer channels than a block, or channels per group it does not divide),
//! the column schedule where they cannot (depthwise).

mod common;

use std::path::PathBuf;

use xpu_workbench::exec;
use xpu_workbench::lower::schedule::{Schedule, CHANNEL_BLOCK};
use xpu_workbench::lower::wide_block::WIDE_CHANNEL_BLOCK;
use xpu_workbench::opinfo;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/conv_blocks")
}

/// The schedule each case's convolution kernel must get, by the case's name in the index.
fn expected(name: &str) -> Option<Schedule> {
    let blocked = |group, block| Some(Schedule::Channels { group, dims: 2, coord: 1, block });
    match name {
        "odd_channels_3x3" => blocked(64, CHANNEL_BLOCK),
        // 3 channels × 49 taps: deep enough for 16 lanes.
        "stem_7x7_stride2" => blocked(128, WIDE_CHANNEL_BLOCK),
        "dilated_groups_of_16" => blocked(128, CHANNEL_BLOCK),
        // Lanes of one block must stay in one group of 6 channels.
        "groups_of_6" => blocked(64, 6),
        "few_channels" => blocked(256, 5),
        "depthwise_unblocked" => Some(Schedule::Columns { group: 64, dims: 2 }),
        "pointwise_7x7_map" => blocked(64, CHANNEL_BLOCK),
        "strided_padded_relu" => blocked(128, CHANNEL_BLOCK),
        // Maps no group of 64 or more fits: 9 and 25 pixels padded to groups of 16 (16 and 32
        // columns).
        "small_map_3x3" => blocked(16, WIDE_CHANNEL_BLOCK),
        "small_map_5x5_stride2" => blocked(16, WIDE_CHANNEL_BLOCK),
        "conv1d_stride2" => Some(Schedule::Channels { group: 64, dims: 1, coord: 1, block: CHANNEL_BLOCK }),
        "conv3d_odd" => blocked(64, CHANNEL_BLOCK),
        // Folds of 144, 128 and 144 multiply-adds per output: 16 lanes (20 channels: one
        // ragged block), the channel loop innermost; a group of 16 channels is one block.
        "deep_3x3_ragged_16" | "deep_pointwise_1x1" | "deep_groups_of_16" => blocked(64, WIDE_CHANNEL_BLOCK),
        // 4 pixels: no group of 16 fits with at most half idle; deep folds take a group of 4.
        "deep_2x2_map" => blocked(4, WIDE_CHANNEL_BLOCK),
        _ => None,
    }
}

/// The case names, in index order (the loader's `Case` keeps only what every case set has).

#[test]
fn interpreter_convolves_as_pytorch() {
    let index = opinfo::read_index(&dir()).expect("index");
    let names = common::opinfo::case_names(&dir());
    assert_eq!(names.len(), index.cases.len());
    let mut failures = Vec::new();
    for (case, name) in index.cases.iter().zip(&names) {
        let files = opinfo::read_archive(&dir(), &case.file).expect("archive");
        let model = opinfo::model(case, &files).expect("graph");
        let inputs = opinfo::inputs(case, &files).expect("inputs");
        let want = opinfo::outputs(case, &files).expect("PyTorch's outputs");
        let got = exec::run(&model, &model.graphs[0], &inputs).expect("interpreter");
        if let Err(e) = common::opinfo::close(name, &got[0], &want[0], case) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn blocked_convolutions_match_pytorch_on_opencl() {
    let failures = common::opinfo::conv_cases_on_opencl(&dir(), expected, |_| Ok(()));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
