//! One compiled plan measured at one binding: repetitions, medians, bytes moved.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::{KernelTime, SweepPoint};
use crate::exec::Tensor;
use crate::ir::Model;
use crate::lower::Plan;
use crate::runtime::plan::{build_modules, compile_plan, launch_grid, release_modules, run_built, PlanRun, RunError};
use crate::runtime::reference::run_reference;
use crate::runtime::{Device, ProgramId};
use crate::sym::Bindings;

/// A lowered plan, its SPIR-V (when a device runs it), and the guard values it was built under.
pub struct Compiled {
    pub plan: Plan,
    /// Built on the device once, launched at every binding until a guard flips.
    programs: HashMap<String, ProgramId>,
    pub under: Vec<Option<bool>>,
}

impl Compiled {
    /// Generates the plan's SPIR-V and builds it on `device` (nothing to build on the reference).
    pub fn new(plan: Plan, under: Vec<Option<bool>>, device: &mut Option<Box<dyn Device>>) -> Result<Compiled, RunError> {
        let programs = match device {
            Some(dev) => build_modules(dev.as_mut(), &compile_plan(&plan)?)?,
            None => HashMap::new(),
        };
        Ok(Compiled { plan, programs, under })
    }

    /// Releases the programs built for this plan (a guard flipped and a new plan replaces it).
    pub fn release(self, device: &mut Option<Box<dyn Device>>) -> Result<(), RunError> {
        match device {
            Some(dev) => release_modules(dev.as_mut(), &self.programs),
            None => Ok(()),
        }
    }

    /// `warmup` untimed runs, then timed runs at `b` until `repeat` are done or the point has
    /// taken `budget` (at least one timed run); the point's value, guards and `recompiled` are the
    /// caller's to fill in.
    #[allow(clippy::too_many_arguments)]
    pub fn measure(
        &self,
        device: &mut Option<Box<dyn Device>>,
        model: &Model,
        inputs: &[Tensor],
        b: &Bindings,
        warmup: u32,
        repeat: u32,
        budget: Duration,
    ) -> Result<SweepPoint, RunError> {
        let start = Instant::now();
        let mut run = || -> Result<PlanRun, RunError> {
            match device {
                Some(dev) => run_built(dev.as_mut(), &self.plan, &self.programs, model, inputs, b, Instant::now()),
                None => run_reference(&self.plan, model, inputs, b),
            }
        };
        for _ in 0..warmup {
            run()?;
        }
        let mut totals = Vec::with_capacity(repeat as usize);
        let mut per_kernel: HashMap<String, Vec<u64>> = HashMap::new();
        while totals.is_empty() || (totals.len() < repeat as usize && start.elapsed() < budget) {
            let r = run()?;
            totals.push(r.total_device_ns);
            for s in r.steps {
                per_kernel.entry(s.name).or_default().push(s.device_ns);
            }
        }
        let kernels: Vec<KernelTime> = self
            .plan
            .kernels()
            .filter_map(|k| per_kernel.get_mut(&k.name).map(|ns| KernelTime { name: k.name.clone(), median_us: median(ns) as f64 / 1e3 }))
            .collect();
        let (bytes_read, bytes_written, kernels_launched) = traffic(&self.plan, b)?;
        let device_us = median(&mut totals) as f64 / 1e3;
        let bytes = bytes_read + bytes_written;
        let gb_per_s = if device_us > 0.0 { bytes as f64 / (device_us * 1e3) } else { 0.0 };
        Ok(SweepPoint {
            value: 0,
            mode: self.plan.mode.name(),
            device_us,
            bytes,
            bytes_read,
            bytes_written,
            gb_per_s,
            kernels_launched,
            repetitions: totals.len() as u32,
            kernels,
            guards: Vec::new(),
            recompiled: false,
        })
    }
}

/// The upper median (the middle value; of two, the later), as `Trace::node_median_ns` takes it.
fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Bytes the plan's kernels read and write at `b`, and how many launch (an empty grid launches
/// nothing). Every buffer argument counts once per kernel, whole: kernels hold tensors as
/// contiguous f32 (the runtime converts on upload), so this is what a kernel must move at least
/// once, the figure achieved bandwidth is usually quoted against.
pub fn traffic(plan: &Plan, b: &Bindings) -> Result<(u64, u64, usize), RunError> {
    let (mut read, mut written, mut launched) = (0u64, 0u64, 0usize);
    for k in plan.kernels() {
        if launch_grid(k, b)?.is_none() {
            continue;
        }
        launched += 1;
        for buf in &k.buffers {
            let t = plan.graph.value_id(&buf.value).and_then(|v| plan.graph.value(v).tensor());
            let Some(t) = t else { continue };
            let mut n = 4u64;
            for e in &t.sizes {
                let d = e.eval_int(b).map_err(|source| RunError::Size { kernel: k.name.clone(), what: format!("size of `{}`", buf.value), source })?;
                n = n.saturating_mul(d.max(0) as u64);
            }
            match buf.access {
                crate::lower::kernel::Access::Read => read += n,
                crate::lower::kernel::Access::Write => written += n,
            }
        }
    }
    Ok((read, written, launched))
}
