//! Inductor's kernel times from a CPU-only `torch.profiler` trace: there is no device side, the
//! kernels run inside the host ops that `call()` makes (an `aten::addmm` for
//! `extern_kernels.addmm`, a `graph_0_cpp_fused_relu_1` record function for a C++ kernel), so each
//! such op's duration is its kernel's time ([`host_calls`] says which op is which kernel).

use std::collections::BTreeMap;

use super::attribute::{host_calls, CompiledKernels, KernelRef};
use super::kernel_time::KernelTime;
use super::kineto::KinetoTrace;

/// Per kernel, its time per run of the compiled graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostTimes {
    /// `calls` counts runs of `call()` that ran the kernel; `median_us` is the median over those
    /// runs of the kernel's summed time in each (a kernel launched twice in one run counts once).
    pub per_kernel: BTreeMap<KernelRef, KernelTime>,
    /// Runs of `call()` (`## Call CompiledFxGraph ... ##`) in the trace.
    pub runs: usize,
    /// The median run of `call()`: every kernel plus the wrapper's own work between them.
    pub call_median_us: Option<f64>,
}

pub fn host_kernel_times(trace: &KinetoTrace, compiles: &[CompiledKernels<'_>]) -> HostTimes {
    let parents = trace.parents();
    let calls = host_calls(trace, compiles);
    let mut per_run: BTreeMap<KernelRef, BTreeMap<usize, f64>> = BTreeMap::new();
    let mut out = HostTimes::default();
    for (&op, &kernel) in &calls {
        let h = &trace.host[op];
        let us = h.dur_ns as f64 / 1e3;
        // host_calls only returns ops directly under a call() op.
        let run = parents[op].unwrap_or(usize::MAX);
        *per_run.entry(kernel).or_default().entry(run).or_insert(0.0) += us;
        let t = out.per_kernel.entry(kernel).or_default();
        t.device_us += us;
        if !t.device_kernels.contains(&h.name) {
            t.device_kernels.push(h.name.clone());
        }
    }
    for (k, runs) in per_run {
        let v: Vec<f64> = runs.into_values().collect();
        if let Some(t) = out.per_kernel.get_mut(&k) {
            t.calls = v.len();
            t.median_us = median(v);
        }
    }
    let runs: Vec<f64> =
        trace.host.iter().filter(|h| h.name.starts_with("## Call CompiledFxGraph")).map(|h| h.dur_ns as f64 / 1e3).collect();
    out.runs = runs.len();
    out.call_median_us = (!runs.is_empty()).then(|| median(runs));
    out
}

/// The median (the mean of the middle two of an even count); 0 for none.
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::trace::{Kernel, KernelKind, KernelTable, Launch};
    use crate::profile::kineto;

    fn kernel(name: &str, kind: KernelKind) -> Kernel {
        Kernel::library(name, name.split(':').next().unwrap_or(name), kind)
    }

    #[test]
    fn cpp_kernels_by_record_name_library_calls_by_position_per_run() {
        let table = KernelTable {
            kernels: vec![
                kernel("extern_kernels.addmm:1", KernelKind::Extern),
                kernel("cpp_fused_gelu_0", KernelKind::Cpp),
                kernel("extern_kernels.addmm:3", KernelKind::Extern),
            ],
            launches: (0..3).map(|k| Launch { kernel: k, line: k + 1, handle: None }).collect(),
            ..KernelTable::default()
        };
        let ev = |name: &str, ts: f64, dur: f64| {
            serde_json::json!({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur})
        };
        let mut events = Vec::new();
        for (run, t0) in [(0.0f64, 0.0f64), (1.0, 1000.0)] {
            events.push(ev("Torch-Compiled Region: 0/0", t0, 500.0));
            events.push(ev("## Call CompiledFxGraph abc ##", t0 + 1.0, 400.0));
            events.push(ev("aten::addmm", t0 + 10.0, 10.0 + run));
            events.push(ev("graph_0_cpp_fused_gelu_0", t0 + 30.0, 20.0));
            events.push(ev("aten::addmm", t0 + 60.0, 30.0));
        }
        // The same kernel name outside call(): eager work, not the compiled graph's.
        events.push(ev("graph_0_cpp_fused_gelu_0", 5000.0, 99.0));
        let json = serde_json::json!({ "traceEvents": events }).to_string();
        let t = kineto::parse("t.json", json.as_bytes()).unwrap();
        let tables = [table];
        let times = host_kernel_times(&t, &[CompiledKernels { compile: "0/0", tables: &tables }]);
        let of = |k: usize| times.per_kernel.get(&KernelRef { compile: 0, table: 0, kernel: k }).cloned().unwrap_or_default();
        assert_eq!((of(0).calls, of(0).median_us, of(0).device_us), (2, 10.5, 21.0));
        assert_eq!((of(1).calls, of(1).median_us), (2, 20.0));
        assert_eq!(of(1).device_kernels, ["graph_0_cpp_fused_gelu_0"]);
        assert_eq!((of(2).calls, of(2).median_us), (2, 30.0));
        assert_eq!((times.runs, times.call_median_us), (2, Some(400.0)));
    }
}
