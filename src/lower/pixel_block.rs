//! Several output pixels along W per work-item of [`Schedule::Channels`], besides its block of
//! output channels: register blocking of a dense convolution on a medium map in both
//! directions.
//!
//! Why: blocked by channels alone, a work-item loads each input tap once for `block`
//! accumulators, but each weight (the same for every work-item of the group) once per
//! accumulator. With `pixels` consecutive output pixels of one row as well, each weight feeds
//! `pixels` accumulators, and a stride-1 kernel row's taps overlap between the pixels. The
//! lanes are [`Kernel::lanes`] of the last coordinate applied to the channel-blocked kernel,
//! so the weight loads (which do not read W) are one arena node in every pixel lane and the
//! taps one node in every channel lane.

use super::kernel::{KExpr, Kernel};
use super::schedule::{channels_upto, column_extent, Schedule};

/// Output widths blocked along W: the corpus convnets' medium maps at their 64×64 inputs
/// (8×8 to 32×32). Narrower maps are the tiny-map schedule's; wider ones keep one pixel.
pub const MEDIUM_WIDTHS: std::ops::RangeInclusive<i64> = 8..=32;

/// Column groups for the blocked column (H × ⌈W / pixels⌉), largest first.
const GROUPS: [u32; 5] = [256, 128, 64, 32, 16];

/// The most of a blocked column's work-items that may be idle (as `schedule::MAX_IDLE`).
const MAX_IDLE: f64 = 0.25;

/// Pixels per work-item along a static output width `w`: 4 where it divides the width, else 2
/// (a ragged last block's lanes are clamped and store nothing).
pub fn pixels_for(w: i64) -> u32 {
    if let Some(p) = knob("XPU_CONV3X3_PIXELS") {
        return p;
    }
    if w % 4 == 0 { 4 } else { 2 }
}

fn knob(name: &str) -> Option<u32> {
    std::env::var(name).ok()?.parse().ok()
}

/// Most output channels per work-item when it also carries `pixels` pixels: the accumulators
/// (`block × pixels`) stay within what `most` channels alone would hold.
pub fn channels_for(most: u32, pixels: u32) -> u32 {
    if let Some(l) = knob("XPU_CONV3X3_LANES") {
        return (l / pixels.max(1)).max(2);
    }
    (most / pixels.max(1)).max(2)
}

/// `k` (over `[…, C, spatial…]`, its last `dims` coordinates the column) on
/// [`Schedule::Channels`] with output channels and pixels along W both blocked, when its
/// output width is static and medium ([`MEDIUM_WIDTHS`]) and some load inside a fold does not
/// move along W while another does (a weight and an input tap): else `None`, and the caller
/// blocks channels alone.
pub fn blocked(k: &Kernel, dims: u32, most: u32) -> Option<Kernel> {
    let rank = k.domain.len();
    if rank < 3 || dims == 0 || k.linear.is_some() {
        return None;
    }
    let last = rank - 1;
    let KExpr::I64(width) = *k.expr(k.domain[last]) else { return None };
    if !MEDIUM_WIDTHS.contains(&width) {
        return None;
    }
    let pixels = pixels_for(width);
    if pixels < 2 || !weights_shared_along_w(k, last as u32, pixels, width) {
        return None;
    }
    let blocks = (width + i64::from(pixels) - 1) / i64::from(pixels);
    let group = group_for(column_extent(k, dims)? / width * blocks)?;
    let channels = channels_upto(k, group, dims, channels_for(most, pixels))?;
    let Schedule::Channels { coord, block, .. } = channels.schedule else { return None };
    let mut out = channels.lanes(last as u32, pixels, Some(width))?;
    out.schedule = Schedule::Channels { group, dims, coord, block, pixels };
    Some(out)
}

/// Whether lanes of the last coordinate share a load inside a fold (a weight) while another
/// load there differs between them (an input tap): only then do pixels save loads.
fn weights_shared_along_w(k: &Kernel, last: u32, pixels: u32, width: i64) -> bool {
    let info = k.lane_info(last, i64::from(pixels), Some(width));
    let free = k.free_vars();
    let coords = (1u128 << k.domain.len()) - 1;
    let (mut shared, mut moving) = (false, false);
    for (i, e) in k.exprs.iter().enumerate() {
        if !matches!(e, KExpr::Load { .. }) || free[i] & !coords == 0 {
            continue;
        }
        if info.varies[i] {
            moving = true;
        } else {
            shared = true;
        }
    }
    shared && moving
}

/// The group for a blocked column of `c` work-items: the largest of [`GROUPS`] dividing it,
/// else the one leaving the fewest idle, at most [`MAX_IDLE`].
fn group_for(c: i64) -> Option<u32> {
    if c <= 0 {
        return None;
    }
    if let Some(g) = GROUPS.into_iter().find(|g| c % i64::from(*g) == 0) {
        return Some(g);
    }
    let idle = |g: u32| {
        let g = i64::from(g);
        let covered = (c + g - 1) / g * g;
        (covered - c) as f64 / covered as f64
    };
    let g = GROUPS.into_iter().min_by(|a, b| idle(*a).total_cmp(&idle(*b)))?;
    (idle(g) <= MAX_IDLE).then_some(g)
}
