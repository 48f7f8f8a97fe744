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
    // Where ATen's CPU backend choice rejects the flash kernel, the math kernel runs itself:
    // its output, not the flash kernel's layout.
    let flash_layout = cpu_flash_chosen(rw, q, k, v)?;
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

/// Whether ATen's CPU backend choice (`sdp_utils_cpp.cpp`, `use_flash_attention_cpp`) takes the
/// flash kernel, as `scaled_dot_product_attention` asks it under both tables; otherwise the math
/// kernel runs. Its gates that a static graph can answer: 4-D inputs (`check_tensor_shapes`);
/// 2.11 takes equal head counts only, unless `enable_gqa` (`check_batch_size_and_num_heads_dense`);
/// one head dim for query, key and value (`check_head_dim_size_cpp`); and a last-dim stride of 1 for
/// each (`check_last_dim_stride_equals_1_dense<false>`: a size-1 head dim is no exception on CPU),
/// which CPUBone's query, key and value, `[B, H, L, E]` views of an `[B, H, E, L]` buffer, fail.
fn cpu_flash_chosen(rw: &Rw, q: ValueId, k: ValueId, v: ValueId) -> Result<bool, RuleError> {
    if rw.rank(q)? != 4 || rw.rank(k)? != 4 || rw.rank(v)? != 4 {
        return Ok(false);
    }
    if rw.torch_older_than(2, 12) && !rw.bool("enable_gqa", false)? && heads_differ(rw, q, k, v)? {
        return Ok(false);
    }
    let (qm, km, vm) = (rw.meta(q)?, rw.meta(k)?, rw.meta(v)?);
    let head_dim = |m: &crate::ir::TensorMeta| m.sizes.last().cloned();
    if head_dim(qm) != head_dim(km) || head_dim(qm) != head_dim(vm) {
        return Ok(false);
    }
    let unit_last_stride = |m: &crate::ir::TensorMeta| m.strides.last().and_then(|s| s.as_int()) == Some(1);
    Ok(unit_last_stride(qm) && unit_last_stride(km) && unit_last_stride(vm))
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
    if !cpu_flash_chosen(rw, q, k, v)? {
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::decomp::{decompose, Marks, Mode};
    use super::super::test_graph::{arg, node};
    use crate::ir::{Arg, DType, Graph, InputKind, TensorMeta, ValueKind};
    use crate::sym::Expr;

    /// Attention of `x` (as query, key and value; `x.transpose(-1, -2)` with `transpose`) with
    /// the value's head dim cut to `value_dim`: the op multiset in each mode.
    fn attention_ops(sizes: [i64; 3], transpose: bool, value_dim: Option<i64>, mode: Mode) -> BTreeMap<String, usize> {
        let mut g = Graph::new("g");
        let dims = std::iter::once(Expr::symbol("s0")).chain(sizes.iter().map(|&d| Expr::int(d))).collect();
        let x = g.add_input("x", ValueKind::Tensor(TensorMeta::contiguous(DType::F32, dims)), InputKind::UserInput).unwrap();
        let q = if transpose {
            let t = vec![arg("self", Arg::Tensor(x)), arg("dim0", Arg::Int(-1)), arg("dim1", Arg::Int(-2))];
            node(&mut g, "t", "aten.transpose.int", t)
        } else {
            x
        };
        let v = match value_dim {
            Some(e) => {
                let s = vec![arg("self", Arg::Tensor(q)), arg("dim", Arg::Int(3)), arg("start", Arg::Int(0)), arg("end", Arg::Int(e))];
                node(&mut g, "v", "aten.slice.Tensor", s)
            }
            None => q,
        };
        let args = vec![arg("query", Arg::Tensor(q)), arg("key", Arg::Tensor(q)), arg("value", Arg::Tensor(v))];
        let out = node(&mut g, "a", "aten.scaled_dot_product_attention.default", args);
        g.outputs.push(Arg::Tensor(out));
        decompose(&g, mode, &Marks::default()).unwrap().graph.op_histogram()
    }

    fn count(ops: &BTreeMap<String, usize>, op: &str) -> usize {
        ops.get(op).copied().unwrap_or(0)
    }

    const FLASH: &str = "aten._scaled_dot_product_flash_attention_for_cpu.default";

    /// A row-major query takes the flash kernel: kept whole under Inductor's table, its layout
    /// (`permute`, `clone`, `permute`) under export's. A `[B, H, L, E]` view of `[B, H, E, L]`
    /// (CPUBone: last-dim stride L) takes the math kernel under both, with no copy at all: its
    /// strided rows merge in `view` as they are.
    #[test]
    fn a_strided_head_dim_runs_the_math_kernel() {
        let row_major = attention_ops([2, 5, 8], false, None, Mode::Core);
        assert_eq!((count(&row_major, "aten.clone.default"), count(&row_major, "aten.permute.default")), (1, 3), "{row_major:?}");
        assert_eq!(count(&attention_ops([2, 5, 8], false, None, Mode::Full), FLASH), 1);
        let strided = attention_ops([2, 8, 5], true, None, Mode::Core);
        // The two permutes: the input's transpose and kᵀ.
        assert_eq!((count(&strided, "aten.clone.default"), count(&strided, "aten.permute.default")), (0, 2), "{strided:?}");
        let full = attention_ops([2, 8, 5], true, None, Mode::Full);
        assert_eq!((count(&full, FLASH), count(&full, "aten.bmm.default")), (0, 2), "{full:?}");
    }

    /// A value head dim other than the query's (`check_head_dim_size_cpp`) runs the math kernel.
    #[test]
    fn unequal_head_dims_run_the_math_kernel() {
        let full = attention_ops([2, 5, 8], false, Some(4), Mode::Full);
        assert_eq!((count(&full, FLASH), count(&full, "aten.bmm.default")), (0, 2), "{full:?}");
        let core = attention_ops([2, 5, 8], false, Some(4), Mode::Core);
        assert_eq!(count(&core, "aten.clone.default"), 0, "{core:?}");
    }
}
