//! uint8 bilinear and bicubic resizing against PyTorch's own outputs (`tests/data/resample_u8`,
//! written by `scripts/gen_resample_u8.py`): PyTorch's CPU kernels resize uint8 images in fixed
//! point with the float path's taps, a tap past the edge adding its weight to the edge pixel.
//! Every case must equal PyTorch's bytes exactly, in the interpreter and through the OpenCL
//! kernel (lowered in mode `none` and `full`): sizes up and down, square and not, both
//! `align_corners`, output sizes and scale factors.

mod common;

use std::path::PathBuf;

use common::graph_case::{lowered, GraphCase};
use serde::Deserialize;
use xpu_workbench::decomp::Mode;
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::{Arg, DType};
use xpu_workbench::npy;
use xpu_workbench::runtime::plan::run_on_device;

#[derive(Deserialize)]
struct Index {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    case: usize,
    mode: String,
    output: Vec<usize>,
    output_size: Option<Vec<i64>>,
    scale_factors: Option<Vec<f64>>,
    align_corners: bool,
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/resample_u8")
}

fn load(name: &str) -> Tensor {
    let a = npy::read(&dir().join(name)).expect("npy");
    Tensor::from_le_bytes(a.dtype, &a.shape, &a.data).expect("tensor")
}

#[test]
fn uint8_resizing_equals_pytorch_byte_for_byte() {
    let index: Index = serde_json::from_str(&std::fs::read_to_string(dir().join("index.json")).expect("index")).expect("index JSON");
    let mut dev = common::opencl_device();
    let mut wrong = Vec::new();
    for c in &index.cases {
        let (x, want) = (load(&format!("{}.in.npy", c.case)), load(&format!("{}.out.npy", c.case)));
        assert_eq!(want.dtype(), DType::U8);
        let what = format!("#{} {} {:?} -> {:?} (align_corners {}, scale factors {:?})", c.case, c.mode, x.shape(), c.output, c.align_corners, c.scale_factors);
        let mut g = GraphCase::new("resize");
        let input = g.input(x);
        let args = vec![
            ("input", Arg::Tensor(input)),
            ("output_size", c.output_size.clone().map_or(Arg::None, Arg::Ints)),
            ("align_corners", Arg::Bool(c.align_corners)),
            ("scale_factors", c.scale_factors.clone().map_or(Arg::None, Arg::Floats)),
        ];
        let out = g.node(&format!("aten.upsample_{}2d.vec", c.mode), args, &[(DType::U8, &c.output)])[0];
        let (model, inputs) = g.model(&[out]);
        let graph = &model.graphs[0];
        let got = exec::run(&model, graph, &inputs).expect("interpreter");
        if got[0].to_f64_vec() != want.to_f64_vec() {
            wrong.push(format!("{what}: interpreter"));
        }
        let Some(dev) = dev.as_mut() else { continue };
        for mode in [Mode::None, Mode::Full] {
            let (plan, modules) = lowered(&model, mode);
            let b = exec::infer_bindings(&model, &plan.graph, &inputs).expect("bindings");
            let r = run_on_device(dev, &plan, &modules, &model, &inputs, &b).unwrap_or_else(|e| panic!("{what}: {e}"));
            if r.outputs[0].to_f64_vec() != want.to_f64_vec() {
                wrong.push(format!("{what}: OpenCL ({})", mode.name()));
            }
        }
    }
    assert!(wrong.is_empty(), "{} results differ from PyTorch's:\n{}", wrong.len(), wrong.join("\n"));
}
