//! Inductor's side of [`against_inductor`](super::against_inductor): a TORCH_TRACE log's kernels
//! per compile, dynamo's graph of each, and each kernel's time in a `torch.profiler` trace of the
//! compiled model: device time when the trace has a device side, else (a CPU run, Inductor's C++
//! kernels) the host ops that run the kernels ([`host_kernel_times`]).

use std::path::Path;

use super::against_inductor::{Inductor, InductorKernel};
use super::attribute::{attribute, CompiledKernels};
use super::host_time::host_kernel_times;
use super::kernel_time::{kernel_times, KernelTime};
use super::kineto::{self, Flavour};
use crate::import::trace::{self, KernelKind, KernelTable, Stage, TraceLog};

#[derive(Debug, thiserror::Error)]
pub enum InductorRunError {
    #[error(transparent)]
    Log(#[from] crate::import::trace::TraceError),
    #[error(transparent)]
    Trace(#[from] kineto::KinetoError),
    #[error("{file}: no compile in the log has Inductor's output code: no kernels to compare with")]
    NoKernels { file: String },
    #[error("{file}: compile {compile} has output code but the log holds no dynamo graph for it: its kernels' nodes cannot be matched")]
    NoGraph { file: String, compile: String },
}

/// A log and a profile of one compiled model, read.
pub struct InductorRun {
    pub log: TraceLog,
    /// Per compile with output code: its id and the index in `log.compiles` of its dynamo graph.
    pub graphs: Vec<(String, usize)>,
    pub kernels: Vec<InductorKernel>,
    /// Runs of the compiled graph's `call()` in the trace, and the median one (CPU traces).
    pub runs: usize,
    pub call_median_us: Option<f64>,
    /// What the reader should know: kernels the trace has no call of and why.
    pub notes: Vec<String>,
}

impl InductorRun {
    pub fn side(&self) -> Inductor<'_> {
        let graphs = self
            .graphs
            .iter()
            .filter_map(|(id, ci)| Some((id.clone(), self.log.compiles.get(*ci)?.graph(Stage::DynamoOutput)?)))
            .collect();
        Inductor { graphs, kernels: self.kernels.clone() }
    }
}

pub fn load(log: &Path, profile: &Path) -> Result<InductorRun, InductorRunError> {
    let l = trace::load_log(log)?;
    let file = l.file.clone();
    let mut ids = Vec::new();
    let mut tables: Vec<Vec<KernelTable>> = Vec::new();
    let mut graphs = Vec::new();
    for c in l.compiles.iter().filter(|c| !c.output_code.is_empty()) {
        let id = c.id.to_string();
        // A restarted attempt (`0/0_1`) may log its output code apart from the graph of `0/0`.
        let base = id.split('_').next().unwrap_or(&id).to_string();
        let graph = l
            .compiles
            .iter()
            .position(|d| d.id.to_string() == id && d.graph(Stage::DynamoOutput).is_some())
            .or_else(|| l.compiles.iter().position(|d| d.id.to_string() == base && d.graph(Stage::DynamoOutput).is_some()))
            .ok_or_else(|| InductorRunError::NoGraph { file: file.clone(), compile: id.clone() })?;
        graphs.push((id.clone(), graph));
        tables.push(trace::kernels(c, &l.file_access()));
        ids.push(id);
    }
    if ids.is_empty() {
        return Err(InductorRunError::NoKernels { file });
    }
    let t = kineto::load(profile)?;
    let mut notes: Vec<String> = t.warnings.clone();
    let compiled: Vec<CompiledKernels<'_>> = ids.iter().zip(&tables).map(|(id, t)| CompiledKernels { compile: id, tables: t }).collect();
    let (per_kernel, runs, call_median_us) = if t.flavour == Flavour::Cpu {
        let h = host_kernel_times(&t, &compiled);
        (h.per_kernel, h.runs, h.call_median_us)
    } else {
        let owners = attribute(&t, &compiled);
        (kernel_times(&t, &compiled, &owners).per_kernel, 0, None)
    };
    let mut kernels = Vec::new();
    let mut untimed_cpp = 0;
    for (ci, c) in compiled.iter().enumerate() {
        for (ti, table) in c.tables.iter().enumerate() {
            // In the order call() first launches them, so a row reads as the code runs; a kernel
            // never launched comes last.
            let mut order: Vec<usize> = Vec::new();
            for ki in table.launches.iter().map(|l| l.kernel).chain(0..table.kernels.len()) {
                if ki < table.kernels.len() && !order.contains(&ki) {
                    order.push(ki);
                }
            }
            for ki in order {
                let k = &table.kernels[ki];
                let time: Option<&KernelTime> = per_kernel.get(&super::attribute::KernelRef { compile: ci, table: ti, kernel: ki });
                if time.is_none() && k.kind == KernelKind::Cpp {
                    untimed_cpp += 1;
                }
                kernels.push(InductorKernel {
                    compile: ids[ci].clone(),
                    name: k.name.clone(),
                    kind: k.kind,
                    nodes: k.nodes.clone(),
                    median_us: time.map(|t| t.median_us),
                });
            }
        }
    }
    if untimed_cpp > 0 {
        notes.push(format!(
            "{}: {untimed_cpp} C++ kernel(s) have no call in the trace: Inductor records them only when compiled with TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE=1",
            t.file
        ));
    }
    if runs == 0 && t.flavour == Flavour::Cpu {
        notes.push(format!("{}: no run of a compiled graph (`## Call CompiledFxGraph`) in the trace", t.file));
    }
    Ok(InductorRun { log: l, graphs, kernels, runs, call_median_us, notes })
}
