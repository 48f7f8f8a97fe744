//! Readiness of a whole model: every op of its graphs with its status on a backend, the nodes
//! that call it, and what changed between two torch versions.

use std::collections::HashSet;

use super::{Context, OpStatus, Status};
use crate::ir::{Format, Graph, Model};
use crate::ops::backend::{aten_name, functional_name, this_then_others, Backend, BackendTable};

/// One distinct op target of the model.
#[derive(Clone, Debug)]
pub struct OpEntry {
    /// As the graph spells it (`aten.dot.default`).
    pub target: String,
    /// Its status, or why the tables do not know it.
    pub status: Result<OpStatus, String>,
    /// The nodes calling it (`graph:node` where the model has several graphs).
    pub nodes: Vec<String>,
    /// Called in a log's dynamo graph but not in its AOT graph: the log's own device expanded it
    /// (`_fused_rms_norm` in a CPU log) or, in default mode, Inductor's table decomposed it; either
    /// way the AOT graph cannot say what another backend does with the op.
    pub from_dynamo: bool,
}

#[derive(Clone, Debug)]
pub struct Report {
    pub backend: Backend,
    /// The kernel table's torch version (`2.11.0`).
    pub torch: String,
    /// `embedded`, or the file of a table refreshed from the user's torch.
    pub table_origin: String,
    /// Where the CPU-fallback list came from (XPU only).
    pub fallback_source: Option<String>,
    /// In order of first appearance.
    pub ops: Vec<OpEntry>,
}

/// The graphs whose ops are dispatched to ATen: a TORCH_TRACE log's AOT graphs (what lite mode
/// keeps and runs; the dynamo graphs hold torch-level calls), the first graph of anything else.
/// A log without AOT graphs gives its dynamo graphs, whose calls the tables do not know.
pub fn graphs_of(model: &Model) -> Vec<&Graph> {
    if model.format == Format::TorchTrace {
        let aot: Vec<&Graph> = model.graphs.iter().filter(|g| g.name.contains(":aot_")).collect();
        if !aot.is_empty() {
            return aot;
        }
        return model.graphs.iter().filter(|g| g.name.contains(":dynamo_")).collect();
    }
    model.graphs.iter().take(1).collect()
}

impl Report {
    pub fn of(graphs: &[&Graph], table: &BackendTable, backend: Backend) -> Report {
        let ctx = Context::new(table, backend);
        let mut ops: Vec<OpEntry> = Vec::new();
        let several = graphs.len() > 1;
        for g in graphs {
            for node in &g.nodes {
                let Some(status) = ctx.op(&node.target) else { continue };
                let name = if several { format!("{}:{}", g.name, node.name) } else { node.name.clone() };
                match ops.iter_mut().find(|e| e.target == node.target) {
                    Some(e) => e.nodes.push(name),
                    None => ops.push(OpEntry { target: node.target.clone(), status, nodes: vec![name], from_dynamo: false }),
                }
            }
        }
        Report {
            backend,
            torch: table.torch.clone(),
            table_origin: table.origin.clone(),
            fallback_source: ctx.fallback_source(),
            ops,
        }
    }

    /// The report of a whole model: [`graphs_of`], and for a TORCH_TRACE log also the ATen ops its
    /// dynamo graphs call that the same compile's AOT graphs lack — what the log's device expanded
    /// while tracing, which the asked backend may well keep.
    pub fn of_model(model: &Model, table: &BackendTable, backend: Backend) -> Report {
        let graphs = graphs_of(model);
        let mut report = Report::of(&graphs, table, backend);
        if model.format != Format::TorchTrace || graphs.iter().all(|g| g.name.contains(":dynamo_")) {
            return report;
        }
        let ctx = Context::new(table, backend);
        for g in model.graphs.iter().filter(|g| g.name.contains(":dynamo_")) {
            let compile = g.name.split(':').next().unwrap_or("");
            let kept: HashSet<&str> = graphs
                .iter()
                .filter(|a| a.name.split(':').next() == Some(compile))
                .flat_map(|a| a.nodes.iter().filter_map(|n| aten_name(&n.target).map(|(name, _)| functional_name(name))))
                .collect();
            for node in &g.nodes {
                let Some(op) = kernel_op(table, &node.target) else { continue };
                if kept.contains(functional_name(&op)) {
                    continue;
                }
                let target = format!("aten.{op}.default");
                let Some(status) = ctx.op(&target) else { continue };
                let name = format!("{}:{}", g.name, node.name);
                match report.ops.iter_mut().find(|e| e.target == target) {
                    Some(e) => e.nodes.push(name),
                    None => report.ops.push(OpEntry { target, status, nodes: vec![name], from_dynamo: true }),
                }
            }
        }
        report
    }

    /// The ops of one status.
    pub fn with(&self, status: Status) -> impl Iterator<Item = &OpEntry> {
        self.ops.iter().filter(move |e| e.status.as_ref().is_ok_and(|s| s.status == status))
    }

    pub fn unknown(&self) -> impl Iterator<Item = &OpEntry> {
        self.ops.iter().filter(|e| e.status.is_err())
    }

    /// 0 every op native, 1 some op is not, 3 nothing else wrong but some op is not known.
    pub fn exit_code(&self) -> u8 {
        let not_native = self.ops.iter().any(|e| e.status.as_ref().is_ok_and(|s| s.status != Status::Native));
        if not_native {
            1
        } else if self.unknown().next().is_some() {
            3
        } else {
            0
        }
    }
}

/// The status of one node's call in any graph of a model: an ATen or torchvision op as
/// [`Context::op`] has it, a dynamo graph's torch-level call through the one ATen op it is at the
/// kernel level ([`kernel_op`]: `torch.dot` → `dot`), the way [`Report::of_model`] reads a log's
/// dynamo graph. `None`: nothing with a kernel (sizes, `getitem`).
pub fn call_status(ctx: &Context, target: &str) -> Option<Result<OpStatus, String>> {
    let status = ctx.op(target)?;
    if status.is_ok() || aten_name(target).is_some() || super::torchvision_name(target).is_some() {
        return Some(status);
    }
    match kernel_op(ctx.table, target) {
        Some(op) => ctx.op(&format!("aten.{op}.default")),
        None => Some(status),
    }
}

/// The ATen op a dynamo-graph call is at the kernel level: the op itself (`aten._fused_rms_norm`),
/// or the one op every CUDA trace of a call of that name gave, where that op is named after the call
/// (`torch.rms_norm` → `_fused_rms_norm`, `torch.dot` → `dot`; not `linear` → `addmm`, nor SDPA →
/// CUDA's own attention kernel, which says nothing of another backend's).
fn kernel_op(table: &BackendTable, target: &str) -> Option<String> {
    if let Some((name, _)) = aten_name(target) {
        return Some(name.to_string());
    }
    let call = target.rsplit('.').next()?;
    let mut found: Option<&str> = None;
    for t in this_then_others(table) {
        for (key, exp) in &t.expansions {
            if key.rsplit('.').next() != Some(call) {
                continue;
            }
            for alt in exp.get("cuda").into_iter().flatten() {
                match (alt.as_slice(), found) {
                    ([op], None) => found = Some(op),
                    ([op], Some(f)) if op == f => {}
                    _ => return None,
                }
            }
        }
    }
    found.filter(|op| op.ends_with(call)).map(str::to_string)
}

/// One op whose status differs between two reports of the same graphs.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub target: String,
    /// `None`: not known to that version's tables.
    pub before: Option<Status>,
    pub after: Option<Status>,
    pub nodes: usize,
}

/// The ops of `before` and `after` (same graphs, two torch versions) whose status changed.
pub fn changes(before: &Report, after: &Report) -> Vec<Change> {
    let status = |r: &Report, target: &str| -> Option<Status> {
        r.ops.iter().find(|e| e.target == target).and_then(|e| e.status.as_ref().ok().map(|s| s.status))
    };
    before
        .ops
        .iter()
        .filter_map(|e| {
            let (b, a) = (status(before, &e.target), status(after, &e.target));
            (b != a).then(|| Change { target: e.target.clone(), before: b, after: a, nodes: e.nodes.len() })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::backend::table_for;

    fn graph(targets: &[&str]) -> Graph {
        let mut g = Graph::new("g");
        for (i, t) in targets.iter().enumerate() {
            g.add_node(&format!("n{i}"), t, Vec::new(), Vec::new(), Default::default()).unwrap();
        }
        g
    }

    #[test]
    fn the_kernel_op_of_a_dynamo_call() {
        let t = table_for(Some("2.15")).unwrap();
        assert_eq!(kernel_op(t, "aten._fused_rms_norm").as_deref(), Some("_fused_rms_norm"));
        assert_eq!(kernel_op(t, "torch.rms_norm").as_deref(), Some("_fused_rms_norm"));
        assert_eq!(kernel_op(t, "torch.dot").as_deref(), Some("dot"));
        assert_eq!(kernel_op(t, "torch._C._nn.linear"), None);
        assert_eq!(kernel_op(t, "torch._C._nn.scaled_dot_product_attention"), None);
    }

    #[test]
    fn a_dynamo_call_has_the_status_of_its_kernel_op() {
        let t = table_for(Some("2.10.0")).unwrap();
        let ctx = Context::new(t, Backend::Xpu);
        assert_eq!(call_status(&ctx, "torch.dot").unwrap().unwrap().status, Status::CpuFallback);
        assert_eq!(call_status(&ctx, "aten.dot.default").unwrap().unwrap().status, Status::CpuFallback);
        assert!(call_status(&ctx, "_operator.getitem").is_none());
        // No single kernel op: as unknown as before, with the same reason.
        let why = call_status(&ctx, "torch._C._nn.linear").unwrap().unwrap_err();
        assert!(why.contains("not an ATen op"), "{why}");
    }

    #[test]
    fn a_graph_by_status_and_its_history() {
        let g = graph(&["aten.dot.default", "aten.add.Tensor", "aten.dot.default", "aten._fused_rms_norm.default", "_operator.getitem", "my.custom.default"]);
        let r = Report::of(&[&g], table_for(Some("2.10.0")).unwrap(), Backend::Xpu);
        assert_eq!(r.ops.len(), 4);
        assert_eq!(r.with(Status::CpuFallback).next().unwrap().nodes, ["n0", "n2"]);
        assert_eq!(r.with(Status::Composite).count(), 1);
        assert_eq!(r.unknown().count(), 1);
        assert_eq!(r.exit_code(), 1);
        assert!(r.fallback_source.as_deref().unwrap().contains("release/2.10"));
        let later = Report::of(&[&g], table_for(Some("2.12.0")).unwrap(), Backend::Xpu);
        let c = changes(&r, &later);
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!(c[0], Change { target: "aten.dot.default".into(), before: Some(Status::CpuFallback), after: Some(Status::Native), nodes: 2 });
        assert_eq!(c[1].after, Some(Status::Native));
        assert_eq!(later.exit_code(), 3);
    }
}
