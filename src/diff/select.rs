//! Files → the pairs of graphs to diff: the same stage of each compile of two TORCH_TRACE logs,
//! the graphs of two exports (as exported, or decomposed by our core / lite / full modes), or two
//! stages of one file (`--stage aot,post_grad`, `--stage none,full`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{diff, GraphDiff};
use crate::decomp::{self, DecompError, Marks, Mode};
use crate::import::{self, trace, ImportError};
use crate::ir::{Format, Graph};

/// Why two files cannot be diffed; each names the file and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error("--stage {0}: expected one stage for both files, or A's and B's separated by a comma")]
    StageSpec(String),
    #[error("{file}: --stage {stage}: {expected}")]
    BadStage { file: String, stage: String, expected: String },
    #[error("{file}: no {stage} graph in the log (its stages: {available})")]
    NoStage { file: String, stage: String, available: String },
    #[error("{file}: the file holds no graph")]
    NoGraph { file: String },
    #[error("{file}: {mode} decomposition: {source}")]
    Decomp { file: String, mode: &'static str, source: DecompError },
}

/// Which graphs of a file to take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StagePick {
    /// Every graph (logs: every stage of every compile; exports: as exported).
    All,
    /// Log stages of one kind (`aot` picks every AOT graph).
    Log(Vec<trace::Stage>),
    /// An export decomposed by our mode (`none` is the graph as exported).
    Decomp(Mode),
}

const LOG_STAGES: &str = "dynamo, aot, aot_joint, aot_forward, aot_backward, aot_inference or post_grad";
const MODEL_STAGES: &str = "none, core, lite or full";

/// The stages `--stage` takes for a file of `format`, in pipeline order: what the app's stage
/// pickers offer.
pub fn stage_choices(format: Format) -> &'static [&'static str] {
    match format {
        Format::TorchTrace => &["dynamo", "aot", "aot_joint", "aot_forward", "aot_backward", "aot_inference", "post_grad"],
        _ => &["none", "core", "lite", "full"],
    }
}

impl StagePick {
    fn parse(file: &str, format: Format, s: &str) -> Result<StagePick, DiffError> {
        use trace::Stage::*;
        let bad = |expected: &str| DiffError::BadStage { file: file.to_string(), stage: s.to_string(), expected: format!("expected {expected}") };
        if format == Format::TorchTrace {
            let norm = s.replace('-', "_");
            let stages = match norm.as_str() {
                "dynamo" => vec![DynamoOutput],
                "aot" => trace::Stage::ALL.into_iter().filter(|x| x.is_aot()).collect(),
                "aot_joint" | "joint" => vec![AotJoint],
                "aot_forward" | "forward" => vec![AotForward],
                "aot_backward" | "backward" => vec![AotBackward],
                "aot_inference" | "inference" => vec![AotInference],
                "post_grad" | "inductor" => vec![InductorPostGrad],
                other => vec![trace::Stage::from_name(other).ok_or_else(|| bad(&format!("a log stage: {LOG_STAGES}")))?],
            };
            return Ok(StagePick::Log(stages));
        }
        Mode::parse(s).map(StagePick::Decomp).ok_or_else(|| bad(&format!("a decomposition of the export: {MODEL_STAGES}")))
    }
}

/// One graph taken from a file, with the key it pairs on and a label for messages.
struct Taken {
    key: String,
    label: String,
    graph: Graph,
}

/// Two graphs and their diff.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphPair {
    pub a: String,
    pub b: String,
    pub diff: GraphDiff,
}

/// The diff of two files: every pair of graphs, and the graphs one file has and the other not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileDiff {
    pub a_file: String,
    pub b_file: String,
    pub pairs: Vec<GraphPair>,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// What the importers skipped, each naming file and place.
    pub warnings: Vec<String>,
}

impl FileDiff {
    pub fn differs(&self) -> bool {
        !self.only_a.is_empty() || !self.only_b.is_empty() || self.pairs.iter().any(|p| p.diff.differs())
    }
}

/// The graphs `stage` picks from two files, paired, before diffing.
pub struct Pairs {
    pub a_file: String,
    pub b_file: String,
    /// (A's label, A's graph, B's label, B's graph).
    pub pairs: Vec<(String, Graph, String, Graph)>,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    pub warnings: Vec<String>,
}

/// Diffs the graphs `stage` picks from `a` and `b`: `None` for every graph, `S` for stage S of
/// both, `SA,SB` for SA of A and SB of B.
pub fn diff_files(a: &Path, b: &Path, stage: Option<&str>) -> Result<FileDiff, DiffError> {
    let p = graph_pairs(a, b, stage)?;
    Ok(FileDiff {
        a_file: p.a_file,
        b_file: p.b_file,
        pairs: p.pairs.into_iter().map(|(la, ga, lb, gb)| GraphPair { diff: diff(&ga, &gb), a: la, b: lb }).collect(),
        only_a: p.only_a,
        only_b: p.only_b,
        warnings: p.warnings,
    })
}

/// Loads both files and pairs the graphs `stage` picks (see [`diff_files`]).
pub fn graph_pairs(a: &Path, b: &Path, stage: Option<&str>) -> Result<Pairs, DiffError> {
    let (sa, sb) = match stage.map(|s| s.split(',').map(str::trim).collect::<Vec<_>>()) {
        None => (None, None),
        Some(v) if v.len() == 1 && !v[0].is_empty() => (Some(v[0]), Some(v[0])),
        Some(v) if v.len() == 2 && v.iter().all(|s| !s.is_empty()) => (Some(v[0]), Some(v[1])),
        Some(_) => return Err(DiffError::StageSpec(stage.unwrap_or_default().to_string())),
    };
    graph_pairs_picked(a, b, sa, sb)
}

/// [`graph_pairs`] with each file's stage picked on its own (`None`: every graph of that file),
/// as the app's two stage pickers choose them; `--stage` cannot say "every graph of A, AOT of B".
pub fn graph_pairs_picked(a: &Path, b: &Path, sa: Option<&str>, sb: Option<&str>) -> Result<Pairs, DiffError> {
    let mut warnings = Vec::new();
    let ta = take(a, sa, &mut warnings)?;
    let tb = take(b, sb, &mut warnings)?;
    // Stages of one kind pair by compile and stage; two different stages by compile alone.
    let same_kind = sa == sb;
    let key = |t: &Taken| if same_kind { t.key.clone() } else { t.key.split(':').next().unwrap_or("").to_string() };
    let mut b_slots: Vec<Option<Taken>> = tb.into_iter().map(Some).collect();
    let mut pairs = Vec::new();
    let mut only_a = Vec::new();
    for x in ta {
        let k = key(&x);
        match b_slots.iter_mut().find(|y| y.as_ref().is_some_and(|y| key(y) == k)).and_then(Option::take) {
            Some(y) => pairs.push((x.label, x.graph, y.label, y.graph)),
            None => only_a.push(x),
        }
    }
    let mut only_b: Vec<Taken> = b_slots.into_iter().flatten().collect();
    // Files that share no key at all (a log's stage against an export, two compile ids): their
    // graphs in order.
    if pairs.is_empty() {
        let n = only_a.len().min(only_b.len());
        for (x, y) in only_a.drain(..n).zip(only_b.drain(..n)) {
            pairs.push((x.label, x.graph, y.label, y.graph));
        }
    }
    Ok(Pairs {
        a_file: a.display().to_string(),
        b_file: b.display().to_string(),
        pairs,
        only_a: only_a.into_iter().map(|t| t.label).collect(),
        only_b: only_b.into_iter().map(|t| t.label).collect(),
        warnings,
    })
}

fn take(path: &Path, stage: Option<&str>, warnings: &mut Vec<String>) -> Result<Vec<Taken>, DiffError> {
    let file = path.display().to_string();
    let format = import::detect(path)?;
    let pick = match stage {
        None => StagePick::All,
        Some(s) => StagePick::parse(&file, format, s)?,
    };
    if format == Format::TorchTrace {
        let log = trace::load_log(path).map_err(ImportError::from)?;
        warnings.extend(log.warnings.iter().cloned());
        let mut out = Vec::new();
        for c in &log.compiles {
            for (st, g) in &c.graphs {
                if let StagePick::Log(want) = &pick {
                    if !want.contains(st) {
                        continue;
                    }
                }
                out.push(Taken { key: format!("{}:{}", c.id, st.name()), label: format!("{} {}", c.id, st.name()), graph: g.clone() });
            }
        }
        if out.is_empty() {
            let mut available: Vec<&str> = log.compiles.iter().flat_map(|c| c.graphs.iter().map(|(s, _)| s.name())).collect();
            available.dedup();
            let available = if available.is_empty() { "none".to_string() } else { available.join(", ") };
            return Err(DiffError::NoStage { file, stage: stage.unwrap_or("any").to_string(), available });
        }
        return Ok(out);
    }
    let model = import::load(path)?;
    warnings.extend(model.warnings.iter().cloned());
    if model.graphs.is_empty() {
        return Err(DiffError::NoGraph { file });
    }
    let mode = match pick {
        StagePick::Decomp(m) => m,
        _ => Mode::None,
    };
    let mut out = Vec::new();
    for (i, g) in model.graphs.iter().enumerate() {
        let graph = if mode == Mode::None {
            g.clone()
        } else {
            // Lite mode with no marks of its own: the nodes the model annotates are marked.
            let d = decomp::decompose(g, mode, &Marks::default()).map_err(|source| DiffError::Decomp { file: file.clone(), mode: mode.name(), source })?;
            d.graph
        };
        out.push(Taken { key: i.to_string(), label: format!("{} ({})", g.name, mode.name()), graph });
    }
    Ok(out)
}
