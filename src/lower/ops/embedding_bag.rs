//! `embedding_bag` and `_embedding_bag(_forward_only)` (semantics and outputs in
//! `exec::ops::embedding_bag`, whose helpers decide the bag bounds and which outputs ATen
//! fills): each output row folds its bag's indices, a loop bounded by the offsets; `max` is a
//! state loop carrying the maximum, the row it came from and whether any row was seen.
//! Indices read outside `indices` or `weight` are masked (ATen raises on them). And
//! `embedding_renorm`: each row scaled by its factor, from the row's norm and whether
//! `indices` names it.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty, UnOp};
use super::super::LowerError;
use super::conv::{constant, in_range, read_masked};
use crate::exec::ops::embedding_bag::{fast_path, padding_index, MODE_MAX, MODE_MEAN, MODE_SUM};
use crate::ir::{Node, ValueId};
use crate::sym;

type R = Result<ExprId, LowerError>;

struct Bags {
    weight: ValueId,
    indices: ValueId,
    offsets: ValueId,
    psw: Option<ValueId>,
    mode: i64,
    padding: Option<i64>,
    /// The last bag ends at the last offset (else at the end of `indices`) when summing.
    by_last_offset: bool,
    /// Bags, offsets, indices, embedding rows.
    bags: ExprId,
    n_offsets: ExprId,
    n: ExprId,
    rows: ExprId,
}

impl Bags {
    fn of(cx: &mut Ctx<'_>, node: &Node) -> Result<Bags, LowerError> {
        let (weight, indices, offsets) = (cx.tensor(node, "weight")?, cx.tensor(node, "indices")?, cx.tensor(node, "offsets")?);
        let (ws, is, os) = (cx.sizes(weight)?, cx.sizes(indices)?, cx.sizes(offsets)?);
        if ws.len() != 2 || is.len() != 1 || os.len() != 1 {
            return Err(cx.err(node, "embedding_bag takes a 2-D weight and 1-D indices and offsets"));
        }
        let mode = cx.int_or(node, "mode", MODE_SUM)?;
        if !(MODE_SUM..=MODE_MAX).contains(&mode) {
            return Err(cx.err(node, format!("mode {mode} (0 sum, 1 mean, 2 max)")));
        }
        let rows = ws[0].as_int();
        let given = match node.arg("padding_idx") {
            None | Some(crate::ir::Arg::None) => None,
            _ => Some(cx.int_or(node, "padding_idx", -1)?),
        };
        let padding = match (given, rows) {
            (Some(p), _) if p >= 0 => padding_index(&node.target, Some(p), 0),
            (Some(p), Some(r)) => padding_index(&node.target, Some(p), r),
            (Some(_), None) => return Err(cx.err(node, "a negative padding_idx needs a static embedding count")),
            (None, _) => None,
        };
        let last = cx.bool_or(node, "include_last_offset", false)?;
        let dtype = cx.meta(weight)?.dtype;
        let bags_sym = if last { sym::Expr::sub(os[0].clone(), sym::Expr::int(1)) } else { os[0].clone() };
        Ok(Bags {
            weight,
            indices,
            offsets,
            psw: cx.opt_tensor(node, "per_sample_weights"),
            mode,
            padding,
            by_last_offset: last && fast_path(mode, dtype, padding),
            bags: cx.kb.size(&bags_sym),
            n_offsets: cx.kb.size(&os[0]),
            n: cx.kb.size(&is[0]),
            rows: cx.kb.size(&ws[0]),
        })
    }

    /// `offsets[i]`, clamped into the tensor.
    fn offset(&self, cx: &mut Ctx<'_>, i: ExprId) -> R {
        let (zero, one) = (cx.kb.i64(0), cx.kb.i64(1));
        let top = cx.kb.binary(BinOp::Sub, self.n_offsets, one)?;
        let i = cx.kb.binary(BinOp::Min, i, top)?;
        let i = cx.kb.binary(BinOp::Max, i, zero)?;
        let v = cx.read(self.offsets, &[i])?;
        Ok(cx.kb.cast(v, Ty::I64))
    }

    /// The start of bag `b` and its end (`sizes`: the end its size counts to).
    fn bounds(&self, cx: &mut Ctx<'_>, b: ExprId, sizes: bool) -> Result<(ExprId, ExprId), LowerError> {
        let start = self.offset(cx, b)?;
        let one = cx.kb.i64(1);
        let b1 = cx.kb.binary(BinOp::Add, b, one)?;
        let next = self.offset(cx, b1)?;
        let inner = cx.kb.cmp(CmpOp::Lt, b1, self.bags)?;
        let end = if self.by_last_offset && !sizes { next } else { cx.kb.select(inner, next, self.n)? };
        Ok((start, end))
    }

    /// The embedding row of index position `p` of bag `b` (masked inside `indices`), and
    /// whether it is the padding index.
    fn index(&self, cx: &mut Ctx<'_>, p: ExprId) -> Result<(ExprId, ExprId), LowerError> {
        let ok = in_range(cx, p, self.n)?;
        let zero = cx.kb.i64(0);
        let r = read_masked(cx, self.indices, &[p], ok, zero)?;
        let pad = match self.padding {
            Some(q) => {
                let q = cx.kb.i64(q);
                cx.kb.cmp(CmpOp::Eq, r, q)?
            }
            None => cx.kb.bool(false),
        };
        Ok((r, pad))
    }

    /// The non-padding index count of bag `b` (ATen's `bag_size` for `mean`/`max`).
    fn count(&self, cx: &mut Ctx<'_>, b: ExprId) -> R {
        let (start, end) = self.bounds(cx, b, true)?;
        let len = cx.kb.binary(BinOp::Sub, end, start)?;
        let Some(_) = self.padding else { return Ok(len) };
        let var = cx.kb.fresh_var()?;
        let j = cx.kb.var(var);
        let p = cx.kb.binary(BinOp::Add, start, j)?;
        let (_, pad) = self.index(cx, p)?;
        let pad = cx.kb.cast(pad, Ty::I64);
        let zero = cx.kb.i64(0);
        let extent = cx.kb.binary(BinOp::Max, len, zero)?;
        let padded = cx.kb.reduce(RedOp::Sum, var, extent, pad)?;
        Ok(cx.kb.binary(BinOp::Sub, len, padded)?)
    }

    /// `output[b, k]`, and for `max` the row the maximum came from (0 for an empty bag).
    fn fold(&self, cx: &mut Ctx<'_>, node: &Node, b: ExprId, k: ExprId) -> Result<(ExprId, ExprId), LowerError> {
        let ty = match super::pointwise::out_ty(cx, node)? {
            t @ (Ty::F32 | Ty::F64) => t,
            t => return Err(cx.err(node, format!("embedding_bag of {t:?} weights (it takes floats)"))),
        };
        let (start, end) = self.bounds(cx, b, false)?;
        let zero = cx.kb.i64(0);
        let len = cx.kb.binary(BinOp::Sub, end, start)?;
        let len = cx.kb.binary(BinOp::Max, len, zero)?;
        let var = cx.kb.fresh_var()?;
        let j = cx.kb.var(var);
        let p = cx.kb.binary(BinOp::Add, start, j)?;
        let (r, pad) = self.index(cx, p)?;
        let in_rows = in_range(cx, r, self.rows)?;
        let zero_v = constant(cx, 0.0, ty);
        let v = read_masked(cx, self.weight, &[r, k], in_rows, zero_v)?;
        if self.mode == MODE_MAX {
            let kb = &mut cx.kb;
            let (cur, arg, seen) = (kb.carried(var, 0, ty), kb.carried(var, 1, Ty::I64), kb.carried(var, 2, Ty::Bool));
            let fresh = kb.unary(UnOp::Not, seen);
            let above = kb.cmp(CmpOp::Gt, v, cur)?;
            let better = kb.binary(BinOp::Or, fresh, above)?;
            let real = kb.unary(UnOp::Not, pad);
            let take = kb.and(real, better)?;
            let ncur = kb.select(take, v, cur)?;
            let narg = kb.select(take, r, arg)?;
            let nseen = kb.binary(BinOp::Or, seen, real)?;
            let f = kb.bool(false);
            let out = kb.iterate(var, len, vec![zero_v, zero, f], vec![ncur, narg, nseen])?;
            let value = kb.select(out[2], out[0], zero_v)?;
            return Ok((value, kb.select(out[2], out[1], zero)?));
        }
        let mut term = v;
        if let Some(w) = self.psw {
            let ok = in_range(cx, p, self.n)?;
            let s = read_masked(cx, w, &[p], ok, zero_v)?;
            term = cx.kb.binary(BinOp::Mul, term, s)?;
        }
        let term = cx.kb.select(pad, zero_v, term)?;
        let mut sum = cx.kb.reduce(RedOp::Sum, var, len, term)?;
        if self.mode == MODE_MEAN {
            let count = self.count(cx, b)?;
            let one = cx.kb.i64(1);
            let count = cx.kb.binary(BinOp::Max, count, one)?;
            let count = cx.kb.cast(count, ty);
            sum = cx.kb.binary(BinOp::Div, sum, count)?;
        }
        Ok((sum, zero))
    }
}

/// The four outputs: `output`, `offset2bag`, `bag_size`, `max_indices`.
pub fn embedding_bag(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let bags = Bags::of(cx, node)?;
    match (out, idx) {
        (0, &[b, k]) => Ok(bags.fold(cx, node, b, k)?.0),
        (1, &[i]) => {
            // The bag of index position i: how many bag starts lie at or before it, minus one.
            let var = cx.kb.fresh_var()?;
            let b = cx.kb.var(var);
            let s = bags.offset(cx, b)?;
            let before = cx.kb.cmp(CmpOp::Le, s, i)?;
            let before = cx.kb.cast(before, Ty::I64);
            let n = cx.kb.reduce(RedOp::Sum, var, bags.bags, before)?;
            let one = cx.kb.i64(1);
            Ok(cx.kb.binary(BinOp::Sub, n, one)?)
        }
        (2, &[b]) | (3, &[b]) => {
            // Sums keep no counts (zeros); means and maxima count each bag's rows. A forward-only
            // bag_size has one entry per offset (PyTorch's meta function): past the bags, 0.
            let zero = cx.kb.i64(0);
            if bags.mode == MODE_SUM {
                return Ok(zero);
            }
            let n = bags.count(cx, b)?;
            let bag = cx.kb.cmp(CmpOp::Lt, b, bags.bags)?;
            Ok(cx.kb.select(bag, n, zero)?)
        }
        (3, &[b, k]) => Ok(bags.fold(cx, node, b, k)?.1),
        _ => Err(cx.err(node, format!("output {out} at {} coordinates", idx.len()))),
    }
}

/// `embedding_renorm(self, indices, max_norm, norm_type)`: `self[r, k]` times
/// `max_norm / (norm + 1e-7)` when `indices` names row `r` and its norm exceeds `max_norm`.
/// The norm is taken in the weight's type and the factor in float64, as ATen's `row.norm()`,
/// `.item<double>()` and scaling do.
pub fn embedding_renorm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (w, indices) = (cx.tensor(node, "self")?, cx.tensor(node, "indices")?);
    let [r, k] = idx[..] else { return Err(cx.err(node, "embedding_renorm takes a 2-D weight")) };
    let ty = match super::pointwise::out_ty(cx, node)? {
        t @ (Ty::F32 | Ty::F64) => t,
        t => return Err(cx.err(node, format!("embedding_renorm of {t:?} weights (it takes floats)"))),
    };
    let (max_norm, p) = (cx.float_or(node, "max_norm", 0.0)?, cx.float_or(node, "norm_type", 2.0)?);
    let is = cx.sizes(indices)?;
    let n = cx.kb.size(&super::index::numel(&is));
    let ws = cx.ksizes(w)?;
    // Whether any index names row r.
    let var = cx.kb.fresh_var()?;
    let i = cx.kb.var(var);
    let at = super::index::delinear(cx, i, &is)?;
    let named = cx.read(indices, &at)?;
    let named = cx.kb.cast(named, Ty::I64);
    let hit = cx.kb.cmp(CmpOp::Eq, named, r)?;
    let hit = cx.kb.cast(hit, Ty::I64);
    let hits = cx.kb.reduce(RedOp::Max, var, n, hit)?;
    let zero = cx.kb.i64(0);
    let listed = cx.kb.cmp(CmpOp::Gt, hits, zero)?;
    // The row's norm.
    let var = cx.kb.fresh_var()?;
    let j = cx.kb.var(var);
    let x = cx.read(w, &[r, j])?;
    let x = cx.kb.cast(x, ty);
    let a = cx.kb.unary(UnOp::Abs, x);
    let kb = &mut cx.kb;
    let norm = if p.is_infinite() {
        kb.reduce(RedOp::Max, var, ws[1], a)?
    } else if p == 0.0 {
        let z = kb.float_like(0.0, a);
        let nz = kb.cmp(CmpOp::Ne, a, z)?;
        let nz = kb.cast(nz, ty);
        kb.reduce(RedOp::Sum, var, ws[1], nz)?
    } else if p == 2.0 {
        let sq = kb.binary(BinOp::Mul, a, a)?;
        let s = kb.reduce(RedOp::Sum, var, ws[1], sq)?;
        kb.unary(UnOp::Sqrt, s)
    } else if p == 1.0 {
        kb.reduce(RedOp::Sum, var, ws[1], a)?
    } else {
        let e = kb.float_like(p, a);
        let pw = kb.binary(BinOp::Pow, a, e)?;
        let s = kb.reduce(RedOp::Sum, var, ws[1], pw)?;
        let inv = kb.float_like(1.0 / p, s);
        kb.binary(BinOp::Pow, s, inv)?
    };
    let norm = kb.cast(norm, Ty::F64);
    let (m, eps, one) = (kb.f64(max_norm), kb.f64(1e-7), kb.f64(1.0));
    let over = kb.cmp(CmpOp::Gt, norm, m)?;
    let apply = kb.and(listed, over)?;
    let denom = kb.binary(BinOp::Add, norm, eps)?;
    let scale = kb.binary(BinOp::Div, m, denom)?;
    let scale = kb.select(apply, scale, one)?;
    let scale = kb.cast(scale, ty);
    let x = cx.read(w, &[r, k])?;
    let x = cx.kb.cast(x, ty);
    Ok(cx.kb.binary(BinOp::Mul, x, scale)?)
}
