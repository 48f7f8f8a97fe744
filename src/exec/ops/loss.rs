//! Loss functions as ATen keeps them whole (`nn.functional.*_loss`), following the formulas of
//! PyTorch's `aten/src/ATen/native/Loss*.cpp` and `torch/_decomp/decompositions.py`, in `f64`.

use super::fvec::{broadcast_all, float_type, need_float, promoted, reduce_loss, round_to, F};
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::value::RtValue;
use crate::ir::DType;

fn reduction(cx: &OpCx) -> OpResult<i64> {
    cx.int_or("reduction", 1)
}

/// An elementwise loss of `self` and `target` (broadcast), then reduced.
fn pointwise_loss(cx: &OpCx, a: &str, b: &str, f: impl Fn(f64, f64) -> f64) -> OpResult<Vec<RtValue>> {
    let (x, y) = (cx.tensor(a)?, cx.tensor(b)?);
    let dtype = float_type(&[x, y])?;
    let fs = broadcast_all(&[x, y])?;
    let v = fs[0].v.iter().zip(&fs[1].v).map(|(&x, &y)| f(x, y)).collect();
    one(reduce_loss(F::new(fs[0].shape.clone(), v), reduction(cx)?, dtype)?)
}

pub fn mse_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    pointwise_loss(cx, "self", "target", |x, y| (x - y) * (x - y))
}

pub fn l1_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    pointwise_loss(cx, "self", "target", |x, y| (x - y).abs())
}

pub fn smooth_l1_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let beta = cx.float_or("beta", 1.0)?;
    pointwise_loss(cx, "self", "target", |x, y| {
        let d = (x - y).abs();
        if beta == 0.0 {
            d
        } else if d < beta {
            0.5 * d * d / beta
        } else {
            d - 0.5 * beta
        }
    })
}

pub fn huber_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let delta = cx.float_or("delta", 1.0)?;
    pointwise_loss(cx, "self", "target", |x, y| {
        let d = (x - y).abs();
        if d < delta {
            0.5 * d * d
        } else {
            delta * (d - 0.5 * delta)
        }
    })
}

/// `log1p(exp(-y·x))`, rounded to the inputs' dtype after each step as ATen's composite does
/// (its ops run in that dtype): in float16, `exp` of a product above 11.1 is infinite and so is
/// the loss, which PyTorch returns.
pub fn soft_margin_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let r = round_to(float_type(&[cx.tensor("self")?, cx.tensor("target")?])?);
    pointwise_loss(cx, "self", "target", move |x, y| r(r(r(-y * x).exp()).ln_1p()))
}

pub fn kl_div(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    if cx.bool_or("log_target", false)? {
        pointwise_loss(cx, "self", "target", |x, t| t.exp() * (t - x))
    } else {
        // xlogy(t, t) - t·x: a zero target contributes nothing even where x is infinite.
        pointwise_loss(cx, "self", "target", |x, t| if t == 0.0 { 0.0 } else { t * t.ln() - t * x })
    }
}

/// `-w·(t·ln x + (1-t)·ln(1-x))` with the logs clamped at -100, as PyTorch does.
pub fn binary_cross_entropy(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (x, t) = (cx.tensor("self")?, cx.tensor("target")?);
    need_float(x)?;
    let fs = broadcast_all(&[x, t])?;
    let w = match cx.opt_tensor("weight")? {
        Some(w) => Some(F::of_broadcast(w, &fs[0].shape)?.v),
        None => None,
    };
    let v = (0..fs[0].v.len())
        .map(|i| {
            let (x, t) = (fs[0].v[i], fs[1].v[i]);
            let l = -(t * x.ln().max(-100.0) + (1.0 - t) * (1.0 - x).ln().max(-100.0));
            w.as_ref().map_or(l, |w| l * w[i])
        })
        .collect();
    one(reduce_loss(F::new(fs[0].shape.clone(), v), reduction(cx)?, x.dtype())?)
}

pub fn binary_cross_entropy_with_logits(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (x, t) = (cx.tensor("self")?, cx.tensor("target")?);
    need_float(x)?;
    let fs = broadcast_all(&[x, t])?;
    let shape = &fs[0].shape;
    let w = cx.opt_tensor("weight")?.map(|w| F::of_broadcast(w, shape)).transpose()?;
    let pw = cx.opt_tensor("pos_weight")?.map(|w| F::of_broadcast(w, shape)).transpose()?;
    let v = (0..fs[0].v.len())
        .map(|i| {
            let (x, t) = (fs[0].v[i], fs[1].v[i]);
            // log(1 + e^-x) computed stably as max(-x, 0) + log(e^-m + e^(-x-m)).
            let m = (-x).max(0.0);
            let softplus = m + ((-m).exp() + (-x - m).exp()).ln();
            let lw = pw.as_ref().map_or(1.0, |p| (p.v[i] - 1.0) * t + 1.0);
            let l = (1.0 - t) * x + lw * softplus;
            w.as_ref().map_or(l, |w| l * w.v[i])
        })
        .collect();
    one(reduce_loss(F::new(shape.clone(), v), reduction(cx)?, x.dtype())?)
}

pub fn poisson_nll_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (log_input, full) = (cx.bool_or("log_input", true)?, cx.bool_or("full", false)?);
    let eps = cx.float_or("eps", 1e-8)?;
    let (x, t) = (cx.tensor("input")?, cx.tensor("target")?);
    let dtype = float_type(&[x, t])?;
    let fs = broadcast_all(&[x, t])?;
    let v = fs[0]
        .v
        .iter()
        .zip(&fs[1].v)
        .map(|(&x, &t)| {
            let l = if log_input { x.exp() - t * x } else { x - t * (x + eps).ln() };
            // Stirling's term, only where the target exceeds 1.
            let s = if full && t > 1.0 { t * t.ln() - t + 0.5 * (2.0 * std::f64::consts::PI * t).ln() } else { 0.0 };
            l + s
        })
        .collect();
    one(reduce_loss(F::new(fs[0].shape.clone(), v), reduction(cx)?, dtype)?)
}

pub fn margin_ranking_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let margin = cx.float_or("margin", 0.0)?;
    let (a, b, y) = (cx.tensor("input1")?, cx.tensor("input2")?, cx.tensor("target")?);
    let dtype = float_type(&[a, b, y])?;
    let fs = broadcast_all(&[a, b, y])?;
    // `-y·(a - b)` runs in the inputs' dtype (wrapping for uint8); `+ margin` in the result's.
    let r = round_to(promoted(&[a, b, y])?);
    let v = (0..fs[0].v.len()).map(|i| (r(r(-fs[2].v[i]) * r(fs[0].v[i] - fs[1].v[i])) + margin).max(0.0)).collect();
    one(reduce_loss(F::new(fs[0].shape.clone(), v), reduction(cx)?, dtype)?)
}

pub fn hinge_embedding_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let margin = cx.float_or("margin", 1.0)?;
    pointwise_loss(cx, "self", "target", |x, y| {
        let m = if y != 1.0 { (margin - x).max(0.0) } else { 0.0 };
        let s = if y != -1.0 { x } else { 0.0 };
        m + s
    })
}

/// `x1·x2 / sqrt((|x1|² + ε)(|x2|² + ε))` over the last dim, then `1 - cos` for target 1 and
/// `max(0, cos - margin)` for target -1.
pub fn cosine_embedding_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    const EPS: f64 = 1e-12;
    let margin = cx.float_or("margin", 0.0)?;
    let (a, b, y) = (cx.tensor("input1")?, cx.tensor("input2")?, cx.tensor("target")?);
    let dtype = float_type(&[a, b])?;
    let fs = broadcast_all(&[a, b])?;
    let d = fs[0].shape.last().copied().unwrap_or(1).max(1);
    let rows = fs[0].v.len() / d;
    let yv = F::of(y).v;
    if yv.len() != rows && !(rows == 1 && yv.len() == 1) {
        return shape_err(format!("cosine_embedding_loss: target {:?} for inputs {:?}", y.shape(), a.shape()));
    }
    let v: Vec<f64> = (0..rows)
        .map(|r| {
            let (p, q) = (&fs[0].v[r * d..(r + 1) * d], &fs[1].v[r * d..(r + 1) * d]);
            let prod: f64 = p.iter().zip(q).map(|(a, b)| a * b).sum();
            let m1: f64 = p.iter().map(|a| a * a).sum::<f64>() + EPS;
            let m2: f64 = q.iter().map(|a| a * a).sum::<f64>() + EPS;
            let cos = prod / (m1 * m2).sqrt();
            let t = yv[r];
            (if t == 1.0 { 1.0 - cos } else { 0.0 }) + (if t == -1.0 { (cos - margin).max(0.0) } else { 0.0 })
        })
        .collect();
    one(reduce_loss(F::new(y.shape().to_vec(), v), reduction(cx)?, dtype)?)
}

/// `‖x1 - x2 + ε‖_p` over the last dim (PyTorch's pairwise distance); the difference is taken
/// in the inputs' dtype `input` (wrapping for uint8) and `+ ε` rounds to the result dtype `out`.
pub(crate) fn pairwise(x1: &F, x2: &F, p: f64, eps: f64, input: DType, out: DType) -> Vec<f64> {
    let d = x1.shape.last().copied().unwrap_or(1).max(1);
    let (ri, ro) = (round_to(input), round_to(out));
    x1.v.chunks(d)
        .zip(x2.v.chunks(d))
        .map(|(a, b)| ro(super::reduce::norm_f(&a.iter().zip(b).map(|(x, y)| ro(ri(x - y) + eps)).collect::<Vec<_>>(), p)))
        .collect()
}

pub fn triplet_margin_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (margin, p, eps, swap) =
        (cx.float_or("margin", 1.0)?, cx.float_or("p", 2.0)?, cx.float_or("eps", 1e-6)?, cx.bool_or("swap", false)?);
    let (a, pos, neg) = (cx.tensor("anchor")?, cx.tensor("positive")?, cx.tensor("negative")?);
    let dtype = float_type(&[a, pos, neg])?;
    let fs = broadcast_all(&[a, pos, neg])?;
    let input = promoted(&[a, pos, neg])?;
    let dp = pairwise(&fs[0], &fs[1], p, eps, input, dtype);
    let mut dn = pairwise(&fs[0], &fs[2], p, eps, input, dtype);
    if swap {
        let ds = pairwise(&fs[1], &fs[2], p, eps, input, dtype);
        dn.iter_mut().zip(ds).for_each(|(n, s)| *n = n.min(s));
    }
    let v: Vec<f64> = dp.iter().zip(&dn).map(|(p, n)| (margin + p - n).max(0.0)).collect();
    let shape = fs[0].shape[..fs[0].shape.len().saturating_sub(1)].to_vec();
    one(reduce_loss(F::new(shape, v), reduction(cx)?, dtype)?)
}

/// `(rows, classes)` of a margin loss input: `[C]` or a scalar is one row.
fn rows_classes(shape: &[usize]) -> OpResult<(usize, usize)> {
    match shape {
        [] => Ok((1, 1)),
        [c] => Ok((1, *c)),
        [n, c] => Ok((*n, *c)),
        s => shape_err(format!("a margin loss takes a [C] or [N, C] input, got {s:?}")),
    }
}

/// Per-row result shape of a margin loss for reduction `none`.
fn row_shape(shape: &[usize]) -> Vec<usize> {
    if shape.len() == 2 {
        vec![shape[0]]
    } else {
        vec![]
    }
}

pub fn multilabel_margin_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (x, y) = (cx.tensor("self")?, cx.tensor("target")?);
    need_float(x)?;
    let (n, c) = rows_classes(x.shape())?;
    let (xv, yv) = (x.to_f64_vec(), y.to_i64_vec());
    if yv.len() != n * c {
        return shape_err(format!("multilabel_margin_loss: target {:?} for input {:?}", y.shape(), x.shape()));
    }
    let mut v = Vec::with_capacity(n);
    for r in 0..n {
        let (xs, ys) = (&xv[r * c..(r + 1) * c], &yv[r * c..(r + 1) * c]);
        // The target classes are the entries before the first -1.
        let targets: Vec<usize> = ys.iter().take_while(|&&t| t >= 0).map(|&t| t as usize).filter(|&t| t < c).collect();
        let mut is_target = vec![false; c];
        targets.iter().for_each(|&t| is_target[t] = true);
        let mut s = 0.0;
        for &j in &targets {
            for i in (0..c).filter(|&i| !is_target[i]) {
                s += (1.0 - (xs[j] - xs[i])).max(0.0);
            }
        }
        v.push(s / c as f64);
    }
    one(reduce_loss(F::new(row_shape(x.shape()), v), reduction(cx)?, x.dtype())?)
}

/// `multilabel_margin_loss_forward`: the loss and `is_target` (1 where a class is among its
/// row's labels, in the input's dtype and the target's shape).
pub fn multilabel_margin_loss_forward(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let mut out = multilabel_margin_loss(cx)?;
    let (x, y) = (cx.tensor("self")?, cx.tensor("target")?);
    let (n, c) = rows_classes(x.shape())?;
    let yv = y.to_i64_vec();
    let mut is_target = vec![0.0; n * c];
    for r in 0..n {
        for &t in yv[r * c..(r + 1) * c].iter().take_while(|&&t| t >= 0) {
            if let Some(v) = usize::try_from(t).ok().filter(|&t| t < c).map(|t| &mut is_target[r * c + t]) {
                *v = 1.0;
            }
        }
    }
    out.push(RtValue::Tensor(F::new(y.shape().to_vec(), is_target).to(x.dtype())?));
    Ok(out)
}

pub fn multi_margin_loss(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (x, y) = (cx.tensor("self")?, cx.tensor("target")?);
    need_float(x)?;
    let (p, margin) = (cx.float_or("p", 1.0)?, cx.float_or("margin", 1.0)?);
    let w = cx.opt_tensor("weight")?.map(|w| w.to_f64_vec());
    let (n, c) = rows_classes(x.shape())?;
    let (xv, yv) = (x.to_f64_vec(), y.to_i64_vec());
    if yv.len() != n {
        return shape_err(format!("multi_margin_loss: target {:?} for input {:?}", y.shape(), x.shape()));
    }
    let mut v = Vec::with_capacity(n);
    for r in 0..n {
        let t = usize::try_from(yv[r]).ok().filter(|&t| t < c).ok_or_else(|| OpError::Arg {
            arg: "target".into(),
            message: format!("class {} out of range for {c} classes", yv[r]),
        })?;
        let xs = &xv[r * c..(r + 1) * c];
        let wt = w.as_ref().map_or(1.0, |w| w[t]);
        let s: f64 = (0..c).filter(|&i| i != t).map(|i| (margin - xs[t] + xs[i]).max(0.0).powf(p) * wt).sum();
        v.push(s / c as f64);
    }
    one(reduce_loss(F::new(row_shape(x.shape()), v), reduction(cx)?, x.dtype())?)
}
