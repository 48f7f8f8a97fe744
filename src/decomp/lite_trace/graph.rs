//! What the check reads off the graphs: AOT ops by source location, which dynamo nodes compute
//! tensors, identity-shaped nodes, devices.

use std::collections::{BTreeMap, HashMap};

use crate::import::trace::{node_location, SourceLoc};
use crate::ir::{Graph, NodeId, ValueKind};
use crate::ops::backend::{self, functional_name, Backend};

/// A source location as a map key: (file, line, code); `None` for nodes torch wrote none for.
pub(super) type LocKey = Option<(String, u32, String)>;

/// The AOT graph's ATen ops by source location (functional names, and whether the node is
/// marked), or all in one when the graph carries no locations.
pub(super) struct Buckets {
    located: bool,
    by_loc: HashMap<LocKey, Vec<(String, bool)>>,
}

impl Buckets {
    pub(super) fn new(g: &Graph) -> Buckets {
        Buckets::new_where(g, |_| true)
    }

    /// The buckets of the nodes `keep` picks (one half of a joint graph).
    pub(super) fn new_where(g: &Graph, keep: impl Fn(NodeId) -> bool) -> Buckets {
        let mut by_loc: HashMap<_, Vec<(String, bool)>> = HashMap::new();
        let mut located = false;
        for id in g.node_ids().filter(|&n| keep(n)) {
            let node = g.node(id);
            let Some((name, _)) = backend::aten_name(&node.target) else { continue };
            let loc = node_location(g, id).map(|l| (l.file, l.line, l.code));
            located |= loc.is_some();
            by_loc.entry(loc).or_default().push((functional_name(name).to_string(), node.meta.compile_with_inductor()));
        }
        Buckets { located, by_loc }
    }

    /// Both graphs' ops together (forward and backward: where the partitioner may have moved an
    /// op); one location for all when either carries none.
    pub(super) fn merged(&self, other: &Buckets) -> Buckets {
        let mut by_loc = self.by_loc.clone();
        for (k, v) in &other.by_loc {
            by_loc.entry(k.clone()).or_default().extend(v.iter().cloned());
        }
        Buckets { located: self.located && other.located, by_loc }
    }

    /// These buckets without `op` at `loc` (everywhere, when the graph carries no locations):
    /// what one call sees whose op the line's other calls account for (`super::count`).
    pub(super) fn without(&self, loc: Option<&SourceLoc>, op: &str) -> Buckets {
        let mut by_loc = self.by_loc.clone();
        let key: LocKey = loc.map(|l| (l.file.clone(), l.line, l.code.clone()));
        for (k, v) in by_loc.iter_mut() {
            if !self.located || *k == key {
                v.retain(|(o, _)| o != op);
            }
        }
        Buckets { located: self.located, by_loc }
    }

    /// Whether the graph carries source locations (else every op is in one bucket).
    pub(super) fn located(&self) -> bool {
        self.located
    }

    pub(super) fn at(&self, loc: Option<&SourceLoc>) -> Vec<&(String, bool)> {
        if !self.located {
            return self.by_loc.values().flatten().collect();
        }
        let key = loc.map(|l| (l.file.clone(), l.line, l.code.clone()));
        self.by_loc.get(&key).map(|v| v.iter().collect()).unwrap_or_default()
    }

    pub(super) fn counts(&self, loc: Option<&SourceLoc>) -> BTreeMap<String, usize> {
        self.at(loc).into_iter().fold(BTreeMap::new(), |mut m, (op, _)| {
            *m.entry(op.clone()).or_insert(0) += 1;
            m
        })
    }
}

/// A node that computes tensors (not sizes, not tuple indexing, not a graph input).
pub(super) fn is_tensor_op(g: &Graph, n: crate::ir::NodeId) -> bool {
    let node = g.node(n);
    if node.target == "_operator.getitem" {
        // Picking an output of a multi-output op is no op of its own; indexing a tensor is a view.
        return false;
    }
    // Python-level size arithmetic (`torch.Size(...)`, `torch._sym_sqrt`, `math.ceil`): never a tensor.
    let t = node.target.as_str();
    if t == "torch.Size" || ["torch.sym_", "torch._sym_", "math.", "builtins."].iter().any(|p| t.starts_with(p)) {
        return false;
    }
    node.outputs.iter().any(|&v| match &g.value(v).kind {
        ValueKind::Tensor(_) => true,
        // Unannotated: a tuple (`_fused_rms_norm`'s two tensors) or a `torch.Size` (`x.size()`);
        // what its users pick out of it tells which.
        ValueKind::Other(text) if text.starts_with("Sym(") => false,
        ValueKind::Other(_) => {
            let picked: Vec<&ValueKind> = g
                .nodes
                .iter()
                .filter(|u| u.target == "_operator.getitem" && u.inputs().next() == Some(v))
                .flat_map(|u| u.outputs.iter().map(|&o| &g.value(o).kind))
                .collect();
            picked.is_empty() || picked.iter().any(|k| matches!(k, ValueKind::Tensor(_) | ValueKind::Other(_)))
        }
        _ => false,
    })
}

/// Whether `op` spells the words of `stem` in order (`scaled_dot_product_attention` in
/// `_scaled_dot_product_flash_attention`, `layer_norm` in `native_layer_norm`): a backend's own
/// kernel for the call under another name.
pub(super) fn names_same_op(op: &str, stem: &str) -> bool {
    let mut words = op.split('_').filter(|w| !w.is_empty());
    let wanted: Vec<&str> = stem.split('_').filter(|w| !w.is_empty()).collect();
    !wanted.is_empty() && wanted.iter().all(|w| words.any(|o| o == *w))
}

/// Whether the node's (single) output has the dtype, device, sizes and strides of one of its tensor
/// inputs: then tracing may return the input itself, and the op leaves nothing behind.
pub(super) fn is_identity(g: &Graph, n: NodeId) -> bool {
    let node = g.node(n);
    let [out] = node.outputs.as_slice() else { return false };
    let Some(o) = g.value(*out).tensor() else { return false };
    node.inputs().filter_map(|v| g.value(v).tensor()).any(|i| {
        i.dtype == o.dtype && i.device == o.device && i.sizes == o.sizes && i.strides == o.strides
    })
}

pub(super) fn node_device(g: &Graph, n: crate::ir::NodeId) -> Option<Backend> {
    let node = g.node(n);
    node.outputs.iter().copied().chain(node.inputs()).find_map(|v| g.value(v).tensor().and_then(|t| Backend::parse(&t.device)))
}

/// The device of the graph's tensor inputs (most of them), for nodes that say none themselves.
pub(super) fn graph_device(g: &Graph) -> Option<Backend> {
    let mut count: BTreeMap<Backend, usize> = BTreeMap::new();
    for (v, _) in &g.inputs {
        if let Some(b) = g.value(*v).tensor().and_then(|t| Backend::parse(&t.device)) {
            *count.entry(b).or_insert(0) += 1;
        }
    }
    count.into_iter().max_by_key(|(_, c)| *c).map(|(b, _)| b)
}

#[cfg(test)]
mod tests {
    use super::names_same_op;

    #[test]
    fn backend_kernels_under_other_names() {
        assert!(names_same_op("_scaled_dot_product_flash_attention", "scaled_dot_product_attention"));
        assert!(names_same_op("native_layer_norm", "layer_norm"));
        assert!(names_same_op("_fused_rms_norm", "rms_norm"));
        assert!(names_same_op("_softmax", "softmax"));
        assert!(!names_same_op("var_mean", "layer_norm"));
        assert!(!names_same_op("add", "addmm"));
        assert!(!names_same_op("anything", ""));
    }
}

