//! `torch_nn::_linear_cross_entropy_batch_chunked` and its `_no_reduction` sibling, the
//! custom ops `F.linear_cross_entropy` exports as (torch 2.15,
//! `torch/nn/modules/linear_cross_entropy.py`): `cross_entropy(linear(input, W, b), target)`
//! computed chunk by chunk over the batch. Chunking only changes the summation order, so the
//! reference computes the logits in f64 rounded where the op stores them (its logits buffer:
//! `acc_dtype` when that differs from the input's dtype, except float16 under the `compact`
//! policy; else the input's dtype) and the loss as `cross_entropy_loss` does, in f64.

use super::fvec::{need_float, round_to, F};
use super::nll::{cross_entropy, CrossEntropy};
use super::shape::many;
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// The dtype the op keeps its logits in (`logits_buf_dtype` in torch's implementation).
fn logits_dtype(cx: &OpCx, dtype: DType) -> OpResult<DType> {
    Ok(match cx.opt_dtype("acc_dtype")? {
        Some(acc) if acc != dtype && !(dtype == DType::F16 && cx.str_or("acc_policy", "accurate")? == "compact") => acc,
        _ => dtype,
    })
}

/// `input [N, F] @ linear_weight[C, F]ᵀ + linear_bias[C]`, rounded to the logits' dtype.
fn logits(cx: &OpCx) -> OpResult<(F, DType)> {
    let (x, w) = (cx.tensor("input")?, cx.tensor("linear_weight")?);
    need_float(x)?;
    let (xs, ws) = (x.shape(), w.shape());
    let (&[n, f], &[c, fw]) = (xs, ws) else {
        return shape_err(format!("input {xs:?} and linear_weight {ws:?} must be [N, F] and [C, F]"));
    };
    if f != fw {
        return shape_err(format!("input {xs:?} and linear_weight {ws:?} disagree on the features"));
    }
    let bias = cx.opt_tensor("linear_bias")?.map(Tensor::to_f64_vec);
    if bias.as_ref().is_some_and(|b| b.len() != c) {
        return shape_err(format!("linear_bias does not have the {c} classes of linear_weight {ws:?}"));
    }
    let (xv, wv) = (x.to_f64_vec(), w.to_f64_vec());
    let r = round_to(logits_dtype(cx, x.dtype())?);
    let v = (0..n * c)
        .map(|i| {
            let (row, k) = (i / c, i % c);
            let dot: f64 = (0..f).map(|j| xv[row * f + j] * wv[k * f + j]).sum();
            r(dot + bias.as_ref().map_or(0.0, |b| b[k]))
        })
        .collect();
    Ok((F::new(vec![n, c], v), x.dtype()))
}

fn reduction(cx: &OpCx) -> OpResult<i64> {
    match cx.str_or("reduction", "mean")? {
        "none" => Ok(0),
        "mean" => Ok(1),
        "sum" => Ok(2),
        r => Err(OpError::Arg { arg: "reduction".into(), message: format!("expected none, mean or sum, got {r}") }),
    }
}

fn loss(cx: &OpCx, reduction: i64, label_smoothing: f64) -> OpResult<Tensor> {
    let (z, dtype) = logits(cx)?;
    let w = cx.opt_tensor("weight")?.map(Tensor::to_f64_vec);
    let how = CrossEntropy { reduction, ignore: cx.int_or("ignore_index", -100)?, label_smoothing };
    cross_entropy(&z, cx.tensor("target")?, w.as_deref(), how, dtype)
}

/// `(loss, grad_input, grad_linear_weight, grad_linear_bias)`: the op precomputes the
/// gradients its flags ask for; without flags they are empty tensors of the operands' ranks.
pub fn linear_cross_entropy(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    for flag in ["compute_input_grad", "compute_linear_weight_grad", "compute_linear_bias_grad"] {
        if cx.bool_or(flag, false)? {
            return Err(OpError::Unsupported(format!("{flag}=True: the precomputed gradients are not implemented")));
        }
    }
    let out = loss(cx, reduction(cx)?, cx.float_or("label_smoothing", 0.0)?)?;
    let empty = |i: usize, rank: usize| F::new(vec![0; rank], vec![]).to(cx.out_dtype(i).unwrap_or(out.dtype()));
    let (gi, gw, gb) = (empty(1, cx.tensor("input")?.ndim())?, empty(2, 2)?, empty(3, 1)?);
    many(vec![out, gi, gw, gb])
}

/// The per-sample loss `[N]` (`reduction='none'`, no label smoothing).
pub fn linear_cross_entropy_no_reduction(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(loss(cx, 0, 0.0)?)
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use crate::ir::Arg;

    const OP: &str = "torch_nn._linear_cross_entropy_batch_chunked.default";

    fn s(x: &str) -> A {
        A::L(Arg::String(x.into()))
    }

    #[test]
    fn equals_cross_entropy_of_the_linear_logits() {
        // logits = [[1, 2, 3], [0, 3, 3]]; F.cross_entropy(F.linear(x, W, b), [1, 2]) in torch
        // float64 is 1.0626709415555413.
        let x = t64(&[2, 2], &[1., 2., 0., 3.]);
        let w = t64(&[3, 2], &[1., 0., 0., 1., 0., 0.]);
        let b = t64(&[3], &[0., 0., 3.]);
        let want = 1.0626709415555413;
        let r = call(OP, vec![("input", x), ("linear_weight", w), ("target", ti(&[2], &[1, 2])), ("linear_bias", b), ("reduction", s("mean"))]).unwrap();
        assert_eq!(r.len(), 4);
        let loss = r[0].as_tensor().unwrap();
        assert!((loss.to_f64_vec()[0] - want).abs() < 1e-12, "{loss:?} vs {want}");
        assert_eq!(r[1].as_tensor().unwrap().shape(), &[0, 0], "grad_input not asked for: empty");
        assert_eq!(r[3].as_tensor().unwrap().shape(), &[0]);
    }

    #[test]
    fn ignores_and_refuses_what_it_should() {
        let x = t64(&[2, 1], &[1., -1.]);
        let w = t64(&[2, 1], &[1., 2.]);
        let r = call1("torch_nn._linear_cross_entropy_batch_chunked_no_reduction.default", vec![("input", x), ("linear_weight", w), ("target", ti(&[2], &[0, -100]))]);
        assert_eq!(r.shape(), &[2]);
        assert_eq!(r.to_f64_vec()[1], 0.0, "an ignored target costs nothing");
        let e = call(OP, vec![("input", t64(&[1, 2], &[0., 0.])), ("linear_weight", t64(&[3, 1], &[0.; 3])), ("target", ti(&[1], &[0]))]);
        assert!(e.is_err(), "features disagree: {e:?}");
        let e = call(OP, vec![("input", t64(&[1, 1], &[0.])), ("linear_weight", t64(&[1, 1], &[0.])), ("target", ti(&[1], &[0])), ("compute_input_grad", boolean(true))]);
        assert!(e.is_err(), "gradients are refused, not faked: {e:?}");
    }
}
