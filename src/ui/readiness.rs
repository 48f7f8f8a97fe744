//! The lite target's readiness in the app: what its ATen does with each op the lite view keeps
//! whole — its own kernel, the CPU (torch-xpu-ops' fallback list), or nothing. The statuses are
//! `ops::readiness`'s, the tables `xpu-workbench readiness` reads, for the lite target and the
//! kernel table [`AppState::refresh_backend_fates`](super::state::AppState) already picked; this
//! file only turns them into classes and sentences. Composite ops are not here: the target expands
//! them, which is [`NodeClass::BackendExpanded`].

use std::collections::HashMap;

use super::state::NodeClass;
use crate::ir::{Graph, NodeId};
use crate::ops::readiness::{call_status, Context, Mode, OpStatus, Status};
use crate::ops::{Backend, BackendTable};

/// The statuses of one graph's nodes on one backend, in one torch version's tables.
#[derive(Clone, Debug, Default)]
pub struct Readiness {
    pub backend: Option<Backend>,
    /// The kernel table's torch version (`2.15.0`).
    pub torch: String,
    /// Where the CPU-fallback list comes from (XPU only): torch-xpu-ops' branch, commit and file,
    /// or the dispatcher of the user's torch build.
    pub source: Option<String>,
    /// By node: its status, or why the tables do not know it. Nodes without a kernel (sizes,
    /// `getitem`) are absent.
    nodes: HashMap<NodeId, Result<OpStatus, String>>,
}

impl Readiness {
    /// Every node of `graph`; each distinct target is looked up once (a 12,000-node graph calls a
    /// few dozen ops), so this stays a few table lookups per op on the UI thread.
    pub fn of(graph: &Graph, table: &BackendTable, backend: Backend) -> Readiness {
        let ctx = Context::new(table, backend);
        let mut by_target: HashMap<&str, Option<Result<OpStatus, String>>> = HashMap::new();
        let mut nodes = HashMap::new();
        for id in graph.node_ids() {
            let target = graph.node(id).target.as_str();
            let status = by_target.entry(target).or_insert_with(|| call_status(&ctx, target));
            if let Some(s) = status {
                nodes.insert(id, s.clone());
            }
        }
        Readiness { backend: Some(backend), torch: table.torch.clone(), source: ctx.fallback_source(), nodes }
    }

    pub fn status(&self, id: NodeId) -> Option<&Result<OpStatus, String>> {
        self.nodes.get(&id)
    }

    /// How a node lite mode keeps whole is drawn: in the colour of what the target does with it
    /// at run time where that is not its own kernel.
    pub fn kept_class(&self, id: NodeId) -> NodeClass {
        match self.nodes.get(&id) {
            Some(Ok(s)) if s.status == Status::CpuFallback => NodeClass::CpuFallback,
            Some(Ok(s)) if s.status == Status::NotImplemented => NodeClass::NotImplemented,
            _ => NodeClass::Fallback,
        }
    }

    /// Why a node kept whole falls back to the CPU or fails on the target, naming where the
    /// tables say so; `None` for any other status.
    pub fn reason(&self, id: NodeId) -> Option<String> {
        let backend = self.backend?;
        let Some(Ok(s)) = self.nodes.get(&id) else { return None };
        let meaning = s.meaning(Mode::Lite, backend);
        match s.status {
            Status::CpuFallback => Some(match &self.source {
                Some(src) => format!("`{}` is in the CPU-fallback list of {src} (torch {}): {meaning}", s.key, self.torch),
                None => format!("`{}` falls back to the CPU on {backend} in torch {}: {meaning}", s.key, self.torch),
            }),
            Status::NotImplemented => {
                let list = self.source.as_ref().map(|src| format!(" and is not in the CPU-fallback list of {src}")).unwrap_or_default();
                Some(format!("`{}` has no {backend} kernel and no composite body in torch {}{list}: {meaning}", s.key, self.torch))
            }
            Status::Native | Status::Composite => None,
        }
    }

    /// The inspector's one-line status of any node: `native (torch 2.15.0)`, or why it is not known.
    pub fn line(&self, id: NodeId) -> Option<String> {
        Some(match self.nodes.get(&id)? {
            Ok(s) => format!("{} ({}, torch {})", s.status, s.key, self.torch),
            Err(why) => format!("not known: {why}"),
        })
    }
}

/// A module box's readiness line: "2 ops fall back to CPU · 1 op not implemented on XPU", or
/// empty when it holds neither.
pub fn summary(cpu_fallback: usize, not_implemented: usize, backend: Option<Backend>) -> String {
    let ops = |n: usize| if n == 1 { "1 op".to_string() } else { format!("{n} ops") };
    let mut parts = Vec::new();
    if cpu_fallback > 0 {
        parts.push(format!("{} fall{} back to CPU", ops(cpu_fallback), if cpu_fallback == 1 { "s" } else { "" }));
    }
    if not_implemented > 0 {
        let on = backend.map(|b| format!(" on {b}")).unwrap_or_default();
        parts.push(format!("{} not implemented{on}", ops(not_implemented)));
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::table_for;

    fn graph(targets: &[&str]) -> Graph {
        let mut g = Graph::new("g");
        for (i, t) in targets.iter().enumerate() {
            g.add_node(&format!("n{i}"), t, Vec::new(), Vec::new(), Default::default()).unwrap();
        }
        g
    }

    const TARGETS: [&str; 6] =
        ["aten.cholesky_inverse.default", "aten.dot.default", "aten.linalg_lu.default", "_operator.getitem", "my.op.default", "aten.add.Tensor"];

    #[test]
    fn classes_and_reasons_on_xpu() {
        let g = graph(&TARGETS);
        let r = Readiness::of(&g, table_for(Some("2.15.0")).unwrap(), Backend::Xpu);
        let id = |i: usize| g.node_ids().nth(i).unwrap();
        assert_eq!(r.kept_class(id(0)), NodeClass::CpuFallback);
        assert_eq!(r.kept_class(id(1)), NodeClass::Fallback, "dot has had an XPU kernel since 2.11");
        assert_eq!(r.kept_class(id(2)), NodeClass::NotImplemented);
        assert_eq!(r.kept_class(id(3)), NodeClass::Fallback);
        assert!(r.status(id(3)).is_none(), "getitem has no kernel to ask about");
        assert!(r.line(id(4)).unwrap().starts_with("not known: "));
        let why = r.reason(id(0)).unwrap();
        assert!(why.contains("torch-xpu-ops main") && why.contains("XPUFallback") && why.contains("falls back to the CPU"), "{why}");
        let why = r.reason(id(2)).unwrap();
        assert!(why.contains("no XPU kernel") && why.contains("PYTORCH_ENABLE_XPU_FALLBACK=1") && why.contains("linalg_lu.out"), "{why}");
        assert_eq!(r.reason(id(5)), None);
        assert_eq!(r.line(id(5)).unwrap(), "native (add.Tensor, torch 2.15.0)");
    }

    /// The same graph in another version and on other backends: the tables decide, not the op.
    #[test]
    fn versions_and_backends_change_the_classes() {
        let g = graph(&TARGETS);
        let id = |i: usize| g.node_ids().nth(i).unwrap();
        let old = Readiness::of(&g, table_for(Some("2.10.0")).unwrap(), Backend::Xpu);
        assert_eq!(old.kept_class(id(1)), NodeClass::CpuFallback);
        assert!(old.reason(id(1)).unwrap().contains("release/2.10"));
        for b in [Backend::Cuda, Backend::Cpu] {
            let r = Readiness::of(&g, table_for(Some("2.15.0")).unwrap(), b);
            assert_eq!(r.kept_class(id(0)), NodeClass::Fallback, "{b}");
            assert_eq!(r.source, None, "{b}");
        }
    }

    #[test]
    fn module_summaries() {
        assert_eq!(summary(2, 0, Some(Backend::Xpu)), "2 ops fall back to CPU");
        assert_eq!(summary(1, 1, Some(Backend::Xpu)), "1 op falls back to CPU · 1 op not implemented on XPU");
        assert_eq!(summary(0, 3, Some(Backend::Cpu)), "3 ops not implemented on CPU");
        assert_eq!(summary(0, 0, Some(Backend::Xpu)), "");
    }
}
