//! Worker threads for everything that can take longer than a frame: loading a file, decomposing,
//! laying out, the file dialog. Each job runs on its own thread and sends one [`JobResult`] back
//! over a channel, then wakes the UI; the UI thread never waits for one.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use super::layout::Layout;
use super::state::{Source, View};
use crate::decomp::Decomposition;
use crate::ir::Model;

/// A decomposition and its layout (boxed: they are large next to the other results), or what
/// failed and the node it failed on.
pub type Decomposed = Result<Box<(Decomposition, Layout)>, (String, Option<String>)>;

pub enum JobResult {
    /// `folded`: the first graph's first-view folding (`Hierarchy::default_folded`).
    /// `verdict`: check-lite's on a log, read in the same pass.
    Loaded {
        generation: u64,
        source: Source,
        result: Result<(Model, Option<super::log_open::LogVerdict>), String>,
        folded: Option<std::collections::BTreeSet<String>>,
    },
    /// The shown compile's adjacent stages diffed.
    StageDiffs { compile_id: String, diffs: Vec<super::log_open::StageDiff> },
    Decomposed { view: View, generation: u64, result: Decomposed },
    LaidOut { view: View, generation: u64, layout: Layout },
    /// Lowering a view's decomposition failed (`Some`: why, and the node it names) or not.
    Lowered { view: View, generation: u64, error: Option<(String, Option<String>)> },
    /// The file dialog closed; `None` when cancelled.
    Picked(Option<PathBuf>),
    /// `runtime::probe_all`'s answer.
    Devices(Vec<crate::runtime::DeviceReport>),
    /// What a running profile is doing now.
    ProfileProgress { generation: u64, text: String },
    /// `ours`: the run's kernels and the graph they name, for the comparison with Inductor.
    Profiled { generation: u64, view: View, result: Result<Box<(crate::profile::Trace, super::against_inductor::OurRun)>, String> },
    /// A torch.profiler trace imported and attributed through the open TORCH_TRACE log.
    /// `path`: the trace file, which an exported report attributes again.
    ImportedProfile { generation: u64, path: PathBuf, result: Result<Box<crate::profile::Trace>, String> },
    /// A compile's kernels stage, built from the log, and its layout.
    Kernels { generation: u64, result: Result<Box<(super::kernel_stage::KernelStage, Layout)>, String> },
    /// A compare dialog closed; `None` when cancelled.
    ComparePicked(super::comparing::CompareSlot, Option<PathBuf>),
    Compared { generation: u64, result: Result<Box<crate::profile::compare::Comparison>, String> },
    /// The profiler-trace dialog closed; `None` when cancelled.
    ProfilePicked(Option<PathBuf>),
    /// The export dialog closed; `None` when cancelled.
    ExportPicked(super::command::ExportKind, Option<PathBuf>),
    /// A profile export finished: what was written, or why not.
    Exported(Result<String, String>),
    /// Where to write the HTML report (`None`: the dialog was cancelled).
    ReportPicked(Option<PathBuf>),
}

/// Sends a job's intermediate results to the UI and wakes it.
pub struct Progress {
    tx: Sender<JobResult>,
    ctx: Option<egui::Context>,
}

impl Progress {
    pub fn send(&self, r: JobResult) {
        let _ = self.tx.send(r);
        if let Some(ctx) = &self.ctx {
            ctx.request_repaint();
        }
    }
}

pub struct Jobs {
    tx: Sender<JobResult>,
    rx: Receiver<JobResult>,
    running: Arc<AtomicUsize>,
    ctx: Option<egui::Context>,
}

impl Default for Jobs {
    fn default() -> Self {
        let (tx, rx) = channel();
        Jobs { tx, rx, running: Arc::new(AtomicUsize::new(0)), ctx: None }
    }
}

/// Stack of every worker thread the app starts. Lowering and decomposition recurse along chains
/// of fused values: the 12,000-node sample overflows the 2 MiB default of a spawned thread (the
/// app aborted opening it). Only touched pages cost memory, so a large reserve is cheap.
pub const WORKER_STACK: usize = 64 << 20;

/// A named worker thread with [`WORKER_STACK`].
pub fn worker_thread(name: &str) -> std::thread::Builder {
    std::thread::Builder::new().name(name.to_string()).stack_size(WORKER_STACK)
}

impl Jobs {
    /// The context to wake when a result arrives.
    pub fn set_context(&mut self, ctx: &egui::Context) {
        if self.ctx.is_none() {
            self.ctx = Some(ctx.clone());
        }
    }

    pub fn spawn(&self, name: &str, job: impl FnOnce() -> JobResult + Send + 'static) {
        let tx = self.tx.clone();
        let ctx = self.ctx.clone();
        let running = self.running.clone();
        running.fetch_add(1, Ordering::SeqCst);
        let spawned = worker_thread(&format!("job-{name}")).spawn(move || {
            let result = job();
            // The app may have quit; a result nobody reads is fine.
            let _ = tx.send(result);
            running.fetch_sub(1, Ordering::SeqCst);
            if let Some(ctx) = ctx {
                ctx.request_repaint();
            }
        });
        if spawned.is_err() {
            self.running.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// A handle a running job sends intermediate results (progress) through.
    pub fn progress(&self) -> Progress {
        Progress { tx: self.tx.clone(), ctx: self.ctx.clone() }
    }

    pub fn try_recv(&self) -> Option<JobResult> {
        self.rx.try_recv().ok()
    }

    /// Jobs started and not yet finished.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }
}
