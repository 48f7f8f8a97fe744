//! Histograms of equal-width bins: `histc`, `histogram.bin_ct` (counts and edges) and
//! `histogramdd` (a `D`-dimensional histogram of points `[.., D]`, then one edge tensor per
//! coordinate), as ATen's `HistogramKernel.cpp` bins them.
//!
//! Every bin is one work-item that folds over all points, counting those that land in it:
//! O(points · D) per bin, no atomics, no two work-items writing one element. The outer edges are
//! the given range or the data's minimum and maximum (one more fold per coordinate), widened
//! when empty; the inner edges are `linspace(lo, hi, bins + 1)`, computed as PyTorch's linspace
//! does. A point goes to bin `trunc((x - lo) · bins / (hi - lo))` (the last bin holds `hi`);
//! `histogram`/`histogramdd` then move it to the neighbouring bin its edges say it is in
//! (ATen's "local search"), so counts agree with the edges they return.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, RedOp, Ty};
use super::super::LowerError;
use super::index::delinear;
use crate::ir::{Arg, Node, ValueId};
use crate::sym;

type R = Result<ExprId, LowerError>;

/// One histogram node, read from its arguments.
struct Hist {
    x: ValueId,
    /// Coordinates per point (1 for `histc` and `histogram`).
    d: usize,
    bins: Vec<i64>,
    /// `(lo, hi)` per coordinate when given (`histc` min/max, `range`).
    range: Option<Vec<(f64, f64)>>,
    weight: Option<ValueId>,
    density: bool,
    /// `histc`: no local search, an empty range widens by ±1 (±0.5 otherwise), and the data's
    /// extent replaces `min == max`.
    histc: bool,
    /// `histc`'s `min`, which an empty input keeps (with `max`, equal to it then).
    histc_min: f64,
    /// The float type of the input (f32 for float16/bfloat16).
    ty: Ty,
}

impl Hist {
    fn of(cx: &Ctx<'_>, node: &Node) -> Result<Hist, LowerError> {
        let x = cx.tensor(node, "self")?;
        let sizes = cx.sizes(x)?;
        let ty = match super::pointwise::out_ty(cx, node)? {
            t @ (Ty::F32 | Ty::F64) => t,
            t => return Err(cx.err(node, format!("histograms of {t:?} values (they take floats)"))),
        };
        let histc = node.target.starts_with("aten.histc");
        let dd = node.target.starts_with("aten.histogramdd");
        let d = if dd {
            sizes.last().and_then(sym::Expr::as_int).ok_or_else(|| cx.err(node, "histogramdd needs points of a static number of coordinates"))? as usize
        } else {
            1
        };
        let bins = match node.arg("bins") {
            Some(Arg::Ints(b)) if b.len() == 1 => vec![b[0]; d],
            Some(Arg::Ints(b)) => b.clone(),
            _ => vec![cx.int_or(node, "bins", 100)?; d],
        };
        if bins.len() != d || bins.iter().any(|&b| b <= 0) || d == 0 {
            return Err(cx.err(node, format!("{bins:?} bins for points of {d} coordinates")));
        }
        let (histc_min, histc_max) = (cx.float_or(node, "min", 0.0)?, cx.float_or(node, "max", 0.0)?);
        let range = if histc {
            (histc_min != histc_max).then(|| vec![(histc_min, histc_max)])
        } else {
            match node.arg("range") {
                Some(Arg::Floats(r)) if r.len() == 2 * d => Some(r.chunks(2).map(|p| (p[0], p[1])).collect()),
                None | Some(Arg::None) => None,
                Some(other) => return Err(cx.err(node, format!("argument `range`: expected {} floats, got {other:?}", 2 * d))),
            }
        };
        Ok(Hist { x, d, bins, range, weight: cx.opt_tensor(node, "weight"), density: cx.bool_or(node, "density", false)?, histc, histc_min, ty })
    }

    /// The number of points and their count as an expression.
    fn points(&self, cx: &mut Ctx<'_>) -> R {
        let sizes = cx.sizes(self.x)?;
        let n = super::index::numel(&sizes);
        let n = sym::Expr::floordiv(n, sym::Expr::int(self.d as i64));
        Ok(cx.kb.size(&n))
    }

    /// Coordinate `k` of point `p`, in the histogram's float type.
    fn coord(&self, cx: &mut Ctx<'_>, p: ExprId, k: usize) -> R {
        let sizes = cx.sizes(self.x)?;
        let d = cx.kb.i64(self.d as i64);
        let flat = cx.kb.binary(BinOp::Mul, p, d)?;
        let kk = cx.kb.i64(k as i64);
        let flat = cx.kb.binary(BinOp::Add, flat, kk)?;
        let at = delinear(cx, flat, &sizes)?;
        let v = cx.read(self.x, &at)?;
        Ok(cx.kb.cast(v, self.ty))
    }

    /// The weight of point `p` (1 without weights).
    fn weight_of(&self, cx: &mut Ctx<'_>, p: ExprId) -> R {
        let Some(w) = self.weight else { return Ok(self.constant(cx, 1.0)) };
        let sizes = cx.sizes(w)?;
        let at = delinear(cx, p, &sizes)?;
        let v = cx.read(w, &at)?;
        Ok(cx.kb.cast(v, self.ty))
    }

    /// The outer edges `(lo, hi)` of coordinate `k`.
    fn outer(&self, cx: &mut Ctx<'_>, k: usize) -> Result<(ExprId, ExprId), LowerError> {
        let (lo, hi) = match &self.range {
            Some(r) => (self.constant(cx, r[k].0), self.constant(cx, r[k].1)),
            None => {
                let n = self.points(cx)?;
                let mut ext = Vec::with_capacity(2);
                for op in [RedOp::Min, RedOp::Max] {
                    let var = cx.kb.fresh_var()?;
                    let p = cx.kb.var(var);
                    let x = self.coord(cx, p, k)?;
                    ext.push(cx.kb.reduce(op, var, n, x)?);
                }
                // Without points: histc keeps its (equal) min and max, histogram takes [0, 1].
                let (dlo, dhi) = if self.histc { (self.histc_min, self.histc_min) } else { (0.0, 1.0) };
                let (dlo, dhi) = (self.constant(cx, dlo), self.constant(cx, dhi));
                let zero = cx.kb.i64(0);
                let any = cx.kb.cmp(CmpOp::Gt, n, zero)?;
                (cx.kb.select(any, ext[0], dlo)?, cx.kb.select(any, ext[1], dhi)?)
            }
        };
        let widen = if self.histc { 1.0 } else { 0.5 };
        let w = self.constant(cx, widen);
        let kb = &mut cx.kb;
        let empty = kb.cmp(CmpOp::Eq, lo, hi)?;
        let (wlo, whi) = (kb.binary(BinOp::Sub, lo, w)?, kb.binary(BinOp::Add, hi, w)?);
        Ok((kb.select(empty, wlo, lo)?, kb.select(empty, whi, hi)?))
    }

    /// The constant `v` in the histogram's float type.
    fn constant(&self, cx: &mut Ctx<'_>, v: f64) -> ExprId {
        if self.ty == Ty::F64 {
            cx.kb.f64(v)
        } else {
            cx.kb.f32(v as f32)
        }
    }
}

/// Edge `i` of `bins + 1` edges from `lo` to `hi`: PyTorch's linspace, stepping from `lo` in the
/// first half and back from `hi` in the second.
fn edge(kb: &mut KernelBuilder, lo: ExprId, hi: ExprId, bins: i64, i: ExprId) -> R {
    let span = kb.binary(BinOp::Sub, hi, lo)?;
    let n = kb.float_like(bins as f64, span);
    let step = kb.binary(BinOp::Div, span, n)?;
    let ty = kb.ty(lo);
    let fi = kb.cast(i, ty);
    let up = kb.binary(BinOp::Mul, step, fi)?;
    let up = kb.binary(BinOp::Add, lo, up)?;
    let last = kb.i64(bins);
    let back = kb.binary(BinOp::Sub, last, i)?;
    let back = kb.cast(back, ty);
    let down = kb.binary(BinOp::Mul, step, back)?;
    let down = kb.binary(BinOp::Sub, hi, down)?;
    let half = kb.i64((bins + 1) / 2);
    let first = kb.cmp(CmpOp::Lt, i, half)?;
    Ok(kb.select(first, up, down)?)
}

/// Whether `x` lies in `[lo, hi]` (never for NaN), and its bin.
fn bin_of(kb: &mut KernelBuilder, x: ExprId, lo: ExprId, hi: ExprId, bins: i64, search: bool) -> Result<(ExprId, ExprId), LowerError> {
    let ge = kb.cmp(CmpOp::Ge, x, lo)?;
    let le = kb.cmp(CmpOp::Le, x, hi)?;
    let inside = kb.and(ge, le)?;
    let off = kb.binary(BinOp::Sub, x, lo)?;
    let n = kb.float_like(bins as f64, off);
    let scaled = kb.binary(BinOp::Mul, off, n)?;
    let span = kb.binary(BinOp::Sub, hi, lo)?;
    let q = kb.binary(BinOp::Div, scaled, span)?;
    // Outside points are never counted: keep their bin finite.
    let zero_f = kb.float_like(0.0, q);
    let q = kb.select(inside, q, zero_f)?;
    let mut pos = kb.cast(q, Ty::I64);
    let (zero, one) = (kb.i64(0), kb.i64(1));
    if search {
        // upper_bound over edges [max(0, pos - 1), min(pos + 2, bins + 1)), minus one.
        let below = kb.binary(BinOp::Sub, pos, one)?;
        let first = kb.binary(BinOp::Max, below, zero)?;
        let mut count = kb.i64(0);
        let top = kb.i64(bins);
        for dlt in -1..=1i64 {
            let d = kb.i64(dlt);
            let c = kb.binary(BinOp::Add, pos, d)?;
            let lo_ok = kb.cmp(CmpOp::Ge, c, zero)?;
            let hi_ok = kb.cmp(CmpOp::Le, c, top)?;
            let valid = kb.and(lo_ok, hi_ok)?;
            let safe = kb.select(valid, c, zero)?;
            let e = edge(kb, lo, hi, bins, safe)?;
            let at_most = kb.cmp(CmpOp::Le, e, x)?;
            let hit = kb.and(valid, at_most)?;
            let hit = kb.cast(hit, Ty::I64);
            count = kb.binary(BinOp::Add, count, hit)?;
        }
        let p = kb.binary(BinOp::Add, first, count)?;
        pos = kb.binary(BinOp::Sub, p, one)?;
    }
    // The last bin holds its right edge.
    let top = kb.i64(bins);
    let last = kb.i64(bins - 1);
    let at_top = kb.cmp(CmpOp::Ge, pos, top)?;
    let pos = kb.select(at_top, last, pos)?;
    Ok((inside, pos))
}

/// The counts (or weights, or density) of bin `idx`.
fn counts(cx: &mut Ctx<'_>, h: &Hist, idx: &[ExprId]) -> R {
    if idx.len() != h.d {
        return Err(LowerError::Internal(format!("a {}-D histogram read at {} coordinates", h.d, idx.len())));
    }
    let outer = (0..h.d).map(|k| h.outer(cx, k)).collect::<Result<Vec<_>, _>>()?;
    let n = h.points(cx)?;
    let search = !h.histc;
    // Σ over points of weight · [inside in every coordinate] · [in this bin], and (for the
    // density) Σ weight · [inside].
    let var = cx.kb.fresh_var()?;
    let p = cx.kb.var(var);
    let mut inside = cx.kb.bool(true);
    let mut here = cx.kb.bool(true);
    for k in 0..h.d {
        let x = h.coord(cx, p, k)?;
        let (ok, pos) = bin_of(&mut cx.kb, x, outer[k].0, outer[k].1, h.bins[k], search)?;
        inside = cx.kb.and(inside, ok)?;
        let same = cx.kb.cmp(CmpOp::Eq, pos, idx[k])?;
        here = cx.kb.and(here, same)?;
    }
    let w = h.weight_of(cx, p)?;
    let zero = cx.kb.float_like(0.0, w);
    let hit = cx.kb.and(inside, here)?;
    let body = cx.kb.select(hit, w, zero)?;
    let count = cx.kb.reduce(RedOp::Sum, var, n, body)?;
    if !h.density {
        return Ok(count);
    }
    let var = cx.kb.fresh_var()?;
    let p = cx.kb.var(var);
    let mut inside = cx.kb.bool(true);
    for (k, &(lo, hi)) in outer.iter().enumerate().take(h.d) {
        let x = h.coord(cx, p, k)?;
        let (ok, _) = bin_of(&mut cx.kb, x, lo, hi, h.bins[k], search)?;
        inside = cx.kb.and(inside, ok)?;
    }
    let w = h.weight_of(cx, p)?;
    let body = cx.kb.select(inside, w, zero)?;
    let total = cx.kb.reduce(RedOp::Sum, var, n, body)?;
    let mut v = cx.kb.binary(BinOp::Div, count, total)?;
    for k in 0..h.d {
        let one = cx.kb.i64(1);
        let next = cx.kb.binary(BinOp::Add, idx[k], one)?;
        let (lo, hi) = outer[k];
        let (a, b) = (edge(&mut cx.kb, lo, hi, h.bins[k], idx[k])?, edge(&mut cx.kb, lo, hi, h.bins[k], next)?);
        let width = cx.kb.binary(BinOp::Sub, b, a)?;
        v = cx.kb.binary(BinOp::Div, v, width)?;
    }
    Ok(v)
}

/// `histc(self, bins, min, max)`.
pub fn histc(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let h = Hist::of(cx, node)?;
    counts(cx, &h, idx)
}

/// `histogram.bin_ct(self, bins, range, weight, density)` → (hist, bin_edges) and
/// `histogramdd(self, bins, range, weight, density)` → (hist, one edge tensor per coordinate).
pub fn histogram(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let h = Hist::of(cx, node)?;
    if out == 0 {
        return counts(cx, &h, idx);
    }
    let k = out - 1;
    if k >= h.d || idx.len() != 1 {
        return Err(cx.err(node, format!("output {out} is not an edge tensor")));
    }
    let (lo, hi) = h.outer(cx, k)?;
    edge(&mut cx.kb, lo, hi, h.bins[k], idx[0])
}
