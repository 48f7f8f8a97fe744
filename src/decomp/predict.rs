//! Which nodes of an exported graph lite mode cannot keep on a given backend: an op with a
//! CompositeImplicitAutograd body and no kernel of that backend is expanded while tracing, before
//! lite mode decides anything (`_fused_rms_norm` on CPU; on XPU before torch 2.12). Read off the op
//! registry's kernel table for the graph's torch version.

use std::collections::BTreeMap;

use super::{is_symbolic_size_op, Marks};
use crate::ir::{Graph, NodeId};
use crate::ops::backend::{aten_name, functional_name, Backend, BackendTable};
use crate::ops::readiness::{Context, Status};

/// What a backend does to one node under lite mode.
#[derive(Clone, Debug, PartialEq)]
pub enum Fate {
    /// The backend has a kernel (or the op is a view): kept whole as an eager fallback.
    Kept,
    /// Marked: decomposed on purpose.
    Marked,
    /// No kernel on any backend Inductor targets: expanded everywhere, as expected (`linear`).
    Composite,
    /// No kernel here, a CompositeImplicitAutograd body: expanded by tracing. `into` is the
    /// expansion torch traced on a backend without the kernel, when the table has one.
    /// `via`: the op it always becomes first, which is the one lacking the kernel
    /// (`rms_norm` → `_fused_rms_norm`).
    Expanded { elsewhere: Vec<String>, into: Option<Vec<String>>, via: Option<String> },
    /// No kernel here, but the backend's CPU-fallback list has it (torch-xpu-ops'
    /// `XPUFallback.template` of the table's torch, or the user's dispatcher): kept whole and run on
    /// the CPU, a device round trip per call. What `readiness` calls `cpu_fallback`.
    CpuFallback { source: String },
    /// Neither a kernel here nor a composite body: the op cannot run on this backend at all (a
    /// kernel of the device the graph was exported on, like `_scaled_dot_product_flash_attention_for_cpu`).
    NoKernelNoComposite { elsewhere: Vec<String> },
    /// Not in the table (a custom op, or an ATen op newer than the table): not known.
    Unknown { reason: String },
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeFate {
    pub node: NodeId,
    pub name: String,
    pub target: String,
    pub fate: Fate,
}

impl NodeFate {
    /// Lite mode cannot keep this unmarked node on the backend.
    pub fn is_violation(&self) -> bool {
        matches!(self.fate, Fate::Expanded { .. } | Fate::NoKernelNoComposite { .. })
    }

    pub fn describe(&self, backend: Backend, torch: &str) -> String {
        let op = format!("aten.{}", aten_name(&self.target).map(|(n, _)| n).unwrap_or(&self.target));
        match &self.fate {
            Fate::Kept => format!("node `{}` ({}) has a {backend} kernel: kept", self.name, self.target),
            Fate::Marked => format!("node `{}` ({}) is marked: decomposed on purpose", self.name, self.target),
            Fate::Composite => format!(
                "node `{}` ({}) is composite on CPU, CUDA and XPU alike: expanded everywhere, as expected",
                self.name, self.target
            ),
            Fate::Expanded { elsewhere, via: Some(inner), .. } => format!(
                "node `{}` ({}): {op} is composite everywhere and becomes aten.{inner}, and {backend} has no kernel for aten.{inner} (kernels on {}; torch {torch}), so tracing expands it before lite mode can keep it",
                self.name,
                self.target,
                elsewhere.join(", ")
            ),
            Fate::Expanded { elsewhere, into, via: None } => format!(
                "node `{}` ({}): {backend} has no kernel for {op} (kernels on {}; torch {torch}), so tracing expands its CompositeImplicitAutograd body{} before lite mode can keep it",
                self.name,
                self.target,
                if elsewhere.is_empty() { "no backend".to_string() } else { elsewhere.join(", ") },
                into.as_ref().map(|i| format!(" into {}", i.join(", "))).unwrap_or_default()
            ),
            Fate::CpuFallback { source } => format!(
                "node `{}` ({}): {backend} has no kernel for {op}, but {source} lists it for the CPU fallback: kept whole and run on the CPU, a device round trip per call (torch {torch})",
                self.name, self.target
            ),
            Fate::NoKernelNoComposite { elsewhere } => format!(
                "node `{}` ({}): {backend} has no kernel for {op} and it has no composite body (kernels on {}; torch {torch}): it cannot run there",
                self.name,
                self.target,
                elsewhere.join(", ")
            ),
            Fate::Unknown { reason } => format!("node `{}` ({}): {reason}", self.name, self.target),
        }
    }
}

/// Lite mode as it happens on `backend`: the user's `marks` plus the nodes the backend cannot keep
/// (their CompositeImplicitAutograd body is traced in), and the fates that forced them.
pub fn lite_marks_on(graph: &Graph, backend: Backend, table: &BackendTable, marks: &Marks) -> (Marks, Vec<NodeFate>) {
    let forced: Vec<NodeFate> = predict(graph, backend, table, marks).into_iter().filter(NodeFate::is_violation).collect();
    (with_forced(marks, &forced), forced)
}

/// `marks` plus the nodes among `fates` the backend expands. An op with neither a kernel there nor
/// a composite body is not added: tracing cannot expand it, it simply cannot run.
pub fn with_forced<'a>(marks: &Marks, fates: impl IntoIterator<Item = &'a NodeFate>) -> Marks {
    let mut m = marks.clone();
    let mut forced: Vec<&NodeFate> = fates.into_iter().filter(|f| matches!(f.fate, Fate::Expanded { .. })).collect();
    forced.sort_by_key(|f| f.node);
    for f in forced {
        if !m.names.contains(&f.name) {
            m.names.push(f.name.clone());
        }
    }
    m
}

/// The fate of every op node of `graph` on `backend` under lite mode with `marks`.
pub fn predict(graph: &Graph, backend: Backend, table: &BackendTable, marks: &Marks) -> Vec<NodeFate> {
    let readiness = Context::new(table, backend);
    graph
        .node_ids()
        .filter(|&id| !is_symbolic_size_op(&graph.node(id).target))
        .map(|id| {
            let node = graph.node(id);
            NodeFate { node: id, name: node.name.clone(), target: node.target.clone(), fate: fate(&readiness, graph, id, marks) }
        })
        .collect()
}

fn fate(readiness: &Context, graph: &Graph, id: NodeId, marks: &Marks) -> Fate {
    let (table, backend) = (readiness.table, readiness.backend);
    let node = graph.node(id);
    let Some((name, _)) = aten_name(&node.target) else {
        return Fate::Unknown { reason: format!("not an ATen op: the kernels of `{}` are not known", node.target) };
    };
    let Some(facts) = table.op(&node.target) else {
        return Fate::Unknown { reason: format!("aten.{name} is not in the op table of torch {}", table.torch) };
    };
    if facts.view || facts.has_kernel(backend) {
        return Fate::Kept;
    }
    if marks.marks(node) {
        return Fate::Marked;
    }
    // A kernel registered for the device's key (the CPU fallback) is what dispatch finds, before
    // any composite body: the same precedence as `readiness`, so both commands say the same.
    if let Some(Ok(s)) = readiness.op(&node.target) {
        if s.status == Status::CpuFallback {
            let source = readiness.fallback_source().unwrap_or_else(|| "the CPU-fallback list".to_string());
            return Fate::CpuFallback { source };
        }
    }
    if facts.composite && facts.inductor_backends().is_empty() {
        // Expanded everywhere, into ops that may themselves be backend-dependent: `rms_norm`
        // becomes `_fused_rms_norm`, which CPU (and XPU before 2.12) has no kernel for.
        match composite_products(table, name).into_iter().find_map(|op| {
            let f = table.op_by_name(&op)?;
            (!f.has_kernel(backend) && f.composite && !f.inductor_backends().is_empty()).then_some((op, f))
        }) {
            Some((op, f)) => Fate::Expanded { elsewhere: f.kernels.clone(), into: traced_expansion(table, &op, backend), via: Some(op) },
            None => Fate::Composite,
        }
    } else if facts.composite {
        Fate::Expanded { elsewhere: facts.kernels.clone(), into: traced_expansion(table, name, backend), via: None }
    } else {
        Fate::NoKernelNoComposite { elsewhere: facts.kernels.clone() }
    }
}

/// The ops a composite-everywhere ATen op becomes, as torch traced the torch-level calls of the same
/// name on CUDA (`rms_norm` ← `torch.nn.functional.rms_norm` → `_fused_rms_norm`).
fn composite_products(table: &BackendTable, name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in crate::ops::backend::this_then_others(table) {
        for (key, exp) in &t.expansions {
            if key.rsplit('.').next() != Some(name) {
                continue;
            }
            for op in exp.get("cuda").into_iter().flatten().flatten() {
                if op != name && !out.contains(op) {
                    out.push(op.clone());
                }
            }
        }
    }
    out
}

/// What `name` becomes where it has no kernel, as torch traced it: a call whose CUDA trace is
/// exactly this op and whose trace on a backend without the kernel differs
/// (`torch.nn.functional.rms_norm`: CUDA `_fused_rms_norm`, CPU `pow, mean, add, rsqrt, mul`).
pub fn traced_expansion(table: &BackendTable, name: &str, backend: Backend) -> Option<Vec<String>> {
    let me = functional_name(name);
    let mut found: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for exp in crate::ops::backend::this_then_others(table).flat_map(|t| t.expansions.values()) {
        let Some(cuda) = exp.get("cuda") else { continue };
        if !cuda.iter().any(|alt| alt.len() == 1 && alt[0] == me) {
            continue;
        }
        // The CPU trace stands for any backend without the kernel.
        let lacks_on_cpu = table.op_by_name(name).is_some_and(|f| !f.has_kernel(Backend::Cpu));
        if backend != Backend::Cuda && lacks_on_cpu {
            for alt in exp.get("cpu").into_iter().flatten().filter(|a| !a.iter().any(|op| op == me)) {
                *found.entry(alt.clone()).or_insert(0) += 1;
            }
        }
    }
    found.into_iter().max_by_key(|(alt, n)| (*n, usize::MAX - alt.len())).map(|(alt, _)| alt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::backend::table_for;

    #[test]
    fn rms_norm_expansion_comes_from_the_cpu_trace() {
        let t = table_for(Some("2.11.0")).unwrap();
        let into = traced_expansion(t, "_fused_rms_norm", Backend::Xpu).unwrap();
        for op in ["pow", "mean", "rsqrt", "mul"] {
            assert!(into.iter().any(|o| o == op), "{op} missing from {into:?}");
        }
        assert_eq!(traced_expansion(t, "_fused_rms_norm", Backend::Cuda), None);
    }
}
