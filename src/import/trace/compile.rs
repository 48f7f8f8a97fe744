//! Envelopes → one [`CompileRecord`] per compile id: its stage graphs, symbols, guards,
//! specializations, metrics and generated code.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde_json::Value as Json;

use super::fx;
use super::kernels::NodeMappings;
use super::log::{Envelope, ReadLog};
use crate::ir::{Format, Graph, Guard, Model, SymbolInfo, UnreadGuard};
use crate::sym::{parse_infix, Range};

/// Which compile an envelope belongs to: `[!autograd/]frame/compile[_attempt]`, as tlparse and
/// `compilation_metrics` spell it (`0/0`, `0/1`, `0/0_1` for a restarted attempt).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CompileId {
    pub compiled_autograd: Option<u64>,
    pub frame: Option<u64>,
    pub frame_compile: Option<u64>,
    pub attempt: u64,
}

impl fmt::Display for CompileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(ca) = self.compiled_autograd {
            write!(f, "!{ca}/")?;
        }
        let part = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        write!(f, "{}/{}", part(self.frame), part(self.frame_compile))?;
        if self.attempt > 0 {
            write!(f, "_{}", self.attempt)?;
        }
        Ok(())
    }
}

impl CompileId {
    fn of(env: &Envelope) -> Option<CompileId> {
        let get = |k: &str| env.fields.get(k).and_then(Json::as_u64);
        let id = CompileId {
            compiled_autograd: get("compiled_autograd_id"),
            frame: get("frame_id"),
            frame_compile: get("frame_compile_id"),
            attempt: get("attempt").unwrap_or(0),
        };
        (id.frame.is_some() || id.compiled_autograd.is_some()).then_some(id)
    }
}

/// The graph-carrying stages of one compile, in pipeline order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    DynamoOutput,
    AotJoint,
    AotForward,
    AotBackward,
    AotInference,
    InductorPostGrad,
}

impl Stage {
    pub const ALL: [Stage; 6] = [
        Stage::DynamoOutput,
        Stage::AotJoint,
        Stage::AotForward,
        Stage::AotBackward,
        Stage::AotInference,
        Stage::InductorPostGrad,
    ];

    /// The envelope (or artifact) name that carries it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::DynamoOutput => "dynamo_output_graph",
            Stage::AotJoint => "aot_joint_graph",
            Stage::AotForward => "aot_forward_graph",
            Stage::AotBackward => "aot_backward_graph",
            Stage::AotInference => "aot_inference_graph",
            Stage::InductorPostGrad => "inductor_post_grad_graph",
        }
    }

    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The AOT autograd stages, where decompositions have been applied.
    pub fn is_aot(self) -> bool {
        matches!(self, Stage::AotJoint | Stage::AotForward | Stage::AotBackward | Stage::AotInference)
    }
}

/// A symbol dynamo replaced by a constant (`s53` → 32 because a layer fixed the width).
#[derive(Clone, Debug, PartialEq)]
pub struct Specialization {
    pub symbol: String,
    pub sources: Vec<String>,
    pub value: String,
    pub reason: String,
}

/// The parts of `compilation_metrics` worth showing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompileMetrics {
    pub co_name: Option<String>,
    pub co_filename: Option<String>,
    pub co_firstlineno: Option<u64>,
    pub guard_count: Option<u64>,
    pub shape_env_guard_count: Option<u64>,
    pub graph_op_count: Option<u64>,
    pub graph_node_count: Option<u64>,
    pub graph_input_count: Option<u64>,
    pub entire_frame_compile_time_s: Option<f64>,
    pub fail_type: Option<String>,
    pub fail_reason: Option<String>,
    pub restart_reasons: Vec<String>,
    /// `2.11.0+cu130`: which torch wrote the log (picks the op registry's tables).
    pub pytorch_version: Option<String>,
    /// Every `*_version` the metrics record (`python_version`, `cuda_version`, `triton_version`),
    /// as written.
    pub versions: BTreeMap<String, Json>,
    /// Every configuration the metrics record (`inductor_config`, `dynamo_config`, `compiler_config`,
    /// `config_suppress_errors`): JSON-in-a-string values parsed, others as written.
    pub config: BTreeMap<String, Json>,
}

impl CompileMetrics {
    fn from_json(j: &Json) -> CompileMetrics {
        let s = |k: &str| j.get(k).and_then(Json::as_str).map(str::to_string);
        let u = |k: &str| j.get(k).and_then(Json::as_u64);
        CompileMetrics {
            co_name: s("co_name"),
            co_filename: s("co_filename"),
            co_firstlineno: u("co_firstlineno"),
            guard_count: u("guard_count"),
            shape_env_guard_count: u("shape_env_guard_count"),
            graph_op_count: u("graph_op_count"),
            graph_node_count: u("graph_node_count"),
            graph_input_count: u("graph_input_count"),
            entire_frame_compile_time_s: j.get("entire_frame_compile_time_s").and_then(Json::as_f64),
            fail_type: s("fail_type"),
            fail_reason: s("fail_reason"),
            restart_reasons: j
                .get("restart_reasons")
                .and_then(Json::as_array)
                .map(|a| a.iter().filter_map(|r| r.as_str().map(str::to_string)).collect())
                .unwrap_or_default(),
            pytorch_version: s("pytorch_version"),
            versions: j
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, v)| k.ends_with("_version") && !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            config: j
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, v)| (k.ends_with("_config") || k.starts_with("config_")) && !v.is_null())
                .map(|(k, v)| {
                    let parsed = v.as_str().and_then(|t| serde_json::from_str::<Json>(t).ok()).filter(Json::is_object);
                    (k.clone(), parsed.unwrap_or_else(|| v.clone()))
                })
                .collect(),
        }
    }
}

/// The Python module Inductor generated for a compile (`inductor_output_code`).
#[derive(Clone, Debug, PartialEq)]
pub struct OutputCode {
    pub filename: Option<String>,
    pub code: String,
}

/// Everything the log says about one compile.
#[derive(Clone, Debug, Default)]
pub struct CompileRecord {
    pub id: CompileId,
    /// Stage graphs in log order, each named `"<compile id>:<stage>"`.
    pub graphs: Vec<(Stage, Graph)>,
    /// Integer symbols (`create_symbol`); specialized ones have the one-value range they were fixed to.
    pub symbols: Vec<SymbolInfo>,
    /// Float symbols (`zf50`, a layer's `eps` traced as a scalar): `(name, value)`.
    pub float_symbols: Vec<(String, String)>,
    pub guards: Vec<Guard>,
    /// Guards the log records that do not parse: listed with why.
    pub unread_guards: Vec<UnreadGuard>,
    pub specializations: Vec<Specialization>,
    pub metrics: Option<CompileMetrics>,
    pub output_code: Vec<OutputCode>,
    /// Names of `artifact` envelopes seen (`before_pre_grad_graph`, `fx_graph_cache_miss`, ...).
    pub artifacts: Vec<String>,
    /// `inductor_provenance_tracking_node_mappings` (only with `INDUCTOR_PROVENANCE=1` or
    /// `TORCH_COMPILE_DEBUG=1`; torch 2.8 and later).
    pub provenance: Option<NodeMappings>,
    /// `inductor_provenance_tracking_kernel_stack_traces`: `kernel:handle` → stack traces.
    pub kernel_stack_traces: BTreeMap<String, Vec<String>>,
    /// `triton_kernel_info`: kernel name → `{autotune_cache_state, num_configs, compile_time_us}`.
    pub triton_kernel_info: BTreeMap<String, Json>,
}

impl CompileRecord {
    pub fn graph(&self, stage: Stage) -> Option<&Graph> {
        self.graphs.iter().find(|(s, _)| *s == stage).map(|(_, g)| g)
    }
}

/// A whole log, per compile id in the order compiles first appear.
#[derive(Clone, Debug, Default)]
pub struct TraceLog {
    pub file: String,
    pub compiles: Vec<CompileRecord>,
    pub warnings: Vec<String>,
}

impl TraceLog {
    /// Where files this log only names may be read from: its folder and the Inductor cache.
    pub fn file_access(&self) -> super::FileAccess {
        super::FileAccess::for_log(std::path::Path::new(&self.file))
    }
}

/// Envelope kinds this importer knows and has no use for.
const IGNORED: &[&str] = &[
    "str",
    "chromium_event",
    "dynamo_start",
    "describe_storage",
    "describe_tensor",
    "describe_source",
    "dynamo_cpp_guards_str",
    "compilation_metrics_runtime",
    "bwd_compilation_metrics",
    // torch 2.11 CUDA training: metrics of the backward compiled lazily at its first run.
    "bwd_compilation_metrics_runtime",
    "dynamo_guards",
    "optimize_ddp_split_graph",
    "optimize_ddp_split_child",
    "compiled_autograd_graph",
    "link",
    "dump_file",
    "graph_dump",
    "exported_program",
    "expression_created",
    "unbacked_symbol_created",
    "propagate_real_tensors",
    "missing_fake_kernel",
    "mismatched_fake_kernel",
    "aot_autograd_backward_compilation_metrics",
    "inductor_pre_grad_graph",
    "graph_breaks",
    "stack_summary",
];

pub(super) fn assemble(file: &str, raw: ReadLog) -> TraceLog {
    let mut log = TraceLog { file: file.to_string(), compiles: Vec::new(), warnings: raw.warnings };
    let mut index: HashMap<CompileId, usize> = HashMap::new();
    let mut unknown: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for env in raw.envelopes {
        let id = CompileId::of(&env).unwrap_or_default();
        let slot = *index.entry(id).or_insert_with(|| {
            log.compiles.push(CompileRecord { id, ..CompileRecord::default() });
            log.compiles.len() - 1
        });
        let rec = &mut log.compiles[slot];
        let kind = env.kind.as_str();
        let graph_stage = match kind {
            "artifact" => env.body.get("name").and_then(Json::as_str).and_then(Stage::from_name),
            k => Stage::from_name(k),
        };
        if let Some(stage) = graph_stage {
            add_graph(file, rec, stage, &env, &mut log.warnings);
            continue;
        }
        match kind {
            "create_symbol" => create_symbol(file, rec, &env, &mut log.warnings),
            "guard_added" | "guard_added_fast" => {
                if let Some(text) = env.body.get("expr").and_then(Json::as_str) {
                    match parse_infix(text) {
                        Ok(expr) => {
                            if !rec.guards.iter().any(|g| g.source == text) {
                                rec.guards.push(Guard { expr, source: text.to_string() });
                            }
                        }
                        Err(e) => {
                            if !rec.unread_guards.iter().any(|g| g.source == text) {
                                rec.unread_guards.push(UnreadGuard { source: text.to_string(), reason: e.to_string() });
                            }
                            log.warnings.push(format!("{file}: line {}: guard `{text}`: {e}; skipped", env.line))
                        }
                    }
                }
            }
            "symbolic_shape_specialization" => {
                let s = |k: &str| env.body.get(k).and_then(Json::as_str).unwrap_or("").to_string();
                let sources = env
                    .body
                    .get("sources")
                    .and_then(Json::as_array)
                    .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                    .unwrap_or_default();
                let spec = Specialization { symbol: s("symbol"), sources, value: s("value"), reason: s("reason") };
                if let (Some(sym), Ok(v)) = (rec.symbols.iter_mut().find(|x| x.name == spec.symbol), spec.value.parse::<i64>()) {
                    sym.range = Range { min: v as i128, max: Some(v as i128) };
                    sym.hint = Some(v);
                }
                rec.specializations.push(spec);
            }
            "compilation_metrics" => rec.metrics = Some(CompileMetrics::from_json(&env.body)),
            "inductor_output_code" => rec.output_code.push(OutputCode {
                filename: env.body.get("filename").and_then(Json::as_str).map(str::to_string),
                code: env.payload.clone().unwrap_or_default(),
            }),
            "artifact" => {
                if let Some(name) = env.body.get("name").and_then(Json::as_str) {
                    rec.artifacts.push(name.to_string());
                    json_artifact(file, rec, name, &env, &mut log.warnings);
                }
            }
            k if IGNORED.contains(&k) => {}
            k => {
                let e = unknown.entry(k.to_string()).or_insert((env.line, 0));
                e.1 += 1;
            }
        }
    }
    for (kind, (line, count)) in unknown {
        log.warnings.push(format!("{file}: line {line}: unknown envelope kind `{kind}` ({count}×); skipped"));
    }
    log.compiles.retain(|c| {
        !(c.id == CompileId::default()
            && c.graphs.is_empty()
            && c.symbols.is_empty()
            && c.guards.is_empty()
            && c.output_code.is_empty())
    });
    log
}

/// Keeps the JSON artifacts that describe kernels.
fn json_artifact(file: &str, rec: &mut CompileRecord, name: &str, env: &Envelope, warnings: &mut Vec<String>) {
    const KEPT: &[&str] = &[
        "inductor_provenance_tracking_node_mappings",
        "inductor_provenance_tracking_kernel_stack_traces",
        "triton_kernel_info",
    ];
    if !KEPT.contains(&name) {
        return;
    }
    let parsed = env.payload.as_deref().map(serde_json::from_str::<Json>);
    let j = match parsed {
        Some(Ok(j)) => j,
        Some(Err(e)) => {
            warnings.push(format!("{file}: line {}: `{name}` of compile {} is not JSON ({e}); skipped", env.line, rec.id));
            return;
        }
        // Torch writes these envelopes with no payload when provenance tracking is off (the
        // default): nothing was recorded, which is no defect of the log.
        None => return,
    };
    let obj = j.as_object().cloned().unwrap_or_default();
    match name {
        "inductor_provenance_tracking_node_mappings" => rec.provenance = Some(NodeMappings::from_json(&j)),
        "inductor_provenance_tracking_kernel_stack_traces" => {
            for (k, v) in obj {
                let traces = match v {
                    Json::Array(a) => a.into_iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
                    Json::String(s) => vec![s],
                    _ => Vec::new(),
                };
                rec.kernel_stack_traces.entry(k).or_default().extend(traces);
            }
        }
        _ => rec.triton_kernel_info.extend(obj),
    }
}

fn add_graph(file: &str, rec: &mut CompileRecord, stage: Stage, env: &Envelope, warnings: &mut Vec<String>) {
    let Some(payload) = env.payload.as_deref() else {
        warnings.push(format!("{file}: line {}: `{}` of compile {} has no payload; skipped", env.line, stage.name(), rec.id));
        return;
    };
    let mut name = format!("{}:{}", rec.id, stage.name());
    let same = rec.graphs.iter().filter(|(s, _)| *s == stage).count();
    if same > 0 {
        name = format!("{name}#{}", same + 1);
    }
    match fx::parse_graph(&name, payload) {
        Ok((graph, ws)) => {
            warnings.extend(ws.into_iter().map(|w| format!("{file}: near line {}: {w}", env.line)));
            rec.graphs.push((stage, graph));
        }
        Err(e) => warnings.push(format!(
            "{file}: line {}: `{}` of compile {}: {}; graph skipped",
            env.line + e.line,
            stage.name(),
            rec.id,
            e.message
        )),
    }
}

fn create_symbol(file: &str, rec: &mut CompileRecord, env: &Envelope, warnings: &mut Vec<String>) {
    let s = |k: &str| env.body.get(k).and_then(Json::as_str).unwrap_or("").to_string();
    let (name, val, vr) = (s("symbol"), s("val"), s("vr"));
    if name.is_empty() {
        warnings.push(format!("{file}: line {}: create_symbol without a symbol name; skipped", env.line));
        return;
    }
    let hint = val.parse::<i64>().ok();
    match (hint, parse_range(&vr)) {
        (Some(hint), Some(range)) => {
            let info = SymbolInfo { name, range, hint: Some(hint) };
            match rec.symbols.iter_mut().find(|x| x.name == info.name) {
                Some(old) => *old = info,
                None => rec.symbols.push(info),
            }
        }
        _ if name.starts_with("zf") || val.contains('.') || val.contains('e') => rec.float_symbols.push((name, val)),
        _ => warnings.push(format!("{file}: line {}: symbol `{name}`: cannot read value `{val}` / range `{vr}`; skipped", env.line)),
    }
}

/// `[2, int_oo]` → `Range { min: 2, max: None }`. Float ranges (`[-oo, oo]`) are `None`.
pub(super) fn parse_range(text: &str) -> Option<Range> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (lo, hi) = inner.split_once(',')?;
    let bound = |t: &str| -> Option<Option<i128>> {
        match t.trim() {
            "int_oo" | "-int_oo" => Some(None),
            t => t.parse::<i128>().ok().map(Some),
        }
    };
    let min = bound(lo)?.unwrap_or(i64::MIN as i128);
    let max = bound(hi)?;
    Some(Range { min, max })
}

impl TraceLog {
    /// The log as the app's [`Model`]: all stage graphs; the symbols and guards of all compiles,
    /// each once (by name / text); guards over float symbols are left to the per-compile view.
    pub fn into_model(self) -> Model {
        let mut model = Model::new(Format::TorchTrace, self.file.clone());
        model.warnings = self.warnings;
        model.torch_version = self.compiles.iter().find_map(|c| c.metrics.as_ref().and_then(|m| m.pytorch_version.clone()));
        for c in &self.compiles {
            for s in &c.symbols {
                if model.symbol(&s.name).is_none() {
                    model.symbols.push(s.clone());
                }
            }
        }
        let ints: BTreeSet<&str> = model.symbols.iter().map(|s| s.name.as_str()).collect();
        let mut guards = Vec::new();
        for c in &self.compiles {
            for g in &c.guards {
                let known = g.expr.free_symbols().iter().all(|s| ints.contains(&**s));
                if known && !guards.iter().any(|x: &Guard| x.source == g.source) {
                    guards.push(g.clone());
                } else if !known && !model.unread_guards.iter().any(|x| x.source == g.source) {
                    let reason = "reads a float symbol: only integer dimensions are bound here".to_string();
                    model.unread_guards.push(UnreadGuard { source: g.source.clone(), reason });
                }
            }
            for g in &c.unread_guards {
                if !model.unread_guards.iter().any(|x| x.source == g.source) {
                    model.unread_guards.push(g.clone());
                }
            }
        }
        model.guards = guards;
        for c in self.compiles {
            model.graphs.extend(c.graphs.into_iter().map(|(_, g)| g));
        }
        model
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_ids_read_as_torch_writes_them() {
        assert_eq!(parse_range("[2, int_oo]"), Some(Range { min: 2, max: None }));
        assert_eq!(parse_range("[0, 64]"), Some(Range { min: 0, max: Some(64) }));
        assert_eq!(parse_range("[-oo, oo]"), None);
        assert_eq!(parse_range("garbage"), None);
        let id = CompileId { compiled_autograd: None, frame: Some(0), frame_compile: Some(1), attempt: 0 };
        assert_eq!(id.to_string(), "0/1");
        let id = CompileId { attempt: 2, compiled_autograd: Some(3), ..id };
        assert_eq!(id.to_string(), "!3/0/1_2");
    }
}
