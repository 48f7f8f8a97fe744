//! How a kernel's work is spread over work-items: the mapping from the launch grid to output
//! elements. The *kind* of schedule is chosen from the shape of the kernel's expression DAG
//! alone (a pure analysis, so the benchmark and the tests can ask for a schedule on kernels they
//! build by hand); for the row schedule, *how* rows map to work-items is chosen at each launch
//! from the actual sizes ([`row_group`]), because with dynamic dimensions neither the row count
//! nor the row length is known when the kernel is compiled.
//!
//! - [`Schedule::Elementwise`]: one work-item per output element, reductions as serial loops.
//! - [`Schedule::Columns`]: the same on a two-dimensional grid (columns × rows), for kernels
//!   with a broadcast read ([`finish`] picks it after the lowering's choice).
//! - [`Schedule::Channels`]: the column schedule with several indices of one row coordinate
//!   per work-item (a convolution's output channels: each input tap loaded once for all of
//!   them), where lanes of that coordinate share their loads ([`channels`]).
//! - [`Schedule::Rows`]: the kernel has row statistics (reductions that depend on the leading
//!   output coordinates only: a sum, a norm's mean and variance, a softmax's maximum and
//!   denominator). They are computed once per row, never once per output element; then the
//!   row's outputs are written from them. The launch picks, per call, one work-group per row
//!   (the statistics folded by the whole group and combined by a work-group reduction), or one
//!   work-item per row where rows are too short to split or the statistics have no
//!   work-group reduction.
//! - [`Schedule::Tiled`]: `out[.., i, j] = f(Σ_k a(i, k) · b(k, j))` with both operands staged
//!   tile by tile in local memory, the batch coordinates on the third grid dimension.

use serde::Serialize;

use super::kernel::{BinOp, ExprId, KExpr, Kernel, RedOp, Ty};

/// Most work-items per work-group of the row schedule: one SIMD register of float32 lanes on
/// an AVX-512 CPU (the OpenCL CPU runtime vectorizes a work-group across them, so the
/// work-group reduction is one horizontal reduction), one sub-group on Intel GPUs. Measured on
/// the OpenCL CPU device, groups of 16 folded rows of 64 to 1M elements faster than groups of
/// 64 (docs/PERFORMANCE.md).
pub const ROW_GROUP: u32 = 16;
/// Side of the square output tile (and of the contraction slice staged per step).
pub const TILE: u32 = 16;
/// Most work-groups a launch of the cooperative row schedule starts; each folds a contiguous
/// block of `⌈rows / groups⌉` rows. Many short rows (131,072 rows of 64) otherwise pay a group's
/// start-up per row on the OpenCL CPU device, where that was as long as folding the row;
/// 4096 groups still give every hardware thread of a CPU or an Intel GPU several.
pub const MAX_ROW_GROUPS: usize = 4096;
/// Shortest row worth a work-group; shorter rows get one work-item each.
pub const MIN_ROW_EXTENT: i64 = 8;
/// Fewest elements (rows × row length) per work-group of the cooperative row schedule before
/// the launch adds another group ([`row_groups`]).
pub const ROW_GROUP_ELEMENTS: u64 = 2048;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Schedule {
    #[default]
    Elementwise,
    /// One work-item per output element on a two-dimensional grid: the last `dims` output
    /// coordinates (1 or 2, of static extents whose product is `C`; flattened: the *column*,
    /// rounded up to whole groups of `group` when no group divides it, the work-items past
    /// `C` idle) on the grid's first dimension, the other coordinates (flattened: the *row*)
    /// on its second. Neighbouring work-items then hold neighbouring
    /// columns of one row, so an operand broadcast along the rows (a bias `b[c]`) is one
    /// contiguous vector load and one broadcast along the columns (`m[row]`, a convolution's
    /// weight `w[co, …]` over the pixels of channel `co`) one scalar, where the linear index of
    /// [`Schedule::Elementwise`] needs a remainder or a quotient per element and the OpenCL CPU
    /// runtime gathers (docs/PERFORMANCE.md).
    Columns { group: u32, dims: u32 },
    /// [`Schedule::Columns`] with `block` consecutive indices of row coordinate `coord` per
    /// work-item (register blocking: a convolution's output channels, each input tap loaded
    /// once for all of them). The grid's rows count blocks along `coord`, whose variable holds
    /// the block's first index; the stores are `block` lane copies of each (`Kernel::lanes`:
    /// store `s` lane `b` at `s · block + b`, for index `coord + b`), and no lane past the
    /// coordinate's extent stores.
    Channels { group: u32, dims: u32, coord: u32, block: u32 },
    /// [`Schedule::Columns`] over the last coordinate alone (`dims` 1), for a depthwise
    /// convolution: its masked taps are emitted as branches around the loads, so a tap is a
    /// contiguous vector load across the group ([`super::depthwise`]).
    Depthwise { group: u32 },
    /// Output coordinate `coord` (a convolution's output channel) across the work-items of
    /// the grid's first dimension, in groups of `group`; the leading `outer` coordinates
    /// (flattened: a dynamic batch) on its second; every other output coordinate (all of
    /// static extent) unrolled into `lanes` lane copies per work-item (store `s` lane `l` at
    /// `s · lanes + l`, lane `l` the `l`-th tuple of those coordinates, row-major), for
    /// output maps too small to fill a vector group (`lower::tiny_map`).
    Spread { group: u32, coord: u32, lanes: u32, outer: u32 },
    /// Row statistics over the first `outer` output coordinates (a row is one index of them),
    /// folded over `extent` elements. `group` is the largest work-group the launch may give a
    /// row; `coop` says whether a group may fold a row together (float32 sums, maxima and
    /// minima: the work-group reductions), else every launch takes one work-item per row.
    /// The kernel takes one more i64 argument after its sizes: the work-items per row that the
    /// launch chose, 0 for one work-item per row ([`row_group`]).
    Rows { outer: u32, group: u32, coop: bool, extent: ExprId },
    /// `reduce` is the dot product `Σ a · b` over the contraction variable, read at output
    /// coordinates `i = rank - 2` (from `a` only) and `j = rank - 1` (from `b` only).
    Tiled { tile: u32, reduce: ExprId, a: ExprId, b: ExprId },
}

/// Reduce nodes reachable from the stores whose free variables are output coordinates only:
/// the statistics computed once per output (or row), outside any other loop.
pub(crate) fn top_reduces(k: &Kernel, free: &[u128]) -> Vec<ExprId> {
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

/// The free-variable bits of `k`'s output coordinates (variables `0..rank`).
pub(crate) fn coord_mask(k: &Kernel) -> u128 {
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

/// The row schedule for `k`, when it has row statistics. A row is an index of the shortest
/// prefix of output coordinates that some statistic depends on alone (an attention's
/// maximum and denominator depend on the query row, not on the output column): those
/// statistics are computed once per row, the ones that depend on more coordinates once per
/// output element inside the row's loop.
pub fn rows(k: &Kernel, group: u32) -> Option<Schedule> {
    let free = k.free_vars();
    let reduces = top_reduces(k, &free);
    let prefix = |r: &ExprId| 128 - free[r.0 as usize].leading_zeros();
    let outer = reduces.iter().map(prefix).min()?;
    // The longest statistic of the row decides how a row is split; dynamic extents count as long.
    let longest = reduces.iter().filter(|r| prefix(r) == outer).copied().max_by_key(|r| static_work(k, *r).unwrap_or(i64::MAX))?;
    let KExpr::Reduce { extent, .. } = k.expr(longest) else { return None };
    // Work-group reductions exist for float32 sums, maxima and minima; products and other
    // types fold one row per work-item.
    // A row that is a single output (no statistic shared between outputs) is worth a group only
    // when the group reads it contiguously: a convolution's channel loop strides through
    // memory, and one work-item per output (neighbours reading neighbours) is faster there.
    // Nor is a row whose statistic strides through memory while the next row starts at the next
    // element (a norm over the channels of an NCHW map, `C` folded at stride `H·W`): one
    // work-item per row then reads neighbouring elements across neighbouring work-items.
    let coop = reduces_all(k).all(|(op, ty)| ty == Ty::F32 && !matches!(op, RedOp::Prod | RedOp::Xor))
        && static_work(k, longest).is_none_or(|n| n >= MIN_ROW_EXTENT)
        && ((outer as usize) < k.domain.len() || contiguous_in(k, longest))
        && !super::strided_rows::across_rows(k, longest, outer);
    // Rows of one output each that no group may share are the elementwise schedule already.
    if !coop && outer as usize == k.domain.len() {
        return None;
    }
    Some(Schedule::Rows { outer, group, coop, extent: *extent })
}

/// Whether every load in the body of reduce `r` that moves with its variable reads at `… + v`
/// (unit stride in `v`), so that neighbouring work-items splitting `v` read neighbouring
/// elements.
pub(crate) fn contiguous_in(k: &Kernel, r: ExprId) -> bool {
    let KExpr::Reduce { var, body, .. } = *k.expr(r) else { return false };
    let free = k.free_vars();
    let bit = 1u128 << var.0;
    let mut stack = vec![body];
    let mut seen = vec![false; k.exprs.len()];
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut seen[e.0 as usize], true) || free[e.0 as usize] & bit == 0 {
            continue;
        }
        if let KExpr::Load { index, .. } = *k.expr(e) {
            if !unit_stride(k, index, var, &free) {
                return false;
            }
        }
        stack.extend(k.children(e));
    }
    true
}

/// `index` is a sum in which `v` appears exactly once, as a bare summand.
pub(crate) fn unit_stride(k: &Kernel, index: ExprId, v: super::kernel::VarId, free: &[u128]) -> bool {
    let bit = 1u128 << v.0;
    let mut terms = vec![index];
    let mut bare = 0;
    while let Some(t) = terms.pop() {
        match *k.expr(t) {
            KExpr::Binary(BinOp::Add, a, b) => terms.extend([a, b]),
            KExpr::Var(w) if w == v => bare += 1,
            _ if free[t.0 as usize] & bit != 0 => return false,
            _ => {}
        }
    }
    bare == 1
}

/// Every reduction of the kernel, with its type.
fn reduces_all(k: &Kernel) -> impl Iterator<Item = (RedOp, Ty)> + '_ {
    k.exprs.iter().zip(&k.types).filter_map(|(e, t)| match e {
        KExpr::Reduce { op, .. } => Some((*op, *t)),
        _ => None,
    })
}

/// Work-items per row for a launch of the row schedule over `rows` rows whose statistics fold
/// `row_len` elements (the outermost loop, the one a group splits): 0 for one work-item per
/// row, else the work-group size (a power of two, at most `max`).
///
/// One work-item per row only when the rows are too short to split, or the statistics have no
/// work-group reduction (`coop` false). On the OpenCL CPU device a work-item per row was 3×
/// slower than a group per row even for 131,072 rows of 64 elements, and 20× for a softmax:
/// neighbouring work-items are vectorized together, so a work-item per row turns every load
/// into a gather across rows, while a group reads its row with contiguous vector loads.
pub fn row_group(rows: u64, row_len: u64, max: u32, coop: bool) -> u32 {
    if !coop || rows == 0 || row_len < MIN_ROW_EXTENT as u64 {
        return 0;
    }
    row_len.next_power_of_two().min(max as u64) as u32
}

/// Work-groups of a cooperative launch of the row schedule over `rows` rows of `row_len`: one
/// per row, at most [`MAX_ROW_GROUPS`], and no more than one per [`ROW_GROUP_ELEMENTS`]
/// elements (at least one). A group folds its block of rows one after the other, so a tiny
/// launch — the transformer_block sample's layer norm, 14 rows of 32 — is one group instead of
/// 14 that each pay a group's start-up on the OpenCL CPU device for 32 elements of work.
pub fn row_groups(rows: u64, row_len: u64) -> u64 {
    let by_work = rows.saturating_mul(row_len).div_ceil(ROW_GROUP_ELEMENTS).max(1);
    rows.min(MAX_ROW_GROUPS as u64).min(by_work)
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

/// `k` on the schedule [`choose`] picks, [`finish`]ed.
pub fn apply(mut k: Kernel, matmul: bool) -> Kernel {
    k.schedule = choose(&k, matmul);
    finish(k)
}

/// `k` ready for code generation: on the elementwise schedule, laid out in [`Schedule::Columns`]
/// where [`columns`] finds it worth it, and with its output coordinates rewritten as digits of
/// the linear output (or row) index, so reads laid out like the output fold back to it
/// ([`Kernel::linearize`]). Other schedules are left as they are.
pub fn finish(mut k: Kernel) -> Kernel {
    if k.schedule == Schedule::Elementwise {
        if let Some(dw) = super::depthwise::depthwise(&k) {
            k.schedule = dw;
            return k.linearize();
        }
        // A product with a dynamic row count takes the columns only with its rows blocked.
        let product = product_columns(&k).map(|group| (group, channels(&k, group, 1)));
        if let Some((group, blocked)) = product.filter(|(_, b)| b.is_some() || static_domain(&k)) {
            if let Some(blocked) = blocked {
                return blocked;
            }
            k.schedule = Schedule::Columns { group, dims: 1 };
        } else if let Some((group, dims)) = columns(&k) {
            k.schedule = Schedule::Columns { group, dims };
            if let Some(blocked) = channels_upto(&k, group, dims, super::wide_block::block_for(&k)) {
                return blocked;
            }
        } else if let Some(blocked) = small_map_channels(&k) {
            return blocked;
        }
    }
    k.linearize()
}

/// Every column group a [`small_product`] may take, largest first.
const PRODUCT_COLUMN_GROUPS: [u32; 5] = [256, 128, 64, 32, 16];

/// The column group of a [`small_product`] on the elementwise schedule: its output columns
/// (the last coordinate) across the work-items in the group of [`PRODUCT_COLUMN_GROUPS`]
/// leaving the fewest idle (the largest on a tie), at most half. A small product often has few
/// columns (10, 32, 96): the groups of [`columns`] (64 or more, at most a quarter idle) left
/// them on the elementwise schedule, whose work-item per output gathers the weight column: a
/// 14×32 · 32×32 product took 25.7 µs there against 6.1 µs tiled (docs/PERFORMANCE.md).
fn product_columns(k: &Kernel) -> Option<u32> {
    let Some(Schedule::Tiled { reduce, .. }) = tiled(k, TILE) else { return None };
    if !small_product(k, reduce) && !super::gemm::large_product(k, reduce) {
        return None;
    }
    let c = column_extent(k, 1).filter(|c| *c > 0)?;
    let idle = |g: u32| {
        let g = i64::from(g);
        let covered = (c + g - 1) / g * g;
        (covered - c) as f64 / covered as f64
    };
    // `min_by` keeps the first of equals: the largest group.
    let group = PRODUCT_COLUMN_GROUPS.into_iter().min_by(|a, b| idle(*a).total_cmp(&idle(*b)))?;
    (idle(group) <= 0.5).then_some(group)
}

/// Column groups for a blocked kernel whose column no group of [`COLUMN_GROUPS`] fits (a
/// convolution's 3×3 or 5×5 output map).
const SMALL_COLUMN_GROUPS: [u32; 3] = [16, 32, 64];

/// [`Schedule::Channels`] on a small padded column, for a kernel over `[N, C, spatial…]` whose
/// spatial map no column group fits: the map (its last one or two dims) as the column in the
/// group of [`SMALL_COLUMN_GROUPS`] leaving the fewest idle, at most half. Measured on
/// SqueezeNet's 3×3 maps: the elementwise schedule's work-item per output gathers its weights
/// and taps, where a blocked one loads each tap once for eight output channels
/// (docs/PERFORMANCE.md).
fn small_map_channels(k: &Kernel) -> Option<Kernel> {
    let rank = k.domain.len();
    let dims = rank.checked_sub(2).filter(|d| *d >= 1)?.min(2) as u32;
    let c = column_extent(k, dims).filter(|c| *c > 0)?;
    let idle = |g: u32| {
        let g = i64::from(g);
        let covered = (c + g - 1) / g * g;
        (covered - c) as f64 / covered as f64
    };
    let most = super::wide_block::block_for(k);
    let pick = |groups: &[u32]| groups.iter().copied().min_by(|a, b| idle(*a).total_cmp(&idle(*b))).filter(|g| idle(*g) <= 0.5);
    let group = pick(&SMALL_COLUMN_GROUPS).or_else(|| pick(super::wide_block::tiny_map_groups(most)))?;
    channels_upto(k, group, dims, most)
}

/// Work-items per group along the columns, tried largest first among those that divide the
/// column (the grid is then the output itself, no work-item idle); a column none divides takes
/// the one leaving the fewest idle ([`MAX_IDLE`]).
const COLUMN_GROUPS: [u32; 3] = [256, 128, 64];

/// The most of a padded column's work-items that may be idle: a column no group divides (a
/// 7×7 or 15×15 feature map) is rounded up to whole groups, and the work-items past its end
/// store nothing. A quarter idle still beat the elementwise schedule's gathered operands.
const MAX_IDLE: f64 = 0.25;

/// Most indices of the blocked coordinate per work-item on [`Schedule::Channels`]: eight
/// accumulators of one vector register each. Measured on the OpenCL CPU device
/// (docs/PERFORMANCE.md): the cnn sample's 8→16-channel convolution took 44 µs on the column
/// schedule and 11 µs blocked by 8.
pub const CHANNEL_BLOCK: u32 = 8;

/// `k` (on the column schedule `group`, `dims`) on [`Schedule::Channels`], when some row
/// coordinate (of static or dynamic extent) is worth blocking: lanes of it share a load inside a reduction
/// that moves with the column (an input tap, a vector load across the work-items) while some
/// other node of the reduction differs between lanes (a weight). The coordinate sharing the
/// most such loads is blocked; a batch coordinate shares only the weights, which do not move
/// with the column, so a convolution blocks its output channels. The block is the largest up
/// to [`CHANNEL_BLOCK`] (at most the extent; [`channels_upto`] for more) whose lanes share the input: a grouped convolution's
/// lanes must stay in one group, so 6 channels per group take blocks of 6; depthwise ones
/// share nothing and keep the column schedule.
pub fn channels(k: &Kernel, group: u32, dims: u32) -> Option<Kernel> {
    channels_upto(k, group, dims, CHANNEL_BLOCK)
}

/// [`channels`] with blocks of up to `most` lanes (a convolution's deep folds take more,
/// [`super::wide_block::block_for`]).
pub fn channels_upto(k: &Kernel, group: u32, dims: u32, most: u32) -> Option<Kernel> {
    let rank = k.domain.len();
    let split = rank.checked_sub(dims as usize)?;
    if k.linear.is_some() {
        return None;
    }
    let free = k.free_vars();
    let coords = coord_mask(k);
    let column_bits = coords & !((1u128 << split) - 1);
    // Loads inside a reduction shared by every lane and moving with the column, when some node
    // inside a reduction differs between lanes (else there is nothing to block).
    let shared_loads = |c: u32, block: i64, extent: Option<i64>| {
        let info = k.lane_info(c, block, extent);
        let (mut shared, mut varying) = (0usize, false);
        for (i, e) in k.exprs.iter().enumerate() {
            if free[i] & !coords == 0 {
                continue;
            }
            varying |= info.varies[i];
            if matches!(e, KExpr::Load { .. }) && !info.varies[i] && free[i] & column_bits != 0 {
                shared += 1;
            }
        }
        if varying { shared } else { 0 }
    };
    let mut best: Option<(usize, u32, Option<i64>, i64)> = None;
    for c in 0..split as u32 {
        // A dynamic extent (a transformer's batch × sequence rows) is blocked too: its last
        // block is ragged at run time (lanes clamped, stores skipped), as a static one is.
        let extent = match *k.expr(k.domain[c as usize]) {
            KExpr::I64(n) => Some(n),
            _ => None,
        };
        let most = extent.map_or(i64::from(most), |n| n.min(i64::from(most)));
        let found = (2..=most).rev().find_map(|b| Some((shared_loads(c, b, extent), b)).filter(|(s, _)| *s > 0));
        if let Some((shared, block)) = found {
            // On a tie the larger block: a matrix product's batch and row coordinates both
            // share the column operand, and the rows usually have more to share. Between
            // dynamic coordinates of equal block the later: a transformer's sequence, whose
            // count is usually larger than the batch's (2 batches in blocks of 8 idle 6 lanes).
            let later_dynamic = extent.is_none() && best.is_some_and(|(_, _, e, b)| e.is_none() && b == block);
            if best.is_none_or(|(s, _, _, b)| shared > s || (shared == s && (block > b || later_dynamic))) {
                best = Some((shared, c, extent, block));
            }
        }
    }
    let (_, coord, extent, block) = best?;
    let mut out = k.lanes(coord, block as u32, extent)?;
    out.schedule = Schedule::Channels { group, dims, coord, block: block as u32 };
    Some(out)
}

/// The column group and column dims of [`Schedule::Columns`] for elementwise kernel `k`: when
/// it has two or more output coordinates and some read broadcast along the rows or the columns
/// (its index uses some output coordinates but not all). The column is the last coordinate
/// when a group divides its static extent, else the last two (a convolution's `OH × OW`
/// pixels, with a row coordinate left) when a group divides their product; failing both, the
/// first of the two that a group covers with at most [`MAX_IDLE`] of it idle. Kernels whose
/// reads all follow the output gain nothing from it.
pub fn columns(k: &Kernel) -> Option<(u32, u32)> {
    let rank = k.domain.len();
    if rank < 2 {
        return None;
    }
    let free = k.free_vars();
    let coords = coord_mask(k);
    let broadcast = k.exprs.iter().any(|e| match e {
        KExpr::Load { index, .. } => {
            let used = free[index.0 as usize] & coords;
            used != 0 && used != coords
        }
        _ => false,
    });
    if !broadcast {
        return None;
    }
    // The static column extent of each candidate `dims` (two only with a row coordinate left).
    let max_dims = if rank >= 3 { 2 } else { 1 };
    let candidates: Vec<(i64, u32)> = (1..=max_dims).filter_map(|d| column_extent(k, d).filter(|c| *c > 0).map(|c| (c, d))).collect();
    let exact = |c: i64| COLUMN_GROUPS.into_iter().find(|g| c % *g as i64 == 0);
    // The group leaving the smallest share idle (the largest on a tie).
    let idle = |c: i64, g: u32| {
        let g = g as i64;
        let covered = (c + g - 1) / g * g;
        (covered - c) as f64 / covered as f64
    };
    let padded = |c: i64| {
        let g = COLUMN_GROUPS.into_iter().min_by(|a, b| idle(c, *a).total_cmp(&idle(c, *b)))?;
        (idle(c, g) <= MAX_IDLE).then_some(g)
    };
    candidates
        .iter()
        .find_map(|&(c, dims)| exact(c).map(|g| (g, dims)))
        .or_else(|| candidates.iter().find_map(|&(c, dims)| padded(c).map(|g| (g, dims))))
}

/// The column extent of a kernel on [`Schedule::Columns`] (the product of its last `dims`
/// output extents), when static.
pub fn column_extent(k: &Kernel, dims: u32) -> Option<i64> {
    let split = k.domain.len().checked_sub(dims as usize)?;
    k.domain[split..].iter().try_fold(1i64, |acc, d| match *k.expr(*d) {
        KExpr::I64(c) => acc.checked_mul(c),
        _ => None,
    })
}

/// The schedule the lowering picks: tiles for a matrix product (`matmul`: the root op is one)
/// that has the shape for them, else rows for any kernel with row statistics (a reduction, or
/// a norm or softmax whose statistics were fused into their consumer), else one work-item per
/// element.
pub fn choose(k: &Kernel, matmul: bool) -> Schedule {
    // State loops (sorts, scans, series) carry values through OpPhi in one work-item: nothing
    // of theirs is split across a group.
    if k.exprs.iter().any(|e| matches!(e, KExpr::Loop { .. })) {
        return Schedule::default();
    }
    match if matmul { tiled(k, TILE) } else { None } {
        // Left on the elementwise schedule, which `finish` lays out in columns with rows blocked.
        Some(Schedule::Tiled { reduce, .. }) if off_tiles(k, reduce) => Schedule::Elementwise,
        Some(tiles) => tiles,
        None => rows(k, ROW_GROUP).unwrap_or_default(),
    }
}

/// Most multiply-adds of a matrix product with static sizes that [`small_product`] takes off
/// the tiled schedule whatever its row.
pub const SMALL_PRODUCT: i64 = 1 << 20;

/// Most multiply-adds per output row (`K · N`, static) of a matrix product, of any row count,
/// that [`small_product`] takes off the tiled schedule, its rows blocked. Measured on the
/// OpenCL CPU device with rows blocked by 8 (docs/PERFORMANCE.md, "Issue 28: hot kernels of
/// the corpus sample"): the column schedule beat the tiles on every linear layer tried, from
/// 3 × 128 → 512 (74 → 26 µs) and AltCLIP's 36 × 64 → 768 (242 → 153 µs) to
/// 64 × 1024 → 1024 (18–20 → 2–13 ms) and 512 × 768 → 768 (46–59 → 30 ms); `K · N` = 2²⁰ is
/// the longest row measured here. A longer static row leaves the tiles as a large product
/// ([`super::gemm::large_product`], blocked the same way); only a dynamic contraction or column
/// count keeps them.
pub const SMALL_ROW: i64 = 1 << 20;

/// Whether matrix product `k` (on [`tiled`]'s shape, dot product `reduce`) is better off the
/// tiles: static sizes and at most [`SMALL_PRODUCT`] multiply-adds, or a static row (`K · N`)
/// of at most [`SMALL_ROW`] whatever the row count (static, or dynamic: every transformer's
/// batch × sequence). Such a product runs on the column schedule (`finish`: a work-item per
/// output column in a group sized to the columns, [`product_columns`]) with its output rows
/// blocked per work-item ([`channels`]: each element of the column operand loaded once for the
/// block's rows). The tiles stage both operands through local memory behind two barriers per
/// 16-wide slice of the contraction, which the OpenCL CPU runtime pays dearly for: 2×7×32 ·
/// 32×128 with a bias and GELU took 24.2 µs as 8 tiled groups of 256 and takes 4.1 µs blocked
/// (docs/PERFORMANCE.md, "Issue 28, item 4 continued"), and the blocked columns kept winning up
/// to rows of 2²⁰ multiply-adds ([`SMALL_ROW`]). [`off_tiles`] also asks that the rows be
/// blocked where their count is dynamic.
pub fn small_product(k: &Kernel, reduce: ExprId) -> bool {
    let KExpr::Reduce { extent, .. } = k.expr(reduce) else { return false };
    let fixed = |e: &ExprId| match k.expr(*e) {
        KExpr::I64(n) => Some(*n),
        _ => None,
    };
    if static_macs(k, reduce).is_some_and(|macs| macs <= SMALL_PRODUCT) {
        return true;
    }
    // Judged per row, from the static contraction and columns; the rows are blocked by
    // `channels` (a dynamic count's last block bounds-checked at run time).
    let Some(columns) = k.domain.last().and_then(fixed) else { return false };
    let Some(depth) = fixed(extent) else { return false };
    columns.saturating_mul(depth) <= SMALL_ROW
}

/// Whether matrix product `k` leaves the tiles: a [`small_product`] that, unless it is small
/// in all (static, at most [`SMALL_PRODUCT`]), [`finish`] will block along a row coordinate.
/// Unblocked, each work-item of the column schedule reads the whole (transposed) weight column
/// for one output, which lost to the tiles on three of the transformer_block sample's five
/// products (docs/PERFORMANCE.md).
fn off_tiles(k: &Kernel, reduce: ExprId) -> bool {
    // A large product leaves them only with its rows blocked, whatever its row count.
    if super::gemm::large_product(k, reduce) {
        return product_columns(k).is_some_and(|group| channels(k, group, 1).is_some());
    }
    if !small_product(k, reduce) {
        return false;
    }
    if static_macs(k, reduce).is_some_and(|macs| macs <= SMALL_PRODUCT) {
        return true;
    }
    product_columns(k).is_some_and(|group| channels(k, group, 1).is_some())
}

/// The multiply-adds of matrix product `k` (dot product `reduce`) when every size is static.
fn static_macs(k: &Kernel, reduce: ExprId) -> Option<i64> {
    let KExpr::Reduce { extent, .. } = k.expr(reduce) else { return None };
    k.domain.iter().chain([extent]).try_fold(1i64, |acc, e| match k.expr(*e) {
        KExpr::I64(n) => Some(acc.saturating_mul(*n)),
        _ => None,
    })
}

/// Whether every output extent of `k` is known when it is compiled.
fn static_domain(k: &Kernel) -> bool {
    k.domain.iter().all(|d| matches!(k.expr(*d), KExpr::I64(_)))
}

/// Whether kernel `k` computes its matrix product once per output: on the tiled schedule, or
/// a [`small_product`] left to the column schedule with the product as its one statistic
/// (an epilogue reading the product at two places has two, and is neither).
pub fn product_once(k: &Kernel) -> bool {
    match k.schedule {
        Schedule::Tiled { .. } => true,
        Schedule::Elementwise => matches!(tiled(k, TILE), Some(Schedule::Tiled { reduce, .. }) if off_tiles(k, reduce)),
        _ => false,
    }
}
