//! The report as data: what [`super::build`] gathers and the page renders. Serialized once into
//! the HTML file, read by `report.js`; short field names in the graph keep a 12k-node graph small.

use serde::Serialize;

use crate::import::trace::NamedFile;

/// Everything one report shows.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// The file the report is of, as the user named it.
    pub title: String,
    /// `xpu-workbench 0.1.0`.
    pub generated_by: String,
    /// `torch_trace`, `pt2`, `onnx`.
    pub format: String,
    /// Versions the file records (`pytorch_version`, `python_version`, `cuda_version`, ...).
    pub versions: Vec<Entry>,
    /// Configuration the file records (`inductor_config`, `dynamo_config`, `compiler_config`).
    pub config: Vec<Entry>,
    pub graphs: Vec<GraphView>,
    /// The graphs shown first, left (before) and right (after): indices into `graphs`.
    pub panes: [Option<usize>; 2],
    pub check_lite: Option<CheckSection>,
    pub readiness: Option<ReadinessSection>,
    pub kernels: Option<KernelSection>,
    pub guards: Vec<CompileGuards>,
    /// The computed graph diff when the report is made `--against` another file.
    pub diff: Option<DiffSection>,
    /// Every file whose content is in the report, and every file a log named that was not read.
    pub files: Vec<FileEntry>,
    pub warnings: Vec<String>,
}

/// A name and a value (a version string, or a config object as the file wrote it).
#[derive(Clone, Debug, Serialize)]
pub struct Entry {
    pub name: String,
    /// Where it came from (`compile 0/0`).
    pub scope: String,
    pub value: serde_json::Value,
}

/// One graph, folded by module: the page lays out one module's contents at a time.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GraphView {
    /// `0/0:dynamo_output_graph`.
    pub name: String,
    /// What it is in the pipeline (`before: dynamo graph`, `after: post-grad graph`).
    pub label: String,
    /// Modules (or source files and functions), parents before children.
    pub groups: Vec<GroupView>,
    pub nodes: Vec<NodeView>,
    /// Groups the first view shows folded (a transformer opens as its layers).
    pub folded: Vec<usize>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GroupView {
    /// Module path.
    pub p: String,
    /// Class.
    pub c: String,
    /// Parent group.
    pub up: Option<usize>,
    /// Nodes under it, nested ones included.
    pub n: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct NodeView {
    /// Node name.
    pub n: String,
    /// Op target.
    pub op: String,
    /// Innermost group.
    pub g: Option<usize>,
    /// Producers of its inputs: node indices.
    pub i: Vec<usize>,
    /// Output shape and dtype (`f32[s0, 64]`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub s: String,
    /// Check-lite's class for this node (`kept`, `decomposed_unmarked`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v: Option<String>,
    /// Device time attributed to it, µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t: Option<f64>,
    /// Kernels computing it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kn: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CheckSection {
    /// `ok`, `violations` or `unverified`.
    pub status: String,
    pub summary: String,
    pub rows: Vec<CheckRow>,
    pub unverified: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CheckRow {
    pub compile: String,
    pub node: String,
    pub target: String,
    pub class: String,
    pub violation: bool,
    pub detail: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ReadinessSection {
    pub backend: String,
    pub torch: String,
    pub ops: Vec<ReadinessRow>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ReadinessRow {
    pub target: String,
    pub status: String,
    pub lite: String,
    pub default: String,
    pub nodes: usize,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct KernelSection {
    /// The profiler trace, when one was given.
    pub profile: Option<String>,
    pub rows: Vec<KernelRow>,
    pub notes: Vec<String>,
    /// Totals of the profile: attributed, unattributed, outside compiled regions (µs).
    pub attributed_us: Option<f64>,
    pub unattributed_us: Option<f64>,
    pub outside_us: Option<f64>,
    pub unattributed: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct KernelRow {
    pub compile: String,
    pub name: String,
    pub kind: String,
    pub nodes: Vec<String>,
    pub calls: Option<usize>,
    pub device_us: Option<f64>,
    pub median_us: Option<f64>,
    /// The kernel's source when the output code holds it.
    pub source: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct CompileGuards {
    pub compile: String,
    /// `s0 ∈ [2, 1024] (hint 8)`.
    pub symbols: Vec<String>,
    pub guards: Vec<String>,
    pub unread: Vec<String>,
    pub specializations: Vec<String>,
}

/// The graph diff against another file: the value the diff module computes (issue 27, item 1),
/// rendered by the page as a tree. Filled by the caller; [`super::build`] never makes one up.
#[derive(Clone, Debug, Serialize)]
pub struct DiffSection {
    /// The other file.
    pub against: String,
    pub value: serde_json::Value,
}

/// A file in the report, or named by the log and left out.
#[derive(Clone, Debug, Serialize)]
pub struct FileEntry {
    /// What it is (`log`, `profile`, `output code of compile 0/0`).
    pub role: String,
    #[serde(flatten)]
    pub state: NamedFile,
}
