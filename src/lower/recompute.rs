//! Which statistics a kernel computes more often than it has values: a fused reduction (a
//! norm's mean and variance, an RMS norm's mean square) evaluated once per work-item that
//! needs it, where many work-items need the same value.
//!
//! Code generation hoists every sub-expression out of the loops whose variables it does not
//! read, so inside one work-item nothing is folded twice. What hoisting cannot remove is the
//! work-items themselves: a work-item binds every output coordinate (or, for the row
//! statistics of [`Schedule::Rows`], the row's), and a reduction that does not read one of
//! them is folded again by every work-item along it. Three real cases (docs/PERFORMANCE.md,
//! "Issue 28: reductions and pointwise kernels"):
//!
//! - a channel layer norm of an NCHW map (`LayerNorm2d`: statistics over `C`, per `(n, h, w)`)
//!   fused into its consumer's elementwise kernel: the statistics folded `C` times over;
//! - a token mean over a layer norm (`norm(x).mean(1)` of `[B, N, C]`, EfficientFormer's and
//!   AIMv2's heads): the norm's row statistics folded once per output channel;
//! - a global average pool over a channel layer norm (MaxxViT's and CoAtNet's heads).
//!
//! The lowering gives such a statistic a kernel of its own instead (`lower::build_steps`), as
//! it does a matrix product inlined where it would be recomputed.

use super::kernel::{ExprId, KExpr, Kernel};
use super::schedule::{coord_mask, top_reduces, Schedule};

/// The reductions of `k` (on the schedule `schedule::choose` gave it) that some work-item
/// folds although a work-item at another index of an output coordinate it binds folds the
/// same value: coordinates of static extent 1 do not count. Empty for the tiled schedule and
/// for kernels with state loops, whose work-items are laid out otherwise.
pub fn recomputed(k: &Kernel) -> Vec<ExprId> {
    if matches!(k.schedule, Schedule::Tiled { .. }) || k.exprs.iter().any(|e| matches!(e, KExpr::Loop { .. })) {
        return Vec::new();
    }
    let free = k.free_vars();
    let coords = coord_mask(k);
    // Output coordinates along which work-items differ: every one but those of extent 1.
    let varying = (0..k.domain.len()).filter(|i| !matches!(k.expr(k.domain[*i]), KExpr::I64(1))).fold(0u128, |m, i| m | (1u128 << i));
    // The row statistics of the row schedule are folded once per row: their work-items bind
    // the row's coordinates only, and so does whatever they fold inside them.
    // The stack pops the row statistics first: what they reach is computed with the row.
    let mut bound: Vec<Option<u128>> = vec![None; k.exprs.len()];
    let mut stack: Vec<(ExprId, u128)> = k.stores.iter().map(|s| (s.value, coords)).collect();
    if let Schedule::Rows { outer, .. } = k.schedule {
        let row = (1u128 << outer) - 1;
        for r in top_reduces(k, &free) {
            if free[r.0 as usize] & coords & !row == 0 {
                stack.push((r, row));
            }
        }
    }
    let mut out = Vec::new();
    while let Some((e, ctx)) = stack.pop() {
        // Reached first with the row's context, a node keeps it: the row computes it.
        if bound[e.0 as usize].is_some() {
            continue;
        }
        bound[e.0 as usize] = Some(ctx);
        if matches!(k.expr(e), KExpr::Reduce { .. }) && ctx & varying & !free[e.0 as usize] != 0 {
            out.push(e);
        }
        stack.extend(k.children(e).into_iter().map(|c| (c, ctx)));
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::{Access, BinOp, Elem, KernelBuilder, RedOp, Store, VarId};
    use crate::lower::schedule;

    /// `out[r, c] = x[r, c] - Σ_j y[…]` over a static `[rows, cols]` output, `y` of
    /// `[depth, cols]`: folded along each output row (`y[r, j]`, `along_row`: a norm over the
    /// last dim) or down each column (`y[j, c]`: a statistic over a dim that is not the last, as
    /// a channel norm's over `C` of an NCHW map).
    fn centring(rows: i64, cols: i64, depth: i64, along_row: bool) -> Kernel {
        let ok = "well-typed";
        let mut kb = KernelBuilder::new(2);
        let (r, c) = (kb.var(VarId(0)), kb.var(VarId(1)));
        let domain = vec![kb.i64(rows), kb.i64(cols)];
        kb.set_coord_extents(&domain);
        let (x, y) = (kb.buffer_of("x", Access::Read, Elem::F32), kb.buffer_of("y", Access::Read, Elem::F32));
        let width = kb.i64(cols);
        let base = kb.binary(BinOp::Mul, r, width).expect(ok);
        let own = kb.binary(BinOp::Add, base, c).expect(ok);
        let own = kb.load(x, own);
        let v = kb.fresh_var().expect(ok);
        let j = kb.var(v);
        let index = if along_row {
            let depth = kb.i64(depth);
            let base = kb.binary(BinOp::Mul, r, depth).expect(ok);
            kb.binary(BinOp::Add, base, j).expect(ok)
        } else {
            let base = kb.binary(BinOp::Mul, j, width).expect(ok);
            kb.binary(BinOp::Add, base, c).expect(ok)
        };
        let body = kb.load(y, index);
        let extent = kb.i64(depth);
        let sum = kb.reduce(RedOp::Sum, v, extent, body).expect(ok);
        let value = kb.binary(BinOp::Sub, own, sum).expect(ok);
        let out = kb.buffer_of("out", Access::Write, Elem::F32);
        let sizes = vec![crate::sym::Expr::int(rows), crate::sym::Expr::int(cols)];
        let mut k = kb.finish("centring".into(), sizes, domain, vec![Store { buf: out, value }]);
        k.schedule = schedule::choose(&k, false);
        k
    }

    #[test]
    fn a_statistic_down_the_columns_is_folded_by_every_row() {
        let k = centring(16, 64, 16, false);
        assert_eq!(k.schedule, Schedule::Elementwise);
        assert_eq!(recomputed(&k).len(), 1);
    }

    #[test]
    fn row_statistics_are_folded_once_per_row() {
        let k = centring(16, 64, 64, true);
        assert!(matches!(k.schedule, Schedule::Rows { outer: 1, .. }), "{:?}", k.schedule);
        assert!(recomputed(&k).is_empty());
    }

    #[test]
    fn a_single_row_folds_each_column_once() {
        // One output row: the statistic down the columns is folded once per column.
        assert!(recomputed(&centring(1, 64, 16, false)).is_empty());
    }
}
