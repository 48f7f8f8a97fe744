//! Gradients of layer and group normalisation from the forward's saved mean and rstd, one
//! kernel output per gradient: with `x̂ = (x - mean)·rstd` and `ĝ = ∂y·weight` over a
//! normalised set of `M` elements, `∂x = rstd/M · (M·ĝ - Σĝ - x̂·Σ(ĝ·x̂))` (the two sums
//! recomputed per element by serial loops, as the forward kernels recompute their statistics),
//! `∂weight = Σ ∂y·x̂` and `∂bias = Σ ∂y` per feature over every set.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, Elem, ExprId, RedOp, Ty};
use super::super::LowerError;
use crate::ir::{Arg, Node, ValueId};
use crate::sym;

type R = Result<ExprId, LowerError>;

/// Which of the three gradients output `out` is (the importer keeps those `output_mask` asks
/// for, in order), and its compute type.
fn which(cx: &Ctx<'_>, node: &Node, out: usize) -> Result<(usize, Ty), LowerError> {
    let mask = match node.arg("output_mask") {
        Some(Arg::Bools(b)) if b.len() == 3 => b.clone(),
        other => return Err(cx.err(node, format!("argument `output_mask`: expected 3 bools, got {other:?}"))),
    };
    let which = (0..3).filter(|&i| mask[i]).nth(out).ok_or_else(|| cx.err(node, format!("output {out} is not one `output_mask` asks for")))?;
    let v = node.outputs[out];
    Ok((which, Elem::from_dtype(cx.meta(v)?.dtype).map_or(Ty::F32, Elem::ty)))
}

fn read_as(cx: &mut Ctx<'_>, v: ValueId, at: &[ExprId], ty: Ty) -> R {
    let x = cx.read(v, at)?;
    Ok(cx.kb.cast(x, ty))
}

/// The product of `sizes[d]` over `dims` as an i64 expression.
fn count(cx: &mut Ctx<'_>, sizes: &[sym::Expr], dims: &[usize]) -> R {
    let mut n = cx.kb.i64(1);
    for &d in dims {
        let s = cx.kb.size(&sizes[d]);
        n = cx.kb.binary(BinOp::Mul, n, s)?;
    }
    Ok(n)
}

/// `(x - mean)·rstd` at `i`.
fn normed(cx: &mut Ctx<'_>, x: ValueId, i: &[ExprId], ty: Ty, mean: ExprId, rstd: ExprId) -> R {
    let xv = read_as(cx, x, i, ty)?;
    let d = cx.kb.binary(BinOp::Sub, xv, mean)?;
    Ok(cx.kb.binary(BinOp::Mul, d, rstd)?)
}

/// `∂y·weight` at `i`, the weight read at `wat`.
fn weighted(cx: &mut Ctx<'_>, dy: ValueId, w: Option<ValueId>, i: &[ExprId], wat: &[ExprId], ty: Ty) -> R {
    let g = read_as(cx, dy, i, ty)?;
    match w {
        Some(w) => {
            let wv = read_as(cx, w, wat, ty)?;
            Ok(cx.kb.binary(BinOp::Mul, g, wv)?)
        }
        None => Ok(g),
    }
}

/// Builds an element's expression at full input coordinates.
type At<'f, 'a, T> = &'f dyn Fn(&mut Ctx<'a>, &[ExprId]) -> Result<T, LowerError>;

/// How `∂x` reads one normalised set: `ĝ` and `x̂` at full input coordinates, and the set's
/// elements as the coordinates `at` gives for a loop over `dims` of `block` from `base`.
struct SetOf<'f, 'a> {
    ty: Ty,
    rstd: ExprId,
    ghat: At<'f, 'a, ExprId>,
    xhat: At<'f, 'a, ExprId>,
    at: At<'f, 'a, Vec<ExprId>>,
    block: &'f [sym::Expr],
    dims: &'f [usize],
    base: &'f [ExprId],
}

/// `∂x` at `idx`: `rstd/M · (M·ĝ - Σĝ - x̂·Σ(ĝ·x̂))`.
fn dx_at<'a>(cx: &mut Ctx<'a>, s: &SetOf<'_, 'a>, idx: &[ExprId]) -> R {
    let sg = cx.reduce_dims(RedOp::Sum, s.block, s.dims, s.base, &mut |cx, i| {
        let a = (s.at)(cx, i)?;
        (s.ghat)(cx, &a)
    })?;
    let sgx = cx.reduce_dims(RedOp::Sum, s.block, s.dims, s.base, &mut |cx, i| {
        let a = (s.at)(cx, i)?;
        let g = (s.ghat)(cx, &a)?;
        let xh = (s.xhat)(cx, &a)?;
        Ok(cx.kb.binary(BinOp::Mul, g, xh)?)
    })?;
    let m = count(cx, s.block, s.dims)?;
    let m = cx.kb.cast(m, s.ty);
    let g = (s.ghat)(cx, idx)?;
    let xh = (s.xhat)(cx, idx)?;
    let a = cx.kb.binary(BinOp::Mul, m, g)?;
    let a = cx.kb.binary(BinOp::Sub, a, sg)?;
    let b = cx.kb.binary(BinOp::Mul, xh, sgx)?;
    let a = cx.kb.binary(BinOp::Sub, a, b)?;
    let scale = cx.kb.binary(BinOp::Div, s.rstd, m)?;
    Ok(cx.kb.binary(BinOp::Mul, a, scale)?)
}

/// `native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)`.
pub fn native_layer_norm_backward(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let (which, ty) = which(cx, node, out)?;
    let (dy, x) = (cx.tensor(node, "grad_out")?, cx.tensor(node, "input")?);
    let (mean_v, rstd_v) = (cx.tensor(node, "mean")?, cx.tensor(node, "rstd")?);
    let sizes = cx.sizes(x)?;
    let r = sizes.len();
    let k = cx.ints_or(node, "normalized_shape", &[])?.len();
    if k > r || cx.sizes(mean_v)?.len() != r || cx.sizes(rstd_v)?.len() != r {
        return Err(cx.err(node, "mean and rstd must keep the input's rank, normalized_shape at most that"));
    }
    let lead: Vec<usize> = (0..r - k).collect();
    let tail: Vec<usize> = (r - k..r).collect();
    let zero = cx.kb.i64(0);
    // Mean and rstd of the row through full coordinates `i` (their normalised dims are 1).
    let stats = |cx: &mut Ctx<'_>, i: &[ExprId]| -> Result<(ExprId, ExprId), LowerError> {
        let mut at = i.to_vec();
        at[r - k..].iter_mut().for_each(|c| *c = zero);
        Ok((read_as(cx, mean_v, &at, ty)?, read_as(cx, rstd_v, &at, ty)?))
    };
    let w = cx.opt_tensor(node, "weight");
    if which == 0 {
        let (mean, rstd) = stats(cx, idx)?;
        let ghat = |cx: &mut Ctx<'_>, i: &[ExprId]| weighted(cx, dy, w, i, &i[r - k..], ty);
        let xhat = |cx: &mut Ctx<'_>, i: &[ExprId]| normed(cx, x, i, ty, mean, rstd);
        let at = |_: &mut Ctx<'_>, i: &[ExprId]| Ok(i.to_vec());
        let set = SetOf { ty, rstd, ghat: &ghat, xhat: &xhat, at: &at, block: &sizes, dims: &tail, base: idx };
        return dx_at(cx, &set, idx);
    }
    // Weight or bias gradient at the normalised coordinates `idx`: fold over the rows.
    let mut base = vec![zero; r - k];
    base.extend_from_slice(idx);
    cx.reduce_dims(RedOp::Sum, &sizes, &lead, &base, &mut |cx, i| {
        let g = read_as(cx, dy, i, ty)?;
        if which == 2 {
            return Ok(g);
        }
        let (mean, rstd) = stats(cx, i)?;
        let xh = normed(cx, x, i, ty, mean, rstd)?;
        Ok(cx.kb.binary(BinOp::Mul, g, xh)?)
    })
}

/// `native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)`:
/// `input` is `[N, C, *]`, mean and rstd `[N, group]`.
pub fn native_group_norm_backward(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let (which, ty) = which(cx, node, out)?;
    let (dy, x) = (cx.tensor(node, "grad_out")?, cx.tensor(node, "input")?);
    let (mean_v, rstd_v) = (cx.tensor(node, "mean")?, cx.tensor(node, "rstd")?);
    let groups = cx.int_or(node, "group", 1)?;
    let sizes = cx.sizes(x)?;
    let r = sizes.len();
    if r < 2 || groups <= 0 {
        return Err(cx.err(node, "group norm gradients need an [N, C, *] input and a positive group count"));
    }
    let c = cx.kb.size(&sizes[1]);
    let gk = cx.kb.i64(groups);
    let per = cx.kb.binary(BinOp::Div, c, gk)?;
    let zero = cx.kb.i64(0);
    let stats = |cx: &mut Ctx<'_>, n: ExprId, ch: ExprId| -> Result<(ExprId, ExprId), LowerError> {
        let g = cx.kb.binary(BinOp::Div, ch, per)?;
        Ok((read_as(cx, mean_v, &[n, g], ty)?, read_as(cx, rstd_v, &[n, g], ty)?))
    };
    let w = cx.opt_tensor(node, "weight");
    if which == 0 {
        let (mean, rstd) = stats(cx, idx[0], idx[1])?;
        // The group's elements as a [1, C/group, *spatial] block at channel offset g·C/group.
        let g = cx.kb.binary(BinOp::Div, idx[1], per)?;
        let c0 = cx.kb.binary(BinOp::Mul, g, per)?;
        let mut block = vec![sym::Expr::int(1), sym::Expr::floordiv(sizes[1].clone(), sym::Expr::int(groups))];
        block.extend(sizes[2..].iter().cloned());
        let dims: Vec<usize> = (1..r).collect();
        let mut base = vec![idx[0]];
        base.extend(std::iter::repeat_n(zero, r - 1));
        let at = |cx: &mut Ctx<'_>, i: &[ExprId]| -> Result<Vec<ExprId>, LowerError> {
            let mut a = i.to_vec();
            a[1] = cx.kb.binary(BinOp::Add, c0, i[1])?;
            Ok(a)
        };
        let ghat = |cx: &mut Ctx<'_>, i: &[ExprId]| weighted(cx, dy, w, i, &i[1..2], ty);
        let xhat = |cx: &mut Ctx<'_>, i: &[ExprId]| normed(cx, x, i, ty, mean, rstd);
        let set = SetOf { ty, rstd, ghat: &ghat, xhat: &xhat, at: &at, block: &block, dims: &dims, base: &base };
        return dx_at(cx, &set, idx);
    }
    // Weight or bias gradient at channel idx[0]: fold over the batch and spatial positions.
    let dims: Vec<usize> = (0..r).filter(|&d| d != 1).collect();
    let mut base = vec![zero; r];
    base[1] = idx[0];
    cx.reduce_dims(RedOp::Sum, &sizes, &dims, &base, &mut |cx, i| {
        let g = read_as(cx, dy, i, ty)?;
        if which == 2 {
            return Ok(g);
        }
        let (mean, rstd) = stats(cx, i[0], i[1])?;
        let xh = normed(cx, x, i, ty, mean, rstd)?;
        Ok(cx.kb.binary(BinOp::Mul, g, xh)?)
    })
}
