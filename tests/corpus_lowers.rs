//! What kept corpus models (issue 28, torch 2.15 exports) from lowering, each held by a small
//! module that spells the construct as the architecture does (`scripts/gen_construct_samples.py`,
//! `samples/corpus/torch-2.15/construct_*`): every stage of the corpus tier against torch's
//! decompositions and outputs, then lowered in lite and full mode, every module validated, and
//! run on OpenCL at both bindings against torch's outputs where a device is present (lowering
//! and validation happen either way). The sweep that found them: docs/PERFORMANCE.md, "Issue 28:
//! every corpus model lowers".

mod common;

use std::path::PathBuf;

use common::stages::*;
use xpu_workbench::decomp::Mode;

fn case(name: &str) -> Case {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/corpus/torch-2.15");
    let exp = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.expect.json"))).unwrap()).unwrap();
    Case { torch: "2.15".into(), name: name.to_string(), dir, exp }
}

/// Every stage of the corpus tier, then lowering and OpenCL in lite and full mode; panics with
/// every stage that failed. `same_ops`: whether the decomposed graphs must hold torch's ops
/// one for one (symbolic arithmetic included).
fn lowers_and_runs(name: &str, same_ops: bool) {
    let c = case(name);
    let model = c.load().unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut failed = Vec::new();
    let mut check = |stage: &str, r: Outcome| {
        if let Err((cell, long)) = r {
            failed.push(format!("{stage}: {cell}: {long}"));
        }
    };
    check("import", stage_import(&c));
    check("shapes", stage_shapes(&c, &model));
    check("guards", stage_guards(&c, &model));
    if same_ops {
        check("core", stage_decomp(&c, &model, Mode::Core, "core"));
        check("full", stage_decomp(&c, &model, Mode::Full, "inductor"));
    }
    for mode in [Mode::None, Mode::Lite, Mode::Full] {
        check(&format!("eval {}", mode.name()), stage_eval(&c, &model, mode));
    }
    for mode in [Mode::Lite, Mode::Full] {
        let r = stage_opencl(&c, &model, mode);
        if let Some(Err(e)) = r.val {
            check(&format!("spirv-val {}", mode.name()), Err(e));
        }
        match r.run {
            Some(run) => check(&format!("opencl {}", mode.name()), run),
            None => eprintln!("{name}: lowered in {} mode; no OpenCL device to run it", mode.name()),
        }
    }
    assert!(failed.is_empty(), "{name}:\n{}", failed.join("\n"));
}

/// Bailing-hybrid's chunked attention pads its length up to a multiple of the chunk, `s + Mod(4 -
/// Mod(s, 4), 4)`, and views it as `n // (n // 4)` rows per chunk: the masked fill of a 4 × 4
/// mask into those rows did not broadcast (`4 vs (s + Mod(..))//(..)`) until the symbolic layer
/// read the padded length as `4*((s + 3)//4)` (`sym::multiple`); then the `constant_pad_nd` by a
/// SymInt amount did not lower (its amounts are size arguments now). Torch's ShapeEnv does not
/// simplify `n // (n // 4)`: its graphs keep that `floordiv` node (and the export a guard that it
/// is 4), where ours have the number, so the op multisets differ by that one node; the outputs
/// are checked against torch's in every mode.
#[test]
fn a_length_padded_to_a_multiple_of_a_chunk_broadcasts_against_the_chunk() {
    lowers_and_runs("construct_pad_multiple", false);
}

/// `F.pad` by `-len % block`, a SymInt: lowered with the amount as a size argument.
#[test]
fn padding_by_a_symint_lowers() {
    lowers_and_runs("construct_pad_symint", true);
}

/// DeepSeek-V4's Sinkhorn normalisation, 60 alternating row and column sums each reading the
/// last: every sum small enough to inline, the last kernel needed more than 128 loops until
/// lowering bounded the reductions one kernel inlines (`lower::reduction_budget`; Bailing's
/// row-by-row triangle update is the same chain).
#[test]
fn long_chains_of_small_reductions_lower_within_a_kernels_loops() {
    lowers_and_runs("construct_reduction_chain", true);
}

/// timm NF-Nets' `ScaledStdConv2d`: `batch_norm` in training mode without running statistics
/// standardises the weight; it was refused as training. Core: `_native_batch_norm_legit.no_stats`;
/// Inductor's table: `var_mean` over all but the channel, as torch's.
#[test]
fn batch_norm_by_the_batchs_own_statistics_decomposes_as_torchs() {
    lowers_and_runs("construct_batch_stats_norm", true);
}
