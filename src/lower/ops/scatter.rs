//! Scatters, lowered as per-output-element gathers: every output element folds, in a serial
//! loop, over the source positions that could land on it and keeps those whose index equals
//! its own coordinate (`scatter*`, `index_add/copy/fill/reduce`, `index_put`, `put`,
//! `masked_scatter`, `as_strided_scatter`, `_unsafe_masked_index_put_accumulate`); and the view
//! scatters (`select/slice/diagonal_scatter`), which are plain selects.
//!
//! Cost: each output element loops over every candidate source position, so a scatter is
//! O(output × candidates) serial work — candidates being the index's extent along `dim`
//! (`scatter*`, `index_*`), the broadcast index shape (`index_put`) or the whole source (`put`,
//! `masked_scatter`, `as_strided_scatter`). That is cheap for the small scatters real graphs
//! hold, needs no atomics, and is deterministic in PyTorch's CPU order: a plain write keeps the
//! *last* source position that lands on an element, as PyTorch's sequential CPU loop does. A
//! schedule that scatters in parallel (atomics, or sorting indices first) is issue 14's job.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty};
use super::super::LowerError;
use super::index::{bound_index, delinear, dim_of, linear, numel, read_index, storage_position, within, Advanced, Bound};
use super::pointwise::out_ty;
use super::view::reshape_read;
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
fn identity(cx: &mut Ctx<'_>, op: RedOp, ty: Ty) -> ExprId {
    match (op, ty) {
        (RedOp::Sum, Ty::I64) => cx.kb.i64(0),
        (RedOp::Prod, Ty::I64) => cx.kb.i64(1),
        (RedOp::Max, Ty::I64) => cx.kb.i64(i64::MIN),
        (RedOp::Min, Ty::I64) => cx.kb.i64(i64::MAX),
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
    let (zero, one) = (cx.kb.i64(0), cx.kb.i64(1));
    if how == Combine::Last {
        let last = loop_fold(cx, RedOp::Max, &extent, &mut |cx, j| {
            let h = hit(cx, j)?;
            let none = cx.kb.i64(-1);
            Ok(cx.kb.select(h, j, none)?)
        })?;
        let found = cx.kb.cmp(CmpOp::Ge, last, zero)?;
        let at = cx.kb.binary(BinOp::Max, last, zero)?;
        let v = cx.masked(found, |cx| value(cx, at))?;
        let v = cx.kb.cast(v, ty);
        return Ok(cx.kb.select(found, v, base)?);
    }
    let op = match how {
        Combine::Sum | Combine::Mean => RedOp::Sum,
        Combine::Prod => RedOp::Prod,
        Combine::Max => RedOp::Max,
        Combine::Min | Combine::Last => RedOp::Min,
    };
    let red = loop_fold(cx, op, &extent, &mut |cx, j| {
        let h = hit(cx, j)?;
        let v = cx.masked(h, |cx| value(cx, j))?;
        let v = cx.kb.cast(v, ty);
        let id = identity(cx, op, ty);
        Ok(cx.kb.select(h, v, id)?)
    })?;
    let needs_count = how == Combine::Mean || !include_self;
    let count = if needs_count {
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
fn scalar(cx: &mut Ctx<'_>, node: &Node, name: &str, ty: Ty) -> R {
    if let (Ty::F64, Some(Arg::Float(f))) = (ty, node.arg(name)) {
        return Ok(cx.kb.f64(*f));
    }
    let e = cx.opt_number(node, name)?.ok_or_else(|| cx.err(node, format!("argument `{name}` is missing")))?;
    Ok(cx.kb.cast(e, ty))
}

/// `self` at the output coordinates, in the op's compute type.
fn base_of(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<(ValueId, ExprId, Ty), LowerError> {
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
    let (v, base, ty) = base_of(cx, node, idx)?;
    let mask = cx.tensor(node, "mask")?;
    let source = cx.tensor(node, "source")?;
    let sizes = cx.sizes(v)?;
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

/// `select_scatter(self, src, dim, index)`: `src` where `o[dim] == index`.
pub fn select_scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let src = cx.tensor(node, "src")?;
    let sizes = cx.sizes(v)?;
    let d = dim_of(cx, node, "dim", 0, sizes.len())?.ok_or_else(|| cx.err(node, "select_scatter needs a dim"))?;
    let i = cx.int_or(node, "index", 0)?;
    let i = cx.kb.i64(i);
    let i = bound_index(cx, i, &sizes[d], Bound::Wrap)?;
    let on = cx.kb.cmp(CmpOp::Eq, idx[d], i)?;
    let mut at = idx.to_vec();
    at.remove(d);
    let x = cx.read(src, &at)?;
    let x = cx.kb.cast(x, ty);
    Ok(cx.kb.select(on, x, base)?)
}

/// `slice_scatter(self, src, dim, start, end, step)`: `src` on `start, start+step, …` along
/// `dim` (start clamped as `slice` does; `src`'s extent ends the run).
pub fn slice_scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let src = cx.tensor(node, "src")?;
    let sizes = cx.sizes(v)?;
    let d = dim_of(cx, node, "dim", 0, sizes.len())?.ok_or_else(|| cx.err(node, "slice_scatter needs a dim"))?;
    let step = cx.int_or(node, "step", 1)?;
    if step < 1 {
        return Err(cx.err(node, "slice step must be positive"));
    }
    let start = cx.int_or(node, "start", 0)?;
    let n = cx.kb.size(&sizes[d]);
    let zero = cx.kb.i64(0);
    let s = cx.kb.i64(start);
    let start = if start < 0 { cx.kb.binary(BinOp::Add, s, n)? } else { s };
    let start = cx.kb.binary(BinOp::Max, start, zero)?;
    let start = cx.kb.binary(BinOp::Min, start, n)?;
    let t = cx.kb.binary(BinOp::Sub, idx[d], start)?;
    let step = cx.kb.i64(step);
    let k = cx.kb.binary(BinOp::Div, t, step)?;
    let r = cx.kb.binary(BinOp::Rem, t, step)?;
    let src_n = cx.sizes(src)?.get(d).cloned().ok_or_else(|| cx.err(node, "src must have self's rank"))?;
    let on = within(cx, k, &src_n)?;
    let nonneg = cx.kb.cmp(CmpOp::Ge, t, zero)?;
    let aligned = cx.kb.cmp(CmpOp::Eq, r, zero)?;
    let on = cx.kb.and(on, nonneg)?;
    let on = cx.kb.and(on, aligned)?;
    let mut at = idx.to_vec();
    at[d] = k;
    let x = cx.masked(on, |cx| cx.read(src, &at))?;
    let x = cx.kb.cast(x, ty);
    Ok(cx.kb.select(on, x, base)?)
}

/// `diagonal_scatter(self, src, offset, dim1, dim2)`: `src` on the diagonal `o[dim2] - o[dim1]
/// == offset`; `src`'s last dim runs along the diagonal.
pub fn diagonal_scatter(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (v, base, ty) = base_of(cx, node, idx)?;
    let src = cx.tensor(node, "src")?;
    let rank = cx.sizes(v)?.len();
    let d1 = dim_of(cx, node, "dim1", 0, rank)?.ok_or_else(|| cx.err(node, "diagonal_scatter needs two dims"))?;
    let d2 = dim_of(cx, node, "dim2", 1, rank)?.ok_or_else(|| cx.err(node, "diagonal_scatter needs two dims"))?;
    let offset = cx.int_or(node, "offset", 0)?;
    let off = cx.kb.i64(offset);
    let diff = cx.kb.binary(BinOp::Sub, idx[d2], idx[d1])?;
    let on = cx.kb.cmp(CmpOp::Eq, diff, off)?;
    let mut at: Vec<ExprId> = idx.iter().enumerate().filter(|(e, _)| *e != d1 && *e != d2).map(|(_, c)| *c).collect();
    at.push(if offset >= 0 { idx[d1] } else { idx[d2] });
    let x = cx.masked(on, |cx| cx.read(src, &at))?;
    let x = cx.kb.cast(x, ty);
    Ok(cx.kb.select(on, x, base)?)
}
