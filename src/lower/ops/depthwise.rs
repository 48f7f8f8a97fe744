//! Depthwise 2-D convolution (`groups` equal to the input channels, one input channel per
//! group, any channel multiplier, unit stride and dilation along W), lowered so that a tap is a masked load at an index that is
//! affine in the output column: `x[n, c, oh·s − p + kh·d, ow·s − p + kw·d]`, the padding a mask
//! on the load itself rather than a select on each coordinate. On the depthwise schedule
//! (`lower::depthwise`) `ow` is the work-item's own column and codegen emits the masked load as
//! a branch, so a stride-1 tap is one contiguous (masked at the borders) vector load across the
//! work-items. Through [`super::conv::conv`]'s general path every tap was a gather
//! (docs/PERFORMANCE.md, "Issue 28: convolutions against torch at the corpus's own sizes").

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, ExprId, RedOp, Ty};
use super::super::LowerError;
use super::conv::{constant, spatial_taps};
use crate::ir::{Node, ValueId};

/// A convolution's window arguments, already parsed by [`super::conv::conv`].
pub(super) struct Window<'a> {
    pub stride: &'a [i64],
    pub pad: &'a [i64],
    pub dil: &'a [i64],
    pub groups: i64,
    /// 1 when the input is batched, else 0.
    pub lead: usize,
    pub ty: Ty,
}

/// The output channel's input channel when `(x, w)` is a depthwise 2-D convolution with static
/// channel counts: `co / multiplier` (`co` itself without a multiplier), else `None`.
fn input_channel(cx: &mut Ctx<'_>, (x, w): (ValueId, ValueId), win: &Window<'_>, co: ExprId) -> Result<Option<ExprId>, LowerError> {
    let (xs, ws) = (cx.sizes(x)?, cx.sizes(w)?);
    if ws.len() != 4 || xs.len() != 3 + win.lead || win.groups < 2 {
        return Ok(None);
    }
    let (Some(cout), Some(1), Some(cin)) = (ws[0].as_int(), ws[1].as_int(), xs[win.lead].as_int()) else { return Ok(None) };
    if cin != win.groups || cout % cin != 0 {
        return Ok(None);
    }
    let multiplier = cout / cin;
    if multiplier == 1 {
        return Ok(Some(co));
    }
    let m = cx.kb.i64(multiplier);
    Ok(Some(cx.kb.binary(BinOp::Div, co, m)?))
}

/// `Σ_kh Σ_kw x·w (+ bias[co])` of a depthwise convolution at output coordinates `idx`, or
/// `None` when the node is not one (the general path lowers it).
pub(super) fn conv(cx: &mut Ctx<'_>, node: &Node, (x, w): (ValueId, ValueId), win: &Window<'_>, idx: &[ExprId]) -> Result<Option<ExprId>, LowerError> {
    let lead = win.lead;
    let Some(&co) = idx.get(lead) else { return Ok(None) };
    if win.stride.len() != 2 || win.pad.len() != 2 || win.dil.len() != 2 || idx.len() != lead + 3 {
        return Ok(None);
    }
    // Along W only unit steps make a tap contiguous across the work-items: stride 2 measured
    // no faster here (a depthwise 3×3 stride 2 at 32×32, 0.55–0.61 ms on the general path
    // against 0.58–0.65 ms, docs/PERFORMANCE.md), so strided and dilated rows keep it.
    if win.stride[1] != 1 || win.dil[1] != 1 {
        return Ok(None);
    }
    // Last of the checks: it adds the multiplier's division to the kernel.
    let Some(ci) = input_channel(cx, (x, w), win, co)? else { return Ok(None) };
    let (xs, ws) = (cx.sizes(x)?, cx.sizes(w)?);
    let mut mask = cx.kb.bool(true);
    let mut x_at: Vec<ExprId> = idx[..lead].to_vec();
    x_at.push(ci);
    let zero_i = cx.kb.i64(0);
    let mut w_at = vec![co, zero_i];
    let loops = spatial_taps(cx, (idx, lead), (&xs, &ws), (win.stride, win.pad, win.dil), (&mut x_at, &mut w_at), &mut mask)?;
    let zero = constant(cx, 0.0, win.ty);
    // The mask goes on the loads (a fused producer's too); the select after them keeps the
    // padding zero where a producer's epilogue maps a masked-out 0 to something else.
    let xv = cx.masked(mask, |cx| cx.read(x, &x_at))?;
    let xv = cx.kb.cast(xv, win.ty);
    let xv = cx.kb.select(mask, xv, zero)?;
    let wv = cx.read(w, &w_at)?;
    let wv = cx.kb.cast(wv, win.ty);
    let mut acc = cx.kb.binary(BinOp::Mul, xv, wv)?;
    for (v, extent) in loops.into_iter().rev() {
        acc = cx.kb.reduce(RedOp::Sum, v, extent, acc)?;
    }
    if let Some(b) = cx.opt_tensor(node, "bias") {
        let bv = cx.read(b, &[co])?;
        let bv = cx.kb.cast(bv, win.ty);
        acc = cx.kb.binary(BinOp::Add, acc, bv)?;
    }
    Ok(Some(acc))
}
