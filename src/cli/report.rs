//! `report FILE|LOG [--profile TRACE] [--allow-file PATH] [--against B] -o report.html`: one self-contained HTML
//! file ([`crate::report`]); prints what it embedded and what it left out.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{fail, EXIT_FAILED, EXIT_USAGE};
use crate::import::trace::NamedFile;
use crate::ops::Backend;
use crate::report::{self, DiffSection, Inputs, ReportError};

pub struct Args<'a> {
    pub file: &'a Path,
    pub profile: Option<&'a Path>,
    pub backend: &'a str,
    pub allow: &'a [PathBuf],
    pub against: Option<&'a Path>,
    pub out: &'a Path,
}

pub fn run(a: Args<'_>) -> ExitCode {
    let Some(backend) = Backend::parse(a.backend).filter(|b| *b != Backend::Mps) else {
        return fail(EXIT_USAGE, &format!("--backend {}: expected xpu, cuda or cpu", a.backend));
    };
    // The same diff `diff FILE B --json` prints: what the user named on the command line is theirs
    // to share, so B's graphs may be in the report.
    let diff = match a.against {
        None => None,
        Some(b) => match crate::diff::diff_files(a.file, b, None).map(serde_json::to_value) {
            Ok(Ok(value)) => Some(DiffSection { against: b.display().to_string(), value }),
            Ok(Err(e)) => return fail(EXIT_FAILED, &format!("--against {}: {e}", b.display())),
            Err(e) => return fail(EXIT_USAGE, &format!("--against {}: {e}", b.display())),
        },
    };
    let inputs = Inputs { file: a.file, profile: a.profile, backend, allow: a.allow, diff };
    let (r, bytes) = match report::write(inputs, a.out) {
        Ok(done) => done,
        Err(e @ ReportError::Input(_)) => return fail(EXIT_USAGE, &e),
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    for f in &r.files {
        match &f.state {
            NamedFile::Read { path, bytes } => println!("embedded: {} ({}, {bytes} bytes)", path, f.role),
            NamedFile::Skipped { path, why } => println!("skipped: {} ({}): {why}", path, f.role),
        }
    }
    let nodes: usize = r.graphs.iter().map(|g| g.nodes.len()).sum();
    println!("wrote {} ({bytes} bytes): {} graph(s), {nodes} node(s)", a.out.display(), r.graphs.len());
    ExitCode::SUCCESS
}
