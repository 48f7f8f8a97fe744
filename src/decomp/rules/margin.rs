//! The class-index margin losses, as `torch/_decomp/decompositions.py` computes them
//! (`multi_margin_loss`, `multilabel_margin_loss_forward`): a gather of the target classes'
//! scores, a hinge against every other class, masked and divided by the number of classes.

use super::loss::{bin, reduction, where_number};
use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, DType, SymIntArg, ValueId};

type R = Result<ValueId, RuleError>;

/// `x` viewed as `[1, ..]` when it has fewer than `rank` dimensions (`atleast_1d/2d`).
fn at_least(rw: &mut Rw, x: ValueId, rank: usize) -> R {
    let mut sizes: Vec<SymIntArg> = Vec::new();
    let have = rw.rank(x)?;
    if have >= rank {
        return Ok(x);
    }
    sizes.extend((have..rank).map(|_| SymIntArg::Int(1)));
    for d in 0..have {
        sizes.push(rw.size(x, d)?);
    }
    rw.op("aten.view.default", vec![("self", A::T(x)), ("size", A::Sizes(sizes))])
}

/// `arange(n)` (int64) on `like`'s device.
fn arange(rw: &mut Rw, n: i64, like: ValueId) -> R {
    let device = rw.meta(like)?.device.clone();
    let args = vec![
        ("start", A::I(0)),
        ("end", A::I(n)),
        ("step", A::I(1)),
        ("dtype", A::Raw(Arg::ScalarType(DType::I64))),
        ("device", A::Raw(Arg::Device(device))),
        ("pin_memory", A::B(false)),
    ];
    rw.op("aten.arange.start_step", args)
}

fn classes(rw: &Rw, x: ValueId) -> Result<i64, RuleError> {
    rw.meta(x)?.sizes.get(1).and_then(|s| s.as_int()).ok_or_else(|| RuleError::Unsupported("a dynamic number of classes".into()))
}

fn sum_dims(rw: &mut Rw, x: ValueId, dims: Vec<i64>) -> R {
    rw.op("aten.sum.dim_IntList", vec![("self", A::T(x)), ("dim", A::Is(dims)), ("keepdim", A::B(false))])
}

/// `z = clamp_min(margin - x[target] + x, 0)` (squared for p = 2, times `weight[target]`),
/// zero at the target class; the mean over every element, the sum divided by the classes, or
/// per sample the sum over classes divided by the classes.
pub fn multi_margin_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (x, t, w) = (rw.t("self")?, rw.t("target")?, rw.opt_t("weight")?);
    let p = rw.int("p", Some(1))?;
    if p != 1 && p != 2 {
        return Err(RuleError::Arg { name: "p".into(), message: format!("only p == 1 and p == 2 are supported, got {p}") });
    }
    let margin = rw.scalar("margin").unwrap_or(A::I(1));
    let target_rank = rw.rank(t)?;
    let x = at_least(rw, x, 2)?;
    let t = at_least(rw, t, 1)?;
    let dim = classes(rw, x)?;
    let column = rw.op("aten.unsqueeze.default", vec![("self", A::T(t)), ("dim", A::I(1))])?;
    let picked = rw.op("aten.gather.default", vec![("self", A::T(x)), ("dim", A::I(1)), ("index", A::T(column))])?;
    let d = super::loss::rsub(rw, margin, picked)?;
    let s = bin(rw, "aten.add.Tensor", d, A::T(x))?;
    let mut z = rw.op("aten.clamp_min.default", vec![("self", A::T(s)), ("min", A::I(0))])?;
    if p == 2 {
        z = bin(rw, "aten.mul.Tensor", z, A::T(z))?;
    }
    if let Some(w) = w {
        let wt = rw.op("aten.gather.default", vec![("self", A::T(w)), ("dim", A::I(0)), ("index", A::T(t))])?;
        let wt = rw.op("aten.unsqueeze.default", vec![("self", A::T(wt)), ("dim", A::I(1))])?;
        z = bin(rw, "aten.mul.Tensor", z, A::T(wt))?;
    }
    let idx = arange(rw, dim, x)?;
    let other = rw.op("aten.ne.Tensor", vec![("self", A::T(idx)), ("other", A::T(column))])?;
    let z = where_number(rw, other, z, A::I(0), false)?;
    let out = match r {
        1 => super::loss::un(rw, "aten.mean.default", z)?,
        2 => {
            let s = super::loss::un(rw, "aten.sum.default", z)?;
            bin(rw, "aten.div.Scalar", s, A::I(dim))?
        }
        _ => {
            let s = sum_dims(rw, z, vec![1])?;
            let s = bin(rw, "aten.div.Scalar", s, A::I(dim))?;
            // A single sample (a 0-dim target) has a 0-dim unreduced loss.
            if target_rank == 0 {
                rw.op("aten.view.default", vec![("self", A::T(s)), ("size", A::Is(vec![]))])?
            } else {
                s
            }
        }
    };
    Ok(vec![out])
}

/// `multilabel_margin_loss` → the loss of `multilabel_margin_loss_forward`.
pub fn multilabel_margin_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let args = vec![("self", A::T(rw.t("self")?)), ("target", A::T(rw.t("target")?)), ("reduction", A::I(reduction(rw)?))];
    Ok(rw.op_n("aten.multilabel_margin_loss_forward.default", args)?.into_iter().take(1).collect())
}

/// Each sample's labels are its target's entries before the first -1; the loss sums
/// `clamp_min(1 - x[label] + x[i], 0) / C` over its labels and the classes `i` that are not
/// labels: `(loss, is_target)`.
pub fn multilabel_margin_loss_forward(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let r = reduction(rw)?;
    let (x0, t0) = (rw.t("self")?, rw.t("target")?);
    let (in_rank, t_rank) = (rw.rank(x0)?, rw.rank(t0)?);
    if in_rank > 2 || rw.meta(x0)?.sizes != rw.meta(t0)?.sizes {
        return Err(RuleError::Arg { name: "target".into(), message: "expected an input of rank <= 2 and a target of its shape".into() });
    }
    let x = at_least(rw, x0, 2)?;
    let t = at_least(rw, t0, 2)?;
    let dim = classes(rw, x)?;
    if dim == 0 {
        return Err(RuleError::Arg { name: "self".into(), message: "expected a non-empty class dimension".into() });
    }
    let idx = arange(rw, dim, t)?;
    let is_end = bin(rw, "aten.eq.Scalar", t, A::I(-1))?;
    let dim_t = super::loss::scalar_tensor(rw, A::I(dim), DType::I64)?;
    let pos = rw.op("aten.where.self", vec![("condition", A::T(is_end)), ("self", A::T(idx)), ("other", A::T(dim_t))])?;
    let end = rw.op("aten.amin.default", vec![("self", A::T(pos)), ("dim", A::Is(vec![-1])), ("keepdim", A::B(true))])?;
    let valid = rw.op("aten.lt.Tensor", vec![("self", A::T(idx)), ("other", A::T(end))])?;
    let tidx0 = where_number(rw, valid, t, A::I(0), false)?;
    let picked = rw.op("aten.gather.default", vec![("self", A::T(x)), ("dim", A::I(-1)), ("index", A::T(tidx0))])?;
    let tidx1 = where_number(rw, valid, t, A::I(-1), false)?;
    let labels = rw.op("aten.unsqueeze.default", vec![("self", A::T(tidx1)), ("dim", A::I(-1))])?;
    let hit = rw.op("aten.eq.Tensor", vec![("self", A::T(idx)), ("other", A::T(labels))])?;
    let is_target = rw.op("aten.any.dim", vec![("self", A::T(hit)), ("dim", A::I(1)), ("keepdim", A::B(false))])?;
    // z[j, n, i] = 1 - x[n, label j] + x[n, i]
    let pt = rw.op("aten.permute.default", vec![("self", A::T(picked)), ("dims", A::Is(vec![1, 0]))])?;
    let pt = rw.op("aten.unsqueeze.default", vec![("self", A::T(pt)), ("dim", A::I(-1))])?;
    let d = super::loss::rsub(rw, A::F(1.0), pt)?;
    let s = bin(rw, "aten.add.Tensor", d, A::T(x))?;
    let z = rw.op("aten.clamp_min.default", vec![("self", A::T(s)), ("min", A::I(0))])?;
    let z = bin(rw, "aten.div.Scalar", z, A::I(dim))?;
    let z = where_number(rw, is_target, z, A::I(0), true)?;
    // Only the labels count as j: the positions from the first -1 on are no labels.
    let vt = rw.op("aten.permute.default", vec![("self", A::T(valid)), ("dims", A::Is(vec![1, 0]))])?;
    let vt = rw.op("aten.unsqueeze.default", vec![("self", A::T(vt)), ("dim", A::I(-1))])?;
    let z = where_number(rw, vt, z, A::I(0), false)?;
    let loss = match r {
        1 => {
            let s = sum_dims(rw, z, vec![0, -1])?;
            super::loss::un(rw, "aten.mean.default", s)?
        }
        2 => super::loss::un(rw, "aten.sum.default", z)?,
        _ => {
            let s = sum_dims(rw, z, vec![0, -1])?;
            if in_rank <= 1 {
                rw.op("aten.view.default", vec![("self", A::T(s)), ("size", A::Is(vec![]))])?
            } else {
                s
            }
        }
    };
    let dtype = rw.meta(x)?.dtype;
    let is_target = super::loss::cast(rw, is_target, dtype)?;
    let mut shape = Vec::new();
    for d in 0..t_rank {
        shape.push(rw.size(t0, d)?);
    }
    let is_target = rw.op("aten.view.default", vec![("self", A::T(is_target)), ("size", A::Sizes(shape))])?;
    Ok(vec![loss, is_target])
}
