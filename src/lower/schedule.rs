//! How a kernel's work is spread over work-items: the mapping from the launch grid to output
//! elements, chosen from the shape of the kernel's expression DAG alone (a pure analysis, so
//! the benchmark and the tests can ask for a schedule on kernels they build by hand).
//!
//! - [`Schedule::Elementwise`]: one work-item per output element, reductions as serial loops.
//! - [`Schedule::Rows`]: one work-group per "row" (an index of the leading output coordinates
//!   that the row statistics depend on); the statistics are folded cooperatively through local
//!   memory, then the work-items stride over the row's outputs.
//! - [`Schedule::Tiled`]: `out[.., i, j] = f(Σ_k a(i, k) · b(k, j))` with both operands staged
//!   tile by tile in local memory, the batch coordinates on the third grid dimension.

use serde::Serialize;

use super::kernel::{BinOp, ExprId, KExpr, Kernel, RedOp};

/// Work-items per work-group of the row schedule.
pub const ROW_GROUP: u32 = 64;
/// Side of the square output tile (and of the contraction slice staged per step).
pub const TILE: u32 = 16;
/// Shortest static reduction worth a work-group; shorter rows stay serial, one per work-item.
pub const MIN_ROW_EXTENT: i64 = 256;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Schedule {
    #[default]
    Elementwise,
    /// A work-group of `group` work-items (a power of two) per index of the first `outer`
    /// output coordinates.
    Rows { outer: u32, group: u32 },
    /// `reduce` is the dot product `Σ a · b` over the contraction variable, read at output
    /// coordinates `i = rank - 2` (from `a` only) and `j = rank - 1` (from `b` only).
    Tiled { tile: u32, reduce: ExprId, a: ExprId, b: ExprId },
}

/// Reduce nodes reachable from the stores whose free variables are output coordinates only:
/// the statistics computed once per output (or row), outside any other loop.
fn top_reduces(k: &Kernel, free: &[u128]) -> Vec<ExprId> {
    let coords = coord_mask(k);
    let mut seen = vec![false; k.exprs.len()];
    let mut stack: Vec<ExprId> = k.stores.iter().map(|s| s.value).collect();
    let mut out = Vec::new();
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut seen[e.0 as usize], true) {
            continue;
        }
        if matches!(k.expr(e), KExpr::Reduce { .. }) && free[e.0 as usize] & !coords == 0 {
            out.push(e);
        }
        stack.extend(k.children(e));
    }
    out.sort();
    out
}

fn coord_mask(k: &Kernel) -> u128 {
    (1u128 << k.domain.len()) - 1
}

/// Elements folded by a reduce and the reduces nested directly in its body; `None` if dynamic.
fn static_work(k: &Kernel, e: ExprId) -> Option<i64> {
    match k.expr(e) {
        KExpr::Reduce { extent, body, .. } => {
            let n = match k.expr(*extent) {
                KExpr::I64(n) => *n,
                _ => return None,
            };
            let inner = if matches!(k.expr(*body), KExpr::Reduce { .. }) { static_work(k, *body)? } else { 1 };
            Some(n.saturating_mul(inner))
        }
        _ => Some(1),
    }
}

/// The row schedule for `k`, when it has row statistics and at least one is long (or dynamic).
pub fn rows(k: &Kernel, group: u32) -> Option<Schedule> {
    let free = k.free_vars();
    let reduces = top_reduces(k, &free);
    if reduces.is_empty() || !reduces.iter().any(|r| static_work(k, *r).is_none_or(|n| n >= MIN_ROW_EXTENT)) {
        return None;
    }
    let used = reduces.iter().fold(0u128, |m, r| m | free[r.0 as usize]);
    let outer = 128 - used.leading_zeros();
    Some(Schedule::Rows { outer, group })
}

/// The tiled matrix-product schedule for `k`, when its stores are pointwise functions of a
/// single dot product over the last two output coordinates.
pub fn tiled(k: &Kernel, tile: u32) -> Option<Schedule> {
    let rank = k.domain.len();
    if rank < 2 {
        return None;
    }
    let free = k.free_vars();
    // One dot product and nothing else folded: the epilogue around it is pointwise.
    let [reduce] = top_reduces(k, &free)[..] else { return None };
    let KExpr::Reduce { op: RedOp::Sum, var, extent, body } = k.expr(reduce) else { return None };
    let KExpr::Binary(BinOp::Mul, x, y) = k.expr(*body) else { return None };
    if free[extent.0 as usize] != 0 {
        return None;
    }
    let (ibit, jbit, kbit) = (1u128 << (rank - 2), 1u128 << (rank - 1), 1u128 << var.0);
    let (fx, fy) = (free[x.0 as usize], free[y.0 as usize]);
    let (a, b) = if fx & jbit == 0 && fy & ibit == 0 {
        (*x, *y)
    } else if fy & jbit == 0 && fx & ibit == 0 {
        (*y, *x)
    } else {
        return None;
    };
    // Both operands must use the contraction variable, or there is nothing to stage.
    if (free[a.0 as usize] & kbit == 0) || (free[b.0 as usize] & kbit == 0) {
        return None;
    }
    Some(Schedule::Tiled { tile, reduce, a, b })
}

/// The schedule the lowering picks for a kernel whose root op is a reduction (`reduction`) or
/// a matrix product (`matmul`).
pub fn choose(k: &Kernel, reduction: bool, matmul: bool) -> Schedule {
    let pick = if reduction {
        rows(k, ROW_GROUP)
    } else if matmul {
        tiled(k, TILE)
    } else {
        None
    };
    pick.unwrap_or_default()
}
