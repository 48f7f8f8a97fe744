//! Class-index losses as PyTorch 2.15 decomposes them: `cross_entropy_loss` and `nll_loss_nd`
//! are CompositeImplicitAutograd (`aten/src/ATen/native/LossNLL.cpp`: log-softmax, then
//! `nll_loss` / `nll_loss2d`, inputs of rank 3 or above 4 viewed as rank 4), and
//! `nll_loss_forward` / `nll_loss2d_forward` are `_nll_loss_forward` of
//! `torch/_decomp/decompositions.py` (a `gather` of the target classes, `ignore_index` masked
//! with `where`, the mean divided by the summed weights of the kept targets).

use super::loss::{bin, reduction, un, where_number};
use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, SymIntArg, ValueId};

type R = Result<ValueId, RuleError>;

fn ignore_index(rw: &Rw) -> Result<i64, RuleError> {
    rw.int("ignore_index", Some(-100))
}

/// `weight` viewed with its classes at `dim` of a rank-`rank` tensor (ones elsewhere).
fn weight_at(rw: &mut Rw, w: ValueId, dim: usize, rank: usize) -> R {
    let c = rw.size(w, 0)?;
    let shape: Vec<SymIntArg> = (0..rank).map(|d| if d == dim { c.clone() } else { SymIntArg::Int(1) }).collect();
    rw.op("aten.view.default", vec![("self", A::T(w)), ("size", A::Sizes(shape))])
}

/// `self.log_softmax(class_dim)` as the composite traces it: `_log_softmax` in the input dtype.
fn log_softmax(rw: &mut Rw, x: ValueId, dim: usize) -> R {
    rw.op("aten._log_softmax.default", vec![("self", A::T(x)), ("dim", A::I(dim as i64)), ("half_to_float", A::B(false))])
}

/// `nll_loss_nd(self, target, weight, reduction, ignore_index)` of already mapped values.
fn nll_nd(rw: &mut Rw, x: ValueId, t: ValueId, w: Option<ValueId>, r: i64, ignore: i64) -> R {
    let args = vec![("self", A::T(x)), ("target", A::T(t)), ("weight", A::OptT(w)), ("reduction", A::I(r)), ("ignore_index", A::I(ignore))];
    rw.op("aten.nll_loss_nd.default", args)
}

/// Ranks 1 and 2 are `nll_loss`, rank 4 `nll_loss2d`; the others are viewed as
/// `[N, C, 1, -1]` (targets `[N, 1, -1]`) for `nll_loss2d`, and its unreduced loss viewed back.
pub fn nll_loss_nd(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, t, w) = (rw.t("self")?, rw.t("target")?, rw.opt_t("weight")?);
    let (r, ignore) = (reduction(rw)?, ignore_index(rw)?);
    let rank = rw.rank(x)?;
    let args = |x: ValueId, t: ValueId| {
        vec![("self", A::T(x)), ("target", A::T(t)), ("weight", A::OptT(w)), ("reduction", A::I(r)), ("ignore_index", A::I(ignore))]
    };
    match rank {
        0 => Err(RuleError::Arg { name: "self".into(), message: "expected 1 or more dimensions (got 0)".into() }),
        1 | 2 => Ok(vec![rw.op("aten.nll_loss.default", args(x, t))?]),
        4 => Ok(vec![rw.op("aten.nll_loss2d.default", args(x, t))?]),
        _ => {
            let empty = rw.static_sizes(x).is_some_and(|s| s.contains(&0));
            if empty {
                return Err(RuleError::Unsupported("an empty input of rank 3 or above 4".into()));
            }
            let n = rw.size(x, 0)?;
            let c = rw.size(x, 1)?;
            let x4 = rw.op("aten.view.default", vec![("self", A::T(x)), ("size", A::Sizes(vec![n.clone(), c, SymIntArg::Int(1), SymIntArg::Int(-1)]))])?;
            let t3 = rw.op("aten.view.default", vec![("self", A::T(t)), ("size", A::Sizes(vec![n.clone(), SymIntArg::Int(1), SymIntArg::Int(-1)]))])?;
            let out = rw.op("aten.nll_loss2d.default", args(x4, t3))?;
            if r != 0 {
                return Ok(vec![out]);
            }
            let mut shape = vec![n];
            for d in 2..rank {
                shape.push(rw.size(x, d)?);
            }
            Ok(vec![rw.op("aten.view.default", vec![("self", A::T(out)), ("size", A::Sizes(shape))])?])
        }
    }
}

/// `nll_loss` / `nll_loss2d` → the first output of their `_forward`.
fn forward_of(rw: &mut Rw, target: &str) -> Result<Vec<ValueId>, RuleError> {
    let args = vec![
        ("self", A::T(rw.t("self")?)),
        ("target", A::T(rw.t("target")?)),
        ("weight", A::OptT(rw.opt_t("weight")?)),
        ("reduction", A::I(reduction(rw)?)),
        ("ignore_index", A::I(ignore_index(rw)?)),
    ];
    Ok(rw.op_n(target, args)?.into_iter().take(1).collect())
}

pub fn nll_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    forward_of(rw, "aten.nll_loss_forward.default")
}

pub fn nll_loss2d(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    forward_of(rw, "aten.nll_loss2d_forward.default")
}

/// `_nll_loss_forward`: `(output, total_weight)`.
pub fn nll_loss_forward(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (mut x, t) = (rw.t("self")?, rw.t("target")?);
    let (r, ignore) = (reduction(rw)?, ignore_index(rw)?);
    let rank = rw.rank(x)?;
    let ch = usize::from(rank >= 2);
    let w = match rw.opt_t("weight")? {
        Some(w) => {
            let w = if rank > 1 { weight_at(rw, w, ch, rank)? } else { w };
            x = bin(rw, "aten.mul.Tensor", x, A::T(w))?;
            Some(w)
        }
        None => None,
    };
    let keep = bin(rw, "aten.ne.Scalar", t, A::I(ignore))?;
    let safe = where_number(rw, keep, t, A::I(0), false)?;
    let safe = rw.op("aten.unsqueeze.default", vec![("self", A::T(safe)), ("dim", A::I(ch as i64))])?;
    let picked = rw.op("aten.gather.default", vec![("self", A::T(x)), ("dim", A::I(ch as i64)), ("index", A::T(safe))])?;
    let picked = rw.op("aten.squeeze.dim", vec![("self", A::T(picked)), ("dim", A::I(ch as i64))])?;
    let loss = un(rw, "aten.neg.default", picked)?;
    let keep = bin(rw, "aten.ne.Scalar", t, A::I(ignore))?;
    let loss = where_number(rw, keep, loss, A::I(0), false)?;
    let (dtype, device) = rw.meta(x).map(|m| (m.dtype, m.device.clone()))?;
    if r == 0 && rank > 1 {
        let args = vec![("size", A::Is(vec![])), ("fill_value", A::F(0.0)), ("dtype", A::Raw(Arg::ScalarType(dtype))), ("device", A::Raw(Arg::Device(device))), ("pin_memory", A::B(false))];
        let total = rw.op("aten.full.default", args)?;
        return Ok(vec![loss, total]);
    }
    let total = match w {
        Some(w) => {
            let sizes: Vec<SymIntArg> = (0..rank).map(|d| rw.size(x, d)).collect::<Result<_, _>>()?;
            let we = rw.op("aten.expand.default", vec![("self", A::T(w)), ("size", A::Sizes(sizes))])?;
            let ws = rw.op("aten.gather.default", vec![("self", A::T(we)), ("dim", A::I(ch as i64)), ("index", A::T(safe))])?;
            let ws = rw.op("aten.squeeze.dim", vec![("self", A::T(ws)), ("dim", A::I(ch as i64))])?;
            let keep = bin(rw, "aten.ne.Scalar", t, A::I(ignore))?;
            let ws = where_number(rw, keep, ws, A::I(0), false)?;
            un(rw, "aten.sum.default", ws)?
        }
        None => {
            let keep = bin(rw, "aten.ne.Scalar", t, A::I(ignore))?;
            let n = un(rw, "aten.sum.default", keep)?;
            let args = vec![("self", A::T(n)), ("dtype", A::Raw(Arg::ScalarType(dtype))), ("device", A::Raw(Arg::Device(device)))];
            rw.op("aten._to_copy.default", args)?
        }
    };
    let loss = match r {
        2 => un(rw, "aten.sum.default", loss)?,
        1 => {
            let s = un(rw, "aten.sum.default", loss)?;
            bin(rw, "aten.div.Tensor", s, A::T(total))?
        }
        _ => loss,
    };
    Ok(vec![loss, total])
}

/// `cross_entropy_loss`: class probabilities when the target has the input's shape, label
/// smoothing when asked for, else `nll_loss_nd(log_softmax(self))`.
pub fn cross_entropy_loss(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, t, w) = (rw.t("self")?, rw.t("target")?, rw.opt_t("weight")?);
    let (r, ignore) = (reduction(rw)?, ignore_index(rw)?);
    let ls = rw.float("label_smoothing", Some(0.0))?;
    if !(0.0..=1.0).contains(&ls) {
        return Err(RuleError::Arg { name: "label_smoothing".into(), message: format!("{ls} is not between 0.0 and 1.0") });
    }
    let rank = rw.rank(x)?;
    if rank == 0 {
        return Err(RuleError::Arg { name: "self".into(), message: "expected 1 or more dimensions (got 0)".into() });
    }
    let class_dim = usize::from(rank != 1);
    if rw.meta(x)?.sizes == rw.meta(t)?.sizes {
        return probabilities(rw, x, t, w, r, ls, class_dim).map(|v| vec![v]);
    }
    let lp = log_softmax(rw, x, class_dim)?;
    let nll = nll_nd(rw, lp, t, w, r, ignore)?;
    if ls == 0.0 {
        return Ok(vec![nll]);
    }
    let n_classes = static_size(rw, lp, class_dim)?;
    let smooth = match w {
        Some(w) => {
            let wv = weight_at(rw, w, class_dim, rank)?;
            let m = bin(rw, "aten.mul.Tensor", lp, A::T(wv))?;
            rw.op("aten.sum.dim_IntList", vec![("self", A::T(m)), ("dim", A::Is(vec![class_dim as i64]))])?
        }
        None => rw.op("aten.sum.dim_IntList", vec![("self", A::T(lp)), ("dim", A::Is(vec![class_dim as i64]))])?,
    };
    let smooth = un(rw, "aten.neg.default", smooth)?;
    let ignored = bin(rw, "aten.eq.Scalar", t, A::I(ignore))?;
    let smooth = where_number(rw, ignored, smooth, A::F(0.0), true)?;
    let ret = match r {
        1 => {
            let divisor = match w {
                // The weights of the kept targets: gathered at index 0 where ignored, then zeroed.
                Some(w) => {
                    let filtered = where_number(rw, ignored, t, A::I(0), true)?;
                    let flat = flatten(rw, filtered)?;
                    let tw = rw.op("aten.gather.default", vec![("self", A::T(w)), ("dim", A::I(0)), ("index", A::T(flat))])?;
                    let flat_mask = flatten(rw, ignored)?;
                    let tw = where_number(rw, flat_mask, tw, A::I(0), true)?;
                    un(rw, "aten.sum.default", tw)?
                }
                None => {
                    let kept = un(rw, "aten.bitwise_not.default", ignored)?;
                    un(rw, "aten.sum.default", kept)?
                }
            };
            let s = un(rw, "aten.sum.default", smooth)?;
            bin(rw, "aten.div.Tensor", s, A::T(divisor))?
        }
        2 => un(rw, "aten.sum.default", smooth)?,
        _ => smooth,
    };
    let smoothed = bin(rw, "aten.mul.Scalar", ret, A::F(ls / n_classes as f64))?;
    let kept = bin(rw, "aten.mul.Scalar", nll, A::F(1.0 - ls))?;
    Ok(vec![bin(rw, "aten.add.Tensor", kept, A::T(smoothed))?])
}

/// `-(log_softmax(self) · target' · weight)` summed over classes and reduced, with
/// `target' = target (1 - ls) + ls / C`; the mean divides by the number of positions.
fn probabilities(rw: &mut Rw, x: ValueId, t: ValueId, w: Option<ValueId>, r: i64, ls: f64, class_dim: usize) -> R {
    if !rw.meta(t)?.dtype.is_floating() {
        return Err(RuleError::Arg { name: "target".into(), message: "class probabilities must be floating point".into() });
    }
    let rank = rw.rank(x)?;
    let c = static_size(rw, x, class_dim)?;
    let lp = log_softmax(rw, x, class_dim)?;
    let t = if ls > 0.0 {
        let s = bin(rw, "aten.mul.Scalar", t, A::F(1.0 - ls))?;
        bin(rw, "aten.add.Scalar", s, A::F(ls / c as f64))?
    } else {
        t
    };
    let mut m = bin(rw, "aten.mul.Tensor", lp, A::T(t))?;
    if let Some(w) = w {
        let wv = if rank > 1 { weight_at(rw, w, 1, rank)? } else { w };
        m = bin(rw, "aten.mul.Tensor", m, A::T(wv))?;
    }
    match r {
        0 => {
            let s = rw.op("aten.sum.dim_IntList", vec![("self", A::T(m)), ("dim", A::Is(vec![class_dim as i64]))])?;
            un(rw, "aten.neg.default", s)
        }
        _ => {
            let s = un(rw, "aten.sum.default", m)?;
            let n = un(rw, "aten.neg.default", s)?;
            if r == 2 {
                return Ok(n);
            }
            let numel: i64 = rw.static_sizes(x).ok_or_else(|| RuleError::Unsupported("the mean over a dynamic number of positions".into()))?.iter().product();
            if numel == 0 {
                return Err(RuleError::Unsupported("the mean over an empty input (NaN)".into()));
            }
            bin(rw, "aten.div.Scalar", n, A::I(numel / c))
        }
    }
}

fn static_size(rw: &Rw, x: ValueId, d: usize) -> Result<i64, RuleError> {
    rw.meta(x)?.sizes.get(d).and_then(|s| s.as_int()).ok_or_else(|| RuleError::Unsupported("a dynamic number of classes".into()))
}

/// `x.flatten()`: a 1-D tensor as it is, others viewed as `[-1]`.
fn flatten(rw: &mut Rw, x: ValueId) -> R {
    if rw.rank(x)? == 1 {
        return Ok(x);
    }
    rw.op("aten.view.default", vec![("self", A::T(x)), ("size", A::Is(vec![-1]))])
}
