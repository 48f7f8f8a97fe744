//! Models the zoo never picked (issue 25), exported by `scripts/gen_unpicked.py` with torch 2.15:
//! Gemma calls `type_as` (a composite op nobody wrote a rule for) and BLOOM `baddbmm`, `zeros`
//! and `arange.start` (which torch.export's default table decomposes in Python). Each must
//! decompose under `core` to exactly the op multiset of torch's `run_decompositions()`, and
//! evaluate equal to PyTorch's saved outputs at both bindings of its dynamic dims in every mode.

mod common;

use std::path::{Path, PathBuf};

use xpu_workbench::decomp::{decompose, Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::Model;
use xpu_workbench::{import, npy};

const TOL: f64 = 1e-4;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/unpicked/torch-2.15")
}

fn models() -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir().join("versions.json")).unwrap()).unwrap();
    v["models"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect()
}

fn expect(name: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir().join(format!("{name}.expect.json"))).unwrap()).unwrap()
}

fn load(name: &str) -> Model {
    import::load(&dir().join(format!("{name}.pt2"))).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn load_npy(path: &Path) -> Tensor {
    let a = npy::read(path).unwrap();
    Tensor::from_le_bytes(a.dtype, &a.shape, &a.data).unwrap()
}

fn npys(name: &str, b: usize, kind: &str) -> Vec<Tensor> {
    (0..).map(|i| dir().join(format!("{name}.b{b}.{kind}{i}.npy"))).take_while(|p| p.exists()).map(|p| load_npy(&p)).collect()
}

fn rel_err(got: &Tensor, want: &Tensor) -> f64 {
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    let scale = w.iter().fold(1e-6f64, |m, x| m.max(x.abs()));
    g.iter().zip(&w).map(|(a, b)| if a == b { 0.0 } else { (a - b).abs() }).fold(0.0, f64::max) / scale
}

#[test]
fn the_samples_call_the_ops_issue_25_names() {
    let ms = models();
    let calls = |m: &str, op: &str| expect(m)["ops"]["none"].get(op).is_some();
    assert!(ms.iter().any(|m| calls(m, "aten.type_as.default")), "no sample calls type_as: {ms:?}");
    for op in ["aten.baddbmm.default", "aten.zeros.default", "aten.arange.start"] {
        assert!(ms.iter().any(|m| calls(m, op)), "no sample calls {op}: {ms:?}");
    }
}

/// Every op count equal, BLOOM's included: its `reshape(x, [4*b, -1, 8])` of a transposed
/// tensor is traced by torch with the size products that infer the -1 (`infer_size`), which our
/// view rule now records as torch does (`decomp::rules::infer_size`).
#[test]
fn core_equals_torchs_run_decompositions() {
    let mut bad = Vec::new();
    for name in models() {
        let model = load(&name);
        let d = decompose(&model.graphs[0], Mode::Core, &Marks::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = common::archive_histogram(&expect(&name)["ops"]["core"]);
        let got = d.graph.op_histogram();
        if got != want {
            let keys: std::collections::BTreeSet<&String> = got.keys().chain(want.keys()).collect();
            let diff: Vec<String> = keys
                .into_iter()
                .filter(|k| got.get(*k) != want.get(*k))
                .map(|k| format!("{k}: ours {} torch {}", got.get(k).unwrap_or(&0), want.get(k).unwrap_or(&0)))
                .collect();
            bad.push(format!("{name}: {}", diff.join(", ")));
        }
    }
    assert!(bad.is_empty(), "core differs from run_decompositions():\n{}", bad.join("\n"));
}

#[test]
fn every_mode_evaluates_equal_to_pytorch_at_both_bindings() {
    let mut bad = Vec::new();
    for name in models() {
        let model = load(&name);
        for mode in [Mode::None, Mode::Core, Mode::Full] {
            let d = match decompose(&model.graphs[0], mode, &Marks::default()) {
                Ok(d) => d,
                Err(e) => {
                    bad.push(format!("{name} {}: {e}", mode.name()));
                    continue;
                }
            };
            for b in 0..2 {
                match exec::run(&model, &d.graph, &npys(&name, b, "in")) {
                    Ok(got) => {
                        for (g, w) in got.iter().zip(npys(&name, b, "out")) {
                            let e = rel_err(g, &w);
                            if g.shape() != w.shape() || !(e < TOL) {
                                bad.push(format!("{name} {} binding {b}: shape {:?} vs {:?}, rel err {e:e}", mode.name(), g.shape(), w.shape()));
                            }
                        }
                    }
                    Err(e) => bad.push(format!("{name} {} binding {b}: {e}", mode.name())),
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
