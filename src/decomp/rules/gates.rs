//! Gated and parametric activations and two activation gradients, as
//! `torch/_decomp/decompositions.py` and ATen's composite bodies (`Activation.cpp`) compute
//! them: `glu`, `prelu` / `_prelu_kernel`, evaluation-mode `rrelu`, `native_dropout_backward`
//! and `_softmax_backward_data`.

use super::loss::{bin, cast, opmath, un};
use super::{Rw, A};
use crate::decomp::RuleError;
use crate::infer::norm_dim;
use crate::ir::{Arg, SymIntArg, ValueId};

type R = Result<ValueId, RuleError>;

fn slice(rw: &mut Rw, x: ValueId, dim: usize, start: i64, end: i64) -> R {
    rw.op("aten.slice.Tensor", vec![("self", A::T(x)), ("dim", A::I(dim as i64)), ("start", A::I(start)), ("end", A::I(end)), ("step", A::I(1))])
}

/// `a · sigmoid(b)` for the two halves `a`, `b` of `self` along `dim`, in the opmath dtype.
pub fn glu(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let rank = rw.rank(x)?;
    let dim = rw.int("dim", Some(-1))?;
    let d = norm_dim(dim, rank.max(1)).filter(|_| rank > 0).ok_or_else(|| RuleError::Arg { name: "dim".into(), message: format!("{dim} out of range for rank {rank} (glu needs a dimension to halve)") })?;
    let n = rw.meta(x)?.sizes.get(d).and_then(|s| s.as_int()).ok_or_else(|| RuleError::Unsupported("glu over a dynamic dimension".into()))?;
    if n % 2 != 0 {
        return Err(RuleError::Arg { name: "self".into(), message: format!("halving dimension {d} must be even, it is {n}") });
    }
    let (xs, out) = opmath(rw, &[x])?;
    let a = slice(rw, xs[0], d, 0, n / 2)?;
    let b = slice(rw, xs[0], d, n / 2, n)?;
    let s = un(rw, "aten.sigmoid.default", b)?;
    let y = bin(rw, "aten.mul.Tensor", a, A::T(s))?;
    Ok(vec![cast(rw, y, out)?])
}

/// `where(x > 0, x, w · x)`.
fn leaky(rw: &mut Rw, x: ValueId, w: A) -> R {
    let pos = bin(rw, "aten.gt.Scalar", x, A::I(0))?;
    let neg = bin(rw, "aten.mul.Tensor", x, w)?;
    rw.op("aten.where.self", vec![("condition", A::T(pos)), ("self", A::T(x)), ("other", A::T(neg))])
}

/// `prelu(self, weight)`: `weight` (one slope, or one per channel, the channels being dimension
/// 1) viewed to broadcast over `self`, then `_prelu_kernel`.
pub fn prelu(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, w) = (rw.t("self")?, rw.t("weight")?);
    let rank = rw.rank(x)?;
    let wsizes = rw.static_sizes(w).ok_or_else(|| RuleError::Unsupported("a dynamic prelu weight".into()))?;
    if wsizes.len() > 1 {
        return Err(RuleError::Arg { name: "weight".into(), message: format!("expected a weight of rank 0 or 1, got rank {}", wsizes.len()) });
    }
    let count: i64 = wsizes.iter().product();
    let channels = if rank >= 2 { rw.meta(x)?.sizes.get(1).and_then(|s| s.as_int()) } else { Some(1) };
    if count != 1 && channels != Some(count) {
        return Err(RuleError::Arg { name: "weight".into(), message: format!("{count} slopes for {channels:?} channels") });
    }
    let shape: Vec<SymIntArg> = (0..rank).map(|d| SymIntArg::Int(if d == 1 { count } else { 1 })).collect();
    let wv = rw.op("aten.view.default", vec![("self", A::T(w)), ("size", A::Sizes(shape))])?;
    Ok(vec![leaky(rw, x, A::T(wv))?])
}

/// `_prelu_kernel(self, weight)` with `weight` already broadcastable.
pub fn prelu_kernel(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, w) = (rw.t("self")?, rw.t("weight")?);
    Ok(vec![leaky(rw, x, A::T(w))?])
}

/// Evaluation-mode `rrelu` is leaky ReLU with the mean of the slopes; training draws random
/// slopes, which this rule declines (the op stays whole).
pub fn rrelu(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    if rw.bool("training", false)? {
        return Err(RuleError::Declined);
    }
    let x = rw.t("self")?;
    let lower = rw.float("lower", Some(1.0 / 8.0))?;
    let upper = rw.float("upper", Some(1.0 / 3.0))?;
    Ok(vec![leaky(rw, x, A::F((lower + upper) / 2.0))?])
}

/// `grad_output · (mask.type_as(grad_output) · scale)`.
pub fn native_dropout_backward(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (g, mask) = (rw.t("grad_output")?, rw.t("mask")?);
    let scale = rw.float("scale", None)?;
    let dtype = rw.meta(g)?.dtype;
    let m = cast(rw, mask, dtype)?;
    let m = bin(rw, "aten.mul.Tensor", m, A::F(scale))?;
    Ok(vec![bin(rw, "aten.mul.Tensor", g, A::T(m))?])
}

/// `g·y - y·Σ_dim(g·y)` in the opmath dtype, cast back to the promoted dtype and then to
/// `input_dtype`.
pub fn softmax_backward_data(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (g, y) = (rw.t("grad_output")?, rw.t("output")?);
    let dim = rw.int("dim", None)?;
    let input_dtype = match rw.passthrough("input_dtype")? {
        Some(Arg::ScalarType(d)) => d,
        _ => return Err(RuleError::Arg { name: "input_dtype".into(), message: "expected a dtype".into() }),
    };
    let (xs, out) = opmath(rw, &[g, y])?;
    let gy = bin(rw, "aten.mul.Tensor", xs[0], A::T(xs[1]))?;
    let s = rw.op("aten.sum.dim_IntList", vec![("self", A::T(gy)), ("dim", A::Is(vec![dim])), ("keepdim", A::B(true))])?;
    let ys = bin(rw, "aten.mul.Tensor", xs[1], A::T(s))?;
    let r = bin(rw, "aten.sub.Tensor", gy, A::T(ys))?;
    let r = cast(rw, r, out)?;
    Ok(vec![cast(rw, r, input_dtype)?])
}
