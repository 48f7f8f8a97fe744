//! How one launch of a kernel lays out its work under the run's bindings: global and local
//! sizes from its schedule, and the i64 arguments it takes after its buffers (sizes, the row
//! schedule's work-items per row, a drawing kernel's generator). Split from `plan`, which runs
//! the steps; both the runtime and the tools that print launches (`compile`, `sweep`) read it.

use serde::Serialize;

use super::plan::{RunError, WORK_GROUP};
use crate::exec::Generator;
use crate::lower::schedule::{self, Schedule};
use crate::sym::Bindings;

/// The generator arguments a drawing kernel takes last (none for the others): the seed and the
/// offset, as i64 bits.
pub fn rng_args(kernel: &crate::lower::Kernel, gen: &Generator) -> Vec<i64> {
    if kernel.draws() {
        vec![gen.seed as i64, gen.offset as i64]
    } else {
        Vec::new()
    }
}

/// Global and local sizes of a launch.
pub type Grid = ([usize; 3], [usize; 3]);

/// How one launch lays out its work: global and local sizes, and the i64 arguments the
/// schedule takes after the kernel's sizes (the row schedule's work-items per row).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchShape {
    pub global: [usize; 3],
    pub local: [usize; 3],
    pub schedule_args: Vec<i64>,
}

/// Global and local sizes of `kernel`'s launch under bindings `b`, as its schedule lays the
/// work out; `None` when the output is empty.
pub fn launch_grid(kernel: &crate::lower::Kernel, b: &Bindings) -> Result<Option<Grid>, RunError> {
    Ok(launch_shape(kernel, b)?.map(|l| (l.global, l.local)))
}

/// The i64 arguments of `kernel` under `b`: its sizes, evaluated.
pub fn size_args(kernel: &crate::lower::Kernel, b: &Bindings) -> Result<Vec<i64>, RunError> {
    kernel
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| p.eval_int(b).map_err(|source| RunError::Size { kernel: kernel.name.clone(), what: format!("argument size{i} = `{p}`"), source }))
        .collect()
}

/// The launch of `kernel` under bindings `b`, its schedule's choices made from the actual sizes
/// (see `lower::schedule::row_group`); `None` when the output is empty.
pub fn launch_shape(kernel: &crate::lower::Kernel, b: &Bindings) -> Result<Option<LaunchShape>, RunError> {
    launch_shape_with(kernel, b, None)
}

/// [`launch_shape`], with the row schedule's work-items per row forced to `row_group` when it
/// is given (0: one work-item per row), for tests and benchmarks of both mappings.
pub fn launch_shape_with(kernel: &crate::lower::Kernel, b: &Bindings, row_group: Option<u32>) -> Result<Option<LaunchShape>, RunError> {
    let mut sizes = Vec::with_capacity(kernel.domain_sizes.len());
    for d in &kernel.domain_sizes {
        let v = d.eval_int(b).map_err(|source| RunError::Size { kernel: kernel.name.clone(), what: format!("grid size `{d}`"), source })?;
        sizes.push(v.max(0) as usize);
    }
    let product = |s: &[usize]| s.iter().fold(1usize, |a, x| a.saturating_mul(*x));
    if product(&sizes) == 0 {
        return Ok(None);
    }
    let plain = |global, local| LaunchShape { global, local, schedule_args: Vec::new() };
    Ok(Some(match kernel.schedule {
        Schedule::Elementwise => plain([product(&sizes), 1, 1], [WORK_GROUP, 1, 1]),
        Schedule::Columns { .. } | Schedule::Depthwise { .. } => {
            let (group, dims) = crate::lower::depthwise::column_layout(kernel.schedule).unwrap_or((1, 1));
            let split = sizes.len().saturating_sub(dims as usize);
            // A column no group divides is rounded up; the kernel skips the work-items past it.
            plain([product(&sizes[split..]).div_ceil(group as usize) * group as usize, product(&sizes[..split]), 1], [group as usize, 1, 1])
        }
        Schedule::Channels { group, dims, coord, block } => {
            let split = sizes.len().saturating_sub(dims as usize);
            // The rows count blocks of `block` indices along `coord`, the last block ragged.
            let c = sizes.get(coord as usize).copied().unwrap_or(1).max(1);
            let rows = product(&sizes[..split]) / c * c.div_ceil(block.max(1) as usize);
            plain([product(&sizes[split..]).div_ceil(group as usize) * group as usize, rows, 1], [group as usize, 1, 1])
        }
        Schedule::Spread { group, coord, outer, .. } => {
            // One work-item per index of `coord` and of the leading `outer` coordinates; the
            // kernel skips those past `coord`'s extent.
            let c = sizes.get(coord as usize).copied().unwrap_or(1);
            let rows = product(&sizes[..(outer as usize).min(sizes.len())]);
            plain([c.div_ceil(group as usize) * group as usize, rows, 1], [group as usize, 1, 1])
        }
        Schedule::Rows { outer, group, coop, extent } => {
            let outer = (outer as usize).min(sizes.len());
            let (rows, inner) = (product(&sizes[..outer]), product(&sizes[outer..]));
            let row_len = kernel.eval_i64(extent, &size_args(kernel, b)?).unwrap_or(inner as i64).max(0) as u64;
            let g = row_group.unwrap_or_else(|| schedule::row_group(rows as u64, row_len, group, coop));
            let (global, local) = if g == 0 { (rows, WORK_GROUP) } else { (schedule::row_groups(rows as u64, row_len) as usize * g as usize, g as usize) };
            LaunchShape { global: [global, 1, 1], local: [local, 1, 1], schedule_args: vec![g as i64] }
        }
        Schedule::Tiled { tile, .. } => {
            let r = sizes.len();
            let t = tile as usize;
            plain([sizes[r - 1].div_ceil(t) * t, sizes[r - 2].div_ceil(t) * t, product(&sizes[..r - 2])], [t, t, 1])
        }
    }))
}

/// Each kernel step's launch as the last forward of its plan evaluated it: a forward at the same
/// bindings (every forward of a benchmark or a serving loop) reuses the grid and the integer
/// arguments instead of evaluating their expressions again per launch. Kept with the plan's
/// weights ([`super::Resident`]), by step index.
#[derive(Debug, Default)]
pub struct LaunchCache {
    steps: Vec<Option<CachedLaunch>>,
}

#[derive(Debug)]
struct CachedLaunch {
    /// The kernel and the bindings the launch was evaluated for: a slider moved, a sync step's
    /// sizes or another plan's kernel at this step evaluate it again.
    kernel: String,
    bindings: Bindings,
    shape: Option<LaunchShape>,
    /// The kernel's sizes, then its schedule's arguments.
    ints: Vec<i64>,
}

impl LaunchCache {
    /// The launch of `kernel`, step `step` of its plan, under `b`: its shape and its integer
    /// arguments before the generator's; `None` when the output is empty.
    pub fn launch(&mut self, step: usize, kernel: &crate::lower::Kernel, b: &Bindings) -> Result<Option<(&LaunchShape, &[i64])>, RunError> {
        if self.steps.len() <= step {
            self.steps.resize_with(step + 1, || None);
        }
        let slot = &mut self.steps[step];
        if !matches!(slot, Some(c) if c.kernel == kernel.name && c.bindings == *b) {
            // Forgotten first, so that a failed evaluation leaves nothing stale behind.
            *slot = None;
            let shape = launch_shape(kernel, b)?;
            let ints = match &shape {
                Some(s) => size_args(kernel, b)?.into_iter().chain(s.schedule_args.iter().copied()).collect(),
                None => Vec::new(),
            };
            *slot = Some(CachedLaunch { kernel: kernel.name.clone(), bindings: b.clone(), shape, ints });
        }
        let Some(c) = slot.as_ref() else { return Ok(None) };
        Ok(c.shape.as_ref().map(|s| (s, c.ints.as_slice())))
    }
}
