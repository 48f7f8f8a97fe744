//! Inductor's kernels of one compile, from what the log holds: the generated module
//! (`inductor_output_code`: kernel sources and the `call()` that launches them), the provenance
//! artifacts (`inductor_provenance_tracking_node_mappings`, `..._kernel_stack_traces`, written
//! when `INDUCTOR_PROVENANCE=1` or `TORCH_COMPILE_DEBUG=1`) and `triton_kernel_info`.
//!
//! A kernel is what `call()` launches: a generated Triton or C++ kernel (one entry however often
//! it is launched), or one call site of a library kernel (`extern_kernels.mm`) or of an ATen
//! fallback (`torch.ops.aten.cumsum.default`), each its own entry since each computes other nodes.
//!
//! Which nodes a kernel computes comes from the provenance mappings when the log has them
//! (kernel → post-grad nodes → original nodes), else from the comments Inductor always writes:
//! `# Topologically Sorted Source Nodes: [h, linear]` (original nodes, above each kernel and each
//! launch) and `# Source node to ATen node mapping: h => add, add_1` (post-grad nodes).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

mod code;

use code::{def_comments, kernel_definition, launches};

use super::compile::{CompileRecord, OutputCode, Stage};
use super::files::{FileAccess, NamedFile};
use super::python::Source;

/// Where a kernel's code comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelKind {
    /// `async_compile.triton(...)`, launched with `.run(...)`.
    Triton,
    /// `async_compile.cpp_pybinding(...)` (Inductor's CPU back end).
    Cpp,
    /// Another `async_compile` flavour (`cuda`, `rocm`, `halide`, ...).
    Generated,
    /// A library kernel through `extern_kernels.*` (cuBLAS/oneDNN GEMM, convolution).
    Extern,
    /// An ATen op called as is (`torch.ops.aten.*`): a fallback, which lite mode makes of every
    /// unmarked node.
    Fallback,
}

/// A kernel's source as far as the log tells it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum KernelSource {
    /// The source text in the output code (`language`: `triton`, `c++`, ...).
    Code { language: String, text: String },
    /// The log names only a file (`# kernel path:` or the output code's own path) and why its
    /// text is not here.
    NotInLog { path: Option<String>, why: String },
    /// A library or ATen kernel: no source to show.
    Library,
}

/// One kernel of a compile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Kernel {
    /// Unique within the compile: a generated kernel's name (`triton_poi_fused_add_0`), or a
    /// library/fallback call site's callee with its provenance handle (`extern_kernels.mm:2`) or,
    /// without provenance, its ordinal among calls of that callee (`extern_kernels.mm#2`).
    pub name: String,
    /// What `call()` invokes: the generated kernel's name, `extern_kernels.mm`, `aten.cumsum.default`.
    pub callee: String,
    pub kind: KernelKind,
    pub source: KernelSource,
    /// Original nodes (dynamo's graph, as the pre-grad passes left it) the kernel computes.
    pub nodes: Vec<String>,
    /// Nodes of `inductor_post_grad_graph` the kernel computes.
    pub post_grad_nodes: Vec<String>,
    /// How many call sites `call()` has for it.
    pub call_sites: usize,
    /// Stack traces of the user code (from `..._kernel_stack_traces`).
    pub stack_traces: Vec<String>,
    /// From `triton_kernel_info`.
    pub compile_time_us: Option<u64>,
    pub num_configs: Option<u64>,
}

impl Kernel {
    /// A library kernel computing node `node_{name}`, for tests of what is matched to kernels.
    #[cfg(test)]
    pub(crate) fn library(name: &str, callee: &str, kind: KernelKind) -> Kernel {
        Kernel {
            name: name.into(),
            callee: callee.into(),
            kind,
            source: KernelSource::Library,
            nodes: vec![format!("node_{name}")],
            post_grad_nodes: Vec::new(),
            call_sites: 1,
            stack_traces: Vec::new(),
            compile_time_us: None,
            num_configs: None,
        }
    }

    /// The name of the CPU op the PyTorch profiler records when `call()` launches this kernel:
    /// Inductor wraps each Triton launch in a record function named after the kernel; a library
    /// or fallback call is recorded as the ATen op it runs (`aten::mm`). C++ kernels record none,
    /// unless compiled with kernel profiling on (`profile::attribute::host_calls` finds those).
    pub fn profiler_op(&self) -> Option<String> {
        match self.kind {
            KernelKind::Triton => Some(self.callee.clone()),
            KernelKind::Extern => {
                let op = self.callee.strip_prefix("extern_kernels.")?;
                Some(format!("aten::{op}"))
            }
            KernelKind::Fallback => {
                let mut parts = self.callee.split('.');
                let ns = parts.next()?;
                let op = parts.next()?;
                Some(format!("{ns}::{op}"))
            }
            KernelKind::Cpp | KernelKind::Generated => None,
        }
    }
}

/// One call site in `call()`, in program order: which kernel it launches.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Launch {
    /// Index into [`KernelTable::kernels`].
    pub kernel: usize,
    /// 1-based line in the output code.
    pub line: usize,
    /// Inductor's provenance debug handle (`# [Provenance debug handles] name:7`).
    pub handle: Option<u64>,
}

/// The kernels of one output code, and its launches in `call()` order.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct KernelTable {
    /// The output code's file as the log names it.
    pub file: Option<String>,
    pub kernels: Vec<Kernel>,
    pub launches: Vec<Launch>,
    /// Whether the provenance mappings were in the log (else nodes come from code comments).
    pub provenance: bool,
    /// What could not be read or is missing, for the user.
    pub notes: Vec<String>,
    /// The file the output code was read from, when the log held only its name: read, or skipped
    /// with why ([`FileAccess`]).
    pub named_file: Option<NamedFile>,
}

/// `inductor_provenance_tracking_node_mappings`: each map from a name to names.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NodeMappings {
    /// Original (pre-grad) node → post-grad nodes.
    pub pre_to_post: BTreeMap<String, Vec<String>>,
    pub post_to_pre: BTreeMap<String, Vec<String>>,
    /// `kernel:handle` → post-grad nodes (torch names it `cppCodeToPost` for every back end).
    pub code_to_post: BTreeMap<String, Vec<String>>,
    pub post_to_code: BTreeMap<String, Vec<String>>,
}

impl NodeMappings {
    /// Reads the artifact's JSON; maps missing from it stay empty.
    pub fn from_json(j: &Json) -> NodeMappings {
        let map = |pred: &dyn Fn(&str) -> bool| -> BTreeMap<String, Vec<String>> {
            let mut out = BTreeMap::new();
            for (_, v) in j.as_object().into_iter().flatten().filter(|(k, _)| pred(k)) {
                for (name, list) in v.as_object().into_iter().flatten() {
                    let names = list.as_array().into_iter().flatten().filter_map(|x| x.as_str().map(str::to_string));
                    out.entry(name.clone()).or_insert_with(Vec::new).extend(names);
                }
            }
            out
        };
        NodeMappings {
            pre_to_post: map(&|k| k == "preToPost"),
            post_to_pre: map(&|k| k == "postToPre"),
            code_to_post: map(&|k| k.ends_with("CodeToPost")),
            post_to_code: map(&|k| k.starts_with("postTo") && k.ends_with("Code")),
        }
    }
}

/// The kernel tables of a compile, one per output code it logged. An output code logged only by
/// its file name is read where `files` allows ([`FileAccess::for_log`]: the log's folder and the
/// Inductor cache), never from anywhere the log names.
pub fn kernels(rec: &CompileRecord, files: &FileAccess) -> Vec<KernelTable> {
    rec.output_code.iter().map(|code| kernel_table(rec, code, files)).collect()
}

fn kernel_table(rec: &CompileRecord, code: &OutputCode, files: &FileAccess) -> KernelTable {
    let mut table = KernelTable { file: code.filename.clone(), provenance: rec.provenance.is_some(), ..Default::default() };
    let text = match output_text(code, files, &mut table.named_file) {
        Ok(t) => t,
        Err(why) => {
            table.notes.push(why);
            return table;
        }
    };
    let src = Source::new(&text);
    let lines: Vec<&str> = (0..src.line_count()).map(|i| src.line(i)).collect();
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    let mut i = 0;
    // Kernel definitions: `name = async_compile.<flavour>(...'''source''')` at the top level.
    while i < lines.len() {
        let (_, mut next) = src.logical(i);
        if let Some(def) = kernel_definition(src.rest(i)) {
            let comments = def_comments(&lines[..i]);
            let (kind, language) = match def.flavour {
                "triton" => (KernelKind::Triton, "triton"),
                "cpp_pybinding" | "cpp" => (KernelKind::Cpp, "c++"),
                other => (KernelKind::Generated, other),
            };
            let source = match def.source {
                Some(text) => KernelSource::Code { language: language.to_string(), text },
                None => KernelSource::NotInLog {
                    path: comments.path.clone(),
                    why: "the output code does not hold this kernel's source inline".into(),
                },
            };
            if def.unterminated {
                // A log cut off inside the source: the rest of the text is that source.
                next = lines.len();
            }
            by_name.insert(def.name.to_string(), table.kernels.len());
            table.kernels.push(Kernel {
                name: def.name.to_string(),
                callee: def.name.to_string(),
                kind,
                source,
                nodes: comments.source_nodes,
                post_grad_nodes: comments.post_grad,
                call_sites: 0,
                stack_traces: Vec::new(),
                compile_time_us: None,
                num_configs: None,
            });
        }
        i = next;
    }
    launches(&src, &mut table, &mut by_name);
    match &rec.provenance {
        Some(m) => apply_provenance(&mut table, m),
        None => infer_from_graphs(&mut table, rec),
    }
    for k in &mut table.kernels {
        if let Some(info) = rec.triton_kernel_info.get(&k.callee) {
            k.compile_time_us = info.get("compile_time_us").and_then(Json::as_u64);
            k.num_configs = info.get("num_configs").and_then(Json::as_u64);
        }
        // Keys are `kernel:handle`: a generated kernel takes every handle of its name, a library
        // or fallback call site only its own (`extern_kernels.mm:2`, `torch.ops.aten.cos.default:47`).
        let library = matches!(k.kind, KernelKind::Extern | KernelKind::Fallback);
        for (key, traces) in &rec.kernel_stack_traces {
            let hit = if library {
                *key == k.name || key.strip_prefix("torch.ops.") == Some(k.name.as_str())
            } else {
                key.rsplit_once(':').map_or(key.as_str(), |(n, _)| n) == k.callee
            };
            if hit {
                k.stack_traces.extend(traces.iter().cloned());
            }
        }
        k.stack_traces.dedup();
    }
    let blind = table.kernels.iter().filter(|k| k.nodes.is_empty() && k.post_grad_nodes.is_empty()).count();
    if blind > 0 && rec.provenance.is_none() {
        table.notes.push(format!(
            "{blind} kernel(s) name no node: without INDUCTOR_PROVENANCE=1 only Triton kernels and library calls carry \
             source-node comments (C++ kernels do not); rerun with INDUCTOR_PROVENANCE=1 to map them"
        ));
    }
    let unlaunched = table.kernels.iter().filter(|k| k.call_sites == 0).count();
    if unlaunched > 0 {
        table.notes.push(format!("{unlaunched} kernel(s) defined but never launched in call()"));
    }
    table
}

/// The output code's text: the payload, or the file the log names when `files` allows reading it
/// (what happened to that file goes to `named`).
fn output_text(code: &OutputCode, files: &FileAccess, named: &mut Option<NamedFile>) -> Result<String, String> {
    if !code.code.trim().is_empty() {
        return Ok(code.code.clone());
    }
    let Some(path) = &code.filename else {
        return Err("inductor_output_code has neither a payload nor a file name".into());
    };
    let (text, used) = files.read(path);
    let why = match &used {
        NamedFile::Skipped { why, .. } => Some(why.clone()),
        NamedFile::Read { .. } => None,
    };
    *named = Some(used);
    text.ok_or_else(|| {
        format!("the log holds only the path of the output code, {path}, which was not read: {}: no kernel sources or launches", why.unwrap_or_default())
    })
}

/// Replaces comment-derived nodes by the provenance mappings where they name the kernel.
fn apply_provenance(table: &mut KernelTable, m: &NodeMappings) {
    let launches: Vec<(usize, Option<u64>)> = table.launches.iter().map(|l| (l.kernel, l.handle)).collect();
    for (kernel, handle) in launches {
        let k = &mut table.kernels[kernel];
        // Fallbacks are keyed as `call()` spells them, `torch.ops.aten.cos.default:47`.
        let Some(post) = handle.and_then(|h| {
            let keys = [format!("{}:{h}", k.callee), format!("torch.ops.{}:{h}", k.callee)];
            keys.iter().find_map(|key| m.code_to_post.get(key))
        }) else {
            continue;
        };
        if k.post_grad_nodes.iter().all(|n| post.contains(n)) && k.call_sites <= 1 {
            k.post_grad_nodes.clear();
        }
        for n in post {
            if !k.post_grad_nodes.contains(n) {
                k.post_grad_nodes.push(n.clone());
            }
        }
    }
    for k in &mut table.kernels {
        let mut pre: Vec<String> = Vec::new();
        for p in &k.post_grad_nodes {
            for n in m.post_to_pre.get(p).into_iter().flatten() {
                if !pre.contains(n) {
                    pre.push(n.clone());
                }
            }
        }
        if !pre.is_empty() {
            k.nodes = pre;
        }
    }
}

/// Without provenance mappings, library and fallback call sites name no post-grad node, and in
/// lite mode (torch 2.11) not even an original one (`Topologically Sorted Source Nodes: []`).
/// The post-grad graph fills both in: the k-th call of `extern_kernels.mm` in `call()` computes
/// the k-th `aten.mm.default` node of the graph (both follow the graph's order), and a node's
/// original nodes are the dynamo nodes at its source location — its own, or that of the AOT
/// node of the same name when the post-grad graph has none (lite mode).
fn infer_from_graphs(table: &mut KernelTable, rec: &CompileRecord) {
    let Some(post) = rec.graph(Stage::InductorPostGrad) else { return };
    let mut by_target: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for n in &post.nodes {
        by_target.entry(n.target.as_str()).or_default().push(n.name.as_str());
    }
    let mut taken: BTreeMap<String, usize> = BTreeMap::new();
    let launched: Vec<usize> = table.launches.iter().map(|l| l.kernel).collect();
    for kernel in launched {
        let k = &mut table.kernels[kernel];
        let target = match k.kind {
            KernelKind::Fallback => k.callee.clone(),
            KernelKind::Extern => format!("aten.{}.default", k.callee.trim_start_matches("extern_kernels.")),
            _ => continue,
        };
        if !k.post_grad_nodes.is_empty() {
            continue;
        }
        let i = taken.entry(target.clone()).or_insert(0);
        if let Some(name) = by_target.get(target.as_str()).and_then(|v| v.get(*i)) {
            k.post_grad_nodes.push(name.to_string());
        }
        *i += 1;
    }
    let Some(dynamo) = rec.graph(Stage::DynamoOutput) else { return };
    let aot = [Stage::AotInference, Stage::AotForward].into_iter().find_map(|s| rec.graph(s));
    let mut at: BTreeMap<(String, u32, String), Vec<String>> = BTreeMap::new();
    for id in dynamo.node_ids() {
        if let Some(l) = super::node_location(dynamo, id) {
            at.entry((l.file, l.line, l.code)).or_default().push(dynamo.node(id).name.clone());
        }
    }
    let location = |name: &str| {
        let own = post.node_by_name(name).and_then(|id| super::node_location(post, id));
        own.or_else(|| aot.and_then(|g| g.node_by_name(name).and_then(|id| super::node_location(g, id))))
    };
    for k in &mut table.kernels {
        let mut found: Vec<String> = Vec::new();
        for p in &k.post_grad_nodes {
            if let Some(l) = location(p) {
                for n in at.get(&(l.file, l.line, l.code)).into_iter().flatten() {
                    if !found.contains(n) {
                        found.push(n.clone());
                    }
                }
            }
        }
        // A library call's comment also names the nodes of the views folded into its inputs
        // (`[h, linear]` for the GEMM after a layer norm), and a source line can hold several
        // nodes (`q, k, v = self.qkv(h).chunk(3)`): where both say something, both must agree.
        let library = matches!(k.kind, KernelKind::Extern | KernelKind::Fallback);
        if k.nodes.is_empty() {
            k.nodes = found;
        } else if library {
            let both: Vec<String> = k.nodes.iter().filter(|n| found.contains(n)).cloned().collect();
            if !both.is_empty() {
                k.nodes = both;
            }
        }
    }
}

#[cfg(test)]
mod tests;
