//! The sections of a TORCH_TRACE log's report: check-lite's verdicts, readiness of the AOT graphs'
//! ops, Inductor's kernels with a profile's device time, guards and ranges, versions and config.
//! Each is what the matching CLI command computes (`check-lite`, `readiness`, `kernels`), through
//! the same library calls.

use std::collections::HashMap;
use std::path::Path;

use super::graph::{self, Overlay};
use super::types::*;
use super::ReportError;
use crate::decomp::lite_trace;
use crate::import::trace::{self, FileAccess, KernelSource, KernelTable, Stage, TraceLog};
use crate::ops::backend::Backend;
use crate::profile::attribute::{attribute, CompiledKernels, KernelRef};
use crate::profile::kernel_time::kernel_times;
use crate::profile::kineto;

/// Fills `r` from `log`; `files` says where the output code the log only names may be read. The
/// log is consumed last, as the model readiness reads (a copy would double a big log's memory).
pub fn fill(r: &mut Report, log: TraceLog, files: &FileAccess, profile: Option<&Path>, backend: Backend) -> Result<(), ReportError> {
    fill_sections(r, &log, files, profile)?;
    let torch = lite_trace::log_torch(&log);
    match super::readiness_section(&log.into_model(), torch.as_deref(), backend) {
        Ok(sec) => r.readiness = Some(sec),
        Err(why) => r.warnings.push(why),
    }
    Ok(())
}

fn fill_sections(r: &mut Report, log: &TraceLog, files: &FileAccess, profile: Option<&Path>) -> Result<(), ReportError> {
    r.warnings.extend(log.warnings.iter().cloned());
    versions_and_config(r, log);
    let mut overlays: HashMap<String, HashMap<String, Overlay>> = HashMap::new();
    check_lite(r, log, &mut overlays);
    kernels(r, log, files, profile, &mut overlays)?;
    guards(r, log);
    for c in &log.compiles {
        for (stage, g) in &c.graphs {
            let label = format!("compile {}: {}", c.id, stage_label(*stage));
            r.graphs.push(graph::view(g, &label, overlays.get(&g.name).unwrap_or(&HashMap::new())));
        }
    }
    // Before: the dynamo graph of the first compile Inductor finished (a restarted attempt logs its
    // dynamo and AOT graphs too); after: the same compile's last stage.
    let done = log.compiles.iter().find(|c| c.graph(Stage::InductorPostGrad).is_some());
    let first = done.or_else(|| log.compiles.iter().find(|c| !c.graphs.is_empty()));
    if let Some(c) = first {
        let at = |g: &trace::CompileRecord, s: Stage| g.graph(s).and_then(|g| r.graphs.iter().position(|v| v.name == g.name));
        let before = at(c, Stage::DynamoOutput).or_else(|| c.graphs.first().and_then(|(s, _)| at(c, *s)));
        let after = [Stage::InductorPostGrad, Stage::AotInference, Stage::AotForward, Stage::AotJoint]
            .iter()
            .find_map(|s| at(c, *s))
            .filter(|a| Some(*a) != before);
        r.panes = [before, after];
    }
    Ok(())
}

fn stage_label(s: Stage) -> &'static str {
    match s {
        Stage::DynamoOutput => "dynamo graph (before)",
        Stage::AotJoint => "AOT joint graph",
        Stage::AotForward => "AOT forward graph",
        Stage::AotBackward => "AOT backward graph",
        Stage::AotInference => "AOT inference graph",
        Stage::InductorPostGrad => "post-grad graph (after)",
    }
}

fn versions_and_config(r: &mut Report, log: &TraceLog) {
    for c in &log.compiles {
        let Some(m) = &c.metrics else { continue };
        let scope = format!("compile {}", c.id);
        for (name, value) in &m.versions {
            // The same versions in every compile: listed once.
            if !r.versions.iter().any(|e| e.name == *name && e.value == *value) {
                r.versions.push(Entry { name: name.clone(), scope: scope.clone(), value: value.clone() });
            }
        }
        for (name, value) in &m.config {
            if !r.config.iter().any(|e| e.name == *name && e.value == *value) {
                r.config.push(Entry { name: name.clone(), scope: scope.clone(), value: value.clone() });
            }
        }
    }
}

fn check_lite(r: &mut Report, log: &TraceLog, overlays: &mut HashMap<String, HashMap<String, Overlay>>) {
    let check = lite_trace::check_log(log);
    let violations = check.violations().count();
    let status = if violations > 0 {
        "violations"
    } else if !check.unverified.is_empty() {
        "unverified"
    } else {
        "ok"
    };
    let kept = check.findings.iter().filter(|f| f.verdict == lite_trace::Verdict::Kept).count();
    let summary = format!(
        "{} op(s) compared in {} compile(s): {kept} kept, {violations} unmarked op(s) decomposed, {} not checked; op tables of torch {} (log: {})",
        check.findings.len(),
        check.compared,
        check.unverified.len(),
        check.table_torch,
        check.log_torch.as_deref().unwrap_or("version not recorded")
    );
    let mut rows: Vec<CheckRow> = check
        .findings
        .iter()
        .map(|f| CheckRow {
            compile: f.compile_id.clone(),
            node: f.node.clone(),
            target: f.target.clone(),
            class: f.verdict.class().to_string(),
            violation: f.verdict.is_violation(),
            detail: f.to_string(),
        })
        .collect();
    rows.extend(check.backward.iter().map(|b| CheckRow {
        compile: b.compile_id.clone(),
        node: b.forward_op.clone(),
        target: b.op.clone(),
        class: b.class().to_string(),
        violation: false,
        detail: b.to_string(),
    }));
    for f in &check.findings {
        let graph = format!("{}:{}", f.compile_id, Stage::DynamoOutput.name());
        let o = overlays.entry(graph).or_default().entry(f.node.clone()).or_default();
        o.verdict = Some(f.verdict.class().to_string());
    }
    r.check_lite = Some(CheckSection { status: status.into(), summary, rows, unverified: check.unverified.iter().map(|u| u.to_string()).collect() });
}

fn kernels(
    r: &mut Report,
    log: &TraceLog,
    files: &FileAccess,
    profile: Option<&Path>,
    overlays: &mut HashMap<String, HashMap<String, Overlay>>,
) -> Result<(), ReportError> {
    let mut ids = Vec::new();
    let mut tables: Vec<Vec<KernelTable>> = Vec::new();
    for c in log.compiles.iter().filter(|c| !c.output_code.is_empty()) {
        ids.push(c.id.to_string());
        tables.push(trace::kernels(c, files));
    }
    let mut section = KernelSection::default();
    for (id, ts) in ids.iter().zip(&tables) {
        for t in ts {
            section.notes.extend(t.notes.iter().map(|n| format!("compile {id}: {n}")));
            if let Some(state) = &t.named_file {
                r.files.push(FileEntry { role: format!("output code of compile {id}"), state: state.clone() });
            }
        }
    }
    let compiled: Vec<CompiledKernels<'_>> = ids.iter().zip(&tables).map(|(id, t)| CompiledKernels { compile: id, tables: t }).collect();
    let times = match profile {
        Some(p) => {
            let t = kineto::load(p).map_err(|e| ReportError::Input(e.to_string()))?;
            r.warnings.extend(t.warnings.iter().cloned());
            let owners = attribute(&t, &compiled);
            section.profile = Some(p.display().to_string());
            Some(kernel_times(&t, &compiled, &owners))
        }
        None => None,
    };
    for (ci, c) in compiled.iter().enumerate() {
        for (ti, t) in c.tables.iter().enumerate() {
            for (ki, k) in t.kernels.iter().enumerate() {
                let kt = times.as_ref().map(|tm| tm.per_kernel.get(&KernelRef { compile: ci, table: ti, kernel: ki }).cloned().unwrap_or_default());
                section.rows.push(KernelRow {
                    compile: c.compile.to_string(),
                    name: k.name.clone(),
                    kind: format!("{:?}", k.kind).to_lowercase(),
                    nodes: k.nodes.clone(),
                    calls: kt.as_ref().map(|t| t.calls),
                    device_us: kt.as_ref().map(|t| t.device_us),
                    median_us: kt.as_ref().map(|t| t.median_us),
                    source: match &k.source {
                        KernelSource::Code { text, .. } => Some(text.clone()),
                        _ => None,
                    },
                });
                let dynamo = overlays.entry(format!("{}:{}", c.compile, Stage::DynamoOutput.name())).or_default();
                for n in &k.nodes {
                    dynamo.entry(n.clone()).or_default().kernels.push(k.name.clone());
                }
                // A fused kernel's time cannot be split by what each node did: evenly, as `kernels` does.
                let share = kt.as_ref().filter(|_| !k.post_grad_nodes.is_empty()).map(|t| t.device_us / k.post_grad_nodes.len() as f64);
                let post = overlays.entry(format!("{}:{}", c.compile, Stage::InductorPostGrad.name())).or_default();
                for n in &k.post_grad_nodes {
                    let o = post.entry(n.clone()).or_default();
                    o.kernels.push(k.name.clone());
                    if let Some(s) = share {
                        o.device_us = Some(o.device_us.unwrap_or(0.0) + s);
                    }
                }
            }
        }
    }
    if let Some(t) = &times {
        section.attributed_us = Some(t.attributed_us);
        section.unattributed_us = Some(t.unattributed_us);
        section.outside_us = Some(t.outside_us);
        section.unattributed = t.unattributed.iter().map(|u| format!("{} ({}×, {:.1} µs): {}", u.name, u.ops, u.device_us, u.why)).collect();
        for n in &t.nodes {
            let dynamo = overlays.entry(format!("{}:{}", n.compile, Stage::DynamoOutput.name())).or_default();
            dynamo.entry(n.node.clone()).or_default().device_us = Some(n.device_us);
        }
    }
    if !section.rows.is_empty() || section.profile.is_some() || !section.notes.is_empty() {
        r.kernels = Some(section);
    }
    Ok(())
}

fn guards(r: &mut Report, log: &TraceLog) {
    for c in &log.compiles {
        let g = CompileGuards {
            compile: c.id.to_string(),
            symbols: c
                .symbols
                .iter()
                .map(|s| format!("{} ∈ {}{}", s.name, s.range, s.hint.map(|h| format!(" (hint {h})")).unwrap_or_default()))
                .chain(c.float_symbols.iter().map(|(n, v)| format!("{n} = {v} (float)")))
                .collect(),
            guards: c.guards.iter().map(|g| g.source.clone()).collect(),
            unread: c.unread_guards.iter().map(|g| format!("{}: {}", g.source, g.reason)).collect(),
            specializations: c
                .specializations
                .iter()
                .map(|s| format!("{} = {} ({}; {})", s.symbol, s.value, s.reason, s.sources.join(", ")))
                .collect(),
        };
        if !(g.symbols.is_empty() && g.guards.is_empty() && g.unread.is_empty() && g.specializations.is_empty()) {
            r.guards.push(g);
        }
    }
}
