//! Lowerings of the index-remapping ops (`tril`/`triu`, `pad`, `flip`, `roll`, `repeat`, `.mT`,
//! `broadcast_tensors`, `unbind`, `meshgrid`, `index_select`, `gather`, `embedding`, `stack`,
//! `diagonal`, `copy`, `fftshift`): each reads its input at coordinates computed from the output's.
//! Apart from `math` because they compute coordinates rather than values; re-exported from `math`.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, ExprId, Ty};
use super::super::LowerError;
use super::math::R;
use super::pointwise::{arg, num, out_sizes, out_ty};
use crate::ir::{Arg, Node, ValueId};

fn input(cx: &Ctx<'_>, node: &Node) -> Result<ValueId, LowerError> {
    cx.tensor(node, "self")
}

/// `tril`/`triu`: the element where `col − row` is on the kept side of `diagonal`, else 0.
fn triangle(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], upper: bool) -> R {
    let v = input(cx, node)?;
    let k = cx.int_or(node, "diagonal", 0)?;
    let n = idx.len();
    if n < 2 {
        return Err(cx.err(node, "needs at least 2 dims"));
    }
    let x = cx.read(v, idx)?;
    let kb = &mut cx.kb;
    let d = kb.binary(BinOp::Sub, idx[n - 1], idx[n - 2])?;
    let k = kb.i64(k);
    let keep = if upper { kb.cmp(CmpOp::Ge, d, k)? } else { kb.cmp(CmpOp::Le, d, k)? };
    let zero = num(kb, 0.0, x);
    Ok(kb.select(keep, x, zero)?)
}

pub fn tril(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    triangle(cx, node, idx, false)
}

pub fn triu(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    triangle(cx, node, idx, true)
}

/// `pad(self, pad, mode, value)` / `constant_pad_nd(self, pad, value)`: the output coordinate
/// minus the leading pad, mapped back into range by the mode (constant: out of range is `value`).
pub fn pad(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    // Core ATen spells two of the modes as ops of their own, with `padding` for `pad`.
    // Amounts may be SymInts (a length padded to a multiple of a block, as hybrid-attention
    // models do): they become size arguments like the input's sizes.
    let (pads, mode) = if node.target.starts_with("aten.reflection_pad") {
        (cx.sym_ints(node, "padding")?, "reflect".to_string())
    } else if node.target.starts_with("aten.replication_pad") {
        (cx.sym_ints(node, "padding")?, "replicate".to_string())
    } else {
        (cx.sym_ints(node, "pad")?, cx.str_or(node, "mode", "constant")?.to_string())
    };
    let value = cx.float_or(node, "value", 0.0)? as f32;
    let sizes = cx.sizes(v)?;
    let nd = sizes.len();
    if pads.len() % 2 != 0 || pads.len() / 2 > nd {
        return Err(cx.err(node, format!("pad of {} amounts does not fit rank {nd}", pads.len())));
    }
    // Circular padding decides per amount whether it crops, so its amounts must be numbers.
    if mode == "circular" && pads.iter().any(|p| p.as_int().is_none()) {
        return Err(cx.err(node, "circular padding by symbolic amounts is not supported"));
    }
    let mut in_idx = idx.to_vec();
    let mut inside: Option<ExprId> = None;
    let (zero, one) = (cx.kb.i64(0), cx.kb.i64(1));
    for (k, pair) in pads.chunks(2).enumerate() {
        let d = nd - 1 - k;
        let n = cx.kb.size(&sizes[d]);
        let lo = cx.kb.size(&pair[0]);
        let i = cx.kb.binary(BinOp::Sub, idx[d], lo)?;
        let last = cx.kb.binary(BinOp::Sub, n, one)?;
        let kb = &mut cx.kb;
        in_idx[d] = match mode.as_str() {
            "constant" => {
                let ge = kb.cmp(CmpOp::Ge, i, zero)?;
                let lt = kb.cmp(CmpOp::Lt, i, n)?;
                let ok = kb.and(ge, lt)?;
                inside = Some(match inside {
                    None => ok,
                    Some(p) => kb.and(p, ok)?,
                });
                let c = kb.binary(BinOp::Max, i, zero)?;
                kb.binary(BinOp::Min, c, last)?
            }
            "reflect" => {
                // |i|, then mirror past the end: 2(n−1) − i.
                let neg = kb.cmp(CmpOp::Lt, i, zero)?;
                let ni = kb.binary(BinOp::Sub, zero, i)?;
                let a = kb.select(neg, ni, i)?;
                let two = kb.i64(2);
                let m = kb.binary(BinOp::Mul, two, last)?;
                let mirrored = kb.binary(BinOp::Sub, m, a)?;
                let past = kb.cmp(CmpOp::Gt, a, last)?;
                kb.select(past, mirrored, a)?
            }
            "replicate" => {
                let c = kb.binary(BinOp::Max, i, zero)?;
                kb.binary(BinOp::Min, c, last)?
            }
            "circular" => {
                // Wrapped around the part left after cropping: it starts at `-lo` (when cropped)
                // and is `n - crop` long; ((j mod m) + m) mod m, as s_rem keeps the dividend's sign.
                // Checked numbers above the loop.
                let (lo, hi) = (pair[0].as_int().unwrap_or(0), pair[1].as_int().unwrap_or(0));
                let start = (-lo).max(0);
                let crop = kb.i64(start + (-hi).max(0));
                let m = kb.binary(BinOp::Sub, n, crop)?;
                let at = kb.i64(lo.max(0));
                let j = kb.binary(BinOp::Sub, idx[d], at)?;
                let r = kb.binary(BinOp::Rem, j, m)?;
                let r = kb.binary(BinOp::Add, r, m)?;
                let r = kb.binary(BinOp::Rem, r, m)?;
                let start = kb.i64(start);
                kb.binary(BinOp::Add, r, start)?
            }
            m => return Err(cx.err(node, format!("padding mode `{m}` is not supported"))),
        };
    }
    let x = cx.read(v, &in_idx)?;
    match inside {
        None => Ok(x),
        Some(ok) => {
            let c = num(&mut cx.kb, value, x);
            Ok(cx.kb.select(ok, x, c)?)
        }
    }
}

/// `flip(dims)`: `n − 1 − i` along each flipped dim.
fn flip_dims(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], dims: &[usize]) -> R {
    let v = input(cx, node)?;
    let sizes = cx.sizes(v)?;
    let one = cx.kb.i64(1);
    let mut in_idx = idx.to_vec();
    // Rank 0 accepts dim 0 and flips nothing.
    for &d in dims.iter().filter(|&&d| d < sizes.len() && d < idx.len()) {
        let n = cx.kb.size(&sizes[d]);
        let last = cx.kb.binary(BinOp::Sub, n, one)?;
        in_idx[d] = cx.kb.binary(BinOp::Sub, last, idx[d])?;
    }
    cx.read(v, &in_idx)
}

pub fn flip(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let dims = cx.ints_or(node, "dims", &[])?;
    if dims.is_empty() {
        return cx.read(input(cx, node)?, idx);
    }
    let dims = wrap_dims(&dims, idx.len()).map_err(|m| cx.err(node, m))?;
    flip_dims(cx, node, idx, &dims)
}

pub fn fliplr(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    flip_dims(cx, node, idx, &[1])
}

pub fn flipud(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    flip_dims(cx, node, idx, &[0])
}

/// `roll(shifts, dims)` along given dims: `(i − shift) mod n`.
pub fn roll(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let shifts = cx.ints_or(node, "shifts", &[])?;
    let dims = cx.ints_or(node, "dims", &[])?;
    let sizes = cx.sizes(v)?;
    if dims.is_empty() {
        return roll_flat(cx, node, v, &sizes, &shifts, idx);
    }
    if dims.len() != shifts.len() {
        return Err(cx.err(node, format!("{} shifts for {} dims", shifts.len(), dims.len())));
    }
    let mut in_idx = idx.to_vec();
    for (&d, &s) in dims.iter().zip(&shifts) {
        let d = wrap_dims(&[d], idx.len()).map_err(|m| cx.err(node, m))?[0];
        if d >= sizes.len() {
            continue;
        }
        let n = cx.kb.size(&sizes[d]);
        let s = cx.kb.i64(s);
        let i = cx.kb.binary(BinOp::Sub, in_idx[d], s)?;
        let r = cx.kb.binary(BinOp::Rem, i, n)?;
        let r = cx.kb.binary(BinOp::Add, r, n)?;
        in_idx[d] = cx.kb.binary(BinOp::Rem, r, n)?;
    }
    cx.read(v, &in_idx)
}

/// `roll(shifts=[s])` without dims: the flattened tensor rolled by `s`, then viewed back, so
/// output position `p` (row-major) reads input position `(p - s) mod numel`.
fn roll_flat(cx: &mut Ctx<'_>, node: &Node, v: ValueId, sizes: &[crate::sym::Expr], shifts: &[i64], idx: &[ExprId]) -> R {
    let &[shift] = shifts else {
        return Err(cx.err(node, format!("roll without dims takes one shift, got {}", shifts.len())));
    };
    if idx.is_empty() {
        return cx.read(v, idx);
    }
    let ks: Vec<ExprId> = sizes.iter().map(|s| cx.kb.size(s)).collect();
    let mut p = cx.kb.i64(0);
    let mut n = cx.kb.i64(1);
    for (&i, &k) in idx.iter().zip(&ks) {
        p = cx.kb.binary(BinOp::Mul, p, k)?;
        p = cx.kb.binary(BinOp::Add, p, i)?;
        n = cx.kb.binary(BinOp::Mul, n, k)?;
    }
    let s = cx.kb.i64(shift);
    let q = cx.kb.binary(BinOp::Sub, p, s)?;
    let q = cx.kb.binary(BinOp::Rem, q, n)?;
    let q = cx.kb.binary(BinOp::Add, q, n)?;
    let mut rest = cx.kb.binary(BinOp::Rem, q, n)?;
    let mut at = vec![rest; ks.len()];
    for d in (1..ks.len()).rev() {
        at[d] = cx.kb.binary(BinOp::Rem, rest, ks[d])?;
        rest = cx.kb.binary(BinOp::Div, rest, ks[d])?;
    }
    at[0] = rest;
    cx.read(v, &at)
}

/// `repeat(repeats)` / `tile(dims)`: `i mod n` per input dim (leading new dims dropped).
pub fn repeat(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let sizes = cx.sizes(v)?;
    let lead = idx.len().checked_sub(sizes.len()).ok_or_else(|| cx.err(node, "repeat to fewer dims"))?;
    let mut in_idx = Vec::with_capacity(sizes.len());
    for (d, s) in sizes.iter().enumerate() {
        let n = cx.kb.size(s);
        in_idx.push(cx.kb.binary(BinOp::Rem, idx[lead + d], n)?);
    }
    cx.read(v, &in_idx)
}

/// `.mT` (and `.mH`, `adjoint` on real tensors): the last two dims swapped.
pub fn mt(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let n = idx.len();
    if n < 2 {
        return Err(cx.err(node, "needs at least 2 dims"));
    }
    let mut in_idx = idx.to_vec();
    in_idx.swap(n - 1, n - 2);
    cx.read(v, &in_idx)
}

/// `.T`: every dim reversed.
pub fn numpy_t(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let in_idx: Vec<ExprId> = idx.iter().rev().copied().collect();
    cx.read(v, &in_idx)
}

/// `broadcast_tensors(tensors)`: output `k` is input `k` read broadcast.
pub fn broadcast_tensors(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let inputs = match node.arg("tensors") {
        Some(Arg::Tensors(v)) => v.clone(),
        _ => return Err(cx.err(node, "expected a tensor list")),
    };
    let v = *inputs.get(out).ok_or_else(|| cx.err(node, "more outputs than inputs"))?;
    let sizes = cx.sizes(node.outputs[out])?;
    cx.read_broadcast(v, idx, &sizes)
}

/// `unbind(dim)`: output `k` is the slice at `k` along `dim`.
pub fn unbind(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let rank = cx.sizes(v)?.len();
    let d = wrap_dims(&[cx.int_or(node, "dim", 0)?], rank).map_err(|m| cx.err(node, m))?[0];
    let mut in_idx = idx.to_vec();
    let k = cx.kb.i64(out as i64);
    in_idx.insert(d, k);
    cx.read(v, &in_idx)
}

/// `meshgrid(tensors, indexing)`: output `k` reads 1-D input `k` at its own grid coordinate.
pub fn meshgrid(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let inputs = match node.arg("tensors") {
        Some(Arg::Tensors(v)) => v.clone(),
        _ => return Err(cx.err(node, "expected a tensor list")),
    };
    let xy = cx.str_or(node, "indexing", "ij")? == "xy";
    let v = *inputs.get(out).ok_or_else(|| cx.err(node, "more outputs than inputs"))?;
    let d = if xy && inputs.len() >= 2 && out < 2 { 1 - out } else { out };
    let i = *idx.get(d).ok_or_else(|| cx.err(node, "grid rank"))?;
    let rank = cx.sizes(v)?.len();
    let coords = if rank == 0 { vec![] } else { vec![i] };
    cx.read(v, &coords)
}
/// An index read from tensor `ix` at `at`, wrapped if negative and clamped into `0..n` (the
/// interpreter rejects out-of-range indices; a kernel must not read out of bounds).
fn index_at(cx: &mut Ctx<'_>, ix: ValueId, at: &[ExprId], n: &crate::sym::Expr) -> R {
    let i = cx.read(ix, at)?;
    let i = cx.kb.cast(i, Ty::I64);
    let kb = &mut cx.kb;
    let n = kb.size(n);
    let zero = kb.i64(0);
    let one = kb.i64(1);
    let neg = kb.cmp(CmpOp::Lt, i, zero)?;
    let wrapped = kb.binary(BinOp::Add, i, n)?;
    let i = kb.select(neg, wrapped, i)?;
    let last = kb.binary(BinOp::Sub, n, one)?;
    let i = kb.binary(BinOp::Min, i, last)?;
    Ok(kb.binary(BinOp::Max, i, zero)?)
}

fn dim_arg(cx: &Ctx<'_>, node: &Node, rank: usize) -> Result<usize, LowerError> {
    wrap_dims(&[cx.int_or(node, "dim", 0)?], rank).map(|d| d[0]).map_err(|m| cx.err(node, m))
}

pub fn index_select(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let ix = cx.tensor(node, "index")?;
    let sizes = cx.sizes(v)?;
    if sizes.is_empty() {
        return cx.read(v, idx);
    }
    let d = dim_arg(cx, node, sizes.len())?;
    let at = if cx.sizes(ix)?.is_empty() { vec![] } else { vec![idx[d]] };
    let mut in_idx = idx.to_vec();
    in_idx[d] = index_at(cx, ix, &at, &sizes[d])?;
    cx.read(v, &in_idx)
}

pub fn gather(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = input(cx, node)?;
    let ix = cx.tensor(node, "index")?;
    let sizes = cx.sizes(v)?;
    if sizes.is_empty() {
        // A 0-dim input gathers its one element (every index must be 0).
        return cx.read(v, &[]);
    }
    if idx.len() != sizes.len() {
        // PyTorch accepts an index of another rank only when it is empty: no element is read.
        if !out_sizes(cx, node)?.iter().any(|s| s.as_int() == Some(0)) {
            return Err(cx.err(node, format!("index of rank {} for a rank-{} input", idx.len(), sizes.len())));
        }
        let zero = cx.kb.i64(0);
        return cx.read(v, &vec![zero; sizes.len()]);
    }
    let d = dim_arg(cx, node, sizes.len())?;
    let mut in_idx = idx.to_vec();
    in_idx[d] = index_at(cx, ix, idx, &sizes[d])?;
    cx.read(v, &in_idx)
}

/// `embedding(weight, indices)`: row `indices[..]` of `weight`.
pub fn embedding(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let w = cx.tensor(node, "weight")?;
    let ix = cx.tensor(node, "indices")?;
    let rows = cx.sizes(w)?.first().cloned().ok_or_else(|| cx.err(node, "weight must be 2-D"))?;
    let n = idx.len();
    let row = index_at(cx, ix, &idx[..n - 1], &rows)?;
    cx.read(w, &[row, idx[n - 1]])
}

/// `stack(tensors, dim)`: the input chosen by the coordinate along `dim`.
pub fn stack(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let inputs = match node.arg("tensors") {
        Some(Arg::Tensors(v)) if !v.is_empty() => v.clone(),
        _ => return Err(cx.err(node, "stack needs a non-empty tensor list")),
    };
    let d = dim_arg(cx, node, idx.len())?;
    let ty = out_ty(cx, node)?;
    let mut at = idx.to_vec();
    let k = at.remove(d);
    let mut picked: Option<ExprId> = None;
    for (i, v) in inputs.iter().enumerate().rev() {
        let x = cx.read(*v, &at)?;
        let x = cx.kb.cast(x, ty);
        picked = Some(match picked {
            None => x,
            Some(rest) => {
                let here = cx.kb.i64(i as i64);
                let is = cx.kb.cmp(CmpOp::Eq, k, here)?;
                cx.kb.select(is, x, rest)?
            }
        });
    }
    picked.ok_or_else(|| cx.err(node, "stack of nothing"))
}

/// `diagonal(offset, dim1, dim2)` (and `linalg_diagonal`): the diagonal becomes the last dim.
pub fn diagonal(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self").or_else(|_| cx.tensor(node, "A"))?;
    let rank = cx.sizes(v)?.len();
    let linalg = node.target.starts_with("aten.linalg_diagonal");
    let (d1, d2) = (cx.int_or(node, "dim1", if linalg { -2 } else { 0 })?, cx.int_or(node, "dim2", if linalg { -1 } else { 1 })?);
    let dims = [wrap_dims(&[d1], rank).map_err(|m| cx.err(node, m))?[0], wrap_dims(&[d2], rank).map_err(|m| cx.err(node, m))?[0]];
    let off = cx.int_or(node, "offset", 0)?;
    let i = *idx.last().ok_or_else(|| cx.err(node, "diagonal of nothing"))?;
    let kb = &mut cx.kb;
    let o = kb.i64(off.abs());
    let shifted = kb.binary(BinOp::Add, i, o)?;
    let (r, c) = if off >= 0 { (i, shifted) } else { (shifted, i) };
    let zero = kb.i64(0);
    let mut in_idx = vec![zero; rank];
    let mut rest = idx[..idx.len() - 1].iter();
    for (d, slot) in in_idx.iter_mut().enumerate() {
        *slot = if d == dims[0] {
            r
        } else if d == dims[1] {
            c
        } else {
            *rest.next().ok_or_else(|| LowerError::Internal("diagonal rank".into()))?
        };
    }
    cx.read(v, &in_idx)
}

/// `copy(self, src)`: `src` broadcast to `self` (the store converts to `self`'s dtype).
pub fn copy(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    arg(cx, node, "src", idx)
}
/// `fft_fftshift`/`fft_ifftshift(self, dim)`: a roll by half of each dim (up or down).
fn shift(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], inverse: bool) -> R {
    let v = input(cx, node)?;
    let sizes = cx.sizes(v)?;
    let dims = match node.arg("dim") {
        None | Some(Arg::None) => (0..sizes.len()).collect(),
        _ => wrap_dims(&cx.ints_or(node, "dim", &[])?, sizes.len()).map_err(|m| cx.err(node, m))?,
    };
    let mut in_idx = idx.to_vec();
    for d in dims.into_iter().filter(|&d| d < sizes.len()) {
        let n = cx.kb.size(&sizes[d]);
        let two = cx.kb.i64(2);
        let half = cx.kb.binary(BinOp::Div, n, two)?;
        // fftshift reads (i - n/2) mod n; ifftshift reads (i + n/2) mod n.
        let s = if inverse { cx.kb.binary(BinOp::Add, idx[d], half)? } else {
            let t = cx.kb.binary(BinOp::Add, idx[d], n)?;
            cx.kb.binary(BinOp::Sub, t, half)?
        };
        in_idx[d] = cx.kb.binary(BinOp::Rem, s, n)?;
    }
    cx.read(v, &in_idx)
}

pub fn fftshift(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    shift(cx, node, idx, false)
}

pub fn ifftshift(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    shift(cx, node, idx, true)
}
