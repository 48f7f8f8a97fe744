//! Scatters, lowered as per-output-element gathers: every output element folds, in a serial
//! loop, over the source positions that could land on it and keeps those whose index equals
//! its own coordinate. This file holds that fold ([`fold`]) and the scatters along one dim
//! (`scatter*`, `index_add/copy/fill/reduce`); `put.rs` the writes through advanced indices,
//! masks and flat positions; `view_scatter.rs` the view scatters, which are plain selects.
//!
//! Cost: each output element loops over every candidate source position, so a scatter is
//! O(output × candidates) serial work — candidates being the index's extent along `dim`
//! (`scatter*`, `index_*`), the broadcast index shape (`index_put`) or the whole source (`put`,
//! `masked_scatter`, `as_strided_scatter`). That is cheap for the small scatters real graphs
//! hold, needs no atomics, and is deterministic in PyTorch's CPU order: a plain write keeps the
//! *last* source position that lands on an element, as PyTorch's sequential CPU loop does. A
//! schedule that scatters in parallel (atomics, or sorting indices first) is issue 14's job.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId, RedOp, Ty};
use super::super::LowerError;
use super::index::{bound_index, dim_of, Bound};
use super::pointwise::out_ty;
use crate::ir::{Arg, Node, ValueId};
use crate::sym;

type R = Result<ExprId, LowerError>;

/// How the source elements that land on one output element combine with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Combine {
    /// A plain write: the last source position wins.
    Last,
    Sum,
    Prod,
    Max,
    Min,
    Mean,
}

fn combine_arg(cx: &Ctx<'_>, node: &Node, default: &str) -> Result<Combine, LowerError> {
    Ok(match cx.str_or(node, "reduce", default)? {
        "sum" | "add" => Combine::Sum,
        "prod" | "multiply" => Combine::Prod,
        "amax" => Combine::Max,
        "amin" => Combine::Min,
        "mean" => Combine::Mean,
        other => return Err(cx.err(node, format!("unknown reduction `{other}`"))),
    })
}

/// Builds an expression of candidate source position `j` (an i64 loop variable or chosen index).
type AtFn<'f, 'a> = dyn FnMut(&mut Ctx<'a>, ExprId) -> R + 'f;

/// The candidate source positions `0..extent` of one output element: whether position `j` lands
/// on it (`hit`), and the value it brings (`value`, read only under the hit mask).
pub(super) struct Sources<'f, 'a> {
    pub extent: sym::Expr,
    pub hit: &'f mut AtFn<'f, 'a>,
    pub value: &'f mut AtFn<'f, 'a>,
}

/// A loop over `0..extent` folding `op` over `body(j)`.
fn loop_fold<'a>(cx: &mut Ctx<'a>, op: RedOp, extent: &sym::Expr, body: &mut dyn FnMut(&mut Ctx<'a>, ExprId) -> R) -> R {
    let var = cx.kb.fresh_var()?;
    let j = cx.kb.var(var);
    let b = body(cx, j)?;
    let n = cx.kb.size(extent);
    Ok(cx.kb.reduce(op, var, n, b)?)
}

/// The constant identity of `op` in type `ty`.
pub(super) fn identity(cx: &mut Ctx<'_>, op: RedOp, ty: Ty) -> ExprId {
    match (op, ty) {
        (RedOp::Sum, Ty::I64) => cx.kb.i64(0),
        (RedOp::Prod, Ty::I64) => cx.kb.i64(1),
        (RedOp::Max, Ty::I64) => cx.kb.i64(i64::MIN),
        (RedOp::Min, Ty::I64) => cx.kb.i64(i64::MAX),
        (RedOp::Xor, _) => cx.kb.i64(0),
        (RedOp::Sum, _) => float(cx, 0.0, ty),
        (RedOp::Prod, _) => float(cx, 1.0, ty),
        (RedOp::Max, _) => float(cx, f64::NEG_INFINITY, ty),
        (RedOp::Min, _) => float(cx, f64::INFINITY, ty),
    }
}

fn float(cx: &mut Ctx<'_>, v: f64, ty: Ty) -> ExprId {
    if ty == Ty::F64 {
        cx.kb.f64(v)
    } else {
        cx.kb.f32(v as f32)
    }
}

/// Element `base` of `self` (in compute type `ty`) after the sources that land on it combine
/// with it per `how`; without `include_self`, an element some source lands on forgets `base`.
pub(super) fn fold<'a>(cx: &mut Ctx<'a>, base: ExprId, ty: Ty, how: Combine, include_self: bool, src: Sources<'_, 'a>) -> R {
    let Sources { extent, hit, value } = src;
    let op = match how {
        Combine::Last => return last_write(cx, base, ty, &extent, hit, value),
        Combine::Sum | Combine::Mean => RedOp::Sum,
        Combine::Prod => RedOp::Prod,
        Combine::Max => RedOp::Max,
        Combine::Min => RedOp::Min,
    };
    let (zero, one) = (cx.kb.i64(0), cx.kb.i64(1));
    if let (Some(elem), RedOp::Sum | RedOp::Prod) = (stepwise_storage(cx)?, op) {
        let (acc, count) = stepwise(cx, base, ty, op, include_self, elem, &extent, hit, value)?;
        if how != Combine::Mean {
            return Ok(acc);
        }
        // `acc` already holds `base` when it counts; a mean divides by the sources (and self).
        let n = if include_self { cx.kb.binary(BinOp::Add, count, one)? } else { count };
        let n1 = cx.kb.binary(BinOp::Max, n, one)?;
        let nf = cx.kb.cast(n1, ty);
        let mean = cx.kb.binary(BinOp::Div, acc, nf)?;
        let any = cx.kb.cmp(CmpOp::Gt, n, zero)?;
        return Ok(cx.kb.select(any, mean, base)?);
    }
    let red = loop_fold(cx, op, &extent, &mut |cx, j| {
        let h = hit(cx, j)?;
        let v = cx.masked(h, |cx| value(cx, j))?;
        let v = cx.kb.cast(v, ty);
        let id = identity(cx, op, ty);
        Ok(cx.kb.select(h, v, id)?)
    })?;
    let count = if how == Combine::Mean || !include_self {
        loop_fold(cx, RedOp::Sum, &extent, &mut |cx, j| {
            let h = hit(cx, j)?;
            Ok(cx.kb.select(h, one, zero)?)
        })?
    } else {
        zero
    };
    let r = match how {
        Combine::Mean => {
            let (sum, n) = if include_self {
                (cx.kb.binary(BinOp::Add, red, base)?, cx.kb.binary(BinOp::Add, count, one)?)
            } else {
                (red, count)
            };
            let n1 = cx.kb.binary(BinOp::Max, n, one)?;
            if ty.is_float() {
                let nf = cx.kb.cast(n1, ty);
                cx.kb.binary(BinOp::Div, sum, nf)?
            } else {
                floor_div(cx, sum, n1)?
            }
        }
        _ if !include_self => red,
        Combine::Sum => cx.kb.binary(BinOp::Add, base, red)?,
        Combine::Prod => cx.kb.binary(BinOp::Mul, base, red)?,
        Combine::Max => cx.kb.binary(BinOp::Max, base, red)?,
        _ => cx.kb.binary(BinOp::Min, base, red)?,
    };
    let r = if include_self {
        r
    } else {
        let any = cx.kb.cmp(CmpOp::Gt, count, zero)?;
        cx.kb.select(any, r, base)?
    };
    if !(ty.is_float() && matches!(how, Combine::Max | Combine::Min)) {
        return Ok(r);
    }
    // The float max/min built-ins skip NaN; PyTorch's amax/amin propagate it.
    let nans = loop_fold(cx, RedOp::Max, &extent, &mut |cx, j| {
        let h = hit(cx, j)?;
        let v = cx.masked(h, |cx| value(cx, j))?;
        let v = cx.kb.cast(v, ty);
        let nan = cx.kb.cmp(CmpOp::Ne, v, v)?;
        let nan = cx.kb.and(h, nan)?;
        Ok(cx.kb.select(nan, one, zero)?)
    })?;
    let mut nan = cx.kb.cmp(CmpOp::Gt, nans, zero)?;
    if include_self {
        let base_nan = cx.kb.cmp(CmpOp::Ne, base, base)?;
        nan = cx.kb.binary(BinOp::Or, nan, base_nan)?;
    }
    let q = float(cx, f64::NAN, ty);
    Ok(cx.kb.select(nan, q, r)?)
}

/// The 16-bit float storage of the node being lowered, if it has one: PyTorch's CPU scatters
/// combine into such a destination one source at a time (`*dst += *src` in the tensor's dtype),
/// rounding after every step, and so must the fold.
fn stepwise_storage(cx: &Ctx<'_>) -> Result<Option<Elem>, LowerError> {
    let Some(v) = cx.node.and_then(|n| n.outputs.first().copied()) else { return Ok(None) };
    Ok(Elem::from_dtype(cx.meta(v)?.dtype).filter(|e| matches!(e, Elem::F16 | Elem::BF16)))
}

/// A sum or product folded source by source in a state loop, rounded to `elem` after each step:
/// `(result, number of sources that landed)`. The result starts from `base` when
/// `include_self`; otherwise the first source that lands replaces it.
#[allow(clippy::too_many_arguments)]
fn stepwise<'a>(
    cx: &mut Ctx<'a>,
    base: ExprId,
    ty: Ty,
    op: RedOp,
    include_self: bool,
    elem: Elem,
    extent: &sym::Expr,
    hit: &mut AtFn<'_, 'a>,
    value: &mut AtFn<'_, 'a>,
) -> Result<(ExprId, ExprId), LowerError> {
    let var = cx.kb.fresh_var()?;
    let j = cx.kb.var(var);
    let h = hit(cx, j)?;
    let v = cx.masked(h, |cx| value(cx, j))?;
    let v = cx.kb.cast(v, ty);
    let (acc, seen) = (cx.kb.carried(var, 0, ty), cx.kb.carried(var, 1, Ty::I64));
    let combined = cx.kb.binary(if op == RedOp::Prod { BinOp::Mul } else { BinOp::Add }, acc, v)?;
    let combined = cx.kb.round_to(combined, elem);
    let (zero, one) = (cx.kb.i64(0), cx.kb.i64(1));
    let first = cx.kb.cmp(CmpOp::Eq, seen, zero)?;
    let landed = if include_self { combined } else { cx.kb.select(first, v, combined)? };
    let next_acc = cx.kb.select(h, landed, acc)?;
    let plus = cx.kb.binary(BinOp::Add, seen, one)?;
    let next_seen = cx.kb.select(h, plus, seen)?;
    let n = cx.kb.size(extent);
    let r = cx.kb.iterate(var, n, vec![base, zero], vec![next_acc, next_seen])?;
    Ok((r[0], r[1]))
}

/// A plain write: the largest source position that lands on the element (PyTorch's CPU loop
/// writes in order, so the last one stays), its value read once, under a mask.
fn last_write<'a>(cx: &mut Ctx<'a>, base: ExprId, ty: Ty, extent: &sym::Expr, hit: &mut AtFn<'_, 'a>, value: &mut AtFn<'_, 'a>) -> R {
    let last = loop_fold(cx, RedOp::Max, extent, &mut |cx, j| {
        let h = hit(cx, j)?;
        let none = cx.kb.i64(-1);
        Ok(cx.kb.select(h, j, none)?)
    })?;
    let zero = cx.kb.i64(0);
    let found = cx.kb.cmp(CmpOp::Ge, last, zero)?;
    let at = cx.kb.binary(BinOp::Max, last, zero)?;
    let v = cx.masked(found, |cx| value(cx, at))?;
    let v = cx.kb.cast(v, ty);
    Ok(cx.kb.select(found, v, base)?)
}

/// `a / b` rounded toward −∞ for `b > 0` (integer `mean` is a floor division in PyTorch).
fn floor_div(cx: &mut Ctx<'_>, a: ExprId, b: ExprId) -> R {
    let kb = &mut cx.kb;
    let q = kb.binary(BinOp::Div, a, b)?;
    let r = kb.binary(BinOp::Rem, a, b)?;
    let zero = kb.i64(0);
    let one = kb.i64(1);
    let below = kb.cmp(CmpOp::Lt, r, zero)?;
    let q1 = kb.binary(BinOp::Sub, q, one)?;
    Ok(kb.select(below, q1, q)?)
}

/// A number argument in compute type `ty` (a float64 op keeps the double).
pub(super) fn scalar(cx: &mut Ctx<'_>, node: &Node, name: &str, ty: Ty) -> R {
    if let (Ty::F64, Some(Arg::Float(f))) = (ty, node.arg(name)) {
        return Ok(cx.kb.f64(*f));
    }
    let e = cx.opt_number(node, name)?.ok_or_else(|| cx.err(node, format!("argument `{name}` is missing")))?;
    Ok(cx.kb.cast(e, ty))
}

/// `self` at the output coordinates, in the op's compute type.
pub(super) fn base_of(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<(ValueId, ExprId, Ty), LowerError> {
    let v = cx.tensor(node, "self")?;
    let ty = out_ty(cx, node)?;
    let b = cx.read(v, idx)?;
    Ok((v, cx.kb.cast(b, ty), ty))
}

/// `scatter(self, dim, index, src|value, reduce?)`, `scatter_add`, `scatter_reduce.two`: source
/// position `k` (over `index`'s shape) lands on `k` with `k[dim] = index[k]`. Output element `o`
/// only needs the `k` equal to `o` off `dim`: one loop along `dim`, `index.size(dim)` long.
fn along_dim(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], how: Combine, include_self: bool) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let ix = cx.tensor(node, "index")?;
    let sizes = cx.sizes(v)?;
    let isz = cx.sizes(ix)?;
    let src = cx.opt_tensor(node, "src");
    if isz.len() != sizes.len() || src.is_some_and(|s| cx.sizes(s).map_or(true, |s| s.len() != sizes.len())) {
        return Err(cx.err(node, "index and src must have self's rank"));
    }
    let d = dim_of(cx, node, "dim", 0, sizes.len())?;
    // Off `dim`, `o` may lie beyond the (smaller) index: nothing lands there, and the index
    // must not be read.
    let mut valid = cx.kb.bool(true);
    for (e, (s, i)) in sizes.iter().zip(&isz).enumerate() {
        if Some(e) != d && s != i {
            let n = cx.kb.size(i);
            let lt = cx.kb.cmp(CmpOp::Lt, idx[e], n)?;
            valid = cx.kb.and(valid, lt)?;
        }
    }
    let (n, od) = match d {
        Some(d) => (sizes[d].clone(), idx[d]),
        None => (sym::Expr::int(1), cx.kb.i64(0)),
    };
    let at = |j: ExprId| -> Vec<ExprId> {
        let mut k = idx.to_vec();
        if let Some(d) = d {
            k[d] = j;
        }
        k
    };
    let extent = d.map_or(sym::Expr::int(1), |d| isz[d].clone());
    let mut hit = |cx: &mut Ctx<'_>, j: ExprId| -> R {
        let k = at(j);
        let i = cx.masked(valid, |cx| cx.read(ix, &k))?;
        let i = bound_index(cx, i, &n, Bound::Wrap)?;
        let eq = cx.kb.cmp(CmpOp::Eq, i, od)?;
        Ok(cx.kb.and(valid, eq)?)
    };
    let mut value = |cx: &mut Ctx<'_>, j: ExprId| -> R {
        match src {
            Some(s) => cx.read(s, &at(j)),
            None => scalar(cx, node, "value", ty),
        }
    };
    fold(cx, base, ty, how, include_self, Sources { extent, hit: &mut hit, value: &mut value })
}

pub fn scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let how = match node.arg("reduce") {
        None | Some(Arg::None) => Combine::Last,
        _ => combine_arg(cx, node, "sum")?,
    };
    along_dim(cx, node, idx, how, true)
}

pub fn scatter_add(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    along_dim(cx, node, idx, Combine::Sum, true)
}

pub fn scatter_reduce(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let how = combine_arg(cx, node, "sum")?;
    let include_self = cx.bool_or(node, "include_self", true)?;
    along_dim(cx, node, idx, how, include_self)
}

/// The `index_*(self, dim, index, source)` family: `source[.., j, ..]` (along `dim`) lands on
/// `self[.., index[j], ..]`: one loop over `index`.
fn along_index(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], how: Combine, include_self: bool) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let ix = cx.tensor(node, "index")?;
    let sizes = cx.sizes(v)?;
    let isz = cx.sizes(ix)?;
    if isz.len() > 1 {
        return Err(cx.err(node, "index must be 0- or 1-dimensional"));
    }
    let d = dim_of(cx, node, "dim", 0, sizes.len())?;
    let (n, od) = match d {
        Some(d) => (sizes[d].clone(), idx[d]),
        None => (sym::Expr::int(1), cx.kb.i64(0)),
    };
    let extent = isz.first().cloned().unwrap_or_else(|| sym::Expr::int(1));
    let source = cx.opt_tensor(node, "source");
    let alpha = match node.arg("alpha") {
        None | Some(Arg::None) => None,
        _ => Some(scalar(cx, node, "alpha", ty)?),
    };
    let mut hit = |cx: &mut Ctx<'_>, j: ExprId| -> R {
        let at: Vec<ExprId> = if isz.is_empty() { vec![] } else { vec![j] };
        let i = cx.read(ix, &at)?;
        let i = bound_index(cx, i, &n, Bound::Wrap)?;
        Ok(cx.kb.cmp(CmpOp::Eq, i, od)?)
    };
    let mut value = |cx: &mut Ctx<'_>, j: ExprId| -> R {
        let x = match source {
            Some(s) if cx.sizes(s)?.is_empty() => cx.read(s, &[])?,
            Some(s) => {
                let mut k = idx.to_vec();
                if let Some(d) = d {
                    k[d] = j;
                }
                cx.read(s, &k)?
            }
            None => match node.arg("value") {
                Some(Arg::Tensor(t)) => cx.read(*t, &[])?,
                _ => scalar(cx, node, "value", ty)?,
            },
        };
        let x = cx.kb.cast(x, ty);
        Ok(match alpha {
            Some(a) => cx.kb.binary(BinOp::Mul, x, a)?,
            None => x,
        })
    };
    fold(cx, base, ty, how, include_self, Sources { extent, hit: &mut hit, value: &mut value })
}

pub fn index_add(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    along_index(cx, node, idx, Combine::Sum, true)
}

pub fn index_copy(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    along_index(cx, node, idx, Combine::Last, true)
}

pub fn index_fill(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    along_index(cx, node, idx, Combine::Last, true)
}

pub fn index_reduce(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let how = combine_arg(cx, node, "prod")?;
    let include_self = cx.bool_or(node, "include_self", true)?;
    along_index(cx, node, idx, how, include_self)
}
