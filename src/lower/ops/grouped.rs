//! Grouped matrix products on the device: `aten._grouped_mm` and transformers' opaque
//! `grouped_mm_fallback`, what mixture-of-experts layers run once per expert (the rows routed to
//! expert `g` times `weight[g]`). `crate::exec::ops::grouped` is the reference.
//!
//! Why a kernel: as a host step each product read its operands back, ran in the interpreter and
//! uploaded its result — 0.7 ms of a 4 ms forward per product in an optimised build, four per
//! model (docs/PERFORMANCE.md, "Issue 28: mixture of experts"). The group sizes are data (the
//! router's histogram, cumulated), so nothing about them is known when the kernel is compiled:
//! each output row finds its group on the device by counting the offsets at or below it (the
//! offsets are non-decreasing, so that count is the first group whose end lies past the row),
//! then folds its dot product with that group's weight. Rows past the last offset are zero, as
//! transformers' fallback leaves them (`torch.zeros` then one `mm` per group). Over a resident
//! expert weight the kernel runs on the column schedule, the weight stored transposed per
//! expert ([`super::grouped_columns`]).
//!
//! Covered: 2-D × 3-D with offsets (the MoE form) and 3-D × 3-D without (a batched product).
//! The other forms (3-D × 2-D and 2-D × 2-D with offsets: groups of the columns or of the inner
//! dim, which only backward passes produce) run as host steps ([`needs_host`]).

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty};
use super::super::LowerError;
use crate::ir::{Arg, Graph, Node, ValueId};

/// Most groups whose offsets a row compares one by one (unrolled: a load and a compare each,
/// computed once per output before the dot product's loop). More groups, or a dynamic count,
/// count them in a loop instead.
const UNROLLED_GROUPS: i64 = 64;

/// The operands of a grouped product: (left, right, offsets), by either op's argument names.
fn operands(cx: &Ctx<'_>, node: &Node) -> Result<(ValueId, ValueId, Option<ValueId>), LowerError> {
    if node.target.starts_with("transformers.") {
        return Ok((cx.tensor(node, "input")?, cx.tensor(node, "weight")?, Some(cx.tensor(node, "offs")?)));
    }
    Ok((cx.tensor(node, "self")?, cx.tensor(node, "mat2")?, cx.opt_tensor(node, "offs")))
}

/// Whether a grouped-product node runs on the host: any form but 2-D × 3-D with offsets and
/// 3-D × 3-D without, a bias, or operands whose shapes the graph does not record.
pub fn needs_host(graph: &Graph, node: &Node) -> bool {
    let tensor = |name: &str| node.arg(name).and_then(Arg::as_tensor);
    let (a, b, offs) = match node.target.starts_with("transformers.") {
        true => (tensor("input"), tensor("weight"), tensor("offs")),
        false => (tensor("self"), tensor("mat2"), tensor("offs")),
    };
    if tensor("bias").is_some() {
        return true;
    }
    let rank = |v: Option<ValueId>| v.and_then(|v| graph.value(v).tensor()).map(|t| t.sizes.len());
    !matches!((rank(a), rank(b), offs.is_some()), (Some(2), Some(3), true) | (Some(3), Some(3), false))
}

/// Element `idx` of a grouped product's output (see the module).
pub fn grouped_mm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let (a, b, offs) = operands(cx, node)?;
    let (sa, sb) = (cx.sizes(a)?, cx.sizes(b)?);
    match (sa.len(), sb.len(), offs, idx) {
        (2, 3, Some(offs), &[r, j]) => rows_by_group(cx, node, (a, b, offs), r, j),
        (3, 3, None, &[g, i, j]) => {
            let acc = dot(cx, a, &[g, i], b, g, j)?;
            Ok(acc)
        }
        _ => Err(cx.err(node, "only 2-D × 3-D with offs and 3-D × 3-D without have a kernel (the rest run on the host)")),
    }
}

/// `Σ_k a[lead.., k] · b[group, k, j]` over `a`'s last dim.
fn dot(cx: &mut Ctx<'_>, a: ValueId, lead: &[ExprId], b: ValueId, group: ExprId, j: ExprId) -> Result<ExprId, LowerError> {
    let depth = cx.sizes(a)?.last().cloned().ok_or_else(|| LowerError::Internal("a grouped product's operand has no dims".into()))?;
    let var = cx.kb.fresh_var()?;
    let k = cx.kb.var(var);
    let extent = cx.kb.size(&depth);
    let mut ai = lead.to_vec();
    ai.push(k);
    let x = cx.read(a, &ai)?;
    let y = cx.read(b, &[group, k, j])?;
    let p = cx.kb.binary(BinOp::Mul, x, y)?;
    Ok(cx.kb.reduce(RedOp::Sum, var, extent, p)?)
}

/// Output row `r`, column `j` of the 2-D × 3-D form: the row's group is the number of group
/// ends at or below it; a row past the last end is zero.
fn rows_by_group(cx: &mut Ctx<'_>, node: &Node, (a, b, offs): (ValueId, ValueId, ValueId), r: ExprId, j: ExprId) -> Result<ExprId, LowerError> {
    let groups = cx.sizes(b)?[0].clone();
    if cx.sizes(offs)?.len() != 1 {
        return Err(cx.err(node, "offs must be 1-D, one end per group"));
    }
    let one = cx.kb.i64(1);
    let zero = cx.kb.i64(0);
    let past = |cx: &mut Ctx<'_>, e: ExprId| -> Result<ExprId, LowerError> {
        let end = cx.read(offs, &[e])?;
        let end = cx.kb.cast(end, Ty::I64);
        let below = cx.kb.cmp(CmpOp::Le, end, r)?;
        Ok(cx.kb.select(below, one, zero)?)
    };
    let group = match groups.as_int() {
        Some(n) if n <= UNROLLED_GROUPS => {
            let mut count = zero;
            for e in 0..n {
                let at = cx.kb.i64(e);
                let p = past(cx, at)?;
                count = cx.kb.binary(BinOp::Add, count, p)?;
            }
            count
        }
        _ => {
            let var = cx.kb.fresh_var()?;
            let e = cx.kb.var(var);
            let p = past(cx, e)?;
            let extent = cx.kb.size(&groups);
            cx.kb.reduce(RedOp::Sum, var, extent, p)?
        }
    };
    // A row past the last end reads group 0's weight (in bounds whatever the offsets hold)
    // and stores zero.
    let extent = cx.kb.size(&groups);
    let inside = cx.kb.cmp(CmpOp::Lt, group, extent)?;
    let safe = cx.kb.select(inside, group, zero)?;
    let acc = dot(cx, a, &[r], b, safe, j)?;
    let none = cx.kb.float_like(0.0, acc);
    Ok(cx.kb.select(inside, acc, none)?)
}
