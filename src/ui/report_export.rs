//! File → "Export report…": the open file's self-contained HTML report, made by
//! [`crate::report`] exactly as `xpu-workbench report FILE [--profile TRACE] -o OUT` makes it, on
//! workers (the save dialog and the report both block).

use std::path::PathBuf;

use super::file_dialog::Purpose;
use super::jobs::{JobResult, Jobs};
use super::state::{AppState, Source};
use crate::import::trace::NamedFile;
use crate::ops::Backend;
use crate::report::{self, Inputs};

/// What to ask the file dialog for the open file's report; `None`: no file is open (see [`refuse`]).
pub fn purpose(state: &AppState) -> Option<Purpose> {
    open_file(state).map(|file| Purpose::Report { file_name: default_name(&file) })
}

/// Writes the open file's report to `out`; the outcome comes back as a message.
pub fn write(jobs: &Jobs, state: &AppState, out: PathBuf) {
    let Some(file) = open_file(state) else { return refuse(jobs) };
    // An imported torch.profiler trace of the log's run is attributed again, as `report --profile` does.
    let profile = state.profile.result.as_ref().and_then(|r| r.imported_from.clone());
    jobs.spawn("report", move || {
        let inputs = Inputs { file: &file, profile: profile.as_deref(), backend: Backend::Xpu, allow: &[], diff: None };
        JobResult::Exported(match report::write(inputs, &out) {
            Ok((r, bytes)) => {
                let skipped = r.files.iter().filter(|f| matches!(f.state, NamedFile::Skipped { .. })).count();
                let skipped = if skipped > 0 { format!("; {skipped} file(s) the log names were left out (listed in the report)") } else { String::new() };
                Ok(format!("wrote the report {} ({bytes} bytes){skipped}", out.display()))
            }
            Err(e) => Err(format!("report not written: {e}")),
        })
    });
}

fn open_file(state: &AppState) -> Option<PathBuf> {
    match state.doc.as_ref().map(|d| &d.source) {
        Some(Source::File(f)) => Some(f.clone()),
        _ => None,
    }
}

/// Says, as a job's message, that there is no open file to report on.
pub fn refuse(jobs: &Jobs) {
    jobs.spawn("report", || JobResult::Exported(Err("open a file first: a report is made of the open file, and the embedded sample has none".into())));
}

fn default_name(file: &std::path::Path) -> String {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
    format!("{name}.report.html")
}
