//! Pooling over the last 1 or 3 dims (the 2-D forms live in `pool`): max (values and indices),
//! average and
//! adaptive average, with `ceil_mode` (the output sizes come from the graph; windows that run
//! past the input are masked, and the average's divisor is clipped as PyTorch clips it).

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty};
use super::super::LowerError;
use crate::ir::Node;

fn per_dim(cx: &Ctx<'_>, node: &Node, name: &str, k: usize, default: &[i64]) -> Result<Vec<i64>, LowerError> {
    let v = cx.ints_or(node, name, &[])?;
    let v = match v.len() {
        0 => default.to_vec(),
        1 => vec![v[0]; k],
        _ => v,
    };
    if v.len() != k {
        return Err(cx.err(node, format!("argument `{name}`: expected {k} values, got {v:?}")));
    }
    Ok(v)
}

/// `0 <= c < size`.
fn in_range(cx: &mut Ctx<'_>, c: ExprId, size: ExprId) -> Result<ExprId, LowerError> {
    let zero = cx.kb.i64(0);
    let lo = cx.kb.cmp(CmpOp::Ge, c, zero)?;
    let hi = cx.kb.cmp(CmpOp::Lt, c, size)?;
    Ok(cx.kb.and(lo, hi)?)
}

/// `o·s - p + t·d`.
fn tap(cx: &mut Ctx<'_>, o: ExprId, t: ExprId, s: i64, p: i64, d: i64) -> Result<ExprId, LowerError> {
    let (s, p, d) = (cx.kb.i64(s), cx.kb.i64(p), cx.kb.i64(d));
    let a = cx.kb.binary(BinOp::Mul, o, s)?;
    let a = cx.kb.binary(BinOp::Sub, a, p)?;
    let b = cx.kb.binary(BinOp::Mul, t, d)?;
    Ok(cx.kb.binary(BinOp::Add, a, b)?)
}

struct Geometry {
    k: Vec<i64>,
    stride: Vec<i64>,
    pad: Vec<i64>,
    dil: Vec<i64>,
}

fn geometry(cx: &Ctx<'_>, node: &Node, k: usize) -> Result<Geometry, LowerError> {
    let ks = per_dim(cx, node, "kernel_size", k, &[])?;
    let stride = per_dim(cx, node, "stride", k, &ks)?;
    let pad = per_dim(cx, node, "padding", k, &vec![0; k])?;
    let dil = per_dim(cx, node, "dilation", k, &vec![1; k])?;
    Ok(Geometry { k: ks, stride, pad, dil })
}

/// A constant of `like`'s type: `-inf` is the smallest integer for integer tensors.
fn constant_like(cx: &mut Ctx<'_>, v: f64, like: ExprId) -> ExprId {
    match cx.kb.ty(like) {
        Ty::I64 if v == f64::NEG_INFINITY => cx.kb.i64(i64::MIN),
        Ty::I64 => cx.kb.i64(v as i64),
        _ => cx.kb.float_like(v, like),
    }
}

/// The window of output `idx` over the last `k` dims: its reduction variables, the masked
/// input coordinates and the in-range mask.
struct Taps {
    vars: Vec<super::super::kernel::VarId>,
    at: Vec<ExprId>,
    mask: ExprId,
}

fn taps(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], k: usize, g: &Geometry) -> Result<Taps, LowerError> {
    let x = cx.tensor(node, "self")?;
    let xs = cx.ksizes(x)?;
    let r = idx.len();
    if xs.len() != r || r < k + 1 {
        return Err(cx.err(node, format!("{k}-D pooling needs an input of rank {} or {}", k + 1, k + 2)));
    }
    let vars = (0..k).map(|_| cx.kb.fresh_var()).collect::<Result<Vec<_>, _>>()?;
    let mut at = idx[..r - k].to_vec();
    let mut mask = cx.kb.bool(true);
    for d in 0..k {
        let t = cx.kb.var(vars[d]);
        let i = tap(cx, idx[r - k + d], t, g.stride[d], g.pad[d], g.dil[d])?;
        let m = in_range(cx, i, xs[r - k + d])?;
        mask = cx.kb.and(mask, m)?;
        at.push(i);
    }
    let zero = cx.kb.i64(0);
    let at = at.iter().map(|&i| cx.kb.select(mask, i, zero)).collect::<Result<Vec<_>, _>>()?;
    Ok(Taps { vars, at, mask })
}

fn reduce_all(cx: &mut Ctx<'_>, t: &Taps, g: &Geometry, op: RedOp, body: ExprId) -> Result<ExprId, LowerError> {
    let mut acc = body;
    for d in (0..t.vars.len()).rev() {
        let e = cx.kb.i64(g.k[d]);
        acc = cx.kb.reduce(op, t.vars[d], e, acc)?;
    }
    Ok(acc)
}

/// Folds `op` over the window of output `idx` (padding value `other`) of the last `k` dims.
fn fold(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], k: usize, g: &Geometry, op: RedOp, other: f64) -> Result<ExprId, LowerError> {
    let x = cx.tensor(node, "self")?;
    let t = taps(cx, node, idx, k, g)?;
    let v = cx.read(x, &t.at)?;
    let o = constant_like(cx, other, v);
    let body = cx.kb.select(t.mask, v, o)?;
    reduce_all(cx, &t, g, op, body)
}

/// The flat plane index of the window's first maximum: the smallest in-range index whose value
/// equals the window's max.
fn argmax(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], k: usize, g: &Geometry) -> Result<ExprId, LowerError> {
    let m = fold(cx, node, idx, k, g, RedOp::Max, f64::NEG_INFINITY)?;
    let x = cx.tensor(node, "self")?;
    let xs = cx.ksizes(x)?;
    let t = taps(cx, node, idx, k, g)?;
    let v = cx.read(x, &t.at)?;
    let r = t.at.len();
    let mut flat = cx.kb.i64(0);
    for (&size, &at) in xs[r - k..].iter().zip(&t.at[r - k..]) {
        flat = cx.kb.binary(BinOp::Mul, flat, size)?;
        flat = cx.kb.binary(BinOp::Add, flat, at)?;
    }
    let hit = cx.kb.cmp(CmpOp::Eq, v, m)?;
    let hit = cx.kb.and(hit, t.mask)?;
    let big = cx.kb.i64(i64::MAX);
    let body = cx.kb.select(hit, flat, big)?;
    reduce_all(cx, &t, g, RedOp::Min, body)
}

fn max_pool(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId], k: usize) -> Result<ExprId, LowerError> {
    let g = geometry(cx, node, k)?;
    if out == 1 {
        return argmax(cx, node, idx, k, &g);
    }
    fold(cx, node, idx, k, &g, RedOp::Max, f64::NEG_INFINITY)
}

pub fn max_pool1d(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    max_pool(cx, node, out, idx, 1)
}

pub fn max_pool3d(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    max_pool(cx, node, out, idx, 3)
}

fn avg_pool(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], k: usize) -> Result<ExprId, LowerError> {
    let g = geometry(cx, node, k)?;
    if g.dil.iter().any(|&d| d != 1) {
        return Err(cx.err(node, "average pooling has no dilation"));
    }
    let sum = fold(cx, node, idx, k, &g, RedOp::Sum, 0.0)?;
    let int = cx.kb.ty(sum) == Ty::I64;
    if let Some(d) = cx.opt_number(node, "divisor_override")? {
        return Ok(cx.kb.binary(BinOp::Div, sum, d)?);
    }
    let include_pad = cx.bool_or(node, "count_include_pad", true)?;
    let x = cx.tensor(node, "self")?;
    let xs = cx.ksizes(x)?;
    let r = idx.len();
    // PyTorch's divisor: the window clipped to the padded input, then (without
    // count_include_pad) to the input itself.
    let mut n = cx.kb.i64(1);
    for d in 0..k {
        let zero = cx.kb.i64(0);
        let start = tap(cx, idx[r - k + d], zero, g.stride[d], g.pad[d], 1)?;
        let kk = cx.kb.i64(g.k[d]);
        let pp = cx.kb.i64(g.pad[d]);
        let end = cx.kb.binary(BinOp::Add, start, kk)?;
        let lim = cx.kb.binary(BinOp::Add, xs[r - k + d], pp)?;
        let end = cx.kb.binary(BinOp::Min, end, lim)?;
        let len = if include_pad {
            cx.kb.binary(BinOp::Sub, end, start)?
        } else {
            let s = cx.kb.binary(BinOp::Max, start, zero)?;
            let e = cx.kb.binary(BinOp::Min, end, xs[r - k + d])?;
            cx.kb.binary(BinOp::Sub, e, s)?
        };
        n = cx.kb.binary(BinOp::Mul, n, len)?;
    }
    // Integer tensors divide as integers (PyTorch truncates).
    let n = if int { n } else { cx.kb.to_f32(n) };
    Ok(cx.kb.binary(BinOp::Div, sum, n)?)
}

pub fn avg_pool1d(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    avg_pool(cx, node, idx, 1)
}

pub fn avg_pool3d(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    avg_pool(cx, node, idx, 3)
}

/// Mean over the adaptive window `[⌊o·in/out⌋, ⌈(o+1)·in/out⌉)` of each of the last `k` dims.
fn adaptive_avg(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], k: usize) -> Result<ExprId, LowerError> {
    let x = cx.tensor(node, "self")?;
    let xs = cx.sizes(x)?;
    let os = super::pointwise::out_sizes(cx, node)?;
    let r = idx.len();
    if r < k + 1 || xs.len() != r {
        return Err(cx.err(node, format!("{k}-D adaptive pooling needs an input of rank {} or {}", k + 1, k + 2)));
    }
    let mut at = idx[..r - k].to_vec();
    let mut lens = Vec::with_capacity(k);
    let mut vars = Vec::with_capacity(k);
    for (d, (xd, od)) in xs.iter().zip(&os).enumerate().skip(r - k) {
        let (size, out) = (cx.kb.size(xd), cx.kb.size(od));
        let one = cx.kb.i64(1);
        let start = cx.kb.binary(BinOp::Mul, idx[d], size)?;
        let start = cx.kb.binary(BinOp::Div, start, out)?;
        let o1 = cx.kb.binary(BinOp::Add, idx[d], one)?;
        let end = cx.kb.binary(BinOp::Mul, o1, size)?;
        let end = cx.kb.binary(BinOp::Add, end, out)?;
        let end = cx.kb.binary(BinOp::Sub, end, one)?;
        let end = cx.kb.binary(BinOp::Div, end, out)?;
        let len = cx.kb.binary(BinOp::Sub, end, start)?;
        let v = cx.kb.fresh_var()?;
        let t = cx.kb.var(v);
        at.push(cx.kb.binary(BinOp::Add, start, t)?);
        lens.push(len);
        vars.push(v);
    }
    let mut acc = cx.read(x, &at)?;
    let mut n = cx.kb.i64(1);
    for d in (0..k).rev() {
        acc = cx.kb.reduce(RedOp::Sum, vars[d], lens[d], acc)?;
        n = cx.kb.binary(BinOp::Mul, n, lens[d])?;
    }
    let n = cx.kb.to_f32(n);
    Ok(cx.kb.binary(BinOp::Div, acc, n)?)
}

pub fn adaptive_avg_pool1d(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    adaptive_avg(cx, node, idx, 1)
}

pub fn adaptive_avg_pool3d(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    adaptive_avg(cx, node, idx, 3)
}
