//! Distances and the losses built on them, as ATen's CompositeImplicitAutograd bodies compute
//! them (`aten/src/ATen/native/Distance.cpp`, `Loss.cpp`): norms are `linalg_vector_norm`,
//! which has a kernel.

use super::loss::{bin, promoted, reduce, reduction, un};
use super::{Rw, A};
use crate::decomp::RuleError;
use crate::infer::norm_dim;
use crate::ir::{Arg, ValueId};

type R = Result<ValueId, RuleError>;

/// The `p`-norm of `x` over `dim`.
fn vector_norm(rw: &mut Rw, x: ValueId, p: f64, dim: i64, keepdim: bool) -> R {
    rw.op("aten.linalg_vector_norm.default", vec![("self", A::T(x)), ("ord", A::F(p)), ("dim", A::Is(vec![dim])), ("keepdim", A::B(keepdim))])
}

/// `norm(x1 - x2 + eps, p, last dim of the broadcast, keepdim)`.
fn pairwise(rw: &mut Rw, x1: ValueId, x2: ValueId, p: f64, eps: f64, keepdim: bool) -> R {
    let rank = rw.rank(x1)?.max(rw.rank(x2)?);
    let d = bin(rw, "aten.sub.Tensor", x1, A::T(x2))?;
    let s = bin(rw, "aten.add.Scalar", d, A::F(eps))?;
    // A rank-0 difference has no dimension to reduce: its norm is its absolute value (p > 0).
    if rank == 0 {
        return vector_norm0(rw, s, p);
    }
    vector_norm(rw, s, p, rank as i64 - 1, keepdim)
}

fn vector_norm0(rw: &mut Rw, x: ValueId, p: f64) -> R {
    rw.op("aten.linalg_vector_norm.default", vec![("self", A::T(x)), ("ord", A::F(p)), ("dim", A::Raw(Arg::None)), ("keepdim", A::B(false))])
}

pub fn pairwise_distance(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x1, x2) = (rw.t("x1")?, rw.t("x2")?);
    let p = rw.float("p", Some(2.0))?;
    let eps = rw.float("eps", Some(1e-6))?;
    let keepdim = rw.bool("keepdim", false)?;
    Ok(vec![pairwise(rw, x1, x2, p, eps, keepdim)?])
}

/// `sum(x1 / max(‖x1‖, eps) · x2 / max(‖x2‖, eps), dim)` over the broadcast inputs in their
/// promoted (floating) dtype: each input normalised first, so the result stays within [-1, 1].
pub fn cosine_similarity(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x1, x2) = (rw.t("x1")?, rw.t("x2")?);
    let eps = rw.float("eps", Some(1e-8))?;
    let dtype = promoted(rw, &[x1, x2])?;
    if !dtype.is_floating() {
        return Err(RuleError::Arg { name: "x1".into(), message: format!("expected a floating common dtype, got {dtype:?}") });
    }
    let rank = rw.rank(x1)?.max(rw.rank(x2)?);
    let dim = rw.int("dim", Some(1))?;
    let d = norm_dim(dim, rank.max(1)).ok_or_else(|| RuleError::Arg { name: "dim".into(), message: format!("{dim} out of range for rank {rank}") })?;
    // Both broadcast first (`expand_outplace`), so `dim` names a dimension of each.
    let (x1, x2) = if rw.meta(x1)?.sizes == rw.meta(x2)?.sizes {
        (x1, x2)
    } else {
        let shape = broadcast(rw, x1, x2)?;
        (expand_to(rw, x1, &shape)?, expand_to(rw, x2, &shape)?)
    };
    let x1 = super::loss::cast(rw, x1, dtype)?;
    let x2 = super::loss::cast(rw, x2, dtype)?;
    let mut normed = Vec::new();
    for x in [x1, x2] {
        // Zero-dim inputs (dim 0 or -1) have nothing to reduce: their norm is their magnitude.
        let n = if rank == 0 { vector_norm0(rw, x, 2.0)? } else { vector_norm(rw, x, 2.0, d as i64, true)? };
        let n = rw.op("aten.clamp_min.default", vec![("self", A::T(n)), ("min", A::F(eps))])?;
        normed.push(bin(rw, "aten.div.Tensor", x, A::T(n))?);
    }
    let m = bin(rw, "aten.mul.Tensor", normed[0], A::T(normed[1]))?;
    if rank == 0 {
        return Ok(vec![m]);
    }
    Ok(vec![rw.op("aten.sum.dim_IntList", vec![("self", A::T(m)), ("dim", A::Is(vec![d as i64])), ("keepdim", A::B(false))])?])
}

/// `where(target == 1, 1 - cos, 0) + where(target == -1, clamp_min(cos - margin, 0), 0)` with
/// `cos = Σ x1·x2 / sqrt((Σ x1² + ε)(Σ x2² + ε))` over the last dimension, reduced.
pub fn cosine_embedding_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (x1, x2, t) = (rw.t("input1")?, rw.t("input2")?, rw.t("target")?);
    let margin = rw.float("margin", Some(0.0))?;
    let dim = rw.rank(t)? as i64;
    const EPSILON: f64 = 1e-12;
    let sum = |rw: &mut Rw, x: ValueId| rw.op("aten.sum.dim_IntList", vec![("self", A::T(x)), ("dim", A::Is(vec![dim])), ("keepdim", A::B(false))]);
    let p = bin(rw, "aten.mul.Tensor", x1, A::T(x2))?;
    let prod_sum = sum(rw, p)?;
    let mut mags = Vec::new();
    for x in [x1, x2] {
        let sq = bin(rw, "aten.mul.Tensor", x, A::T(x))?;
        let s = sum(rw, sq)?;
        mags.push(bin(rw, "aten.add.Scalar", s, A::F(EPSILON))?);
    }
    let m = bin(rw, "aten.mul.Tensor", mags[0], A::T(mags[1]))?;
    let denom = un(rw, "aten.sqrt.default", m)?;
    let cos = bin(rw, "aten.div.Tensor", prod_sum, A::T(denom))?;
    let zeros = rw.op("aten.full_like.default", vec![("self", A::T(cos)), ("fill_value", A::I(0))])?;
    let pos = super::loss::rsub(rw, A::I(1), cos)?;
    let shifted = bin(rw, "aten.sub.Scalar", cos, A::F(margin))?;
    let neg = rw.op("aten.clamp_min.default", vec![("self", A::T(shifted)), ("min", A::I(0))])?;
    let is_pos = bin(rw, "aten.eq.Scalar", t, A::I(1))?;
    let a = rw.op("aten.where.self", vec![("condition", A::T(is_pos)), ("self", A::T(pos)), ("other", A::T(zeros))])?;
    let is_neg = bin(rw, "aten.eq.Scalar", t, A::I(-1))?;
    let b = rw.op("aten.where.self", vec![("condition", A::T(is_neg)), ("self", A::T(neg)), ("other", A::T(zeros))])?;
    let l = bin(rw, "aten.add.Tensor", a, A::T(b))?;
    Ok(vec![reduce(rw, l, r)?])
}

/// `clamp_min(margin + d(anchor, positive) - d(anchor, negative), 0)` with pairwise distances
/// (`swap`: the negative distance is the smaller of d(a, n) and d(p, n)), reduced.
pub fn triplet_margin_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (a, p, n) = (rw.t("anchor")?, rw.t("positive")?, rw.t("negative")?);
    let margin = rw.float("margin", Some(1.0))?;
    let norm = rw.float("p", Some(2.0))?;
    let eps = rw.float("eps", Some(1e-6))?;
    let ranks = [rw.rank(a)?, rw.rank(p)?, rw.rank(n)?];
    if ranks.iter().any(|&k| k != ranks[0]) {
        return Err(RuleError::Arg { name: "anchor".into(), message: format!("anchor, positive and negative must have the same rank, got {ranks:?}") });
    }
    let d_pos = pairwise(rw, a, p, norm, eps, false)?;
    let mut d_neg = pairwise(rw, a, n, norm, eps, false)?;
    if rw.bool("swap", false)? {
        let d_swap = pairwise(rw, p, n, norm, eps, false)?;
        d_neg = bin(rw, "aten.minimum.default", d_neg, A::T(d_swap))?;
    }
    let s = bin(rw, "aten.add.Scalar", d_pos, A::F(margin))?;
    let s = bin(rw, "aten.sub.Tensor", s, A::T(d_neg))?;
    let l = rw.op("aten.clamp_min.default", vec![("self", A::T(s)), ("min", A::I(0))])?;
    Ok(vec![reduce(rw, l, r)?])
}


/// The broadcast shape of two tensors of static shapes.
fn broadcast(rw: &Rw, a: ValueId, b: ValueId) -> Result<Vec<i64>, RuleError> {
    let (sa, sb) = match (rw.static_sizes(a), rw.static_sizes(b)) {
        (Some(sa), Some(sb)) => (sa, sb),
        _ => return Err(RuleError::Unsupported("broadcasting dynamic shapes".into())),
    };
    let rank = sa.len().max(sb.len());
    let at = |s: &[i64], i: usize| if i + s.len() >= rank { s[i + s.len() - rank] } else { 1 };
    (0..rank)
        .map(|i| match (at(&sa, i), at(&sb, i)) {
            (x, y) if x == y || y == 1 => Ok(x),
            (1, y) => Ok(y),
            (x, y) => Err(RuleError::Arg { name: "x2".into(), message: format!("sizes {x} and {y} at dimension {i} do not broadcast") }),
        })
        .collect()
}

/// `x` expanded to `shape` (itself when it has that shape).
fn expand_to(rw: &mut Rw, x: ValueId, shape: &[i64]) -> R {
    if rw.static_sizes(x).as_deref() == Some(shape) {
        return Ok(x);
    }
    rw.op("aten.expand.default", vec![("self", A::T(x)), ("size", A::Is(shape.to_vec()))])
}
