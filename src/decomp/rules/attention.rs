//! `scaled_dot_product_attention` as `run_decompositions()` emits it on CPU: through
//! `_scaled_dot_product_flash_attention_for_cpu` into `_scaled_dot_product_attention_math`:
//!
//! - a boolean `attn_mask` becomes `where(mask, 0, -inf)` (two `scalar_tensor`s and `where.self`);
//! - with `enable_gqa`, key and value heads are repeated up to the query's (`repeat_interleave`);
//! - the scale is split as √scale on q and on kᵀ (range safety), each a `mul.Scalar`;
//! - both products are `matmul`s: `expand` to the batch shape, `view` to 3-D (`clone` first when
//!   the strides do not allow the view, as `reshape` does), `bmm`, `view` back;
//! - the softmax is `_safe_softmax`: `_softmax`, then rows that are entirely `-inf` give 0, not
//!   NaN (`eq`, `logical_not`, `any`, `logical_not`, `full_like`, `where`);
//! - with 4-D inputs the output keeps the flash kernel's layout: `permute(2, 0, 1, 3)`, `clone`,
//!   `permute(1, 2, 0, 3)`.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, DType, SymIntArg, ValueId};
use crate::sym::Expr;

/// A `matmul` operand: `expand` to `shape`, then `view` to `[batch, rows, cols]`, cloning first
/// when the expanded layout does not allow the view (`reshape`: ATen's `computeStride`).
/// `strides` are the operand's as torch has them (an elementwise result follows its input's
/// memory order, [`crate::infer::layout`]).
fn bmm_operand(rw: &mut Rw, x: ValueId, shape: Vec<SymIntArg>, batch: SymIntArg, strides: &[Expr]) -> Result<ValueId, RuleError> {
    let n = shape.len();
    let (rows, cols) = (shape[n - 2].clone(), shape[n - 1].clone());
    let mut layout = rw.meta(x)?.clone();
    layout.strides = strides.to_vec();
    let exprs = |rw: &Rw, v: &[SymIntArg]| -> Result<Vec<Expr>, RuleError> { v.iter().map(|s| rw.sym_expr(s)).collect() };
    let wide = exprs(rw, &shape)?;
    let flat = exprs(rw, &[batch.clone(), rows.clone(), cols.clone()])?;
    layout.strides = crate::infer::layout::expanded_strides(&layout, &wide);
    layout.sizes = wide;
    let mut y = rw.op("aten.expand.default", vec![("self", A::T(x)), ("size", A::Sizes(shape))])?;
    if layout.strides.len() != layout.sizes.len() || crate::infer::view_strides(&layout, &flat).is_none() {
        y = super::view::contiguous_clone(rw, y)?;
    }
    rw.op("aten.view.default", vec![("self", A::T(y)), ("size", A::Sizes(vec![batch, rows, cols]))])
}

pub fn sdpa_math(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let q = rw.t("query")?;
    let k = rw.t("key")?;
    let v = rw.t("value")?;
    if rw.float("dropout_p", Some(0.0))? != 0.0 {
        return Err(RuleError::Unsupported("dropout_p > 0 is random; inference graphs only".into()));
    }
    if rw.bool("is_causal", false)? {
        return Err(RuleError::Unsupported("is_causal=True".into()));
    }
    let rank = rw.rank(q)?;
    if rank < 3 || rw.rank(k)? != rank || rw.rank(v)? != rank {
        return Err(RuleError::Unsupported("query, key and value must share a rank >= 3".into()));
    }
    // torch 2.11 broadcasts key/value heads against the query's unless `enable_gqa` (a single
    // key head is then an `expand`, copied by the product's `reshape`); 2.15 repeats them
    // whenever the counts differ (Falcon's multi-query attention). Which release between
    // changed it is not known here: 2.12 is assumed.
    let enable_gqa = rw.bool("enable_gqa", false)?;
    let repeat_heads = enable_gqa || (!rw.torch_older_than(2, 12) && heads_repeat(rw, q, k, v)?);
    // 2.11's CPU flash kernel takes equal head counts only, so unequal ones (without
    // `enable_gqa`) run the math kernel itself: its output, not the flash kernel's layout.
    let flash_layout = rank == 4 && (enable_gqa || !rw.torch_older_than(2, 12) || !heads_differ(rw, q, k, v)?);
    let (k, v) = if repeat_heads { gqa_heads(rw, q, k, v)? } else { (k, v) };
    let (qm, km, vm) = (rw.meta(q)?.clone(), rw.meta(k)?.clone(), rw.meta(v)?.clone());
    let dtype = qm.dtype;
    let e = qm.sizes.last().and_then(|d| d.as_int()).ok_or_else(|| RuleError::Unsupported("the head dimension must be static".into()))?;
    // `scale=None` (the default) means 1/√E.
    let root = rw.float("scale", Some(1.0 / (e as f64).sqrt()))?.sqrt();

    let mask = float_mask(rw, dtype)?;

    let mut perm: Vec<i64> = (0..rank as i64).collect();
    perm.swap(rank - 2, rank - 1);
    let qs = rw.op("aten.mul.Scalar", vec![("self", A::T(q)), ("other", A::F(root))])?;
    let kt = rw.op("aten.permute.default", vec![("self", A::T(k)), ("dims", A::Is(perm.clone()))])?;
    let ks = rw.op("aten.mul.Scalar", vec![("self", A::T(kt)), ("other", A::F(root))])?;
    let lead: Vec<SymIntArg> = (0..rank - 2).map(|d| rw.size(q, d)).collect::<Result<_, _>>()?;
    let batch = rw.product(lead.clone())?;
    let (l, s, ev) = (rw.size(q, rank - 2)?, rw.size(k, rank - 2)?, rw.size(v, rank - 1)?);
    let with = |last: [SymIntArg; 2]| -> Vec<SymIntArg> { lead.iter().cloned().chain(last).collect() };
    // `q * c` and `kᵀ * c` take the memory order of q and kᵀ (an expanded q's broadcast dim
    // does not vote: AIMv2's pooling query), which decides whether their `reshape` copies.
    let mut ktm = km.clone();
    ktm.sizes = perm.iter().map(|&i| km.sizes[i as usize].clone()).collect();
    ktm.strides = perm.iter().map(|&i| km.strides[i as usize].clone()).collect();
    let q_strides = crate::infer::layout::elementwise_strides(&[&qm], &qm.sizes);
    let kt_strides = crate::infer::layout::elementwise_strides(&[&ktm], &ktm.sizes);
    let q3 = bmm_operand(rw, qs, with([l.clone(), SymIntArg::Int(e)]), batch.clone(), &q_strides)?;
    let k3 = bmm_operand(rw, ks, with([SymIntArg::Int(e), s.clone()]), batch.clone(), &kt_strides)?;
    let scores = rw.op("aten.bmm.default", vec![("self", A::T(q3)), ("mat2", A::T(k3))])?;
    let mut scores = rw.op("aten.view.default", vec![("self", A::T(scores)), ("size", A::Sizes(with([l.clone(), s.clone()])))])?;
    if let Some(mask) = mask {
        scores = rw.op("aten.add.Tensor", vec![("self", A::T(scores)), ("other", A::T(mask))])?;
    }
    let p = rw.op("aten._softmax.default", vec![("self", A::T(scores)), ("dim", A::I(-1)), ("half_to_float", A::B(false))])?;
    let p = safe_softmax_rows(rw, scores, p)?;
    let p_strides = rw.meta(p)?.strides.clone();
    let p3 = bmm_operand(rw, p, with([l.clone(), s.clone()]), batch.clone(), &p_strides)?;
    let v3 = bmm_operand(rw, v, with([s, ev.clone()]), batch, &vm.strides)?;
    let o = rw.op("aten.bmm.default", vec![("self", A::T(p3)), ("mat2", A::T(v3))])?;
    let o = rw.op("aten.view.default", vec![("self", A::T(o)), ("size", A::Sizes(with([l, ev])))])?;
    if !flash_layout {
        return Ok(vec![o]);
    }
    // `.contiguous()`: no copy where the permuted output is row-major already (one query row,
    // L = 1: AIMv2's attention pooling).
    let o = rw.op("aten.permute.default", vec![("self", A::T(o)), ("dims", A::Is(vec![2, 0, 1, 3]))])?;
    let o = super::layout::contiguous(rw, o)?;
    Ok(vec![rw.op("aten.permute.default", vec![("self", A::T(o)), ("dims", A::Is(vec![1, 2, 0, 3]))])?])
}

/// Whether key or value has another head count (dim -3) than the query.
fn heads_differ(rw: &Rw, q: ValueId, k: ValueId, v: ValueId) -> Result<bool, RuleError> {
    let heads = |t: ValueId| -> Result<Option<Expr>, RuleError> {
        let m = rw.meta(t)?;
        Ok(m.sizes.len().checked_sub(3).map(|h| m.sizes[h].clone()))
    };
    let hq = heads(q)?;
    Ok(heads(k)? != hq || heads(v)? != hq)
}

/// Whether key and value have static head counts (dim -3) that differ from the query's and
/// divide it: what 2.15's math path repeats without `enable_gqa`.
fn heads_repeat(rw: &Rw, q: ValueId, k: ValueId, v: ValueId) -> Result<bool, RuleError> {
    let heads = |t: ValueId| -> Result<Option<i64>, RuleError> {
        let m = rw.meta(t)?;
        Ok(m.sizes.len().checked_sub(3).and_then(|h| m.sizes[h].as_int()))
    };
    Ok(match (heads(q)?, heads(k)?, heads(v)?) {
        (Some(hq), Some(hk), Some(hv)) => (hk != hq || hv != hq) && hk > 0 && hv > 0 && hq % hk == 0 && hq % hv == 0,
        _ => false,
    })
}

/// Grouped-query attention as the math path does it (`pre_process_group_query_attention_input`):
/// unless query, key and value have as many heads (dim -3), key and value heads are each
/// `repeat_interleave`d up to the query's, which traces to `unsqueeze` after the head dim,
/// `expand`, a contiguous `clone` and a `view` merging the repeats into the heads.
fn gqa_heads(rw: &mut Rw, q: ValueId, k: ValueId, v: ValueId) -> Result<(ValueId, ValueId), RuleError> {
    let rank = rw.rank(q)?;
    let h = rank - 3;
    let heads = |rw: &Rw, t: ValueId| -> Result<i64, RuleError> {
        rw.meta(t)?.sizes[h].as_int().ok_or_else(|| RuleError::Unsupported("enable_gqa with a dynamic number of heads".into()))
    };
    let (hq, hk, hv) = (heads(rw, q)?, heads(rw, k)?, heads(rw, v)?);
    if hq == hk && hk == hv {
        return Ok((k, v));
    }
    if hk <= 0 || hv <= 0 || hq % hk != 0 || hq % hv != 0 {
        return Err(RuleError::Arg {
            name: "key".into(),
            message: format!("enable_gqa: {hq} query heads are no multiple of {hk} key and {hv} value heads"),
        });
    }
    let repeat = |rw: &mut Rw, t: ValueId, n: i64| -> Result<ValueId, RuleError> {
        let mut sizes: Vec<SymIntArg> = (0..rank).map(|i| rw.size(t, i)).collect::<Result<_, _>>()?;
        let mut wide = sizes.clone();
        wide.insert(h + 1, SymIntArg::Int(hq / n));
        sizes[h] = SymIntArg::Int(hq);
        let u = rw.op("aten.unsqueeze.default", vec![("self", A::T(t)), ("dim", A::I(h as i64 + 1))])?;
        let e = rw.op("aten.expand.default", vec![("self", A::T(u)), ("size", A::Sizes(wide))])?;
        let c = super::view::contiguous_clone(rw, e)?;
        rw.op("aten.view.default", vec![("self", A::T(c)), ("size", A::Sizes(sizes))])
    };
    Ok((repeat(rw, k, hk)?, repeat(rw, v, hv)?))
}

/// The `attn_mask` argument as an additive float mask: a boolean one becomes
/// `where(mask, 0, -inf)`, as `convert_boolean_attn_mask` does.
fn float_mask(rw: &mut Rw, dtype: DType) -> Result<Option<ValueId>, RuleError> {
    Ok(match rw.opt_t("attn_mask")? {
        Some(m) if rw.meta(m)?.dtype == DType::Bool => {
            let scalar = |rw: &mut Rw, x: f64| {
                rw.op("aten.scalar_tensor.default", vec![("s", A::F(x)), ("dtype", A::Raw(Arg::ScalarType(dtype)))])
            };
            let zero = scalar(rw, 0.0)?;
            let ninf = scalar(rw, f64::NEG_INFINITY)?;
            Some(rw.op("aten.where.self", vec![("condition", A::T(m)), ("self", A::T(zero)), ("other", A::T(ninf))])?)
        }
        other => other,
    })
}

/// Under Inductor's table on CPU, 4-D attention stays one fused op,
/// `_scaled_dot_product_flash_attention_for_cpu`, fed the float form of a boolean mask (torch
/// 2.11 only where the head counts agree or `enable_gqa` is set; else the math decomposition).
/// An XPU build of Inductor picks its own fused kernel at this point.
pub fn sdpa_flash_cpu(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let q = rw.t("query")?;
    let (k, v) = (rw.t("key")?, rw.t("value")?);
    // Grouped-query attention needs no repeat here: the CPU flash kernel reads key/value head
    // `h / (Hq / Hk)` for query head `h`, so `enable_gqa` is simply dropped, as torch does.
    let unequal_heads = rw.torch_older_than(2, 12) && !rw.bool("enable_gqa", false)? && heads_differ(rw, q, k, v)?;
    if rw.rank(q)? != 4 || unequal_heads {
        return sdpa_math(rw);
    }
    let dtype = rw.meta(q)?.dtype;
    let mask = float_mask(rw, dtype)?;
    let mut args = vec![
        ("query", A::T(q)),
        ("key", A::T(k)),
        ("value", A::T(v)),
        ("dropout_p", A::F(rw.float("dropout_p", Some(0.0))?)),
        ("is_causal", A::B(rw.bool("is_causal", false)?)),
        ("attn_mask", A::OptT(mask)),
    ];
    if let Some(scale) = rw.scalar("scale") {
        args.push(("scale", scale));
    }
    let outs = rw.op_n("aten._scaled_dot_product_flash_attention_for_cpu.default", args)?;
    Ok(outs.into_iter().take(1).collect())
}

/// `_safe_softmax`'s guard: where every score of a row is `-inf`, the row is 0 instead of NaN.
fn safe_softmax_rows(rw: &mut Rw, scores: ValueId, p: ValueId) -> Result<ValueId, RuleError> {
    let is_ninf = rw.op("aten.eq.Scalar", vec![("self", A::T(scores)), ("other", A::F(f64::NEG_INFINITY))])?;
    let finite = rw.op("aten.logical_not.default", vec![("self", A::T(is_ninf))])?;
    let any = rw.op("aten.any.dim", vec![("self", A::T(finite)), ("dim", A::I(-1)), ("keepdim", A::B(true))])?;
    let all_ninf = rw.op("aten.logical_not.default", vec![("self", A::T(any))])?;
    let zeros = rw.op("aten.full_like.default", vec![("self", A::T(p)), ("fill_value", A::I(0))])?;
    rw.op("aten.where.self", vec![("condition", A::T(all_ninf)), ("self", A::T(zeros)), ("other", A::T(p))])
}
