//! Direct convolution (1-, 2- and 3-D) and 2-D pooling. Padding is a mask on the input
//! coordinates: out-of-range taps read a clamped in-range element and are replaced by the
//! padding value, so no work-item ever touches memory outside a buffer. `ceil_mode` only changes
//! the output size (given by the graph), and its last, partial windows are masked the same way.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty};
use super::super::LowerError;
use crate::ir::{Arg, Node, ValueId};
use crate::sym;

fn pair(cx: &Ctx<'_>, node: &Node, name: &str, default: &[i64]) -> Result<[i64; 2], LowerError> {
    let v = cx.ints_or(node, name, default)?;
    match v.as_slice() {
        [] => pair(cx, node, "kernel_size", &[1, 1]),
        [a] => Ok([*a, *a]),
        [a, b] => Ok([*a, *b]),
        _ => Err(cx.err(node, format!("argument `{name}`: expected 1 or 2 ints, got {v:?}"))),
    }
}

/// A per-spatial-dim argument of a `sd`-D convolution: one value stands for every dim.
fn spatial(cx: &Ctx<'_>, node: &Node, name: &str, default: i64, sd: usize) -> Result<Vec<i64>, LowerError> {
    let v = cx.ints_or(node, name, &[default])?;
    match v.len() {
        1 => Ok(vec![v[0]; sd]),
        n if n == sd => Ok(v),
        _ => Err(cx.err(node, format!("argument `{name}`: expected 1 or {sd} ints, got {v:?}"))),
    }
}

/// `0 <= c < size` as a kernel condition.
fn in_range(cx: &mut Ctx<'_>, c: ExprId, size: ExprId) -> Result<ExprId, LowerError> {
    let zero = cx.kb.i64(0);
    let lo = cx.kb.cmp(CmpOp::Ge, c, zero)?;
    let hi = cx.kb.cmp(CmpOp::Lt, c, size)?;
    Ok(cx.kb.and(lo, hi)?)
}

/// `v[idx]`, converted to the type of `other`, where `mask` holds, else `other`, reading only
/// in-range coordinates.
fn read_masked(cx: &mut Ctx<'_>, v: ValueId, idx: &[ExprId], mask: ExprId, other: ExprId) -> Result<ExprId, LowerError> {
    let zero = cx.kb.i64(0);
    let safe = idx.iter().map(|&i| cx.kb.select(mask, i, zero)).collect::<Result<Vec<_>, _>>()?;
    let x = cx.read(v, &safe)?;
    let ty = cx.kb.ty(other);
    let x = cx.kb.cast(x, ty);
    Ok(cx.kb.select(mask, x, other)?)
}

/// The constant `v` in compute type `ty` (±inf become the i64 extremes for integers).
fn constant(cx: &mut Ctx<'_>, v: f64, ty: Ty) -> ExprId {
    match ty {
        Ty::F64 => cx.kb.f64(v),
        Ty::I64 if v == f64::NEG_INFINITY => cx.kb.i64(i64::MIN),
        Ty::I64 if v == f64::INFINITY => cx.kb.i64(i64::MAX),
        Ty::I64 => cx.kb.i64(v as i64),
        _ => cx.kb.f32(v as f32),
    }
}

/// Input coordinate `o·stride - pad + k·dilation`.
fn tap(cx: &mut Ctx<'_>, o: ExprId, k: ExprId, stride: i64, pad: i64, dil: i64) -> Result<ExprId, LowerError> {
    let (s, p, d) = (cx.kb.i64(stride), cx.kb.i64(pad), cx.kb.i64(dil));
    let a = cx.kb.binary(BinOp::Mul, o, s)?;
    let a = cx.kb.binary(BinOp::Sub, a, p)?;
    let b = cx.kb.binary(BinOp::Mul, k, d)?;
    Ok(cx.kb.binary(BinOp::Add, a, b)?)
}

/// Leading padding per spatial dim: explicit ints, or `"valid"` (none) / `"same"` (half the
/// dilated kernel; PyTorch puts the odd extra on the right, which the mask covers).
fn conv_padding(cx: &Ctx<'_>, node: &Node, ks: &[sym::Expr], dil: &[i64]) -> Result<Vec<i64>, LowerError> {
    match node.arg("padding") {
        Some(Arg::String(p)) if p == "valid" => Ok(vec![0; ks.len()]),
        Some(Arg::String(p)) if p == "same" => ks
            .iter()
            .zip(dil)
            .map(|(k, d)| k.as_int().map(|k| d * (k - 1) / 2).ok_or_else(|| cx.err(node, "padding='same' needs a static kernel size")))
            .collect(),
        Some(Arg::String(p)) => Err(cx.err(node, format!("padding=`{p}` is not a padding mode"))),
        _ => spatial(cx, node, "padding", 0, ks.len()),
    }
}

/// Direct convolution with 1, 2 or 3 spatial dims, batched or not, grouped and dilated
/// (`conv1d/2d/3d`, `convolution` when not transposed), accumulated in the output's type.
pub fn conv(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    if cx.bool_or(node, "transposed", false)? {
        return Err(cx.err(node, "transposed convolution is not supported"));
    }
    let x = cx.tensor(node, "input")?;
    let w = cx.tensor(node, "weight")?;
    let (xs, ws) = (cx.sizes(x)?, cx.sizes(w)?);
    let sd = match ws.len().checked_sub(2) {
        Some(sd @ 1..=3) => sd,
        _ => return Err(cx.err(node, format!("a weight of rank {} is not a 1-, 2- or 3-D convolution", ws.len()))),
    };
    let lead = match xs.len() {
        n if n == sd + 2 => 1,
        n if n == sd + 1 => 0,
        n => return Err(cx.err(node, format!("an input of rank {n} does not fit a {sd}-D convolution"))),
    };
    if idx.len() != xs.len() {
        return Err(cx.err(node, "the output rank differs from the input's"));
    }
    let stride = spatial(cx, node, "stride", 1, sd)?;
    let dil = spatial(cx, node, "dilation", 1, sd)?;
    let pad = conv_padding(cx, node, &ws[2..], &dil)?;
    let groups = cx.int_or(node, "groups", 1)?.max(1);
    let ty = super::pointwise::out_ty(cx, node)?;
    let co = idx[lead];
    let cin_g = cx.kb.size(&ws[1]);
    let cout = cx.kb.size(&ws[0]);
    let g = cx.kb.i64(groups);
    let cout_g = cx.kb.binary(BinOp::Div, cout, g)?;
    let group = cx.kb.binary(BinOp::Div, co, cout_g)?;
    let cbase = cx.kb.binary(BinOp::Mul, group, cin_g)?;
    let vc = cx.kb.fresh_var()?;
    let ci = cx.kb.var(vc);
    let mut mask = cx.kb.bool(true);
    let mut x_at: Vec<ExprId> = idx[..lead].to_vec();
    x_at.push(cx.kb.binary(BinOp::Add, cbase, ci)?);
    let mut w_at = vec![co, ci];
    let mut loops = Vec::with_capacity(sd);
    for d in 0..sd {
        let v = cx.kb.fresh_var()?;
        let k = cx.kb.var(v);
        let i = tap(cx, idx[lead + 1 + d], k, stride[d], pad[d], dil[d])?;
        let n = cx.kb.size(&xs[lead + 1 + d]);
        let ok = in_range(cx, i, n)?;
        mask = cx.kb.and(mask, ok)?;
        x_at.push(i);
        w_at.push(k);
        let extent = cx.kb.size(&ws[2 + d]);
        loops.push((v, extent));
    }
    let zero = constant(cx, 0.0, ty);
    let xv = read_masked(cx, x, &x_at, mask, zero)?;
    let wv = cx.read(w, &w_at)?;
    let wv = cx.kb.cast(wv, ty);
    let mut acc = cx.kb.binary(BinOp::Mul, xv, wv)?;
    for (v, extent) in loops.into_iter().rev() {
        acc = cx.kb.reduce(RedOp::Sum, v, extent, acc)?;
    }
    acc = cx.kb.reduce(RedOp::Sum, vc, cin_g, acc)?;
    if let Some(b) = cx.opt_tensor(node, "bias") {
        let bv = cx.read(b, &[co])?;
        let bv = cx.kb.cast(bv, ty);
        acc = cx.kb.binary(BinOp::Add, acc, bv)?;
    }
    Ok(acc)
}

struct Window {
    x: ValueId,
    lead: Vec<ExprId>,
    oh: ExprId,
    ow: ExprId,
    h: ExprId,
    w: ExprId,
    k: [i64; 2],
    stride: [i64; 2],
    pad: [i64; 2],
    dil: [i64; 2],
    /// The compute type of the pooled values (the output's).
    ty: Ty,
}

fn window(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<Window, LowerError> {
    let x = cx.tensor(node, "self")?;
    let xs = cx.sizes(x)?;
    if !(3..=4).contains(&xs.len()) || idx.len() != xs.len() {
        return Err(cx.err(node, "2-D pooling needs an input of rank 3 or 4"));
    }
    let k = pair(cx, node, "kernel_size", &[])?;
    let stride = match cx.ints_or(node, "stride", &[])?.is_empty() {
        true => k,
        false => pair(cx, node, "stride", &[])?,
    };
    let pad = pair(cx, node, "padding", &[0, 0])?;
    let dil = pair(cx, node, "dilation", &[1, 1])?;
    let r = idx.len();
    let (h, w) = (cx.kb.size(&xs[r - 2]), cx.kb.size(&xs[r - 1]));
    let ty = super::pointwise::out_ty(cx, node)?;
    Ok(Window { x, lead: idx[..r - 2].to_vec(), oh: idx[r - 2], ow: idx[r - 1], h, w, k, stride, pad, dil, ty })
}

/// One tap of a window: its loop variables, input coordinates and in-range mask.
struct Tap {
    vh: super::super::kernel::VarId,
    vw: super::super::kernel::VarId,
    ih: ExprId,
    iw: ExprId,
    mask: ExprId,
}

fn tap2(cx: &mut Ctx<'_>, win: &Window) -> Result<Tap, LowerError> {
    let (vh, vw) = (cx.kb.fresh_var()?, cx.kb.fresh_var()?);
    let (kh, kw) = (cx.kb.var(vh), cx.kb.var(vw));
    let ih = tap(cx, win.oh, kh, win.stride[0], win.pad[0], win.dil[0])?;
    let iw = tap(cx, win.ow, kw, win.stride[1], win.pad[1], win.dil[1])?;
    let mh = in_range(cx, ih, win.h)?;
    let mw = in_range(cx, iw, win.w)?;
    let mask = cx.kb.and(mh, mw)?;
    Ok(Tap { vh, vw, ih, iw, mask })
}

/// The value of `win`'s input at `t` (`other` outside the input).
fn tap_value(cx: &mut Ctx<'_>, win: &Window, t: &Tap, other: f64) -> Result<ExprId, LowerError> {
    let mut at = win.lead.clone();
    at.extend([t.ih, t.iw]);
    let o = constant(cx, other, win.ty);
    read_masked(cx, win.x, &at, t.mask, o)
}

/// Folds `body` with `op` over the taps of `t`.
fn fold(cx: &mut Ctx<'_>, win: &Window, t: &Tap, op: RedOp, body: ExprId) -> Result<ExprId, LowerError> {
    let (ekh, ekw) = (cx.kb.i64(win.k[0]), cx.kb.i64(win.k[1]));
    let acc = cx.kb.reduce(op, t.vw, ekw, body)?;
    Ok(cx.kb.reduce(op, t.vh, ekh, acc)?)
}

/// Folds `op` over the window of `win` with padding value `other`.
fn fold_window(cx: &mut Ctx<'_>, win: &Window, op: RedOp, other: f64) -> Result<ExprId, LowerError> {
    let t = tap2(cx, win)?;
    let v = tap_value(cx, win, &t, other)?;
    fold(cx, win, &t, op, v)
}

/// `max_pool2d` and `max_pool2d_with_indices`: output 0 is the window's maximum (NaN when the
/// window holds one, as PyTorch's kernel), output 1 the flat `h·W + w` index of the first
/// maximum (of the first NaN) within its plane.
pub fn max_pool2d(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let win = window(cx, node, idx)?;
    let m = fold_window(cx, &win, RedOp::Max, f64::NEG_INFINITY)?;
    let has_nan = if win.ty.is_float() {
        let t = tap2(cx, &win)?;
        let v = tap_value(cx, &win, &t, 0.0)?;
        let nan = cx.kb.cmp(CmpOp::Ne, v, v)?;
        let nan = cx.kb.cast(nan, Ty::I64);
        let any = fold(cx, &win, &t, RedOp::Max, nan)?;
        let zero = cx.kb.i64(0);
        Some(cx.kb.cmp(CmpOp::Gt, any, zero)?)
    } else {
        None
    };
    if out == 0 {
        return Ok(match has_nan {
            Some(h) => {
                let nan = constant(cx, f64::NAN, win.ty);
                cx.kb.select(h, nan, m)?
            }
            None => m,
        });
    }
    let t = tap2(cx, &win)?;
    let v = tap_value(cx, &win, &t, f64::NEG_INFINITY)?;
    let mut hit = cx.kb.cmp(CmpOp::Eq, v, m)?;
    if let Some(h) = has_nan {
        let nan = cx.kb.cmp(CmpOp::Ne, v, v)?;
        hit = cx.kb.select(h, nan, hit)?;
    }
    let hit = cx.kb.and(t.mask, hit)?;
    let row = cx.kb.binary(BinOp::Mul, t.ih, win.w)?;
    let flat = cx.kb.binary(BinOp::Add, row, t.iw)?;
    let none = cx.kb.i64(i64::MAX);
    let at = cx.kb.select(hit, flat, none)?;
    fold(cx, &win, &t, RedOp::Min, at)
}

/// `avg_pool2d`: the window's sum over PyTorch's divisor (integers divide truncating, as
/// PyTorch's integer kernel does).
pub fn avg_pool2d(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let win = window(cx, node, idx)?;
    if win.dil != [1, 1] {
        return Err(cx.err(node, "avg_pool2d has no dilation"));
    }
    let sum = fold_window(cx, &win, RedOp::Sum, 0.0)?;
    if let Some(d) = node.arg("divisor_override").and_then(|a| match a {
        Arg::Int(i) => Some(*i as f64),
        Arg::Float(f) => Some(*f),
        _ => None,
    }) {
        let d = constant(cx, d, win.ty);
        return Ok(cx.kb.binary(BinOp::Div, sum, d)?);
    }
    let include_pad = cx.bool_or(node, "count_include_pad", true)?;
    // PyTorch's divisor: the window clipped to the padded input, or to the input itself.
    let extent = |cx: &mut Ctx<'_>, o: ExprId, size: ExprId, k: i64, s: i64, p: i64| -> Result<ExprId, LowerError> {
        let zero = cx.kb.i64(0);
        let start = tap(cx, o, zero, s, p, 1)?;
        let kk = cx.kb.i64(k);
        let pp = cx.kb.i64(p);
        let end = cx.kb.binary(BinOp::Add, start, kk)?;
        let lim = cx.kb.binary(BinOp::Add, size, pp)?;
        let end = cx.kb.binary(BinOp::Min, end, lim)?;
        if include_pad {
            return Ok(cx.kb.binary(BinOp::Sub, end, start)?);
        }
        let start = cx.kb.binary(BinOp::Max, start, zero)?;
        let end = cx.kb.binary(BinOp::Min, end, size)?;
        Ok(cx.kb.binary(BinOp::Sub, end, start)?)
    };
    let eh = extent(cx, win.oh, win.h, win.k[0], win.stride[0], win.pad[0])?;
    let ew = extent(cx, win.ow, win.w, win.k[1], win.stride[1], win.pad[1])?;
    let n = cx.kb.binary(BinOp::Mul, eh, ew)?;
    let n = cx.kb.cast(n, win.ty);
    Ok(cx.kb.binary(BinOp::Div, sum, n)?)
}

pub fn adaptive_avg_pool2d(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = cx.tensor(node, "self")?;
    let xs = cx.sizes(x)?;
    let os = super::pointwise::out_sizes(cx, node)?;
    let r = idx.len();
    if r < 3 || xs.len() != r {
        return Err(cx.err(node, "adaptive pooling needs an input of rank 3 or 4"));
    }
    // Window of output o over an input of `size`: [⌊o·size/out⌋, ⌈(o+1)·size/out⌉).
    let bounds = |cx: &mut Ctx<'_>, d: usize| -> Result<(ExprId, ExprId), LowerError> {
        let (size, out) = (cx.kb.size(&xs[d]), cx.kb.size(&os[d]));
        let one = cx.kb.i64(1);
        let start = cx.kb.binary(BinOp::Mul, idx[d], size)?;
        let start = cx.kb.binary(BinOp::Div, start, out)?;
        let o1 = cx.kb.binary(BinOp::Add, idx[d], one)?;
        let end = cx.kb.binary(BinOp::Mul, o1, size)?;
        let end = cx.kb.binary(BinOp::Add, end, out)?;
        let end = cx.kb.binary(BinOp::Sub, end, one)?;
        let end = cx.kb.binary(BinOp::Div, end, out)?;
        Ok((start, cx.kb.binary(BinOp::Sub, end, start)?))
    };
    let (h0, hn) = bounds(cx, r - 2)?;
    let (w0, wn) = bounds(cx, r - 1)?;
    let (vh, vw) = (cx.kb.fresh_var()?, cx.kb.fresh_var()?);
    let (kh, kw) = (cx.kb.var(vh), cx.kb.var(vw));
    let mut at = idx[..r - 2].to_vec();
    at.push(cx.kb.binary(BinOp::Add, h0, kh)?);
    at.push(cx.kb.binary(BinOp::Add, w0, kw)?);
    let v = cx.read(x, &at)?;
    let acc = cx.kb.reduce(RedOp::Sum, vw, wn, v)?;
    let acc = cx.kb.reduce(RedOp::Sum, vh, hn, acc)?;
    let n = cx.kb.binary(BinOp::Mul, hn, wn)?;
    let n = cx.kb.to_f32(n);
    Ok(cx.kb.binary(BinOp::Div, acc, n)?)
}
