//! `run --check`: a device run's outputs against the reference interpreter's on the unmodified
//! graph. Outputs that depend on no random op are compared by value (maximum absolute and
//! relative error). Outputs of random ops are compared by rule: both sides draw from the same
//! seed, but the plan's decomposition and fusion renumber the streams (`crate::ops::rng`) and
//! kernels transform the draws in float32, so only the distribution can agree — same shape and
//! dtype, and on 100 values or more the device's median within half an interquartile range of
//! the interpreter's, the rule `tests/opinfo.rs` holds random ops to against PyTorch.

use serde::Serialize;

use crate::exec::{self, ExecError, Tensor};
use crate::ir::{Graph, Model};

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

/// Where one by-value output holds NaN or ±inf on one side and not the same on the other: a
/// relative error cannot say that (it is NaN or inf, which JSON writes as `null`).
#[derive(Debug, PartialEq)]
pub struct NonFinite {
    pub output: usize,
    /// How many elements disagree so.
    pub count: usize,
    /// The first one: its index into the output and both values.
    pub index: Vec<usize>,
    pub device: f64,
    pub reference: f64,
}

impl std::fmt::Display for NonFinite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = match (self.device.is_finite(), self.reference.is_finite()) {
            (false, true) => "the device's output is not finite where the interpreter's is",
            (true, false) => "the interpreter's output is not finite where the device's is",
            _ => "both are not finite, and differ",
        };
        write!(
            f,
            "output {}: {} element(s) where {side}; first at {:?}: device {}, interpreter {}",
            self.output, self.count, self.index, self.device, self.reference
        )
    }
}

/// Errors of the by-value outputs: the largest absolute difference over the elements finite on
/// both sides, relative to the largest finite reference value, and every output where NaN or ±inf
/// stand on one side only. NaN against NaN and an infinity against the same one agree (torch's
/// `assert_close` with `equal_nan`).
pub fn by_value(got: &[Tensor], want: &[Tensor]) -> (f64, f64, Vec<NonFinite>) {
    let (mut abs, mut scale, mut bad) = (0.0f64, 0.0f64, Vec::new());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (gv, wv) = (g.to_f64_vec(), w.to_f64_vec());
        let mut first: Option<NonFinite> = None;
        for (k, (&x, &y)) in gv.iter().zip(&wv).enumerate() {
            if x.is_finite() && y.is_finite() {
                abs = abs.max((x - y).abs());
                scale = scale.max(y.abs());
            } else if !(x.is_nan() && y.is_nan() || x == y) {
                let e = first.get_or_insert_with(|| NonFinite { output: i, count: 0, index: unravel(k, w.shape()), device: x, reference: y });
                e.count += 1;
            }
        }
        bad.extend(first);
    }
    (abs, abs / scale.max(1e-12), bad)
}

/// The multi-index of flat (row-major) position `k` in `shape`.
fn unravel(mut k: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (d, &n) in shape.iter().enumerate().rev() {
        if n > 0 {
            idx[d] = k % n;
            k /= n;
        }
    }
    idx
}

/// The verdict on one output compared by rule (see the module).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleCheck {
    pub output: usize,
    pub ok: bool,
    /// Why it failed.
    pub why: Option<String>,
}

/// A run's outputs against the interpreter's: errors over the by-value outputs, the verdict on
/// each by-rule output, and whether everything passed (the `check` object of `run --json`,
/// fields in that order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub max_abs_err: f64,
    pub max_rel_err: f64,
    /// Each thing that failed, in words: a count, shape or dtype that differs, non-finite
    /// values on one side, a relative error over the tolerance.
    pub problems: Vec<String>,
    pub by_rule: Vec<RuleCheck>,
    pub ok: bool,
}

/// Compares `got`, a run of `graph`'s outputs, with `want`, the interpreter's.
pub fn check(graph: &Graph, got: &[Tensor], want: &[Tensor]) -> Check {
    let random = crate::ops::rng::random_outputs(graph);
    let is_random = |i: usize| random.get(i).copied().unwrap_or(false);
    let (mut g, mut w) = (Vec::new(), Vec::new());
    let mut rules = Vec::new();
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        if is_random(i) {
            let r = same_distribution(a, b);
            rules.push(RuleCheck { output: i, ok: r.is_ok(), why: r.err() });
        } else {
            g.push(a.clone());
            w.push(b.clone());
        }
    }
    let mut problems: Vec<String> = Vec::new();
    if got.len() != want.len() {
        problems.push(format!("the device returned {} output(s), the interpreter {}", got.len(), want.len()));
    }
    // By-value outputs, numbered as in the graph.
    let numbers: Vec<usize> = (0..got.len().min(want.len())).filter(|&i| !is_random(i)).collect();
    for (&i, (a, b)) in numbers.iter().zip(g.iter().zip(&w)) {
        if a.shape() != b.shape() || a.dtype() != b.dtype() {
            problems.push(format!("output {i}: the device's is {} {:?}, the interpreter's {} {:?}", a.dtype(), a.shape(), b.dtype(), b.shape()));
        }
    }
    let (abs, rel, non_finite) = by_value(&g, &w);
    for mut nf in non_finite {
        nf.output = numbers.get(nf.output).copied().unwrap_or(nf.output);
        problems.push(nf.to_string());
    }
    if rel >= TOLERANCE {
        problems.push(format!("relative error {rel:.3e} ≥ {TOLERANCE:e} over the finite values (max absolute error {abs:.3e})"));
    }
    let ok = problems.is_empty() && rules.iter().all(|r| r.ok);
    Check { max_abs_err: abs, max_rel_err: rel, problems, by_rule: rules, ok }
}

/// Runs `graph` through the reference interpreter on `inputs`, random ops drawing from `gen` as
/// the run that gave `got` did, and compares `got` with its outputs.
pub fn check_run(model: &Model, graph: &Graph, inputs: &[Tensor], gen: &exec::Generator, got: &[Tensor]) -> Result<Check, ExecError> {
    let want = exec::run_seeded(model, graph, inputs, gen)?;
    Ok(check(graph, got, &want))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nan_or_inf_on_one_side_is_named_with_its_output_and_index() {
        let t = |v: Vec<f32>| Tensor::from_vec(&[2, 3], v).unwrap();
        let want = t(vec![0.5, f32::NAN, f32::INFINITY, 1.0, 2.0, 3.0]);
        // NaN against NaN and inf against inf agree; the error is over the finite elements.
        let same = t(vec![0.5, f32::NAN, f32::INFINITY, 1.0, 2.0, 3.5]);
        let (abs, rel, bad) = by_value(std::slice::from_ref(&same), std::slice::from_ref(&want));
        assert!(bad.is_empty());
        assert_eq!(abs, 0.5);
        assert!((rel - 0.5 / 3.0).abs() < 1e-12);
        let nan = t(vec![0.5, f32::NAN, f32::INFINITY, f32::NAN, 2.0, f32::NEG_INFINITY]);
        let (abs, _, bad) = by_value(&[want.clone(), nan], &[want.clone(), want.clone()]);
        assert_eq!(abs, 0.0);
        assert_eq!(bad.len(), 1);
        assert_eq!((bad[0].output, bad[0].count, bad[0].index.as_slice(), bad[0].reference), (1, 2, &[1usize, 0][..], 1.0));
        assert!(bad[0].device.is_nan());
        let text = bad[0].to_string();
        assert!(text.contains("output 1: 2 element(s) where the device's output is not finite") && text.contains("[1, 0]"), "{text}");
    }

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
