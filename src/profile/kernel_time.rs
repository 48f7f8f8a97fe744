//! Device time per Inductor kernel and per original graph node, from a profiler trace whose
//! device ops [`attribute`](super::attribute::attribute) has assigned to kernels.

use std::collections::BTreeMap;

use serde::Serialize;

use super::attribute::{CompiledKernels, KernelRef, Owner};
use super::kineto::{DeviceOpKind, KinetoTrace};
use super::trace::Trace;

/// One kernel's time: its calls (a library call may run several device kernels; they count as
/// one call), total and median per call.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct KernelTime {
    pub calls: usize,
    pub device_us: f64,
    pub median_us: f64,
    /// The device kernels it ran (names as the profiler recorded them).
    pub device_kernels: Vec<String>,
}

/// An original node's share of the attributed time: each kernel's time split evenly among the
/// original nodes it computes (a fused kernel's time cannot be split by what each node did).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeShare {
    pub compile: String,
    pub node: String,
    pub device_us: f64,
    /// Of the attributed time of the whole trace, 0..1.
    pub share: f64,
}

/// Device ops of the compiled regions that matched no kernel, grouped by name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unattributed {
    pub name: String,
    pub ops: usize,
    pub device_us: f64,
    pub why: String,
}

/// The whole attribution.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelTimes {
    pub per_kernel: BTreeMap<KernelRef, KernelTime>,
    pub nodes: Vec<NodeShare>,
    pub attributed_us: f64,
    pub unattributed_us: f64,
    pub unattributed: Vec<Unattributed>,
    /// Device time launched outside every compiled region (eager ops, warm-up copies).
    pub outside_us: f64,
    /// Device kernels (not copies or fills) only: `attributed / (attributed + unattributed)`.
    pub attributed_share: f64,
}

pub fn kernel_times(trace: &KinetoTrace, compiles: &[CompiledKernels<'_>], owners: &[Owner]) -> KernelTimes {
    let mut out = KernelTimes::default();
    let mut per_call: BTreeMap<KernelRef, BTreeMap<usize, f64>> = BTreeMap::new();
    let mut unattributed: BTreeMap<(String, String), (usize, f64)> = BTreeMap::new();
    let (mut kernel_attr, mut kernel_unattr) = (0.0, 0.0);
    for (i, (op, owner)) in trace.device.iter().zip(owners).enumerate() {
        let us = op.dur_ns as f64 / 1e3;
        let is_kernel = op.kind == DeviceOpKind::Kernel;
        match owner {
            Owner::Kernel { kernel, call } => {
                out.attributed_us += us;
                if is_kernel {
                    kernel_attr += us;
                }
                let t = out.per_kernel.entry(*kernel).or_default();
                t.device_us += us;
                if !t.device_kernels.contains(&op.name) {
                    t.device_kernels.push(op.name.clone());
                }
                // A device op without a known launching call is a call of its own.
                let key = call.unwrap_or(usize::MAX - i);
                *per_call.entry(*kernel).or_default().entry(key).or_insert(0.0) += us;
            }
            Owner::Unattributed(why) => {
                out.unattributed_us += us;
                if is_kernel {
                    kernel_unattr += us;
                }
                let e = unattributed.entry((op.name.clone(), why.clone())).or_insert((0, 0.0));
                e.0 += 1;
                e.1 += us;
            }
            Owner::Outside => out.outside_us += us,
        }
    }
    for (k, calls) in per_call {
        let mut v: Vec<f64> = calls.values().copied().collect();
        v.sort_by(f64::total_cmp);
        let t = out.per_kernel.get_mut(&k).expect("entry made above");
        t.calls = v.len();
        t.median_us = median(&v);
    }
    let mut nodes: BTreeMap<(usize, String), f64> = BTreeMap::new();
    for (k, t) in &out.per_kernel {
        let kernel = &compiles[k.compile].tables[k.table].kernels[k.kernel];
        let names = if !kernel.nodes.is_empty() {
            kernel.nodes.clone()
        } else if !kernel.post_grad_nodes.is_empty() {
            // No original node is known (nodes a post-grad pass made, or a log without
            // locations): the post-grad ones stand in, marked as such.
            kernel.post_grad_nodes.iter().map(|n| format!("post_grad:{n}")).collect()
        } else {
            vec![format!("<{}>", kernel.name)]
        };
        let each = t.device_us / names.len() as f64;
        for n in names {
            *nodes.entry((k.compile, n)).or_insert(0.0) += each;
        }
    }
    let total = out.attributed_us.max(f64::MIN_POSITIVE);
    out.nodes = nodes
        .into_iter()
        .map(|((c, node), us)| NodeShare { compile: compiles[c].compile.to_string(), node, device_us: us, share: us / total })
        .collect();
    out.nodes.sort_by(|a, b| b.device_us.total_cmp(&a.device_us));
    out.unattributed = unattributed
        .into_iter()
        .map(|((name, why), (ops, us))| Unattributed { name, ops, device_us: us, why })
        .collect();
    out.unattributed.sort_by(|a, b| b.device_us.total_cmp(&a.device_us));
    let denom = kernel_attr + kernel_unattr;
    out.attributed_share = if denom > 0.0 { kernel_attr / denom } else { 0.0 };
    out
}

/// The profiler trace as the app's [`Trace`] (timeline, heat overlay, Chrome export), each device
/// span named by the original nodes its kernel computes; unattributed spans keep the device
/// kernel's name.
pub fn attributed_trace(trace: &KinetoTrace, compiles: &[CompiledKernels<'_>], owners: &[Owner]) -> Trace {
    trace.to_trace(|i| match owners.get(i) {
        Some(Owner::Kernel { kernel, .. }) => {
            let k = &compiles[kernel.compile].tables[kernel.table].kernels[kernel.kernel];
            if k.nodes.is_empty() {
                vec![k.name.clone()]
            } else {
                k.nodes.clone()
            }
        }
        _ => Vec::new(),
    })
}

fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}
