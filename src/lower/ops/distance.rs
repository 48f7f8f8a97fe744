//! p-norm distances: `cdist`/`_cdist_forward` between the rows of two batches, `pdist`/
//! `_pdist_forward` between the row pairs `i < j` of one matrix, and `dist` between two
//! broadcast tensors. Each distance folds its differences with PyTorch's p cases: `p = 0`
//! counts nonzeros, `p = 1` sums magnitudes, `p = 2` is the square root of the summed squares,
//! `p = ∞` the largest magnitude, any other `p` `(Σ|d|^p)^(1/p)`. Differences are taken
//! directly (never through `x² + y² - 2xy`), so `compute_mode` changes nothing but rounding.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty, UnOp, VarId};
use super::super::LowerError;
use super::conv::constant;
use crate::ir::Node;

type R = Result<ExprId, LowerError>;

/// The p-norm of the difference `diff` (an expression in loop variable `v` over `extent`).
fn p_norm(cx: &mut Ctx<'_>, p: f64, v: VarId, extent: ExprId, diff: ExprId, ty: Ty) -> R {
    let a = cx.kb.unary(UnOp::Abs, diff);
    if p == f64::INFINITY {
        return Ok(cx.kb.reduce(RedOp::Max, v, extent, a)?);
    }
    let term = if p == 0.0 {
        let zero = constant(cx, 0.0, ty);
        let nz = cx.kb.cmp(CmpOp::Ne, a, zero)?;
        cx.kb.cast(nz, ty)
    } else if p == 1.0 {
        a
    } else if p == 2.0 {
        cx.kb.binary(BinOp::Mul, a, a)?
    } else {
        let pk = constant(cx, p, ty);
        cx.kb.binary(BinOp::Pow, a, pk)?
    };
    let s = cx.kb.reduce(RedOp::Sum, v, extent, term)?;
    Ok(if p == 0.0 || p == 1.0 {
        s
    } else if p == 2.0 {
        cx.kb.unary(UnOp::Sqrt, s)
    } else {
        let inv = constant(cx, 1.0 / p, ty);
        cx.kb.binary(BinOp::Pow, s, inv)?
    })
}

fn p_of(cx: &Ctx<'_>, node: &Node) -> Result<f64, LowerError> {
    let p = cx.float_or(node, "p", 2.0)?;
    if p < 0.0 || p.is_nan() {
        return Err(cx.err(node, format!("p must be a non-negative number, got {p}")));
    }
    Ok(p)
}

fn float_ty(cx: &Ctx<'_>, node: &Node) -> Result<Ty, LowerError> {
    let ty = super::pointwise::out_ty(cx, node)?;
    if !ty.is_float() {
        return Err(cx.err(node, "distances are computed in a float dtype"));
    }
    Ok(ty)
}

/// `cdist`/`_cdist_forward(x1, x2, p, compute_mode)`: `[*, P, M] × [*, R, M] → [*, P, R]`,
/// the batch dims broadcast.
pub fn cdist(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (a, b) = (cx.tensor(node, "x1")?, cx.tensor(node, "x2")?);
    let (sa, sb) = (cx.sizes(a)?, cx.sizes(b)?);
    let r = idx.len();
    if sa.len() < 2 || sb.len() < 2 || r < 2 || sa.len() > r || sb.len() > r {
        return Err(cx.err(node, "cdist takes [*, P, M] and [*, R, M] operands"));
    }
    let (p, ty) = (p_of(cx, node)?, float_ty(cx, node)?);
    let m = cx.kb.size(&sa[sa.len() - 1]);
    let v = cx.kb.fresh_var()?;
    let k = cx.kb.var(v);
    // Each operand's batch coordinates, right-aligned against the output's, 0 where it is 1.
    let zero = cx.kb.i64(0);
    let row = |sizes: &[crate::sym::Expr], row: ExprId| -> Vec<ExprId> {
        let nb = sizes.len() - 2;
        let mut at: Vec<ExprId> = (0..nb).map(|d| if sizes[d].as_int() == Some(1) { zero } else { idx[r - 2 - nb + d] }).collect();
        at.extend([row, k]);
        at
    };
    let (at_a, at_b) = (row(&sa, idx[r - 2]), row(&sb, idx[r - 1]));
    let xa = cx.read(a, &at_a)?;
    let xb = cx.read(b, &at_b)?;
    let (xa, xb) = (cx.kb.cast(xa, ty), cx.kb.cast(xb, ty));
    let d = cx.kb.binary(BinOp::Sub, xa, xb)?;
    p_norm(cx, p, v, m, d, ty)
}

/// `pdist`/`_pdist_forward(self, p)`: output `k` is the distance of the `k`-th row pair
/// `i < j` in row-major order. Pairs before row `i` number `start(i) = i·(2n - i - 1)/2`, so
/// `i` counts the rows `1 <= r < n` with `start(r) <= k`, and `j = k - start(i) + i + 1`.
pub fn pdist(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = cx.tensor(node, "self")?;
    let s = cx.ksizes(x)?;
    if s.len() != 2 || idx.len() != 1 {
        return Err(cx.err(node, "pdist takes a 2-D input"));
    }
    let (p, ty) = (p_of(cx, node)?, float_ty(cx, node)?);
    let (n, m, kk) = (s[0], s[1], idx[0]);
    let (one, two) = (cx.kb.i64(1), cx.kb.i64(2));
    let start = |cx: &mut Ctx<'_>, i: ExprId| -> R {
        let n2 = cx.kb.binary(BinOp::Mul, n, two)?;
        let a = cx.kb.binary(BinOp::Sub, n2, i)?;
        let a = cx.kb.binary(BinOp::Sub, a, one)?;
        let a = cx.kb.binary(BinOp::Mul, i, a)?;
        Ok(cx.kb.binary(BinOp::Div, a, two)?)
    };
    let vr = cx.kb.fresh_var()?;
    let rr = cx.kb.var(vr);
    let r1 = cx.kb.binary(BinOp::Add, rr, one)?;
    let sr = start(cx, r1)?;
    let before = cx.kb.cmp(CmpOp::Le, sr, kk)?;
    let before = cx.kb.cast(before, Ty::I64);
    let rows = cx.kb.binary(BinOp::Sub, n, one)?;
    let i = cx.kb.reduce(RedOp::Sum, vr, rows, before)?;
    let si = start(cx, i)?;
    let j = cx.kb.binary(BinOp::Sub, kk, si)?;
    let j = cx.kb.binary(BinOp::Add, j, i)?;
    let j = cx.kb.binary(BinOp::Add, j, one)?;
    let v = cx.kb.fresh_var()?;
    let c = cx.kb.var(v);
    let xi = cx.read(x, &[i, c])?;
    let xj = cx.read(x, &[j, c])?;
    let (xi, xj) = (cx.kb.cast(xi, ty), cx.kb.cast(xj, ty));
    let d = cx.kb.binary(BinOp::Sub, xi, xj)?;
    p_norm(cx, p, v, m, d, ty)
}

/// `dist(self, other, p)`: the p-norm of `self - other` over their broadcast shape.
pub fn dist(cx: &mut Ctx<'_>, node: &Node, _: usize, _: &[ExprId]) -> R {
    let (a, b) = (cx.tensor(node, "self")?, cx.tensor(node, "other")?);
    let shape = crate::infer::broadcast_shapes(&cx.sizes(a)?, &cx.sizes(b)?).map_err(|m| cx.err(node, m))?;
    let (p, ty) = (p_of(cx, node)?, float_ty(cx, node)?);
    // One loop over the broadcast elements, unflattened to coordinates.
    let total = shape.iter().cloned().fold(crate::sym::Expr::int(1), crate::sym::Expr::mul);
    let total = cx.kb.size(&total);
    let v = cx.kb.fresh_var()?;
    let mut rest = cx.kb.var(v);
    let mut at = vec![rest; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = cx.kb.size(&shape[d]);
        at[d] = cx.kb.binary(BinOp::Rem, rest, n)?;
        rest = cx.kb.binary(BinOp::Div, rest, n)?;
    }
    let xa = cx.read_broadcast(a, &at, &shape)?;
    let xb = cx.read_broadcast(b, &at, &shape)?;
    let (xa, xb) = (cx.kb.cast(xa, ty), cx.kb.cast(xb, ty));
    let d = cx.kb.binary(BinOp::Sub, xa, xb)?;
    p_norm(cx, p, v, total, d, ty)
}
