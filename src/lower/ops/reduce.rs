//! Reductions over some dims (keepdim or not): each output element folds a serial loop nest
//! over the reduced coordinates. Two-pass variance, as PyTorch computes it.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty, UnOp};
use super::super::LowerError;
use crate::ir::{Arg, Node, ValueId};
use crate::sym;

/// The reduced input, its sizes, the reduced dims, and the input coordinates of output `idx`
/// (reduced dims left at 0, to be bound by the reduction).
pub(super) struct Red {
    pub v: ValueId,
    pub sizes: Vec<sym::Expr>,
    pub dims: Vec<usize>,
    pub base: Vec<ExprId>,
}

pub(super) fn setup(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], dims: Option<Vec<i64>>, keepdim: bool) -> Result<Red, LowerError> {
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    let mut dims = wrap_dims(&dims.unwrap_or_default(), sizes.len()).map_err(|m| cx.err(node, m))?;
    // A 0-dim input accepts dim 0 or -1 and reduces nothing.
    dims.retain(|&d| d < sizes.len());
    let zero = cx.kb.i64(0);
    let mut base = Vec::with_capacity(sizes.len());
    let mut k = 0;
    for d in 0..sizes.len() {
        if dims.contains(&d) {
            base.push(zero);
            if keepdim {
                k += 1;
            }
        } else {
            base.push(*idx.get(k).ok_or_else(|| cx.err(node, "output rank does not match the reduction"))?);
            k += 1;
        }
    }
    Ok(Red { v, sizes, dims, base })
}

fn dims_arg(cx: &Ctx<'_>, node: &Node) -> Result<Option<Vec<i64>>, LowerError> {
    match node.arg("dim") {
        None | Some(Arg::None) => Ok(None),
        _ => cx.ints_or(node, "dim", &[]).map(Some),
    }
}

/// Sum, max or min in the output's compute type: integers (and bool, summed as int64) fold
/// exactly in i64.
fn simple(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], op: RedOp) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    let v = r.v;
    let ty = super::pointwise::out_ty(cx, node)?;
    cx.reduce_dims(op, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        Ok(cx.kb.cast(x, ty))
    })
}

pub fn sum(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    simple(cx, node, idx, RedOp::Sum)
}

pub fn amax(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    simple(cx, node, idx, RedOp::Max)
}

pub fn amin(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    simple(cx, node, idx, RedOp::Min)
}

/// Mean of `r`'s input over its reduced dims.
pub(super) fn mean_of(cx: &mut Ctx<'_>, r: &Red) -> Result<ExprId, LowerError> {
    let v = r.v;
    let s = cx.reduce_dims(RedOp::Sum, &r.sizes, &r.dims, &r.base, &mut |cx, i| cx.read(v, i))?;
    let n = cx.count(&r.sizes, &r.dims)?;
    Ok(cx.kb.binary(BinOp::Div, s, n)?)
}

/// Σ (x - mean)² / (n - correction).
pub(super) fn var_of(cx: &mut Ctx<'_>, r: &Red, mean: ExprId, correction: f64) -> Result<ExprId, LowerError> {
    let v = r.v;
    let ss = cx.reduce_dims(RedOp::Sum, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        let d = cx.kb.binary(BinOp::Sub, x, mean)?;
        Ok(cx.kb.binary(BinOp::Mul, d, d)?)
    })?;
    let n = cx.count(&r.sizes, &r.dims)?;
    let c = cx.kb.f32(correction as f32);
    let denom = cx.kb.binary(BinOp::Sub, n, c)?;
    let zero = cx.kb.f32(0.0);
    let denom = cx.kb.binary(BinOp::Max, denom, zero)?;
    Ok(cx.kb.binary(BinOp::Div, ss, denom)?)
}

pub fn mean(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    mean_of(cx, &r)
}

fn correction(cx: &Ctx<'_>, node: &Node) -> Result<f64, LowerError> {
    if node.target.ends_with(".dim") || matches!(node.arg("unbiased"), Some(Arg::Bool(_))) {
        return Ok(if cx.bool_or(node, "unbiased", true)? { 1.0 } else { 0.0 });
    }
    cx.float_or(node, "correction", 1.0)
}

pub fn var(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    let m = mean_of(cx, &r)?;
    var_of(cx, &r, m, correction(cx, node)?)
}

pub fn std(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = var(cx, node, out, idx)?;
    Ok(cx.kb.unary(UnOp::Sqrt, v))
}

pub fn var_mean(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    let m = mean_of(cx, &r)?;
    if out == 1 {
        return Ok(m);
    }
    let v = var_of(cx, &r, m, correction(cx, node)?)?;
    Ok(if node.target.starts_with("aten.std_mean") { cx.kb.unary(UnOp::Sqrt, v) } else { v })
}

/// `nansum` / `nanmean(self, dim, keepdim, dtype)`: NaN elements count as absent (integers
/// have none and sum as int64).
fn nan_fold(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], mean: bool) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    let v = r.v;
    let ty = super::pointwise::out_ty(cx, node)?;
    let s = cx.reduce_dims(RedOp::Sum, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        let x = cx.kb.cast(x, ty);
        if !ty.is_float() {
            return Ok(x);
        }
        let ok = cx.kb.cmp(CmpOp::Eq, x, x)?;
        let zero = cx.kb.float_like(0.0, x);
        Ok(cx.kb.select(ok, x, zero)?)
    })?;
    if !mean {
        return Ok(s);
    }
    let n = cx.reduce_dims(RedOp::Sum, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        let x = cx.kb.cast(x, ty);
        let ok = cx.kb.cmp(CmpOp::Eq, x, x)?;
        Ok(cx.kb.cast(ok, ty))
    })?;
    Ok(cx.kb.binary(BinOp::Div, s, n)?)
}

pub fn nansum(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    nan_fold(cx, node, idx, false)
}

pub fn nanmean(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    nan_fold(cx, node, idx, true)
}

/// `sum_to_size(size)`: sums the leading dims `size` lacks and the dims it has as 1.
pub fn sum_to_size(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    let size = cx.ints_or(node, "size", &[])?;
    let lead = sizes.len().saturating_sub(size.len());
    let ty = super::pointwise::out_ty(cx, node)?;
    let dims: Vec<usize> = (0..sizes.len()).filter(|&d| d < lead || (size[d - lead] == 1 && sizes[d].as_int() != Some(1))).collect();
    let zero = cx.kb.i64(0);
    let base: Vec<ExprId> = (0..sizes.len()).map(|d| if d < lead { zero } else { idx[d - lead] }).collect();
    cx.reduce_dims(RedOp::Sum, &sizes, &dims, &base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        Ok(cx.kb.cast(x, ty))
    })
}

/// `cumsum`/`cumprod(self, dim)`: element `i` folds the input over `0..=i` along `dim` (a serial
/// loop per element, in the output's compute type).
fn scan(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], op: RedOp) -> Result<ExprId, LowerError> {
    let v = cx.tensor(node, "self")?;
    let rank = idx.len();
    if rank == 0 {
        return cx.read(v, idx);
    }
    if let Some(s) = super::block_scan::scanning(cx, node)? {
        if let Some(y) = super::block_scan::output(cx, &s, 0, idx)? {
            return Ok(y);
        }
    }
    let d = wrap_dims(&[cx.int_or(node, "dim", 0)?], rank).map_err(|m| cx.err(node, m))?[0];
    let ty = super::pointwise::out_ty(cx, node)?;
    let var = cx.kb.fresh_var()?;
    let mut at = idx.to_vec();
    at[d] = cx.kb.var(var);
    let x = cx.read(v, &at)?;
    let body = cx.kb.cast(x, ty);
    let one = cx.kb.i64(1);
    let extent = cx.kb.binary(BinOp::Add, idx[d], one)?;
    Ok(cx.kb.reduce(op, var, extent, body)?)
}

pub fn cumsum(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    scan(cx, node, idx, RedOp::Sum)
}

pub fn cumprod(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    scan(cx, node, idx, RedOp::Prod)
}

/// `linalg_vector_norm(self, ord, dim, keepdim)`: `(Σ|x|^ord)^(1/ord)`; ±inf are max/min of
/// `|x|`, 0 counts nonzeros.
pub fn vector_norm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let ord = cx.float_or(node, "ord", 2.0)?;
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    norm_of(cx, node, &r, ord)
}

/// Whether a `linalg_norm` / `linalg_matrix_norm` node asks for a matrix norm other than
/// Frobenius ('nuc' and ±2 need singular values, ±1 and ±inf per-axis folds): [`linalg_norm`]
/// has no kernel for those, so the registry runs such nodes as host steps.
pub fn matrix_norm_needs_host(graph: &crate::ir::Graph, node: &Node) -> bool {
    let matrix = || {
        node.target.contains("matrix_norm")
            || match node.arg("dim") {
                Some(Arg::Ints(d)) => d.len() == 2,
                Some(Arg::Int(_)) => false,
                _ => node.arg("self").and_then(|a| a.values().first().copied()).and_then(|v| graph.value(v).tensor()).is_some_and(|t| t.sizes.len() == 2),
            }
    };
    match node.arg("ord") {
        None | Some(Arg::None) => false,
        Some(Arg::String(s)) => s != "fro",
        Some(_) => matrix(),
    }
}

/// `linalg_norm` / `linalg_matrix_norm`: vector norms (no dim, or one), and the Frobenius norm
/// of matrices (`ord` None or 'fro'), which is the 2-norm of their elements. Other matrix norms
/// need singular values or per-axis folds and run on the host ([`matrix_norm_needs_host`]).
pub fn linalg_norm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let dims = dims_arg(cx, node)?;
    let rank = cx.sizes(cx.tensor(node, "self")?)?.len();
    let matrix = node.target.contains("matrix_norm") || dims.as_ref().map_or(rank == 2, |d| d.len() == 2);
    let ord = match node.arg("ord") {
        None | Some(Arg::None) => 2.0,
        Some(Arg::String(s)) if s == "fro" => 2.0,
        Some(Arg::String(s)) => return Err(cx.err(node, format!("the `{s}` matrix norm needs singular values; it has no kernel"))),
        _ if matrix => return Err(cx.err(node, "matrix norms of numeric order have no kernel; only 'fro'")),
        _ => cx.float_or(node, "ord", 2.0)?,
    };
    let dims = if node.target.contains("matrix_norm") { Some(dims.unwrap_or(vec![-2, -1])) } else { dims };
    let r = setup(cx, node, idx, dims, keepdim)?;
    norm_of(cx, node, &r, ord)
}

/// `renorm(self, p, dim, maxnorm)`: each slice along `dim` whose p-norm exceeds `maxnorm` is
/// scaled by `maxnorm / (norm + 1e-7)`.
pub fn renorm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    let d = wrap_dims(&[cx.int_or(node, "dim", 0)?], sizes.len()).map_err(|m| cx.err(node, m))?[0];
    let p = cx.float_or(node, "p", 2.0)?;
    let maxnorm = cx.float_or(node, "maxnorm", 1.0)?;
    let zero = cx.kb.i64(0);
    let mut base = vec![zero; sizes.len()];
    base[d] = idx[d];
    let dims = (0..sizes.len()).filter(|&k| k != d).collect();
    let r = Red { v, sizes, dims, base };
    let norm = norm_of(cx, node, &r, p)?;
    let x = cx.read(v, idx)?;
    let ty = super::pointwise::out_ty(cx, node)?;
    let x = cx.kb.cast(x, ty);
    let (m, tiny, one) = (cx.kb.float_like(maxnorm, norm), cx.kb.float_like(1e-7, norm), cx.kb.float_like(1.0, norm));
    let big = cx.kb.cmp(CmpOp::Gt, norm, m)?;
    let denom = cx.kb.binary(BinOp::Add, norm, tiny)?;
    let scale = cx.kb.binary(BinOp::Div, m, denom)?;
    let factor = cx.kb.select(big, scale, one)?;
    Ok(cx.kb.binary(BinOp::Mul, x, factor)?)
}

/// `(Σ|x|^ord)^(1/ord)` over `r`'s reduced dims; ±inf are max/min of `|x|`, 0 counts nonzeros.
fn norm_of(cx: &mut Ctx<'_>, node: &Node, r: &Red, ord: f64) -> Result<ExprId, LowerError> {
    let v = r.v;
    let ty = super::pointwise::out_ty(cx, node)?;
    let op = if ord == f64::INFINITY {
        RedOp::Max
    } else if ord == f64::NEG_INFINITY {
        RedOp::Min
    } else {
        RedOp::Sum
    };
    let s = cx.reduce_dims(op, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        let x = cx.kb.cast(x, ty);
        let a = cx.kb.unary(UnOp::Abs, x);
        Ok(if ord == 0.0 {
            let zero = cx.kb.float_like(0.0, a);
            let nz = cx.kb.cmp(super::super::kernel::CmpOp::Ne, a, zero)?;
            cx.kb.cast(nz, ty)
        } else if ord == 1.0 || ord.is_infinite() {
            a
        } else if ord == 2.0 {
            cx.kb.binary(BinOp::Mul, a, a)?
        } else {
            let p = cx.kb.float_like(ord, a);
            cx.kb.binary(BinOp::Pow, a, p)?
        })
    })?;
    Ok(if ord == 2.0 {
        cx.kb.unary(UnOp::Sqrt, s)
    } else if ord == 0.0 || ord == 1.0 || ord.is_infinite() {
        s
    } else {
        let p = cx.kb.float_like(1.0 / ord, s);
        cx.kb.binary(BinOp::Pow, s, p)?
    })
}

/// `logsumexp(self, dim, keepdim)`: `m + log Σ exp(x − m)` with `m` the max (an infinite max is
/// the result itself).
pub fn logsumexp(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    let v = r.v;
    let ty = super::pointwise::out_ty(cx, node)?;
    let m = cx.reduce_dims(RedOp::Max, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        Ok(cx.kb.cast(x, ty))
    })?;
    let s = cx.reduce_dims(RedOp::Sum, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        let x = cx.kb.cast(x, ty);
        let d = cx.kb.binary(BinOp::Sub, x, m)?;
        Ok(cx.kb.unary(UnOp::Exp, d))
    })?;
    let l = cx.kb.unary(UnOp::Log, s);
    let y = cx.kb.binary(BinOp::Add, m, l)?;
    let a = cx.kb.unary(UnOp::Abs, m);
    let inf = cx.kb.float_like(f64::INFINITY, a);
    let is_inf = cx.kb.cmp(super::super::kernel::CmpOp::Eq, a, inf)?;
    Ok(cx.kb.select(is_inf, m, y)?)
}

/// `all`/`any`/`count_nonzero`: nonzero flags folded in i64 (min, max, sum); the store turns
/// the result into bool where the output is bool.
fn flags(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], op: RedOp) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    let v = r.v;
    cx.reduce_dims(op, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        let b = cx.kb.cast(x, super::super::kernel::Ty::Bool);
        Ok(cx.kb.cast(b, super::super::kernel::Ty::I64))
    })
}

pub fn all(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    flags(cx, node, idx, RedOp::Min)
}

pub fn any(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    flags(cx, node, idx, RedOp::Max)
}

/// `hash_tensor(self, dim=[], keepdim=False, mode=0)`: the exclusive or of the reduced elements'
/// 64-bit words (floats: the bits of the value widened to f64; integers: sign-extended; bool:
/// 0 or 1), stored as uint64 (the interpreter's `hash_tensor` says why).
pub fn hash_tensor(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let mode = cx.int_or(node, "mode", 0)?;
    if mode != 0 {
        return Err(cx.err(node, format!("mode {mode}: PyTorch defines only mode 0 (xor_sum)")));
    }
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let r = setup(cx, node, idx, dims_arg(cx, node)?, keepdim)?;
    let v = r.v;
    cx.reduce_dims(RedOp::Xor, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        Ok(match cx.kb.ty(x) {
            Ty::F32 | Ty::F64 => {
                let wide = cx.kb.cast(x, Ty::F64);
                cx.kb.bits(wide)?
            }
            Ty::Bool | Ty::I64 | Ty::U32 => cx.kb.cast(x, Ty::I64),
        })
    })
}

pub fn count_nonzero(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    flags(cx, node, idx, RedOp::Sum)
}

/// `max()`/`min()` of every element.
pub fn max_all(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    simple(cx, node, idx, RedOp::Max)
}

pub fn min_all(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    simple(cx, node, idx, RedOp::Min)
}

/// `prod(self, dim?, keepdim, dtype)`: integers multiply in i64.
pub fn prod(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let dims = match node.arg("dim") {
        Some(Arg::Int(d)) => Some(vec![*d]),
        _ => None,
    };
    let r = setup(cx, node, idx, dims, keepdim)?;
    let v = r.v;
    let ty = super::pointwise::out_ty(cx, node)?;
    cx.reduce_dims(RedOp::Prod, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        Ok(cx.kb.cast(x, ty))
    })
}

/// `argmax`/`argmin(self, dim, keepdim)`: the position (along `dim`, or in the flattened input
/// without one) of the first maximum/minimum; NaN counts as the extreme, as in PyTorch.
fn arg_extreme(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], op: RedOp) -> Result<ExprId, LowerError> {
    let keepdim = cx.bool_or(node, "keepdim", false)?;
    let dims = match node.arg("dim") {
        Some(Arg::Int(d)) => Some(vec![*d]),
        _ => None,
    };
    let r = setup(cx, node, idx, dims, keepdim)?;
    let v = r.v;
    let strides = crate::ir::TensorMeta::contiguous_strides(&r.sizes);
    let ty = cx.meta(v)?.dtype;
    let float = ty.is_floating();
    let m = cx.reduce_dims(op, &r.sizes, &r.dims, &r.base, &mut |cx, i| cx.read(v, i))?;
    let has_nan = if float {
        let any = cx.reduce_dims(RedOp::Max, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
            let x = cx.read(v, i)?;
            let nan = cx.kb.cmp(CmpOp::Ne, x, x)?;
            Ok(cx.kb.cast(nan, super::super::kernel::Ty::I64))
        })?;
        let zero = cx.kb.i64(0);
        Some(cx.kb.cmp(CmpOp::Gt, any, zero)?)
    } else {
        None
    };
    let dims = r.dims.clone();
    cx.reduce_dims(RedOp::Min, &r.sizes, &r.dims, &r.base, &mut |cx, i| {
        let x = cx.read(v, i)?;
        let mut hit = cx.kb.cmp(CmpOp::Eq, x, m)?;
        if let Some(h) = has_nan {
            let nan = cx.kb.cmp(CmpOp::Ne, x, x)?;
            hit = cx.kb.select(h, nan, hit)?;
        }
        let mut pos = cx.kb.i64(0);
        for &d in &dims {
            let s = cx.kb.size(&strides[d]);
            let s = if dims.len() == 1 { cx.kb.i64(1) } else { s };
            let t = cx.kb.binary(BinOp::Mul, i[d], s)?;
            pos = cx.kb.binary(BinOp::Add, pos, t)?;
        }
        let none = cx.kb.i64(i64::MAX);
        Ok(cx.kb.select(hit, pos, none)?)
    })
}

pub fn argmax(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    arg_extreme(cx, node, idx, RedOp::Max)
}

pub fn argmin(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    arg_extreme(cx, node, idx, RedOp::Min)
}
