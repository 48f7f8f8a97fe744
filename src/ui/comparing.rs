//! The comparison of the open TORCH_TRACE log with another log of the same model (lite against
//! default mode), each with an optional torch.profiler trace: `profile::compare` on a worker,
//! shown by `panels::compare`. The CLI's `kernels A --against B` is the same comparison.

use std::path::PathBuf;
use std::sync::Arc;

use crate::profile::compare::{analyse, compare, Comparison};

/// Which file a compare dialog picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareSlot {
    /// The log compared with the open one (B).
    OtherLog,
    /// The profiler trace of the open log's run (A).
    ProfileA,
    /// The profiler trace of the other log's run (B).
    ProfileB,
}

/// What to compare the open log (A) with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompareInputs {
    pub other: Option<PathBuf>,
    pub profile_a: Option<PathBuf>,
    pub profile_b: Option<PathBuf>,
}

impl CompareInputs {
    pub fn set(&mut self, slot: CompareSlot, path: PathBuf) {
        match slot {
            CompareSlot::OtherLog => self.other = Some(path),
            CompareSlot::ProfileA => self.profile_a = Some(path),
            CompareSlot::ProfileB => self.profile_b = Some(path),
        }
    }
}

#[derive(Default)]
pub struct CompareState {
    pub open: bool,
    pub inputs: CompareInputs,
    /// What the worker is doing, while it runs.
    pub running: Option<String>,
    pub result: Option<Arc<Comparison>>,
    pub error: Option<String>,
    /// Bumped per run, so a superseded run's result is dropped.
    pub generation: u64,
    /// List every node, not only those the two runs ran differently.
    pub all_nodes: bool,
}

/// Reads both logs (and profiles) and compares them: on a worker.
pub fn run(log_a: PathBuf, inputs: CompareInputs) -> Result<Comparison, String> {
    let other = inputs.other.ok_or("pick the log to compare with first")?;
    let a = analyse(&log_a, inputs.profile_a.as_deref())?;
    let b = analyse(&other, inputs.profile_b.as_deref())?;
    Ok(compare(&a.side(), &b.side()))
}
