//! `diff A B [--stage S] [--json]`: the work is [`crate::diff`]'s; here only arguments and output.

use std::path::Path;
use std::process::ExitCode;

use super::{fail, EXIT_FAILED, EXIT_USAGE};
use crate::diff::{diff_files, text};

/// Exit 0 when nothing differs, 1 when something does, 2 on bad input (as `diff` does).
pub fn run(a: &Path, b: &Path, stage: Option<&str>, as_json: bool) -> ExitCode {
    let d = match diff_files(a, b, stage) {
        Ok(d) => d,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    for w in &d.warnings {
        eprintln!("warning: {w}");
    }
    if as_json {
        match serde_json::to_value(&d) {
            Ok(v) => super::print_json(&v),
            Err(e) => return fail(EXIT_USAGE, &format!("cannot write the diff as JSON: {e}")),
        }
    } else {
        print!("{}", text::file_diff(&d));
    }
    if d.differs() {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}
