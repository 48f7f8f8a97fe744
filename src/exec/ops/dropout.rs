//! `dropout`, `feature_dropout`, `alpha_dropout` and `feature_alpha_dropout`, as PyTorch's
//! `_dropout_impl` computes them.
//!
//! Outside training, with `p = 0` or with no elements they give their input; with `p = 1`,
//! `input · 0` (NaN stays NaN). Otherwise the noise keeps a draw where `u < 1 − p`: one draw
//! per element, or per (batch, channel) plane for the feature variants (the draw's index is the
//! plane's). Plain dropout gives `input · noise / (1 − p)`; the alpha variants keep a SELU
//! network's mean and variance instead: `input · noise·a + ((noise − 1)·α·a + α·a·p)` with
//! `a = 1/√((α²·p + 1)(1 − p))`. The noise is a tensor of the input's dtype in PyTorch, so
//! every factor and product rounds to that dtype here too.

use super::fvec::{need_float, round_to, F};
use super::{one, OpCx, OpError, OpResult};
use crate::exec::value::RtValue;
use crate::ops::sample;

/// The self-normalizing activation's `α`, from which alpha dropout keeps its statistics.
pub(crate) const SELU_ALPHA: f64 = 1.758_099_340_847_376_6;

/// Which member of the family: per-plane noise, SELU statistics.
#[derive(Clone, Copy, Debug)]
struct Variant {
    feature: bool,
    alpha: bool,
}

pub fn dropout(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    run(cx, Variant { feature: false, alpha: false })
}

pub fn feature_dropout(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    run(cx, Variant { feature: true, alpha: false })
}

pub fn alpha_dropout(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    run(cx, Variant { feature: false, alpha: true })
}

pub fn feature_alpha_dropout(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    run(cx, Variant { feature: true, alpha: true })
}

/// `p`, checked to lie in [0, 1] as PyTorch checks it.
pub(crate) fn probability(p: f64) -> Result<f64, String> {
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("dropout probability has to be between 0 and 1, got {p}"))
    }
}

fn run(cx: &OpCx, v: Variant) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("input")?;
    let p = probability(cx.float_or("p", 0.5)?).map_err(|message| OpError::Arg { arg: "p".into(), message })?;
    if !cx.bool_or("train", false)? || p == 0.0 || x.numel() == 0 {
        return one(x.clone());
    }
    let (dtype, shape) = (x.dtype(), x.shape().to_vec());
    let xv = x.to_f64_vec();
    if p == 1.0 {
        return one(F::new(shape, xv.iter().map(|a| a * 0.0).collect()).to(dtype)?);
    }
    need_float(x)?;
    // Elements per draw: the feature variants draw once per (batch, channel) plane.
    let per = if v.feature {
        if shape.len() < 2 {
            return Err(OpError::Shape(format!("feature dropout needs at least 2 dimensions, got {shape:?}")));
        }
        shape[2..].iter().product::<usize>().max(1)
    } else {
        1
    };
    let (r, wide, keep) = (round_to(dtype), dtype == crate::ir::DType::F64, 1.0 - p);
    let kept = |i: usize| sample::uniform(cx.rng.bits((i / per) as u64), wide) < keep;
    let out: Vec<f64> = if v.alpha {
        let a = 1.0 / ((SELU_ALPHA * SELU_ALPHA * p + 1.0) * keep).sqrt();
        let (scale, shift) = (SELU_ALPHA * a, SELU_ALPHA * a * p);
        // noise·a and (noise − 1)·α·a + α·a·p, each step rounded as the noise tensor is.
        let (on, off) = ((r(a), r(shift)), (0.0, r(r(-scale) + shift)));
        (0..xv.len()).map(|i| if kept(i) { on } else { off }).zip(&xv).map(|((m, b), x)| r(r(x * m) + b)).collect()
    } else {
        let scale = r(1.0 / keep);
        (0..xv.len()).map(|i| if kept(i) { r(xv[i] * scale) } else { xv[i] * 0.0 }).collect()
    };
    one(F::new(shape, out).to(dtype)?)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{boolean, call_drawing, float, t32};
    use crate::exec::value::RtValue;
    use crate::ops::rng::NodeStream;

    fn run(target: &str, shape: &[usize], x: &[f32], p: f64, train: bool, seed: u64) -> Vec<f64> {
        let args = vec![("input", t32(shape, x)), ("p", float(p)), ("train", boolean(train))];
        match call_drawing(target, args, NodeStream { seed, stream: 0 }).expect("dropout").remove(0) {
            RtValue::Tensor(t) => t.to_f64_vec(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn training_dropout_keeps_and_scales_or_zeroes() {
        let x: Vec<f32> = (0..600).map(|i| 1.0 + i as f32).collect();
        let xv: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let d = |p, train, seed| run("aten.dropout.default", &[4, 3, 50], &x, p, train, seed);
        assert_eq!(d(0.25, false, 1), xv, "eval mode: the input");
        assert_eq!(d(0.0, true, 1), xv, "p = 0: the input");
        assert!(d(1.0, true, 1).iter().all(|&v| v == 0.0), "p = 1: zeros");
        let y = d(0.25, true, 1);
        assert!(y.iter().zip(&xv).all(|(y, x)| *y == 0.0 || (*y - x / 0.75).abs() <= 1e-5 * y.abs()), "kept: x / (1 - p)");
        let kept = y.iter().filter(|&&v| v != 0.0).count() as f64 / 600.0;
        assert!((kept - 0.75).abs() < 0.06, "kept {kept}");
        assert_ne!(y, d(0.25, true, 2), "another seed, another mask");
        let bad = call_drawing("aten.dropout.default", vec![("input", t32(&[1], &[1.0])), ("p", float(1.5)), ("train", boolean(true))], NodeStream::default());
        assert!(bad.is_err(), "p outside [0, 1]");
    }

    #[test]
    fn feature_variants_drop_whole_planes_and_alpha_dropout_maps_to_selu_values() {
        let x: Vec<f32> = (0..800).map(|i| 1.0 + (i % 8) as f32).collect();
        let y = run("aten.feature_dropout.default", &[4, 25, 8], &x, 0.5, true, 3);
        let dropped: Vec<bool> = y.chunks(8).map(|c| c[0] == 0.0).collect();
        assert!(y.chunks(8).zip(&dropped).all(|(c, &z)| c.iter().all(|&v| (v == 0.0) == z)), "a plane is dropped whole");
        assert!(dropped.iter().any(|&z| z) && dropped.iter().any(|&z| !z));
        // On zeros, alpha dropout gives α·a·p where it keeps and α·a·(p − 1) where it drops.
        let (n, p) = (20_000, 0.3);
        let y = run("aten.alpha_dropout.default", &[n], &vec![0.0; n], p, true, 4);
        let a = 1.0 / ((super::SELU_ALPHA.powi(2) * p + 1.0) * (1.0 - p)).sqrt();
        let (on, off) = ((super::SELU_ALPHA * a * p) as f32 as f64, (super::SELU_ALPHA * a * (p - 1.0)) as f32 as f64);
        assert!(y.iter().all(|&v| (v - on).abs() < 1e-6 || (v - off).abs() < 1e-6), "two values");
        let frac = y.iter().filter(|&&v| (v - off).abs() < 1e-6).count() as f64 / n as f64;
        assert!((frac - p).abs() < 0.02, "dropped {frac}");
    }
}
