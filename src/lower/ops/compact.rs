//! Ops whose output size depends on data (torch.export's unbacked symbols): `nonzero` and
//! `argwhere`, `masked_select`, `bincount`, `item`, `tensor_split` by a tensor of indices, and
//! `nonzero_static` (a fixed size, but the same selection). Each has a size function (run by the
//! plan's sync step, `lower::sizes`) and a lowering of its outputs at the bound sizes.
//!
//! The selections are per-element searches, not a scan: output `j` of a compaction walks the
//! input once, counting selected elements until the `j`-th (`nth_where`), so it costs O(n) per
//! output element and O(n·k) in all, with every output element its own work-item; the count
//! the sync reads is one O(n) fold. Simple and exact; a prefix-sum scan would make each output
//! O(log n).

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty};
use super::super::{LowerError, Size};
use crate::ir::{Node, ValueId};
use crate::sym;

type R = Result<ExprId, LowerError>;

/// A tensor read in row-major order: position `p` is the element at `unravel(p)`.
pub(super) struct Flat {
    pub v: ValueId,
    pub sizes: Vec<ExprId>,
    pub n: ExprId,
}

impl Flat {
    pub fn of(cx: &mut Ctx<'_>, v: ValueId) -> Result<Flat, LowerError> {
        let sizes = cx.ksizes(v)?;
        let mut n = cx.kb.i64(1);
        for s in &sizes {
            n = cx.kb.binary(BinOp::Mul, n, *s)?;
        }
        Ok(Flat { v, sizes, n })
    }

    /// The coordinates of position `p`.
    pub fn coords(&self, cx: &mut Ctx<'_>, p: ExprId) -> Result<Vec<ExprId>, LowerError> {
        unravel(cx, &self.sizes, p)
    }

    /// The element at position `p`.
    pub fn at(&self, cx: &mut Ctx<'_>, p: ExprId) -> R {
        let at = self.coords(cx, p)?;
        cx.read(self.v, &at)
    }
}

/// The row-major coordinates of position `p` in a tensor of `sizes`.
pub(super) fn unravel(cx: &mut Ctx<'_>, sizes: &[ExprId], p: ExprId) -> Result<Vec<ExprId>, LowerError> {
    let mut at = vec![p; sizes.len()];
    let mut rest = p;
    for d in (0..sizes.len()).rev() {
        if d == 0 {
            at[d] = rest;
        } else {
            at[d] = cx.kb.binary(BinOp::Rem, rest, sizes[d])?;
            rest = cx.kb.binary(BinOp::Div, rest, sizes[d])?;
        }
    }
    Ok(at)
}

/// A selection predicate over positions: builds the bool for position `p`.
pub(super) type Pick<'f, 'a> = dyn FnMut(&mut Ctx<'a>, ExprId) -> R + 'f;

/// How many of positions `0..n` `pick` selects (i64).
pub(super) fn count_where<'a>(cx: &mut Ctx<'a>, n: ExprId, pick: &mut Pick<'_, 'a>) -> R {
    let var = cx.kb.fresh_var()?;
    let p = cx.kb.var(var);
    let f = pick(cx, p)?;
    let one = cx.kb.cast(f, Ty::I64);
    Ok(cx.kb.reduce(RedOp::Sum, var, n, one)?)
}

/// The position of the `j`-th (from 0) of positions `0..n` that `pick` selects; 0 when there
/// are fewer (callers size their outputs by the count, so that never reaches memory).
pub(super) fn nth_where<'a>(cx: &mut Ctx<'a>, n: ExprId, j: ExprId, pick: &mut Pick<'_, 'a>) -> R {
    let var = cx.kb.fresh_var()?;
    let p = cx.kb.var(var);
    let f = pick(cx, p)?;
    let f = cx.kb.cast(f, Ty::Bool);
    let (count, found) = (cx.kb.carried(var, 0, Ty::I64), cx.kb.carried(var, 1, Ty::I64));
    let is_j = cx.kb.cmp(CmpOp::Eq, count, j)?;
    let hit = cx.kb.and(f, is_j)?;
    let next_found = cx.kb.select(hit, p, found)?;
    let step = cx.kb.cast(f, Ty::I64);
    let next_count = cx.kb.binary(BinOp::Add, count, step)?;
    let zero = cx.kb.i64(0);
    let out = cx.kb.iterate(var, n, vec![zero, zero], vec![next_count, next_found])?;
    Ok(out[1])
}

/// `x != 0` (NaN counts as nonzero, as in PyTorch).
fn nonzero_at(cx: &mut Ctx<'_>, x: &Flat, p: ExprId) -> R {
    let e = x.at(cx, p)?;
    Ok(cx.kb.cast(e, Ty::Bool))
}

/// Coordinate `d` (a dynamic output coordinate) of `coords`.
fn pick_coord(cx: &mut Ctx<'_>, coords: &[ExprId], d: ExprId) -> R {
    let mut out = cx.kb.i64(0);
    for (k, c) in coords.iter().enumerate() {
        let at = cx.kb.i64(k as i64);
        let hit = cx.kb.cmp(CmpOp::Eq, d, at)?;
        out = cx.kb.select(hit, *c, out)?;
    }
    Ok(out)
}

fn output_size(cx: &Ctx<'_>, node: &Node, out: usize, dim: usize) -> Result<sym::Expr, LowerError> {
    let v = *node.outputs.get(out).ok_or_else(|| cx.err(node, format!("has no output {out}")))?;
    cx.sizes(v)?.get(dim).cloned().ok_or_else(|| cx.err(node, format!("output {out} has no dim {dim}")))
}

/// Size of `nonzero`/`argwhere`: the number of nonzero elements, the rows of the output.
pub fn nonzero_sizes(cx: &mut Ctx<'_>, node: &Node) -> Result<Vec<Size>, LowerError> {
    let x = Flat::of(cx, cx.tensor(node, "self")?)?;
    let n = x.n;
    let value = count_where(cx, n, &mut |cx, p| nonzero_at(cx, &x, p))?;
    Ok(vec![Size { expr: output_size(cx, node, 0, 0)?, value, what: "nonzero elements" }])
}

/// `nonzero(x)` / `argwhere(x)`: row `j` holds the coordinates of the `j`-th nonzero element in
/// row-major order.
pub fn nonzero(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = Flat::of(cx, cx.tensor(node, "self")?)?;
    let [j, d] = idx else { return Err(cx.err(node, "nonzero's output has two dims")) };
    let n = x.n;
    let pos = nth_where(cx, n, *j, &mut |cx, p| nonzero_at(cx, &x, p))?;
    let coords = x.coords(cx, pos)?;
    pick_coord(cx, &coords, *d)
}

/// `nonzero_numpy(x)`: `nonzero`'s columns, one output per dim of `x` (a 0-dim `x` counts as
/// 1-D: its one coordinate is 0).
pub fn nonzero_numpy(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let x = Flat::of(cx, cx.tensor(node, "self")?)?;
    let [j] = idx else { return Err(cx.err(node, "nonzero_numpy's outputs have one dim")) };
    let n = x.n;
    let pos = nth_where(cx, n, *j, &mut |cx, p| nonzero_at(cx, &x, p))?;
    let coords = x.coords(cx, pos)?;
    let d = cx.kb.i64(out as i64);
    pick_coord(cx, &coords, d)
}

/// `nonzero_static(x, size, fill_value=-1)`: `nonzero`'s rows padded with `fill_value` (or cut)
/// to exactly `size` rows: no data-dependent size.
pub fn nonzero_static(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = Flat::of(cx, cx.tensor(node, "self")?)?;
    let [j, d] = idx else { return Err(cx.err(node, "nonzero_static's output has two dims")) };
    let n = x.n;
    let count = count_where(cx, n, &mut |cx, p| nonzero_at(cx, &x, p))?;
    let pos = nth_where(cx, n, *j, &mut |cx, p| nonzero_at(cx, &x, p))?;
    let coords = x.coords(cx, pos)?;
    let c = pick_coord(cx, &coords, *d)?;
    let fill = cx.kb.i64(cx.int_or(node, "fill_value", -1)?);
    let inside = cx.kb.cmp(CmpOp::Lt, *j, count)?;
    Ok(cx.kb.select(inside, c, fill)?)
}

/// The broadcast shape of `masked_select`'s operands.
fn select_shape(cx: &Ctx<'_>, node: &Node) -> Result<(ValueId, ValueId, Vec<sym::Expr>), LowerError> {
    let (x, m) = (cx.tensor(node, "self")?, cx.tensor(node, "mask")?);
    let shape = crate::infer::broadcast_shapes(&cx.sizes(x)?, &cx.sizes(m)?).map_err(|e| cx.err(node, e))?;
    Ok((x, m, shape))
}

/// Whether the mask (broadcast) is set at position `p` of the broadcast shape.
fn mask_at(cx: &mut Ctx<'_>, m: ValueId, shape: &[sym::Expr], ks: &[ExprId], p: ExprId) -> R {
    let at = unravel(cx, ks, p)?;
    let e = cx.read_broadcast(m, &at, shape)?;
    Ok(cx.kb.cast(e, Ty::Bool))
}

/// Size of `masked_select`: the set elements of the (broadcast) mask.
pub fn masked_select_sizes(cx: &mut Ctx<'_>, node: &Node) -> Result<Vec<Size>, LowerError> {
    let (_, m, shape) = select_shape(cx, node)?;
    let ks: Vec<ExprId> = shape.iter().map(|s| cx.kb.size(s)).collect();
    let n = product(cx, &ks)?;
    let value = count_where(cx, n, &mut |cx, p| mask_at(cx, m, &shape, &ks, p))?;
    Ok(vec![Size { expr: output_size(cx, node, 0, 0)?, value, what: "selected elements" }])
}

/// `masked_select(x, mask)`: element `j` is `x` (broadcast) at the `j`-th set position of the
/// mask (broadcast), in row-major order.
pub fn masked_select(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (x, m, shape) = select_shape(cx, node)?;
    let [j] = idx else { return Err(cx.err(node, "masked_select's output has one dim")) };
    let ks: Vec<ExprId> = shape.iter().map(|s| cx.kb.size(s)).collect();
    let n = product(cx, &ks)?;
    let pos = nth_where(cx, n, *j, &mut |cx, p| mask_at(cx, m, &shape, &ks, p))?;
    let at = unravel(cx, &ks, pos)?;
    cx.read_broadcast(x, &at, &shape)
}

fn product(cx: &mut Ctx<'_>, ks: &[ExprId]) -> R {
    let mut n = cx.kb.i64(1);
    for s in ks {
        n = cx.kb.binary(BinOp::Mul, n, *s)?;
    }
    Ok(n)
}

/// `item()` / `_local_scalar_dense`: the one element, as the symbolic int or float the graph
/// names (`u0`, `zuf0`).
pub fn item_sizes(cx: &mut Ctx<'_>, node: &Node) -> Result<Vec<Size>, LowerError> {
    let x = cx.tensor(node, "self")?;
    let out = *node.outputs.first().ok_or_else(|| cx.err(node, "has no output"))?;
    let expr = match &cx.graph.value(out).kind {
        crate::ir::ValueKind::SymInt(e) | crate::ir::ValueKind::SymFloat(e) => e.clone(),
        other => return Err(cx.err(node, format!("its output is {other:?}: only a symbolic int or float is read back"))),
    };
    let rank = cx.sizes(x)?.len();
    let zero = cx.kb.i64(0);
    let e = cx.read(x, &vec![zero; rank])?;
    let value = if cx.kb.ty(e) == Ty::Bool { cx.kb.cast(e, Ty::I64) } else { e };
    Ok(vec![Size { expr, value, what: "the element" }])
}

/// Sizes of `bincount(x, weights, minlength)`: the bins, `max(max(x) + 1, minlength)` (just
/// `minlength` for an empty `x`), and the count of negative elements, which must be 0
/// (PyTorch refuses them).
pub fn bincount_sizes(cx: &mut Ctx<'_>, node: &Node) -> Result<Vec<Size>, LowerError> {
    let x = Flat::of(cx, cx.tensor(node, "self")?)?;
    let minlength = cx.kb.i64(cx.int_or(node, "minlength", 0)?);
    let var = cx.kb.fresh_var()?;
    let p = cx.kb.var(var);
    let e = x.at(cx, p)?;
    let e = cx.kb.cast(e, Ty::I64);
    let n = x.n;
    let top = cx.kb.reduce(RedOp::Max, var, n, e)?;
    let one = cx.kb.i64(1);
    let bins = cx.kb.binary(BinOp::Add, top, one)?;
    let empty = cx.kb.i64(0);
    let none = cx.kb.cmp(CmpOp::Eq, n, empty)?;
    let bins = cx.kb.select(none, empty, bins)?;
    let bins = cx.kb.binary(BinOp::Max, bins, minlength)?;
    let negative = count_where(cx, n, &mut |cx, p| {
        let e = x.at(cx, p)?;
        let e = cx.kb.cast(e, Ty::I64);
        let zero = cx.kb.i64(0);
        Ok(cx.kb.cmp(CmpOp::Lt, e, zero)?)
    })?;
    Ok(vec![
        Size { expr: output_size(cx, node, 0, 0)?, value: bins, what: "bins (max + 1, at least minlength)" },
        Size { expr: sym::Expr::int(0), value: negative, what: "negative elements (bincount takes non-negative integers)" },
    ])
}

/// `bincount`: bin `j` counts the elements equal to `j`, or sums their weights.
pub fn bincount(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = Flat::of(cx, cx.tensor(node, "self")?)?;
    let [j] = idx else { return Err(cx.err(node, "bincount's output has one dim")) };
    let w = cx.opt_tensor(node, "weights").map(|w| Flat::of(cx, w)).transpose()?;
    let ty = super::pointwise::out_ty(cx, node)?;
    let var = cx.kb.fresh_var()?;
    let p = cx.kb.var(var);
    let e = x.at(cx, p)?;
    let e = cx.kb.cast(e, Ty::I64);
    let hit = cx.kb.cmp(CmpOp::Eq, e, *j)?;
    let weight = match &w {
        Some(w) => {
            let v = w.at(cx, p)?;
            cx.kb.cast(v, ty)
        }
        None => {
            let one = cx.kb.i64(1);
            cx.kb.cast(one, ty)
        }
    };
    let zero = cx.kb.i64(0);
    let zero = cx.kb.cast(zero, ty);
    let term = cx.kb.select(hit, weight, zero)?;
    let n = x.n;
    Ok(cx.kb.reduce(RedOp::Sum, var, n, term)?)
}

/// Where piece `k` of `tensor_split(x, indices, dim)` starts and ends along `dim`: PyTorch
/// slices `x[indices[k-1]:indices[k]]` (the ends `0` and the dim's size), each bound wrapped
/// when negative and clamped to `[0, size]`, the end no less than the start.
fn piece_bounds(cx: &mut Ctx<'_>, node: &Node, k: usize) -> Result<(ExprId, ExprId), LowerError> {
    let (x, ix) = (cx.tensor(node, "self")?, cx.tensor(node, "tensor_indices_or_sections")?);
    let isz = cx.sizes(ix)?;
    let [m] = isz.as_slice() else {
        return Err(cx.err(node, "a 0-dim tensor of sections splits into a data-dependent number of outputs: not supported"));
    };
    let m = m.as_int().ok_or_else(|| cx.err(node, "the number of split indices must be static"))? as usize;
    let sizes = cx.sizes(x)?;
    let d = super::layout::split_dim(cx, node, sizes.len())?;
    let n = cx.kb.size(&sizes[d]);
    let zero = cx.kb.i64(0);
    let bound = |cx: &mut Ctx<'_>, i: Option<usize>, default: ExprId| -> R {
        let Some(i) = i.filter(|i| *i < m) else { return Ok(default) };
        let at = cx.kb.i64(i as i64);
        let raw = cx.read(ix, &[at])?;
        let raw = cx.kb.cast(raw, Ty::I64);
        let neg = cx.kb.cmp(CmpOp::Lt, raw, zero)?;
        let wrapped = cx.kb.binary(BinOp::Add, raw, n)?;
        let b = cx.kb.select(neg, wrapped, raw)?;
        let b = cx.kb.binary(BinOp::Max, b, zero)?;
        Ok(cx.kb.binary(BinOp::Min, b, n)?)
    };
    let start = bound(cx, k.checked_sub(1), zero)?;
    let end = bound(cx, Some(k), n)?;
    let end = cx.kb.binary(BinOp::Max, end, start)?;
    Ok((start, end))
}

/// Sizes of `tensor_split(x, indices, dim)`: each piece's length along `dim` and its storage
/// offset (`x`'s offset plus its start times `x`'s stride there), the symbols torch.export gives
/// both.
pub fn tensor_split_sizes(cx: &mut Ctx<'_>, node: &Node) -> Result<Vec<Size>, LowerError> {
    let x = cx.tensor(node, "self")?;
    let meta = cx.meta(x)?.clone();
    let d = super::layout::split_dim(cx, node, meta.sizes.len())?;
    let stride = cx.kb.size(&meta.strides[d]);
    let base = cx.kb.size(&meta.storage_offset);
    let mut out = Vec::new();
    for (k, o) in node.outputs.iter().enumerate() {
        let (start, end) = piece_bounds(cx, node, k)?;
        let len = cx.kb.binary(BinOp::Sub, end, start)?;
        let om = cx.meta(*o)?.clone();
        out.push(Size { expr: om.sizes[d].clone(), value: len, what: "piece length" });
        let skip = cx.kb.binary(BinOp::Mul, start, stride)?;
        let offset = cx.kb.binary(BinOp::Add, base, skip)?;
        out.push(Size { expr: om.storage_offset.clone(), value: offset, what: "piece storage offset" });
    }
    Ok(out)
}

/// Piece `out` of `tensor_split(x, indices, dim)`: `x` from the piece's start along `dim`, read
/// from the indices tensor in the kernel (so pieces of unsorted indices start where PyTorch's
/// do, not after the previous piece).
pub fn tensor_split(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let x = cx.tensor(node, "self")?;
    let rank = cx.sizes(x)?.len();
    let d = super::layout::split_dim(cx, node, rank)?;
    if idx.len() != rank {
        return Err(cx.err(node, format!("piece {out} read with {} coordinates, has {rank} dims", idx.len())));
    }
    let (start, _) = piece_bounds(cx, node, out)?;
    let mut at = idx.to_vec();
    at[d] = cx.kb.binary(BinOp::Add, idx[d], start)?;
    cx.read(x, &at)
}

/// `x[mask]`: an `index.Tensor` whose one index (after `at` leading `None`s) is a boolean mask.
pub(super) struct MaskIndex {
    mask: ValueId,
    at: usize,
}

/// The boolean-mask form of an `index.Tensor` node, if it is one.
pub(super) fn mask_index(cx: &Ctx<'_>, node: &Node) -> Result<Option<MaskIndex>, LowerError> {
    let given: Vec<(usize, ValueId)> = match node.arg("indices") {
        Some(crate::ir::Arg::OptionalTensors(ix)) => ix.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i, v))).collect(),
        Some(crate::ir::Arg::Tensors(ix)) => ix.iter().copied().enumerate().collect(),
        _ => return Ok(None),
    };
    let [(at, mask)] = given[..] else { return Ok(None) };
    let is_mask = matches!(cx.meta(mask)?.dtype, crate::ir::DType::Bool | crate::ir::DType::U8);
    Ok(is_mask.then_some(MaskIndex { mask, at }))
}

/// The mask's sizes as kernel values, and its element count.
fn mask_extent(cx: &mut Ctx<'_>, m: ValueId) -> Result<(Vec<sym::Expr>, Vec<ExprId>, ExprId), LowerError> {
    let shape = cx.sizes(m)?;
    let ks: Vec<ExprId> = shape.iter().map(|s| cx.kb.size(s)).collect();
    let n = product(cx, &ks)?;
    Ok((shape, ks, n))
}

/// Size of `x[mask]` along the masked dims: the mask's set elements.
pub fn index_mask_sizes(cx: &mut Ctx<'_>, node: &Node) -> Result<Vec<Size>, LowerError> {
    let Some(mi) = mask_index(cx, node)? else {
        return Err(cx.err(node, "data-dependent index sizes are computed for one boolean mask only"));
    };
    let (shape, ks, n) = mask_extent(cx, mi.mask)?;
    let value = count_where(cx, n, &mut |cx, p| mask_at(cx, mi.mask, &shape, &ks, p))?;
    Ok(vec![Size { expr: output_size(cx, node, 0, mi.at)?, value, what: "set mask elements" }])
}

/// `x[..., mask, ...]`: output coordinate `j` at the mask's place is the mask's `j`-th set
/// position (row-major), which stands for the mask's dims of `x`; the other coordinates pass.
pub(super) fn index_by_mask(cx: &mut Ctx<'_>, node: &Node, mi: &MaskIndex, idx: &[ExprId]) -> R {
    let x = cx.tensor(node, "self")?;
    let (shape, ks, n) = mask_extent(cx, mi.mask)?;
    let Some(&j) = idx.get(mi.at) else { return Err(cx.err(node, "the output has no coordinate for the mask")) };
    let pos = nth_where(cx, n, j, &mut |cx, p| mask_at(cx, mi.mask, &shape, &ks, p))?;
    let coords = unravel(cx, &ks, pos)?;
    let at: Vec<ExprId> = idx[..mi.at].iter().copied().chain(coords).chain(idx[mi.at + 1..].iter().copied()).collect();
    cx.read(x, &at)
}
