//! The depthwise schedule ([`Schedule::Depthwise`]): a work-item per output element with the
//! output's last coordinate (a depthwise convolution's `ow`) alone across the work-items of a
//! group and everything else (`n`, `c`, `oh`) the grid's row, uniform across the group.
//!
//! Why: the column schedule of a whole `OH × OW` map splits the column into `oh` and `ow` by
//! `/` and `%` in codegen, and each padded tap's index went through a select per coordinate;
//! the OpenCL CPU runtime then gathered every tap (3.2 G MAC/s on a depthwise 3×3 at 32×32
//! against oneDNN's 21, docs/PERFORMANCE.md). Here a tap of `lower::ops::depthwise` reads
//! `x[row base + ow + kw − p]` under a mask, which codegen emits as a branch around the
//! load: neighbouring work-items read neighbouring elements, a stride-1 tap is one vector load
//! (masked at the map's borders), and the tap's weight `w[c, 0, kh, kw]` is one scalar for the
//! group.

use super::kernel::{KExpr, Kernel};
use super::schedule::{self, Schedule};

/// Column groups the schedule may take along `ow`: the one leaving the fewest idle, the largest
/// on a tie. A 32-wide map (a depthwise 3×3, 144 channels at 32×32) took 0.26–0.70 ms in groups
/// of 32 against 0.42–1.01 ms in groups of 16 (three alternated rounds, docs/PERFORMANCE.md):
/// the row's coordinates are split once per group, and a group of 16 float32 lanes (one
/// AVX-512 register) is the least that fills the vector.
const GROUPS: [u32; 4] = [128, 64, 32, 16];

/// The most of a padded row that may be idle; narrower maps (8×8, 4×4) keep the column
/// schedule over the whole map, where a group of 16 still fills.
const MAX_IDLE: f64 = 0.25;

/// [`Schedule::Depthwise`] for elementwise kernel `k` when it is a depthwise convolution: a
/// masked load inside a fold whose index moves with the last output coordinate, a static last
/// extent some group of [`GROUPS`] covers with at most [`MAX_IDLE`] of it idle, and no row
/// coordinate whose lanes would share a load in blocks of more than [`MULTIPLIER_BLOCK`] (a
/// dense or grouped convolution, which [`schedule::channels_upto`] blocks instead).
pub fn depthwise(k: &Kernel) -> Option<Schedule> {
    let rank = k.domain.len();
    if rank < 3 || k.linear.is_some() || k.schedule != Schedule::Elementwise {
        return None;
    }
    let width = schedule::column_extent(k, 1).filter(|w| *w > 0)?;
    if !masked_tap(k) {
        return None;
    }
    let idle = |g: u32| {
        let g = i64::from(g);
        let covered = (width + g - 1) / g * g;
        (covered - width) as f64 / covered as f64
    };
    let group = GROUPS.into_iter().min_by(|a, b| idle(*a).total_cmp(&idle(*b)))?;
    if idle(group) > MAX_IDLE {
        return None;
    }
    // A channel multiplier of 2 shares each tap between two lanes only: the contiguous loads
    // are taken over halving the gathers (not measured: no convolution of the corpus's
    // hot kernels has a multiplier).
    if schedule::channels_upto(k, group, 1, super::wide_block::block_for(k)).is_some_and(|b| shared_block(&b) > MULTIPLIER_BLOCK) {
        return None;
    }
    Some(Schedule::Depthwise { group })
}

/// The most lanes of a row coordinate sharing a tap (a depthwise convolution's channel
/// multiplier) that still take [`Schedule::Depthwise`] rather than the channel blocking.
const MULTIPLIER_BLOCK: u32 = 2;

/// The lanes per work-item of a kernel on [`Schedule::Channels`].
fn shared_block(k: &Kernel) -> u32 {
    match k.schedule {
        Schedule::Channels { block, .. } => block,
        _ => 0,
    }
}

/// Whether some masked load inside a fold (it moves with a fold variable) has an index that
/// moves with the last output coordinate: a padded convolution tap along `W`.
fn masked_tap(k: &Kernel) -> bool {
    let free = k.free_vars();
    let coords = schedule::coord_mask(k);
    let last = 1u128 << (k.domain.len() - 1);
    k.exprs.iter().any(|e| match e {
        KExpr::Load { index, mask: Some(_), .. } => {
            let f = free[index.0 as usize];
            f & !coords != 0 && f & last != 0
        }
        _ => false,
    })
}

/// The column group and column dims a kernel on [`Schedule::Columns`] or
/// [`Schedule::Depthwise`] (the column schedule over the last coordinate alone) is launched and
/// generated with.
pub fn column_layout(s: Schedule) -> Option<(u32, u32)> {
    match s {
        Schedule::Columns { group, dims } => Some((group, dims)),
        Schedule::Depthwise { group } => Some((group, 1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::{Access, BinOp, CmpOp, KernelBuilder, RedOp, Store};
    use crate::sym::Expr;

    /// `out[c, oh, ow] = Σ_k x[c, oh, ow + k − 1] · w[c, k]` over a `[channels, 4, width]`
    /// output, the tap masked to the row when `masked`; with `shared` the input is read at
    /// `x[oh, ow + k − 1]` for every channel (a dense convolution's sharing: one tap, each
    /// channel's own weight).
    fn taps(channels: i64, width: i64, masked: bool, shared: bool) -> Kernel {
        let mut kb = KernelBuilder::new(3);
        let (x, w, out) = (kb.buffer("x", Access::Read), kb.buffer("w", Access::Read), kb.buffer("out", Access::Write));
        let vk = kb.fresh_var().expect("a var");
        let (c, oh, ow, k) = (kb.var(crate::lower::kernel::VarId(0)), kb.var(crate::lower::kernel::VarId(1)), kb.var(crate::lower::kernel::VarId(2)), kb.var(vk));
        let (wn, one, three) = (kb.i64(width), kb.i64(1), kb.i64(3));
        let iw = kb.binary(BinOp::Add, ow, k).expect("add");
        let iw = kb.binary(BinOp::Sub, iw, one).expect("sub");
        let four = kb.i64(4);
        let row = if shared { oh } else { kb.binary(BinOp::Mul, c, four).and_then(|r| kb.binary(BinOp::Add, r, oh)).expect("row") };
        let at = kb.binary(BinOp::Mul, row, wn).and_then(|a| kb.binary(BinOp::Add, a, iw)).expect("index");
        let xv = if masked {
            let zero = kb.i64(0);
            let lo = kb.cmp(CmpOp::Ge, iw, zero).expect("ge");
            let hi = kb.cmp(CmpOp::Lt, iw, wn).expect("lt");
            let m = kb.and(lo, hi).expect("and");
            kb.load_masked(x, at, m, 0.0)
        } else {
            kb.load(x, at)
        };
        let wat = kb.binary(BinOp::Mul, c, three).and_then(|a| kb.binary(BinOp::Add, a, k)).expect("w index");
        let wv = kb.load(w, wat);
        let p = kb.binary(BinOp::Mul, xv, wv).expect("mul");
        let sum = kb.reduce(RedOp::Sum, vk, three, p).expect("fold");
        let sizes = vec![Expr::int(channels), Expr::int(4), Expr::int(width)];
        let lens = sizes.iter().map(|s| kb.size(s)).collect();
        kb.finish("taps".into(), sizes, lens, vec![Store { buf: out, value: sum }])
    }

    #[test]
    fn depthwise_taps_take_the_row_schedule_along_w() {
        assert_eq!(depthwise(&taps(8, 32, true, false)), Some(Schedule::Depthwise { group: 32 }));
        assert_eq!(depthwise(&taps(8, 16, true, false)), Some(Schedule::Depthwise { group: 16 }));
        // 56 wide: 64 leaves an eighth idle, 16 and 32 more.
        assert_eq!(depthwise(&taps(8, 56, true, false)), Some(Schedule::Depthwise { group: 64 }));
        // 12 wide: a group of 16 leaves a quarter idle, the most allowed.
        assert_eq!(depthwise(&taps(8, 12, true, false)), Some(Schedule::Depthwise { group: 16 }));
    }

    #[test]
    fn narrow_maps_unmasked_and_shared_taps_do_not() {
        // 8 wide: half of any group idle.
        assert_eq!(depthwise(&taps(8, 8, true, false)), None);
        // No padding mask: nothing for the branch to save.
        assert_eq!(depthwise(&taps(8, 32, false, false)), None);
        // Lanes of the channel share the tap: the channel blocking's case.
        assert_eq!(depthwise(&taps(8, 32, true, true)), None);
    }

    #[test]
    fn column_layout_of_the_depthwise_schedule_is_one_column_dim() {
        assert_eq!(column_layout(Schedule::Depthwise { group: 32 }), Some((32, 1)));
        assert_eq!(column_layout(Schedule::Columns { group: 64, dims: 2 }), Some((64, 2)));
        assert_eq!(column_layout(Schedule::Elementwise), None);
    }
}
