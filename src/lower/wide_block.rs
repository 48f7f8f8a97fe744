//! How many output channels a work-item of [`Schedule::Channels`](super::schedule::Schedule)
//! carries, by the kernel's static sizes: 16 where each accumulator has a deep fold to
//! amortize them over (a real-size convolution), else [`CHANNEL_BLOCK`].

use super::kernel::{KExpr, Kernel};
use super::schedule::CHANNEL_BLOCK;

/// Lanes per work-item for a kernel whose folds are at least [`WIDE_FOLD`] deep: each input
/// tap is loaded (a gather across the work-items, with its padding mask) once for 16 output
/// channels instead of 8. Measured on the OpenCL CPU device at the corpus convnets' sizes
/// (docs/PERFORMANCE.md, "Issue 28: convolutions at real sizes"): a 3×3 256→256 convolution
/// at 14×14 took 47 ms blocked by 8 and 32 ms by 16 (29 ms with the channel loop innermost,
/// `lower::ops::conv`); 32 lanes were slower again (32 ms), as was the zoo's 64→64 at 8×8.
pub const WIDE_CHANNEL_BLOCK: u32 = 16;

/// Least multiply-adds per output (the product of a fold nest's static extents: a
/// convolution's input channels per group × kernel taps) that take [`WIDE_CHANNEL_BLOCK`].
/// Shallower folds (the small convolutions measured with 8 lanes in issue 28, item 4: 3→8
/// and 8→16 channels) keep [`CHANNEL_BLOCK`]: 16 accumulators there would mostly halve the
/// work-groups without saving many loads.
pub const WIDE_FOLD: i64 = 128;

/// The most lanes [`super::schedule::channels`] may block `k` by: [`WIDE_CHANNEL_BLOCK`] when
/// some fold nest of `k` is at least [`WIDE_FOLD`] deep (a dynamic extent counts as deep).
pub fn block_for(k: &Kernel) -> u32 {
    if fold_depth(k) >= WIDE_FOLD {
        WIDE_CHANNEL_BLOCK
    } else {
        CHANNEL_BLOCK
    }
}

/// Column groups for an output map too small for any group of 16 (2 to 8 pixels), when its
/// folds are deep: 4 and 8 work-items, so a deep stage's 2×2 map (the corpus convnets at their
/// 64×64 example inputs: tv_resnet34's layer4, timm_darknet17's stage 4) is blocked rather than
/// left on the elementwise schedule, where each work-item gathered its own weights (thousands
/// per output) for one output. Shallow folds keep the elementwise schedule (none here).
pub fn tiny_map_groups(most: u32) -> &'static [u32] {
    if most >= WIDE_CHANNEL_BLOCK {
        &[4, 8]
    } else {
        &[]
    }
}

/// The deepest fold nest of `k`: for each fold, its extent times the deepest nest inside its
/// body. The arena lists operands before their users, so one pass in order suffices.
pub fn fold_depth(k: &Kernel) -> i64 {
    let mut depth = vec![1i64; k.exprs.len()];
    for (i, e) in k.exprs.iter().enumerate() {
        let id = super::kernel::ExprId(i as u32);
        let inner = k.children(id).iter().map(|c| depth.get(c.0 as usize).copied().unwrap_or(1)).max().unwrap_or(1);
        depth[i] = match e {
            KExpr::Reduce { extent, .. } => match *k.expr(*extent) {
                KExpr::I64(n) => inner.saturating_mul(n.max(1)),
                _ => i64::MAX,
            },
            _ => inner,
        };
    }
    depth.into_iter().max().unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::{Access, BinOp, KernelBuilder, RedOp, Store};
    use crate::sym::Expr;

    /// A convolution-shaped fold nest `Σ_c Σ_t x[c·taps + t]` of `channels × taps`, per output.
    fn nest(channels: i64, taps: i64) -> Kernel {
        let mut kb = KernelBuilder::new(1);
        let (x, out) = (kb.buffer("x", Access::Read), kb.buffer("out", Access::Write));
        let (vc, vt) = (kb.fresh_var().expect("a var"), kb.fresh_var().expect("a var"));
        let (c, t) = (kb.var(vc), kb.var(vt));
        let (n, m) = (kb.i64(taps), kb.i64(channels));
        let at = kb.binary(BinOp::Mul, c, n).expect("mul");
        let at = kb.binary(BinOp::Add, at, t).expect("add");
        let v = kb.load(x, at);
        let inner = kb.reduce(RedOp::Sum, vt, n, v).expect("fold");
        let outer = kb.reduce(RedOp::Sum, vc, m, inner).expect("fold");
        let len = kb.i64(4);
        kb.finish("nest".into(), vec![Expr::int(4)], vec![len], vec![Store { buf: out, value: outer }])
    }

    #[test]
    fn deep_fold_nests_take_sixteen_lanes() {
        assert_eq!(fold_depth(&nest(256, 9)), 2304);
        assert_eq!(block_for(&nest(256, 9)), WIDE_CHANNEL_BLOCK);
        assert_eq!(block_for(&nest(16, 9)), WIDE_CHANNEL_BLOCK);
        assert_eq!(block_for(&nest(8, 9)), CHANNEL_BLOCK);
        assert_eq!(block_for(&nest(3, 9)), CHANNEL_BLOCK);
    }

    #[test]
    fn only_deep_folds_block_tiny_maps() {
        assert_eq!(tiny_map_groups(WIDE_CHANNEL_BLOCK), &[4, 8]);
        assert!(tiny_map_groups(CHANNEL_BLOCK).is_empty());
    }
}
