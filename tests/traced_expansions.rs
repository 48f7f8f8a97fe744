//! Composite ops the registry has no entry for run through the graph torch traced them into
//! (`assets/ops/composite-*.json.gz`, issue 25): each case of `tests/data/traced_cases.json`
//! (PyTorch's eager outputs, made by `scripts/gen_traced_cases.py`, several shapes and dtypes) is
//! one node; under `core` it must be gone, replaced by ATen ops the interpreter has, and the
//! graph as written (mode `none`, which the interpreter functionalizes) must give torch's values.
//! `type_as` has since got a rule and an interpreter entry; its cases hold both to torch's values.

mod common;

use common::graph_case::GraphCase;
use serde_json::Value;
use xpu_workbench::decomp::{decompose, Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::{Arg, DType};
use xpu_workbench::sym::Expr;

fn tensor(v: &Value) -> Tensor {
    let dtype = DType::from_name(v["dtype"].as_str().unwrap()).unwrap();
    let shape: Vec<usize> = v["shape"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect();
    let data: Vec<f64> = v["data"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    Tensor::from_vec::<f64>(&shape, data).unwrap().cast(dtype).unwrap()
}

fn constant(v: &Value) -> Arg {
    if let Some(xs) = v.as_array() {
        return Arg::Ints(xs.iter().map(|x| x["i"].as_i64().unwrap()).collect());
    }
    let (k, x) = v.as_object().unwrap().iter().next().unwrap();
    match k.as_str() {
        "i" => Arg::Int(x.as_i64().unwrap()),
        "f" => Arg::Float(x.as_f64().unwrap()),
        "b" => Arg::Bool(x.as_bool().unwrap()),
        "dtype" => Arg::ScalarType(DType::from_name(x.as_str().unwrap()).unwrap()),
        other => panic!("constant kind {other}"),
    }
}

fn close(got: &Tensor, want: &Tensor) -> Result<(), String> {
    if got.shape() != want.shape() || got.dtype() != want.dtype() {
        return Err(format!("{:?} {:?} vs torch {:?} {:?}", got.dtype(), got.shape(), want.dtype(), want.shape()));
    }
    let tol = if want.dtype() == DType::F32 { 1e-5 } else { 1e-12 };
    for (i, (a, b)) in got.to_f64_vec().iter().zip(want.to_f64_vec()).enumerate() {
        if (a - b).abs() > tol * (1.0 + b.abs()) && !(a.is_nan() && b.is_nan()) {
            return Err(format!("element {i}: {a} vs torch {b}"));
        }
    }
    Ok(())
}

#[test]
fn composite_ops_without_rules_match_pytorch_through_their_traces() {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/traced_cases.json")).unwrap()).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 25);
    let mut bad = Vec::new();
    let mut ops = std::collections::BTreeSet::new();
    for (ci, c) in cases.iter().enumerate() {
        let target = c["target"].as_str().unwrap();
        ops.insert(target);
        // An op that got a rule of its own and an interpreter entry (`type_as`, written from its
        // ATen body once the traces' rank pairs missed the corpus's 0-dim calls) is held to the
        // same torch outputs through both; one with an interpreter entry only would test nothing.
        let has_rule = xpu_workbench::ops::get(target).is_some_and(|d| d.has_rule());
        assert!(xpu_workbench::ops::run_fn(target).is_none() || has_rule, "{target} has an interpreter entry and no rule: the case tests nothing");
        let mut gc = GraphCase::new("case");
        // Sizes symbolic, so the trace's `sym_size` reads are exercised as they are in exports.
        let inputs: Vec<_> = c["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let t = tensor(x);
                let sizes = (0..t.shape().len()).map(|d| Expr::symbol(&format!("s{i}_{d}"))).collect();
                gc.sym_input(t, sizes)
            })
            .collect();
        let args: Vec<(String, Arg)> = c["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let name = a[0].as_str().unwrap().to_string();
                let arg = match a[1].get("t") {
                    Some(i) => Arg::Tensor(inputs[i.as_u64().unwrap() as usize]),
                    None => constant(&a[1]),
                };
                (name, arg)
            })
            .collect();
        let want: Vec<Tensor> = c["outputs"].as_array().unwrap().iter().map(tensor).collect();
        // The node's own metadata: static, as torch computed it (a rule re-derives its own).
        let outs: Vec<(DType, Vec<usize>)> = want.iter().map(|w| (w.dtype(), w.shape().to_vec())).collect();
        let outs: Vec<(DType, &[usize])> = outs.iter().map(|(d, s)| (*d, s.as_slice())).collect();
        let named: Vec<(&str, Arg)> = args.iter().map(|(n, a)| (n.as_str(), a.clone())).collect();
        let res = gc.node(target, named, &outs);
        let (model, feed) = gc.model(&res);
        let g = &model.graphs[0];
        let what = format!("case {ci} {target} {:?}", c["inputs"].as_array().unwrap().iter().map(|x| (x["dtype"].clone(), x["shape"].clone())).collect::<Vec<_>>());
        match decompose(g, Mode::Core, &Marks::default()) {
            Ok(d) if d.graph.nodes.iter().any(|n| n.target == target) => bad.push(format!("{what}: kept under core ({:?})", d.no_rule)),
            Ok(d) => match exec::run(&model, &d.graph, &feed) {
                Ok(got) => {
                    for (g, w) in got.iter().zip(&want) {
                        if let Err(e) = close(g, w) {
                            bad.push(format!("{what} core: {e}"));
                        }
                    }
                }
                Err(e) => bad.push(format!("{what} core: {e}")),
            },
            Err(e) => bad.push(format!("{what}: {e}")),
        }
        match exec::run(&model, g, &feed) {
            Ok(got) => {
                for (g, w) in got.iter().zip(&want) {
                    if let Err(e) = close(g, w) {
                        bad.push(format!("{what} none: {e}"));
                    }
                }
            }
            Err(e) => bad.push(format!("{what} none: {e}")),
        }
    }
    assert!(ops.len() >= 6, "{ops:?}");
    assert!(bad.is_empty(), "{} of {} cases:\n{}", bad.len(), cases.len(), bad.join("\n"));
}
