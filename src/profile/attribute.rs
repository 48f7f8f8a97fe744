//! Which Inductor kernel each device op of a profiler trace belongs to.
//!
//! A device op is linked to the runtime call that enqueued it (correlation id), and that call
//! sits inside host ops: dynamo's `Torch-Compiled Region: <compile id>`, Inductor's
//! `## Call CompiledFxGraph ... ##` (the generated `call()`), and the op `call()` ran to launch it.
//! Then:
//! - a Triton kernel is recognised by name: the device kernel and the record function around its
//!   launch are both named after it;
//! - a library or fallback kernel (`extern_kernels.mm`, `torch.ops.aten.*`) is recognised by
//!   position: the host ops directly under `call()`, in time order, are matched to `call()`'s
//!   launches in program order (`aten::mm` ↔ `extern_kernels.mm`), skipping the allocations
//!   between them (`aten::empty_strided`).
//!
//! Ops outside any compiled region are not the compiled graph's and are reported apart.

use std::collections::BTreeMap;

use super::kineto::{HostKind, KinetoTrace};
use crate::import::trace::{KernelKind, KernelTable};

/// The kernel tables of one compile, under the id dynamo's region names (`0/1`).
#[derive(Clone, Copy, Debug)]
pub struct CompiledKernels<'a> {
    pub compile: &'a str,
    pub tables: &'a [KernelTable],
}

/// A kernel of [`CompiledKernels`]: compile, table, kernel indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KernelRef {
    pub compile: usize,
    pub table: usize,
    pub kernel: usize,
}

/// What a device op was attributed to.
#[derive(Clone, Debug, PartialEq)]
pub enum Owner {
    Kernel {
        kernel: KernelRef,
        /// The host op (index into [`KinetoTrace::host`]) of the launch: the call whose
        /// device ops together make one call of the kernel.
        call: Option<usize>,
    },
    /// Launched inside a compiled region, but matched no kernel; why.
    Unattributed(String),
    /// Launched outside every compiled region (eager code, the profiler's own ops).
    Outside,
}

const REGION: &str = "Torch-Compiled Region";
const CALL: &str = "## Call CompiledFxGraph";

/// One [`Owner`] per device op of `trace`.
pub fn attribute(trace: &KinetoTrace, compiles: &[CompiledKernels<'_>]) -> Vec<Owner> {
    let parents = trace.parents();
    let by_corr = trace.launches_by_correlation();
    let chain = |i: usize| chain_of(&parents, i);
    let compile_of = |chain: &[usize]| compile_of(trace, compiles, chain);
    let by_position = align_calls(trace, &parents, compiles, &chain, &compile_of);
    let triton = TritonIndex::new(compiles);
    trace
        .device
        .iter()
        .map(|op| {
            let Some(&launch) = op.correlation.as_ref().and_then(|c| by_corr.get(c)) else {
                return match triton.find(None, &op.name) {
                    Some(kernel) => Owner::Kernel { kernel, call: None },
                    None => Owner::Outside,
                };
            };
            let ch = chain(launch);
            let compiled = ch.iter().any(|&h| trace.host[h].name.starts_with(REGION) || trace.host[h].name.starts_with(CALL));
            let compile = compile_of(&ch);
            if let Some(kernel) = triton.find(compile, &op.name) {
                let call = ch.iter().copied().find(|&h| trace.host[h].kind != HostKind::Runtime);
                return Owner::Kernel { kernel, call };
            }
            for &h in &ch {
                if let Some(kernel) = triton.find(compile, &trace.host[h].name) {
                    return Owner::Kernel { kernel, call: Some(h) };
                }
                if let Some(&kernel) = by_position.get(&h) {
                    return Owner::Kernel { kernel, call: Some(h) };
                }
            }
            if !compiled {
                return Owner::Outside;
            }
            let top = ch.iter().rev().find(|&&h| {
                let p = parents[h].map(|p| trace.host[p].name.as_str()).unwrap_or("");
                p.starts_with(CALL) || p.starts_with(REGION)
            });
            Owner::Unattributed(match top {
                Some(&h) => format!("launched by `{}`, which matches no launch in call()", trace.host[h].name),
                None => "launched inside a compiled region but outside call()".into(),
            })
        })
        .collect()
}

/// Host op `i` and the host ops enclosing it, innermost first.
fn chain_of(parents: &[Option<usize>], mut i: usize) -> Vec<usize> {
    let mut out = vec![i];
    while let Some(p) = parents[i] {
        out.push(p);
        i = p;
    }
    out
}

/// The compile whose region encloses `chain`.
fn compile_of(trace: &KinetoTrace, compiles: &[CompiledKernels<'_>], chain: &[usize]) -> Option<usize> {
    let region = chain.iter().find(|&&h| trace.host[h].name.starts_with(REGION))?;
    let id = trace.host[*region].name.rsplit(": ").next()?.trim();
    // The region names the frame's compile (`0/0`); its output code may come from a
    // restarted attempt (`0/0_1`).
    let base = |c: &str| c.split('_').next().unwrap_or(c).to_string();
    compiles.iter().position(|c| c.compile == id).or_else(|| compiles.iter().position(|c| base(c.compile) == id))
}

/// The host ops of a CPU profile that are kernel calls, with their kernel: on the CPU the
/// kernels run inside these ops, so their durations are the kernels' times. Library and
/// fallback calls are matched by position as in [`attribute`]; a C++ kernel is recognised by
/// name, since Inductor compiled with `TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE=1` records each of
/// its calls as a function named `graph_<graph id>_<kernel>` (without it, none is recorded).
pub fn host_calls(trace: &KinetoTrace, compiles: &[CompiledKernels<'_>]) -> BTreeMap<usize, KernelRef> {
    let parents = trace.parents();
    let chain = |i: usize| chain_of(&parents, i);
    let compile_of = |chain: &[usize]| compile_of(trace, compiles, chain);
    let mut out = align_calls(trace, &parents, compiles, &chain, &compile_of);
    for (i, op) in trace.host.iter().enumerate() {
        let under_call = parents[i].is_some_and(|p| trace.host[p].name.starts_with(CALL));
        if !under_call {
            continue;
        }
        let name = cpp_record_name(&op.name);
        let only = compile_of(&chain(i));
        let found = compiles.iter().enumerate().filter(|(ci, _)| only.is_none_or(|o| o == *ci)).find_map(|(ci, c)| {
            c.tables.iter().enumerate().find_map(|(ti, t)| {
                let ki = t.kernels.iter().position(|k| k.kind == KernelKind::Cpp && k.callee == name)?;
                Some(KernelRef { compile: ci, table: ti, kernel: ki })
            })
        });
        if let Some(k) = found {
            out.insert(i, k);
        }
    }
    out
}

/// The kernel a C++ kernel's record function names: `graph_3_cpp_fused_relu_1` → `cpp_fused_relu_1`
/// (Inductor leaves the prefix out when the graph has no id).
fn cpp_record_name(name: &str) -> &str {
    let kernel = name.strip_prefix("graph_").and_then(|rest| {
        let (id, kernel) = rest.split_once('_')?;
        (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then_some(kernel)
    });
    kernel.unwrap_or(name)
}

/// Triton kernels by name, per compile (the first compile with the name first).
struct TritonIndex(BTreeMap<String, Vec<KernelRef>>);

impl TritonIndex {
    fn new(compiles: &[CompiledKernels<'_>]) -> TritonIndex {
        let mut by_name: BTreeMap<String, Vec<KernelRef>> = BTreeMap::new();
        for (ci, c) in compiles.iter().enumerate() {
            for (ti, t) in c.tables.iter().enumerate() {
                for (ki, k) in t.kernels.iter().enumerate() {
                    if k.kind == KernelKind::Triton {
                        by_name.entry(k.callee.clone()).or_default().push(KernelRef { compile: ci, table: ti, kernel: ki });
                    }
                }
            }
        }
        TritonIndex(by_name)
    }

    /// The kernel named `name`, in compile `only` when given.
    fn find(&self, only: Option<usize>, name: &str) -> Option<KernelRef> {
        self.0.get(name)?.iter().copied().find(|k| only.is_none_or(|o| o == k.compile))
    }
}

/// How far ahead in `call()`'s launches a host op may match: skips launches the profiler does
/// not see as ops (C++ kernels) or that it records under another name.
const LOOKAHEAD: usize = 8;

/// For every `call()` run in the trace, matches the host ops directly under it to the launches
/// of the compile's kernel table, by profiler op name and order. Returns host op → kernel.
fn align_calls(
    trace: &KinetoTrace,
    parents: &[Option<usize>],
    compiles: &[CompiledKernels<'_>],
    chain: &dyn Fn(usize) -> Vec<usize>,
    compile_of: &dyn Fn(&[usize]) -> Option<usize>,
) -> BTreeMap<usize, KernelRef> {
    let mut children: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, p) in parents.iter().enumerate() {
        if let Some(p) = *p {
            if trace.host[p].name.starts_with(CALL) && trace.host[i].kind != HostKind::Runtime {
                children.entry(p).or_default().push(i);
            }
        }
    }
    let mut out = BTreeMap::new();
    for (call, kids) in children {
        let names: Vec<&str> = kids.iter().map(|&k| trace.host[k].name.as_str()).collect();
        let candidates: Vec<usize> = match compile_of(&chain(call)) {
            Some(c) => vec![c],
            None => (0..compiles.len()).collect(),
        };
        let mut best: Option<(usize, Vec<(usize, KernelRef)>)> = None;
        for &ci in &candidates {
            for (ti, table) in compiles[ci].tables.iter().enumerate() {
                let ops: Vec<(Option<String>, usize)> = table
                    .launches
                    .iter()
                    .map(|l| (table.kernels[l.kernel].profiler_op(), l.kernel))
                    .filter(|(op, _)| op.is_some())
                    .collect();
                let mut matched = Vec::new();
                let mut p = 0;
                for (k, name) in names.iter().enumerate() {
                    let end = (p + LOOKAHEAD).min(ops.len());
                    if let Some(q) = (p..end).find(|&q| ops[q].0.as_deref() == Some(*name)) {
                        matched.push((kids[k], KernelRef { compile: ci, table: ti, kernel: ops[q].1 }));
                        p = q + 1;
                    }
                }
                if best.as_ref().is_none_or(|(n, _)| matched.len() > *n) {
                    best = Some((matched.len(), matched));
                }
            }
        }
        if let Some((_, matched)) = best {
            out.extend(matched);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::trace::{Kernel, Launch};
    use crate::profile::kineto;

    fn kernel(name: &str, callee: &str, kind: KernelKind) -> Kernel {
        Kernel::library(name, callee, kind)
    }

    #[test]
    fn triton_by_name_library_by_order_and_eager_apart() {
        let table = KernelTable {
            kernels: vec![
                kernel("extern_kernels.mm#1", "extern_kernels.mm", KernelKind::Extern),
                kernel("triton_poi_fused_0", "triton_poi_fused_0", KernelKind::Triton),
                kernel("extern_kernels.mm#2", "extern_kernels.mm", KernelKind::Extern),
            ],
            launches: (0..3).map(|k| Launch { kernel: k, line: k + 1, handle: None }).collect(),
            ..KernelTable::default()
        };
        let ev = |cat: &str, name: &str, tid: i64, ts: f64, dur: f64, corr: Option<i64>| {
            let mut e = serde_json::json!({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur});
            if let Some(c) = corr {
                e["args"] = serde_json::json!({ "correlation": c });
            }
            e
        };
        let events = vec![
            ev("user_annotation", "Torch-Compiled Region: 0/1", 1, 0.0, 100.0, None),
            ev("user_annotation", "## Call CompiledFxGraph abc ##", 1, 1.0, 90.0, None),
            ev("cpu_op", "aten::empty_strided", 1, 2.0, 1.0, None),
            ev("cpu_op", "aten::mm", 1, 4.0, 5.0, None),
            ev("cuda_runtime", "cudaLaunchKernel", 1, 5.0, 1.0, Some(1)),
            ev("user_annotation", "triton_poi_fused_0", 1, 10.0, 5.0, None),
            ev("cuda_runtime", "cuLaunchKernel", 1, 11.0, 1.0, Some(2)),
            ev("cpu_op", "aten::mm", 1, 20.0, 5.0, None),
            ev("cuda_runtime", "cudaLaunchKernel", 1, 21.0, 1.0, Some(3)),
            ev("cuda_runtime", "cudaLaunchKernel", 1, 22.0, 1.0, Some(4)),
            ev("cpu_op", "aten::add", 1, 200.0, 5.0, None),
            ev("cuda_runtime", "cudaLaunchKernel", 1, 201.0, 1.0, Some(5)),
            ev("kernel", "gemm_a", 0, 30.0, 10.0, Some(1)),
            ev("kernel", "triton_poi_fused_0", 0, 41.0, 2.0, Some(2)),
            ev("kernel", "gemm_b", 0, 44.0, 10.0, Some(3)),
            ev("kernel", "splitk_reduce", 0, 55.0, 1.0, Some(4)),
            ev("kernel", "vectorized_add", 0, 210.0, 1.0, Some(5)),
        ];
        let json = serde_json::json!({ "traceEvents": events }).to_string();
        let t = kineto::parse("t.json", json.as_bytes()).unwrap();
        let tables = [table];
        let owners = attribute(&t, &[CompiledKernels { compile: "0/1", tables: &tables }]);
        let kernel_of = |o: &Owner| match o {
            Owner::Kernel { kernel, .. } => Some(kernel.kernel),
            _ => None,
        };
        let got: Vec<Option<usize>> = owners.iter().map(kernel_of).collect();
        assert_eq!(got, [Some(0), Some(1), Some(2), Some(2), None]);
        assert_eq!(owners[4], Owner::Outside);
    }
}
