//! Direct 2-D convolution and pooling over the last two (spatial) dims. Padding is a mask on
//! the input coordinates: out-of-range taps read a clamped in-range element and are replaced by
//! the padding value, so no work-item ever touches memory outside a buffer.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp};
use super::super::LowerError;
use crate::ir::{Arg, Node, ValueId};

fn pair(cx: &Ctx<'_>, node: &Node, name: &str, default: &[i64]) -> Result<[i64; 2], LowerError> {
    let v = cx.ints_or(node, name, default)?;
    match v.as_slice() {
        [] => pair(cx, node, "kernel_size", &[1, 1]),
        [a] => Ok([*a, *a]),
        [a, b] => Ok([*a, *b]),
        _ => Err(cx.err(node, format!("argument `{name}`: expected 1 or 2 ints, got {v:?}"))),
    }
}

/// `0 <= c < size` as a kernel condition.
fn in_range(cx: &mut Ctx<'_>, c: ExprId, size: ExprId) -> Result<ExprId, LowerError> {
    let zero = cx.kb.i64(0);
    let lo = cx.kb.cmp(CmpOp::Ge, c, zero)?;
    let hi = cx.kb.cmp(CmpOp::Lt, c, size)?;
    Ok(cx.kb.and(lo, hi)?)
}

/// `v[idx]` where `mask` holds, else `other`, reading only in-range coordinates.
fn read_masked(cx: &mut Ctx<'_>, v: ValueId, idx: &[ExprId], mask: ExprId, other: f32) -> Result<ExprId, LowerError> {
    let zero = cx.kb.i64(0);
    let safe = idx.iter().map(|&i| cx.kb.select(mask, i, zero)).collect::<Result<Vec<_>, _>>()?;
    let x = cx.read(v, &safe)?;
    let o = cx.kb.f32(other);
    Ok(cx.kb.select(mask, x, o)?)
}

/// Input coordinate `o·stride - pad + k·dilation`.
fn tap(cx: &mut Ctx<'_>, o: ExprId, k: ExprId, stride: i64, pad: i64, dil: i64) -> Result<ExprId, LowerError> {
    let (s, p, d) = (cx.kb.i64(stride), cx.kb.i64(pad), cx.kb.i64(dil));
    let a = cx.kb.binary(BinOp::Mul, o, s)?;
    let a = cx.kb.binary(BinOp::Sub, a, p)?;
    let b = cx.kb.binary(BinOp::Mul, k, d)?;
    Ok(cx.kb.binary(BinOp::Add, a, b)?)
}

pub fn conv2d(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    if cx.bool_or(node, "transposed", false)? {
        return Err(cx.err(node, "transposed convolution is not supported"));
    }
    if let Some(Arg::String(p)) = node.arg("padding") {
        return Err(cx.err(node, format!("padding=`{p}` is not supported; give explicit ints")));
    }
    let x = cx.tensor(node, "input")?;
    let w = cx.tensor(node, "weight")?;
    let (xs, ws) = (cx.sizes(x)?, cx.sizes(w)?);
    if xs.len() != 4 || ws.len() != 4 || idx.len() != 4 {
        return Err(cx.err(node, "only batched 2-D convolution (NCHW) is supported"));
    }
    let stride = pair(cx, node, "stride", &[1, 1])?;
    let pad = pair(cx, node, "padding", &[0, 0])?;
    let dil = pair(cx, node, "dilation", &[1, 1])?;
    let groups = cx.int_or(node, "groups", 1)?.max(1);
    let (n, co, oh, ow) = (idx[0], idx[1], idx[2], idx[3]);
    let cin_g = cx.kb.size(&ws[1]);
    let cout = cx.kb.size(&ws[0]);
    let g = cx.kb.i64(groups);
    let cout_g = cx.kb.binary(BinOp::Div, cout, g)?;
    let group = cx.kb.binary(BinOp::Div, co, cout_g)?;
    let cbase = cx.kb.binary(BinOp::Mul, group, cin_g)?;
    let (h, wd) = (cx.kb.size(&xs[2]), cx.kb.size(&xs[3]));
    let (vc, vh, vw) = (cx.kb.fresh_var()?, cx.kb.fresh_var()?, cx.kb.fresh_var()?);
    let (ci, kh, kw) = (cx.kb.var(vc), cx.kb.var(vh), cx.kb.var(vw));
    let ih = tap(cx, oh, kh, stride[0], pad[0], dil[0])?;
    let iw = tap(cx, ow, kw, stride[1], pad[1], dil[1])?;
    let mh = in_range(cx, ih, h)?;
    let mw = in_range(cx, iw, wd)?;
    let mask = cx.kb.and(mh, mw)?;
    let c = cx.kb.binary(BinOp::Add, cbase, ci)?;
    let xv = read_masked(cx, x, &[n, c, ih, iw], mask, 0.0)?;
    let wv = cx.read(w, &[co, ci, kh, kw])?;
    let p = cx.kb.binary(BinOp::Mul, xv, wv)?;
    let (ekw, ekh) = (cx.kb.size(&ws[3]), cx.kb.size(&ws[2]));
    let acc = cx.kb.reduce(RedOp::Sum, vw, ekw, p)?;
    let acc = cx.kb.reduce(RedOp::Sum, vh, ekh, acc)?;
    let mut acc = cx.kb.reduce(RedOp::Sum, vc, cin_g, acc)?;
    if let Some(b) = cx.opt_tensor(node, "bias") {
        let bv = cx.read(b, &[co])?;
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
}

fn window(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<Window, LowerError> {
    let x = cx.tensor(node, "self")?;
    let xs = cx.sizes(x)?;
    if xs.len() < 3 || idx.len() != xs.len() {
        return Err(cx.err(node, "pooling needs an input of rank 3 or 4"));
    }
    if cx.bool_or(node, "ceil_mode", false)? {
        return Err(cx.err(node, "ceil_mode=True is not supported"));
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
    Ok(Window { x, lead: idx[..r - 2].to_vec(), oh: idx[r - 2], ow: idx[r - 1], h, w, k, stride, pad, dil })
}

/// Folds `op` over the window of `win` with padding value `other`.
fn fold_window(cx: &mut Ctx<'_>, win: &Window, op: RedOp, other: f32) -> Result<ExprId, LowerError> {
    let (vh, vw) = (cx.kb.fresh_var()?, cx.kb.fresh_var()?);
    let (kh, kw) = (cx.kb.var(vh), cx.kb.var(vw));
    let ih = tap(cx, win.oh, kh, win.stride[0], win.pad[0], win.dil[0])?;
    let iw = tap(cx, win.ow, kw, win.stride[1], win.pad[1], win.dil[1])?;
    let mh = in_range(cx, ih, win.h)?;
    let mw = in_range(cx, iw, win.w)?;
    let mask = cx.kb.and(mh, mw)?;
    let mut at = win.lead.clone();
    at.extend([ih, iw]);
    let v = read_masked(cx, win.x, &at, mask, other)?;
    let (ekh, ekw) = (cx.kb.i64(win.k[0]), cx.kb.i64(win.k[1]));
    let acc = cx.kb.reduce(op, vw, ekw, v)?;
    Ok(cx.kb.reduce(op, vh, ekh, acc)?)
}

pub fn max_pool2d(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    if out != 0 {
        return Err(cx.err(node, "the indices output of max_pool2d_with_indices is not supported"));
    }
    let win = window(cx, node, idx)?;
    fold_window(cx, &win, RedOp::Max, f32::NEG_INFINITY)
}

/// `prims._low_memory_max_pool_with_offsets`: output 0 the window maxima, output 1 the offset
/// `kh·kw_size + kw` of the first maximum in each window (int8), found as the smallest offset
/// whose tap equals the maximum.
pub fn max_pool_with_offsets(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let win = window(cx, node, idx)?;
    let max = fold_window(cx, &win, RedOp::Max, f32::NEG_INFINITY)?;
    if out == 0 {
        return Ok(max);
    }
    let (vh, vw) = (cx.kb.fresh_var()?, cx.kb.fresh_var()?);
    let (kh, kw) = (cx.kb.var(vh), cx.kb.var(vw));
    let ih = tap(cx, win.oh, kh, win.stride[0], win.pad[0], win.dil[0])?;
    let iw = tap(cx, win.ow, kw, win.stride[1], win.pad[1], win.dil[1])?;
    let mh = in_range(cx, ih, win.h)?;
    let mw = in_range(cx, iw, win.w)?;
    let mask = cx.kb.and(mh, mw)?;
    let mut at = win.lead.clone();
    at.extend([ih, iw]);
    let v = read_masked(cx, win.x, &at, mask, f32::NEG_INFINITY)?;
    let hit = cx.kb.cmp(CmpOp::Eq, v, max)?;
    let hit = cx.kb.and(hit, mask)?;
    let width = cx.kb.i64(win.k[1]);
    let row = cx.kb.binary(BinOp::Mul, kh, width)?;
    let offset = cx.kb.binary(BinOp::Add, row, kw)?;
    let none = cx.kb.i64(win.k[0] * win.k[1]);
    let candidate = cx.kb.select(hit, offset, none)?;
    let (ekh, ekw) = (cx.kb.i64(win.k[0]), cx.kb.i64(win.k[1]));
    let first = cx.kb.reduce(RedOp::Min, vw, ekw, candidate)?;
    Ok(cx.kb.reduce(RedOp::Min, vh, ekh, first)?)
}

/// `prims._low_memory_max_pool_offsets_to_indices`: `(oh·s - p + ⌊off/kw⌋·d) · W + (ow·s - p +
/// (off mod kw)·d)` with `W` the last of `input_size`.
pub fn max_pool_offsets_to_indices(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let offsets = cx.tensor(node, "self")?;
    let r = idx.len();
    if r < 2 {
        return Err(cx.err(node, "pooling offsets need rank 2 or more"));
    }
    let k = pair(cx, node, "kernel_size", &[])?;
    let stride = pair(cx, node, "stride", &[])?;
    let pad = pair(cx, node, "padding", &[0, 0])?;
    let dil = pair(cx, node, "dilation", &[1, 1])?;
    let size = cx.sym_ints(node, "input_size")?;
    let w = match size.as_slice() {
        [_, w] => cx.kb.size(w),
        _ => return Err(cx.err(node, format!("argument `input_size`: expected 2 sizes, got {}", size.len()))),
    };
    let off = cx.read(offsets, idx)?;
    let off = cx.kb.cast(off, super::super::kernel::Ty::I64);
    let kw = cx.kb.i64(k[1]);
    let dh = cx.kb.binary(BinOp::Div, off, kw)?;
    let dw = cx.kb.binary(BinOp::Rem, off, kw)?;
    let h = tap(cx, idx[r - 2], dh, stride[0], pad[0], dil[0])?;
    let x = tap(cx, idx[r - 1], dw, stride[1], pad[1], dil[1])?;
    let hw = cx.kb.binary(BinOp::Mul, h, w)?;
    Ok(cx.kb.binary(BinOp::Add, hw, x)?)
}

pub fn avg_pool2d(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let win = window(cx, node, idx)?;
    if win.dil != [1, 1] {
        return Err(cx.err(node, "avg_pool2d has no dilation"));
    }
    let sum = fold_window(cx, &win, RedOp::Sum, 0.0)?;
    if let Some(d) = cx.opt_number(node, "divisor_override")? {
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
        if include_pad {
            let lim = cx.kb.binary(BinOp::Add, size, pp)?;
            let end = cx.kb.binary(BinOp::Min, end, lim)?;
            return Ok(cx.kb.binary(BinOp::Sub, end, start)?);
        }
        let zero = cx.kb.i64(0);
        let start = cx.kb.binary(BinOp::Max, start, zero)?;
        let end = cx.kb.binary(BinOp::Min, end, size)?;
        Ok(cx.kb.binary(BinOp::Sub, end, start)?)
    };
    let eh = extent(cx, win.oh, win.h, win.k[0], win.stride[0], win.pad[0])?;
    let ew = extent(cx, win.ow, win.w, win.k[1], win.stride[1], win.pad[1])?;
    let n = cx.kb.binary(BinOp::Mul, eh, ew)?;
    let n = cx.kb.to_f32(n);
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
