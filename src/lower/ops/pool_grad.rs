//! Pooling gradients as gathers: each input element sums the output gradients of the windows
//! that hold it (`max_pool{2,3}d_with_indices_backward`, `avg_pool2d_backward`,
//! `_adaptive_avg_pool2d_backward`). Along a spatial dim, the windows holding input coordinate
//! `h` are a short run of output coordinates `lo ..= hi`, so each element loops over that run
//! (a constant number of candidates) rather than over the whole output plane.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId, Ty, VarId};
use super::super::LowerError;
use super::conv::{constant, read_masked, spatial};
use super::pooling::spatial_rank;
use crate::ir::{Arg, Node};

type R = Result<ExprId, LowerError>;

/// The candidate output coordinates along one dim: `o = lo + e` for `e` in `0..extent`, valid
/// where `o <= hi` and `o < n_out`.
struct Run {
    lo: ExprId,
    hi: ExprId,
    extent: ExprId,
    n_out: ExprId,
}

/// Sliding windows (kernel `k`, stride `s`, padding `p`, dilation `d`) holding input coordinate
/// `h`: `o·s - p <= h <= o·s - p + (k-1)·d`, so `lo = ⌈max(h + p - (k-1)·d, 0) / s⌉` and
/// `hi = ⌊(h + p) / s⌋`; at most `(k-1)·d / s + 1` of them.
fn sliding(cx: &mut Ctx<'_>, h: ExprId, n_out: ExprId, k: i64, s: i64, p: i64, d: i64) -> Result<Run, LowerError> {
    let (pk, reach, sk, zero) = (cx.kb.i64(p), cx.kb.i64((k - 1) * d), cx.kb.i64(s), cx.kb.i64(0));
    let hp = cx.kb.binary(BinOp::Add, h, pk)?;
    let first = cx.kb.binary(BinOp::Sub, hp, reach)?;
    let first = cx.kb.binary(BinOp::Max, first, zero)?;
    let s1 = cx.kb.i64(s - 1);
    let first = cx.kb.binary(BinOp::Add, first, s1)?;
    let lo = cx.kb.binary(BinOp::Div, first, sk)?;
    let hi = cx.kb.binary(BinOp::Div, hp, sk)?;
    let extent = cx.kb.i64((k - 1) * d / s + 1);
    Ok(Run { lo, hi, extent, n_out })
}

/// Adaptive windows of `m` outputs over `n` inputs holding `h`: window `o` is
/// `[⌊o·n/m⌋, ⌈(o+1)·n/m⌉)`, so `lo = ⌊h·m/n⌋` and `hi = ⌈(h+1)·m/n⌉ - 1`; at most `m/n + 2`.
fn adaptive(cx: &mut Ctx<'_>, h: ExprId, n: ExprId, m: ExprId) -> Result<Run, LowerError> {
    let one = cx.kb.i64(1);
    let hm = cx.kb.binary(BinOp::Mul, h, m)?;
    let lo = cx.kb.binary(BinOp::Div, hm, n)?;
    let h1 = cx.kb.binary(BinOp::Add, h, one)?;
    let end = cx.kb.binary(BinOp::Mul, h1, m)?;
    let end = cx.kb.binary(BinOp::Add, end, n)?;
    let end = cx.kb.binary(BinOp::Sub, end, one)?;
    let end = cx.kb.binary(BinOp::Div, end, n)?;
    let hi = cx.kb.binary(BinOp::Sub, end, one)?;
    let two = cx.kb.i64(2);
    let q = cx.kb.binary(BinOp::Div, m, n)?;
    let extent = cx.kb.binary(BinOp::Add, q, two)?;
    Ok(Run { lo, hi, extent, n_out: m })
}

/// One candidate window per dim: its output coordinates, whether all are valid, and the one
/// loop variable (over every dim's run, the last dim fastest) to fold over.
struct Candidate {
    o: Vec<ExprId>,
    valid: ExprId,
    var: VarId,
    extent: ExprId,
}

/// One loop over the candidates in row-major order of their output coordinates, the order in
/// which ATen's CPU kernels add the windows' gradients (it matters where each step rounds).
fn candidate(cx: &mut Ctx<'_>, runs: &[Run]) -> Result<Candidate, LowerError> {
    let var = cx.kb.fresh_var()?;
    let flat = cx.kb.var(var);
    let mut c = Candidate { o: vec![flat; runs.len()], valid: cx.kb.bool(true), var, extent: cx.kb.i64(1) };
    for (d, r) in runs.iter().enumerate().rev() {
        let q = cx.kb.binary(BinOp::Div, flat, c.extent)?;
        let e = cx.kb.binary(BinOp::Rem, q, r.extent)?;
        c.extent = cx.kb.binary(BinOp::Mul, c.extent, r.extent)?;
        let o = cx.kb.binary(BinOp::Add, r.lo, e)?;
        let le = cx.kb.cmp(CmpOp::Le, o, r.hi)?;
        let lt = cx.kb.cmp(CmpOp::Lt, o, r.n_out)?;
        let ok = cx.kb.and(le, lt)?;
        c.valid = cx.kb.and(c.valid, ok)?;
        c.o[d] = o;
    }
    Ok(c)
}

fn fold(cx: &mut Ctx<'_>, op: &Operands, c: &Candidate, body: ExprId) -> R {
    Ok(cx.kb.sum_in(c.var, c.extent, body, op.elem)?)
}

/// The gradient, its sizes and the split of the element's coordinates into leading and
/// spatial ones, for a pooling gradient over `sd` spatial dims.
struct Operands {
    g: crate::ir::ValueId,
    lead: Vec<ExprId>,
    h: Vec<ExprId>,
    in_size: Vec<ExprId>,
    out_size: Vec<ExprId>,
    ty: Ty,
    /// The gradient's storage: half-precision gradients round every step to it.
    elem: Elem,
}

fn operands(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], sd: usize) -> Result<Operands, LowerError> {
    let (g, x) = (cx.tensor(node, "grad_output")?, cx.tensor(node, "self")?);
    let (gs, xs) = (cx.ksizes(g)?, cx.ksizes(x)?);
    let r = idx.len();
    if !(sd + 1..=sd + 2).contains(&r) || gs.len() != r || xs.len() != r {
        return Err(cx.err(node, format!("{sd}-D pooling gradients need inputs of rank {} or {}", sd + 1, sd + 2)));
    }
    let ty = super::pointwise::out_ty(cx, node)?;
    let dtype = cx.meta(g)?.dtype;
    let elem = Elem::from_dtype(dtype).ok_or_else(|| cx.err(node, format!("pooling gradient of {}", dtype.name())))?;
    Ok(Operands { g, lead: idx[..r - sd].to_vec(), h: idx[r - sd..].to_vec(), in_size: xs[r - sd..].to_vec(), out_size: gs[r - sd..].to_vec(), ty, elem })
}

/// `grad_output` at the candidate (zero where it is not a window holding the element).
fn grad_at(cx: &mut Ctx<'_>, op: &Operands, c: &Candidate) -> R {
    let mut at = op.lead.clone();
    at.extend(&c.o);
    let zero = constant(cx, 0.0, op.ty);
    read_masked(cx, op.g, &at, c.valid, zero)
}

/// `max_pool{2,3}d_with_indices_backward`: the sum of the output gradients whose recorded
/// index (row-major within the plane) is this element.
pub fn max_pool_backward(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let sd = spatial_rank(node);
    let op = operands(cx, node, idx, sd)?;
    let k = spatial(cx, node, "kernel_size", 1, sd)?;
    let stride = if cx.ints_or(node, "stride", &[])?.is_empty() { k.clone() } else { spatial(cx, node, "stride", 1, sd)? };
    let (pad, dil) = (spatial(cx, node, "padding", 0, sd)?, spatial(cx, node, "dilation", 1, sd)?);
    if stride.iter().chain(&dil).chain(&k).any(|&v| v <= 0) {
        return Err(cx.err(node, "kernel_size, stride and dilation must be positive"));
    }
    let runs = (0..sd).map(|d| sliding(cx, op.h[d], op.out_size[d], k[d], stride[d], pad[d], dil[d])).collect::<Result<Vec<_>, _>>()?;
    let c = candidate(cx, &runs)?;
    let ind = cx.tensor(node, "indices")?;
    let mut at = op.lead.clone();
    at.extend(&c.o);
    let none = cx.kb.i64(-1);
    let i = read_masked(cx, ind, &at, c.valid, none)?;
    let mut here = cx.kb.i64(0);
    for d in 0..sd {
        let f = cx.kb.binary(BinOp::Mul, here, op.in_size[d])?;
        here = cx.kb.binary(BinOp::Add, f, op.h[d])?;
    }
    let hit = cx.kb.cmp(CmpOp::Eq, i, here)?;
    let gv = grad_at(cx, &op, &c)?;
    let zero = constant(cx, 0.0, op.ty);
    let body = cx.kb.select(hit, gv, zero)?;
    fold(cx, &op, &c, body)
}

/// `avg_pool2d_backward`: each window's gradient over the forward's divisor
/// (`divisor_override`, or the window clipped to the padded input, or without
/// `count_include_pad` to the input).
pub fn avg_pool2d_backward(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let op = operands(cx, node, idx, 2)?;
    let k = spatial(cx, node, "kernel_size", 1, 2)?;
    let stride = if cx.ints_or(node, "stride", &[])?.is_empty() { k.clone() } else { spatial(cx, node, "stride", 1, 2)? };
    let pad = spatial(cx, node, "padding", 0, 2)?;
    if stride.iter().chain(&k).any(|&v| v <= 0) {
        return Err(cx.err(node, "kernel_size and stride must be positive"));
    }
    let runs = (0..2).map(|d| sliding(cx, op.h[d], op.out_size[d], k[d], stride[d], pad[d], 1)).collect::<Result<Vec<_>, _>>()?;
    let c = candidate(cx, &runs)?;
    let gv = grad_at(cx, &op, &c)?;
    let divisor = match node.arg("divisor_override") {
        Some(Arg::Int(d)) if *d != 0 => Some(*d),
        Some(Arg::Int(_)) => return Err(cx.err(node, "divisor_override must not be zero")),
        _ => None,
    };
    let n = match divisor {
        Some(d) => cx.kb.i64(d),
        None => {
            let include_pad = cx.bool_or(node, "count_include_pad", true)?;
            let mut n = cx.kb.i64(1);
            for d in 0..2 {
                let (sk, pk, kk, zero) = (cx.kb.i64(stride[d]), cx.kb.i64(pad[d]), cx.kb.i64(k[d]), cx.kb.i64(0));
                let start = cx.kb.binary(BinOp::Mul, c.o[d], sk)?;
                let start = cx.kb.binary(BinOp::Sub, start, pk)?;
                let end = cx.kb.binary(BinOp::Add, start, kk)?;
                let lim = cx.kb.binary(BinOp::Add, op.in_size[d], pk)?;
                let end = cx.kb.binary(BinOp::Min, end, lim)?;
                let extent = if include_pad {
                    cx.kb.binary(BinOp::Sub, end, start)?
                } else {
                    let s = cx.kb.binary(BinOp::Max, start, zero)?;
                    let e = cx.kb.binary(BinOp::Min, end, op.in_size[d])?;
                    cx.kb.binary(BinOp::Sub, e, s)?
                };
                n = cx.kb.binary(BinOp::Mul, n, extent)?;
            }
            // Candidates that are not windows may have an empty extent: divide by 1 there.
            let one = cx.kb.i64(1);
            cx.kb.select(c.valid, n, one)?
        }
    };
    let n = cx.kb.cast(n, op.ty);
    let body = cx.kb.binary(BinOp::Div, gv, n)?;
    let body = cx.kb.round_to(body, op.elem);
    fold(cx, &op, &c, body)
}

/// `_adaptive_avg_pool2d_backward(grad_output, self)`: each window's gradient over its size.
pub fn adaptive_avg_pool2d_backward(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let op = operands(cx, node, idx, 2)?;
    let runs = (0..2).map(|d| adaptive(cx, op.h[d], op.in_size[d], op.out_size[d])).collect::<Result<Vec<_>, _>>()?;
    let c = candidate(cx, &runs)?;
    let mut body = grad_at(cx, &op, &c)?;
    // ATen divides by each dim's extent in turn, rounding each quotient to the dtype.
    for d in 0..2 {
        let (len, m, one) = (op.in_size[d], op.out_size[d], cx.kb.i64(1));
        let start = cx.kb.binary(BinOp::Mul, c.o[d], len)?;
        let start = cx.kb.binary(BinOp::Div, start, m)?;
        let o1 = cx.kb.binary(BinOp::Add, c.o[d], one)?;
        let end = cx.kb.binary(BinOp::Mul, o1, len)?;
        let end = cx.kb.binary(BinOp::Add, end, m)?;
        let end = cx.kb.binary(BinOp::Sub, end, one)?;
        let end = cx.kb.binary(BinOp::Div, end, m)?;
        let extent = cx.kb.binary(BinOp::Sub, end, start)?;
        // Candidates that are not windows may have an empty extent: divide by 1 there.
        let n = cx.kb.select(c.valid, extent, one)?;
        let n = cx.kb.cast(n, op.ty);
        let q = cx.kb.binary(BinOp::Div, body, n)?;
        body = cx.kb.round_to(q, op.elem);
    }
    fold(cx, &op, &c, body)
}
