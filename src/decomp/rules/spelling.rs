//! Ops that torch's tables rewrite into another op computing the same thing, one node for one
//! (or a node and a view): `max.other` → `maximum`, `argsort` → `sort`'s indices, `rsub` → `sub`
//! with the scalar first, `real` of a complex tensor → `view_as_real` and `select`, and under
//! Inductor `clamp.Tensor` → `clamp_min.Tensor` / `clamp_max.Tensor`. Each was kept whole by us
//! where torch rewrote it (corpus, issue 25: XGLM, ViT-MAE, XLNet, FNet, Phi-MoE).

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, ValueId};

/// `max.other` → `maximum` (the elementwise maximum of two tensors).
pub fn max_other(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, y) = (rw.t("self")?, rw.t("other")?);
    Ok(vec![rw.op("aten.maximum.default", vec![("self", A::T(x)), ("other", A::T(y))])?])
}

/// `argsort(x, dim, descending)` → the indices of `sort(x, dim, descending)`.
pub fn argsort(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let args = vec![("self", A::T(x)), ("dim", A::I(rw.int("dim", Some(-1))?)), ("descending", A::B(rw.bool("descending", false)?))];
    match rw.op_n("aten.sort.default", args)?.as_slice() {
        [_, indices] => Ok(vec![*indices]),
        _ => Err(RuleError::Unsupported("sort gave no indices".into())),
    }
}

/// `rsub.Scalar(x, c, alpha)` = `c - alpha·x`: `sub.Tensor(c, x, alpha)`, the scalar as `self`.
pub fn rsub_scalar(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let c = rw.scalar("other").ok_or_else(|| RuleError::Arg { name: "other".into(), message: "expected a number".into() })?;
    let mut args = vec![("self", c), ("other", A::T(x))];
    if let Some(alpha) = rw.scalar("alpha").filter(|a| !matches!(a, A::I(1))) {
        args.push(("alpha", alpha));
    }
    Ok(vec![rw.op("aten.sub.Tensor", args)?])
}

/// `real(z)`: of a complex tensor, the real parts of `view_as_real(z)` (`select` of index 0 in
/// the trailing pair); of a real tensor, the tensor itself.
pub fn real(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let z = rw.t("self")?;
    if !rw.meta(z)?.dtype.is_complex() {
        return Ok(vec![z]);
    }
    let rank = rw.rank(z)? as i64;
    let pairs = rw.op("aten.view_as_real.default", vec![("self", A::T(z))])?;
    Ok(vec![rw.op("aten.select.int", vec![("self", A::T(pairs)), ("dim", A::I(rank)), ("index", A::I(0))])?])
}

/// Inductor: `clamp.Tensor(x, min, max)` → `clamp_min.Tensor` then `clamp_max.Tensor`, each
/// where its bound is a tensor (Phi-MoE's router clamps by a tensor minimum).
pub fn clamp_tensor(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let mut y = rw.t("self")?;
    let bound = |rw: &Rw, name: &str| -> Result<Option<ValueId>, RuleError> {
        match rw.passthrough(name)? {
            None | Some(Arg::None) => Ok(None),
            Some(Arg::Tensor(_)) => rw.opt_t(name),
            Some(other) => Err(RuleError::Arg { name: name.into(), message: format!("expected a tensor, found {other:?}") }),
        }
    };
    let (lo, hi) = (bound(rw, "min")?, bound(rw, "max")?);
    if lo.is_none() && hi.is_none() {
        return Err(RuleError::Arg { name: "min".into(), message: "clamp with neither bound".into() });
    }
    if let Some(lo) = lo {
        y = rw.op("aten.clamp_min.Tensor", vec![("self", A::T(y)), ("min", A::T(lo))])?;
    }
    if let Some(hi) = hi {
        y = rw.op("aten.clamp_max.Tensor", vec![("self", A::T(y)), ("max", A::T(hi))])?;
    }
    Ok(vec![y])
}
