//! The interpreter's unary float functions (`neg`, `abs`, `exp`, `log`, `sqrt`, `erf`, `tanh`, …),
//! activations (`sigmoid`, `silu`, `gelu`, `relu`, `hardtanh`, `hardswish`, …) and clamps. Apart
//! from `pointwise` because they take one operand and need no type promotion; re-exported from
//! `pointwise`.

use super::pointwise::{map_float, map_keep, result_type, Operand, Scalar};
use super::{dtype_ok, one, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;

fn unary_float(cx: &OpCx, f: fn(f64) -> f64) -> OpResult<Vec<RtValue>> {
    one(map_float(cx.tensor("self")?, f)?)
}

pub fn neg(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(map_keep(cx.tensor("self")?, |x| -x, i64::wrapping_neg)?)
}

pub fn abs(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(map_keep(cx.tensor("self")?, f64::abs, i64::wrapping_abs)?)
}

pub fn exp(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unary_float(cx, f64::exp)
}

pub fn log(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unary_float(cx, f64::ln)
}

pub fn sqrt(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unary_float(cx, f64::sqrt)
}

pub fn rsqrt(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unary_float(cx, |x| 1.0 / x.sqrt())
}

pub fn reciprocal(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unary_float(cx, |x| 1.0 / x)
}

pub fn erf(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unary_float(cx, libm::erf)
}

pub fn tanh(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unary_float(cx, f64::tanh)
}

pub(crate) fn sigmoid_f(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

pub fn sigmoid(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unary_float(cx, sigmoid_f)
}

pub fn silu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unary_float(cx, |x| x * sigmoid_f(x))
}

pub(crate) fn gelu_f(x: f64, tanh: bool) -> f64 {
    if tanh {
        let k = (2.0 / std::f64::consts::PI).sqrt();
        0.5 * x * (1.0 + (k * (x + 0.044715 * x * x * x)).tanh())
    } else {
        0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2))
    }
}

pub fn gelu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let tanh = match cx.str_or("approximate", "none")? {
        "none" => false,
        "tanh" => true,
        m => return Err(OpError::Arg { arg: "approximate".into(), message: format!("`{m}`: expected none or tanh") }),
    };
    one(map_float(cx.tensor("self")?, |x| gelu_f(x, tanh))?)
}

/// `min(max(x, lo), hi)` with NaN passing through; with `lo > hi` the result is `hi`, as in PyTorch.
fn clamp_f(x: f64, lo: Option<f64>, hi: Option<f64>) -> f64 {
    if x.is_nan() {
        return x;
    }
    let mut y = x;
    if let Some(lo) = lo {
        if y < lo {
            y = lo;
        }
    }
    if let Some(hi) = hi {
        if y > hi {
            y = hi;
        }
    }
    y
}

pub(crate) fn clamp_impl(t: &Tensor, lo: Option<Scalar>, hi: Option<Scalar>) -> OpResult<Tensor> {
    if lo.is_none() && hi.is_none() {
        return Err(OpError::Arg { arg: "min".into(), message: "clamp needs at least one of min and max".into() });
    }
    let mut ops = vec![Operand::Tensor(t)];
    ops.extend(lo.map(Operand::Scalar));
    ops.extend(hi.map(Operand::Scalar));
    let out = result_type(&ops)?;
    let (lo, hi) = (lo.map(Scalar::to_f64), hi.map(Scalar::to_f64));
    let x = dtype_ok(t.cast(out))?;
    match out {
        d if d.is_floating() => map_float(&x, |v| clamp_f(v, lo, hi)),
        _ => {
            let (lo, hi) = (lo.map(|v| v as i64), hi.map(|v| v as i64));
            map_keep(&x, |v| v, |v| {
                let v = lo.map_or(v, |lo| v.max(lo));
                hi.map_or(v, |hi| v.min(hi))
            })
        }
    }
}

pub fn clamp(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(clamp_impl(cx.tensor("self")?, cx.opt_scalar("min")?, cx.opt_scalar("max")?)?)
}

pub fn clamp_min(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(clamp_impl(cx.tensor("self")?, cx.opt_scalar("min")?, None)?)
}

pub fn clamp_max(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(clamp_impl(cx.tensor("self")?, None, cx.opt_scalar("max")?)?)
}

/// `hardtanh` keeps the input dtype whatever the bounds' types.
pub fn hardtanh(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let (lo, hi) = (cx.float_or("min_val", -1.0)?, cx.float_or("max_val", 1.0)?);
    one(map_keep(t, |x| clamp_f(x, Some(lo), Some(hi)), |x| x.max(lo as i64).min(hi as i64))?)
}

pub fn relu6(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    one(map_keep(t, |x| clamp_f(x, Some(0.0), Some(6.0)), |x| x.clamp(0, 6))?)
}

pub fn relu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(map_keep(cx.tensor("self")?, |x| clamp_f(x, Some(0.0), None), |x| x.max(0))?)
}

pub fn hardsigmoid(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unary_float(cx, |x| clamp_f(x + 3.0, Some(0.0), Some(6.0)) / 6.0)
}

pub fn hardswish(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unary_float(cx, |x| x * clamp_f(x + 3.0, Some(0.0), Some(6.0)) / 6.0)
}
