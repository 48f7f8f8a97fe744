//! Gathers that read their input at data-dependent coordinates: advanced indexing
//! (`index.Tensor`, `_unsafe_masked_index`), `take`, `take_along_dim` and `as_strided`; and the
//! index arithmetic the scatters of `scatter.rs` share with them.
//!
//! PyTorch raises on an out-of-range index; a kernel cannot, so every index it reads is brought
//! into range ([`Bound`]) or the load it drives is masked: whatever the data, no kernel reads
//! outside its buffers.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, ExprId, Ty};
use super::super::LowerError;
use super::pointwise::{arg, out_sizes, out_ty};
use super::view::reshape_read;
use crate::ir::{Arg, DType, Node, ValueId};
use crate::sym;

type R = Result<ExprId, LowerError>;

/// How an index read from a tensor is brought into `0..n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bound {
    /// Negative indices count from the end, then clamp into `0..n` (a gather's read stays in
    /// bounds whatever the data).
    Clamp,
    /// Clamp into `0..n` without wrapping (`_unsafe_masked_index`'s decomposition).
    ClampOnly,
    /// Negative indices count from the end; nothing else (a scatter only compares it, so an
    /// out-of-range index matches no element).
    Wrap,
}

/// `i` (any compute type) as an index into a dim of size `n`, per `bound`.
pub(super) fn bound_index(cx: &mut Ctx<'_>, i: ExprId, n: &sym::Expr, bound: Bound) -> R {
    let i = cx.kb.cast(i, Ty::I64);
    let kb = &mut cx.kb;
    let n = kb.size(n);
    let zero = kb.i64(0);
    let i = if bound == Bound::ClampOnly {
        i
    } else {
        let neg = kb.cmp(CmpOp::Lt, i, zero)?;
        let wrapped = kb.binary(BinOp::Add, i, n)?;
        kb.select(neg, wrapped, i)?
    };
    if bound == Bound::Wrap {
        return Ok(i);
    }
    let one = kb.i64(1);
    let last = kb.binary(BinOp::Sub, n, one)?;
    let i = kb.binary(BinOp::Min, i, last)?;
    Ok(kb.binary(BinOp::Max, i, zero)?)
}

/// The index in tensor `ix`, broadcast to a shape `within` and read at `at`, bounded into a dim
/// of size `n`.
pub(super) fn read_index(cx: &mut Ctx<'_>, ix: ValueId, at: &[ExprId], within: &[sym::Expr], n: &sym::Expr, bound: Bound) -> R {
    let i = cx.read_broadcast(ix, at, within)?;
    bound_index(cx, i, n, bound)
}

/// Row-major position of coordinates `idx` in a tensor of `sizes`.
pub(super) fn linear(cx: &mut Ctx<'_>, idx: &[ExprId], sizes: &[sym::Expr]) -> R {
    let strides = crate::ir::TensorMeta::contiguous_strides(sizes);
    let mut lin = cx.kb.i64(0);
    for (i, s) in idx.iter().zip(&strides) {
        let s = cx.kb.size(s);
        let t = cx.kb.binary(BinOp::Mul, *i, s)?;
        lin = cx.kb.binary(BinOp::Add, lin, t)?;
    }
    Ok(lin)
}

/// The coordinates of row-major position `lin` in a tensor of `sizes` (`lin` in range).
pub(super) fn delinear(cx: &mut Ctx<'_>, lin: ExprId, sizes: &[sym::Expr]) -> Result<Vec<ExprId>, LowerError> {
    let strides = crate::ir::TensorMeta::contiguous_strides(sizes);
    let mut out = Vec::with_capacity(sizes.len());
    for (d, (size, stride)) in sizes.iter().zip(&strides).enumerate() {
        let st = cx.kb.size(stride);
        let q = cx.kb.binary(BinOp::Div, lin, st)?;
        out.push(if d == 0 {
            q
        } else {
            let sz = cx.kb.size(size);
            cx.kb.binary(BinOp::Rem, q, sz)?
        });
    }
    Ok(out)
}

pub(super) fn numel(sizes: &[sym::Expr]) -> sym::Expr {
    sizes.iter().fold(sym::Expr::int(1), |a, s| sym::Expr::mul(a, s.clone()))
}

/// Numpy broadcasting of symbolic shapes (a literal 1 gives way to the other size).
pub(super) fn broadcast_sizes(shapes: &[Vec<sym::Expr>]) -> Vec<sym::Expr> {
    let rank = shapes.iter().map(Vec::len).max().unwrap_or(0);
    (0..rank)
        .map(|k| {
            let mut s = sym::Expr::int(1);
            for sh in shapes {
                if let Some(e) = (k + sh.len()).checked_sub(rank).map(|i| &sh[i]) {
                    if e.as_int() != Some(1) {
                        s = e.clone();
                    }
                }
            }
            s
        })
        .collect()
}

/// The `dim` argument of `node`, wrapped for `rank` (a 0-dim tensor takes 0 or -1: `None`).
pub(super) fn dim_of(cx: &Ctx<'_>, node: &Node, name: &str, default: i64, rank: usize) -> Result<Option<usize>, LowerError> {
    let d = wrap_dims(&[cx.int_or(node, name, default)?], rank).map_err(|m| cx.err(node, m))?[0];
    Ok((d < rank).then_some(d))
}

/// Advanced indexing `self[indices]`: which dims the index tensors pick, the shape `b` they
/// broadcast to, and where `b` sits in the result (in place of the indexed dims when those are
/// consecutive, else first), as PyTorch lays it out.
pub(super) struct Advanced {
    /// Per dim of `self`: its index tensor, or `None` for a dim kept whole.
    pub per_dim: Vec<Option<ValueId>>,
    pub b: Vec<sym::Expr>,
    /// How many kept dims come before `b` in the result.
    pub before: usize,
}

impl Advanced {
    pub fn new(cx: &Ctx<'_>, node: &Node, v: ValueId, name: &str) -> Result<Advanced, LowerError> {
        let indices: Vec<Option<ValueId>> = match node.arg(name) {
            Some(Arg::OptionalTensors(v)) => v.clone(),
            Some(Arg::Tensors(v)) => v.iter().map(|t| Some(*t)).collect(),
            other => return Err(cx.err(node, format!("argument `{name}`: expected a list of index tensors, got {other:?}"))),
        };
        let rank = cx.sizes(v)?.len();
        if indices.len() > rank {
            return Err(cx.err(node, format!("{} indices for a tensor of rank {rank}", indices.len())));
        }
        let mut shapes = Vec::new();
        for ix in indices.iter().flatten() {
            let m = cx.meta(*ix)?;
            if matches!(m.dtype, DType::Bool | DType::U8) {
                return Err(cx.err(node, "boolean mask indices select a data-dependent number of elements; kernels take integer indices"));
            }
            shapes.push(m.sizes.clone());
        }
        let mut per_dim = indices;
        per_dim.resize(rank, None);
        let present: Vec<usize> = (0..rank).filter(|&d| per_dim[d].is_some()).collect();
        let consecutive = present.windows(2).all(|w| w[1] == w[0] + 1);
        let first = present.first().copied().unwrap_or(0);
        let before = if consecutive { (0..first).filter(|d| per_dim[*d].is_none()).count() } else { 0 };
        Ok(Advanced { per_dim, b: broadcast_sizes(&shapes), before })
    }

    /// Splits result coordinates into those of `b` and, per dim of `self`, the coordinate of a
    /// kept dim (`None` where an index tensor picks it).
    pub fn split<T: Clone>(&self, o: &[T]) -> (Vec<T>, Vec<Option<T>>) {
        let nb = self.b.len();
        let bco = o[self.before..self.before + nb].to_vec();
        let mut r = 0;
        let kept = self
            .per_dim
            .iter()
            .map(|ix| {
                ix.is_none().then(|| {
                    let pos = if r < self.before { r } else { r + nb };
                    r += 1;
                    o[pos].clone()
                })
            })
            .collect();
        (bco, kept)
    }

    /// Result coordinates (or sizes) from those of `b` and those of `self` (kept dims read).
    pub fn join<T: Clone>(&self, bco: &[T], self_co: &[T]) -> Vec<T> {
        let rest: Vec<T> = self.per_dim.iter().zip(self_co).filter(|(ix, _)| ix.is_none()).map(|(_, c)| c.clone()).collect();
        let mut o = rest[..self.before].to_vec();
        o.extend_from_slice(bco);
        o.extend_from_slice(&rest[self.before..]);
        o
    }

    /// The coordinates of `self` that result element `o` reads (indices bounded by `bound`).
    pub fn source(&self, cx: &mut Ctx<'_>, v: ValueId, o: &[ExprId], bound: Bound) -> Result<Vec<ExprId>, LowerError> {
        let sizes = cx.sizes(v)?;
        let (bco, kept) = self.split(o);
        let mut at = Vec::with_capacity(sizes.len());
        for (d, (ix, k)) in self.per_dim.iter().zip(kept).enumerate() {
            at.push(match (ix, k) {
                (Some(ix), _) => read_index(cx, *ix, &bco, &self.b, &sizes[d], bound)?,
                (None, Some(k)) => k,
                (None, None) => return Err(LowerError::Internal("advanced index: a kept dim without a coordinate".into())),
            });
        }
        Ok(at)
    }
}

/// A load mask that is false when a tensor of `sizes` is empty (its buffer has no element to
/// read, even at a clamped index).
fn nonempty(cx: &mut Ctx<'_>, sizes: &[sym::Expr]) -> R {
    let n = cx.kb.size(&numel(sizes));
    let zero = cx.kb.i64(0);
    Ok(cx.kb.cmp(CmpOp::Gt, n, zero)?)
}

/// `index.Tensor(self, indices)`: advanced indexing with integer index tensors (`None` keeps a
/// dim), broadcast together.
pub fn index(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    if let Some(mi) = super::compact::mask_index(cx, node)? {
        return super::compact::index_by_mask(cx, node, &mi, idx);
    }
    let v = cx.tensor(node, "self")?;
    let adv = Advanced::new(cx, node, v, "indices")?;
    let at = adv.source(cx, v, idx, Bound::Clamp)?;
    let sizes = cx.sizes(v)?;
    let ok = nonempty(cx, &sizes)?;
    cx.masked(ok, |cx| cx.read(v, &at))
}

/// `_unsafe_masked_index(self, mask, indices, fill)`: `mask ? self[indices] : fill`, indices
/// clamped into range (no wrapping) as PyTorch's decomposition does.
pub fn unsafe_masked_index(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let mask = cx.tensor(node, "mask")?;
    let out = out_sizes(cx, node)?;
    let ty = out_ty(cx, node)?;
    let adv = Advanced::new(cx, node, v, "indices")?;
    let at = adv.source(cx, v, idx, Bound::ClampOnly)?;
    let m = cx.read_broadcast(mask, idx, &out)?;
    let m = cx.kb.cast(m, Ty::Bool);
    let sizes = cx.sizes(v)?;
    let ok = nonempty(cx, &sizes)?;
    let ok = cx.kb.and(ok, m)?;
    let x = cx.masked(ok, |cx| cx.read(v, &at))?;
    let x = cx.kb.cast(x, ty);
    let fill = arg(cx, node, "fill", idx)?;
    Ok(cx.kb.select(m, x, fill)?)
}

/// Element `i` of `v` flattened (row-major), `i` clamped into range.
fn flat_read(cx: &mut Ctx<'_>, v: ValueId, i: ExprId) -> R {
    let sizes = cx.sizes(v)?;
    let n = numel(&sizes);
    let i = bound_index(cx, i, &n, Bound::Clamp)?;
    let ok = nonempty(cx, &sizes)?;
    cx.masked(ok, |cx| reshape_read(cx, v, &[i], &[n]))
}

/// `take(self, index)`: `self.flatten()[index]`.
pub fn take(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let ix = cx.tensor(node, "index")?;
    let i = cx.read(ix, idx)?;
    flat_read(cx, v, i)
}

/// `take_along_dim(self, indices, dim)`: `gather` along `dim` after broadcasting `self` and
/// `indices` in every other dim; without `dim`, `take` on the flattened input.
pub fn take_along_dim(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let ix = cx.tensor(node, "indices")?;
    if matches!(node.arg("dim"), None | Some(Arg::None)) {
        // `self.view(-1).gather(0, indices.view(-1))`: a 1-D output over the flattened indices.
        let [p] = idx else { return Err(cx.err(node, "take_along_dim without dim has a 1-D output")) };
        let ks = cx.ksizes(ix)?;
        let at = super::compact::unravel(cx, &ks, *p)?;
        let i = cx.read(ix, &at)?;
        return flat_read(cx, v, i);
    }
    let out = out_sizes(cx, node)?;
    let sizes = cx.sizes(v)?;
    if sizes.len() != out.len() || cx.sizes(ix)?.len() != out.len() {
        return Err(cx.err(node, "take_along_dim with a dim needs self and indices of the output's rank"));
    }
    let Some(d) = dim_of(cx, node, "dim", 0, out.len())? else {
        return cx.read(v, &[]);
    };
    let i = read_index(cx, ix, idx, &out, &sizes[d], Bound::Clamp)?;
    let zero = cx.kb.i64(0);
    let at: Vec<ExprId> = (0..sizes.len())
        .map(|e| {
            if e == d {
                i
            } else if sizes[e].as_int() == Some(1) && out[e].as_int() != Some(1) {
                zero
            } else {
                idx[e]
            }
        })
        .collect();
    let ok = nonempty(cx, &sizes)?;
    cx.masked(ok, |cx| cx.read(v, &at))
}

/// `storage_offset + Σ idx·stride`.
pub(super) fn storage_position(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], stride: &[i64]) -> R {
    let mut pos = cx.kb.i64(cx.int_or(node, "storage_offset", 0)?);
    for (i, s) in idx.iter().zip(stride) {
        let s = cx.kb.i64(*s);
        let t = cx.kb.binary(BinOp::Mul, *i, s)?;
        pos = cx.kb.binary(BinOp::Add, pos, t)?;
    }
    Ok(pos)
}

/// `0 <= i < n`.
pub(super) fn within(cx: &mut Ctx<'_>, i: ExprId, n: &sym::Expr) -> R {
    let n = cx.kb.size(n);
    let zero = cx.kb.i64(0);
    let lo = cx.kb.cmp(CmpOp::Ge, i, zero)?;
    let hi = cx.kb.cmp(CmpOp::Lt, i, n)?;
    Ok(cx.kb.and(lo, hi)?)
}
