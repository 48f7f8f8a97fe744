//! Scatters through advanced indices (`index_put`, `_unsafe_masked_index_put_accumulate`),
//! boolean masks (`x[mask] = v`, `masked_scatter`) and flat storage positions (`put`,
//! `as_strided_scatter`), on the per-output-element fold of `scatter.rs` (whose docs give the
//! cost: O(output × candidate source positions), serial per element).

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty};
use super::super::LowerError;
use super::index::{bound_index, delinear, linear, numel, read_index, storage_position, within, Advanced, Bound};
use super::scatter::{base_of, fold, identity, Combine, Sources};
use super::view::reshape_read;
use crate::ir::{Arg, Node, ValueId};
use crate::sym;

type R = Result<ExprId, LowerError>;

/// `index_put(self, indices, values, accumulate)` and
/// `_unsafe_masked_index_put_accumulate(self, mask, indices, values)`: the advanced-index result
/// `self[indices]` has shape `before + b + after`; position `j` of `b` lands on `self` where
/// every index tensor's value at `j` equals the output coordinate, so the loop runs over `b`
/// only (kept dims match one to one).
fn put_indexed(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], how: Combine, bound: Bound, mask: Option<ValueId>) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let values = cx.tensor(node, "values")?;
    let sizes = cx.sizes(v)?;
    let adv = Advanced::new(cx, node, v, "indices")?;
    let result_sizes = adv.join(&adv.b, &sizes);
    let extent = numel(&adv.b);
    let b = adv.b.clone();
    let mut hit = |cx: &mut Ctx<'_>, j: ExprId| -> R {
        let bco = delinear(cx, j, &b)?;
        let mut h = cx.kb.bool(true);
        for (d, ix) in adv.per_dim.iter().enumerate() {
            if let Some(ix) = ix {
                let i = read_index(cx, *ix, &bco, &b, &sizes[d], bound)?;
                let eq = cx.kb.cmp(CmpOp::Eq, i, idx[d])?;
                h = cx.kb.and(h, eq)?;
            }
        }
        Ok(h)
    };
    let mut value = |cx: &mut Ctx<'_>, j: ExprId| -> R {
        let bco = delinear(cx, j, &b)?;
        let at = adv.join(&bco, idx);
        let x = cx.read_broadcast(values, &at, &result_sizes)?;
        let x = cx.kb.cast(x, ty);
        let Some(m) = mask else { return Ok(x) };
        let m = cx.read_broadcast(m, &at, &result_sizes)?;
        let m = cx.kb.cast(m, Ty::Bool);
        let zero = identity(cx, RedOp::Sum, ty);
        Ok(cx.kb.select(m, x, zero)?)
    };
    fold(cx, base, ty, how, true, Sources { extent, hit: &mut hit, value: &mut value })
}

pub fn index_put(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let accumulate = cx.bool_or(node, "accumulate", false)?;
    if let Some((at, mask)) = bool_index(cx, node)? {
        return put_masked(cx, node, idx, at, mask, accumulate);
    }
    let how = if accumulate { Combine::Sum } else { Combine::Last };
    put_indexed(cx, node, idx, how, Bound::Wrap, None)
}

/// The position and value of a boolean mask among `index_put`'s indices, if there is one.
fn bool_index(cx: &Ctx<'_>, node: &Node) -> Result<Option<(usize, ValueId)>, LowerError> {
    let list: Vec<Option<ValueId>> = match node.arg("indices") {
        Some(Arg::OptionalTensors(v)) => v.clone(),
        Some(Arg::Tensors(v)) => v.iter().map(|t| Some(*t)).collect(),
        _ => return Ok(None),
    };
    let mut masks = Vec::new();
    for (i, ix) in list.iter().enumerate() {
        if let Some(ix) = ix {
            if matches!(cx.meta(*ix)?.dtype, crate::ir::DType::Bool | crate::ir::DType::U8) {
                masks.push((i, *ix));
            }
        }
    }
    match masks.as_slice() {
        [] => Ok(None),
        [one] if list.iter().flatten().count() == 1 => Ok(Some(*one)),
        _ => Err(cx.err(node, "a boolean mask index mixed with other index tensors does not lower")),
    }
}

/// `x[mask] = values` (or `+=`): the mask covers dims `at..at + mask.ndim` of `self`; an element
/// where it holds takes the value of the mask's k-th true position (row-major), k counted by a
/// loop over the mask elements before it — only when `values` varies along that dim.
fn put_masked(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], at: usize, mask: ValueId, accumulate: bool) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let values = cx.tensor(node, "values")?;
    let (sizes, msz, vsz) = (cx.sizes(v)?, cx.sizes(mask)?, cx.sizes(values)?);
    let r = msz.len();
    if at + r > sizes.len() {
        return Err(cx.err(node, "the boolean mask has more dims than self has after its position"));
    }
    let m = cx.read(mask, &idx[at..at + r])?;
    let m = cx.kb.cast(m, Ty::Bool);
    // `values` broadcasts to `self.shape[..at] + [count] + self.shape[at + r..]`.
    let rank = sizes.len() + 1 - r;
    let lead = rank.checked_sub(vsz.len()).ok_or_else(|| cx.err(node, "values have more dims than self[mask]"))?;
    let zero = cx.kb.i64(0);
    let mut ok = m;
    let mut coords = Vec::with_capacity(vsz.len());
    for (e, s) in vsz.iter().enumerate() {
        let q = lead + e;
        coords.push(if s.as_int() == Some(1) {
            zero
        } else if q < at {
            idx[q]
        } else if q > at {
            idx[q - 1 + r]
        } else {
            let me = linear(cx, &idx[at..at + r], &msz)?;
            let var = cx.kb.fresh_var()?;
            let t = cx.kb.var(var);
            let before = delinear(cx, t, &msz)?;
            let b = cx.read(mask, &before)?;
            let b = cx.kb.cast(b, Ty::Bool);
            let b = cx.kb.cast(b, Ty::I64);
            let k = cx.kb.reduce(RedOp::Sum, var, me, b)?;
            let inside = within(cx, k, s)?;
            ok = cx.kb.and(ok, inside)?;
            k
        });
    }
    let x = cx.masked(ok, |cx| cx.read(values, &coords))?;
    let x = cx.kb.cast(x, ty);
    let x = if accumulate { cx.kb.binary(BinOp::Add, base, x)? } else { x };
    Ok(cx.kb.select(m, x, base)?)
}

/// PyTorch's decomposition clamps the indices into `-n..n` (masked-off positions may hold
/// anything) and adds `values` where `mask` holds.
pub fn unsafe_masked_index_put_accumulate(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let mask = cx.tensor(node, "mask")?;
    put_indexed(cx, node, idx, Combine::Sum, Bound::Clamp, Some(mask))
}

/// `put(self, index, source, accumulate)`: flat positions of `self`.
pub fn put(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let ix = cx.tensor(node, "index")?;
    let source = cx.tensor(node, "source")?;
    let how = if cx.bool_or(node, "accumulate", false)? { Combine::Sum } else { Combine::Last };
    let sizes = cx.sizes(v)?;
    let n = numel(&sizes);
    let me = linear(cx, idx, &sizes)?;
    let ni = numel(&cx.sizes(ix)?);
    let ns = numel(&cx.sizes(source)?);
    let mut hit = |cx: &mut Ctx<'_>, j: ExprId| -> R {
        let i = reshape_read(cx, ix, &[j], std::slice::from_ref(&ni))?;
        let i = bound_index(cx, i, &n, Bound::Wrap)?;
        Ok(cx.kb.cmp(CmpOp::Eq, i, me)?)
    };
    let mut value = |cx: &mut Ctx<'_>, j: ExprId| reshape_read(cx, source, &[j], std::slice::from_ref(&ns));
    let extent = ni.clone();
    fold(cx, base, ty, how, true, Sources { extent, hit: &mut hit, value: &mut value })
}

/// `masked_scatter(self, mask, source)`: the k-th element where `mask` holds (row-major) takes
/// `source.flatten()[k]`; `k` is counted by a loop over the elements before this one.
pub fn masked_scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    // `self` and `mask` broadcast together: the output has their common shape, and the source's
    // elements go to the mask's set positions in the output's row-major order.
    let v = cx.tensor(node, "self")?;
    let ty = super::pointwise::out_ty(cx, node)?;
    let sizes = super::pointwise::out_sizes(cx, node)?;
    let base = cx.read_broadcast(v, idx, &sizes)?;
    let base = cx.kb.cast(base, ty);
    let mask = cx.tensor(node, "mask")?;
    let source = cx.tensor(node, "source")?;
    let me = linear(cx, idx, &sizes)?;
    let m = cx.read_broadcast(mask, idx, &sizes)?;
    let m = cx.kb.cast(m, Ty::Bool);
    let var = cx.kb.fresh_var()?;
    let p = cx.kb.var(var);
    let at = delinear(cx, p, &sizes)?;
    let before = cx.read_broadcast(mask, &at, &sizes)?;
    let before = cx.kb.cast(before, Ty::Bool);
    let before = cx.kb.cast(before, Ty::I64);
    let k = cx.kb.reduce(RedOp::Sum, var, me, before)?;
    let ns = numel(&cx.sizes(source)?);
    let inside = within(cx, k, &ns)?;
    let take = cx.kb.and(m, inside)?;
    let x = cx.masked(take, |cx| reshape_read(cx, source, &[k], std::slice::from_ref(&ns)))?;
    let x = cx.kb.cast(x, ty);
    Ok(cx.kb.select(m, x, base)?)
}

/// `as_strided_scatter(self, src, size, stride, storage_offset)`: `src[k]` lands on storage
/// position `offset + Σ k·stride` of (contiguous) `self`; the last one wins where views overlap.
pub fn as_strided_scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let src = cx.tensor(node, "src")?;
    let stride = cx.ints_or(node, "stride", &[])?;
    let size = cx.ints_or(node, "size", &[])?;
    if stride.len() != size.len() {
        return Err(cx.err(node, "size and stride differ in length"));
    }
    let size: Vec<sym::Expr> = size.into_iter().map(sym::Expr::int).collect();
    let sizes = cx.sizes(v)?;
    let me = linear(cx, idx, &sizes)?;
    let ns = numel(&size);
    let mut hit = |cx: &mut Ctx<'_>, j: ExprId| -> R {
        let k = delinear(cx, j, &size)?;
        let pos = storage_position(cx, node, &k, &stride)?;
        Ok(cx.kb.cmp(CmpOp::Eq, pos, me)?)
    };
    let src_numel = numel(&cx.sizes(src)?);
    let mut value = |cx: &mut Ctx<'_>, j: ExprId| reshape_read(cx, src, &[j], std::slice::from_ref(&src_numel));
    fold(cx, base, ty, Combine::Last, true, Sources { extent: ns, hit: &mut hit, value: &mut value })
}
