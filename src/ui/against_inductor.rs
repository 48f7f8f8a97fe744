//! The profile panel's "against Inductor" section: our last profile's kernels beside Inductor's
//! for the same original nodes, from a TORCH_TRACE log and a torch.profiler trace of the same
//! model compiled by torch.compile (`profile::against_inductor`, as the `profile
//! --against-inductor` command prints it). The comparison runs on a worker once both files and a
//! profile of our own are there, and again after each new profile.

use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;

use super::profiling::ProfileResult;
use super::state::AppState;
use crate::ir::Graph;
use crate::profile::against_inductor::{compare, our_kernels, Comparison, OurKernel, Ours};
use crate::profile::inductor_run;

/// Our kernels of a profiled plan, with the graph whose nodes they name: what a profile run
/// hands over for the comparison (the plan itself stays on the worker).
pub struct OurRun {
    pub graph: Graph,
    pub kernels: Vec<OurKernel>,
}

impl OurRun {
    pub fn new(plan: &crate::lower::Plan, graph: Graph, trace: &crate::profile::Trace) -> OurRun {
        let kernels = our_kernels(plan, &graph, trace);
        OurRun { graph, kernels }
    }
}

/// What the section asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum AgainstCommand {
    /// Ask for the log (`true`) or the trace (a dialog, on a worker).
    Pick { log: bool },
    SetLog(PathBuf),
    SetTrace(PathBuf),
}

/// A finished comparison, with what the CLI prints around it.
pub struct AgainstResult {
    pub comparison: Comparison,
    pub log: String,
    pub runs: usize,
    pub call_median_us: Option<f64>,
    pub notes: Vec<String>,
}

enum Msg {
    Done(Result<AgainstResult, String>),
    /// Only a build with file dialogs picks files.
    #[cfg_attr(not(feature = "file-dialog"), allow(dead_code))]
    Picked { log: bool, path: Option<PathBuf> },
}

#[derive(Default)]
pub struct AgainstState {
    pub log: Option<PathBuf>,
    pub trace: Option<PathBuf>,
    pub result: Option<Arc<AgainstResult>>,
    pub error: Option<String>,
    /// The profile the result (or the running comparison) is of.
    compared: Option<Arc<ProfileResult>>,
    rx: Option<Receiver<Msg>>,
}

impl AgainstState {
    pub fn busy(&self) -> bool {
        self.rx.is_some()
    }
}

/// Once a frame: takes the worker's answer, and starts a comparison when the files and a new
/// profile of our own are there.
pub fn frame(state: &mut AppState, ctx: &egui::Context) {
    let a = &mut state.against;
    let mut done = false;
    if let Some(rx) = &a.rx {
        while let Ok(m) = rx.try_recv() {
            done = true;
            match m {
                Msg::Done(Ok(r)) => {
                    a.result = Some(Arc::new(r));
                    a.error = None;
                }
                Msg::Done(Err(e)) => a.error = Some(e),
                Msg::Picked { log, path: Some(p) } => {
                    *(if log { &mut a.log } else { &mut a.trace }) = Some(p);
                    // A new file: compare again even if the profile is the same.
                    a.compared = None;
                }
                Msg::Picked { path: None, .. } => {}
            }
        }
    }
    if done {
        a.rx = None;
    }
    let profile = state.profile.result.clone();
    let (Some(log), Some(trace), Some(profile)) = (a.log.clone(), a.trace.clone(), profile) else { return };
    let Some(ours) = profile.ours.clone() else { return };
    if a.rx.is_some() || a.compared.as_ref().is_some_and(|c| Arc::ptr_eq(c, &profile)) {
        return;
    }
    a.compared = Some(profile);
    let (tx, rx) = channel();
    a.rx = Some(rx);
    let ctx = ctx.clone();
    let spawned = super::jobs::worker_thread("job-against-inductor").spawn(move || {
        let result = inductor_run::load(&log, &trace).map_err(|e| e.to_string()).map(|run| {
            let comparison = compare(&Ours { graph: &ours.graph, kernels: ours.kernels.clone() }, &run.side());
            AgainstResult { comparison, log: run.log.file.clone(), runs: run.runs, call_median_us: run.call_median_us, notes: run.notes.clone() }
        });
        let _ = tx.send(Msg::Done(result));
        ctx.request_repaint();
    });
    if let Err(e) = spawned {
        a.rx = None;
        a.error = Some(format!("cannot start the comparison: {e}"));
    }
}

pub fn apply(state: &mut AppState, c: AgainstCommand, ctx: &egui::Context) {
    let a = &mut state.against;
    match c {
        AgainstCommand::SetLog(p) => a.log = Some(p),
        AgainstCommand::SetTrace(p) => a.trace = Some(p),
        AgainstCommand::Pick { log } => return pick(a, log, ctx),
    }
    // A new file: compare again even if the profile is the same.
    a.compared = None;
}

#[cfg(feature = "file-dialog")]
fn pick(a: &mut AgainstState, log: bool, ctx: &egui::Context) {
    if a.rx.is_some() {
        return;
    }
    let (tx, rx) = channel();
    a.rx = Some(rx);
    let ctx = ctx.clone();
    let spawned = super::jobs::worker_thread("dialog-against-inductor").spawn(move || {
        let (title, filter, ext): (&str, &str, &[&str]) = if log {
            ("The TORCH_TRACE log of the same model under torch.compile", "TORCH_TRACE log", &["log", "gz"])
        } else {
            ("The torch.profiler trace of that compiled model", "Chrome / Kineto trace", &["json", "gz"])
        };
        let path = rfd::FileDialog::new().set_title(title).add_filter(filter, ext).pick_file();
        let _ = tx.send(Msg::Picked { log, path });
        ctx.request_repaint();
    });
    if let Err(e) = spawned {
        a.rx = None;
        a.error = Some(format!("cannot open the file dialog: {e}"));
    }
}

#[cfg(not(feature = "file-dialog"))]
fn pick(a: &mut AgainstState, _log: bool, _ctx: &egui::Context) {
    a.error = Some("this build has no file dialog: run `xpu-workbench profile FILE --against-inductor LOG --inductor-trace TRACE`".into());
}
