//! Class-index losses: `nll_loss_nd` and `cross_entropy_loss` (class indices or class
//! probabilities as target, optional weights, `ignore_index`, label smoothing), as
//! `aten/src/ATen/native/LossNLL.cpp` computes them.

use super::fvec::{around, need_float, reduce_loss, F};
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// Log-probabilities laid out as `(outer, classes, inner)` around the class dim (dim 1, or 0
/// for an unbatched `[C]` input).
struct Classes {
    v: Vec<f64>,
    outer: usize,
    c: usize,
    inner: usize,
    /// Shape of one loss per position (the input without its class dim).
    pos_shape: Vec<usize>,
}

impl Classes {
    fn new(x: &F) -> OpResult<Classes> {
        if x.shape.is_empty() {
            return shape_err("a class-index loss needs an input with a class dim");
        }
        let cd = if x.shape.len() == 1 { 0 } else { 1 };
        let (outer, c, inner) = around(&x.shape, cd);
        let mut pos_shape = x.shape.clone();
        pos_shape.remove(cd);
        Ok(Classes { v: x.v.clone(), outer, c, inner, pos_shape })
    }

    fn at(&self, pos: usize, class: usize) -> f64 {
        let (o, k) = (pos / self.inner.max(1), pos % self.inner.max(1));
        self.v[(o * self.c + class) * self.inner + k]
    }

    fn positions(&self) -> usize {
        self.outer * self.inner
    }

    /// `log_softmax` over the class dim.
    fn log_softmax(mut self) -> Classes {
        for o in 0..self.outer {
            for k in 0..self.inner {
                let idx = |c: usize| (o * self.c + c) * self.inner + k;
                let m = (0..self.c).map(|c| self.v[idx(c)]).fold(f64::NEG_INFINITY, f64::max);
                let s: f64 = (0..self.c).map(|c| (self.v[idx(c)] - m).exp()).sum();
                let lse = m + s.ln();
                (0..self.c).for_each(|c| self.v[idx(c)] -= lse);
            }
        }
        self
    }
}

fn class_weights(cx: &OpCx, c: usize) -> OpResult<Option<Vec<f64>>> {
    match cx.opt_tensor("weight")? {
        Some(w) if w.numel() == c => Ok(Some(w.to_f64_vec())),
        Some(w) => shape_err(format!("weight {:?} does not have {c} elements", w.shape())),
        None => Ok(None),
    }
}

/// Checked class indices of `target`, one per position.
fn targets(t: &Tensor, lp: &Classes, ignore: i64) -> OpResult<Vec<i64>> {
    let tv = t.to_i64_vec();
    if tv.len() != lp.positions() {
        return shape_err(format!("target {:?} does not match the input's positions {:?}", t.shape(), lp.pos_shape));
    }
    if let Some(bad) = tv.iter().find(|&&i| i != ignore && (i < 0 || i as usize >= lp.c)) {
        return Err(OpError::Arg { arg: "target".into(), message: format!("class {bad} out of range for {} classes", lp.c) });
    }
    Ok(tv)
}

/// `-w[t]·logp[t]` per position and the sum of the weights taken (the mean's divisor).
fn nll(lp: &Classes, tv: &[i64], w: Option<&[f64]>, ignore: i64) -> (Vec<f64>, f64) {
    let mut total_w = 0.0;
    let v = tv
        .iter()
        .enumerate()
        .map(|(p, &t)| {
            if t == ignore {
                return 0.0;
            }
            let wt = w.map_or(1.0, |w| w[t as usize]);
            total_w += wt;
            -wt * lp.at(p, t as usize)
        })
        .collect();
    (v, total_w)
}

fn reduce_weighted(v: Vec<f64>, shape: Vec<usize>, divisor: f64, reduction: i64, dtype: DType) -> OpResult<Tensor> {
    if reduction == 1 {
        return F::new(vec![], vec![v.iter().sum::<f64>() / divisor]).to(dtype);
    }
    reduce_loss(F::new(shape, v), reduction, dtype)
}

pub fn nll_loss_nd(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let (reduction, ignore) = (cx.int_or("reduction", 1)?, cx.int_or("ignore_index", -100)?);
    let lp = Classes::new(&F::of(x))?;
    let w = class_weights(cx, lp.c)?;
    let tv = targets(cx.tensor("target")?, &lp, ignore)?;
    let (v, total) = nll(&lp, &tv, w.as_deref(), ignore);
    one(reduce_weighted(v, lp.pos_shape.clone(), total, reduction, x.dtype())?)
}

/// `nll_loss_forward` / `nll_loss2d_forward`: the loss and the summed weight of the kept
/// targets (zero for an unreduced batched loss, as ATen leaves it).
pub fn nll_loss_forward(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let (reduction, ignore) = (cx.int_or("reduction", 1)?, cx.int_or("ignore_index", -100)?);
    let lp = Classes::new(&F::of(x))?;
    let w = class_weights(cx, lp.c)?;
    let tv = targets(cx.tensor("target")?, &lp, ignore)?;
    let (v, total) = nll(&lp, &tv, w.as_deref(), ignore);
    let total = if reduction == 0 && x.shape().len() > 1 { 0.0 } else { total };
    let loss = reduce_weighted(v, lp.pos_shape.clone(), total, reduction, x.dtype())?;
    Ok(vec![RtValue::Tensor(loss), RtValue::Tensor(F::new(vec![], vec![total]).to(x.dtype())?)])
}

pub fn cross_entropy_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (x, t) = (cx.tensor("self")?, cx.tensor("target")?);
    need_float(x)?;
    let w = cx.opt_tensor("weight")?.map(Tensor::to_f64_vec);
    let how = CrossEntropy { reduction: cx.int_or("reduction", 1)?, ignore: cx.int_or("ignore_index", -100)?, label_smoothing: cx.float_or("label_smoothing", 0.0)? };
    one(cross_entropy(&F::of(x), t, w.as_deref(), how, x.dtype())?)
}

/// How a cross entropy reduces: `reduction` as ATen numbers it (0 none, 1 mean, 2 sum).
#[derive(Clone, Copy)]
pub(crate) struct CrossEntropy {
    pub reduction: i64,
    pub ignore: i64,
    pub label_smoothing: f64,
}

/// `cross_entropy(x, t)` of logits `x` (classes on dim 1, or dim 0 unbatched), the loss in
/// `dtype`: class indices or class probabilities as target, optional class weights.
pub(crate) fn cross_entropy(x: &F, t: &Tensor, w: Option<&[f64]>, how: CrossEntropy, dtype: DType) -> OpResult<Tensor> {
    let CrossEntropy { reduction, ignore, label_smoothing: ls } = how;
    let lp = Classes::new(x)?.log_softmax();
    if w.is_some_and(|w| w.len() != lp.c) {
        return shape_err(format!("{} class weights for {} classes", w.map_or(0, <[f64]>::len), lp.c));
    }
    let c = lp.c as f64;
    if t.dtype().is_floating() {
        // Class probabilities: -Σ_c w_c·t_c·logp_c, the mean over positions (not weights).
        if t.shape() != x.shape.as_slice() {
            return shape_err(format!("probability target {:?} must match the input {:?}", t.shape(), x.shape));
        }
        let tp = Classes::new(&F::of(t))?;
        let v: Vec<f64> = (0..lp.positions())
            .map(|p| {
                -(0..lp.c)
                    .map(|k| {
                        let tk = tp.at(p, k) * (1.0 - ls) + ls / c;
                        w.map_or(1.0, |w| w[k]) * tk * lp.at(p, k)
                    })
                    .sum::<f64>()
            })
            .collect();
        return reduce_loss(F::new(lp.pos_shape.clone(), v), reduction, dtype);
    }
    let tv = targets(t, &lp, ignore)?;
    let (v, total) = nll(&lp, &tv, w, ignore);
    if ls == 0.0 {
        return reduce_weighted(v, lp.pos_shape.clone(), total, reduction, dtype);
    }
    // Label smoothing: (1 - ls)·nll + ls/C·smooth, smooth = -Σ_c w_c·logp_c, normalised for
    // the mean like nll (by the weights of the kept targets, or by their count).
    let smooth: Vec<f64> = (0..lp.positions())
        .map(|p| if tv[p] == ignore { 0.0 } else { -(0..lp.c).map(|k| w.map_or(1.0, |w| w[k]) * lp.at(p, k)).sum::<f64>() })
        .collect();
    let (nll_r, smooth_r): (Vec<f64>, Vec<f64>) = match reduction {
        0 => (v, smooth),
        1 => {
            let kept = tv.iter().filter(|&&t| t != ignore).count() as f64;
            let div = if w.is_some() { total } else { kept };
            (vec![v.iter().sum::<f64>() / total], vec![smooth.iter().sum::<f64>() / div])
        }
        _ => (vec![v.iter().sum()], vec![smooth.iter().sum()]),
    };
    let out: Vec<f64> = nll_r.iter().zip(&smooth_r).map(|(n, s)| (1.0 - ls) * n + s * (ls / c)).collect();
    let shape = if reduction == 0 { lp.pos_shape.clone() } else { vec![] };
    F::new(shape, out).to(dtype)
}
