//! Scans of long static lines in blocks: `cumsum`, `cumprod`, `cummax`, `cummin`,
//! `logcumsumexp`.
//!
//! Why: output element `i` of a scan folds elements `0..=i` of its line, O(n²) per line in
//! all (`cummax` of 8,000 float32 took 28 ms of device time, 700× torch eager). Blocked, a
//! staged kernel (`lower::staged`) folds each block of `B ≈ √n` elements once into scratch
//! buffers shaped like the input with the scan dim cut to the block count; output element `i`
//! then folds the totals of the blocks before its own and the elements of its own block up to
//! `i`: O(√n) per element. The totals: a sum or product; for `cummax`/`cummin` the block's
//! (extreme, last position), which the running fold takes or not by the same rule as an element
//! (a NaN takes over, later NaN move the index, ties move it); for `logcumsumexp` the block's
//! maximum `M` and `Σ exp(x − M)`, rescaled to the running maximum. Integer sums and the
//! extremes are exact; float sums add in another order than PyTorch's sequential loop (which
//! accumulates float32 in double), so they differ by rounding, as the one-loop form already
//! did. Short lines (under [`MIN_BLOCKED`] elements) and dynamic ones keep the one loop.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{Access, BinOp, CmpOp, Elem, ExprId, RedOp, Store, Ty, UnOp, VarId};
use super::super::staged::{Staged, Stager};
use super::super::{schedule, LowerError};
use crate::ir::{DType, Node, TensorMeta, ValueId};
use crate::sym::Expr;

/// Shortest line scanned in blocks.
pub const MIN_BLOCKED: i64 = 65;

/// A blocked scan a node asks for.
pub(super) struct Scan {
    v: ValueId,
    d: usize,
    n: i64,
    /// Elements per block.
    block: i64,
    kind: Kind,
    ty: Ty,
}

/// What a block's total is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// A sum or product.
    Fold(RedOp),
    /// `cummax` (true) or `cummin`: the extreme and its last position.
    Extreme(bool),
    /// `logcumsumexp`: the maximum and the sum of `exp(x − max)`.
    LogSumExp,
}

impl Scan {
    fn blocks(&self) -> i64 {
        (self.n + self.block - 1) / self.block
    }
}

/// The blocked scan `node` asks for, if its line is static and long enough.
pub(super) fn scanning(cx: &Ctx<'_>, node: &Node) -> Result<Option<Scan>, LowerError> {
    let kind = match node.target.as_str() {
        t if t.starts_with("aten.cumsum") => Kind::Fold(RedOp::Sum),
        t if t.starts_with("aten.cumprod") => Kind::Fold(RedOp::Prod),
        t if t.starts_with("aten.cummax") => Kind::Extreme(true),
        t if t.starts_with("aten.cummin") => Kind::Extreme(false),
        t if t.starts_with("aten.logcumsumexp") => Kind::LogSumExp,
        _ => return Ok(None),
    };
    let v = cx.tensor(node, "self")?;
    let sizes = cx.sizes(v)?;
    if sizes.is_empty() {
        return Ok(None);
    }
    let d = wrap_dims(&[cx.int_or(node, "dim", 0)?], sizes.len()).map_err(|m| cx.err(node, m))?[0];
    let Some(n) = sizes.get(d).and_then(Expr::as_int).filter(|n| *n >= MIN_BLOCKED) else { return Ok(None) };
    let block = (n as f64).sqrt().ceil() as i64;
    let ty = match kind {
        // The extremes keep the input's values (bool compares as 0/1).
        Kind::Extreme(_) => super::merge_sort::scratch_type(cx, v)?.1.ty(),
        _ => super::pointwise::out_ty(cx, node)?,
    };
    Ok(Some(Scan { v, d, n, block, kind, ty }))
}

fn combine(op: RedOp) -> BinOp {
    if op == RedOp::Prod {
        BinOp::Mul
    } else {
        BinOp::Add
    }
}

/// Element `p` of the line through `idx` (scan dim `d` replaced), in the scan's type.
fn at(cx: &mut Ctx<'_>, s: &Scan, idx: &[ExprId], p: ExprId) -> Result<ExprId, LowerError> {
    let mut coords = idx.to_vec();
    coords[s.d] = p;
    let x = cx.read(s.v, &coords)?;
    Ok(cx.kb.cast(x, s.ty))
}

/// `op` folded over positions `from..from+len` of the line, of `f(x)`.
fn fold(cx: &mut Ctx<'_>, s: &Scan, idx: &[ExprId], op: RedOp, from: ExprId, len: ExprId, f: &dyn Fn(&mut Ctx<'_>, ExprId) -> Result<ExprId, LowerError>) -> Result<ExprId, LowerError> {
    let var = cx.kb.fresh_var()?;
    let v = cx.kb.var(var);
    let p = cx.kb.binary(BinOp::Add, from, v)?;
    let x = at(cx, s, idx, p)?;
    let body = f(cx, x)?;
    Ok(cx.kb.reduce(op, var, len, body)?)
}

fn is_nan(cx: &mut Ctx<'_>, x: ExprId) -> Result<ExprId, LowerError> {
    Ok(if cx.kb.ty(x).is_float() { cx.kb.cmp(CmpOp::Ne, x, x)? } else { cx.kb.bool(false) })
}

/// Whether a running `cummax`/`cummin` at `best` moves to `x`: a NaN always (and stays),
/// otherwise a value reaching it (ties move the index, as PyTorch's scan does).
fn takes(cx: &mut Ctx<'_>, max: bool, x: ExprId, best: ExprId) -> Result<ExprId, LowerError> {
    let reaches = cx.kb.cmp(if max { CmpOp::Ge } else { CmpOp::Le }, x, best)?;
    let (nx, nb) = (is_nan(cx, x)?, is_nan(cx, best)?);
    let not_nb = cx.kb.unary(UnOp::Not, nb);
    let ordinary = cx.kb.and(not_nb, reaches)?;
    Ok(cx.kb.binary(BinOp::Or, nx, ordinary)?)
}

/// The running extreme from `init` over `len` steps, step `k` offering `offer(k)` = (value,
/// position).
fn extreme_fold(
    cx: &mut Ctx<'_>,
    max: bool,
    init: (ExprId, ExprId),
    len: ExprId,
    offer: &dyn Fn(&mut Ctx<'_>, ExprId) -> Result<(ExprId, ExprId), LowerError>,
) -> Result<(ExprId, ExprId), LowerError> {
    let var = cx.kb.fresh_var()?;
    let k = cx.kb.var(var);
    let (x, p) = offer(cx, k)?;
    let ty = cx.kb.ty(init.0);
    let (bv, bi) = (cx.kb.carried(var, 0, ty), cx.kb.carried(var, 1, Ty::I64));
    let take = takes(cx, max, x, bv)?;
    let nv = cx.kb.select(take, x, bv)?;
    let ni = cx.kb.select(take, p, bi)?;
    let r = cx.kb.iterate(var, len, vec![init.0, init.1], vec![nv, ni])?;
    Ok((r[0], r[1]))
}

fn elem_of(ty: Ty) -> (DType, Elem) {
    match ty {
        Ty::F64 => (DType::F64, Elem::F64),
        Ty::F32 => (DType::F32, Elem::F32),
        _ => (DType::I64, Elem::I64),
    }
}

/// The scratch totals of a scan of `kind`: (suffix, storage) per buffer.
fn totals(kind: Kind, ty: Ty) -> Vec<(&'static str, DType, Elem)> {
    let (dt, e) = elem_of(ty);
    match kind {
        Kind::Fold(_) => vec![("block_totals", dt, e)],
        Kind::Extreme(_) => vec![("block_extremes", dt, e), ("block_extreme_indices", DType::I64, Elem::I64)],
        Kind::LogSumExp => vec![("block_maxima", dt, e), ("block_exp_sums", dt, e)],
    }
}

/// One block's totals: block `coords[d]` of the line through `coords`.
fn block_totals(cx: &mut Ctx<'_>, s: &Scan, coords: &[ExprId]) -> Result<Vec<ExprId>, LowerError> {
    let (b, n) = (cx.kb.i64(s.block), cx.kb.i64(s.n));
    let from = cx.kb.binary(BinOp::Mul, coords[s.d], b)?;
    let rest = cx.kb.binary(BinOp::Sub, n, from)?;
    let len = cx.kb.binary(BinOp::Min, rest, b)?;
    Ok(match s.kind {
        Kind::Fold(op) => vec![fold(cx, s, coords, op, from, len, &|_, x| Ok(x))?],
        Kind::Extreme(max) => {
            let first = at(cx, s, coords, from)?;
            let (v, i) = extreme_fold(cx, max, (first, from), len, &|cx, k| {
                let p = cx.kb.binary(BinOp::Add, from, k)?;
                Ok((at(cx, s, coords, p)?, p))
            })?;
            vec![v, i]
        }
        Kind::LogSumExp => {
            let m = fold(cx, s, coords, RedOp::Max, from, len, &|_, x| Ok(x))?;
            let sum = fold(cx, s, coords, RedOp::Sum, from, len, &|cx, x| {
                let dlt = cx.kb.binary(BinOp::Sub, x, m)?;
                Ok(cx.kb.unary(UnOp::Exp, dlt))
            })?;
            vec![m, sum]
        }
    })
}

/// The staged kernel of a blocked scan: each block's totals.
pub fn scan_stages<'a>(st: &Stager<'a>, node: &'a Node) -> Result<Option<Staged>, LowerError> {
    let probe = st.ctx(node, 0);
    let Some(s) = scanning(&probe, node)? else { return Ok(None) };
    let mut sizes = probe.sizes(s.v)?;
    sizes[s.d] = Expr::int(s.blocks());
    let mut cx = st.ctx(node, sizes.len());
    let coords: Vec<ExprId> = (0..sizes.len()).map(|i| cx.kb.var(VarId(i as u32))).collect();
    let domain: Vec<ExprId> = sizes.iter().map(|e| cx.kb.size(e)).collect();
    cx.kb.set_coord_extents(&domain);
    let values = block_totals(&mut cx, &s, &coords)?;
    let mut stores = Vec::new();
    let mut scratch = Vec::new();
    for ((what, dtype, elem), value) in totals(s.kind, s.ty).into_iter().zip(values) {
        let name = st.scratch_name(node, what);
        let value = cx.kb.cast(value, elem.ty());
        stores.push(Store { buf: cx.kb.buffer_of(&name, Access::Write, elem), value });
        scratch.push((name, TensorMeta::contiguous(dtype, sizes.clone())));
    }
    let mut reads: Vec<String> = scratch.iter().map(|(n, _)| n.clone()).collect();
    let inlined = std::mem::take(&mut cx.inlined);
    let mut kernel = cx.kb.finish(st.kernel_name(node, "block_totals"), sizes.clone(), domain, stores);
    kernel.schedule = schedule::choose(&kernel, false);
    let mut kernels = vec![(kernel, inlined)];
    if let Kind::Extreme(max) = s.kind {
        // The running extreme before each block, once per block: output elements then start
        // from it instead of folding every block before their own (half their work).
        let mut cx = st.ctx(node, sizes.len());
        cx.staged = reads.clone();
        let coords: Vec<ExprId> = (0..sizes.len()).map(|i| cx.kb.var(VarId(i as u32))).collect();
        let domain: Vec<ExprId> = sizes.iter().map(|e| cx.kb.size(e)).collect();
        cx.kb.set_coord_extents(&domain);
        let zero = cx.kb.i64(0);
        let x0 = at(&mut cx, &s, &coords, zero)?;
        let (v, i) = extreme_fold(&mut cx, max, (x0, zero), coords[s.d], &|cx, k| Ok((total(cx, &s, &coords, 0, k)?, total(cx, &s, &coords, 1, k)?)))?;
        let mut stores = Vec::new();
        let mut prefix = Vec::new();
        let (dt, e) = elem_of(s.ty);
        for ((what, dtype, elem), value) in [("block_prefix_extremes", dt, e), ("block_prefix_extreme_indices", DType::I64, Elem::I64)].into_iter().zip([v, i]) {
            let name = st.scratch_name(node, what);
            let value = cx.kb.cast(value, elem.ty());
            stores.push(Store { buf: cx.kb.buffer_of(&name, Access::Write, elem), value });
            scratch.push((name.clone(), TensorMeta::contiguous(dtype, sizes.clone())));
            prefix.push(name);
        }
        let inlined = std::mem::take(&mut cx.inlined);
        let mut kernel = cx.kb.finish(st.kernel_name(node, "block_prefix"), sizes, domain, stores);
        kernel.schedule = schedule::choose(&kernel, false);
        kernels.push((kernel, inlined));
        reads = prefix;
    }
    Ok(Some(Staged { kernels, scratch, reads }))
}

/// Total `which` of block `b` of the line through `idx`, read back from the staged scratch.
fn total(cx: &mut Ctx<'_>, s: &Scan, idx: &[ExprId], which: usize, b: ExprId) -> Result<ExprId, LowerError> {
    let (_, _, elem) = totals(s.kind, s.ty)[which];
    let name = cx.staged[which].clone();
    let mut sizes = cx.ksizes(s.v)?;
    sizes[s.d] = cx.kb.i64(s.blocks());
    let mut coords = idx.to_vec();
    coords[s.d] = b;
    let mut offset = cx.kb.i64(0);
    for (size, a) in sizes.iter().zip(&coords) {
        let scaled = cx.kb.binary(BinOp::Mul, offset, *size)?;
        offset = cx.kb.binary(BinOp::Add, scaled, *a)?;
    }
    let buf = cx.kb.buffer_of(&name, Access::Read, elem);
    let t = cx.kb.load(buf, offset);
    Ok(if elem == Elem::I64 && which == 1 { t } else { cx.kb.cast(t, s.ty) })
}

/// Output `out` at `idx` of a blocked scan: the totals of the blocks before its own, then its
/// own block up to it. `None` when the staged kernel did not run for this kernel.
pub(super) fn output(cx: &mut Ctx<'_>, s: &Scan, out: usize, idx: &[ExprId]) -> Result<Option<ExprId>, LowerError> {
    if cx.staged.len() != totals(s.kind, s.ty).len() {
        return Ok(None);
    }
    let b = cx.kb.i64(s.block);
    let q = *idx.get(s.d).ok_or_else(|| LowerError::Internal("scan output rank does not match its input".into()))?;
    let blk = cx.kb.binary(BinOp::Div, q, b)?;
    let from = cx.kb.binary(BinOp::Mul, blk, b)?;
    let within = cx.kb.binary(BinOp::Sub, q, from)?;
    let one = cx.kb.i64(1);
    let len = cx.kb.binary(BinOp::Add, within, one)?;
    Ok(Some(match s.kind {
        Kind::Fold(op) => {
            let own = fold(cx, s, idx, op, from, len, &|_, x| Ok(x))?;
            let var = cx.kb.fresh_var()?;
            let k = cx.kb.var(var);
            let t = total(cx, s, idx, 0, k)?;
            let before = cx.kb.reduce(op, var, blk, t)?;
            cx.kb.binary(combine(op), before, own)?
        }
        Kind::Extreme(max) => {
            // From the running extreme before the own block (staged), through the own block.
            let pre = (total(cx, s, idx, 0, blk)?, total(cx, s, idx, 1, blk)?);
            let (v, i) = extreme_fold(cx, max, pre, len, &|cx, k| {
                let p = cx.kb.binary(BinOp::Add, from, k)?;
                Ok((at(cx, s, idx, p)?, p))
            })?;
            if out == 1 {
                i
            } else {
                v
            }
        }
        Kind::LogSumExp => {
            let own_m = fold(cx, s, idx, RedOp::Max, from, len, &|_, x| Ok(x))?;
            let var = cx.kb.fresh_var()?;
            let k = cx.kb.var(var);
            let mb = total(cx, s, idx, 0, k)?;
            let pre_m = cx.kb.reduce(RedOp::Max, var, blk, mb)?;
            let zero = cx.kb.i64(0);
            let any = cx.kb.cmp(CmpOp::Gt, blk, zero)?;
            let both = cx.kb.binary(BinOp::Max, pre_m, own_m)?;
            let m = cx.kb.select(any, both, own_m)?;
            let own_s = fold(cx, s, idx, RedOp::Sum, from, len, &|cx, x| {
                let dlt = cx.kb.binary(BinOp::Sub, x, m)?;
                Ok(cx.kb.unary(UnOp::Exp, dlt))
            })?;
            // A block of -inf only adds nothing (its own sum is exp(NaN)).
            let var = cx.kb.fresh_var()?;
            let k = cx.kb.var(var);
            let (mb, sb) = (total(cx, s, idx, 0, k)?, total(cx, s, idx, 1, k)?);
            let dlt = cx.kb.binary(BinOp::Sub, mb, m)?;
            let scale = cx.kb.unary(UnOp::Exp, dlt);
            let term = cx.kb.binary(BinOp::Mul, sb, scale)?;
            let ninf = cx.kb.float_like(f64::NEG_INFINITY, mb);
            let empty = cx.kb.cmp(CmpOp::Eq, mb, ninf)?;
            let nothing = cx.kb.float_like(0.0, mb);
            let term = cx.kb.select(empty, nothing, term)?;
            let pre_s = cx.kb.reduce(RedOp::Sum, var, blk, term)?;
            let sum = cx.kb.binary(BinOp::Add, pre_s, own_s)?;
            let l = cx.kb.unary(UnOp::Log, sum);
            let y = cx.kb.binary(BinOp::Add, m, l)?;
            let a = cx.kb.unary(UnOp::Abs, m);
            let inf = cx.kb.float_like(f64::INFINITY, a);
            let is_inf = cx.kb.cmp(CmpOp::Eq, a, inf)?;
            cx.kb.select(is_inf, m, y)?
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::super::edge_tests::plan_one;
    use super::*;
    use crate::ir::Arg;

    fn cumsum(sizes: &[i64], dim: i64) -> crate::lower::Plan {
        plan_one("aten.cumsum.default", &[sizes], sizes, |v| vec![("self", Arg::Tensor(v[0])), ("dim", Arg::Int(dim))]).expect("cumsum lowers")
    }

    #[test]
    fn long_lines_get_a_block_totals_kernel_short_ones_one_loop() {
        let plan = cumsum(&[3, 500], 1);
        let kernels: Vec<_> = plan.steps.iter().filter_map(|s| s.kernel()).collect();
        assert_eq!(kernels.len(), 2);
        let totals = plan.graph.value_id("op_block_totals").map(|v| plan.graph.value(v).tensor().map(|t| t.sizes.clone()));
        assert_eq!(totals, Some(Some(vec![Expr::int(3), Expr::int(22)])), "⌈500 / 23⌉ blocks of 23");
        assert!(kernels[1].buffers.iter().any(|b| b.value == "op_block_totals"));
        assert_eq!(cumsum(&[3, 64], 1).steps.iter().filter(|s| s.kernel().is_some()).count(), 1);
        assert_eq!(cumsum(&[500, 3], 1).steps.iter().filter(|s| s.kernel().is_some()).count(), 1);
    }

    #[test]
    fn running_extremes_and_logcumsumexp_keep_two_totals_per_block() {
        for (target, names) in [
            ("aten.cummax.default", ["op_block_prefix_extremes", "op_block_prefix_extreme_indices"]),
            ("aten.cummin.default", ["op_block_prefix_extremes", "op_block_prefix_extreme_indices"]),
            ("aten.logcumsumexp.default", ["op_block_maxima", "op_block_exp_sums"]),
        ] {
            let plan = plan_one(target, &[&[8000]], &[8000], |v| vec![("self", Arg::Tensor(v[0])), ("dim", Arg::Int(0))]).expect("scan lowers");
            let kernels: Vec<_> = plan.steps.iter().filter_map(|s| s.kernel()).collect();
            // The extremes stage a second kernel: the running extreme before each block.
            assert_eq!(kernels.len(), if target.contains("logcumsumexp") { 2 } else { 3 }, "{target}");
            for name in names {
                let sizes = plan.graph.value_id(name).and_then(|v| plan.graph.value(v).tensor().map(|t| t.sizes.clone()));
                assert_eq!(sizes, Some(vec![Expr::int(89)]), "{target}: {name} (⌈8000 / 90⌉ blocks)");
                assert!(kernels.last().is_some_and(|k| k.buffers.iter().any(|b| b.value == name)), "{target} reads {name}");
            }
        }
    }

    #[test]
    fn blocks_cover_the_line_with_about_root_n_each() {
        let s = |n: i64| {
            let block = (n as f64).sqrt().ceil() as i64;
            Scan { v: ValueId(0), d: 0, n, block, kind: Kind::Fold(RedOp::Sum), ty: Ty::F32 }
        };
        for n in [65, 100, 101, 8000] {
            let x = s(n);
            assert!(x.blocks() * x.block >= n && (x.blocks() - 1) * x.block < n, "n = {n}");
        }
        assert_eq!(s(8000).block, 90);
    }
}
