//! `run --check`: a device run's outputs against the reference interpreter's on the unmodified
//! graph. Outputs that depend on no random op are compared by value (maximum absolute and
//! relative error). Outputs of random ops are compared by rule: both sides draw from the same
//! seed, but the plan's decomposition and fusion renumber the streams (`crate::ops::rng`) and
//! kernels transform the draws in float32, so only the distribution can agree — same shape and
//! dtype, and on 100 values or more the device's median within half an interquartile range of
//! the interpreter's, the rule `tests/opinfo.rs` holds random ops to against PyTorch.

use serde_json::{json, Value};

use crate::exec::Tensor;
use crate::ir::Graph;

/// Largest relative error a by-value output may show.
const TOLERANCE: f64 = 1e-4;

/// Median and interquartile range of the finite values.
fn median_iqr(v: &[f64]) -> (f64, f64) {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    let q = |p: f64| s.get(((s.len().max(1) - 1) as f64 * p).round() as usize).copied().unwrap_or(0.0);
    (q(0.5), q(0.75) - q(0.25))
}

/// Whether `got` could be a sample of the distribution `want` was drawn from (see the module).
pub fn same_distribution(got: &Tensor, want: &Tensor) -> Result<(), String> {
    if got.shape() != want.shape() || got.dtype() != want.dtype() {
        return Err(format!("{} {:?}, the interpreter {} {:?}", got.dtype(), got.shape(), want.dtype(), want.shape()));
    }
    if got.numel() >= 100 {
        let ((mg, _), (mw, iqr)) = (median_iqr(&got.to_f64_vec()), median_iqr(&want.to_f64_vec()));
        if (mg - mw).abs() > 0.5 * iqr + 1e-6 {
            return Err(format!("median {mg}, the interpreter's {mw} (interquartile range {iqr})"));
        }
    }
    Ok(())
}

/// The `check` object of `run --json`: errors over the by-value outputs, the verdict on each
/// by-rule output, and whether everything passed.
pub fn check(graph: &Graph, got: &[Tensor], want: &[Tensor]) -> Value {
    let random = crate::ops::rng::random_outputs(graph);
    let is_random = |i: usize| random.get(i).copied().unwrap_or(false);
    let (mut g, mut w) = (Vec::new(), Vec::new());
    let mut rules = Vec::new();
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        if is_random(i) {
            let r = same_distribution(a, b);
            rules.push(json!({"output": i, "ok": r.is_ok(), "why": r.err()}));
        } else {
            g.push(a.clone());
            w.push(b.clone());
        }
    }
    let (abs, rel) = super::compile::compare(&g, &w);
    let ok = got.len() == want.len() && rel < TOLERANCE && rules.iter().all(|r| r["ok"] == json!(true));
    json!({"max_abs_err": abs, "max_rel_err": rel, "by_rule": rules, "ok": ok})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_of_one_distribution_pass_and_shifted_ones_fail() {
        let a = Tensor::from_vec(&[200], (0..200).map(|i| i as f32 / 200.0).collect::<Vec<_>>()).unwrap();
        let b = Tensor::from_vec(&[200], (0..200).map(|i| ((i * 7) % 200) as f32 / 200.0).collect::<Vec<_>>()).unwrap();
        assert!(same_distribution(&a, &b).is_ok());
        let shifted = Tensor::from_vec(&[200], (0..200).map(|i| 1.0 + i as f32 / 200.0).collect::<Vec<_>>()).unwrap();
        assert!(same_distribution(&shifted, &b).is_err());
        let short = Tensor::from_vec(&[100], vec![0.0f32; 100]).unwrap();
        assert!(same_distribution(&short, &b).is_err(), "shapes differ");
        assert!(same_distribution(&a.cast(crate::ir::DType::F64).unwrap(), &b).is_err(), "dtypes differ");
    }
}
