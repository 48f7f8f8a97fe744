//! The interpreter against PyTorch: every sample, before and after PyTorch's own decompositions
//! (`.core.pt2`, `.inductor.pt2`), on the saved inputs, compared with the eager outputs PyTorch
//! saved; then at other legal dynamic sizes, where output shapes must match `shapes`.
//!
//! Error measure (stated once, used everywhere): for each output,
//! `max_i |ours_i - ref_i| / max(max_i |ref_i|, 1e-6)`, i.e. the infinity-norm relative error.

mod common;

use std::path::Path;

use common::{sample, MODELS};
use rand::{Rng, SeedableRng};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::import;
use xpu_workbench::ir::{DType, ValueKind};
use xpu_workbench::npy;
use xpu_workbench::shapes::{concrete_tensor, evaluate_graph, resolve_bindings};

const TOL: f64 = 1e-5;

fn load_npy(path: &Path) -> Tensor {
    let a = npy::read(path).unwrap();
    Tensor::from_le_bytes(a.dtype, &a.shape, &a.data).unwrap()
}

/// `samples/X.in0.npy`, `X.in1.npy`, ... (or `out`) until one is missing.
fn numbered(model: &str, kind: &str) -> Vec<Tensor> {
    (0..).map(|i| sample(&format!("{model}.{kind}{i}.npy"))).take_while(|p| p.exists()).map(|p| load_npy(&p)).collect()
}

pub fn rel_error(ours: &Tensor, reference: &Tensor) -> f64 {
    let (a, r) = (ours.to_f64_vec(), reference.to_f64_vec());
    let scale = r.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-6);
    a.iter().zip(&r).map(|(x, y)| if x == y { 0.0 } else { (x - y).abs() }).fold(0.0, f64::max) / scale
}

fn variants(model: &str) -> Vec<String> {
    ["", ".core", ".inductor"]
        .iter()
        .map(|v| format!("{model}{v}.pt2"))
        .filter(|f| sample(f).exists())
        .collect()
}

#[test]
fn every_sample_matches_pytorch_before_and_after_decomposition() {
    let mut ran = 0;
    for m in MODELS {
        let inputs = numbered(m, "in");
        let refs = numbered(m, "out");
        assert!(!inputs.is_empty() && !refs.is_empty(), "{m}: sample inputs and outputs");
        for file in variants(m) {
            let model = import::load(&sample(&file)).unwrap();
            let g = &model.graphs[0];
            let outs = exec::run(&model, g, &inputs).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(outs.len(), refs.len(), "{file}: output count");
            for (i, (o, r)) in outs.iter().zip(&refs).enumerate() {
                assert_eq!(o.shape(), r.shape(), "{file}: output {i} shape");
                assert_eq!(o.dtype(), r.dtype(), "{file}: output {i} dtype");
                let e = rel_error(o, r);
                println!("{file}: out{i} {:?} rel err {e:.2e}", o.shape());
                assert!(e < TOL, "{file}: output {i}: relative error {e:.3e} ≥ {TOL:e}");
            }
            ran += 1;
        }
    }
    assert!(ran >= 14, "ran {ran} graphs");
}

fn random_tensor(rng: &mut impl Rng, dtype: DType, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    match dtype {
        DType::F32 => Tensor::from_vec(shape, (0..n).map(|_| rng.gen_range(-2.0f32..2.0)).collect()),
        DType::F64 => Tensor::from_vec(shape, (0..n).map(|_| rng.gen_range(-2.0f64..2.0)).collect()),
        DType::I64 => Tensor::from_vec(shape, (0..n).map(|_| rng.gen_range(-5i64..5)).collect()),
        DType::Bool => Tensor::from_vec(shape, (0..n).map(|_| rng.gen_bool(0.5)).collect()),
        d => panic!("no random inputs of {d}"),
    }
    .unwrap()
}

#[test]
fn other_legal_sizes_give_the_shapes_that_shapes_predicts() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for m in MODELS {
        for file in variants(m) {
            let model = import::load(&sample(&file)).unwrap();
            let g = &model.graphs[0];
            for _ in 0..2 {
                // A legal value other than the traced hint for every symbol.
                let explicit: Vec<(String, i64)> = model
                    .symbols
                    .iter()
                    .map(|s| {
                        let lo = s.range.min.max(1) as i64;
                        let hi = s.range.max.map_or(lo + 12, |m| (m as i64).min(lo + 12));
                        let mut v = rng.gen_range(lo..=hi);
                        if Some(v) == s.hint && hi > lo {
                            v = if v < hi { v + 1 } else { v - 1 };
                        }
                        (s.name.clone(), v)
                    })
                    .collect();
                let b = resolve_bindings(&model, &explicit).unwrap();
                let inputs: Vec<Tensor> = exec::user_inputs(g)
                    .iter()
                    .map(|v| match &g.value(*v).kind {
                        ValueKind::Tensor(meta) => {
                            let c = concrete_tensor(meta, &b).unwrap();
                            let shape: Vec<usize> = c.shape.iter().map(|&d| d as usize).collect();
                            random_tensor(&mut rng, meta.dtype, &shape)
                        }
                        other => panic!("{file}: input kind {other:?}"),
                    })
                    .collect();
                let inferred = exec::infer_bindings(&model, g, &inputs).unwrap();
                for (name, v) in b.iter() {
                    assert_eq!(inferred.get(name), Some(v), "{file}: {name} inferred from the inputs");
                }
                let outs = exec::run(&model, g, &inputs).unwrap_or_else(|e| panic!("{file} at {explicit:?}: {e}"));
                let predicted = evaluate_graph(g, &b);
                for (i, (o, a)) in outs.iter().zip(&g.outputs).enumerate() {
                    let v = a.as_tensor().expect("tensor output");
                    let want = predicted[v.index()].as_ref().unwrap().as_ref().unwrap();
                    let got: Vec<i64> = o.shape().iter().map(|&d| d as i64).collect();
                    assert_eq!(got, want.shape, "{file} output {i} at {explicit:?}");
                    assert!(o.to_f64_vec().iter().all(|x| x.is_finite()), "{file}: output {i} is finite");
                }
            }
        }
    }
}

#[test]
fn wrong_inputs_are_errors_naming_the_input() {
    let model = import::load(&sample("mlp.pt2")).unwrap();
    let g = &model.graphs[0];
    let err = exec::run(&model, g, &[]).unwrap_err().to_string();
    assert!(err.contains("user inputs"), "{err}");
    let x = numbered("mlp", "in").remove(0);
    let mut shape = x.shape().to_vec();
    *shape.last_mut().unwrap() += 1;
    let bad = Tensor::from_vec(&shape, vec![0.0f32; shape.iter().product()]).unwrap();
    let err = exec::run(&model, g, &[bad]).unwrap_err().to_string();
    let name = &g.value(exec::user_inputs(g)[0]).name;
    assert!(err.contains(name.as_str()) && err.contains("dim 1"), "{err}");
    let as_f64 = x.cast(DType::F64).unwrap();
    let err = exec::run(&model, g, &[as_f64]).unwrap_err().to_string();
    assert!(err.contains("float32") && err.contains("float64"), "{err}");
}

#[test]
fn unknown_ops_and_metadata_mismatches_are_errors_naming_the_node() {
    let model = import::load(&sample("mlp.pt2")).unwrap();
    let inputs = numbered("mlp", "in");
    let mut g = model.graphs[0].clone();
    let name = g.nodes[0].name.clone();
    g.nodes[0].target = "aten.made_up.default".into();
    match exec::run(&model, &g, &inputs) {
        Err(exec::ExecError::UnsupportedOp { node, target }) => assert_eq!((node, target.as_str()), (name, "aten.made_up.default")),
        other => panic!("{other:?}"),
    }
    // If the graph says a node yields float64, a float32 result is caught where it is made.
    let mut g = model.graphs[0].clone();
    let out = g.nodes[0].outputs[0];
    if let ValueKind::Tensor(meta) = &mut g.values[out.index()].kind {
        meta.dtype = DType::F64;
    }
    let err = exec::run(&model, &g, &inputs).unwrap_err().to_string();
    assert!(err.contains(&g.nodes[0].name) && err.contains("float64"), "{err}");
}

#[test]
fn the_tolerance_detects_a_small_perturbation() {
    let model = import::load(&sample("transformer_block.pt2")).unwrap();
    let mut x = numbered("transformer_block", "in").remove(0).to_f64_vec();
    x[0] += 1e-3;
    let shape = numbered("transformer_block", "in")[0].shape().to_vec();
    let input = Tensor::from_vec(&shape, x.iter().map(|&v| v as f32).collect()).unwrap();
    let out = exec::run(&model, &model.graphs[0], &[input]).unwrap();
    let e = rel_error(&out[0], &numbered("transformer_block", "out")[0]);
    assert!(e > TOL, "a 1e-3 change in one input moved the output by only {e:.2e}");
}
