//! `scaled_dot_product_attention` in its math form: `softmax(q kᵀ · scale) v`, with the scale
//! split as √scale on each of q and kᵀ (as PyTorch's decomposition does, for range safety), and
//! batch dims flattened for `bmm`.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{SymIntArg, ValueId};

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
    if rw.bool("enable_gqa", false)? {
        return Err(RuleError::Unsupported("enable_gqa=True".into()));
    }
    let rank = rw.rank(q)?;
    if rank < 3 || rw.rank(k)? != rank || rw.rank(v)? != rank {
        return Err(RuleError::Unsupported("query, key and value must share a rank >= 3".into()));
    }
    let e = rw.meta(q)?.sizes.last().and_then(|d| d.as_int()).ok_or_else(|| {
        RuleError::Unsupported("the head dimension must be static".into())
    })?;
    // `scale=None` (the default) means 1/√E.
    let scale = rw.float("scale", Some(1.0 / (e as f64).sqrt()))?;
    let root = scale.sqrt();
    let lead: Vec<SymIntArg> = (0..rank - 2).map(|d| rw.size(q, d)).collect::<Result<_, _>>()?;
    let batch = rw.product(lead.clone())?;
    let (l, s, ev) = (rw.size(q, rank - 2)?, rw.size(k, rank - 2)?, rw.size(v, rank - 1)?);
    let ed = SymIntArg::Int(e);

    let mut perm: Vec<i64> = (0..rank as i64).collect();
    perm.swap(rank - 2, rank - 1);
    let qs = rw.op("aten.mul.Scalar", vec![("self", A::T(q)), ("other", A::F(root))])?;
    let kt = rw.op("aten.permute.default", vec![("self", A::T(k)), ("dims", A::Is(perm))])?;
    let ks = rw.op("aten.mul.Scalar", vec![("self", A::T(kt)), ("other", A::F(root))])?;
    let q3 = rw.op("aten.view.default", vec![("self", A::T(qs)), ("size", A::Sizes(vec![batch.clone(), l.clone(), ed.clone()]))])?;
    let k3 = rw.op("aten.view.default", vec![("self", A::T(ks)), ("size", A::Sizes(vec![batch.clone(), ed, s.clone()]))])?;
    let scores = rw.op("aten.bmm.default", vec![("self", A::T(q3)), ("mat2", A::T(k3))])?;
    let mut score_shape = lead.clone();
    score_shape.extend([l.clone(), s.clone()]);
    let mut scores = rw.op("aten.view.default", vec![("self", A::T(scores)), ("size", A::Sizes(score_shape))])?;
    if let Some(mask) = rw.opt_t("attn_mask")? {
        if rw.meta(mask)?.dtype == crate::ir::DType::Bool {
            return Err(RuleError::Unsupported("boolean attn_mask".into()));
        }
        scores = rw.op("aten.add.Tensor", vec![("self", A::T(scores)), ("other", A::T(mask))])?;
    }
    let p = rw.op(
        "aten._softmax.default",
        vec![("self", A::T(scores)), ("dim", A::I(-1)), ("half_to_float", A::B(false))],
    )?;
    let p3 = rw.op("aten.view.default", vec![("self", A::T(p)), ("size", A::Sizes(vec![batch.clone(), l.clone(), s.clone()]))])?;
    let vc = rw.op("aten.clone.default", vec![("self", A::T(v))])?;
    let v3 = rw.op("aten.view.default", vec![("self", A::T(vc)), ("size", A::Sizes(vec![batch, s, ev.clone()]))])?;
    let o3 = rw.op("aten.bmm.default", vec![("self", A::T(p3)), ("mat2", A::T(v3))])?;
    let mut out_shape = lead;
    out_shape.extend([l, ev]);
    Ok(vec![rw.op("aten.view.default", vec![("self", A::T(o3)), ("size", A::Sizes(out_shape))])?])
}
