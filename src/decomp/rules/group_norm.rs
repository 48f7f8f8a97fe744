//! Group normalisation, as torch spells it: `group_norm`'s CompositeImplicitAutograd body
//! (`group_norm.cpp`) calls `native_group_norm` with the batch, channel and inner sizes; Inductor's
//! table then decomposes that as torch._refs' `native_group_norm`: statistics over
//! `[N, G, C/G, HxW]` by `var_mean`, and on CPU with a weight, the normalisation folded into one
//! per-(sample, channel) scale and shift.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{DType, SymIntArg, ValueId};

fn float_like(rw: &Rw, x: ValueId, others: &[Option<ValueId>]) -> Result<bool, RuleError> {
    let dtype = rw.meta(x)?.dtype;
    let mut same = matches!(dtype, DType::F32 | DType::F64);
    for t in others.iter().flatten() {
        same &= rw.meta(*t)?.dtype == dtype;
    }
    Ok(same)
}

/// `group_norm(input, num_groups, weight, bias, eps)` → `native_group_norm(X, weight, bias,
/// N, C, HxW, num_groups, eps)[0]`, where `X` is `input.contiguous(...)` as `group_norm.cpp`
/// asks ([`contiguous_for_group_norm`]). Declines mixed or half dtypes (torch converts them).
pub fn group_norm(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let input = rw.t("input")?;
    let (w, b) = (rw.opt_t("weight")?, rw.opt_t("bias")?);
    let rank = rw.rank(input)?;
    if rank < 2 {
        return Err(RuleError::Arg { name: "input".into(), message: format!("group norm of a rank-{rank} tensor") });
    }
    if !float_like(rw, input, &[w, b])? {
        return Err(RuleError::Declined);
    }
    let x = contiguous_for_group_norm(rw, input)?;
    let c = rw.size(x, 1)?;
    let inner = (2..rank).map(|d| rw.size(x, d)).collect::<Result<Vec<_>, _>>()?;
    let hw = rw.product(inner)?;
    let n = rw.size(x, 0)?;
    let args = vec![
        ("input", A::T(x)),
        ("weight", A::OptT(w)),
        ("bias", A::OptT(b)),
        ("N", A::Raw(crate::ir::Arg::SymInt(n))),
        ("C", A::Raw(crate::ir::Arg::SymInt(c))),
        ("HxW", A::Raw(crate::ir::Arg::SymInt(hw))),
        ("group", A::I(rw.int("num_groups", None)?)),
        ("eps", A::F(rw.float("eps", Some(1e-5))?)),
    ];
    let outs = rw.op_n("aten.native_group_norm.default", args)?;
    Ok(outs.into_iter().take(1).collect())
}

/// Whether torch `version`'s `group_norm` makes its input contiguous: 2.11 does, 2.15 does not
/// (the versions between were not traced; a graph of no known version is taken as the newest).
fn copies_before_group_norm(version: Option<&str>) -> bool {
    let minor = version.and_then(|v| v.strip_prefix("2.")).and_then(|v| v.split('.').next()).and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m < 15)
}

/// c10's `is_channels_last_contiguous` of a 4-D tensor: strides `[H·W·C, 1, W·C, C]`, a size-1
/// dim's stride not counted (an `unsqueeze(-1)` of a transposed `[N, C, L]` is channels-last).
fn dense_channels_last(m: &crate::ir::TensorMeta) -> bool {
    use crate::sym::Expr;
    let s = &m.sizes;
    if s.len() != 4 {
        return false;
    }
    let want = [Expr::mul(Expr::mul(s[2].clone(), s[3].clone()), s[1].clone()), Expr::int(1), Expr::mul(s[3].clone(), s[1].clone()), s[1].clone()];
    (0..4).all(|d| s[d].as_int() == Some(1) || super::view::same_size(&m.strides[d], &want[d]))
}

/// `group_norm.cpp`'s `X`. Torch 2.15 passes the input on whatever its layout (make_fx of
/// `group_norm` on a transposed input: `native_group_norm` of it, no copy). 2.11 makes it
/// contiguous first: on CPU `input.contiguous(input.suggest_memory_format())`, so a channels-last
/// input (timm's CPUBone, after a channels-last convolution) is passed on as it is, elsewhere
/// `input.contiguous()`; a copy is a `clone` in that format (what `contiguous` traces to), and a
/// channels-last input that is not dense is declined (no such input was seen).
fn contiguous_for_group_norm(rw: &mut Rw, x: ValueId) -> Result<ValueId, RuleError> {
    let meta = rw.meta(x)?.clone();
    if !copies_before_group_norm(rw.torch_version()) {
        return Ok(x);
    }
    // Dense NHWC is tested on the expressions (the batch size is symbolic); c10's walk over the
    // strides, which also calls sparser layouts channels-last, needs static sizes.
    if meta.device == "cpu" && dense_channels_last(&meta) {
        return Ok(x);
    }
    if meta.device == "cpu" && super::upsample::strides_like_channels_last(&meta) {
        return Err(RuleError::Declined);
    }
    if super::view::is_contiguous(&meta) {
        return Ok(x);
    }
    super::view::contiguous_clone(rw, x)
}

/// `native_group_norm(input, weight, bias, N, C, HxW, group, eps)` → torch._refs': returns
/// `(out, mean, rstd)`, the statistics `[N, G]`. Declines what it spells with conversions (half
/// or mixed dtypes) and a channel count that is not a static multiple of `group`.
pub fn native_group_norm(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("input")?;
    let (w, b) = (rw.opt_t("weight")?, rw.opt_t("bias")?);
    let meta = rw.meta(x)?.clone();
    let rank = meta.sizes.len();
    let groups = rw.int("group", None)?;
    let channels = meta.sizes.get(1).and_then(|c| c.as_int());
    let per = match channels {
        Some(c) if groups > 0 && c % groups == 0 => c / groups,
        _ => return Err(RuleError::Declined),
    };
    // A dense channels-last input on CPU with a weight: torch._refs reshapes it into groups
    // (a copy, as `reshape` makes of it) for the statistics only, and scales the input itself,
    // which keeps its layout. 2.15's `contiguous(suggest_memory_format)` before and after are
    // no-ops on it. Other paths would view the normalised groups back (a copy to channels-last
    // in 2.15, none in 2.11): not written.
    // (Strict NHWC strides: with a size-1 dim among them, torch's result layout differs and
    // copies once more, which is not written.)
    let cpu_channels_last = meta.device == "cpu" && w.is_some() && super::view::channels_last(&meta);
    if rank < 2 || !float_like(rw, x, &[w, b])? {
        return Err(RuleError::Declined);
    }
    // Any other layout that is not contiguous: 2.15 copies it to contiguous first (its
    // `suggest_memory_format` is contiguous for it), 2.11 only where `reshape` must.
    let x = if super::view::is_contiguous(&meta) || cpu_channels_last {
        x
    } else if dense_channels_last(&meta) || super::upsample::strides_like_channels_last(&meta) {
        return Err(RuleError::Declined);
    } else if copies_before_group_norm(rw.torch_version()) {
        x
    } else {
        super::view::contiguous_clone(rw, x)?
    };
    let n = rw.size(x, 0)?;
    let inner = (2..rank).map(|d| rw.size(x, d)).collect::<Result<Vec<_>, _>>()?;
    let hw = rw.product(inner)?;
    let shape = vec![n.clone(), SymIntArg::Int(groups), SymIntArg::Int(per), hw];
    let xr = super::view::view_of(rw, x, shape)?;
    let vm = rw.op_n(
        "aten.var_mean.correction",
        vec![("self", A::T(xr)), ("dim", A::Is(vec![2, 3])), ("correction", A::I(0)), ("keepdim", A::B(true))],
    )?;
    let (var, mean) = (vm[0], vm[1]);
    let var_eps = rw.op("aten.add.Tensor", vec![("self", A::T(var)), ("other", A::F(rw.float("eps", Some(1e-5))?))])?;
    let rstd = rw.op("aten.rsqrt.default", vec![("self", A::T(var_eps))])?;
    let grouped = |rw: &mut Rw, t: ValueId| {
        rw.op("aten.view.default", vec![("self", A::T(t)), ("size", A::Is(vec![1, groups, per, 1]))])
    };
    let unsqueezed = |rw: &mut Rw, mut t: ValueId, dims: &[usize]| -> Result<ValueId, RuleError> {
        for &d in dims {
            t = rw.op("aten.unsqueeze.default", vec![("self", A::T(t)), ("dim", A::I(d as i64))])?;
        }
        Ok(t)
    };
    let out = match w {
        // On CPU with a weight, torch folds rstd, weight, mean and bias into one scale and shift
        // per (sample, channel): `x * w + b`, w and b read as [N, C] through `as_strided`.
        Some(w) if meta.device == "cpu" => {
            let wr = grouped(rw, w)?;
            let scale = rw.op("aten.mul.Tensor", vec![("self", A::T(rstd)), ("other", A::T(wr))])?;
            let neg = rw.op("aten.neg.default", vec![("self", A::T(mean))])?;
            let mut shift = rw.op("aten.mul.Tensor", vec![("self", A::T(neg)), ("other", A::T(scale))])?;
            if let Some(b) = b {
                let br = grouped(rw, b)?;
                shift = rw.op("aten.add.Tensor", vec![("self", A::T(shift)), ("other", A::T(br))])?;
            }
            let c = SymIntArg::Int(groups * per);
            let flat = |rw: &mut Rw, t: ValueId| {
                rw.op(
                    "aten.as_strided.default",
                    vec![("self", A::T(t)), ("size", A::Sizes(vec![n.clone(), c.clone()])), ("stride", A::Is(vec![groups * per, 1]))],
                )
            };
            let (scale, shift) = (flat(rw, scale)?, flat(rw, shift)?);
            let dims: Vec<usize> = (2..rank).collect();
            let (scale, shift) = (unsqueezed(rw, scale, &dims)?, unsqueezed(rw, shift, &dims)?);
            let y = rw.op("aten.mul.Tensor", vec![("self", A::T(x)), ("other", A::T(scale))])?;
            rw.op("aten.add.Tensor", vec![("self", A::T(y)), ("other", A::T(shift))])?
        }
        _ => {
            let centered = rw.op("aten.sub.Tensor", vec![("self", A::T(xr)), ("other", A::T(mean))])?;
            let normed = rw.op("aten.mul.Tensor", vec![("self", A::T(centered)), ("other", A::T(rstd))])?;
            let sizes = (0..rank).map(|d| rw.size(x, d)).collect::<Result<Vec<_>, _>>()?;
            let mut y = rw.op("aten.view.default", vec![("self", A::T(normed)), ("size", A::Sizes(sizes))])?;
            let dims: Vec<usize> = std::iter::once(0).chain(2..rank).collect();
            if let Some(w) = w {
                let wu = unsqueezed(rw, w, &dims)?;
                y = rw.op("aten.mul.Tensor", vec![("self", A::T(y)), ("other", A::T(wu))])?;
            }
            if let Some(b) = b {
                let bu = unsqueezed(rw, b, &dims)?;
                y = rw.op("aten.add.Tensor", vec![("self", A::T(y)), ("other", A::T(bu))])?;
            }
            y
        }
    };
    let mean = rw.op("aten.squeeze.dims", vec![("self", A::T(mean)), ("dim", A::Is(vec![2, 3]))])?;
    let rstd = rw.op("aten.squeeze.dims", vec![("self", A::T(rstd)), ("dim", A::Is(vec![2, 3]))])?;
    Ok(vec![out, mean, rstd])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::TensorMeta;
    use crate::sym::Expr;

    /// make_fx of `group_norm` on a transposed input: 2.11 inserts `clone`, 2.15 does not.
    #[test]
    fn only_older_torches_copy_before_group_norm() {
        assert!(copies_before_group_norm(Some("2.11.0+cu130")));
        assert!(!copies_before_group_norm(Some("2.15.0+cu132")));
        assert!(!copies_before_group_norm(None));
    }

    /// CPUBone's NHWC input with a symbolic batch, and an `unsqueeze(-1)` of a transposed
    /// `[N, C, L]` (its size-1 width's stride does not count).
    #[test]
    fn dense_channels_last_ignores_size_one_dims() {
        let n = Expr::symbol("s77");
        let mut m = TensorMeta::contiguous(DType::F32, vec![n.clone(), Expr::int(96), Expr::int(4), Expr::int(4)]);
        m.strides = [1536, 1, 384, 96].iter().map(|&i| Expr::int(i)).collect();
        assert!(dense_channels_last(&m));
        let l = Expr::symbol("s1");
        let mut m = TensorMeta::contiguous(DType::F32, vec![n, Expr::int(4), l.clone(), Expr::int(1)]);
        m.strides = vec![Expr::mul(Expr::int(4), l), Expr::int(1), Expr::int(4), Expr::int(1)];
        assert!(dense_channels_last(&m));
        let m = TensorMeta::contiguous(DType::F32, vec![Expr::int(2), Expr::int(4), Expr::int(3), Expr::int(3)]);
        assert!(!dense_channels_last(&m));
    }
}
