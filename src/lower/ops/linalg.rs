//! Matrix products and attention. Each output element is a dot product over the contraction
//! dim: a serial loop in the elementwise schedule; `lower::schedule::tiled` recognises the
//! `Σ a · b` shape built here and stages it through local-memory tiles.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId, RedOp, UnOp};
use super::super::LowerError;
use crate::ir::{Node, ValueId};

/// Σ_k a[..., i, k] · b[..., k, j] with `b_transposed` reading b[..., j, k] instead.
fn dot(cx: &mut Ctx<'_>, a: ValueId, b: ValueId, idx: &[ExprId], b_transposed: bool) -> Result<ExprId, LowerError> {
    let a_sizes = cx.sizes(a)?;
    let b_rank = cx.sizes(b)?.len();
    let n = idx.len();
    let (i, j) = (idx[n - 2], idx[n - 1]);
    let var = cx.kb.fresh_var()?;
    let k = cx.kb.var(var);
    let extent = cx.kb.size(&a_sizes[a_sizes.len() - 1]);
    let mut ai: Vec<ExprId> = idx[n - a_sizes.len()..n - 2].to_vec();
    ai.extend([i, k]);
    let mut bi: Vec<ExprId> = idx[n - b_rank..n - 2].to_vec();
    bi.extend(if b_transposed { [j, k] } else { [k, j] });
    let x = cx.read(a, &ai)?;
    let y = cx.read(b, &bi)?;
    let p = cx.kb.binary(BinOp::Mul, x, y)?;
    Ok(cx.kb.reduce(RedOp::Sum, var, extent, p)?)
}

pub fn mm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let a = cx.tensor(node, "self")?;
    let b = cx.tensor(node, "mat2")?;
    dot(cx, a, b, idx, false)
}

pub fn linear(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = cx.tensor(node, "input")?;
    let w = cx.tensor(node, "weight")?;
    let xs = cx.sizes(x)?;
    let Some(last) = xs.last() else { return Err(cx.err(node, "linear needs an input of rank 1 or more")) };
    // A 1-D weight is a vector: the output drops the input's last dim (`x @ w`), and a bias is 0-dim.
    let vector = cx.sizes(w)?.len() == 1;
    let lead = if vector { idx.len() } else { idx.len().saturating_sub(1) };
    let out_col: Vec<ExprId> = idx[lead..].to_vec();
    let var = cx.kb.fresh_var()?;
    let k = cx.kb.var(var);
    let extent = cx.kb.size(last);
    let mut xi = idx[..lead].to_vec();
    xi.push(k);
    let a = cx.read(x, &xi)?;
    let wi: Vec<ExprId> = out_col.iter().copied().chain([k]).collect();
    let b = cx.read(w, &wi)?;
    let p = cx.kb.binary(BinOp::Mul, a, b)?;
    let mut acc = cx.kb.reduce(RedOp::Sum, var, extent, p)?;
    if let Some(bias) = cx.opt_tensor(node, "bias") {
        let b = cx.read(bias, &out_col)?;
        acc = cx.kb.binary(BinOp::Add, acc, b)?;
    }
    Ok(acc)
}

/// What an attention lowering builds for one query row.
enum Part {
    /// Output element `d` of the row. `p_storage` rounds the softmax weights to a 16-bit float
    /// before they multiply `v`, as PyTorch's CPU flash kernel stores them in the input's dtype.
    Out { d: ExprId, p_storage: Option<Elem> },
    /// The row's log-sum-exp of the scaled, masked scores.
    LogSumExp,
}

/// softmax(q kᵀ · scale) v, one output element per work-item: the row statistics are serial
/// loops over the key positions (the kept, unfused form of attention).
pub fn sdpa(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let (row, d) = idx.split_at(idx.len().saturating_sub(1));
    let d = *d.first().ok_or_else(|| cx.err(node, "attention needs an output of rank >= 2"))?;
    attention(cx, node, row, Part::Out { d, p_storage: None })
}

/// `_scaled_dot_product_flash_attention_for_cpu`: output 0 the attention (its softmax weights
/// rounded to the input's dtype, as the CPU kernel stores them), output 1 the row log-sum-exp.
pub fn sdpa_flash_cpu(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    if out == 1 {
        return attention(cx, node, idx, Part::LogSumExp);
    }
    let q = cx.tensor(node, "query")?;
    let p_storage = Elem::from_dtype(cx.meta(q)?.dtype).filter(|e| matches!(e, Elem::F16 | Elem::BF16));
    let (row, d) = idx.split_at(idx.len().saturating_sub(1));
    let d = *d.first().ok_or_else(|| cx.err(node, "attention needs an output of rank >= 2"))?;
    attention(cx, node, row, Part::Out { d, p_storage })
}

/// `part` of query row `row` (batch coordinates, then the query position).
fn attention(cx: &mut Ctx<'_>, node: &Node, row: &[ExprId], part: Part) -> Result<ExprId, LowerError> {
    let q = cx.tensor(node, "query")?;
    let k = cx.tensor(node, "key")?;
    let v = cx.tensor(node, "value")?;
    // A boolean mask keeps the scores where it holds (-inf elsewhere); a float mask is added.
    // Either broadcasts against [..., L, S] from the right.
    let mask = cx.opt_tensor(node, "attn_mask");
    let mask_meta = match mask {
        Some(mv) => Some(cx.meta(mv)?.clone()),
        None => None,
    };
    if cx.float_or(node, "dropout_p", 0.0)? != 0.0 {
        return Err(cx.err(node, "dropout_p must be 0"));
    }
    let causal = cx.bool_or(node, "is_causal", false)?;
    let (qs, ks) = (cx.sizes(q)?, cx.sizes(k)?);
    let n = row.len() + 1;
    if n < 2 || qs.len() != n || ks.len() != n {
        return Err(cx.err(node, "query, key and value must have the output's rank"));
    }
    let e_size = qs[n - 1].clone();
    let s_size = ks[n - 2].clone();
    // Scores in the inputs' compute type: float64 attention keeps its scale and an additive
    // float mask in float64 (a float32 scale alone moved results by 2e-7 relative).
    let wide = cx.meta(q)?.dtype == crate::ir::DType::F64;
    let ct = if wide { crate::lower::kernel::Ty::F64 } else { crate::lower::kernel::Ty::F32 };
    let scale = match cx.float_or(node, "scale", f64::NAN)? {
        s if !s.is_nan() && wide => cx.kb.f64(s),
        s if !s.is_nan() => cx.kb.f32(s as f32),
        _ => {
            let e = cx.kb.size(&e_size);
            let e = cx.kb.cast(e, ct);
            cx.kb.unary(UnOp::Rsqrt, e)
        }
    };
    let batch = row[..n - 2].to_vec();
    let i = row[n - 2];
    // Grouped-query attention: each key/value head serves `Hq / Hk` query heads.
    let kv_batch = match (cx.bool_or(node, "enable_gqa", false)?, n >= 3) {
        (true, true) => {
            let (hq, hk) = (qs[n - 3].as_int(), ks[n - 3].as_int());
            match (hq, hk) {
                (Some(hq), Some(hk)) if hk > 0 && hq % hk == 0 => {
                    let mut b = batch.clone();
                    let g = cx.kb.i64(hq / hk);
                    b[n - 3] = cx.kb.binary(BinOp::Div, b[n - 3], g)?;
                    b
                }
                _ => return Err(cx.err(node, "enable_gqa needs static head counts with Hq a multiple of Hk")),
            }
        }
        _ => batch.clone(),
    };
    // Batch dims broadcast as in PyTorch's math path: a key or value of one head under several
    // query heads (Falcon's multi-query attention passes [B, 1, S, E]) is read at head 0.
    let vs = cx.sizes(v)?;
    let zero = cx.kb.i64(0);
    let broadcast = |sizes: &[crate::sym::Expr], at: &[ExprId]| -> Vec<ExprId> {
        at.iter()
            .enumerate()
            .map(|(d, &x)| if sizes[d].as_int() == Some(1) && qs[d].as_int() != Some(1) { zero } else { x })
            .collect()
    };
    let (k_batch, v_batch) = (broadcast(&ks, &kv_batch), broadcast(&vs, &kv_batch));
    let s_extent = cx.kb.size(&s_size);
    let e_extent = cx.kb.size(&e_size);
    // score(j) = scale · Σ_e q[i, e] k[j, e], masked to -inf above the diagonal when causal.
    let score = |cx: &mut Ctx<'_>, j: ExprId| -> Result<ExprId, LowerError> {
        let ev = cx.kb.fresh_var()?;
        let e = cx.kb.var(ev);
        let mut qi = batch.clone();
        qi.extend([i, e]);
        let mut ki = k_batch.clone();
        ki.extend([j, e]);
        let a = cx.read(q, &qi)?;
        let b = cx.read(k, &ki)?;
        let p = cx.kb.binary(BinOp::Mul, a, b)?;
        let s = cx.kb.reduce(RedOp::Sum, ev, e_extent, p)?;
        let mut s = cx.kb.binary(BinOp::Mul, s, scale)?;
        if let (Some(mv), Some(mm)) = (mask, mask_meta.as_ref()) {
            let r = mm.sizes.len();
            if r > n {
                return Err(cx.err(node, format!("attn_mask of rank {r} for attention of rank {n}")));
            }
            let mut full = batch.clone();
            full.extend([i, j]);
            let zero = cx.kb.i64(0);
            let at: Vec<ExprId> =
                mm.sizes.iter().enumerate().map(|(t, size)| if size.as_int() == Some(1) { zero } else { full[n - r + t] }).collect();
            let mval = cx.read(mv, &at)?;
            s = if mm.dtype == crate::ir::DType::Bool {
                let ninf = cx.kb.f32(f32::NEG_INFINITY);
                cx.kb.select(mval, s, ninf)?
            } else {
                let mf = cx.kb.cast(mval, ct);
                cx.kb.binary(BinOp::Add, s, mf)?
            };
        }
        if causal {
            let ok = cx.kb.cmp(CmpOp::Le, j, i)?;
            let ninf = cx.kb.f32(f32::NEG_INFINITY);
            return Ok(cx.kb.select(ok, s, ninf)?);
        }
        Ok(s)
    };
    let jv = cx.kb.fresh_var()?;
    let j = cx.kb.var(jv);
    let sj = score(cx, j)?;
    let m = cx.kb.reduce(RedOp::Max, jv, s_extent, sj)?;
    let jv2 = cx.kb.fresh_var()?;
    let j2 = cx.kb.var(jv2);
    let sj2 = score(cx, j2)?;
    let d2 = cx.kb.binary(BinOp::Sub, sj2, m)?;
    let p2 = cx.kb.unary(UnOp::Exp, d2);
    let denom = cx.kb.reduce(RedOp::Sum, jv2, s_extent, p2)?;
    let (d, p_storage) = match part {
        Part::LogSumExp => {
            let l = cx.kb.unary(UnOp::Log, denom);
            return Ok(cx.kb.binary(BinOp::Add, m, l)?);
        }
        Part::Out { d, p_storage } => (d, p_storage),
    };
    let jv3 = cx.kb.fresh_var()?;
    let j3 = cx.kb.var(jv3);
    let sj3 = score(cx, j3)?;
    let d3 = cx.kb.binary(BinOp::Sub, sj3, m)?;
    let p3 = cx.kb.unary(UnOp::Exp, d3);
    let p3 = p_storage.map_or(p3, |e| cx.kb.round_to(p3, e));
    let mut vi = v_batch.clone();
    vi.extend([j3, d]);
    let vv = cx.read(v, &vi)?;
    let pv = cx.kb.binary(BinOp::Mul, p3, vv)?;
    let num = cx.kb.reduce(RedOp::Sum, jv3, s_extent, pv)?;
    Ok(cx.kb.binary(BinOp::Div, num, denom)?)
}
