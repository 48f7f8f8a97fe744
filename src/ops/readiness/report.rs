//! Readiness of a whole model: every op of its graphs with its status on a backend, the nodes
//! that call it, and what changed between two torch versions.

use super::{Context, OpStatus, Status};
use crate::ir::{Format, Graph, Model};
use crate::ops::backend::{Backend, BackendTable};

/// One distinct op target of the model.
#[derive(Clone, Debug)]
pub struct OpEntry {
    /// As the graph spells it (`aten.dot.default`).
    pub target: String,
    /// Its status, or why the tables do not know it.
    pub status: Result<OpStatus, String>,
    /// The nodes calling it (`graph:node` where the model has several graphs).
    pub nodes: Vec<String>,
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
                    None => ops.push(OpEntry { target: node.target.clone(), status, nodes: vec![name] }),
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
