//! `check-lite FILE`: did a lite-mode compile decompose only what the user marked?
//!
//! Lite mode keeps every op and falls back to its eager kernel, except nodes the user marked with
//! `fx_traceback.annotate({"compile_with_inductor": ...})`. An AOT graph that holds ops which only
//! appear by decomposing an unmarked op (`var_mean`/`rsqrt` where the user wrote `layer_norm`) is
//! the bug this command catches. Today it reads TORCH_TRACE logs; other inputs get their own branch
//! in [`run`].

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;

use crate::import::{self, trace};
use crate::import::trace::{CompileRecord, SourceLoc, Stage, TraceLog};
use crate::ir::{Format, Graph, NodeId};

/// One decomposition lite mode must not apply unasked: the ops a user writes (`originals`, in any
/// spelling dynamo or ATen gives them) and the ops only their decomposition produces (`products`).
pub struct DecompRule {
    pub originals: &'static [&'static str],
    pub products: &'static [&'static str],
}

/// The decompositions checked, one entry per user-level op.
pub const LITE_RULES: &[DecompRule] = &[
    DecompRule { originals: &["layer_norm", "native_layer_norm"], products: &["var_mean", "rsqrt"] },
    DecompRule { originals: &["group_norm", "native_group_norm"], products: &["var_mean", "rsqrt"] },
    DecompRule {
        originals: &["batch_norm", "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training"],
        products: &["var_mean", "rsqrt"],
    },
    DecompRule { originals: &["rms_norm"], products: &["rsqrt"] },
    DecompRule { originals: &["gelu"], products: &["erf", "tanh"] },
    DecompRule { originals: &["softmax", "_softmax"], products: &["amax", "exp", "sum", "div"] },
    DecompRule { originals: &["log_softmax", "_log_softmax"], products: &["amax", "exp", "log", "sum"] },
    DecompRule { originals: &["silu"], products: &["sigmoid"] },
    DecompRule { originals: &["mish"], products: &["softplus", "tanh"] },
    DecompRule { originals: &["hardswish"], products: &["clamp", "clamp_min", "clamp_max", "minimum", "maximum"] },
];

/// An op in an AOT graph that came from decomposing an op the user did not mark.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub compile_id: String,
    pub graph: String,
    pub node: String,
    pub target: String,
    /// The dynamo-graph op it came from (`layer_norm`) and that node's name and target.
    pub original_op: String,
    pub original_node: String,
    pub original_target: String,
    pub location: SourceLoc,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}: node `{}` ({}) comes from decomposing {} (dynamo node `{}`: {}), which is not marked compile_with_inductor, at {}",
            self.compile_id,
            self.graph,
            self.node,
            self.target,
            self.original_op,
            self.original_node,
            self.original_target,
            self.location
        )
    }
}

pub fn run(file: &Path, marks: &[String]) -> ExitCode {
    match import::detect(file) {
        Ok(Format::TorchTrace) if marks.is_empty() => run_log(file),
        Ok(Format::TorchTrace) => super::fail(
            super::EXIT_USAGE,
            &format!("{}: a log records its marks (compile_with_inductor); --mark applies to .pt2 files", file.display()),
        ),
        Ok(Format::Pt2) => match super::load(file) {
            Ok(model) => super::decompose::check_lite_pt2(&model, marks),
            Err(code) => code,
        },
        Ok(other) => super::fail(
            super::EXIT_USAGE,
            &format!("{}: check-lite reads .pt2 archives and TORCH_TRACE logs, not {} files", file.display(), other.name()),
        ),
        Err(e) => super::fail(super::EXIT_USAGE, &e),
    }
}

fn run_log(file: &Path) -> ExitCode {
    let log = match trace::load_log(file) {
        Ok(l) => l,
        Err(e) => return super::fail(super::EXIT_USAGE, &e),
    };
    for w in &log.warnings {
        eprintln!("warning: {w}");
    }
    let (violations, notes) = check_log(&log);
    for n in &notes {
        eprintln!("note: {n}");
    }
    for v in &violations {
        println!("{v}");
    }
    let aot = log.compiles.iter().flat_map(|c| &c.graphs).filter(|(s, _)| s.is_aot()).count();
    if violations.is_empty() {
        println!("ok: {aot} AOT graph(s) in {} compile(s): only marked ops were decomposed", log.compiles.len());
        ExitCode::SUCCESS
    } else {
        let mut origins: Vec<&str> = violations.iter().map(|v| v.original_op.as_str()).collect();
        origins.sort_unstable();
        origins.dedup();
        println!("FAIL: {} node(s) from decomposing unmarked ops: {}", violations.len(), origins.join(", "));
        ExitCode::from(super::EXIT_FAILED)
    }
}

/// Every violation in every compile's AOT graphs, and notes on graphs that could not be checked.
pub fn check_log(log: &TraceLog) -> (Vec<Violation>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for rec in &log.compiles {
        let aot: Vec<&Graph> = rec.graphs.iter().filter(|(s, _)| s.is_aot()).map(|(_, g)| g).collect();
        if aot.is_empty() {
            continue;
        }
        let Some(dynamo) = rec.graph(Stage::DynamoOutput) else {
            notes.push(format!("compile {}: no dynamo graph in the log, so its AOT graphs cannot be attributed", rec.id));
            continue;
        };
        for g in aot {
            out.extend(check_graph(rec, dynamo, g));
        }
    }
    (out, notes)
}

fn check_graph(rec: &CompileRecord, dynamo: &Graph, aot: &Graph) -> Vec<Violation> {
    let origins: HashMap<NodeId, Vec<NodeId>> = trace::stage_provenance(dynamo, aot).into_iter().collect();
    let mut out = Vec::new();
    for id in aot.node_ids() {
        let node = aot.node(id);
        let op = base_op(&node.target);
        let Some(from) = origins.get(&id) else { continue };
        let Some(loc) = trace::node_location(aot, id) else { continue };
        for rule in LITE_RULES.iter().filter(|r| r.products.contains(&op)) {
            let Some(&orig) = from.iter().find(|&&d| rule.originals.contains(&base_op(&dynamo.node(d).target))) else {
                continue;
            };
            // The op itself survived at this location: the product came from something else there.
            let kept = aot.node_ids().any(|o| {
                rule.originals.contains(&base_op(&aot.node(o).target)) && trace::node_location(aot, o).as_ref() == Some(&loc)
            });
            let marked = dynamo.node(orig).meta.compile_with_inductor() || node.meta.compile_with_inductor();
            if kept || marked {
                continue;
            }
            let original = dynamo.node(orig);
            out.push(Violation {
                compile_id: rec.id.to_string(),
                graph: aot.name.clone(),
                node: node.name.clone(),
                target: node.target.clone(),
                original_op: base_op(&original.target).to_string(),
                original_node: original.name.clone(),
                original_target: original.target.clone(),
                location: loc.clone(),
            });
            break;
        }
    }
    out
}

/// The op's own name in any spelling: `aten.var_mean.correction` → `var_mean`,
/// `torch.nn.functional.layer_norm` → `layer_norm`, `Tensor.softmax` → `softmax`.
pub fn base_op(target: &str) -> &str {
    let t = target.strip_prefix("torch.ops.").unwrap_or(target);
    for ns in ["aten.", "prims."] {
        if let Some(rest) = t.strip_prefix(ns) {
            return rest.split('.').next().unwrap_or(rest);
        }
    }
    t.rsplit('.').next().unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names_are_read_in_every_spelling() {
        assert_eq!(base_op("aten.var_mean.correction"), "var_mean");
        assert_eq!(base_op("aten._softmax.default"), "_softmax");
        assert_eq!(base_op("torch.nn.functional.layer_norm"), "layer_norm");
        assert_eq!(base_op("torch._C._nn.gelu"), "gelu");
        assert_eq!(base_op("Tensor.softmax"), "softmax");
        assert_eq!(base_op("prims.convert_element_type.default"), "convert_element_type");
    }
}
