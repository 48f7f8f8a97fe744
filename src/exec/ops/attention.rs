//! Scaled dot-product attention by its definition (the "math" backend), in `f64`:
//! `softmax(q·kᵀ·scale + mask) · v`, with the causal mask and boolean or additive masks.
//! The CPU flash variant returns the same output plus the row log-sum-exp, and stores the
//! softmax weights in the input's dtype before they multiply `v`, as its kernel does.

use super::fvec::round_to;
use super::pointwise::broadcast_shapes;
use super::shape::expand_tensor;
use super::{dtype_ok, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

struct Attention {
    out: Tensor,
    /// `[..., L]`, natural log of each row's softmax denominator (after scaling and masking).
    lse: Tensor,
}

/// How the softmax weights multiply `v`: exactly (the math backend), or stored in the input's
/// dtype first (PyTorch's CPU flash kernel keeps them in a float16/bfloat16 buffer for its
/// second matrix product, while their sum stays in float32).
#[derive(Clone, Copy, PartialEq)]
enum Weights {
    Exact,
    Stored,
}

/// Whether key/value heads fewer than the query's are repeated to match: under `enable_gqa`
/// (the math path), or always (the CPU flash kernel maps query head `h` to key/value head
/// `h / (Hq / Hk)` itself, and takes no `enable_gqa` argument).
#[derive(Clone, Copy, PartialEq)]
enum Gqa {
    WhenAsked,
    Always,
}

fn attend(cx: &OpCx, mask_name: &str, weights: Weights, gqa: Gqa) -> OpResult<Attention> {
    let (q, k, v) = (cx.tensor("query")?, cx.tensor("key")?, cx.tensor("value")?);
    let dt = q.dtype();
    if !dt.is_floating() || k.dtype() != dt || v.dtype() != dt {
        return shape_err(format!("query, key and value must share a float dtype, got {}, {}, {}", dt, k.dtype(), v.dtype()));
    }
    let dropout = cx.float_or("dropout_p", 0.0)?;
    if dropout != 0.0 {
        return Err(OpError::Unsupported(format!("attention dropout (p = {dropout}) is random; it has no reference value")));
    }
    if q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2 {
        return shape_err("query, key and value need at least 2 dims");
    }
    let (qs, ks, vs) = (q.shape(), k.shape(), v.shape());
    let (l, e) = (qs[qs.len() - 2], qs[qs.len() - 1]);
    let (s, ek) = (ks[ks.len() - 2], ks[ks.len() - 1]);
    let (sv, ev) = (vs[vs.len() - 2], vs[vs.len() - 1]);
    if ek != e || sv != s {
        return shape_err(format!("query {qs:?}, key {ks:?} and value {vs:?} do not fit together"));
    }
    let (mut kb, mut vb) = (ks[..ks.len() - 2].to_vec(), vs[..vs.len() - 2].to_vec());
    let qb = qs[..qs.len() - 2].to_vec();
    // Grouped-query attention: key/value heads are repeated to match the query heads.
    let (mut k, mut v) = (k.clone(), v.clone());
    let repeat = gqa == Gqa::Always || cx.bool_or("enable_gqa", false)?;
    if repeat && !qb.is_empty() && kb.len() == qb.len() {
        let hd = qb.len() - 1;
        for (t, b) in [(&mut k, &mut kb), (&mut v, &mut vb)] {
            let (hq, hk) = (qb[hd], b[hd]);
            if hk != hq && hk > 0 && hq % hk == 0 {
                let rep = hq / hk;
                let mut with_rep: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
                with_rep.insert(hd + 1, rep as i64);
                let mut unsq = t.shape().to_vec();
                unsq.insert(hd + 1, 1);
                let expanded = expand_tensor(&t.reshape(&unsq).ok_or_else(|| OpError::Shape("gqa".into()))?, &with_rep)?;
                let mut merged = t.shape().to_vec();
                merged[hd] = hq;
                *t = expanded.reshape(&merged).ok_or_else(|| OpError::Shape("gqa".into()))?;
                b[hd] = hq;
            }
        }
    }
    let batch = broadcast_shapes(&[&qb, &kb, &vb])?;
    let full = |t: &Tensor, r: usize, c: usize| -> OpResult<Vec<f64>> {
        let mut sh: Vec<i64> = batch.iter().map(|&d| d as i64).collect();
        sh.extend([r as i64, c as i64]);
        Ok(expand_tensor(t, &sh)?.to_f64_vec())
    };
    let (qv, kv, vv) = (full(q, l, e)?, full(&k, s, e)?, full(&v, s, ev)?);
    let mask = match cx.opt_tensor(mask_name)? {
        None => None,
        Some(m) => {
            let mut sh: Vec<i64> = batch.iter().map(|&d| d as i64).collect();
            sh.extend([l as i64, s as i64]);
            let m = expand_tensor(m, &sh)
                .map_err(|_| OpError::Shape(format!("attn_mask {:?} does not broadcast to {sh:?}", m.shape())))?;
            Some((m.dtype() == DType::Bool, m.to_f64_vec()))
        }
    };
    let causal = cx.bool_or("is_causal", false)?;
    let scale = cx.opt_float("scale")?.unwrap_or(1.0 / (e as f64).sqrt());
    let nb: usize = batch.iter().product();
    let stored = round_to(if weights == Weights::Stored { dt } else { DType::F64 });
    let mut out = vec![0.0; nb * l * ev];
    let mut lse = vec![0.0; nb * l];
    let mut row = vec![0.0; s];
    for b in 0..nb {
        for i in 0..l {
            let qi = &qv[(b * l + i) * e..(b * l + i + 1) * e];
            for (j, r) in row.iter_mut().enumerate() {
                let kj = &kv[(b * s + j) * e..(b * s + j + 1) * e];
                let mut x = qi.iter().zip(kj).map(|(a, c)| a * c).sum::<f64>() * scale;
                if causal && j > i {
                    x = f64::NEG_INFINITY;
                }
                if let Some((is_bool, m)) = &mask {
                    let mv = m[(b * l + i) * s + j];
                    if *is_bool {
                        if mv == 0.0 {
                            x = f64::NEG_INFINITY;
                        }
                    } else {
                        x += mv;
                    }
                }
                *r = x;
            }
            let mx = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let denom: f64 = row.iter().map(|x| (x - mx).exp()).sum();
            lse[b * l + i] = mx + denom.ln();
            let o = &mut out[(b * l + i) * ev..(b * l + i + 1) * ev];
            for (j, x) in row.iter().enumerate() {
                let p = stored((x - mx).exp());
                let vj = &vv[(b * s + j) * ev..(b * s + j + 1) * ev];
                for (oo, vvv) in o.iter_mut().zip(vj) {
                    *oo += p * vvv / denom;
                }
            }
        }
    }
    let mut oshape = batch.clone();
    oshape.extend([l, ev]);
    let mut lshape = batch;
    lshape.push(l);
    let out = Tensor::from_vec(&oshape, out).ok_or_else(|| OpError::Shape("attention output".into()))?;
    let lse = Tensor::from_vec(&lshape, lse).ok_or_else(|| OpError::Shape("attention logsumexp".into()))?;
    // The log-sum-exp is in the kernel's accumulation type: float64 for float64 inputs.
    let lse_dtype = if dt == DType::F64 { DType::F64 } else { DType::F32 };
    Ok(Attention { out: dtype_ok(out.cast(dt))?, lse: dtype_ok(lse.cast(lse_dtype))? })
}

pub fn sdpa(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    Ok(vec![RtValue::Tensor(attend(cx, "attn_mask", Weights::Exact, Gqa::WhenAsked)?.out)])
}

/// `(output, logsumexp)`.
pub fn flash_for_cpu(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = attend(cx, "attn_mask", Weights::Stored, Gqa::Always)?;
    Ok(vec![RtValue::Tensor(a.out), RtValue::Tensor(a.lse)])
}
