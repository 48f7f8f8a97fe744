//! Views: ops that only reindex their input. They never get a kernel; a consumer reads through
//! them by mapping its coordinates to the input's, so every view is zero-copy whatever the
//! strides (a graph output that is a view gets a copy kernel from the partitioner).

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId};
use super::super::LowerError;
use super::pointwise::out_sizes;
use crate::ir::{Arg, Node, TensorMeta, ValueId};
use crate::sym;

fn input(cx: &Ctx<'_>, node: &Node) -> Result<ValueId, LowerError> {
    node.args
        .iter()
        .find_map(|a| a.arg.as_tensor())
        .ok_or_else(|| cx.err(node, "has no tensor argument"))
}

fn same(a: &sym::Expr, b: &sym::Expr) -> bool {
    a == b || a.simplify() == b.simplify()
}

/// Reads `v` (of `in_sizes`) at the element whose row-major position equals that of `idx`
/// in `out_sizes`: every reshape-like view (view, flatten, unsqueeze, ...) is this.
pub(super) fn reshape_read(cx: &mut Ctx<'_>, v: ValueId, idx: &[ExprId], out_sizes: &[sym::Expr]) -> Result<ExprId, LowerError> {
    let in_sizes = cx.sizes(v)?;
    let not_one = |s: &[sym::Expr]| s.iter().enumerate().filter(|(_, e)| e.as_int() != Some(1)).map(|(i, e)| (i, e.clone())).collect::<Vec<_>>();
    let (a, b) = (not_one(&in_sizes), not_one(out_sizes));
    if a.len() == b.len() && a.iter().zip(&b).all(|((_, x), (_, y))| same(x, y)) {
        // Only size-1 dims differ: coordinates carry over one to one.
        let zero = cx.kb.i64(0);
        let mut in_idx = vec![zero; in_sizes.len()];
        for ((i, _), (o, _)) in a.iter().zip(&b) {
            in_idx[*i] = idx[*o];
        }
        return cx.read(v, &in_idx);
    }
    let out_strides = TensorMeta::contiguous_strides(out_sizes);
    let mut lin = cx.kb.i64(0);
    for (i, s) in idx.iter().zip(&out_strides) {
        let s = cx.kb.size(s);
        let t = cx.kb.binary(BinOp::Mul, *i, s)?;
        lin = cx.kb.binary(BinOp::Add, lin, t)?;
    }
    let in_strides = TensorMeta::contiguous_strides(&in_sizes);
    let mut in_idx = Vec::with_capacity(in_sizes.len());
    for (d, (size, stride)) in in_sizes.iter().zip(&in_strides).enumerate() {
        let st = cx.kb.size(stride);
        let q = cx.kb.binary(BinOp::Div, lin, st)?;
        in_idx.push(if d == 0 {
            q
        } else {
            let sz = cx.kb.size(size);
            cx.kb.binary(BinOp::Rem, q, sz)?
        });
    }
    cx.read(v, &in_idx)
}

pub fn reshape(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = input(cx, node)?;
    let out = out_sizes(cx, node)?;
    reshape_read(cx, v, idx, &out)
}

/// Ops that view each tensor of `tensors` under a new shape (`atleast_*d.Sequence`): output
/// `out` reads tensor `out` reshaped to that output's sizes.
pub fn reshape_each(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = match node.arg("tensors") {
        Some(Arg::Tensors(vs)) => *vs.get(out).ok_or_else(|| cx.err(node, format!("output {out}: no tensor {out} in `tensors`")))?,
        _ => return Err(cx.err(node, "argument `tensors`: expected a tensor list")),
    };
    let o = *node.outputs.get(out).ok_or_else(|| cx.err(node, format!("has no output {out}")))?;
    let sizes = cx.sizes(o)?;
    reshape_read(cx, v, idx, &sizes)
}

/// `resize(size)` / `resize_as(the_template)` (what functionalization makes of `resize_` and
/// `resize_as_`): the input's storage read row-major under the new shape, so the leading
/// elements keep their values; positions past the input's elements (growth, uninitialised
/// memory in PyTorch) read 0, as the interpreter's `resize` and `empty` give. A resize of a
/// tensor that is not row-major reinterprets its storage order, and a channels-last target
/// reorders it: both refused.
pub fn resize(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = cx.tensor(node, "self")?;
    let meta = cx.meta(v)?.clone();
    let out = out_sizes(cx, node)?;
    match node.arg("memory_format") {
        None | Some(Arg::None) => {}
        Some(Arg::MemoryFormat(f)) if f == "contiguous_format" || f == "preserve_format" => {}
        Some(other) => return Err(cx.err(node, format!("argument `memory_format`: {other:?}: only the row-major layout is modelled"))),
    }
    let same_shape = meta.sizes.len() == out.len() && meta.sizes.iter().zip(&out).all(|(a, b)| same(a, b));
    let row_major = meta.strides.iter().zip(TensorMeta::contiguous_strides(&meta.sizes)).zip(&meta.sizes).all(|((a, b), n)| same(a, &b) || n.as_int() == Some(1));
    if same_shape {
        return cx.read(v, idx);
    }
    if !row_major {
        return Err(cx.err(node, "resize of a tensor whose strides are not row-major (its storage order is not its element order)"));
    }
    let numel = |s: &[sym::Expr]| s.iter().fold(sym::Expr::int(1), |a, d| sym::Expr::mul(a, d.clone()));
    let (n_in, n_out) = (numel(&meta.sizes), numel(&out));
    let can_grow = !matches!((n_in.simplify().as_int(), n_out.simplify().as_int()), (Some(i), Some(o)) if o <= i);
    if !can_grow {
        return reshape_read(cx, v, idx, &out);
    }
    let strides = TensorMeta::contiguous_strides(&out);
    let mut lin = cx.kb.i64(0);
    for (i, s) in idx.iter().zip(&strides) {
        let s = cx.kb.size(s);
        let t = cx.kb.binary(BinOp::Mul, *i, s)?;
        lin = cx.kb.binary(BinOp::Add, lin, t)?;
    }
    let n_in = cx.kb.size(&n_in);
    let inside = cx.kb.cmp(CmpOp::Lt, lin, n_in)?;
    let x = cx.masked(inside, |cx| reshape_read(cx, v, idx, &out))?;
    let zero = cx.kb.i64(0);
    let zero = cx.kb.cast(zero, cx.kb.ty(x));
    Ok(cx.kb.select(inside, x, zero)?)
}

/// `as_strided(x, size, stride, offset)` of a contiguous `x`: the element at storage position
/// `offset + Σ idx·stride`, read back through `x`'s row-major coordinates. Other inputs have a
/// storage this lowering does not model.
pub fn as_strided(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = input(cx, node)?;
    let meta = cx.meta(v)?.clone();
    let contiguous = meta.strides.iter().zip(TensorMeta::contiguous_strides(&meta.sizes)).zip(&meta.sizes).all(|((a, b), n)| same(a, &b) || n.as_int() == Some(1));
    // The kernel reads the input's row-major copy, as the interpreter does: right for a dense
    // row-major input (a view's storage offset included, as OpInfo's partial views check), wrong
    // for another layout (channels-last), which is refused rather than read in the wrong order.
    if !contiguous {
        return Err(cx.err(node, "as_strided of a tensor whose strides are not row-major"));
    }
    let stride = cx.sym_ints(node, "stride")?;
    if stride.len() != idx.len() {
        return Err(cx.err(node, format!("argument `stride`: {} strides for {} dims", stride.len(), idx.len())));
    }
    let mut lin = match node.arg("storage_offset") {
        None | Some(Arg::None) => cx.kb.i64(0),
        Some(Arg::Int(o)) => cx.kb.i64(*o),
        Some(Arg::SymInt(s)) => {
            let e = cx.sym_int_arg(node, "storage_offset", s)?;
            cx.kb.size(&e)
        }
        Some(other) => return Err(cx.err(node, format!("argument `storage_offset`: expected an int, got {other:?}"))),
    };
    for (i, s) in idx.iter().zip(&stride) {
        let s = cx.kb.size(s);
        let t = cx.kb.binary(BinOp::Mul, *i, s)?;
        lin = cx.kb.binary(BinOp::Add, lin, t)?;
    }
    let numel = meta.sizes.iter().cloned().fold(sym::Expr::int(1), sym::Expr::mul);
    // A position outside the storage reads 0 rather than memory past the buffer (PyTorch raises).
    let (zero, n) = (cx.kb.i64(0), cx.kb.size(&numel));
    let lo = cx.kb.cmp(super::super::kernel::CmpOp::Ge, lin, zero)?;
    let hi = cx.kb.cmp(super::super::kernel::CmpOp::Lt, lin, n)?;
    let inside = cx.kb.and(lo, hi)?;
    let lin = cx.kb.select(inside, lin, zero)?;
    cx.masked(inside, |cx| reshape_read(cx, v, &[lin], &[numel]))
}

pub fn to_copy(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let to = cx.meta(node.outputs[0])?.dtype;
    let r = reshape(cx, node, out, idx)?;
    let ty = Elem::from_dtype(to).ok_or_else(|| cx.err(node, format!("kernels do not store {to}")))?.ty();
    Ok(cx.kb.cast(r, ty))
}

pub fn permute(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = input(cx, node)?;
    let dims = cx.ints_or(node, "dims", &[])?;
    let dims = dims.iter().map(|&d| wrap_dims(&[d], idx.len()).map(|w| w[0])).collect::<Result<Vec<_>, _>>().map_err(|m| cx.err(node, m))?;
    let mut in_idx = idx.to_vec();
    for (i, d) in dims.iter().enumerate() {
        in_idx[*d] = idx[i];
    }
    cx.read(v, &in_idx)
}

pub fn transpose(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = input(cx, node)?;
    let n = idx.len();
    let (a, b) = if node.target == "aten.t.default" || node.target == "aten.t_copy.default" {
        (0, n.saturating_sub(1))
    } else {
        let a = wrap_dims(&[cx.int_or(node, "dim0", 0)?], n).map_err(|m| cx.err(node, m))?[0];
        let b = wrap_dims(&[cx.int_or(node, "dim1", 1)?], n).map_err(|m| cx.err(node, m))?[0];
        (a, b)
    };
    let mut in_idx = idx.to_vec();
    // Rank 0 and 1 accept dims 0/-1 and transpose nothing.
    if a < n && b < n {
        in_idx.swap(a, b);
    }
    cx.read(v, &in_idx)
}

pub fn expand(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = input(cx, node)?;
    let out = out_sizes(cx, node)?;
    cx.read_broadcast(v, idx, &out)
}

pub fn split(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = input(cx, node)?;
    let dim = wrap_dims(&[cx.int_or(node, "dim", 0)?], idx.len()).map_err(|m| cx.err(node, m))?[0];
    let mut offset = sym::Expr::int(0);
    for o in &node.outputs[..out] {
        offset = sym::Expr::add(offset, cx.sizes(*o)?[dim].clone());
    }
    let off = cx.kb.size(&offset);
    let mut in_idx = idx.to_vec();
    in_idx[dim] = cx.kb.binary(BinOp::Add, idx[dim], off)?;
    cx.read(v, &in_idx)
}

fn sym_arg(cx: &Ctx<'_>, node: &Node, name: &str) -> Result<Option<sym::Expr>, LowerError> {
    Ok(match node.arg(name) {
        None | Some(Arg::None) => None,
        Some(Arg::Int(i)) | Some(Arg::SymInt(crate::ir::SymIntArg::Int(i))) => Some(sym::Expr::int(*i)),
        Some(Arg::SymInt(crate::ir::SymIntArg::Value(v))) => match &cx.graph.value(*v).kind {
            crate::ir::ValueKind::SymInt(e) => Some(e.clone()),
            _ => return Err(cx.err(node, format!("argument `{name}` is not a symbolic int"))),
        },
        Some(other) => return Err(cx.err(node, format!("argument `{name}`: expected an int, got {other:?}"))),
    })
}

pub fn slice(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = input(cx, node)?;
    let dim = wrap_dims(&[cx.int_or(node, "dim", 0)?], idx.len()).map_err(|m| cx.err(node, m))?[0];
    let size = cx.sizes(v)?[dim].clone();
    let start = match sym_arg(cx, node, "start")? {
        None => sym::Expr::int(0),
        Some(s) if s.as_int().is_some_and(|i| i < 0) => sym::Expr::max(sym::Expr::add(s, size), sym::Expr::int(0)),
        Some(s) => sym::Expr::min(s, size),
    };
    let step = cx.int_or(node, "step", 1)?;
    let start = cx.kb.size(&start);
    let step = cx.kb.i64(step);
    let mut in_idx = idx.to_vec();
    let scaled = cx.kb.binary(BinOp::Mul, idx[dim], step)?;
    in_idx[dim] = cx.kb.binary(BinOp::Add, start, scaled)?;
    cx.read(v, &in_idx)
}

pub fn select(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let v = input(cx, node)?;
    let sizes = cx.sizes(v)?;
    let dim = wrap_dims(&[cx.int_or(node, "dim", 0)?], sizes.len()).map_err(|m| cx.err(node, m))?[0];
    let index = sym_arg(cx, node, "index")?.ok_or_else(|| cx.err(node, "argument `index` is missing"))?;
    let index = match index.as_int() {
        Some(i) if i < 0 => sym::Expr::add(index, sizes[dim].clone()),
        _ => index,
    };
    let at = cx.kb.size(&index);
    let mut in_idx = idx.to_vec();
    in_idx.insert(dim, at);
    cx.read(v, &in_idx)
}
