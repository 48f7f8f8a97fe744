//! Layout ops that are index maps: the stack family (`hstack`, `vstack`, `dstack`,
//! `column_stack`, as `cat` of lifted inputs), the split helpers (`tensor_split`, `hsplit`, …),
//! `unfold`, `narrow`, `movedim`, `rot90`, the diagonal builders (`diag`, `diag_embed`,
//! `diagflat`, `block_diag`), the shuffles (`pixel_shuffle`, `pixel_unshuffle`,
//! `channel_shuffle`), `repeat_interleave` and `as_strided`. Each reads its input at coordinates
//! computed from the output's; the output's shape comes from the graph.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, ExprId};
use super::super::LowerError;
use super::create::cat_at;
use super::pointwise::num;
use super::view::reshape_read;
use crate::ir::{Arg, Node, ValueId};
use crate::sym;

type R = Result<ExprId, LowerError>;

fn dim(cx: &Ctx<'_>, node: &Node, name: &str, default: i64, rank: usize) -> Result<usize, LowerError> {
    let d = cx.int_or(node, name, default)?;
    Ok(wrap_dims(&[d], rank).map_err(|m| cx.err(node, m))?[0])
}

fn tensors(cx: &Ctx<'_>, node: &Node) -> Result<Vec<ValueId>, LowerError> {
    match node.arg("tensors") {
        Some(Arg::Tensors(v)) if !v.is_empty() => Ok(v.clone()),
        _ => Err(cx.err(node, "expected a non-empty tensor list")),
    }
}

/// `atleast_{rank}d`'s shape of `s`, as the stack helpers lift their inputs.
fn lifted(s: &[sym::Expr], rank: usize) -> Vec<sym::Expr> {
    let one = sym::Expr::int(1);
    match (rank, s.len()) {
        (_, k) if k >= rank => s.to_vec(),
        (1, _) | (2, 0) | (3, 0) => vec![one; rank],
        (2, _) => vec![one, s[0].clone()],
        (3, 1) => vec![one.clone(), s[0].clone(), one],
        _ => vec![s[0].clone(), s[1].clone(), one],
    }
}

/// `hstack` / `vstack` / `dstack`: `cat` along `dim` of the inputs lifted to `rank` dims.
fn stack_like(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], rank: usize, dim: usize) -> R {
    let parts = tensors(cx, node)?
        .into_iter()
        .map(|v| Ok((v, lifted(&cx.sizes(v)?, rank))))
        .collect::<Result<Vec<_>, LowerError>>()?;
    // hstack of 1-D tensors concatenates along dim 0.
    let d = if parts.iter().all(|(_, s)| s.len() == 1) { 0 } else { dim };
    cat_at(cx, node, &parts, d, idx)
}

pub fn hstack(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    stack_like(cx, node, idx, 1, 1)
}

pub fn vstack(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    stack_like(cx, node, idx, 2, 0)
}

pub fn dstack(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    stack_like(cx, node, idx, 3, 2)
}

/// `column_stack`: 0-D and 1-D inputs become columns, then `cat` along dim 1.
pub fn column_stack(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let parts = tensors(cx, node)?
        .into_iter()
        .map(|v| {
            let s = cx.sizes(v)?;
            let s = match s.len() {
                0 => vec![sym::Expr::int(1), sym::Expr::int(1)],
                1 => vec![s[0].clone(), sym::Expr::int(1)],
                _ => s,
            };
            Ok((v, s))
        })
        .collect::<Result<Vec<_>, LowerError>>()?;
    cat_at(cx, node, &parts, 1, idx)
}

/// `tensor_split`, `hsplit`, `vsplit`, `dsplit`: output `k` is the slice along the split dim
/// that starts where the earlier outputs end (the pieces tile the dim in order).
/// The dim a split op cuts along: `hsplit` the second (the first of a vector), `vsplit` the
/// first, `dsplit` the third, the others their `dim` argument.
pub(super) fn split_dim(cx: &Ctx<'_>, node: &Node, rank: usize) -> Result<usize, LowerError> {
    Ok(match node.target.split('.').nth(1) {
        Some("hsplit") => usize::from(rank > 1),
        Some("vsplit") => 0,
        Some("dsplit") => 2,
        _ => dim(cx, node, "dim", 0, rank)?,
    })
}

pub fn split(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let rank = cx.sizes(v)?.len();
    let d = split_dim(cx, node, rank)?;
    if d >= rank || idx.len() != rank {
        return Err(cx.err(node, format!("cannot split dim {d} of a tensor of rank {rank}")));
    }
    let mut offset = sym::Expr::int(0);
    for o in &node.outputs[..out] {
        offset = sym::Expr::add(offset, cx.sizes(*o)?[d].clone());
    }
    let off = cx.kb.size(&offset);
    let mut at = idx.to_vec();
    at[d] = cx.kb.binary(BinOp::Add, idx[d], off)?;
    cx.read(v, &at)
}

/// `unfold(dimension, size, step)`: window `w` along the dim, element `j` of the new last dim,
/// reads `w·step + j`.
pub fn unfold(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let rank = cx.sizes(v)?.len();
    let last = *idx.last().ok_or_else(|| cx.err(node, "unfold has at least one output dim"))?;
    if rank == 0 {
        return cx.read(v, &[]);
    }
    let d = dim(cx, node, "dimension", 0, rank)?;
    let step = cx.kb.i64(cx.int_or(node, "step", 1)?.max(1));
    let mut at = idx[..rank].to_vec();
    let w = cx.kb.binary(BinOp::Mul, idx[d], step)?;
    at[d] = cx.kb.binary(BinOp::Add, w, last)?;
    cx.read(v, &at)
}

/// `narrow(dim, start, length)` (and `narrow_copy`): a slice from `start` (negative counts
/// from the end).
pub fn narrow(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    let d = dim(cx, node, "dim", 0, sizes.len())?;
    let start = cx.int_or(node, "start", 0)?;
    let start = if start < 0 { sym::Expr::add(sizes[d].clone(), sym::Expr::int(start)) } else { sym::Expr::int(start) };
    let start = cx.kb.size(&start);
    let mut at = idx.to_vec();
    at[d] = cx.kb.binary(BinOp::Add, idx[d], start)?;
    cx.read(v, &at)
}

/// `movedim(source, destination)`: the named dims move, the others keep their order.
pub fn movedim(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let nd = idx.len();
    let wrap = |cx: &Ctx<'_>, name: &str| -> Result<Vec<usize>, LowerError> {
        cx.ints_or(node, name, &[])?.iter().map(|&d| wrap_dims(&[d], nd).map(|w| w[0]).map_err(|m| cx.err(node, m))).collect()
    };
    let (src, dst) = (wrap(cx, "source")?, wrap(cx, "destination")?);
    if src.len() != dst.len() {
        return Err(cx.err(node, "source and destination name different numbers of dims"));
    }
    // A 0-dim tensor takes dims 0 and -1 (`wrap_dims`) and moves nothing.
    if nd == 0 {
        return cx.read(v, idx);
    }
    // perm[out dim] = input dim.
    let mut perm = vec![usize::MAX; nd];
    for (&s, &d) in src.iter().zip(&dst) {
        perm[d] = s;
    }
    let mut rest = (0..nd).filter(|d| !src.contains(d));
    for p in perm.iter_mut().filter(|p| **p == usize::MAX) {
        *p = rest.next().ok_or_else(|| cx.err(node, "movedim names a dim twice"))?;
    }
    let mut at = idx.to_vec();
    for (o, &i) in perm.iter().enumerate() {
        at[i] = idx[o];
    }
    cx.read(v, &at)
}

/// `n - 1 - i`.
fn mirror(cx: &mut Ctx<'_>, n: &sym::Expr, i: ExprId) -> R {
    let n = cx.kb.size(n);
    let one = cx.kb.i64(1);
    let last = cx.kb.binary(BinOp::Sub, n, one)?;
    Ok(cx.kb.binary(BinOp::Sub, last, i)?)
}

/// `rot90(k, dims)`: `k` quarter turns from `dims[0]` towards `dims[1]`.
pub fn rot90(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    let dims = cx.ints_or(node, "dims", &[0, 1])?;
    if dims.len() != 2 {
        return Err(cx.err(node, "rot90 takes two dims"));
    }
    let d0 = wrap_dims(&[dims[0]], sizes.len()).map_err(|m| cx.err(node, m))?[0];
    let d1 = wrap_dims(&[dims[1]], sizes.len()).map_err(|m| cx.err(node, m))?[0];
    let mut at = idx.to_vec();
    match cx.int_or(node, "k", 1)?.rem_euclid(4) {
        0 => {}
        // transpose(flip(x, d1), d0, d1)
        1 => {
            at.swap(d0, d1);
            at[d1] = mirror(cx, &sizes[d1], at[d1])?;
        }
        2 => {
            at[d0] = mirror(cx, &sizes[d0], idx[d0])?;
            at[d1] = mirror(cx, &sizes[d1], idx[d1])?;
        }
        // flip(transpose(x, d0, d1), d1)
        _ => {
            at[d1] = mirror(cx, &sizes[d0], idx[d1])?;
            at.swap(d0, d1);
        }
    }
    cx.read(v, &at)
}

/// An output whose dims `d1 < d2` hold a diagonal at `offset`: the element of `v` (read with
/// the `batch` coordinates, the other output dims in order, then the position along the
/// diagonal, through `read`) where `col - row == offset`, else zero.
fn embed(cx: &mut Ctx<'_>, idx: &[ExprId], d1: usize, d2: usize, offset: i64, read: &mut dyn FnMut(&mut Ctx<'_>, Vec<ExprId>) -> R) -> R {
    let (r, c) = (idx[d1], idx[d2]);
    let diff = cx.kb.binary(BinOp::Sub, c, r)?;
    let off = cx.kb.i64(offset);
    let on = cx.kb.cmp(CmpOp::Eq, diff, off)?;
    let pos = if offset >= 0 { r } else { c };
    // Off the diagonal, read position 0 (in range whenever the diagonal is not empty).
    let zero = cx.kb.i64(0);
    let pos = cx.kb.select(on, pos, zero)?;
    let mut at: Vec<ExprId> = idx.iter().enumerate().filter(|(d, _)| *d != d1 && *d != d2).map(|(_, i)| *i).collect();
    at.push(pos);
    let x = read(cx, at)?;
    let z = num(&mut cx.kb, 0.0, x);
    Ok(cx.kb.select(on, x, z)?)
}

/// Whether `v` has no elements (statically), so an embedding of it is all zeros.
fn empty(cx: &Ctx<'_>, v: ValueId) -> Result<bool, LowerError> {
    Ok(cx.sizes(v)?.iter().any(|s| s.as_int() == Some(0)))
}

fn zero_of(cx: &mut Ctx<'_>, node: &Node) -> R {
    let ty = super::pointwise::out_ty(cx, node)?;
    let z = cx.kb.i64(0);
    Ok(cx.kb.cast(z, ty))
}

/// `diag(diagonal)`: a 1-D input becomes a square matrix, a 2-D input gives its diagonal.
pub fn diag(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let offset = cx.int_or(node, "diagonal", 0)?;
    match cx.sizes(v)?.len() {
        1 if empty(cx, v)? => zero_of(cx, node),
        1 => embed(cx, idx, 0, 1, offset, &mut |cx, at| cx.read(v, &at)),
        2 => {
            // The diagonal of a matrix: row i, column i + offset (or the transposed way).
            let i = idx[0];
            let o = cx.kb.i64(offset.abs());
            let shifted = cx.kb.binary(BinOp::Add, i, o)?;
            let at = if offset >= 0 { [i, shifted] } else { [shifted, i] };
            cx.read(v, &at)
        }
        n => Err(cx.err(node, format!("diag of a tensor of rank {n}"))),
    }
}

/// `diag_embed(offset, dim1, dim2)`: the last dim of the input on a diagonal of two new dims.
pub fn diag_embed(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let rank = idx.len();
    let d1 = dim(cx, node, "dim1", -2, rank)?;
    let d2 = dim(cx, node, "dim2", -1, rank)?;
    if d1 == d2 {
        return Err(cx.err(node, "dim1 and dim2 must differ"));
    }
    if empty(cx, v)? {
        return zero_of(cx, node);
    }
    let offset = cx.int_or(node, "offset", 0)?;
    embed(cx, idx, d1.min(d2), d1.max(d2), offset, &mut |cx, at| cx.read(v, &at))
}

/// `diagflat(offset)`: the flattened input on a diagonal of a matrix.
pub fn diagflat(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    if empty(cx, v)? {
        return zero_of(cx, node);
    }
    let n = cx.sizes(v)?.into_iter().fold(sym::Expr::int(1), sym::Expr::mul);
    let offset = cx.int_or(node, "offset", 0)?;
    embed(cx, idx, 0, 1, offset, &mut |cx, at| reshape_read(cx, v, &at, std::slice::from_ref(&n)))
}

/// The last three dims of `idx` (channel, row, column) and the coordinates before them.
fn chw(cx: &Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<(Vec<ExprId>, [ExprId; 3]), LowerError> {
    let n = idx.len();
    if n < 3 {
        return Err(cx.err(node, "needs at least 3 dims (channels, height, width)"));
    }
    Ok((idx[..n - 3].to_vec(), [idx[n - 3], idx[n - 2], idx[n - 1]]))
}

/// `pixel_shuffle(r)`: `[.., C·r², H, W] -> [.., C, H·r, W·r]`.
pub fn pixel_shuffle(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let r = cx.kb.i64(cx.int_or(node, "upscale_factor", 1)?.max(1));
    let (mut at, [c, h, w]) = chw(cx, node, idx)?;
    let kb = &mut cx.kb;
    let (hq, hr) = (kb.binary(BinOp::Div, h, r)?, kb.binary(BinOp::Rem, h, r)?);
    let (wq, wr) = (kb.binary(BinOp::Div, w, r)?, kb.binary(BinOp::Rem, w, r)?);
    let rr = kb.binary(BinOp::Mul, r, r)?;
    let ic = kb.binary(BinOp::Mul, c, rr)?;
    let sub = kb.binary(BinOp::Mul, hr, r)?;
    let sub = kb.binary(BinOp::Add, sub, wr)?;
    at.extend([kb.binary(BinOp::Add, ic, sub)?, hq, wq]);
    cx.read(v, &at)
}

/// `pixel_unshuffle(r)`: `[.., C, H·r, W·r] -> [.., C·r², H, W]`.
pub fn pixel_unshuffle(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let r = cx.kb.i64(cx.int_or(node, "downscale_factor", 1)?.max(1));
    let (mut at, [c, h, w]) = chw(cx, node, idx)?;
    let kb = &mut cx.kb;
    let rr = kb.binary(BinOp::Mul, r, r)?;
    let ic = kb.binary(BinOp::Div, c, rr)?;
    let dy = kb.binary(BinOp::Div, c, r)?;
    let dy = kb.binary(BinOp::Rem, dy, r)?;
    let dx = kb.binary(BinOp::Rem, c, r)?;
    let ih = kb.binary(BinOp::Mul, h, r)?;
    let iw = kb.binary(BinOp::Mul, w, r)?;
    at.extend([ic, kb.binary(BinOp::Add, ih, dy)?, kb.binary(BinOp::Add, iw, dx)?]);
    cx.read(v, &at)
}

/// `channel_shuffle(groups)`: channels (dim 1) regrouped as `[g, c/g] -> [c/g, g]`.
pub fn channel_shuffle(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    if idx.len() < 2 {
        return Err(cx.err(node, "channel_shuffle needs a channel dim"));
    }
    let g = cx.kb.i64(cx.int_or(node, "groups", 1)?.max(1));
    let c = cx.kb.size(&sizes[1]);
    let kb = &mut cx.kb;
    let per = kb.binary(BinOp::Div, c, g)?;
    let oc = idx[1];
    let a = kb.binary(BinOp::Rem, oc, g)?;
    let a = kb.binary(BinOp::Mul, a, per)?;
    let b = kb.binary(BinOp::Div, oc, g)?;
    let mut at = idx.to_vec();
    at[1] = kb.binary(BinOp::Add, a, b)?;
    cx.read(v, &at)
}

/// `repeat_interleave(self, repeats: int, dim)`: element `i` along the dim reads `i / repeats`;
/// without a dim, the flattened input.
pub fn repeat_interleave(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let r = cx.kb.i64(cx.int_or(node, "repeats", 1)?.max(1));
    let sizes = cx.sizes(v)?;
    match node.arg("dim") {
        None | Some(Arg::None) => {
            let n = sizes.into_iter().fold(sym::Expr::int(1), sym::Expr::mul);
            let i = cx.kb.binary(BinOp::Div, idx[0], r)?;
            reshape_read(cx, v, &[i], &[n])
        }
        _ => {
            let d = dim(cx, node, "dim", 0, sizes.len())?;
            let mut at = idx.to_vec();
            if d < at.len() {
                at[d] = cx.kb.binary(BinOp::Div, idx[d], r)?;
            }
            cx.read(v, &at)
        }
    }
}

/// `real` of a real tensor: itself.
pub fn real(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    cx.read(v, idx)
}

/// `isreal` of a real tensor: all true.
pub fn isreal(cx: &mut Ctx<'_>, _: &Node, _: usize, _: &[ExprId]) -> R {
    Ok(cx.kb.bool(true))
}

/// `block_diag(tensors)`: the inputs (0-D as 1×1, 1-D as a row) along the diagonal of a
/// matrix, zeros elsewhere; empty inputs still take their rows or columns.
pub fn block_diag(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let ty = super::pointwise::out_ty(cx, node)?;
    let (mut r0, mut c0) = (sym::Expr::int(0), sym::Expr::int(0));
    let zero = cx.kb.i64(0);
    let mut picked = cx.kb.cast(zero, ty);
    for v in tensors(cx, node)? {
        let s = cx.sizes(v)?;
        let (rows, cols) = match s.len() {
            0 => (sym::Expr::int(1), sym::Expr::int(1)),
            1 => (sym::Expr::int(1), s[0].clone()),
            2 => (s[0].clone(), s[1].clone()),
            n => return Err(cx.err(node, format!("block_diag of a tensor of rank {n}"))),
        };
        let (r1, c1) = (sym::Expr::add(r0.clone(), rows.clone()), sym::Expr::add(c0.clone(), cols.clone()));
        if rows.as_int() != Some(0) && cols.as_int() != Some(0) {
            let (ro, co, re, ce) = (cx.kb.size(&r0), cx.kb.size(&c0), cx.kb.size(&r1), cx.kb.size(&c1));
            let kb = &mut cx.kb;
            let conds = [kb.cmp(CmpOp::Ge, idx[0], ro)?, kb.cmp(CmpOp::Lt, idx[0], re)?, kb.cmp(CmpOp::Ge, idx[1], co)?, kb.cmp(CmpOp::Lt, idx[1], ce)?];
            let inside = conds.into_iter().try_fold(kb.bool(true), |a, c| kb.and(a, c))?;
            let (lr, lc) = (kb.binary(BinOp::Sub, idx[0], ro)?, kb.binary(BinOp::Sub, idx[1], co)?);
            let (lr, lc) = (kb.select(inside, lr, zero)?, kb.select(inside, lc, zero)?);
            let at: Vec<ExprId> = match s.len() {
                0 => vec![],
                1 => vec![lc],
                _ => vec![lr, lc],
            };
            let x = cx.read(v, &at)?;
            let x = cx.kb.cast(x, ty);
            picked = cx.kb.select(inside, x, picked)?;
        }
        (r0, c0) = (r1, c1);
    }
    Ok(picked)
}

/// `_chunk_cat(tensors, dim, num_chunks)`: each input `[*L, n, *T]` split along `dim` into
/// `num_chunks` chunks of `ceil(n / num_chunks)` rows (the last zero-padded), each chunk
/// flattened; output `[*L, num_chunks, Σ chunk sizes]` concatenates the inputs' chunks.
pub fn chunk_cat(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let ty = super::pointwise::out_ty(cx, node)?;
    let chunks = cx.int_or(node, "num_chunks", 1)?.max(1);
    let r = idx.len();
    if r < 2 {
        return Err(cx.err(node, "_chunk_cat gives at least 2 dims"));
    }
    let (lead, j, q) = (&idx[..r - 2], idx[r - 2], idx[r - 1]);
    let zero = cx.kb.i64(0);
    let mut picked = cx.kb.cast(zero, ty);
    let mut offset = 0i64;
    for v in tensors(cx, node)? {
        let s = cx.sizes(v)?;
        let d = dim(cx, node, "dim", 0, s.len())?;
        let ints: Option<Vec<i64>> = s[d..].iter().map(sym::Expr::as_int).collect();
        let ints = ints.ok_or_else(|| cx.err(node, "_chunk_cat needs static sizes from `dim` on"))?;
        let (n, tail) = (ints[0], &ints[1..]);
        let row = tail.iter().product::<i64>();
        let c = (n + chunks - 1) / chunks;
        let width = c * row;
        if width > 0 {
            let kb = &mut cx.kb;
            let (lo, hi) = (kb.i64(offset), kb.i64(offset + width));
            let (a, b) = (kb.cmp(CmpOp::Ge, q, lo)?, kb.cmp(CmpOp::Lt, q, hi)?);
            let mine = kb.and(a, b)?;
            let local = kb.binary(BinOp::Sub, q, lo)?;
            let rowk = kb.i64(row);
            let rr = kb.binary(BinOp::Div, local, rowk)?;
            let mut rest = kb.binary(BinOp::Rem, local, rowk)?;
            let ck = kb.i64(c);
            let first = kb.binary(BinOp::Mul, j, ck)?;
            let at_n = kb.binary(BinOp::Add, first, rr)?;
            let nk = kb.i64(n);
            let real = kb.cmp(CmpOp::Lt, at_n, nk)?;
            let inside = kb.and(mine, real)?;
            let mut tail_at = Vec::with_capacity(tail.len());
            for &t in tail.iter().rev() {
                let tk = kb.i64(t);
                tail_at.push(kb.binary(BinOp::Rem, rest, tk)?);
                rest = kb.binary(BinOp::Div, rest, tk)?;
            }
            let mut at = lead.to_vec();
            at.truncate(d);
            at.push(at_n);
            at.extend(tail_at.into_iter().rev());
            let at = at.into_iter().map(|i| kb.select(inside, i, zero)).collect::<Result<Vec<_>, _>>()?;
            let x = cx.read(v, &at)?;
            let x = cx.kb.cast(x, ty);
            let pad = cx.kb.cast(zero, ty);
            let x = cx.kb.select(real, x, pad)?;
            picked = cx.kb.select(mine, x, picked)?;
        }
        offset += width;
    }
    Ok(picked)
}

#[cfg(test)]
mod tests {
    use super::lifted;
    use crate::sym::Expr;

    fn ints(v: &[i64]) -> Vec<Expr> {
        v.iter().map(|&i| Expr::int(i)).collect()
    }

    #[test]
    fn stack_helpers_lift_inputs_as_atleast_nd() {
        // atleast_1d / atleast_2d / atleast_3d, as hstack / vstack / dstack lift their inputs.
        assert_eq!(lifted(&ints(&[]), 1), ints(&[1]));
        assert_eq!(lifted(&ints(&[4]), 2), ints(&[1, 4]));
        assert_eq!(lifted(&ints(&[]), 3), ints(&[1, 1, 1]));
        assert_eq!(lifted(&ints(&[4]), 3), ints(&[1, 4, 1]));
        assert_eq!(lifted(&ints(&[4, 5]), 3), ints(&[4, 5, 1]));
        assert_eq!(lifted(&ints(&[2, 4, 5]), 2), ints(&[2, 4, 5]));
    }
}
