//! `report FILE|LOG [--profile TRACE] [--allow-file PATH] -o report.html`: one self-contained HTML
//! file ([`crate::report`]); prints what it embedded and what it left out.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{fail, EXIT_FAILED, EXIT_USAGE};
use crate::import::trace::NamedFile;
use crate::ops::Backend;
use crate::report::{self, Inputs, ReportError};

pub struct Args<'a> {
    pub file: &'a Path,
    pub profile: Option<&'a Path>,
    pub backend: &'a str,
    pub allow: &'a [PathBuf],
    pub out: &'a Path,
}

pub fn run(a: Args<'_>) -> ExitCode {
    let Some(backend) = Backend::parse(a.backend).filter(|b| *b != Backend::Mps) else {
        return fail(EXIT_USAGE, &format!("--backend {}: expected xpu, cuda or cpu", a.backend));
    };
    let inputs = Inputs { file: a.file, profile: a.profile, backend, allow: a.allow, diff: None };
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
