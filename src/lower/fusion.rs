//! Fusion decisions made before kernels are built: which producers stay out of a consumer's
//! kernel (operands of heavy kernels are realized) and which matrix products and convolutions are
//! computed inside their pointwise epilogue's kernel.

use std::collections::{BTreeSet, HashSet};

use super::{through_views, OpKind, MATMULS};
use crate::ir::{Graph, NodeId, ValueId};

/// Takes out of `inlinable` every producer that a matrix product, convolution, attention or
/// pooling kernel would inline (through views): those kernels read their operands from memory,
/// as Inductor realizes the inputs of its extern and template kernels. They read each operand
/// element many times, from many work-items, so an inlined producer is recomputed as often: a
/// layer norm's mean and variance once per output column of the matrix product after it, a
/// batch norm + SiLU once per output channel of the 1×1 convolution after it. As its own kernel
/// the producer is computed once (with its row statistics on the row schedule). `reads_memory`
/// marks those nodes, with host steps and nodes whose size kernel reads their operands.
pub(super) fn realize_heavy_operands(graph: &Graph, reads_memory: &[bool], fallback: &[bool], inlinable: &mut HashSet<NodeId>) {
    for (i, node) in graph.nodes.iter().enumerate() {
        if !reads_memory[i] || fallback[i] {
            continue;
        }
        for v in node.inputs() {
            if let Some(p) = graph.value(through_views(graph, v)).producer {
                inlinable.remove(&p);
            }
        }
    }
}

/// What the epilogue fusions read about the graph: each node's kind and whether it runs as an
/// eager fallback, each value's users, and the graph's outputs.
#[derive(Clone, Copy)]
pub(super) struct Fusion<'a> {
    pub(super) graph: &'a Graph,
    pub(super) kinds: &'a [OpKind],
    pub(super) fallback: &'a [bool],
    pub(super) users: &'a [Vec<NodeId>],
    pub(super) outputs: &'a HashSet<ValueId>,
}

/// Lets a matrix product be computed inside the one kernel that reads it when that kernel's
/// root is pointwise (bias, activation, residual add, reached through views and inlined
/// pointwise ops): the tiled schedule takes pointwise epilogues around its dot product, so
/// `gelu(x·w + b)` is one kernel and the product never goes through memory. Only when that
/// kernel reads no other matrix product (one dot product per tiled kernel) and the product is
/// not a graph output.
pub(super) fn fuse_matmul_epilogues(f: &Fusion, inlinable: &mut HashSet<NodeId>) {
    let Fusion { graph, fallback, .. } = *f;
    let is_matmul = |n: NodeId| !fallback[n.index()] && MATMULS.contains(&graph.node(n).target.as_str());
    let roots = kernel_roots(f, inlinable);
    let mut fused_into: HashSet<NodeId> = HashSet::new();
    for i in 0..graph.nodes.len() {
        let id = NodeId(i as u32);
        if !is_matmul(id) {
            continue;
        }
        let Some(r) = &roots[i] else { continue };
        let [root] = r.iter().copied().collect::<Vec<_>>()[..] else { continue };
        // Every matrix product the root's kernel would read, through what it inlines.
        let products = graph.nodes.iter().enumerate().filter(|(j, _)| is_matmul(NodeId(*j as u32)) && roots[*j].as_ref().is_some_and(|r| r.contains(&root))).count();
        if products == 1 && fused_into.insert(root) {
            inlinable.insert(id);
        }
    }
}

/// Per node, the kernel roots that would compute it inline (a root reads itself, and an
/// inlined pointwise node that is a graph output is also the root of its own kernel),
/// consumers first; `None` when a fallback, a non-pointwise root or another graph output
/// forces memory anyway. A view that is a graph output is a root too: it gets a kernel of its
/// own that copies what it views, and a matrix product computed in that copy is its epilogue
/// (a linear layer's `view(addmm(..))` as a model's output: AltCLIP's text projection wrote
/// its product, then copied all of it in a second kernel of 46 µs).
fn kernel_roots(f: &Fusion, inlinable: &HashSet<NodeId>) -> Vec<Option<BTreeSet<NodeId>>> {
    let Fusion { graph, kinds, fallback, users, outputs } = *f;
    let mut roots: Vec<Option<BTreeSet<NodeId>>> = vec![None; graph.nodes.len()];
    for (i, node) in graph.nodes.iter().enumerate().rev() {
        let mut set = BTreeSet::new();
        let mut ok = true;
        if node.outputs.iter().any(|o| outputs.contains(o)) {
            let id = NodeId(i as u32);
            ok = !fallback[i] && ((inlinable.contains(&id) && kinds[i] == OpKind::Pointwise) || kinds[i] == OpKind::View);
            set.insert(id);
        }
        for u in node.outputs.iter().flat_map(|o| &users[o.index()]) {
            let through = kinds[u.index()] == OpKind::View || inlinable.contains(u);
            match (through, &roots[u.index()]) {
                (true, Some(r)) => set.extend(r.iter().copied()),
                (true, None) => ok = false,
                (false, _) => {
                    ok &= !fallback[u.index()] && kinds[u.index()] == OpKind::Pointwise;
                    set.insert(*u);
                }
            }
        }
        roots[i] = ok.then_some(set);
    }
    roots
}

/// Lets a convolution be computed inside its pointwise epilogue's kernel (bias already in it;
/// a batch norm in eval, an activation, a residual add), as the matrix products above are:
/// `relu(bn(conv(x)))` is one kernel and the convolution's output never goes through memory.
/// A convolution kernel computes one output element per work-item, so this is safe only where
/// the root computes each convolution element once: the root has the convolution's sizes (no
/// broadcast of a pooled squeeze-excite product over a feature map) and every node between the
/// convolution and it is pointwise of the convolution's sizes too, so every read is at the
/// output's own coordinates. Several readers are then one expression (the kernel IR is
/// hash-consed): a batch norm's output read twice by the GELU after it (`0.5·y·(1 + erf(y/√2))`,
/// EfficientFormer's MLP) is still one convolution per element. A view on the way could read
/// it at other coordinates, and a `cat` root would pick between its inputs with a select,
/// which evaluates every input per element.
pub(super) fn fuse_conv_epilogues(f: &Fusion, inlinable: &mut HashSet<NodeId>) {
    let Fusion { graph, fallback, .. } = *f;
    let roots = kernel_roots(f, inlinable);
    let sizes = |n: NodeId| graph.node(n).outputs.first().and_then(|v| graph.value(*v).tensor()).map(|t| t.sizes.clone());
    for i in 0..graph.nodes.len() {
        let id = NodeId(i as u32);
        if fallback[i] || !CONVOLUTIONS.contains(&graph.node(id).target.as_str()) || graph.node(id).outputs.len() != 1 {
            continue;
        }
        let Some(r) = &roots[i] else { continue };
        let [root] = r.iter().copied().collect::<Vec<_>>()[..] else { continue };
        if sizes(root).is_none() || sizes(root) != sizes(id) {
            continue;
        }
        let once = single_chain(f, id, root) || pointwise_readers(f, id, root, &sizes);
        if once {
            inlinable.insert(id);
        }
    }
}

/// Whether the readers from `conv` up to `root` are one chain: one user at each step, listing
/// the value once (a view on the way reads it once).
fn single_chain(f: &Fusion, conv: NodeId, root: NodeId) -> bool {
    let Fusion { graph, users, .. } = *f;
    let mut at = conv;
    loop {
        let v = graph.node(at).outputs[0];
        let [u] = users[v.index()][..] else { return false };
        if graph.node(u).inputs().filter(|x| *x == v).count() != 1 || graph.node(u).outputs.len() != 1 {
            return false;
        }
        if u == root {
            return true;
        }
        at = u;
    }
}

/// Whether every reader between `conv` and `root` (and the root) is pointwise with the
/// convolution's sizes, however many there are: each reads it at the output's coordinates.
fn pointwise_readers(f: &Fusion, conv: NodeId, root: NodeId, sizes: &dyn Fn(NodeId) -> Option<Vec<crate::sym::Expr>>) -> bool {
    let Fusion { graph, kinds, users, .. } = *f;
    let mut stack = vec![conv];
    let mut seen = HashSet::new();
    while let Some(at) = stack.pop() {
        let readers = &users[graph.node(at).outputs[0].index()];
        let pointwise = |u: &NodeId| graph.node(*u).outputs.len() == 1 && kinds[u.index()] == OpKind::Pointwise && sizes(*u) == sizes(conv);
        if readers.is_empty() || !readers.iter().all(pointwise) {
            return false;
        }
        stack.extend(readers.iter().copied().filter(|u| *u != root && seen.insert(*u)));
    }
    true
}

/// Convolutions [`fuse_conv_epilogues`] computes inside their epilogue, and average poolings:
/// a window's sum per output element as well, so a MetaFormer's token mixer
/// `x + ls · (avg_pool(x) − x)` (EfficientFormer, PoolFormer) is one kernel and the pooled
/// map never goes through memory.
const CONVOLUTIONS: &[&str] = &[
    "aten.convolution.default",
    "aten._convolution.default",
    "aten.conv1d.default",
    "aten.conv2d.default",
    "aten.conv3d.default",
    "aten.avg_pool1d.default",
    "aten.avg_pool2d.default",
    "aten.avg_pool3d.default",
];
