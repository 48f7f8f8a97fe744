//! Pointwise losses, as PyTorch 2.15 decomposes them: the Python decompositions of
//! `torch/_decomp/decompositions.py` and `torch/_refs/nn/functional` (which compute the half
//! types in float32 and cast the result back, `pw_cast_for_opmath`), and the C++ bodies of the
//! CompositeImplicitAutograd losses (`aten/src/ATen/native/Loss.cpp`, no casts), op for op as
//! their traces show. `reduction` is ATen's: 0 none, 1 mean, 2 sum.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::exec::ops::pointwise::{result_dtype, Rank};
use crate::ir::{Arg, DType, ValueId};

type R = Result<ValueId, RuleError>;

pub(super) fn un(rw: &mut Rw, target: &str, x: ValueId) -> R {
    rw.op(target, vec![("self", A::T(x))])
}

pub(super) fn bin(rw: &mut Rw, target: &str, x: ValueId, other: A) -> R {
    rw.op(target, vec![("self", A::T(x)), ("other", other)])
}

/// `scalar - x` as PyTorch records a Python number on the left (`sub.Tensor(1, x)`).
pub(super) fn rsub(rw: &mut Rw, scalar: A, x: ValueId) -> R {
    rw.op("aten.sub.Tensor", vec![("self", scalar), ("other", A::T(x))])
}

/// The node's `reduction` argument (mean when absent).
pub(super) fn reduction(rw: &Rw) -> Result<i64, RuleError> {
    match rw.int("reduction", Some(1))? {
        r @ 0..=2 => Ok(r),
        r => Err(RuleError::Arg { name: "reduction".into(), message: format!("{r} is not none (0), mean (1) or sum (2)") }),
    }
}

/// `apply_loss_reduction`: the loss itself, its `mean()` or its `sum()`.
pub(super) fn reduce(rw: &mut Rw, loss: ValueId, reduction: i64) -> R {
    match reduction {
        1 => un(rw, "aten.mean.default", loss),
        2 => un(rw, "aten.sum.default", loss),
        _ => Ok(loss),
    }
}

/// `x.to(dtype)`: a `_to_copy` where the dtype changes (Inductor's table makes it a
/// `convert_element_type`), `x` itself where it does not.
pub(super) fn cast(rw: &mut Rw, x: ValueId, dtype: DType) -> R {
    if rw.meta(x)?.dtype == dtype {
        return Ok(x);
    }
    rw.op("aten._to_copy.default", vec![("self", A::T(x)), ("dtype", A::Raw(Arg::ScalarType(dtype)))])
}

/// `torch.result_type` of tensors.
pub(super) fn promoted(rw: &Rw, xs: &[ValueId]) -> Result<DType, RuleError> {
    let kinds = xs
        .iter()
        .map(|x| rw.meta(*x).map(|m| (m.dtype, if m.sizes.is_empty() { Rank::ZeroDim } else { Rank::Dim })))
        .collect::<Result<Vec<_>, _>>()?;
    result_dtype(&kinds).map_err(|e| RuleError::Unsupported(format!("type promotion: {e:?}")))
}

/// `pw_cast_for_opmath`: the tensors in the opmath dtype of their promoted dtype (float32 for
/// the half types), and that promoted dtype, which the result is cast back to.
pub(super) fn opmath(rw: &mut Rw, xs: &[ValueId]) -> Result<(Vec<ValueId>, DType), RuleError> {
    let out = promoted(rw, xs)?;
    let up = xs.iter().map(|x| cast(rw, *x, out.opmath())).collect::<Result<Vec<_>, _>>()?;
    Ok((up, out))
}

/// A zero-dim tensor holding `v` (`torch.where`'s and `masked_fill`'s Python numbers).
pub(super) fn scalar_tensor(rw: &mut Rw, v: A, dtype: DType) -> R {
    rw.op("aten.scalar_tensor.default", vec![("s", v), ("dtype", A::Raw(Arg::ScalarType(dtype)))])
}

/// `torch.where(cond, x, v)` (or `where(cond, v, x)` with `number_first`) for a Python number `v`.
pub(super) fn where_number(rw: &mut Rw, cond: ValueId, x: ValueId, v: A, number_first: bool) -> R {
    let dtype = rw.meta(x)?.dtype;
    let s = scalar_tensor(rw, v, dtype)?;
    let (a, b) = if number_first { (s, x) } else { (x, s) };
    rw.op("aten.where.self", vec![("condition", A::T(cond)), ("self", A::T(a)), ("other", A::T(b))])
}

/// `like.new_full((), v)`: a zero-dim tensor of `like`'s dtype and device.
fn full0(rw: &mut Rw, v: A, like: ValueId) -> R {
    let (dtype, device) = rw.meta(like).map(|m| (m.dtype, m.device.clone()))?;
    rw.op(
        "aten.full.default",
        vec![("size", A::Is(vec![])), ("fill_value", v), ("dtype", A::Raw(Arg::ScalarType(dtype))), ("device", A::Raw(Arg::Device(device))), ("pin_memory", A::B(false))],
    )
}

/// `(self - target) ** 2`, reduced.
pub fn mse_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (xs, out) = opmath(rw, &[rw.t("self")?, rw.t("target")?])?;
    let d = bin(rw, "aten.sub.Tensor", xs[0], A::T(xs[1]))?;
    let sq = rw.op("aten.pow.Tensor_Scalar", vec![("self", A::T(d)), ("exponent", A::I(2))])?;
    let l = reduce(rw, sq, r)?;
    Ok(vec![cast(rw, l, out)?])
}

/// `|self - target|`, reduced (the composite body: no casts).
pub fn l1_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (x, t) = (rw.t("self")?, rw.t("target")?);
    let d = bin(rw, "aten.sub.Tensor", x, A::T(t))?;
    let a = un(rw, "aten.abs.default", d)?;
    Ok(vec![reduce(rw, a, r)?])
}

/// `where(|d| < beta, 0.5 d² / beta, |d| - 0.5 beta)`, reduced.
pub fn smooth_l1_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let beta = rw.float("beta", Some(1.0))?;
    let (xs, out) = opmath(rw, &[rw.t("self")?, rw.t("target")?])?;
    let d = bin(rw, "aten.sub.Tensor", xs[0], A::T(xs[1]))?;
    let z = un(rw, "aten.abs.default", d)?;
    let small = bin(rw, "aten.lt.Scalar", z, A::F(beta))?;
    let sq = rw.op("aten.pow.Tensor_Scalar", vec![("self", A::T(z)), ("exponent", A::I(2))])?;
    let half = bin(rw, "aten.mul.Tensor", sq, A::F(0.5))?;
    let quad = bin(rw, "aten.div.Tensor", half, A::F(beta))?;
    let lin = bin(rw, "aten.sub.Tensor", z, A::F(0.5 * beta))?;
    let l = rw.op("aten.where.self", vec![("condition", A::T(small)), ("self", A::T(quad)), ("other", A::T(lin))])?;
    let l = reduce(rw, l, r)?;
    Ok(vec![cast(rw, l, out)?])
}

/// `where(|d| < delta, 0.5 d·d, delta (|d| - 0.5 delta))`, reduced.
pub fn huber_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let delta = rw.float("delta", Some(1.0))?;
    if delta <= 0.0 {
        return Err(RuleError::Arg { name: "delta".into(), message: "huber_loss needs a positive delta".into() });
    }
    let (xs, out) = opmath(rw, &[rw.t("self")?, rw.t("target")?])?;
    let d = bin(rw, "aten.sub.Tensor", xs[0], A::T(xs[1]))?;
    let z = un(rw, "aten.abs.default", d)?;
    let small = bin(rw, "aten.lt.Scalar", z, A::F(delta))?;
    let half = bin(rw, "aten.mul.Tensor", z, A::F(0.5))?;
    let quad = bin(rw, "aten.mul.Tensor", half, A::T(z))?;
    let shifted = bin(rw, "aten.sub.Tensor", z, A::F(0.5 * delta))?;
    let lin = bin(rw, "aten.mul.Tensor", shifted, A::F(delta))?;
    let l = rw.op("aten.where.self", vec![("condition", A::T(small)), ("self", A::T(quad)), ("other", A::T(lin))])?;
    let l = reduce(rw, l, r)?;
    Ok(vec![cast(rw, l, out)?])
}

/// `log1p(exp(-self · target))`, reduced, op by op in the inputs' dtype as ATen's kernel
/// does (a half-precision `exp` overflows to infinity there).
pub fn soft_margin_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (x, t) = (rw.t("self")?, rw.t("target")?);
    let n = un(rw, "aten.neg.default", x)?;
    let m = bin(rw, "aten.mul.Tensor", n, A::T(t))?;
    let e = un(rw, "aten.exp.default", m)?;
    let l = un(rw, "aten.log1p.default", e)?;
    Ok(vec![reduce(rw, l, r)?])
}

/// `(target - 1) max(log1p(-self), -100) - target max(log(self), -100)`, times `weight`,
/// reduced: the logarithms clamped at -100 as ATen's kernel does.
pub fn binary_cross_entropy(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let mut ins = vec![rw.t("self")?, rw.t("target")?];
    ins.extend(rw.opt_t("weight")?);
    let (xs, out) = opmath(rw, &ins)?;
    let (x, t) = (xs[0], xs[1]);
    let tm1 = bin(rw, "aten.sub.Tensor", t, A::I(1))?;
    let nx = un(rw, "aten.neg.default", x)?;
    let l1p = un(rw, "aten.log1p.default", nx)?;
    let floor = full0(rw, A::I(-100), x)?;
    let a = bin(rw, "aten.maximum.default", l1p, A::T(floor))?;
    let left = bin(rw, "aten.mul.Tensor", tm1, A::T(a))?;
    let lg = un(rw, "aten.log.default", x)?;
    let floor = full0(rw, A::I(-100), x)?;
    let b = bin(rw, "aten.maximum.default", lg, A::T(floor))?;
    let right = bin(rw, "aten.mul.Tensor", t, A::T(b))?;
    let mut l = bin(rw, "aten.sub.Tensor", left, A::T(right))?;
    if let Some(w) = xs.get(2) {
        l = bin(rw, "aten.mul.Tensor", l, A::T(*w))?;
    }
    let l = reduce(rw, l, r)?;
    Ok(vec![cast(rw, l, out)?])
}

/// `logsigmoid(x) = min(0, x) - log1p(exp(-|x|))`, as `log_sigmoid_forward` decomposes (in
/// the opmath dtype, cast back).
fn log_sigmoid(rw: &mut Rw, x: ValueId) -> R {
    let (xs, out) = opmath(rw, &[x])?;
    let x = xs[0];
    let zero = full0(rw, A::I(0), x)?;
    let min = bin(rw, "aten.minimum.default", zero, A::T(x))?;
    let a = un(rw, "aten.abs.default", x)?;
    let n = un(rw, "aten.neg.default", a)?;
    let e = un(rw, "aten.exp.default", n)?;
    let l = un(rw, "aten.log1p.default", e)?;
    let y = bin(rw, "aten.sub.Tensor", min, A::T(l))?;
    cast(rw, y, out)
}

/// `(1 - target) self - log_weight · logsigmoid(self)` with `log_weight = (pos_weight - 1)
/// target + 1` (or 1), times `weight`, in the target's dtype, reduced.
pub fn binary_cross_entropy_with_logits(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (x, t) = (rw.t("self")?, rw.t("target")?);
    let log_weight = match rw.opt_t("pos_weight")? {
        Some(pw) => {
            let p1 = bin(rw, "aten.sub.Tensor", pw, A::I(1))?;
            let m = bin(rw, "aten.mul.Tensor", p1, A::T(t))?;
            Some(bin(rw, "aten.add.Tensor", m, A::I(1))?)
        }
        None => None,
    };
    let one_minus = rsub(rw, A::I(1), t)?;
    let left = bin(rw, "aten.mul.Tensor", one_minus, A::T(x))?;
    let mut ls = log_sigmoid(rw, x)?;
    if let Some(lw) = log_weight {
        ls = bin(rw, "aten.mul.Tensor", lw, A::T(ls))?;
    }
    let mut l = bin(rw, "aten.sub.Tensor", left, A::T(ls))?;
    if let Some(w) = rw.opt_t("weight")? {
        l = bin(rw, "aten.mul.Tensor", l, A::T(w))?;
    }
    let t_dtype = rw.meta(t)?.dtype;
    let l = cast(rw, l, t_dtype)?;
    Ok(vec![reduce(rw, l, r)?])
}

/// `xlogy(target, target) - target · self` (`exp(target) (target - self)` with a log target),
/// reduced; the batch mean of `reduction="batchmean"` is the caller's division.
pub fn kl_div(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (x, t) = (rw.t("self")?, rw.t("target")?);
    let l = if rw.bool("log_target", false)? {
        let d = bin(rw, "aten.sub.Tensor", t, A::T(x))?;
        let e = un(rw, "aten.exp.default", t)?;
        bin(rw, "aten.mul.Tensor", e, A::T(d))?
    } else {
        let m = bin(rw, "aten.mul.Tensor", t, A::T(x))?;
        let xl = rw.op("aten.xlogy.Tensor", vec![("self", A::T(t)), ("other", A::T(t))])?;
        bin(rw, "aten.sub.Tensor", xl, A::T(m))?
    };
    Ok(vec![reduce(rw, l, r)?])
}

/// `exp(input) - target · input` with a log input, else `input - target · log(input + eps)`;
/// with `full`, the Stirling term `target log(target) - target + ½ log(2π target)` added where
/// `target > 1`. Reduced.
pub fn poisson_nll_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (x, t) = (rw.t("input")?, rw.t("target")?);
    let mut l = if rw.bool("log_input", true)? {
        let m = bin(rw, "aten.mul.Tensor", t, A::T(x))?;
        let e = un(rw, "aten.exp.default", x)?;
        bin(rw, "aten.sub.Tensor", e, A::T(m))?
    } else {
        let eps = rw.float("eps", Some(1e-8))?;
        let s = bin(rw, "aten.add.Scalar", x, A::F(eps))?;
        let lg = un(rw, "aten.log.default", s)?;
        let m = bin(rw, "aten.mul.Tensor", t, A::T(lg))?;
        bin(rw, "aten.sub.Tensor", x, A::T(m))?
    };
    if rw.bool("full", false)? {
        let two_pi_t = bin(rw, "aten.mul.Scalar", t, A::F(2.0 * std::f64::consts::PI))?;
        let lg = un(rw, "aten.log.default", two_pi_t)?;
        let half = bin(rw, "aten.mul.Scalar", lg, A::F(0.5))?;
        let lt = un(rw, "aten.log.default", t)?;
        let tlt = bin(rw, "aten.mul.Tensor", t, A::T(lt))?;
        let s = bin(rw, "aten.sub.Tensor", tlt, A::T(t))?;
        let stirling = bin(rw, "aten.add.Tensor", s, A::T(half))?;
        let small = bin(rw, "aten.le.Scalar", t, A::I(1))?;
        let masked = where_number(rw, small, stirling, A::F(0.0), true)?;
        l = bin(rw, "aten.add.Tensor", l, A::T(masked))?;
    }
    Ok(vec![reduce(rw, l, r)?])
}

/// `clamp_min(-target (input1 - input2) + margin, 0)`, reduced.
pub fn margin_ranking_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (a, b, t) = (rw.t("input1")?, rw.t("input2")?, rw.t("target")?);
    let margin = rw.float("margin", Some(0.0))?;
    let d = bin(rw, "aten.sub.Tensor", a, A::T(b))?;
    let nt = un(rw, "aten.neg.default", t)?;
    let m = bin(rw, "aten.mul.Tensor", nt, A::T(d))?;
    let s = bin(rw, "aten.add.Scalar", m, A::F(margin))?;
    let l = rw.op("aten.clamp_min.default", vec![("self", A::T(s)), ("min", A::I(0))])?;
    Ok(vec![reduce(rw, l, r)?])
}

/// `where(target != 1, clamp_min(margin - self, 0), 0) + where(target != -1, self, 0)`,
/// reduced; the zeros and the margin are tensors like `self` (`zeros_like`, `full_like`).
pub fn hinge_embedding_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (x, t) = (rw.t("self")?, rw.t("target")?);
    let margin = rw.float("margin", Some(1.0))?;
    let zeros = rw.op("aten.full_like.default", vec![("self", A::T(x)), ("fill_value", A::I(0))])?;
    let m = rw.op("aten.full_like.default", vec![("self", A::T(x)), ("fill_value", A::F(margin))])?;
    let d = bin(rw, "aten.sub.Tensor", m, A::T(x))?;
    let c = rw.op("aten.clamp_min.default", vec![("self", A::T(d)), ("min", A::I(0))])?;
    let not_pos = bin(rw, "aten.ne.Scalar", t, A::I(1))?;
    let a = rw.op("aten.where.self", vec![("condition", A::T(not_pos)), ("self", A::T(c)), ("other", A::T(zeros))])?;
    let not_neg = bin(rw, "aten.ne.Scalar", t, A::I(-1))?;
    let b = rw.op("aten.where.self", vec![("condition", A::T(not_neg)), ("self", A::T(x)), ("other", A::T(zeros))])?;
    let l = bin(rw, "aten.add.Tensor", a, A::T(b))?;
    Ok(vec![reduce(rw, l, r)?])
}
