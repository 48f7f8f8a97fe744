//! Direct and transposed convolution (1-, 2- and 3-D), and the sliding-window helpers pooling
//! shares with them.
//! Padding is a mask on the input coordinates: out-of-range taps read a clamped in-range
//! element and are replaced by the padding value, so no work-item ever touches memory outside a
//! buffer.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty, VarId};
use super::super::LowerError;
use crate::ir::{Arg, Node, ValueId};
use crate::sym;

/// A per-spatial-dim argument of a `sd`-D convolution: one value stands for every dim.
pub(super) fn spatial(cx: &Ctx<'_>, node: &Node, name: &str, default: i64, sd: usize) -> Result<Vec<i64>, LowerError> {
    let v = cx.ints_or(node, name, &[default])?;
    match v.len() {
        1 => Ok(vec![v[0]; sd]),
        n if n == sd => Ok(v),
        _ => Err(cx.err(node, format!("argument `{name}`: expected 1 or {sd} ints, got {v:?}"))),
    }
}

/// `0 <= c < size` as a kernel condition.
pub(super) fn in_range(cx: &mut Ctx<'_>, c: ExprId, size: ExprId) -> Result<ExprId, LowerError> {
    let zero = cx.kb.i64(0);
    let lo = cx.kb.cmp(CmpOp::Ge, c, zero)?;
    let hi = cx.kb.cmp(CmpOp::Lt, c, size)?;
    Ok(cx.kb.and(lo, hi)?)
}

/// `v[idx]`, converted to the type of `other`, where `mask` holds, else `other`, reading only
/// in-range coordinates.
pub(super) fn read_masked(cx: &mut Ctx<'_>, v: ValueId, idx: &[ExprId], mask: ExprId, other: ExprId) -> Result<ExprId, LowerError> {
    let zero = cx.kb.i64(0);
    let safe = idx.iter().map(|&i| cx.kb.select(mask, i, zero)).collect::<Result<Vec<_>, _>>()?;
    let x = cx.read(v, &safe)?;
    let ty = cx.kb.ty(other);
    let x = cx.kb.cast(x, ty);
    Ok(cx.kb.select(mask, x, other)?)
}

/// The constant `v` in compute type `ty` (±inf become the i64 extremes for integers).
pub(super) fn constant(cx: &mut Ctx<'_>, v: f64, ty: Ty) -> ExprId {
    match ty {
        Ty::F64 => cx.kb.f64(v),
        Ty::I64 if v == f64::NEG_INFINITY => cx.kb.i64(i64::MIN),
        Ty::I64 if v == f64::INFINITY => cx.kb.i64(i64::MAX),
        Ty::I64 => cx.kb.i64(v as i64),
        _ => cx.kb.f32(v as f32),
    }
}

/// Input coordinate `o·stride - pad + k·dilation`.
pub(super) fn tap(cx: &mut Ctx<'_>, o: ExprId, k: ExprId, stride: i64, pad: i64, dil: i64) -> Result<ExprId, LowerError> {
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
/// (`conv1d/2d/3d`, `convolution`/`_convolution`; transposed ones go to [`conv_transpose`]),
/// accumulated in the output's type.
pub fn conv(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    if cx.bool_or(node, "transposed", false)? {
        return conv_transpose(cx, node, out, idx);
    }
    let x = cx.tensor(node, "input")?;
    let w = cx.tensor(node, "weight")?;
    let (xs, ws) = (cx.sizes(x)?, cx.sizes(w)?);
    let (sd, lead) = conv_dims(cx, node, &xs, &ws, idx)?;
    let stride = spatial(cx, node, "stride", 1, sd)?;
    let dil = spatial(cx, node, "dilation", 1, sd)?;
    let pad = conv_padding(cx, node, &ws[2..], &dil)?;
    let groups = cx.int_or(node, "groups", 1)?.max(1);
    let ty = super::pointwise::out_ty(cx, node)?;
    let win = super::depthwise::Window { stride: &stride, pad: &pad, dil: &dil, groups, lead, ty };
    if let Some(v) = super::depthwise::conv(cx, node, (x, w), &win, idx)? {
        return Ok(v);
    }
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
    let loops = spatial_taps(cx, (idx, lead), (&xs, &ws), (&stride, &pad, &dil), (&mut x_at, &mut w_at), &mut mask)?;
    let pixels = out_pixels(&xs[lead + 1..], &ws[2..], (&stride, &pad, &dil));
    let taps = Taps { x_at, w_at, mask, loops, channel: (vc, cin_g), channels_inner: channels_inner(cx, cin_g, pixels) };
    fold_taps(cx, node, (x, w), taps, co, ty)
}
/// The spatial tap loops of a convolution at output coordinates `idx` (spatial ones from
/// `lead + 1`): per spatial dim a fold variable `k`, the input coordinate `o·stride − pad +
/// k·dil` pushed to `x_at`, `k` to `w_at`, its range check and-ed into `mask`; the loops'
/// variables and extents (the kernel's sizes `ws[2..]`), outermost first.
pub(super) fn spatial_taps(
    cx: &mut Ctx<'_>,
    (idx, lead): (&[ExprId], usize),
    (xs, ws): (&[sym::Expr], &[sym::Expr]),
    (stride, pad, dil): (&[i64], &[i64], &[i64]),
    (x_at, w_at): (&mut Vec<ExprId>, &mut Vec<ExprId>),
    mask: &mut ExprId,
) -> Result<Vec<(VarId, ExprId)>, LowerError> {
    let mut loops = Vec::with_capacity(stride.len());
    for d in 0..stride.len() {
        let v = cx.kb.fresh_var()?;
        let k = cx.kb.var(v);
        let i = tap(cx, idx[lead + 1 + d], k, stride[d], pad[d], dil[d])?;
        let n = cx.kb.size(&xs[lead + 1 + d]);
        let ok = in_range(cx, i, n)?;
        *mask = cx.kb.and(*mask, ok)?;
        x_at.push(i);
        w_at.push(k);
        let extent = cx.kb.size(&ws[2 + d]);
        loops.push((v, extent));
    }
    Ok(loops)
}

/// A convolution's reads for one output element: input and weight coordinates (in terms of the
/// fold variables), the mask of in-range input taps, the spatial tap loops and the input-channel
/// loop of the group.
struct Taps {
    x_at: Vec<ExprId>,
    w_at: Vec<ExprId>,
    mask: ExprId,
    loops: Vec<(VarId, ExprId)>,
    channel: (VarId, ExprId),
    /// The input-channel loop inside the tap loops ([`channels_inner`]).
    channels_inner: bool,
}

/// `Σ_channel Σ_taps x·w (+ bias[co])`: what direct and transposed convolution share once their
/// coordinates are set up; masked-out taps read zero.
fn fold_taps(cx: &mut Ctx<'_>, node: &Node, (x, w): (ValueId, ValueId), taps: Taps, co: ExprId, ty: Ty) -> Result<ExprId, LowerError> {
    let zero = constant(cx, 0.0, ty);
    let xv = read_masked(cx, x, &taps.x_at, taps.mask, zero)?;
    let wv = cx.read(w, &taps.w_at)?;
    let wv = cx.kb.cast(wv, ty);
    let mut acc = cx.kb.binary(BinOp::Mul, xv, wv)?;
    let (vc, cin_g) = taps.channel;
    let inner = taps.channels_inner;
    if inner {
        acc = cx.kb.reduce(RedOp::Sum, vc, cin_g, acc)?;
    }
    for (v, extent) in taps.loops.into_iter().rev() {
        acc = cx.kb.reduce(RedOp::Sum, v, extent, acc)?;
    }
    if !inner {
        acc = cx.kb.reduce(RedOp::Sum, vc, cin_g, acc)?;
    }
    if let Some(b) = cx.opt_tensor(node, "bias") {
        let bv = cx.read(b, &[co])?;
        let bv = cx.kb.cast(bv, ty);
        acc = cx.kb.binary(BinOp::Add, acc, bv)?;
    }
    Ok(acc)
}

/// Least input channels per group (static) whose loop goes innermost, inside the kernel taps.
pub const CHANNELS_INNER: i64 = 16;

/// Least output pixels (static) of a convolution whose channel loop goes innermost: each
/// iteration then loads every lane's weight from another kernel-tap row (a stride of the
/// taps), which a column of many work-items amortizes and a small map does not. SqueezeNet's
/// 3×3 maps (32→128 channels, 16 lanes, groups of 16) took 0.19 ms with the channel
/// outermost and 0.23 ms innermost; a 2×2 map falls back to one work-item per output, whose
/// weights the taps' inner loop reads contiguously.
pub const CHANNELS_INNER_PIXELS: i64 = 64;

/// Whether the input-channel loop goes inside the tap loops: with at least [`CHANNELS_INNER`]
/// channels per group, a tap's input coordinates and padding mask do not move with the channel,
/// so codegen hoists them out of the innermost loop, which is left a load, the lanes' weight
/// loads and their multiply-adds. Measured on the OpenCL CPU device at real sizes
/// (docs/PERFORMANCE.md, "Issue 28: convolutions at real sizes"): a 1×1 convolution 512→256 at
/// 28×28, 16 lanes, 40 ms with the channel outermost and 28 ms innermost. Fewer channels per group
/// (grouped, depthwise) keep the channel outermost: their channel loop is too short to carry
/// the loop overhead, and a depthwise 3×3 measured no better.
fn channels_inner(cx: &Ctx<'_>, cin_g: ExprId, pixels: Option<i64>) -> bool {
    let wide = pixels.is_some_and(|p| p >= CHANNELS_INNER_PIXELS);
    wide && matches!(cx.kb.get(cin_g), super::super::kernel::KExpr::I64(n) if *n >= CHANNELS_INNER)
}

/// The output pixels of a direct convolution with static sizes (spatial input sizes `xs`,
/// kernel sizes `ks`).
fn out_pixels(xs: &[sym::Expr], ks: &[sym::Expr], (stride, pad, dil): (&[i64], &[i64], &[i64])) -> Option<i64> {
    xs.iter().zip(ks).enumerate().try_fold(1i64, |acc, (d, (x, k))| {
        let span = dil[d].checked_mul(k.as_int()? - 1)?;
        let o = (x.as_int()? + 2 * pad[d] - span - 1).checked_div(stride[d])? + 1;
        acc.checked_mul(o.max(0))
    })
}

/// The dims of a convolution's operands: (spatial dims, 1 when batched else 0).
fn conv_dims(cx: &Ctx<'_>, node: &Node, xs: &[sym::Expr], ws: &[sym::Expr], idx: &[ExprId]) -> Result<(usize, usize), LowerError> {
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
    Ok((sd, lead))
}

/// Transposed convolution (`conv_transpose1d/2d/3d`, `convolution` with `transposed`), as a
/// gather: output position `p` sums, over the kernel taps `k` and the input channels of its
/// group, the input positions `i` whose window put tap `k` on it, `i·stride - pad + k·dilation
/// = p`: those where `p + pad - k·dilation` is a non-negative multiple of the stride inside the
/// input. The weight is `[Cin, Cout/groups, k…]`; `output_padding` only lengthens the output
/// (its extra positions gather what reaches them, often nothing).
pub fn conv_transpose(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let x = cx.tensor(node, "input")?;
    let w = cx.tensor(node, "weight")?;
    let (xs, ws) = (cx.sizes(x)?, cx.sizes(w)?);
    let (sd, lead) = conv_dims(cx, node, &xs, &ws, idx)?;
    let stride = spatial(cx, node, "stride", 1, sd)?;
    let dil = spatial(cx, node, "dilation", 1, sd)?;
    let pad = spatial(cx, node, "padding", 0, sd)?;
    if stride.iter().chain(&dil).any(|&v| v <= 0) {
        return Err(cx.err(node, format!("stride {stride:?} and dilation {dil:?} must be positive")));
    }
    let groups = cx.int_or(node, "groups", 1)?.max(1);
    let ty = super::pointwise::out_ty(cx, node)?;
    let co = idx[lead];
    let cin = cx.kb.size(&ws[0]);
    let cout_g = cx.kb.size(&ws[1]);
    let g = cx.kb.i64(groups);
    let cin_g = cx.kb.binary(BinOp::Div, cin, g)?;
    let group = cx.kb.binary(BinOp::Div, co, cout_g)?;
    let o_in_group = cx.kb.binary(BinOp::Rem, co, cout_g)?;
    let cbase = cx.kb.binary(BinOp::Mul, group, cin_g)?;
    let vc = cx.kb.fresh_var()?;
    let ci = cx.kb.var(vc);
    let c = cx.kb.binary(BinOp::Add, cbase, ci)?;
    let mut mask = cx.kb.bool(true);
    let mut x_at: Vec<ExprId> = idx[..lead].to_vec();
    x_at.push(c);
    let mut w_at = vec![c, o_in_group];
    let mut loops = Vec::with_capacity(sd);
    let zero = cx.kb.i64(0);
    for d in 0..sd {
        let v = cx.kb.fresh_var()?;
        let k = cx.kb.var(v);
        let (p, dl, s) = (cx.kb.i64(pad[d]), cx.kb.i64(dil[d]), cx.kb.i64(stride[d]));
        let t = cx.kb.binary(BinOp::Add, idx[lead + 1 + d], p)?;
        let kd = cx.kb.binary(BinOp::Mul, k, dl)?;
        let t = cx.kb.binary(BinOp::Sub, t, kd)?;
        let i = cx.kb.binary(BinOp::Div, t, s)?;
        let r = cx.kb.binary(BinOp::Rem, t, s)?;
        let n = cx.kb.size(&xs[lead + 1 + d]);
        let on_grid = cx.kb.cmp(CmpOp::Eq, r, zero)?;
        let nonneg = cx.kb.cmp(CmpOp::Ge, t, zero)?;
        let below = cx.kb.cmp(CmpOp::Lt, i, n)?;
        for ok in [on_grid, nonneg, below] {
            mask = cx.kb.and(mask, ok)?;
        }
        x_at.push(i);
        w_at.push(k);
        let extent = cx.kb.size(&ws[2 + d]);
        loops.push((v, extent));
    }
    // Transposed convolutions keep the channel loop outermost (not measured otherwise).
    let taps = Taps { x_at, w_at, mask, loops, channel: (vc, cin_g), channels_inner: false };
    fold_taps(cx, node, (x, w), taps, co, ty)
}
