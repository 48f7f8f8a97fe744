//! The reference interpreter reproduces PyTorch's saved outputs (rel. error < 1e-5) on every
//! sample in every decomposition mode, and lite mode with each single node marked.

mod common;

use common::{sample, MODELS};
use xpu_workbench::decomp::{decompose, Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::{import, npy};

fn load_npy(path: &std::path::Path) -> Tensor {
    let a = npy::read(path).unwrap();
    Tensor::from_le_bytes(a.dtype, &a.shape, &a.data).unwrap()
}

fn npys(m: &str, kind: &str) -> Vec<Tensor> {
    (0..)
        .map(|i| sample(&format!("{m}.{kind}{i}.npy")))
        .take_while(|p| p.exists())
        .map(|p| load_npy(&p))
        .collect()
}

fn rel_err(got: &Tensor, want: &Tensor) -> f64 {
    assert_eq!(got.shape(), want.shape());
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    let scale = w.iter().fold(1e-6f64, |m, x| m.max(x.abs()));
    g.iter().zip(&w).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max) / scale
}

#[test]
fn every_sample_in_every_mode_matches_pytorch() {
    for m in MODELS {
        let model = import::load(&sample(&format!("{m}.pt2"))).unwrap();
        let g = &model.graphs[0];
        let (inputs, want) = (npys(m, "in"), npys(m, "out"));
        assert!(!inputs.is_empty() && !want.is_empty(), "{m}: sample npy files");
        let mut marks_each: Vec<Marks> = vec![Marks::default()];
        marks_each.extend(g.nodes.iter().map(|n| Marks::parse(std::slice::from_ref(&n.name)).unwrap()));
        for mode in [Mode::None, Mode::Core, Mode::Full, Mode::Lite] {
            let variants = if mode == Mode::Lite { marks_each.as_slice() } else { &marks_each[..1] };
            for marks in variants {
                let d = decompose(g, mode, marks).unwrap();
                let got = exec::run(&model, &d.graph, &inputs).unwrap_or_else(|e| panic!("{m} {mode:?} {marks:?}: {e}"));
                for (o, w) in got.iter().zip(&want) {
                    let e = rel_err(o, w);
                    assert!(e < 1e-5, "{m} {mode:?} {marks:?}: relative error {e}");
                }
            }
        }
    }
}
