//! Ops that create values from coordinates (`arange`, `iota`, `eye`, `tril_indices`,
//! `triu_indices`, `linspace`, `logspace`), casts, and `cat` (with the helper the stack family
//! shares).
//!
//! Ramps are computed in i64 and converted to the output dtype (float32 ramps are exact for
//! values below 2^24).

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId, Ty, UnOp};
use super::super::LowerError;
use super::pointwise::out_sizes;
use crate::ir::{Arg, Node, ValueId};
use crate::sym;

/// `start + step * i` at coordinate `i`, as f32.
fn ramp(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let i = *idx.first().ok_or_else(|| cx.err(node, "a ramp has one dimension"))?;
    let ty = super::pointwise::out_ty(cx, node)?;
    let is_float = |a: Option<&Arg>| matches!(a, Some(Arg::Float(_)));
    if is_float(node.arg("start")) || is_float(node.arg("step")) {
        let (start, step) = (cx.float_or(node, "start", 0.0)?, cx.float_or(node, "step", 1.0)?);
        if !ty.is_float() {
            // An integer result takes the scalars in its own type first (truncated), as
            // PyTorch's integer arange accumulates in int64.
            let (start, step) = (cx.kb.i64(start.trunc() as i64), cx.kb.i64(step.trunc() as i64));
            let scaled = cx.kb.binary(BinOp::Mul, i, step)?;
            let v = cx.kb.binary(BinOp::Add, scaled, start)?;
            return Ok(cx.kb.cast(v, ty));
        }
        // `start + i * step` in double, then rounded to the result's type (PyTorch's CPU kernel).
        let (start, step) = (cx.kb.f64(start), cx.kb.f64(step));
        let i = cx.kb.cast(i, Ty::F64);
        let scaled = cx.kb.binary(BinOp::Mul, i, step)?;
        let v = cx.kb.binary(BinOp::Add, scaled, start)?;
        return Ok(cx.kb.cast(v, ty));
    }
    let (start, step) = (cx.int_or(node, "start", 0)?, cx.int_or(node, "step", 1)?);
    let (start, step) = (cx.kb.i64(start), cx.kb.i64(step));
    let scaled = cx.kb.binary(BinOp::Mul, i, step)?;
    let v = cx.kb.binary(BinOp::Add, scaled, start)?;
    Ok(cx.kb.cast(v, ty))
}

pub fn arange(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    ramp(cx, node, idx)
}

pub fn iota(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    ramp(cx, node, idx)
}

/// `prims.convert_element_type`: values are already f32 in kernels; only float targets lower.
pub fn convert_element_type(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let to = match node.arg("dtype") {
        Some(Arg::ScalarType(d)) => *d,
        _ => return Err(cx.err(node, "missing dtype")),
    };
    let ty = Elem::from_dtype(to).ok_or_else(|| cx.err(node, format!("kernels do not store {to}")))?.ty();
    let v = cx.tensor(node, "a")?;
    let r = cx.read(v, idx)?;
    Ok(cx.kb.cast(r, ty))
}

/// `cat(tensors, dim)`: each output element comes from the input whose slice along `dim` holds
/// it.
pub fn cat(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let inputs = match node.arg("tensors") {
        Some(Arg::Tensors(v)) if !v.is_empty() => v.clone(),
        _ => return Err(cx.err(node, "cat needs a non-empty tensor list")),
    };
    let rank = out_sizes(cx, node)?.len();
    let d = match node.arg("dim") {
        Some(Arg::Int(d)) => wrap_dims(&[*d], rank).map_err(|m| cx.err(node, m))?[0],
        _ => 0,
    };
    let parts = inputs.iter().map(|v| Ok((*v, cx.sizes(*v)?))).collect::<Result<Vec<_>, LowerError>>()?;
    cat_at(cx, node, &parts, d, idx)
}

/// The element at `idx` of the concatenation along `d` of `parts`, each an input read as if it
/// had the given sizes (the output's rank; they differ from the input's own by size-1 dims
/// only, as `hstack`/`vstack`/`column_stack` lift their inputs). Every input is read at a
/// coordinate clamped into its own range (so no load is out of bounds), converted to the
/// output's compute type, and a select picks the right one. Legacy empty inputs (no elements
/// along `d`) are skipped, as `torch.cat` skips them.
pub(super) fn cat_at(cx: &mut Ctx<'_>, node: &Node, parts: &[(ValueId, Vec<sym::Expr>)], d: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let ty = super::pointwise::out_ty(cx, node)?;
    let (zero, one) = (cx.kb.i64(0), cx.kb.i64(1));
    let mut offset = zero;
    let mut picked: Option<ExprId> = None;
    let mut read = Vec::new();
    for (v, sizes) in parts {
        // A legacy empty input (1-D, size 0) may sit beside inputs of any rank.
        let legacy_empty = sizes.len() == 1 && sizes[0].as_int() == Some(0);
        if legacy_empty || sizes.get(d).and_then(sym::Expr::as_int) == Some(0) {
            continue;
        }
        let (Some(extent), Some(&at_d)) = (sizes.get(d), idx.get(d)) else {
            return Err(cx.err(node, format!("tensors: an input of rank {} cannot be concatenated along dim {d}", sizes.len())));
        };
        if sizes.len() != idx.len() {
            return Err(cx.err(node, format!("tensors: an input of rank {} in a concatenation of rank {}", sizes.len(), idx.len())));
        }
        let n = cx.kb.size(extent);
        let local = cx.kb.binary(BinOp::Sub, at_d, offset)?;
        let last = cx.kb.binary(BinOp::Sub, n, one)?;
        let clamped = cx.kb.binary(BinOp::Min, local, last)?;
        let clamped = cx.kb.binary(BinOp::Max, clamped, zero)?;
        let mut at = idx.to_vec();
        at[d] = clamped;
        let value = super::view::reshape_read(cx, *v, &at, sizes)?;
        let value = cx.kb.cast(value, ty);
        let end = cx.kb.binary(BinOp::Add, offset, n)?;
        read.push((end, value));
        offset = end;
    }
    // Innermost first: the last input is the default, earlier ones win below their end.
    for (end, value) in read.into_iter().rev() {
        picked = Some(match picked {
            None => value,
            Some(rest) => {
                let inside = cx.kb.cmp(CmpOp::Lt, idx[d], end)?;
                cx.kb.select(inside, value, rest)?
            }
        });
    }
    match picked {
        Some(p) => Ok(p),
        // Every input is empty along `d`, so the output has no elements to compute.
        None => Ok(cx.kb.cast(zero, ty)),
    }
}

/// `eye(n, m)`: ones on the main diagonal.
pub fn eye(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    if idx.len() != 2 {
        return Err(cx.err(node, "eye is a matrix"));
    }
    let on = cx.kb.cmp(CmpOp::Eq, idx[0], idx[1])?;
    let ty = super::pointwise::out_ty(cx, node)?;
    Ok(cx.kb.cast(on, ty))
}

/// `tril_indices(row, col, offset)` / `triu_indices`: column `j` of the `[2, N]` output is the
/// `j`-th cell of the triangle in row-major order. Its row is found by a state loop over the
/// rows that counts the cells before each (O(row) per element); the column follows from the
/// row's first cell.
pub fn tri_indices(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let lower = node.target.starts_with("aten.tril");
    let (row, col, offset) = (cx.int_or(node, "row", 0)?, cx.int_or(node, "col", 0)?, cx.int_or(node, "offset", 0)?);
    let [which, j] = idx[..] else { return Err(cx.err(node, "triangle indices are a [2, N] tensor")) };
    let kb = &mut cx.kb;
    let (zero, one, cols, off) = (kb.i64(0), kb.i64(1), kb.i64(col), kb.i64(offset));
    // The first column of row `r` in the triangle and the number of its cells.
    let span = |kb: &mut super::super::kernel::KernelBuilder, r: ExprId| -> Result<(ExprId, ExprId), LowerError> {
        let d = kb.binary(BinOp::Add, r, off)?;
        Ok(if lower {
            let end = kb.binary(BinOp::Add, d, one)?;
            let end = kb.binary(BinOp::Max, end, zero)?;
            (zero, kb.binary(BinOp::Min, end, cols)?)
        } else {
            let first = kb.binary(BinOp::Max, d, zero)?;
            let first = kb.binary(BinOp::Min, first, cols)?;
            (first, kb.binary(BinOp::Sub, cols, first)?)
        })
    };
    let var = kb.fresh_var()?;
    let q = kb.var(var);
    let (before, r, start) = (kb.carried(var, 0, Ty::I64), kb.carried(var, 1, Ty::I64), kb.carried(var, 2, Ty::I64));
    let (_, n) = span(kb, q)?;
    let after = kb.binary(BinOp::Add, before, n)?;
    let from = kb.cmp(CmpOp::Le, before, j)?;
    let until = kb.cmp(CmpOp::Lt, j, after)?;
    let hit = kb.and(from, until)?;
    let nr = kb.select(hit, q, r)?;
    let nstart = kb.select(hit, before, start)?;
    let rows = kb.i64(row);
    let found = kb.iterate(var, rows, vec![zero, zero, zero], vec![after, nr, nstart])?;
    let (r, start) = (found[1], found[2]);
    let (first, _) = span(kb, r)?;
    let c = kb.binary(BinOp::Sub, j, start)?;
    let c = kb.binary(BinOp::Add, first, c)?;
    let is_row = kb.cmp(CmpOp::Eq, which, zero)?;
    let v = kb.select(is_row, r, c)?;
    let ty = super::pointwise::out_ty(cx, node)?;
    Ok(cx.kb.cast(v, ty))
}

/// A `start`/`end` argument of `linspace`/`logspace`: a number or a 0-D tensor, in `ty`.
fn endpoint(cx: &mut Ctx<'_>, node: &Node, name: &str, ty: Ty) -> Result<ExprId, LowerError> {
    let e = match cx.opt_tensor(node, name) {
        Some(v) => cx.read(v, &[])?,
        None => match node.arg(name) {
            Some(Arg::Float(f)) if ty == Ty::F64 => cx.kb.f64(*f),
            _ => cx.opt_number(node, name)?.ok_or_else(|| cx.err(node, format!("argument `{name}` is missing")))?,
        },
    };
    Ok(cx.kb.cast(e, ty))
}

/// Point `i` of `steps` evenly spaced from `start` to `end`, as PyTorch's CPU kernel computes
/// it: from the start for the first half, from the end for the second, in the output's type
/// (float16/bfloat16 in float32), or in float64 from integer endpoints for integer outputs.
fn spaced(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let i = *idx.first().ok_or_else(|| cx.err(node, "a ramp has one dimension"))?;
    let steps = cx.int_or(node, "steps", 1)?.max(1);
    let out = super::pointwise::out_ty(cx, node)?;
    let ty = if out == Ty::F32 { Ty::F32 } else { Ty::F64 };
    let (mut a, mut b) = (endpoint(cx, node, "start", ty)?, endpoint(cx, node, "end", ty)?);
    if out == Ty::I64 {
        a = cx.kb.unary(UnOp::Trunc, a);
        b = cx.kb.unary(UnOp::Trunc, b);
    }
    let span = cx.kb.binary(BinOp::Sub, b, a)?;
    let n1 = cx.kb.float_like((steps - 1).max(1) as f64, span);
    let step = cx.kb.binary(BinOp::Div, span, n1)?;
    let fi = cx.kb.cast(i, ty);
    let lo = cx.kb.binary(BinOp::Mul, step, fi)?;
    let lo = cx.kb.binary(BinOp::Add, a, lo)?;
    let last = cx.kb.i64(steps - 1);
    let back = cx.kb.binary(BinOp::Sub, last, i)?;
    let back = cx.kb.cast(back, ty);
    let hi = cx.kb.binary(BinOp::Mul, step, back)?;
    let hi = cx.kb.binary(BinOp::Sub, b, hi)?;
    // A single point is `start` (PyTorch fills it rather than splitting the ramp).
    let half = cx.kb.i64(if steps == 1 { 1 } else { steps / 2 });
    let first = cx.kb.cmp(CmpOp::Lt, i, half)?;
    Ok(cx.kb.select(first, lo, hi)?)
}

pub fn linspace(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    spaced(cx, node, idx)
}

/// `logspace`: `base ^ linspace`, the power in float64 as PyTorch's kernel takes it.
pub fn logspace(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = spaced(cx, node, idx)?;
    let x = cx.kb.cast(x, Ty::F64);
    let base = cx.kb.f64(cx.float_or(node, "base", 10.0)?);
    Ok(cx.kb.binary(BinOp::Pow, base, x)?)
}
