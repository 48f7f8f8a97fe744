//! Depthwise convolutions (`lower::schedule::Schedule::Depthwise`, `lower::ops::depthwise`)
//! against PyTorch: the cases of `tests/data/dwconv_blocks` (`scripts/gen_dwconv_blocks.py`:
//! 3×3, 5×5 and 7×7 kernels, stride 1 and 2, dilation, output widths no column group divides,
//! a channel multiplier of 2, bias or none, ReLU, an inference batch norm with SiLU and
//! hardswish epilogues, an 8-wide map) lowered in modes none and full, every module validated
//! by `spirv-val`, run on OpenCL and compared with PyTorch's outputs (assert_close's float32
//! tolerances). Each case's convolution must also get the schedule meant for its shape: the
//! output width across a group whose size leaves the fewest idle (the largest on a tie), or the
//! general path's where the map is too narrow or the taps stride along W (stride or dilation
//! 2); and only the depthwise schedule's SPIR-V loads its taps under branches.

mod common;

use std::path::PathBuf;

use xpu_workbench::lower::schedule::Schedule;
use xpu_workbench::codegen::spirv;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/dwconv_blocks")
}

/// The schedule each case's convolution kernel must get, by the case's name in the index.
fn expected(name: &str) -> Option<Schedule> {
    let dw = |group| Some(Schedule::Depthwise { group });
    match name {
        // 32 wide: groups of 32 and 16 both fill it; the larger wins.
        "dw3x3_w32_bias" | "dw5x5_w30_nobias" => dw(32),
        // 16 wide.
        "dw7x7_16x16_relu" | "dw3x3_bn_silu" | "dw5x5_hardswish" => dw(16),
        // Stride 2 along W measured no faster on the depthwise path: the general one lowers
        // them, whose column schedule their 42- and 40-pixel maps do not fill.
        "dw3x3_stride2_w14" | "dw5x5_stride2_w16" => Some(Schedule::Elementwise),
        // A multiplier of 2: 8 output channels read 4 input channels, 24 wide.
        "dw3x3_multiplier2" => dw(32),
        // Dilation 2 along W: a strided tap like stride 2's, on the general path (240 pixels).
        "dw3x3_dilated_w24" => Some(Schedule::Columns { group: 256, dims: 2 }),
        // 8 wide: half of a group of 16 idle; the column schedule over the 64-pixel map.
        "dw5x5_narrow_8x8" => Some(Schedule::Columns { group: 64, dims: 2 }),
        _ => None,
    }
}

/// On the depthwise schedule the input map's loads sit in branches of their own (a selection
/// whose one block computes the pointer and loads, an `OpPhi` of the loaded value at its
/// merge), and no index is clamped through a select: what lets the runtime load a tap as one
/// masked vector. Other schedules keep the clamped load and have no such branch.
fn branch_loads(k: &xpu_workbench::lower::kernel::Kernel) -> Result<(), String> {
    let module = spirv::compile(k).map_err(|e| format!("codegen: {e}"))?;
    let asm = spirv::disassemble(&module);
    let lines: Vec<&str> = asm.lines().map(str::trim).collect();
    let pattern: [fn(&str) -> bool; 8] = [
        |l| l.starts_with("OpSelectionMerge"),
        |l| l.starts_with("OpBranchConditional"),
        |l| l.ends_with("= OpLabel"),
        |l| l.contains("PtrAccessChain"),
        |l| l.contains("= OpLoad %float"),
        |l| l.starts_with("OpBranch "),
        |l| l.ends_with("= OpLabel"),
        |l| l.contains("= OpPhi %float"),
    ];
    let branch_loads = lines.windows(pattern.len()).filter(|w| w.iter().zip(&pattern).all(|(l, p)| p(l))).count();
    let index_selects = lines.iter().filter(|l| l.contains("OpSelect %ulong")).count();
    let on_depthwise = matches!(k.schedule, Schedule::Depthwise { .. });
    match (on_depthwise, branch_loads, index_selects) {
        (true, 1.., 0) | (false, 0, _) => Ok(()),
        (true, b, n) => Err(format!("{b} branch loads and {n} clamped indices on the depthwise schedule")),
        (false, b, _) => Err(format!("{b} branch loads off the depthwise schedule")),
    }
}

#[test]
fn depthwise_convolutions_match_pytorch_on_opencl() {
    let failures = common::opinfo::conv_cases_on_opencl(&dir(), expected, branch_loads);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
