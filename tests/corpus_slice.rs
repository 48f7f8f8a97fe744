//! Architectures of the generated corpus (`scripts/gen_corpus.py`, torch 2.15) that found a defect,
//! kept in `samples/corpus/torch-2.15/` so the fix stays fixed where no corpus is present.
//!
//! Falcon (`transformers:FalconForCausalLM`, multi-query attention): the key and value of its
//! `scaled_dot_product_attention` have one head under four query heads and rely on PyTorch's
//! broadcasting. The OpenCL attention kernel read key/value head `h` that does not exist (NaN in
//! none and full mode, a relative error of 0.36 in lite); the interpreter was right.
//!
//! Where `decompose --mode core` / `--mode full` differed from torch's `run_decompositions()` /
//! `run_decompositions(select_decomp_table())` (issue 25, item 6), one architecture per cause:
//! - GLM-ASR's encoder: `scaled_dot_product_attention` with `enable_gqa=True` (two key/value heads
//!   under four query heads) was declined; torch's math path repeats the key/value heads, its CPU
//!   flash kernel takes them as they are.
//! - Apertus: `expm1` is in neither of torch's tables and stays whole (it was reported as a
//!   missing rule); `softplus` is in export's table and, with the same function, in Inductor's,
//!   so full mode expands it too.
//! - Arcee: `square` is a composite op the interpreter runs; torch's tracing still expands it
//!   (`pow`), so core and full mode do.
//! - BEiT: export's table splits `unbind` into `slice` + `squeeze`, and whether attention's
//!   `reshape`s copy depends on those views' strides (a `squeeze` keeps them).

mod common;

use std::path::PathBuf;

use common::stages::*;
use xpu_workbench::decomp::Mode;

fn sample(name: &str) -> Case {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/corpus/torch-2.15");
    let exp = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.expect.json"))).unwrap()).unwrap();
    Case { torch: "2.15".into(), name: name.to_string(), dir, exp }
}

fn falcon() -> Case {
    sample("hf_falcon_causal_lm")
}

/// `decompose --mode core` and `--mode full` give torch's op multisets, with no rule missing.
fn core_and_full_equal_torchs(c: &Case) {
    let model = c.load().unwrap();
    for (mode, key) in [(Mode::Core, "core"), (Mode::Full, "inductor")] {
        if let Err((cell, long)) = stage_decomp(c, &model, mode, key) {
            panic!("{}, {key}: {cell}\n{long}", c.name);
        }
    }
}

#[test]
fn grouped_query_attention_decomposes_and_evaluates_as_pytorch() {
    let c = sample("hf_glmasr_encoder_model");
    core_and_full_equal_torchs(&c);
    let model = c.load().unwrap();
    // Core runs the math path's repeated heads, full the flash kernel's own head mapping.
    for mode in [Mode::None, Mode::Core, Mode::Full] {
        if let Err((cell, long)) = stage_eval(&c, &model, mode) {
            panic!("interpreter, {mode:?}: {cell}: {long}");
        }
    }
}

#[test]
fn ops_torchs_tables_keep_stay_and_shared_export_rules_apply_in_full_mode() {
    core_and_full_equal_torchs(&sample("hf_apertus_causal_lm"));
}

#[test]
fn composite_ops_the_interpreter_runs_still_expand_as_torch_traces_them() {
    core_and_full_equal_torchs(&sample("hf_arcee_causal_lm"));
}

#[test]
fn unbind_splits_into_views_whose_strides_decide_attentions_copies() {
    core_and_full_equal_torchs(&sample("timm_beit_base_patch16_224"));
}

#[test]
fn multi_query_attention_matches_pytorch_in_every_mode_on_both_backends() {
    let c = falcon();
    let model = c.load().unwrap();
    for mode in [Mode::None, Mode::Lite, Mode::Full] {
        if let Err((cell, long)) = stage_eval(&c, &model, mode) {
            panic!("interpreter, {mode:?}: {cell}: {long}");
        }
        match stage_opencl(&c, &model, mode).run {
            Some(Ok(())) => {}
            Some(Err((cell, long))) => panic!("OpenCL, {mode:?}: {cell}: {long}"),
            None => eprintln!("skipped OpenCL, {mode:?}: no OpenCL device"),
        }
    }
}
