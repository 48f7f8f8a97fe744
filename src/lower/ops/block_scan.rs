//! `cumsum`/`cumprod` of long static lines in blocks.
//!
//! Why: output element `i` of a scan folds elements `0..=i` of its line, O(n²) per line in
//! all. Blocked, a staged kernel (`lower::staged`) folds each block of `B ≈ √n` elements once
//! into a scratch buffer shaped like the input with the scan dim cut to the block count; output
//! element `i` then folds the totals of the blocks before its own and the elements of its own
//! block up to `i`: O(√n) per element. Integer scans are exact either way; float scans add in
//! a different order than PyTorch's sequential loop (which accumulates float32 in double), so
//! results differ by rounding, as the one-loop form already did. Short lines (at most
//! [`MIN_BLOCKED`]` - 1` elements) and dynamic ones keep the one loop.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, Elem, ExprId, RedOp, Store, Ty, VarId};
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
    op: RedOp,
    ty: Ty,
}

impl Scan {
    fn blocks(&self) -> i64 {
        (self.n + self.block - 1) / self.block
    }
}

/// The blocked scan `node` asks for, if its line is static and long enough.
pub(super) fn scanning(cx: &Ctx<'_>, node: &Node) -> Result<Option<Scan>, LowerError> {
    let op = match node.target.as_str() {
        t if t.starts_with("aten.cumsum") => RedOp::Sum,
        t if t.starts_with("aten.cumprod") => RedOp::Prod,
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
    Ok(Some(Scan { v, d, n, block, op, ty: super::pointwise::out_ty(cx, node)? }))
}

fn combine(op: RedOp) -> BinOp {
    if op == RedOp::Prod {
        BinOp::Mul
    } else {
        BinOp::Add
    }
}

/// The fold of the line through `idx` (scan dim `d` replaced) over positions `from..from+len`.
fn fold(cx: &mut Ctx<'_>, s: &Scan, idx: &[ExprId], from: ExprId, len: ExprId) -> Result<ExprId, LowerError> {
    let var = cx.kb.fresh_var()?;
    let mut at = idx.to_vec();
    let p = cx.kb.var(var);
    at[s.d] = cx.kb.binary(BinOp::Add, from, p)?;
    let x = cx.read(s.v, &at)?;
    let body = cx.kb.cast(x, s.ty);
    Ok(cx.kb.reduce(s.op, var, len, body)?)
}

fn scratch_dtype(ty: Ty) -> (DType, Elem) {
    match ty {
        Ty::F64 => (DType::F64, Elem::F64),
        Ty::F32 => (DType::F32, Elem::F32),
        _ => (DType::I64, Elem::I64),
    }
}

/// The staged kernel of a blocked scan: each block's total.
pub fn scan_stages<'a>(st: &Stager<'a>, node: &'a Node) -> Result<Option<Staged>, LowerError> {
    let probe = st.ctx(node, 0);
    let Some(s) = scanning(&probe, node)? else { return Ok(None) };
    let mut sizes = probe.sizes(s.v)?;
    sizes[s.d] = Expr::int(s.blocks());
    let (dtype, elem) = scratch_dtype(s.ty);
    let name = st.scratch_name(node, "block_totals");
    let mut cx = st.ctx(node, sizes.len());
    let coords: Vec<ExprId> = (0..sizes.len()).map(|i| cx.kb.var(VarId(i as u32))).collect();
    let domain: Vec<ExprId> = sizes.iter().map(|e| cx.kb.size(e)).collect();
    cx.kb.set_coord_extents(&domain);
    let (b, n) = (cx.kb.i64(s.block), cx.kb.i64(s.n));
    let from = cx.kb.binary(BinOp::Mul, coords[s.d], b)?;
    let rest = cx.kb.binary(BinOp::Sub, n, from)?;
    let len = cx.kb.binary(BinOp::Min, rest, b)?;
    let total = fold(&mut cx, &s, &coords, from, len)?;
    let total = cx.kb.cast(total, elem.ty());
    let stores = vec![Store { buf: cx.kb.buffer_of(&name, super::super::kernel::Access::Write, elem), value: total }];
    let inlined = std::mem::take(&mut cx.inlined);
    let mut kernel = cx.kb.finish(st.kernel_name(node, "block_totals"), sizes.clone(), domain, stores);
    kernel.schedule = schedule::choose(&kernel, false);
    Ok(Some(Staged { kernels: vec![(kernel, inlined)], scratch: vec![(name.clone(), TensorMeta::contiguous(dtype, sizes))], reads: vec![name] }))
}

/// Output element `idx` of a blocked scan: the totals of the blocks before its own, then its
/// own block up to it. `None` when the staged kernel did not run for this kernel.
pub(super) fn output(cx: &mut Ctx<'_>, s: &Scan, idx: &[ExprId]) -> Result<Option<ExprId>, LowerError> {
    let [totals] = &cx.staged[..] else { return Ok(None) };
    let totals = totals.clone();
    let (_, elem) = scratch_dtype(s.ty);
    let b = cx.kb.i64(s.block);
    let q = *idx.get(s.d).ok_or_else(|| LowerError::Internal("scan output rank does not match its input".into()))?;
    let blk = cx.kb.binary(BinOp::Div, q, b)?;
    let from = cx.kb.binary(BinOp::Mul, blk, b)?;
    let within = cx.kb.binary(BinOp::Sub, q, from)?;
    let one = cx.kb.i64(1);
    let len = cx.kb.binary(BinOp::Add, within, one)?;
    let own = fold(cx, s, idx, from, len)?;
    // The totals buffer: the input's shape with the scan dim cut to the block count.
    let mut sizes = cx.ksizes(s.v)?;
    sizes[s.d] = cx.kb.i64(s.blocks());
    let buf = cx.kb.buffer_of(&totals, super::super::kernel::Access::Read, elem);
    let var = cx.kb.fresh_var()?;
    let mut at = idx.to_vec();
    at[s.d] = cx.kb.var(var);
    let mut offset = cx.kb.i64(0);
    for (size, a) in sizes.iter().zip(&at) {
        let scaled = cx.kb.binary(BinOp::Mul, offset, *size)?;
        offset = cx.kb.binary(BinOp::Add, scaled, *a)?;
    }
    let t = cx.kb.load(buf, offset);
    let t = cx.kb.cast(t, s.ty);
    let before = cx.kb.reduce(s.op, var, blk, t)?;
    Ok(Some(cx.kb.binary(combine(s.op), before, own)?))
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
    fn blocks_cover_the_line_with_about_root_n_each() {
        let s = |n: i64| {
            let block = (n as f64).sqrt().ceil() as i64;
            Scan { v: ValueId(0), d: 0, n, block, op: RedOp::Sum, ty: Ty::F32 }
        };
        for n in [65, 100, 101, 8000] {
            let x = s(n);
            assert!(x.blocks() * x.block >= n && (x.blocks() - 1) * x.block < n, "n = {n}");
        }
        assert_eq!(s(8000).block, 90);
        assert_eq!(combine(RedOp::Prod), BinOp::Mul);
    }
}
