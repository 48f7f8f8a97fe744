//! File → "Export report…": the open file's self-contained HTML report, made by
//! [`crate::report`] exactly as `xpu-workbench report FILE -o OUT` makes it, on a worker (the save
//! dialog and the report both block).

use std::path::PathBuf;

use super::jobs::{JobResult, Jobs};
use super::state::{AppState, Source};
use crate::ops::Backend;
use crate::report::{self, Inputs};

/// Asks where to write the open file's report, then writes it; the outcome comes back as a message.
pub fn start(jobs: &Jobs, state: &AppState) {
    let Some(Source::File(file)) = state.doc.as_ref().map(|d| d.source.clone()) else {
        return jobs.spawn("report", || JobResult::Exported(Err("open a file first: the embedded sample has no file to report on".into())));
    };
    // An imported torch.profiler trace of the log's run is attributed again, as `report --profile` does.
    let profile = state.profile.result.as_ref().and_then(|r| r.imported_from.clone());
    jobs.spawn("report", move || {
        let Some(out) = pick(&file) else { return JobResult::Exported(Ok("report not exported".into())) };
        let inputs = Inputs { file: &file, profile: profile.as_deref(), backend: Backend::Xpu, allow: &[], diff: None };
        JobResult::Exported(match report::write(inputs, &out) {
            Ok((r, bytes)) => {
                let skipped = r.files.iter().filter(|f| matches!(f.state, crate::import::trace::NamedFile::Skipped { .. })).count();
                let skipped = if skipped > 0 { format!("; {skipped} file(s) the log names were left out (listed in the report)") } else { String::new() };
                Ok(format!("wrote {} ({bytes} bytes){skipped}", out.display()))
            }
            Err(e) => Err(e.to_string()),
        })
    });
}

fn default_name(file: &std::path::Path) -> String {
    let stem = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
    format!("{stem}.report.html")
}

#[cfg(feature = "file-dialog")]
fn pick(file: &std::path::Path) -> Option<PathBuf> {
    rfd::FileDialog::new().set_title("Export report").set_file_name(default_name(file)).add_filter("HTML", &["html"]).save_file()
}

#[cfg(not(feature = "file-dialog"))]
fn pick(file: &std::path::Path) -> Option<PathBuf> {
    Some(PathBuf::from(default_name(file)))
}
