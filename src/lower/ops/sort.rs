//! Sorting, selection and index-carrying reductions: `sort`/`argsort`/`topk`, order statistics
//! (`kthvalue`, `median`, `nanmedian`, `mode`), `max.dim`/`argmax` and friends, running
//! `cummax`/`cummin`/`logcumsumexp`, and binary searches (`searchsorted`, `bucketize`).
//!
//! Everything works on a *line*: the elements one output element looks at (one dim, or all of
//! them flattened). Index-carrying folds are state loops (`KExpr::Loop`) over (value, index)
//! pairs. A sorted position is found by stable rank: element `i` lands at
//! `#{k : x_k is ordered before x_i}`, with ties broken by index and NaN ordered last
//! (ascending) or first (descending) as PyTorch sorts; output `j` is the element whose rank is
//! `j`, so a sort costs O(n²) comparisons per output element: sorts of static lines are done in
//! merge passes instead (`merge_sort`), which leaves this for dynamic lines.
//!
//! The binary searches (`searchsorted`, `bucketize` and the [`Bisection`] loop the merge sort
//! shares) live in `sort_search`, re-exported here.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, KernelError, RedOp, Ty, UnOp};
use super::super::LowerError;
use super::select_kernel;
use crate::ir::{Arg, Node, ValueId};

pub use super::sort_search::{bucketize, searchsorted};
pub(super) use super::sort_search::Bisection;

pub(super) type R = Result<ExprId, LowerError>;

/// The elements an output element looks at: `v` at `base` with `dims` running row-major over
/// positions `0..n`.
pub(super) struct Line {
    v: ValueId,
    base: Vec<ExprId>,
    dims: Vec<usize>,
    pub(super) sizes: Vec<ExprId>,
    n: ExprId,
}

impl Line {
    /// A line along `dim` of `v` through output coordinates `idx` (the output keeps `dim` when
    /// `keep`, as sorts and scans do; reductions without keepdim drop it).
    pub(super) fn along(cx: &mut Ctx<'_>, v: ValueId, dim: Option<usize>, idx: &[ExprId], keep: bool) -> Result<Line, LowerError> {
        let sizes = cx.ksizes(v)?;
        let rank = sizes.len();
        let dims: Vec<usize> = match dim {
            Some(d) => vec![d],
            None => (0..rank).collect(),
        };
        let zero = cx.kb.i64(0);
        let mut base = Vec::with_capacity(rank);
        let mut k = 0;
        for d in 0..rank {
            if dims.contains(&d) {
                base.push(zero);
                if keep {
                    k += 1;
                }
            } else {
                base.push(*idx.get(k).ok_or_else(|| LowerError::Internal("output rank does not match the line".into()))?);
                k += 1;
            }
        }
        let mut n = cx.kb.i64(1);
        for &d in &dims {
            n = cx.kb.binary(BinOp::Mul, n, sizes[d])?;
        }
        Ok(Line { v, base, dims, sizes, n })
    }

    /// The input coordinates of position `p`.
    pub(super) fn coords(&self, kb: &mut KernelBuilder, p: ExprId) -> Result<Vec<ExprId>, KernelError> {
        let mut at = self.base.clone();
        let mut rest = p;
        for (i, &d) in self.dims.iter().enumerate().rev() {
            if i == 0 {
                at[d] = rest;
            } else {
                at[d] = kb.binary(BinOp::Rem, rest, self.sizes[d])?;
                rest = kb.binary(BinOp::Div, rest, self.sizes[d])?;
            }
        }
        Ok(at)
    }

    /// The element at position `p`, bool read as 0/1 so that it compares.
    pub(super) fn at(&self, cx: &mut Ctx<'_>, p: ExprId) -> R {
        let at = self.coords(&mut cx.kb, p)?;
        let x = cx.read(self.v, &at)?;
        Ok(if cx.kb.ty(x) == Ty::Bool { cx.kb.cast(x, Ty::I64) } else { x })
    }
}

fn is_nan(kb: &mut KernelBuilder, x: ExprId) -> Result<ExprId, KernelError> {
    if kb.ty(x).is_float() {
        kb.cmp(CmpOp::Ne, x, x)
    } else {
        Ok(kb.bool(false))
    }
}

fn or(kb: &mut KernelBuilder, a: ExprId, b: ExprId) -> Result<ExprId, KernelError> {
    kb.binary(BinOp::Or, a, b)
}

pub(super) fn not(kb: &mut KernelBuilder, a: ExprId) -> ExprId {
    kb.unary(UnOp::Not, a)
}

/// `a` strictly before `b` in ascending value order with NaN largest.
pub(super) fn less(kb: &mut KernelBuilder, a: ExprId, b: ExprId) -> Result<ExprId, KernelError> {
    let lt = kb.cmp(CmpOp::Lt, a, b)?;
    let (na, nb) = (is_nan(kb, a)?, is_nan(kb, b)?);
    let not_na = not(kb, na);
    let nan_after = kb.and(not_na, nb)?;
    or(kb, lt, nan_after)
}

/// Equal values, NaN equal to NaN.
fn same(kb: &mut KernelBuilder, a: ExprId, b: ExprId) -> Result<ExprId, KernelError> {
    let eq = kb.cmp(CmpOp::Eq, a, b)?;
    let (na, nb) = (is_nan(kb, a)?, is_nan(kb, b)?);
    let both = kb.and(na, nb)?;
    or(kb, eq, both)
}

/// Whether `(a, ia)` comes before `(b, ib)` in a stable sort.
pub(super) fn before(kb: &mut KernelBuilder, a: ExprId, ia: ExprId, b: ExprId, ib: ExprId, descending: bool) -> Result<ExprId, KernelError> {
    let strict = if descending { less(kb, b, a)? } else { less(kb, a, b)? };
    let tie = same(kb, a, b)?;
    let first = kb.cmp(CmpOp::Lt, ia, ib)?;
    let tie_first = kb.and(tie, first)?;
    or(kb, strict, tie_first)
}

/// The (value, position) of the element of stable rank `j` on `line`.
fn of_rank(cx: &mut Ctx<'_>, line: &Line, j: ExprId, descending: bool) -> Result<(ExprId, ExprId), LowerError> {
    let outer = cx.kb.fresh_var()?;
    let i = cx.kb.var(outer);
    let xi = line.at(cx, i)?;
    let inner = cx.kb.fresh_var()?;
    let k = cx.kb.var(inner);
    let xk = line.at(cx, k)?;
    let b = before(&mut cx.kb, xk, k, xi, i, descending)?;
    let b = cx.kb.cast(b, Ty::I64);
    let rank = cx.kb.reduce(RedOp::Sum, inner, line.n, b)?;
    let zero = cx.kb.i64(0);
    let x0 = line.at(cx, zero)?;
    let ty = cx.kb.ty(xi);
    let (sv, si) = (cx.kb.carried(outer, 0, ty), cx.kb.carried(outer, 1, Ty::I64));
    let hit = cx.kb.cmp(CmpOp::Eq, rank, j)?;
    let nv = cx.kb.select(hit, xi, sv)?;
    let ni = cx.kb.select(hit, i, si)?;
    let out = cx.kb.iterate(outer, line.n, vec![x0, zero], vec![nv, ni])?;
    Ok((out[0], out[1]))
}

pub(super) fn dim_of(cx: &Ctx<'_>, node: &Node, v: ValueId, default: i64) -> Result<usize, LowerError> {
    let rank = cx.sizes(v)?.len();
    let d = cx.int_or(node, "dim", default)?;
    if rank == 0 {
        return Ok(0);
    }
    Ok(wrap_dims(&[d], rank).map_err(|m| cx.err(node, m))?[0])
}

/// `sort(self, dim, descending)` / `sort.stable`, `argsort`, `msort`: values then indices.
pub fn sort(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    if idx.is_empty() {
        return scalar_pick(cx, v, out);
    }
    let indices_only = node.target.starts_with("aten.argsort");
    if let Some(s) = super::merge_sort::sorting(cx, node)? {
        if let Some((x, i)) = super::merge_sort::output(cx, &s, idx)? {
            return Ok(if out == 1 || indices_only { i } else { x });
        }
    }
    if let Some((x, i)) = super::rank_sort::output(cx, node, idx)? {
        return Ok(if out == 1 || indices_only { i } else { x });
    }
    let default = if node.target.starts_with("aten.msort") { 0 } else { -1 };
    let d = if node.target.starts_with("aten.msort") { 0 } else { dim_of(cx, node, v, default)? };
    let descending = cx.bool_or(node, "descending", false)?;
    let line = Line::along(cx, v, Some(d), idx, true)?;
    let (x, i) = of_rank(cx, &line, idx[d], descending)?;
    Ok(if out == 1 || indices_only { i } else { x })
}

/// A 0-dim input: the value itself, index 0.
fn scalar_pick(cx: &mut Ctx<'_>, v: ValueId, out: usize) -> R {
    if out == 1 {
        return Ok(cx.kb.i64(0));
    }
    cx.read(v, &[])
}

/// The values of a line of static length at most `select_kernel::MAX_LINE`, for the selection
/// programs that reproduce PyTorch's tie-breaking; `None` for longer or dynamic lines.
fn short_line(cx: &mut Ctx<'_>, line: &Line) -> Result<Option<Vec<ExprId>>, LowerError> {
    match cx.kb.const_i64(line.n) {
        Some(n) if n >= 1 && n as usize <= select_kernel::MAX_LINE => {
            let mut vals = Vec::with_capacity(n as usize);
            for p in 0..n {
                let at = cx.kb.i64(p);
                vals.push(line.at(cx, at)?);
            }
            Ok(Some(vals))
        }
        _ => Ok(None),
    }
}

/// `topk(self, k, dim, largest, sorted)`: the first `k` of a descending (largest) or ascending
/// sort. Short lines run PyTorch's own selection (`select_kernel`), so that equal values come
/// out at PyTorch's positions; longer ones pick equal values by position.
pub fn topk(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    if idx.is_empty() {
        return scalar_pick(cx, v, out);
    }
    let d = dim_of(cx, node, v, -1)?;
    let largest = cx.bool_or(node, "largest", true)?;
    let line = Line::along(cx, v, Some(d), idx, true)?;
    let k = cx.int_or(node, "k", 1)?;
    if let Some(y) = super::topk_lines::output(cx, node, out, idx)? {
        return Ok(y);
    }
    if let Some(vals) = short_line(cx, &line)? {
        let sorted = cx.bool_or(node, "sorted", true)?;
        let picks = select_kernel::topk_positions(&mut cx.kb, &vals, k, largest, sorted)?;
        let mut acc = cx.kb.i64(0);
        for (t, &(x, i)) in picks.iter().enumerate() {
            let pick = if out == 1 { i } else { x };
            acc = if t == 0 {
                pick
            } else {
                let tt = cx.kb.i64(t as i64);
                let here = cx.kb.cmp(CmpOp::Eq, idx[d], tt)?;
                cx.kb.select(here, pick, acc)?
            };
        }
        return Ok(acc);
    }
    if let Some(s) = super::merge_sort::sorting(cx, node)? {
        if let Some((x, i)) = super::merge_sort::output(cx, &s, idx)? {
            return Ok(if out == 1 { i } else { x });
        }
    }
    let (x, i) = of_rank(cx, &line, idx[d], largest)?;
    Ok(if out == 1 { i } else { x })
}

/// `kthvalue(self, k, dim, keepdim)`: the element of ascending rank `k - 1`; on short lines the
/// one PyTorch's quickselect leaves there (`select_kernel`), otherwise the first by position.
pub fn kthvalue(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let k = cx.int_or(node, "k", 1)?;
    if cx.sizes(v)?.is_empty() {
        return scalar_pick(cx, v, out);
    }
    let d = dim_of(cx, node, v, -1)?;
    let keep = cx.bool_or(node, "keepdim", false)?;
    let line = Line::along(cx, v, Some(d), idx, keep)?;
    if let Some(vals) = short_line(cx, &line)? {
        let (x, i) = select_kernel::kth_smallest(&mut cx.kb, &vals, k)?;
        return Ok(if out == 1 { i } else { x });
    }
    let j = cx.kb.i64(k - 1);
    let (x, i) = of_rank(cx, &line, j, false)?;
    Ok(if out == 1 { i } else { x })
}

/// `median`/`nanmedian` (`.default` over everything, `.dim` with indices): the lower median.
/// `median` of a line holding NaN is its first NaN; `nanmedian` skips NaN (all NaN gives NaN).
pub fn median(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let ignore_nan = node.target.starts_with("aten.nanmedian");
    if cx.sizes(v)?.is_empty() {
        return scalar_pick(cx, v, out);
    }
    let (dim, keep) = match node.arg("dim") {
        None | Some(Arg::None) => (None, false),
        _ => (Some(dim_of(cx, node, v, 0)?), cx.bool_or(node, "keepdim", false)?),
    };
    let line = Line::along(cx, v, dim, idx, keep)?;
    // NaN count of the line, and the position of its first NaN.
    let var = cx.kb.fresh_var()?;
    let p = cx.kb.var(var);
    let x = line.at(cx, p)?;
    let nan = is_nan(&mut cx.kb, x)?;
    let nan_i = cx.kb.cast(nan, Ty::I64);
    let nans = cx.kb.reduce(RedOp::Sum, var, line.n, nan_i)?;
    let big = cx.kb.i64(i64::MAX);
    let pos = cx.kb.select(nan, p, big)?;
    let first_nan = cx.kb.reduce(RedOp::Min, var, line.n, pos)?;
    let one = cx.kb.i64(1);
    let two = cx.kb.i64(2);
    let counted = if ignore_nan { cx.kb.binary(BinOp::Sub, line.n, nans)? } else { line.n };
    let m = cx.kb.binary(BinOp::Sub, counted, one)?;
    let zero = cx.kb.i64(0);
    let m = cx.kb.binary(BinOp::Max, m, zero)?;
    let j = cx.kb.binary(BinOp::Div, m, two)?;
    let (x, i) = of_rank(cx, &line, j, false)?;
    let any_nan = cx.kb.cmp(CmpOp::Gt, nans, zero)?;
    if ignore_nan {
        return Ok(if out == 1 { i } else { x });
    }
    // Without NaN the position is never read: keep it in bounds.
    let first_nan = cx.kb.select(any_nan, first_nan, zero)?;
    let x_at_nan = line.at(cx, first_nan)?;
    Ok(if out == 1 { cx.kb.select(any_nan, first_nan, i)? } else { cx.kb.select(any_nan, x_at_nan, x)? })
}

/// Whether a `mode` node's lines are longer than 16 (or of unknown length). ATen takes the
/// index among equal values from libstdc++'s `std::sort`, which is an insertion sort (stable:
/// the last position, as [`mode`] returns) on 16 elements or fewer and an unstable introsort
/// beyond; the registry runs longer lines as host steps through the interpreter, which repeats
/// that sort (`exec::ops::std_sort`).
pub fn mode_needs_host(graph: &crate::ir::Graph, node: &Node) -> bool {
    let Some(t) = node.arg("self").and_then(|a| a.values().first().copied()).and_then(|v| graph.value(v).tensor()) else { return true };
    let rank = t.sizes.len() as i64;
    if rank == 0 {
        return false;
    }
    let dim = match node.arg("dim") {
        Some(Arg::Int(d)) => *d,
        _ => -1,
    };
    let d = if dim < 0 { dim + rank } else { dim };
    usize::try_from(d).ok().and_then(|d| t.sizes.get(d)).and_then(crate::sym::Expr::as_int).is_none_or(|n| n > 16)
}

/// `mode(self, dim, keepdim)`: the most frequent value (the smallest among equally frequent
/// ones) and the last position holding it (PyTorch's index on lines of up to 16).
pub fn mode(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    if cx.sizes(v)?.is_empty() {
        return scalar_pick(cx, v, out);
    }
    let d = dim_of(cx, node, v, -1)?;
    let keep = cx.bool_or(node, "keepdim", false)?;
    let line = Line::along(cx, v, Some(d), idx, keep)?;
    let outer = cx.kb.fresh_var()?;
    let i = cx.kb.var(outer);
    let xi = line.at(cx, i)?;
    let inner = cx.kb.fresh_var()?;
    let k = cx.kb.var(inner);
    let xk = line.at(cx, k)?;
    let eq = same(&mut cx.kb, xk, xi)?;
    let eq = cx.kb.cast(eq, Ty::I64);
    let count = cx.kb.reduce(RedOp::Sum, inner, line.n, eq)?;
    let ty = cx.kb.ty(xi);
    let kb = &mut cx.kb;
    let (bv, bc, bi) = (kb.carried(outer, 0, ty), kb.carried(outer, 1, Ty::I64), kb.carried(outer, 2, Ty::I64));
    let more = kb.cmp(CmpOp::Gt, count, bc)?;
    let as_many = kb.cmp(CmpOp::Eq, count, bc)?;
    let smaller = less(kb, xi, bv)?;
    let smaller = kb.and(as_many, smaller)?;
    let equal = same(kb, xi, bv)?;
    let later = kb.and(as_many, equal)?;
    let take = or(kb, more, smaller)?;
    let take = or(kb, take, later)?;
    let nv = kb.select(take, xi, bv)?;
    let nc = kb.select(take, count, bc)?;
    let ni = kb.select(take, i, bi)?;
    let zero = kb.i64(0);
    let x0 = line.at(cx, zero)?;
    let r = cx.kb.iterate(outer, line.n, vec![x0, zero, zero], vec![nv, nc, ni])?;
    Ok(if out == 1 { r[2] } else { r[0] })
}

/// Which running extreme an index-carrying fold keeps.
#[derive(Clone, Copy)]
enum Extreme {
    Max,
    Min,
}

/// The first position of the line's maximum or minimum (NaN counts as the extreme, its first
/// occurrence wins), as `max.dim`/`argmax` pick it.
fn arg_extreme(cx: &mut Ctx<'_>, line: &Line, which: Extreme) -> Result<(ExprId, ExprId), LowerError> {
    let var = cx.kb.fresh_var()?;
    let p = cx.kb.var(var);
    let x = line.at(cx, p)?;
    let ty = cx.kb.ty(x);
    let kb = &mut cx.kb;
    let (bv, bi) = (kb.carried(var, 0, ty), kb.carried(var, 1, Ty::I64));
    let beats = match which {
        Extreme::Max => kb.cmp(CmpOp::Gt, x, bv)?,
        Extreme::Min => kb.cmp(CmpOp::Lt, x, bv)?,
    };
    let (nx, nb) = (is_nan(kb, x)?, is_nan(kb, bv)?);
    let not_nb = not(kb, nb);
    let nan_first = kb.and(nx, not_nb)?;
    let take = or(kb, beats, nan_first)?;
    let nv = kb.select(take, x, bv)?;
    let ni = kb.select(take, p, bi)?;
    let zero = kb.i64(0);
    let x0 = line.at(cx, zero)?;
    let r = cx.kb.iterate(var, line.n, vec![x0, zero], vec![nv, ni])?;
    Ok((r[0], r[1]))
}

fn reduce_line(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<Line, LowerError> {
    let v = cx.tensor(node, "self")?;
    let keep = cx.bool_or(node, "keepdim", false)?;
    let dim = match node.arg("dim") {
        None | Some(Arg::None) => None,
        _ if cx.sizes(v)?.is_empty() => None,
        _ => Some(dim_of(cx, node, v, 0)?),
    };
    Line::along(cx, v, dim, idx, keep)
}

/// `max.dim(self, dim, keepdim)`: values and indices.
pub fn max_dim(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let line = reduce_line(cx, node, idx)?;
    let (x, i) = arg_extreme(cx, &line, Extreme::Max)?;
    Ok(if out == 1 { i } else { x })
}

pub fn min_dim(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let line = reduce_line(cx, node, idx)?;
    let (x, i) = arg_extreme(cx, &line, Extreme::Min)?;
    Ok(if out == 1 { i } else { x })
}

/// `aminmax(self, dim?, keepdim)`: (min, max), NaN propagating.
pub fn aminmax(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let line = reduce_line(cx, node, idx)?;
    let which = if out == 0 { Extreme::Min } else { Extreme::Max };
    Ok(arg_extreme(cx, &line, which)?.0)
}

/// `cummax`/`cummin(self, dim)`: the running extreme over `0..=i` and its last position (a NaN
/// takes over and every later NaN moves the index, as PyTorch's scan does).
fn cum_extreme(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId], which: Extreme) -> R {
    let v = cx.tensor(node, "self")?;
    if idx.is_empty() {
        return scalar_pick(cx, v, out);
    }
    if let Some(s) = super::block_scan::scanning(cx, node)? {
        if let Some(y) = super::block_scan::output(cx, &s, out, idx)? {
            return Ok(y);
        }
    }
    let d = dim_of(cx, node, v, 0)?;
    let line = Line::along(cx, v, Some(d), idx, true)?;
    let var = cx.kb.fresh_var()?;
    let p = cx.kb.var(var);
    let x = line.at(cx, p)?;
    let ty = cx.kb.ty(x);
    let kb = &mut cx.kb;
    let (bv, bi) = (kb.carried(var, 0, ty), kb.carried(var, 1, Ty::I64));
    let reaches = match which {
        Extreme::Max => kb.cmp(CmpOp::Ge, x, bv)?,
        Extreme::Min => kb.cmp(CmpOp::Le, x, bv)?,
    };
    let (nx, nb) = (is_nan(kb, x)?, is_nan(kb, bv)?);
    let not_nb = not(kb, nb);
    let ordinary = kb.and(not_nb, reaches)?;
    let take = or(kb, nx, ordinary)?;
    let nv = kb.select(take, x, bv)?;
    let ni = kb.select(take, p, bi)?;
    let (zero, one) = (kb.i64(0), kb.i64(1));
    let extent = kb.binary(BinOp::Add, idx[d], one)?;
    let x0 = line.at(cx, zero)?;
    let r = cx.kb.iterate(var, extent, vec![x0, zero], vec![nv, ni])?;
    Ok(if out == 1 { r[1] } else { r[0] })
}

pub fn cummax(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    cum_extreme(cx, node, out, idx, Extreme::Max)
}

pub fn cummin(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    cum_extreme(cx, node, out, idx, Extreme::Min)
}

/// `logcumsumexp(self, dim)`: `m + log Σ_{k≤i} exp(x_k − m)` with `m` the running maximum (an
/// infinite maximum is the result itself).
pub fn logcumsumexp(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    if idx.is_empty() {
        return cx.read(v, idx);
    }
    if let Some(s) = super::block_scan::scanning(cx, node)? {
        if let Some(y) = super::block_scan::output(cx, &s, 0, idx)? {
            return Ok(y);
        }
    }
    let d = dim_of(cx, node, v, 0)?;
    let ty = super::pointwise::out_ty(cx, node)?;
    let line = Line::along(cx, v, Some(d), idx, true)?;
    let one = cx.kb.i64(1);
    let extent = cx.kb.binary(BinOp::Add, idx[d], one)?;
    let var = cx.kb.fresh_var()?;
    let p = cx.kb.var(var);
    let x = line.at(cx, p)?;
    let x = cx.kb.cast(x, ty);
    let m = cx.kb.reduce(RedOp::Max, var, extent, x)?;
    let var2 = cx.kb.fresh_var()?;
    let p2 = cx.kb.var(var2);
    let x2 = line.at(cx, p2)?;
    let x2 = cx.kb.cast(x2, ty);
    let kb = &mut cx.kb;
    let dlt = kb.binary(BinOp::Sub, x2, m)?;
    let e = kb.unary(UnOp::Exp, dlt);
    let s = kb.reduce(RedOp::Sum, var2, extent, e)?;
    let l = kb.unary(UnOp::Log, s);
    let y = kb.binary(BinOp::Add, m, l)?;
    let a = kb.unary(UnOp::Abs, m);
    let inf = kb.float_like(f64::INFINITY, a);
    let is_inf = kb.cmp(CmpOp::Eq, a, inf)?;
    Ok(kb.select(is_inf, m, y)?)
}
