//! Worker threads for everything that can take longer than a frame: loading a file, decomposing,
//! laying out, the file dialog. Each job runs on its own thread and sends one [`JobResult`] back
//! over a channel, then wakes the UI; the UI thread never waits for one.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use super::layout::Layout;
use super::state::{Source, View};
use super::task::Stamped;
use crate::decomp::Decomposition;
use crate::ir::Model;

/// A decomposition and its layout (boxed: they are large next to the other results), or what
/// failed and the node it failed on.
pub type Decomposed = Result<Box<(Decomposition, Layout)>, (String, Option<String>)>;

/// A job's answer. Those of a task where only the latest run counts come [`Stamped`] with the run
/// they belong to, and are read through [`Stamped::if_current`] (the one staleness check).
pub enum JobResult {
    Loaded(Stamped<Loaded>),
    /// The shown compile's adjacent stages diffed.
    StageDiffs { compile_id: String, diffs: Vec<super::log_open::StageDiff> },
    Decomposed { view: View, result: Stamped<Decomposed> },
    LaidOut { view: View, layout: Stamped<Layout> },
    /// Lowering a view's decomposition failed (`Some`: why, and the node it names) or not.
    Lowered { view: View, error: Stamped<Option<(String, Option<String>)>> },
    /// A file dialog closed; `path` is `None` when cancelled.
    Picked { purpose: super::file_dialog::Purpose, path: Option<PathBuf> },
    /// `runtime::probe_all`'s answer.
    Devices(Vec<crate::runtime::DeviceReport>),
    /// What a running profile is doing now.
    ProfileProgress(Stamped<String>),
    /// `ours`: the run's kernels and the graph they name, for the comparison with Inductor.
    Profiled { view: View, result: Stamped<Result<Box<(crate::profile::Trace, super::against_inductor::OurRun)>, String>> },
    /// A torch.profiler trace imported and attributed through the open TORCH_TRACE log.
    /// `path`: the trace file, which an exported report attributes again.
    ImportedProfile { path: PathBuf, result: Stamped<Result<Box<crate::profile::Trace>, String>> },
    /// A compile's kernels stage, built from the log, and its layout.
    Kernels(Stamped<Result<Box<(super::kernel_stage::KernelStage, Layout)>, String>>),
    Compared(Stamped<Result<Box<crate::profile::compare::Comparison>, String>>),
    /// A profile export finished: what was written, or why not.
    Exported(Result<String, String>),
}

/// A file loaded (or not), as [`JobResult::Loaded`] brings it.
pub struct Loaded {
    pub source: Source,
    /// The model, with check-lite's verdict on a log (read in the same pass).
    pub result: Result<(Model, Option<super::log_open::LogVerdict>), String>,
    /// The first graph's first-view folding (`Hierarchy::default_folded`).
    pub folded: Option<std::collections::BTreeSet<String>>,
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
