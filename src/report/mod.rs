//! One self-contained HTML report of a model file or TORCH_TRACE log, to attach to a bug or send
//! to a colleague: the folded graph before and after, check-lite's verdicts, readiness, kernels with
//! a profile's device time, guards and ranges, versions and config — and the graph diff when the
//! caller computed one. No network, no server: data, script and style are in the one file, and a
//! Content-Security-Policy forbids the page any request.
//!
//! A report is made to be sent, so it holds only what the user chose to share: the file's own
//! contents, the files passed in [`Inputs`], and files the log only names where torch writes them
//! ([`FileAccess`](crate::import::trace::FileAccess)); [`Report::files`] lists each one embedded
//! and each one left out, with why.

mod graph;
mod html;
mod log;
mod types;

use std::path::{Path, PathBuf};

pub use graph::Overlay;
pub use html::render;
pub use types::*;

use crate::decomp::{self, Marks, Mode};
use crate::import::{self, trace::NamedFile};
use crate::ir::{Format, Model};
use crate::ops::backend::{self, Backend};
use crate::ops::readiness;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{0}")]
    Input(String),
    #[error("{file}: cannot write the report: {source}")]
    Write { file: String, source: std::io::Error },
}

/// What a report is made of: the user's choices, nothing else.
pub struct Inputs<'a> {
    pub file: &'a Path,
    /// A torch.profiler trace of the log's run (logs only).
    pub profile: Option<&'a Path>,
    /// The backend readiness is told for.
    pub backend: Backend,
    /// Folders or files the log's named files may also be read from.
    pub allow: &'a [PathBuf],
    /// The graph diff against another file, computed by the caller.
    pub diff: Option<DiffSection>,
}

/// Gathers the report of `inputs.file`.
pub fn build(inputs: Inputs<'_>) -> Result<Report, ReportError> {
    let file = inputs.file;
    let format = import::detect(file).map_err(|e| ReportError::Input(e.to_string()))?;
    let mut r = Report {
        title: file.display().to_string(),
        generated_by: format!("xpu-workbench {}", env!("CARGO_PKG_VERSION")),
        format: format.name().to_string(),
        diff: inputs.diff,
        ..Report::default()
    };
    r.files.push(embedded("the report's file", file));
    if format == Format::TorchTrace {
        let log = import::trace::load_log(file).map_err(|e| ReportError::Input(e.to_string()))?;
        let files = inputs.allow.iter().fold(log.file_access(), |f, p| f.allow(p));
        if let Some(p) = inputs.profile {
            r.files.push(embedded("profile", p));
        }
        log::fill(&mut r, log, &files, inputs.profile, inputs.backend)?;
    } else {
        if let Some(p) = inputs.profile {
            return Err(ReportError::Input(format!(
                "--profile {}: a profile is attributed through a TORCH_TRACE log's kernels; {} is a {} file",
                p.display(),
                file.display(),
                format.name()
            )));
        }
        let model = import::load(file).map_err(|e| ReportError::Input(e.to_string()))?;
        fill_model(&mut r, &model, inputs.backend);
    }
    Ok(r)
}

/// [`build`], rendered and written to `out`; returns the report and the bytes written.
pub fn write(inputs: Inputs<'_>, out: &Path) -> Result<(Report, usize), ReportError> {
    let report = build(inputs)?;
    let page = render(&report);
    std::fs::write(out, &page).map_err(|source| ReportError::Write { file: out.display().to_string(), source })?;
    Ok((report, page.len()))
}

/// A file the user passed, as embedded (its size on disk: what the report was made from).
fn embedded(role: &str, path: &Path) -> FileEntry {
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    FileEntry { role: role.to_string(), state: NamedFile::Read { path: path.display().to_string(), bytes } }
}

/// A model file: its graph before and after Inductor's default decomposition, our lite check of
/// it, readiness, and the symbols and guards it records.
fn fill_model(r: &mut Report, model: &Model, backend: Backend) {
    r.warnings.extend(model.warnings.iter().cloned());
    if let Some(v) = &model.torch_version {
        r.versions.push(Entry { name: "pytorch_version".into(), scope: "the file".into(), value: v.clone().into() });
    }
    let Some(g) = model.graphs.first() else {
        r.warnings.push(format!("{}: the file holds no graph", model.source));
        return;
    };
    let none = std::collections::HashMap::new();
    r.graphs.push(graph::view(g, "the graph as exported (before)", &none));
    r.panes[0] = Some(0);
    let marks = Marks::default();
    // As `check-lite FILE.pt2`: a graph already decomposed (its nodes record `from_node`) is checked
    // as it is, anything else through our lite decomposition.
    let already = g.nodes.iter().any(|n| n.meta.from_node.last().is_some_and(|o| o.target != n.target));
    let lite = if already { Ok(None) } else { decomp::decompose(g, Mode::Lite, &marks).map(Some) };
    match lite {
        Ok(lite) => {
            let violations = match &lite {
                Some(d) => decomp::check_lite(g, d, &marks),
                None => decomp::check_decomposed(g, &marks),
            };
            let what = if already { "the decomposed graph in the file" } else { "our lite decomposition" };
            let mut overlay = std::collections::HashMap::new();
            for v in &violations {
                overlay.insert(v.node.clone(), Overlay { verdict: Some("decomposed_unmarked".into()), ..Overlay::default() });
            }
            r.graphs[0] = graph::view(g, "the graph as exported (before)", &overlay);
            r.check_lite = Some(CheckSection {
                status: if violations.is_empty() { "ok" } else { "violations" }.into(),
                summary: format!("{what} of {} node(s): {} unmarked node(s) decomposed", g.nodes.len(), violations.len()),
                rows: violations
                    .iter()
                    .map(|v| CheckRow {
                        compile: String::new(),
                        node: v.node.clone(),
                        target: v.op.clone(),
                        class: "decomposed_unmarked".into(),
                        violation: true,
                        detail: v.to_string(),
                    })
                    .collect(),
                unverified: Vec::new(),
            });
        }
        Err(e) => r.warnings.push(format!("{}: lite decomposition failed, so check-lite is not in the report: {e}", model.source)),
    }
    match decomp::decompose(g, Mode::Full, &marks) {
        Ok(full) => {
            r.graphs.push(graph::view(&full.graph, "after Inductor's default decomposition (after)", &none));
            r.panes[1] = Some(1);
        }
        Err(e) => r.warnings.push(format!("{}: full decomposition failed: {e}", model.source)),
    }
    match readiness_section(model, model.torch_version.as_deref(), backend) {
        Ok(sec) => r.readiness = Some(sec),
        Err(why) => r.warnings.push(why),
    }
    let g = CompileGuards {
        compile: String::new(),
        symbols: model.symbols.iter().map(|s| format!("{} ∈ {}{}", s.name, s.range, s.hint.map(|h| format!(" (hint {h})")).unwrap_or_default())).collect(),
        guards: model.guards.iter().map(|g| g.source.clone()).collect(),
        unread: model.unread_guards.iter().map(|g| format!("{}: {}", g.source, g.reason)).collect(),
        specializations: Vec::new(),
    };
    if !(g.symbols.is_empty() && g.guards.is_empty() && g.unread.is_empty()) {
        r.guards.push(g);
    }
}

/// What `readiness` says of `model`'s ops on `backend`, in both modes.
fn readiness_section(model: &Model, torch: Option<&str>, backend: Backend) -> Result<ReadinessSection, String> {
    let table = backend::table_for(torch).ok_or("no op table is embedded in this build: no readiness")?;
    let rep = readiness::Report::of_model(model, table, backend);
    let ops = rep
        .ops
        .iter()
        .map(|e| {
            let (status, lite, default) = match &e.status {
                Ok(s) => (s.status.key().to_string(), s.meaning(readiness::Mode::Lite, backend), s.meaning(readiness::Mode::Default, backend)),
                Err(why) => ("unknown".to_string(), why.clone(), why.clone()),
            };
            ReadinessRow { target: e.target.clone(), status, lite, default, nodes: e.nodes.len() }
        })
        .collect();
    Ok(ReadinessSection { backend: backend.key().to_string(), torch: rep.torch.clone(), ops })
}
