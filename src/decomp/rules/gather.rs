//! Ops that pick or place elements, as torch/_refs and Inductor's table spell them:
//! `pad` → `constant_pad_nd`, `masked_fill` → `where(mask, scalar_tensor(v), x)`, `roll` → per
//! dim `index_select(x, d, fmod(arange(n) + (n - shift) % n, n))`, and Inductor's `index_select`
//! → `index` with one index tensor.

use super::{dim, Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, SymIntArg, ValueId};

/// `pad(x, pad, mode="constant", value)` → `constant_pad_nd(x, pad, value or 0)`.
pub fn pad(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let mode = rw.string("mode", "constant")?;
    if mode != "constant" {
        return Err(RuleError::Declined);
    }
    // The amounts may be SymInts (LongT5 pads its blocks by `-len % block`): forwarded as given.
    let pads = rw.passthrough("pad")?.ok_or_else(|| RuleError::Arg { name: "pad".into(), message: "missing".into() })?;
    if !matches!(pads, Arg::Ints(_) | Arg::SymInts(_)) {
        return Err(RuleError::Arg { name: "pad".into(), message: format!("expected an int list, found {pads:?}") });
    }
    let value = rw.scalar("value").unwrap_or(A::F(0.0));
    Ok(vec![rw.op("aten.constant_pad_nd.default", vec![("self", A::T(x)), ("pad", A::Raw(pads)), ("value", value)])?])
}

/// `torch._refs.masked_fill`'s last step, `where(...).contiguous()` ("aten.masked_fill always
/// returns a new contiguous tensor"): a `clone` where `where`'s output, laid out after its
/// operands, is not row-major (Doge's mask of an expanded `[B, H, 1, L]`).
fn contiguous_where(rw: &mut Rw, out: ValueId, mask: ValueId, value: ValueId, x: ValueId) -> Result<ValueId, RuleError> {
    let (m, v, t) = (rw.meta(mask)?.clone(), rw.meta(value)?.clone(), rw.meta(x)?.clone());
    super::layout::contiguous_elementwise(rw, out, &[&m, &v, &t])
}

/// `masked_fill.Scalar(x, mask, v)` → `where(mask, scalar_tensor(v, dtype=x.dtype), x)`, then
/// `.contiguous()`.
pub fn masked_fill(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, mask) = (rw.t("self")?, rw.t("mask")?);
    let meta = rw.meta(x)?.clone();
    let v = rw.scalar("value").ok_or_else(|| RuleError::Arg { name: "value".into(), message: "expected a number".into() })?;
    let s = rw.op(
        "aten.scalar_tensor.default",
        vec![("s", v), ("dtype", A::Raw(Arg::ScalarType(meta.dtype))), ("device", A::Raw(Arg::Device(meta.device)))],
    )?;
    let out = rw.op("aten.where.self", vec![("condition", A::T(mask)), ("self", A::T(s)), ("other", A::T(x))])?;
    Ok(vec![contiguous_where(rw, out, mask, s, x)?])
}

/// `masked_fill(x, mask, value: Tensor)` as `torch._refs.masked_fill` (both tables): `where(mask,
/// value, x).contiguous()` for a 0-dim `value` of `x`'s dtype (another dtype is cast first: not written
/// here). The traced table has no sample of it (its `value` samples were not 0-dim).
pub fn masked_fill_tensor(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, mask, value) = (rw.t("self")?, rw.t("mask")?, rw.t("value")?);
    let (m, v) = (rw.meta(x)?, rw.meta(value)?);
    if !v.sizes.is_empty() {
        return Err(RuleError::Arg { name: "value".into(), message: format!("expected a 0-dim tensor, got {} dims", v.sizes.len()) });
    }
    if v.dtype != m.dtype {
        return Err(RuleError::Declined);
    }
    let out = rw.op("aten.where.self", vec![("condition", A::T(mask)), ("self", A::T(value)), ("other", A::T(x))])?;
    Ok(vec![contiguous_where(rw, out, mask, value, x)?])
}

/// `roll(x, shifts, dims)`: one `index_select` per rolled dim (static sizes), as torch/_refs.
pub fn roll(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let mut x = rw.t("self")?;
    let shifts = rw.ints("shifts")?.unwrap_or_default();
    let dims = rw.ints("dims")?.unwrap_or_default();
    let rank = rw.rank(x)?;
    if dims.is_empty() || shifts.len() != dims.len() {
        // Rolling the flattened tensor (no dims) is kept whole.
        return Err(RuleError::Declined);
    }
    let sizes: Vec<i64> = dims
        .iter()
        .map(|d| {
            let d = dim(*d, rank, "dims")?;
            rw.meta(x)?.sizes[d].as_int().ok_or_else(|| RuleError::Unsupported("roll along a dynamic dim".into()))
        })
        .collect::<Result<_, _>>()?;
    for ((&shift, &d), &n) in shifts.iter().zip(&dims).zip(&sizes) {
        if n == 0 {
            return Err(RuleError::Declined);
        }
        let start = (n - shift).rem_euclid(n);
        let idx = rw.op("aten.arange.default", vec![("end", A::I(n))])?;
        let idx = rw.op("aten.add.Tensor", vec![("self", A::T(idx)), ("other", A::I(start))])?;
        let idx = rw.op("aten.fmod.Scalar", vec![("self", A::T(idx)), ("other", A::I(n))])?;
        x = if rw.table() == Some(super::Table::Inductor) {
            // Inductor's trace of a roll indexes without recording the `:`s ahead of the rolled
            // dim (Swin's window shift over a dynamic batch, torch 2.11 and 2.15), unlike a
            // direct `index_select` (XLNet's), whose rule records them.
            let mut indices = vec![None; dim(d, rank, "dims")?];
            indices.push(Some(idx));
            rw.op("aten.index.Tensor", vec![("self", A::T(x)), ("indices", A::Raw(Arg::OptionalTensors(indices)))])?
        } else {
            rw.op("aten.index_select.default", vec![("self", A::T(x)), ("dim", A::I(d)), ("index", A::T(idx))])?
        };
    }
    Ok(vec![x])
}

/// Inductor's `index_select(x, d, i)` → `index(x, [None] * d + [i])`, after the slices of `:`s.
pub fn index_select(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, i) = (rw.t("self")?, rw.t("index")?);
    let d = dim(rw.int("dim", None)?, rw.rank(x)?.max(1), "dim")?;
    let mut indices = vec![None; d];
    indices.push(Some(i));
    // torch/_refs' `x[(slice(None),) * dim + (index,)]`: a traced slice per dynamic leading dim.
    let x = super::build::leading_full_slices(rw, x, d)?;
    Ok(vec![rw.op("aten.index.Tensor", vec![("self", A::T(x)), ("indices", A::Raw(Arg::OptionalTensors(indices)))])?])
}

/// `select_scatter(input, src, dim, index)` as export's table writes it
/// (`torch._decomp.decompositions.select_scatter`): `where(arange(n).view(..-1..) == index,
/// src.unsqueeze(dim).expand(input.shape), input)`. Functionalization writes a `select` view back
/// with it (Cosmos3's and Qwen3-VL's rotary sections); the traced table holds `dim = 1` only.
/// Inductor lowers `select_scatter` itself.
pub fn select_scatter(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let src = rw.t("src")?;
    let rank = rw.rank(x)?;
    let d = dim(rw.int("dim", None)?, rank, "dim")?;
    let n = rw.size(x, d)?;
    let mut index = rw.int("index", None)?;
    if index < 0 {
        match n {
            SymIntArg::Int(size) => index += size,
            SymIntArg::Value(_) => return Err(RuleError::Declined),
        }
    }
    let device = rw.meta(x)?.device.clone();
    let range = rw.op("aten.arange.default", vec![("end", super::build::size_arg(n)), ("device", A::Raw(Arg::Device(device)))])?;
    let mut mask_shape = vec![SymIntArg::Int(1); rank];
    mask_shape[d] = SymIntArg::Int(-1);
    let range = super::build::view(rw, range, mask_shape)?;
    let mask = rw.op("aten.eq.Scalar", vec![("self", A::T(range)), ("other", A::I(index))])?;
    let u = super::build::unsqueeze(rw, src, d as i64)?;
    let shape = super::build::sizes(rw, x)?;
    let wide = super::build::expand(rw, u, shape)?;
    Ok(vec![rw.op("aten.where.self", vec![("condition", A::T(mask)), ("self", A::T(wide)), ("other", A::T(x))])?])
}
