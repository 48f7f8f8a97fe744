//! TORCH_TRACE structured logs (`TORCH_TRACE=/dir python ...`, torch 2.4–2.11): the graphs each
//! compile of a `torch.compile` run went through — dynamo's output graph, the AOT autograd graphs,
//! Inductor's post-grad graph — with the symbols, guards and specializations of each compile.
//!
//! A log is read line by line under [`log::Limits`]. What cannot be read (a cut-off line, an unknown
//! envelope kind, a graph dump that does not parse) is skipped with a warning naming the line; only a
//! file with no envelope at all is an error.

mod compile;
mod files;
mod fx;
mod kernels;
mod log;
mod python;
mod pytree;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

pub use compile::{CompileId, CompileMetrics, CompileRecord, OutputCode, Specialization, Stage, TraceLog};
pub use files::{inductor_cache_dir, FileAccess, NamedFile, MAX_NAMED_FILE};
pub use fx::{parse_annotation, parse_graph, SourceLoc, PY_KIND};
pub use kernels::{kernels, Kernel, KernelKind, KernelSource, KernelTable, Launch, NodeMappings};
pub use log::Limits;

use crate::ir::{Graph, Model, NodeId};

/// What makes a log unreadable as a whole.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{file}: cannot read: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: not a TORCH_TRACE log: no line is a structured-log envelope (`V1122 13:51:13.945000 487 file.py:12] {{...}}`); first unreadable line {line}: {detail}")]
    NoEnvelope { file: String, line: usize, detail: String },
    #[error("{file}: empty log: expected TORCH_TRACE envelopes")]
    Empty { file: String },
}

/// Whether `head` (the first bytes of a file) looks like a TORCH_TRACE log: gzip, or a glog line
/// carrying a JSON envelope.
pub fn sniff(head: &[u8]) -> bool {
    if head.starts_with(&[0x1f, 0x8b]) {
        return true;
    }
    let line = head.split(|&b| b == b'\n').next().unwrap_or(head);
    let text = String::from_utf8_lossy(line);
    matches!(text.chars().next(), Some('V' | 'I' | 'W' | 'E')) && text.contains("] {")
}

/// Loads a log (`.log`, or gzip-compressed `.log.gz`, told apart by content) as a [`Model`]: every
/// stage graph of every compile, named `"<compile id>:<stage>"`.
pub fn load(path: &Path) -> Result<Model, TraceError> {
    Ok(load_log(path)?.into_model())
}

/// Loads a log with everything per compile id (metrics, output code, per-compile symbols).
pub fn load_log(path: &Path) -> Result<TraceLog, TraceError> {
    load_log_with(path, Limits::default())
}

pub fn load_log_with(path: &Path, limits: Limits) -> Result<TraceLog, TraceError> {
    let file = path.display().to_string();
    let f = File::open(path).map_err(|source| TraceError::Io { file: file.clone(), source })?;
    read(&file, BufReader::new(f), limits)
}

/// Parses a log held in memory (tests, fuzzing); `file` names it in messages.
pub fn load_bytes(file: &str, bytes: &[u8], limits: Limits) -> Result<TraceLog, TraceError> {
    read(file, bytes, limits)
}

fn read(file: &str, mut reader: impl BufRead, limits: Limits) -> Result<TraceLog, TraceError> {
    let gz = {
        let head = reader.fill_buf().map_err(|source| TraceError::Io { file: file.to_string(), source })?;
        if head.is_empty() {
            return Err(TraceError::Empty { file: file.to_string() });
        }
        head.starts_with(&[0x1f, 0x8b])
    };
    let raw = if gz {
        let dec = flate2::bufread::MultiGzDecoder::new(reader);
        log::read_log(file, BufReader::new(dec.take(limits.max_total.saturating_add(1))), limits)
    } else {
        log::read_log(file, reader, limits)
    };
    if raw.envelopes.is_empty() {
        let (line, detail) = raw.first_bad_line.unwrap_or((1, "no complete line".into()));
        return Err(TraceError::NoEnvelope { file: file.to_string(), line, detail });
    }
    Ok(compile::assemble(file, raw))
}

/// For each node of the later stage `b` that has a source location, the nodes of the earlier stage
/// `a` with the same location (file, line and code): how one compile's stages relate, as far as the
/// logs say. Nodes of `b` without a location are left out; a located node with no match maps to
/// an empty list.
pub fn stage_provenance(a: &Graph, b: &Graph) -> Vec<(NodeId, Vec<NodeId>)> {
    let mut by_loc: std::collections::HashMap<(String, u32, String), Vec<NodeId>> = Default::default();
    for id in a.node_ids() {
        if let Some(l) = node_location(a, id) {
            by_loc.entry((l.file, l.line, l.code)).or_default().push(id);
        }
    }
    b.node_ids()
        .filter_map(|id| {
            let l = node_location(b, id)?;
            Some((id, by_loc.get(&(l.file, l.line, l.code)).cloned().unwrap_or_default()))
        })
        .collect()
}

/// A node's source location, from its stack trace.
pub fn node_location(g: &Graph, id: NodeId) -> Option<SourceLoc> {
    g.node(id).meta.stack_trace.as_deref().and_then(SourceLoc::from_stack_trace)
}
