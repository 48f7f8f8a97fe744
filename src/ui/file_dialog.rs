//! The system's file dialog, for every file the app asks the user for: one [`Purpose`] says what the
//! file is for (and so the dialog's title, filters and proposed name), one function [`ask`] shows
//! it on a worker (it blocks), and the answer comes back as one [`JobResult::Picked`].

use std::path::PathBuf;

use super::command::ExportKind;
use super::comparing::CompareSlot;
use super::jobs::{JobResult, Jobs};

/// What a picked file is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A model or a TORCH_TRACE log to open.
    Open,
    /// One of the comparison's files.
    Compare(CompareSlot),
    /// A torch.profiler trace of the open log's run, to import.
    ImportProfile,
    /// Where to export the last profile.
    Export(ExportKind),
    /// Where to write the open file's HTML report; `file_name`: the name proposed.
    Report { file_name: String },
}

/// Asks the user for a file for `purpose`, on a worker; the answer comes back as
/// [`JobResult::Picked`]. `Err`: this build cannot ask, and what to do instead.
#[cfg(feature = "file-dialog")]
pub fn ask(jobs: &Jobs, purpose: Purpose) -> Result<(), &'static str> {
    jobs.spawn("dialog", move || {
        let path = show(&purpose);
        JobResult::Picked { purpose, path }
    });
    Ok(())
}

/// Without a dialog, what is written goes to the working directory under the proposed name;
/// what is read has to come another way (`Err` says which).
#[cfg(not(feature = "file-dialog"))]
pub fn ask(jobs: &Jobs, purpose: Purpose) -> Result<(), &'static str> {
    let path = match &purpose {
        Purpose::Open => return Err("this build has no file dialog: drop a file on the window or pass it on the command line"),
        Purpose::Compare(_) => return Err("this build has no file dialog: use `xpu-workbench kernels A.log --against B.log`"),
        Purpose::ImportProfile => return Err("this build has no file dialog: use `xpu-workbench kernels LOG --profile TRACE`"),
        Purpose::Export(kind) => PathBuf::from(format!("profile.{}", kind.extension())),
        Purpose::Report { file_name } => PathBuf::from(file_name),
    };
    jobs.spawn("dialog", move || JobResult::Picked { purpose, path: Some(path) });
    Ok(())
}

/// The dialog itself; `None` when cancelled.
#[cfg(feature = "file-dialog")]
fn show(purpose: &Purpose) -> Option<PathBuf> {
    use rfd::FileDialog;
    const TRACE: (&str, &[&str]) = ("Chrome / Kineto trace", &["json", "gz"]);
    // Files to read: filtered by kind, with "any file" for names the filter does not know.
    let read = |title: &str, (name, exts): (&str, &[&str])| {
        FileDialog::new().set_title(title).add_filter(name, exts).add_filter("any file", &["*"]).pick_file()
    };
    match purpose {
        Purpose::Open => read("Open a model or a TORCH_TRACE log", ("model or log", &["pt2", "zip", "onnx", "log", "gz"])),
        Purpose::Compare(CompareSlot::OtherLog) => {
            read("Compare with another TORCH_TRACE log of the same model", ("TORCH_TRACE log", &["log", "gz"]))
        }
        Purpose::Compare(CompareSlot::ProfileA) => read("The torch.profiler trace of the open log's run", TRACE),
        Purpose::Compare(CompareSlot::ProfileB) => read("The torch.profiler trace of the other log's run", TRACE),
        Purpose::ImportProfile => read("Import a torch.profiler trace of this log's run", TRACE),
        Purpose::Export(kind) => {
            FileDialog::new().set_title("Export the profile").set_file_name(format!("profile.{}", kind.extension())).save_file()
        }
        Purpose::Report { file_name } => {
            FileDialog::new().set_title("Export report").set_file_name(file_name).add_filter("HTML", &["html"]).save_file()
        }
    }
}
