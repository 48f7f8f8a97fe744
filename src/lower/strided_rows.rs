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

/// Whether reduce `r` (a statistic over rows of the first `outer` output coordinates, of a
/// kernel with one output per row) reads some element off unit stride in its own variable
/// while every load that moves with that variable is at unit stride in the last row
/// coordinate: neighbouring rows, neighbouring elements.
pub(crate) fn across_rows(k: &Kernel, r: super::kernel::ExprId, outer: u32) -> bool {
    // Only a kernel that stores one value per row (the statistics' own kernel): a norm's
    // output kernel also writes the row's elements, contiguous within the row, which a group
    // writes with vector stores and a work-item per row would scatter. Measured on MaxxViT's
    // and CoAtNet's `LayerNorm2d` output kernels (64–128 channels): a work-item per row was
    // slower in two runs on 13 of 21, faster on 1 (docs/PERFORMANCE.md).
    let one_per_row = k.domain[outer as usize..].iter().all(|d| matches!(k.expr(*d), KExpr::I64(1)));
    if outer == 0 || !one_per_row || contiguous_in(k, r) {
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

#[cfg(test)]
mod tests {
    use crate::lower::kernel::{Access, BinOp, Elem, Kernel, KernelBuilder, RedOp, Store, VarId};
    use crate::lower::schedule::{rows, Schedule, ROW_GROUP};

    /// `out[p, 0] = Σ_c x[…]` over `pixels` rows of `channels`: the channels of pixel `p` at
    /// `c · pixels + p` (`strided`: an NCHW map) or at `p · channels + c` (NHWC).
    fn pixel_sums(pixels: i64, channels: i64, strided: bool) -> Kernel {
        let ok = "well-typed";
        let mut kb = KernelBuilder::new(2);
        let p = kb.var(VarId(0));
        let domain = vec![kb.i64(pixels), kb.i64(1)];
        kb.set_coord_extents(&domain);
        let x = kb.buffer_of("x", Access::Read, Elem::F32);
        let v = kb.fresh_var().expect(ok);
        let c = kb.var(v);
        let (outer, stride) = if strided { (c, pixels) } else { (p, channels) };
        let stride = kb.i64(stride);
        let base = kb.binary(BinOp::Mul, outer, stride).expect(ok);
        let index = kb.binary(BinOp::Add, base, if strided { p } else { c }).expect(ok);
        let body = kb.load(x, index);
        let extent = kb.i64(channels);
        let value = kb.reduce(RedOp::Sum, v, extent, body).expect(ok);
        let out = kb.buffer_of("out", Access::Write, Elem::F32);
        let sizes = vec![crate::sym::Expr::int(pixels), crate::sym::Expr::int(1)];
        kb.finish("pixel_sums".into(), sizes, domain, vec![Store { buf: out, value }])
    }

    #[test]
    fn channels_of_an_nchw_map_fold_one_pixel_per_work_item() {
        let s = rows(&pixel_sums(64, 32, true), ROW_GROUP);
        assert!(matches!(s, Some(Schedule::Rows { outer: 1, coop: false, .. })), "{s:?}");
    }

    #[test]
    fn contiguous_channels_keep_a_group_per_row() {
        let s = rows(&pixel_sums(64, 32, false), ROW_GROUP);
        assert!(matches!(s, Some(Schedule::Rows { outer: 1, coop: true, .. })), "{s:?}");
    }
}
