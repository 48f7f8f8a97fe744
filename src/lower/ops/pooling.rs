//! Pooling over the trailing 1, 2 or 3 spatial dims (the count is in the op's name): max
//! pooling with its indices, average pooling with PyTorch's divisors, the adaptive forms, and
//! max unpooling.
//! Every output element folds a region of its plane: `base + k·step` for `k` in `0..extent`
//! per spatial dim, masked where padding puts it outside the input. `ceil_mode` only changes the
//! output size (given by the graph); its partial last windows are masked the same way.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty, VarId};
use super::super::LowerError;
use super::conv::{constant, in_range, read_masked, spatial, tap};
use super::pointwise::out_sizes;
use crate::ir::{Arg, Node, ValueId};

type R = Result<ExprId, LowerError>;

/// Spatial dims of a pooling op, from its name (`max_pool3d_with_indices` has 3), or for
/// Inductor's low-memory prims (no rank in the name) from its `kernel_size`.
pub(super) fn spatial_rank(node: &Node) -> usize {
    if node.target.starts_with("prims._low_memory_max_pool") {
        match node.arg("kernel_size") {
            Some(Arg::Ints(k)) if !k.is_empty() => k.len(),
            _ => 2,
        }
    } else if node.target.contains("1d") {
        1
    } else if node.target.contains("3d") {
        3
    } else {
        2
    }
}

/// The part of the input one output element folds.
struct Region {
    x: ValueId,
    /// The coordinates before the spatial dims (batch, channel).
    lead: Vec<ExprId>,
    /// Per spatial dim: first input coordinate, distance between taps, number of taps, and the
    /// input's extent.
    base: Vec<ExprId>,
    step: Vec<i64>,
    extent: Vec<ExprId>,
    size: Vec<ExprId>,
    /// The compute type of the pooled values (the output's).
    ty: Ty,
}

/// The input, its spatial rank checked against the output coordinates.
fn input(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<(ValueId, usize, Vec<ExprId>), LowerError> {
    let x = cx.tensor(node, "self")?;
    let xs = cx.sizes(x)?;
    let sd = spatial_rank(node);
    if !(sd + 1..=sd + 2).contains(&xs.len()) || idx.len() != xs.len() {
        return Err(cx.err(node, format!("{sd}-D pooling needs an input of rank {} or {}", sd + 1, sd + 2)));
    }
    let size = xs[xs.len() - sd..].iter().map(|s| cx.kb.size(s)).collect();
    Ok((x, sd, size))
}

/// The kernel size and padding of a sliding window (average pooling's divisor needs them).
struct Geometry {
    k: Vec<i64>,
    pad: Vec<i64>,
}

fn window(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<(Region, Geometry), LowerError> {
    let (x, sd, size) = input(cx, node, idx)?;
    let k = spatial(cx, node, "kernel_size", 1, sd)?;
    let stride = if cx.ints_or(node, "stride", &[])?.is_empty() { k.clone() } else { spatial(cx, node, "stride", 1, sd)? };
    let pad = spatial(cx, node, "padding", 0, sd)?;
    let dil = spatial(cx, node, "dilation", 1, sd)?;
    let r = idx.len();
    let zero = cx.kb.i64(0);
    let base = (0..sd).map(|d| tap(cx, idx[r - sd + d], zero, stride[d], pad[d], 1)).collect::<Result<Vec<_>, _>>()?;
    let extent = k.iter().map(|&n| cx.kb.i64(n)).collect();
    let ty = super::pointwise::out_ty(cx, node)?;
    let region = Region { x, lead: idx[..r - sd].to_vec(), base, step: dil, extent, size, ty };
    Ok((region, Geometry { k, pad }))
}

/// PyTorch's adaptive regions: output `o` of `m` over an input of `n` folds
/// `[⌊o·n/m⌋, ⌈(o+1)·n/m⌉)`.
fn adaptive(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<Region, LowerError> {
    let (x, sd, size) = input(cx, node, idx)?;
    let os = out_sizes(cx, node)?;
    let r = idx.len();
    let one = cx.kb.i64(1);
    let (mut base, mut extent) = (Vec::with_capacity(sd), Vec::with_capacity(sd));
    for d in 0..sd {
        let (n, m, o) = (size[d], cx.kb.size(&os[r - sd + d]), idx[r - sd + d]);
        let start = cx.kb.binary(BinOp::Mul, o, n)?;
        let start = cx.kb.binary(BinOp::Div, start, m)?;
        let o1 = cx.kb.binary(BinOp::Add, o, one)?;
        let end = cx.kb.binary(BinOp::Mul, o1, n)?;
        let end = cx.kb.binary(BinOp::Add, end, m)?;
        let end = cx.kb.binary(BinOp::Sub, end, one)?;
        let end = cx.kb.binary(BinOp::Div, end, m)?;
        extent.push(cx.kb.binary(BinOp::Sub, end, start)?);
        base.push(start);
    }
    let ty = super::pointwise::out_ty(cx, node)?;
    Ok(Region { x, lead: idx[..r - sd].to_vec(), base, step: vec![1; sd], extent, size, ty })
}

/// One pass over a region: its loop variables, input coordinates and in-range mask.
struct Taps {
    vars: Vec<VarId>,
    at: Vec<ExprId>,
    mask: ExprId,
}

fn taps(cx: &mut Ctx<'_>, reg: &Region) -> Result<Taps, LowerError> {
    let mut t = Taps { vars: Vec::new(), at: Vec::new(), mask: cx.kb.bool(true) };
    for d in 0..reg.base.len() {
        let v = cx.kb.fresh_var()?;
        let k = cx.kb.var(v);
        let s = cx.kb.i64(reg.step[d]);
        let off = cx.kb.binary(BinOp::Mul, k, s)?;
        let i = cx.kb.binary(BinOp::Add, reg.base[d], off)?;
        let ok = in_range(cx, i, reg.size[d])?;
        t.mask = cx.kb.and(t.mask, ok)?;
        t.vars.push(v);
        t.at.push(i);
    }
    Ok(t)
}

/// The input at the taps (`other` outside the input).
fn value(cx: &mut Ctx<'_>, reg: &Region, t: &Taps, other: f64) -> R {
    let mut at = reg.lead.clone();
    at.extend(&t.at);
    let o = constant(cx, other, reg.ty);
    read_masked(cx, reg.x, &at, t.mask, o)
}

/// Folds `body` with `op` over the taps.
fn fold(cx: &mut Ctx<'_>, reg: &Region, t: &Taps, op: RedOp, body: ExprId) -> R {
    let mut acc = body;
    for (v, e) in t.vars.iter().zip(&reg.extent).rev() {
        acc = cx.kb.reduce(op, *v, *e, acc)?;
    }
    Ok(acc)
}

/// Output 0: the region's maximum (NaN when it holds one, as PyTorch's kernels); output 1: the
/// row-major index within the plane of the first maximum (of the first NaN).
fn max_of(cx: &mut Ctx<'_>, reg: &Region, out: usize) -> R {
    let t = taps(cx, reg)?;
    let v = value(cx, reg, &t, f64::NEG_INFINITY)?;
    let m = fold(cx, reg, &t, RedOp::Max, v)?;
    let has_nan = if reg.ty.is_float() {
        let t = taps(cx, reg)?;
        let v = value(cx, reg, &t, 0.0)?;
        let nan = cx.kb.cmp(CmpOp::Ne, v, v)?;
        let nan = cx.kb.cast(nan, Ty::I64);
        let any = fold(cx, reg, &t, RedOp::Max, nan)?;
        let zero = cx.kb.i64(0);
        Some(cx.kb.cmp(CmpOp::Gt, any, zero)?)
    } else {
        None
    };
    if out == 0 {
        return Ok(match has_nan {
            Some(h) => {
                let nan = constant(cx, f64::NAN, reg.ty);
                cx.kb.select(h, nan, m)?
            }
            None => m,
        });
    }
    let t = taps(cx, reg)?;
    let v = value(cx, reg, &t, f64::NEG_INFINITY)?;
    let mut hit = cx.kb.cmp(CmpOp::Eq, v, m)?;
    if let Some(h) = has_nan {
        let nan = cx.kb.cmp(CmpOp::Ne, v, v)?;
        hit = cx.kb.select(h, nan, hit)?;
    }
    let hit = cx.kb.and(t.mask, hit)?;
    let mut flat = cx.kb.i64(0);
    for (i, n) in t.at.iter().zip(&reg.size) {
        let f = cx.kb.binary(BinOp::Mul, flat, *n)?;
        flat = cx.kb.binary(BinOp::Add, f, *i)?;
    }
    let none = cx.kb.i64(i64::MAX);
    let at = cx.kb.select(hit, flat, none)?;
    fold(cx, reg, &t, RedOp::Min, at)
}

/// `max_pool{1,2,3}d` and their `_with_indices` forms.
pub fn max_pool(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let (reg, _) = window(cx, node, idx)?;
    max_of(cx, &reg, out)
}

/// `adaptive_max_pool{1,2,3}d`: values and indices.
pub fn adaptive_max_pool(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let reg = adaptive(cx, node, idx)?;
    max_of(cx, &reg, out)
}

/// The region's sum in its compute type.
fn sum_of(cx: &mut Ctx<'_>, reg: &Region) -> R {
    let t = taps(cx, reg)?;
    let v = value(cx, reg, &t, 0.0)?;
    fold(cx, reg, &t, RedOp::Sum, v)
}

/// `avg_pool{1,2,3}d`: the window's sum over PyTorch's divisor (`divisor_override`, or the
/// window clipped to the padded input, or to the input itself without `count_include_pad`);
/// integers divide truncating, as PyTorch's integer kernels do.
pub fn avg_pool(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (reg, g) = window(cx, node, idx)?;
    if reg.step.iter().any(|&d| d != 1) {
        return Err(cx.err(node, "average pooling has no dilation"));
    }
    let sum = sum_of(cx, &reg)?;
    if let Some(d) = node.arg("divisor_override").and_then(|a| match a {
        Arg::Int(i) => Some(*i as f64),
        Arg::Float(f) => Some(*f),
        _ => None,
    }) {
        let d = constant(cx, d, reg.ty);
        return Ok(cx.kb.binary(BinOp::Div, sum, d)?);
    }
    let include_pad = cx.bool_or(node, "count_include_pad", true)?;
    let mut n = cx.kb.i64(1);
    for d in 0..reg.base.len() {
        let (start, size) = (reg.base[d], reg.size[d]);
        let (kk, pp) = (cx.kb.i64(g.k[d]), cx.kb.i64(g.pad[d]));
        let end = cx.kb.binary(BinOp::Add, start, kk)?;
        let lim = cx.kb.binary(BinOp::Add, size, pp)?;
        let end = cx.kb.binary(BinOp::Min, end, lim)?;
        let extent = if include_pad {
            cx.kb.binary(BinOp::Sub, end, start)?
        } else {
            let zero = cx.kb.i64(0);
            let s = cx.kb.binary(BinOp::Max, start, zero)?;
            let e = cx.kb.binary(BinOp::Min, end, size)?;
            cx.kb.binary(BinOp::Sub, e, s)?
        };
        n = cx.kb.binary(BinOp::Mul, n, extent)?;
    }
    let n = cx.kb.cast(n, reg.ty);
    Ok(cx.kb.binary(BinOp::Div, sum, n)?)
}

/// `adaptive_avg_pool{1,2,3}d` (and `_adaptive_avg_pool2d`): the region's mean.
pub fn adaptive_avg_pool(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let reg = adaptive(cx, node, idx)?;
    let sum = sum_of(cx, &reg)?;
    let mut n = cx.kb.i64(1);
    for e in &reg.extent {
        n = cx.kb.binary(BinOp::Mul, n, *e)?;
    }
    let n = cx.kb.cast(n, reg.ty);
    Ok(cx.kb.binary(BinOp::Div, sum, n)?)
}

/// `prims._low_memory_max_pool_with_offsets` (Inductor's max pooling): output 0 the window
/// maxima as `max_pool`, output 1 the row-major offset within the window (`kh·kw + kw` in 2-D)
/// of the first maximum, stored as int8: the smallest offset whose tap equals the maximum.
pub fn max_pool_with_offsets(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let (reg, g) = window(cx, node, idx)?;
    let m = max_of(cx, &reg, 0)?;
    if out == 0 {
        return Ok(m);
    }
    let t = taps(cx, &reg)?;
    let v = value(cx, &reg, &t, f64::NEG_INFINITY)?;
    let hit = cx.kb.cmp(CmpOp::Eq, v, m)?;
    let hit = cx.kb.and(t.mask, hit)?;
    let mut flat = cx.kb.i64(0);
    for (var, k) in t.vars.iter().zip(&g.k) {
        let kk = cx.kb.i64(*k);
        let f = cx.kb.binary(BinOp::Mul, flat, kk)?;
        let tap_k = cx.kb.var(*var);
        flat = cx.kb.binary(BinOp::Add, f, tap_k)?;
    }
    let none = cx.kb.i64(g.k.iter().product());
    let at = cx.kb.select(hit, flat, none)?;
    fold(cx, &reg, &t, RedOp::Min, at)
}

/// `prims._low_memory_max_pool_offsets_to_indices`: a window offset back to the index within the
/// input plane that `max_pool2d_with_indices` returns: per spatial dim `o·stride - pad +
/// (offset's digit)·dilation`, flattened row-major over the last `input_size` dims.
pub fn max_pool_offsets_to_indices(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let offsets = cx.tensor(node, "self")?;
    let sd = spatial_rank(node);
    let r = idx.len();
    if r < sd {
        return Err(cx.err(node, format!("pooling offsets need rank {sd} or more")));
    }
    let k = spatial(cx, node, "kernel_size", 1, sd)?;
    let stride = spatial(cx, node, "stride", 1, sd)?;
    let pad = spatial(cx, node, "padding", 0, sd)?;
    let dil = spatial(cx, node, "dilation", 1, sd)?;
    let size = cx.sym_ints(node, "input_size")?;
    if size.len() < sd {
        return Err(cx.err(node, format!("argument `input_size`: expected {sd} sizes, got {}", size.len())));
    }
    let size: Vec<ExprId> = size[size.len() - sd..].iter().map(|s| cx.kb.size(s)).collect();
    let off = cx.read(offsets, idx)?;
    let mut rest = cx.kb.cast(off, Ty::I64);
    // Digits of the offset, last spatial dim first.
    let mut digits = vec![rest; sd];
    for d in (0..sd).rev() {
        let kk = cx.kb.i64(k[d]);
        digits[d] = cx.kb.binary(BinOp::Rem, rest, kk)?;
        rest = cx.kb.binary(BinOp::Div, rest, kk)?;
    }
    let mut flat = cx.kb.i64(0);
    for d in 0..sd {
        let at = tap(cx, idx[r - sd + d], digits[d], stride[d], pad[d], dil[d])?;
        let f = cx.kb.binary(BinOp::Mul, flat, size[d])?;
        flat = cx.kb.binary(BinOp::Add, f, at)?;
    }
    Ok(flat)
}

/// `max_unpool2d/3d(self, indices, output_size, ...)`: the output element at flat position `p`
/// of its plane is the input element whose index is `p` (the last one, as PyTorch's kernel
/// writes them in order), else zero. Each element searches its input plane.
pub fn max_unpool(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = cx.tensor(node, "self")?;
    let ind = cx.tensor(node, "indices")?;
    let (xs, os) = (cx.sizes(x)?, out_sizes(cx, node)?);
    let sd = spatial_rank(node);
    let r = idx.len();
    if r < sd || xs.len() != r {
        return Err(cx.err(node, format!("max_unpool needs inputs of the output's rank with {sd} spatial dims")));
    }
    let ty = super::pointwise::out_ty(cx, node)?;
    let mut p = cx.kb.i64(0);
    for d in r - sd..r {
        let n = cx.kb.size(&os[d]);
        let s = cx.kb.binary(BinOp::Mul, p, n)?;
        p = cx.kb.binary(BinOp::Add, s, idx[d])?;
    }
    let plane = xs[r - sd..].iter().cloned().fold(crate::sym::Expr::int(1), crate::sym::Expr::mul);
    let plane = cx.kb.size(&plane);
    // Input coordinates of flat plane position `j`.
    let coords = |cx: &mut Ctx<'_>, j: ExprId| -> Result<Vec<ExprId>, LowerError> {
        let mut at = idx[..r - sd].to_vec();
        let mut rest = j;
        let mut tail = Vec::with_capacity(sd);
        for d in (r - sd..r).rev() {
            let n = cx.kb.size(&xs[d]);
            tail.push(cx.kb.binary(BinOp::Rem, rest, n)?);
            rest = cx.kb.binary(BinOp::Div, rest, n)?;
        }
        at.extend(tail.into_iter().rev());
        Ok(at)
    };
    let v = cx.kb.fresh_var()?;
    let j = cx.kb.var(v);
    let at = coords(cx, j)?;
    let i = cx.read(ind, &at)?;
    let i = cx.kb.cast(i, Ty::I64);
    let hit = cx.kb.cmp(CmpOp::Eq, i, p)?;
    let none = cx.kb.i64(-1);
    let cand = cx.kb.select(hit, j, none)?;
    let last = cx.kb.reduce(RedOp::Max, v, plane, cand)?;
    let zero = cx.kb.i64(0);
    let found = cx.kb.cmp(CmpOp::Ge, last, zero)?;
    let safe = cx.kb.binary(BinOp::Max, last, zero)?;
    let at = coords(cx, safe)?;
    let value = cx.read(x, &at)?;
    let value = cx.kb.cast(value, ty);
    let z = constant(cx, 0.0, ty);
    Ok(cx.kb.select(found, value, z)?)
}
