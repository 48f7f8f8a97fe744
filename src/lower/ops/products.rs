//! Products of vectors and matrices beyond `mm`/`bmm`: `matmul` with PyTorch's broadcasting and
//! 1-D operands (`dot`, `vdot`, `mv`, `inner` are its special cases), the scaled sums `addmv`,
//! `addr`, `baddbmm`, `addbmm`, `addmm`, and `outer`, `kron`, `cross`, `trace`, `diff`. Each
//! output element is a serial dot product (or a few reads) in the output's compute type, so
//! integer products are exact and float64 stays float64.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, ExprId, RedOp, Ty};
use super::super::LowerError;
use super::create::cat_at;
use super::pointwise::{arg, out_sizes, out_ty};
use crate::ir::{Arg, Node, ValueId};
use crate::sym;

type R = Result<ExprId, LowerError>;

/// The batch coordinates of an operand of sizes `s` (its dims before the last `tail`), right-
/// aligned with the output's batch coordinates `idx[..nb]` and broadcast where it has size 1.
fn batch_at(cx: &mut Ctx<'_>, s: &[sym::Expr], tail: usize, idx: &[ExprId], out: &[sym::Expr], nb: usize) -> Result<Vec<ExprId>, LowerError> {
    let r = s.len() - tail;
    let lead = nb.checked_sub(r).ok_or_else(|| LowerError::Internal("operand has more batch dims than the product".into()))?;
    let zero = cx.kb.i64(0);
    Ok((0..r)
        .map(|d| if s[d].as_int() == Some(1) && out[lead + d].as_int() != Some(1) { zero } else { idx[lead + d] })
        .collect())
}

/// `torch.matmul(a, b)` at output coordinates `idx`, in compute type `ty`: 1-D operands are
/// vectors (their dim dropped from the output), batch dims broadcast.
fn matmul_of(cx: &mut Ctx<'_>, node: &Node, a: ValueId, b: ValueId, idx: &[ExprId], ty: Ty) -> R {
    let (sa, sb) = (cx.sizes(a)?, cx.sizes(b)?);
    let (ra, rb) = (sa.len(), sb.len());
    if ra == 0 || rb == 0 {
        return Err(cx.err(node, "matmul needs operands of at least one dim"));
    }
    let out = out_sizes(cx, node)?;
    let n = idx.len();
    let nb = n.checked_sub(usize::from(ra > 1) + usize::from(rb > 1)).ok_or_else(|| cx.err(node, "output rank too small for the product"))?;
    let var = cx.kb.fresh_var()?;
    let k = cx.kb.var(var);
    let extent = cx.kb.size(&sa[ra - 1]);
    let a_at = if ra == 1 {
        vec![k]
    } else {
        let mut at = batch_at(cx, &sa, 2, idx, &out, nb)?;
        at.extend([idx[nb], k]);
        at
    };
    let b_at = if rb == 1 {
        vec![k]
    } else {
        let mut at = batch_at(cx, &sb, 2, idx, &out, nb)?;
        at.extend([k, idx[n - 1]]);
        at
    };
    let x = cx.read(a, &a_at)?;
    let y = cx.read(b, &b_at)?;
    let (x, y) = (cx.kb.cast(x, ty), cx.kb.cast(y, ty));
    let p = cx.kb.binary(BinOp::Mul, x, y)?;
    Ok(cx.kb.reduce(RedOp::Sum, var, extent, p)?)
}

fn product(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], a: &str, b: &str) -> R {
    let (a, b) = (cx.tensor(node, a)?, cx.tensor(node, b)?);
    let ty = out_ty(cx, node)?;
    matmul_of(cx, node, a, b, idx, ty)
}

pub fn matmul(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    product(cx, node, idx, "self", "other")
}

pub fn dot(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    product(cx, node, idx, "self", "tensor")
}

/// `vdot` of real vectors is `dot`.
pub fn vdot(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    product(cx, node, idx, "self", "other")
}

pub fn mv(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    product(cx, node, idx, "self", "vec")
}

/// `inner(a, b)`: Σ over the last dims, the output `a.shape[:-1] + b.shape[:-1]`; a 0-D
/// operand multiplies.
pub fn inner(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (a, b) = (cx.tensor(node, "self")?, cx.tensor(node, "other")?);
    let ty = out_ty(cx, node)?;
    let (sa, sb) = (cx.sizes(a)?, cx.sizes(b)?);
    if sa.is_empty() || sb.is_empty() {
        // The output has the other operand's shape.
        let x = cx.read(a, if sa.is_empty() { &[] } else { idx })?;
        let y = cx.read(b, if sb.is_empty() { &[] } else { idx })?;
        let (x, y) = (cx.kb.cast(x, ty), cx.kb.cast(y, ty));
        return Ok(cx.kb.binary(BinOp::Mul, x, y)?);
    }
    let split = sa.len() - 1;
    let var = cx.kb.fresh_var()?;
    let k = cx.kb.var(var);
    let extent = cx.kb.size(&sa[split]);
    let mut a_at = idx[..split].to_vec();
    a_at.push(k);
    let mut b_at = idx[split..].to_vec();
    b_at.push(k);
    let x = cx.read(a, &a_at)?;
    let y = cx.read(b, &b_at)?;
    let (x, y) = (cx.kb.cast(x, ty), cx.kb.cast(y, ty));
    let p = cx.kb.binary(BinOp::Mul, x, y)?;
    Ok(cx.kb.reduce(RedOp::Sum, var, extent, p)?)
}

/// A number argument as a constant of compute type `ty`.
fn scalar(cx: &mut Ctx<'_>, node: &Node, name: &str, default: f64, ty: Ty) -> Result<(f64, ExprId), LowerError> {
    let v = match node.arg(name) {
        Some(Arg::Bool(b)) => *b as i32 as f64,
        _ => cx.float_or(node, name, default)?,
    };
    let c = match ty {
        Ty::F64 => cx.kb.f64(v),
        Ty::I64 | Ty::Bool => cx.kb.i64(v as i64),
        Ty::U32 => cx.kb.u32(v as u32),
        Ty::F32 => cx.kb.f32(v as f32),
    };
    Ok((v, c))
}

/// `beta · self + alpha · prod`, `self` broadcast to the output; `beta = 0` ignores `self`
/// (NaN included), as PyTorch does.
fn scaled(cx: &mut Ctx<'_>, node: &Node, prod: ExprId, idx: &[ExprId]) -> R {
    let ty = cx.kb.ty(prod);
    let (alpha, a) = scalar(cx, node, "alpha", 1.0, ty)?;
    let (beta, b) = scalar(cx, node, "beta", 1.0, ty)?;
    let p = if alpha == 1.0 { prod } else { cx.kb.binary(BinOp::Mul, a, prod)? };
    if beta == 0.0 {
        return Ok(p);
    }
    let s = arg(cx, node, "self", idx)?;
    let s = if beta == 1.0 { s } else { cx.kb.binary(BinOp::Mul, b, s)? };
    Ok(cx.kb.binary(BinOp::Add, s, p)?)
}

pub fn addmv(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let p = product(cx, node, idx, "mat", "vec")?;
    scaled(cx, node, p, idx)
}

pub fn baddbmm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let p = product(cx, node, idx, "batch1", "batch2")?;
    scaled(cx, node, p, idx)
}

pub fn addmm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let p = product(cx, node, idx, "mat1", "mat2")?;
    scaled(cx, node, p, idx)
}

/// `addbmm`: as PyTorch's CPU kernel, one `addmm_` per batch into the result (`beta` only for
/// the first), the running result stored in the output's dtype after each: a state loop over
/// the batches whose slot is rounded to the output's storage every step.
pub fn addbmm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (a, b) = (cx.tensor(node, "batch1")?, cx.tensor(node, "batch2")?);
    let ty = out_ty(cx, node)?;
    let sa = cx.sizes(a)?;
    if sa.len() != 3 || idx.len() != 2 {
        return Err(cx.err(node, "addbmm takes 3-D batches and gives a matrix"));
    }
    let out = *node.outputs.first().ok_or_else(|| cx.err(node, "has no outputs"))?;
    let (vb, vk) = (cx.kb.fresh_var()?, cx.kb.fresh_var()?);
    let (bi, k) = (cx.kb.var(vb), cx.kb.var(vk));
    let x = cx.read(a, &[bi, idx[0], k])?;
    let y = cx.read(b, &[bi, k, idx[1]])?;
    let (x, y) = (cx.kb.cast(x, ty), cx.kb.cast(y, ty));
    let (eb, ek) = (cx.kb.size(&sa[0]), cx.kb.size(&sa[2]));
    // Each batch's product as CPU BLAS computes a small one: a sequential chain of fused
    // multiply-adds (integers: a plain sum).
    let dot = if ty.is_float() {
        let zero = cx.kb.float_like(0.0, x);
        let acc = cx.kb.carried(vk, 0, ty);
        let next = cx.kb.mul_add(x, y, acc)?;
        cx.kb.iterate(vk, ek, vec![zero], vec![next])?[0]
    } else {
        let p = cx.kb.binary(BinOp::Mul, x, y)?;
        cx.kb.reduce(RedOp::Sum, vk, ek, p)?
    };
    let (alpha, a_k) = scalar(cx, node, "alpha", 1.0, ty)?;
    let dot = if alpha == 1.0 { dot } else { cx.kb.binary(BinOp::Mul, a_k, dot)? };
    // The first batch adds to `beta · self` (to nothing when beta is 0, NaN included).
    let (beta, b_k) = scalar(cx, node, "beta", 1.0, ty)?;
    let init = if beta == 0.0 {
        let zero = cx.kb.i64(0);
        cx.kb.cast(zero, ty)
    } else {
        let s = arg(cx, node, "self", idx)?;
        if beta == 1.0 {
            s
        } else {
            cx.kb.binary(BinOp::Mul, b_k, s)?
        }
    };
    let acc = cx.kb.carried(vb, 0, ty);
    let next = cx.kb.binary(BinOp::Add, acc, dot)?;
    let next = cx.round_as(out, next)?;
    Ok(cx.kb.iterate(vb, eb, vec![init], vec![next])?[0])
}

/// `a[i] · b[j]`.
fn outer_of(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], a: &str, b: &str) -> R {
    let (a, b) = (cx.tensor(node, a)?, cx.tensor(node, b)?);
    let ty = out_ty(cx, node)?;
    let x = cx.read(a, &idx[..1])?;
    let y = cx.read(b, &idx[1..2])?;
    let (x, y) = (cx.kb.cast(x, ty), cx.kb.cast(y, ty));
    Ok(cx.kb.binary(BinOp::Mul, x, y)?)
}

pub fn outer(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    outer_of(cx, node, idx, "self", "vec2")
}

pub fn addr(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let p = outer_of(cx, node, idx, "vec1", "vec2")?;
    scaled(cx, node, p, idx)
}

/// `kron(a, b)`: with both padded to the output's rank, `a[i / |b|] · b[i mod |b|]` per dim.
pub fn kron(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (a, b) = (cx.tensor(node, "self")?, cx.tensor(node, "other")?);
    let ty = out_ty(cx, node)?;
    let (sa, sb) = (cx.sizes(a)?, cx.sizes(b)?);
    let nd = idx.len();
    let (la, lb) = (nd - sa.len(), nd - sb.len());
    let mut a_at = Vec::with_capacity(sa.len());
    let mut b_at = Vec::with_capacity(sb.len());
    for (d, &i) in idx.iter().enumerate() {
        let m = if d >= lb { cx.kb.size(&sb[d - lb]) } else { cx.kb.i64(1) };
        if d >= la {
            a_at.push(cx.kb.binary(BinOp::Div, i, m)?);
        }
        if d >= lb {
            b_at.push(cx.kb.binary(BinOp::Rem, i, m)?);
        }
    }
    let x = cx.read(a, &a_at)?;
    let y = cx.read(b, &b_at)?;
    let (x, y) = (cx.kb.cast(x, ty), cx.kb.cast(y, ty));
    Ok(cx.kb.binary(BinOp::Mul, x, y)?)
}

/// `cross` / `linalg_cross(self, other, dim)`: 3-vectors along `dim` (without a dim, the first
/// of size 3), operands broadcast.
pub fn cross(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (a, b) = (cx.tensor(node, "self")?, cx.tensor(node, "other")?);
    let ty = out_ty(cx, node)?;
    let out = out_sizes(cx, node)?;
    let d = match node.arg("dim") {
        None | Some(Arg::None) => out.iter().position(|s| s.as_int() == Some(3)).ok_or_else(|| cx.err(node, "no dim of size 3"))?,
        _ => wrap_dims(&[cx.int_or(node, "dim", -1)?], out.len()).map_err(|m| cx.err(node, m))?[0],
    };
    let three = cx.kb.i64(3);
    let at = |cx: &mut Ctx<'_>, shift: i64| -> Result<Vec<ExprId>, LowerError> {
        let s = cx.kb.i64(shift);
        let j = cx.kb.binary(BinOp::Add, idx[d], s)?;
        let mut v = idx.to_vec();
        v[d] = cx.kb.binary(BinOp::Rem, j, three)?;
        Ok(v)
    };
    let (i1, i2) = (at(cx, 1)?, at(cx, 2)?);
    let term = |cx: &mut Ctx<'_>, ia: &[ExprId], ib: &[ExprId]| -> R {
        let x = cx.read_broadcast(a, ia, &out)?;
        let y = cx.read_broadcast(b, ib, &out)?;
        let (x, y) = (cx.kb.cast(x, ty), cx.kb.cast(y, ty));
        Ok(cx.kb.binary(BinOp::Mul, x, y)?)
    };
    let p = term(cx, &i1, &i2)?;
    let q = term(cx, &i2, &i1)?;
    Ok(cx.kb.binary(BinOp::Sub, p, q)?)
}

/// `trace`: Σ_i t[i, i] (integers sum as int64).
pub fn trace(cx: &mut Ctx<'_>, node: &Node, _: usize, _: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let s = cx.sizes(v)?;
    if s.len() != 2 {
        return Err(cx.err(node, "trace needs a matrix"));
    }
    let ty = out_ty(cx, node)?;
    let (r, c) = (cx.kb.size(&s[0]), cx.kb.size(&s[1]));
    let n = cx.kb.binary(BinOp::Min, r, c)?;
    let var = cx.kb.fresh_var()?;
    let i = cx.kb.var(var);
    let x = cx.read(v, &[i, i])?;
    let x = cx.kb.cast(x, ty);
    Ok(cx.kb.reduce(RedOp::Sum, var, n, x)?)
}

/// `diff(self, n, dim, prepend, append)`: the n-th forward difference along `dim` of
/// `cat(prepend, self, append)`, as Σ_j (-1)^(n-j) C(n, j) x[i + j]; on bool, `!=` applied n
/// times, which is the xor of the x[i + j] whose C(n, j) is odd.
pub fn diff(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let v = cx.tensor(node, "self")?;
    let rank = cx.sizes(v)?.len();
    let d = wrap_dims(&[cx.int_or(node, "dim", -1)?], rank).map_err(|m| cx.err(node, m))?[0];
    let n = cx.int_or(node, "n", 1)?.max(0);
    let mut parts = Vec::new();
    for name in ["prepend", "self", "append"] {
        if let Some(t) = cx.opt_tensor(node, name) {
            parts.push((t, cx.sizes(t)?));
        }
    }
    let boolean = cx.meta(node.outputs[0])?.dtype == crate::ir::DType::Bool;
    let mut acc: Option<ExprId> = None;
    let mut c: i64 = 1;
    for j in 0..=n {
        // c = C(n, j)
        if j > 0 {
            c = c * (n - j + 1) / j;
        }
        let mut at = idx.to_vec();
        let off = cx.kb.i64(j);
        at[d] = cx.kb.binary(BinOp::Add, idx[d], off)?;
        let x = cat_at(cx, node, &parts, d, &at)?;
        let term = if boolean {
            if c % 2 == 0 {
                continue;
            }
            x
        } else {
            let sign = if (n - j) % 2 == 0 { 1 } else { -1 };
            let k = match cx.kb.ty(x) {
                Ty::F64 => cx.kb.f64((sign * c) as f64),
                Ty::F32 => cx.kb.f32((sign * c) as f32),
                _ => cx.kb.i64(sign * c),
            };
            cx.kb.binary(BinOp::Mul, k, x)?
        };
        acc = Some(match acc {
            None => term,
            Some(a) if boolean => cx.kb.binary(BinOp::BitXor, a, term)?,
            Some(a) => cx.kb.binary(BinOp::Add, a, term)?,
        });
    }
    acc.ok_or_else(|| cx.err(node, "diff of nothing"))
}

/// `bilinear(input1, input2, weight, bias)`: `y[.., o] = Σ_j (Σ_i x1[.., i] · W[o, i, j]) ·
/// x2[.., j] + b[o]`, the inner sum and the outer one each rounded to the result's dtype as
/// PyTorch's `_trilinear` stores its two batched products.
pub fn bilinear(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (a, b, w) = (cx.tensor(node, "input1")?, cx.tensor(node, "input2")?, cx.tensor(node, "weight")?);
    let out = *node.outputs.first().ok_or_else(|| cx.err(node, "has no outputs"))?;
    let ty = out_ty(cx, node)?;
    let ws = cx.sizes(w)?;
    let n = idx.len();
    if ws.len() != 3 || n == 0 {
        return Err(cx.err(node, "bilinear needs a 3-D weight and inputs of at least one dim"));
    }
    let (vi, vj) = (cx.kb.fresh_var()?, cx.kb.fresh_var()?);
    let (i, j) = (cx.kb.var(vi), cx.kb.var(vj));
    let o = idx[n - 1];
    let mut a_at = idx[..n - 1].to_vec();
    a_at.push(i);
    let mut b_at = idx[..n - 1].to_vec();
    b_at.push(j);
    let x = cx.read(a, &a_at)?;
    let y = cx.read(b, &b_at)?;
    let k = cx.read(w, &[o, i, j])?;
    let (x, y, k) = (cx.kb.cast(x, ty), cx.kb.cast(y, ty), cx.kb.cast(k, ty));
    let p = cx.kb.binary(BinOp::Mul, x, k)?;
    let (ei, ej) = (cx.kb.size(&ws[1]), cx.kb.size(&ws[2]));
    let t = cx.kb.reduce(RedOp::Sum, vi, ei, p)?;
    let t = cx.round_as(out, t)?;
    let p = cx.kb.binary(BinOp::Mul, t, y)?;
    let s = cx.kb.reduce(RedOp::Sum, vj, ej, p)?;
    let mut s = cx.round_as(out, s)?;
    if let Some(bias) = cx.opt_tensor(node, "bias") {
        let c = cx.read(bias, &[o])?;
        let c = cx.kb.cast(c, ty);
        s = cx.kb.binary(BinOp::Add, s, c)?;
    }
    Ok(s)
}
