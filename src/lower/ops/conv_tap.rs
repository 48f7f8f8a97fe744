//! A convolution's input tap read from its buffer with one select on the spatial offset.
//!
//! Why: [`super::conv::read_masked`] clamps every coordinate with its own select and then
//! linearizes, so each tap costs one select per dim and the whole multiply-add chain of the
//! index inside the innermost loop, none of which codegen can hoist (every term sits behind a
//! select that moves with the tap). A convolution's leading coordinates (batch, input channel)
//! are always in range: only the spatial part needs the padding mask. Here the index is
//! `lead + select(mask, spatial, 0)`, the spatial offset computed unmasked, the summands
//! ordered so that the one moving in the innermost loop is added last (the input channel when
//! its loop is innermost, `lower::ops::conv::channels_inner`): what does not move with it is
//! hoisted out of that loop by codegen.

use super::super::ctx::Ctx;
use super::super::kernel::{Access, BinOp, Elem, ExprId};
use super::super::LowerError;
use crate::ir::{TensorMeta, ValueId};

/// `x[at]` where `mask` holds, else zero of `other`'s type, for a convolution input `x` whose
/// coordinates `at` are `[batch?, channel, spatial…]` with the spatial ones starting at
/// `spatial`; `channel_last`: add the channel's term after the spatial offset (its loop is the
/// innermost). Falls back to [`super::conv::read_masked`] when `x` is not a buffer of its own
/// (an inlined producer) or a mask is already in force.
pub(super) fn read_tap(cx: &mut Ctx<'_>, x: ValueId, at: &[ExprId], spatial: usize, mask: ExprId, other: ExprId, channel_last: bool) -> Result<ExprId, LowerError> {
    let meta = cx.meta(x)?;
    let elem = Elem::from_dtype(meta.dtype);
    let (Some(elem), true, None) = (elem, cx.materialized.contains(&x), cx.mask) else {
        return super::conv::read_masked(cx, x, at, mask, other);
    };
    if at.len() != meta.sizes.len() || spatial == 0 || spatial > at.len() {
        return super::conv::read_masked(cx, x, at, mask, other);
    }
    let strides = TensorMeta::contiguous_strides(&meta.sizes);
    let name = cx.graph.value(x).name.clone();
    let buf = cx.kb.buffer_of(&name, Access::Read, elem);
    let mut terms = Vec::with_capacity(at.len());
    for (i, s) in at.iter().zip(&strides) {
        let s = cx.kb.size(s);
        terms.push(cx.kb.binary(BinOp::Mul, *i, s)?);
    }
    let mut offset = cx.kb.i64(0);
    for t in &terms[spatial..] {
        offset = cx.kb.binary(BinOp::Add, offset, *t)?;
    }
    let zero = cx.kb.i64(0);
    let offset = cx.kb.select(mask, offset, zero)?;
    let channel = spatial - 1;
    let mut index = cx.kb.i64(0);
    for t in &terms[..channel] {
        index = cx.kb.binary(BinOp::Add, index, *t)?;
    }
    let (first, last) = if channel_last { (offset, terms[channel]) } else { (terms[channel], offset) };
    index = cx.kb.binary(BinOp::Add, index, first)?;
    index = cx.kb.binary(BinOp::Add, index, last)?;
    let v = cx.kb.load(buf, index);
    let ty = cx.kb.ty(other);
    let v = cx.kb.cast(v, ty);
    Ok(cx.kb.select(mask, v, other)?)
}
