//! Architectures of the generated corpus (`scripts/gen_corpus.py`, torch 2.15) that found a defect,
//! kept in `samples/corpus/torch-2.15/` so the fix stays fixed where no corpus is present.
//!
//! Falcon (`transformers:FalconForCausalLM`, multi-query attention): the key and value of its
//! `scaled_dot_product_attention` have one head under four query heads and rely on PyTorch's
//! broadcasting. The OpenCL attention kernel read key/value head `h` that does not exist (NaN in
//! none and full mode, a relative error of 0.36 in lite); the interpreter was right.

mod common;

use std::path::PathBuf;

use common::stages::*;
use xpu_workbench::decomp::Mode;

fn falcon() -> Case {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/corpus/torch-2.15");
    let name = "hf_falcon_causal_lm".to_string();
    let exp = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.expect.json"))).unwrap()).unwrap();
    Case { torch: "2.15".into(), name, dir, exp }
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
