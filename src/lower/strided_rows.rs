//! Row statistics folded along a dim that is not the innermost: a layer norm over the channels
//! of an NCHW map (timm's `LayerNorm2d`, through a `permute`), whose rows are the pixels
//! `(n, h, w)` and whose elements lie `H·W` apart. A work-group per row (the cooperative row
//! schedule) then has its work-items read one element each `H·W` apart: a gather per step on
//! the OpenCL CPU runtime, which vectorizes a group across its work-items. The row's
//! neighbour, though, starts at the next element, so one work-item per row reads contiguous
//! vectors across neighbouring work-items at every step of the fold, as Inductor's reductions
//! over a non-innermost dim do (docs/PERFORMANCE.md, "Issue 28: reductions and pointwise
//! kernels").

use super::kernel::{KExpr, Kernel, VarId};
use super::schedule::{contiguous_in, unit_stride};

/// Whether reduce `r` (a statistic over rows of the first `outer` output coordinates) reads
/// some element off unit stride in its own variable while every load that moves with that
/// variable is at unit stride in the last row coordinate: neighbouring rows, neighbouring
/// elements.
pub(crate) fn across_rows(k: &Kernel, r: super::kernel::ExprId, outer: u32) -> bool {
    if outer == 0 || contiguous_in(k, r) {
        return false;
    }
    let KExpr::Reduce { var, body, .. } = *k.expr(r) else { return false };
    let free = k.free_vars();
    let (bit, row) = (1u128 << var.0, VarId(outer - 1));
    let mut stack = vec![body];
    let mut seen = vec![false; k.exprs.len()];
    let mut loads = 0;
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut seen[e.0 as usize], true) || free[e.0 as usize] & bit == 0 {
            continue;
        }
        if let KExpr::Load { index, .. } = *k.expr(e) {
            if !unit_stride(k, index, row, &free) {
                return false;
            }
            loads += 1;
        }
        stack.extend(k.children(e));
    }
    loads > 0
}
