//! Pointwise producers that a reduction would recompute inside its loop for every output they
//! are broadcast across.
//!
//! A fold over a broadcast product, `Σ_d a[i, d] · b[j, d] · m[i, j, d]` (`(a.unsqueeze(-2) *
//! b.unsqueeze(-3) * m).sum(-1)`), reads `a` once per `(i, j, d)`: inlined, `a`'s whole
//! pointwise cone is evaluated inside the loop over `d` by every work-item along `j`, which
//! `a` does not read. Code generation hoists what a loop does not need out of it, but `a` needs
//! `d`, so nothing is hoisted, and work-items do not share values: the cone runs `J` times per
//! element instead of once. Bailing-hybrid's chunked linear attention is this case (the
//! decay-masked `k_beta · key` of each chunk, `k_beta` and `key` each an L2 norm over a SiLU,
//! 64 partners per element): its four such sums were 621 of its 1,061 ms (debug build, loaded
//! machine, docs/PERFORMANCE.md "Issue 28: broadcast operands of folds").
//!
//! `lower::recompute` catches a *reduction* folded again by work-items that do not need it;
//! this is the same loss for a pointwise cone inside a fold, decided on the graph before any
//! kernel is built, since which node to realize is plain there: the producer read through the
//! broadcasting view. Realized, the cone runs once per element and the fold loads it.

use std::collections::{HashMap, HashSet};

use super::{ctx, through_views, OpKind};
use crate::ir::{Arg, Graph, NodeId, TensorMeta, ValueId};
use crate::sym::Expr;

/// Pointwise ops re-evaluated per element of a producer, at least, before it is worth a
/// kernel and a round trip through memory: writing and reading an element back costs a few
/// ops, and a launch a few microseconds, so a one-op producer (`x * 2`) broadcast 64 ways
/// (63 extra ops) stays inline while a four-op SiLU broadcast 64 ways (252) goes to memory.
pub(super) const MIN_RECOMPUTED_OPS: i64 = 64;

/// A kernel launch, in pointwise ops: a producer's own kernel must save more than this. On
/// Intel's OpenCL CPU runtime a launch costs on the order of ten microseconds, some 2^16 scalar
/// ops of one core; without it a two-op `rsqrt` broadcast over 40 channels of 34 rows (an RMS
/// norm's token mean, 2,652 ops saved) got a kernel of its own.
pub(super) const LAUNCH_OPS: i64 = 1 << 16;

/// Pointwise nodes counted in a producer's cone, at most: enough to pass any threshold.
const MAX_CONE: usize = 64;

/// The sizes of a graph at the model's hints: symbolic sizes are evaluated at the values the
/// export was traced with, for cost estimates only (the plan stays valid at every binding; a
/// binding far from the hint gets a fusion chosen for the hint).
pub(super) struct Hints<'a>(pub(super) &'a HashMap<String, i64>);

impl Hints<'_> {
    fn size(&self, e: &Expr) -> Option<i64> {
        e.as_int().or_else(|| e.substitute(&|name| self.0.get(name).map(|v| Expr::int(*v))).simplify().as_int())
    }

    fn numel<'e>(&self, sizes: impl IntoIterator<Item = &'e Expr>) -> Option<i64> {
        sizes.into_iter().try_fold(1i64, |acc, s| acc.checked_mul(self.size(s)?))
    }
}

/// Removes from `inlinable` every pointwise producer that a reduction's fold would recompute
/// across the outputs it is broadcast over, where that costs more than computing it once:
/// per element of the producer, at least [`MIN_RECOMPUTED_OPS`] ops recomputed, and more
/// recomputed than realizing it costs (its whole output, which a `select` or `slice` may read
/// only part of, written once and read back, and [`LAUNCH_OPS`]). Returns them, in graph order.
pub(super) fn realize_broadcast_fold_operands(graph: &Graph, kinds: &[OpKind], fallback: &[bool], hints: &Hints, inlinable: &mut HashSet<NodeId>) -> Vec<NodeId> {
    let mut realized = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        // An eager reduction reads its input from memory: no fold of ours evaluates it.
        if kinds[i] != OpKind::Reduction || fallback[i] {
            continue;
        }
        let Some(input) = node.args.iter().find_map(|a| a.arg.as_tensor()) else { continue };
        let Some(space) = graph.value(input).tensor() else { continue };
        let Some(reduced) = reduced_dims(node, space.sizes.len()) else { continue };
        for body in fold_body(graph, kinds, inlinable, input, space) {
            for v in graph.node(body).inputs() {
                let Some(p) = graph.value(through_views(graph, v)).producer else { continue };
                if !inlinable.contains(&p) || kinds[p.index()] != OpKind::Pointwise {
                    continue;
                }
                let Some(read) = graph.value(v).tensor() else { continue };
                let Some(factor) = broadcast_factor(read, space, &reduced, hints) else { continue };
                let cone = cone_size(graph, kinds, inlinable, p) as i64;
                let Some((part, whole)) = elements_read(graph, v, read, hints) else { continue };
                // Ops recomputed over the part read, against the producer's own kernel: each
                // element computed once and written, then read back (two ops' worth), and a launch.
                let recomputed = (factor - 1).saturating_mul(cone);
                let own_kernel = whole.saturating_mul(cone + 2).saturating_add(LAUNCH_OPS);
                if recomputed >= MIN_RECOMPUTED_OPS && part.saturating_mul(recomputed) > own_kernel {
                    inlinable.remove(&p);
                    realized.push(p);
                }
            }
        }
    }
    realized.sort();
    realized.dedup();
    realized
}

/// The dims a reduction node folds, of an input of rank `rank` (all of them without `dim`).
fn reduced_dims(node: &crate::ir::Node, rank: usize) -> Option<Vec<usize>> {
    let dims: Vec<i64> = match node.arg("dim") {
        Some(Arg::Ints(d)) => d.clone(),
        Some(Arg::Int(d)) => vec![*d],
        None | Some(Arg::None) => vec![],
        _ => return None,
    };
    ctx::wrap_dims(&dims, rank).ok()
}

/// The inlined pointwise nodes that compute the fold's input at its own sizes: the nodes
/// evaluated once per step of the fold, per output.
fn fold_body(graph: &Graph, kinds: &[OpKind], inlinable: &HashSet<NodeId>, input: ValueId, space: &TensorMeta) -> Vec<NodeId> {
    let mut body = Vec::new();
    let mut stack = vec![input];
    while let Some(v) = stack.pop() {
        let Some(p) = graph.value(v).producer else { continue };
        let same = graph.value(v).tensor().is_some_and(|t| t.sizes == space.sizes);
        if !same || !inlinable.contains(&p) || kinds[p.index()] != OpKind::Pointwise || body.contains(&p) {
            continue;
        }
        body.push(p);
        stack.extend(graph.node(p).inputs());
    }
    body
}

/// How many outputs of the fold read each element of `read` (an operand as a body node reads
/// it, shapes broadcast from the right): the product of the static sizes of the kept dims
/// along which `read` is broadcast (size 1, stride 0 or absent), at the hints. `None` when that is one, or
/// when `read` does not vary along any folded dim, so code generation hoists it out of the
/// loop and each work-item computes it once.
fn broadcast_factor(read: &TensorMeta, space: &TensorMeta, reduced: &[usize], hints: &Hints) -> Option<i64> {
    let offset = space.sizes.len().checked_sub(read.sizes.len())?;
    // A 0-d tensor's `dim=0` (or `-1`) names no axis: such a fold has one step.
    if reduced.iter().any(|d| *d >= space.sizes.len()) {
        return None;
    }
    let broadcast = |d: usize| {
        d < offset
            || read.sizes.get(d - offset).and_then(|s| s.as_int()) == Some(1)
            || read.strides.get(d - offset).and_then(|s| s.as_int()) == Some(0)
    };
    let out_size = |d: usize| space.sizes.get(d).and_then(|s| hints.size(s));
    let varies_in_fold = reduced.iter().any(|d| !broadcast(*d) && out_size(*d) != Some(1));
    if !varies_in_fold {
        return None;
    }
    // A size without a value (a symbol with no hint) counts as one.
    let factor = (0..space.sizes.len())
        .filter(|d| !reduced.contains(d) && broadcast(*d))
        .filter_map(out_size)
        .try_fold(1i64, |acc, s| acc.checked_mul(s.max(1)))?;
    (factor > 1).then_some(factor)
}

/// The distinct elements of its producer's output that `read` (a view of it, or that output)
/// covers, and that output's elements, at the hints. Unsqueezes, expands and reshapes read it
/// all; a `select` or `slice` reads part of it (one row of Bailing's triangle per step of its
/// row-by-row update: realizing the whole triangle to save recomputing one row is no saving;
/// one chunk of the padded sequence per step of its chunk loop, where all chunks are read in
/// turn and the sequence is one chunk at the hint).
fn elements_read(graph: &Graph, v: ValueId, read: &TensorMeta, hints: &Hints) -> Option<(i64, i64)> {
    let whole = graph.value(through_views(graph, v)).tensor()?;
    let distinct: Vec<&Expr> = (0..read.sizes.len()).filter(|d| read.strides.get(*d).and_then(|s| s.as_int()) != Some(0)).map(|d| &read.sizes[d]).collect();
    if let (Some(part), Some(all)) = (hints.numel(distinct.iter().copied()), hints.numel(&whole.sizes)) {
        return Some((part, all));
    }
    // Without hints, a read that is the whole output by its symbolic sizes still counts.
    let product = |sizes: Vec<&Expr>| sizes.into_iter().fold(Expr::int(1), |acc, s| Expr::mul(acc, s.clone())).simplify();
    (product(distinct) == product(whole.sizes.iter().collect())).then_some((1, 1))
}

/// Pointwise nodes a kernel evaluates to compute one element of `p`: `p` and the inlined
/// pointwise producers it reaches through views, each counted once, at most [`MAX_CONE`].
/// Not memoised: a producer realized earlier in the walk leaves later cones.
fn cone_size(graph: &Graph, kinds: &[OpKind], inlinable: &HashSet<NodeId>, p: NodeId) -> usize {
    let mut seen: HashSet<NodeId> = HashSet::new();
    let mut stack = vec![p];
    while let Some(n) = stack.pop() {
        if seen.len() >= MAX_CONE || !seen.insert(n) {
            continue;
        }
        for v in graph.node(n).inputs() {
            if let Some(q) = graph.value(through_views(graph, v)).producer {
                if inlinable.contains(&q) && kinds[q.index()] == OpKind::Pointwise {
                    stack.push(q);
                }
            }
        }
    }
    seen.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{DType, InputKind, NamedArg, NodeMeta, ValueKind};
    use crate::sym::Expr;

    fn arg(name: &str, arg: Arg) -> NamedArg {
        NamedArg { name: name.into(), arg, kwarg: false }
    }

    fn meta(sizes: &[i64]) -> ValueKind {
        ValueKind::Tensor(TensorMeta::contiguous(DType::F32, sizes.iter().map(|s| Expr::int(*s)).collect()))
    }

    /// `(f(x)[:rows].unsqueeze(1) * y.unsqueeze(0)).sum(dim)` over `x`, `y` of `[n, 32]`, `f` a
    /// chain of `ops` exps (no slice without `rows`); the graph, its nodes' kinds, and the node
    /// computing `f(x)`.
    fn broadcast_fold(n: i64, ops: usize, dim: i64, rows: Option<i64>) -> (Graph, Vec<OpKind>, NodeId) {
        let mut g = Graph::default();
        let mut kinds = Vec::new();
        let x = g.add_input("x", meta(&[n, 32]), InputKind::UserInput).expect("x");
        let y = g.add_input("y", meta(&[n, 32]), InputKind::UserInput).expect("y");
        let mut fx = x;
        let mut last = None;
        for k in 0..ops {
            let id = g.add_node(&format!("exp_{k}"), "aten.exp.default", vec![arg("self", Arg::Tensor(fx))], vec![(format!("exp_{k}"), meta(&[n, 32]))], NodeMeta::default());
            let id = id.expect("exp");
            fx = g.node(id).outputs[0];
            kinds.push(OpKind::Pointwise);
            last = Some(id);
        }
        let m = rows.unwrap_or(n);
        if let Some(rows) = rows {
            let args = vec![arg("self", Arg::Tensor(fx)), arg("dim", Arg::Int(0)), arg("start", Arg::Int(0)), arg("end", Arg::Int(rows))];
            let id = g.add_node("slice", "aten.slice.Tensor", args, vec![("slice".into(), meta(&[rows, 32]))], NodeMeta::default()).expect("slice");
            kinds.push(OpKind::View);
            fx = g.node(id).outputs[0];
        }
        let mut unsqueeze = |g: &mut Graph, name: &str, v: ValueId, dim: i64, sizes: &[i64]| {
            let args = vec![arg("self", Arg::Tensor(v)), arg("dim", Arg::Int(dim))];
            let id = g.add_node(name, "aten.unsqueeze.default", args, vec![(name.into(), meta(sizes))], NodeMeta::default()).expect("unsqueeze");
            kinds.push(OpKind::View);
            g.node(id).outputs[0]
        };
        let a = unsqueeze(&mut g, "ua", fx, 1, &[m, 1, 32]);
        let b = unsqueeze(&mut g, "ub", y, 0, &[1, n, 32]);
        let args = vec![arg("self", Arg::Tensor(a)), arg("other", Arg::Tensor(b))];
        let prod = g.add_node("mul", "aten.mul.Tensor", args, vec![("mul".into(), meta(&[m, n, 32]))], NodeMeta::default()).expect("mul");
        kinds.push(OpKind::Pointwise);
        let pv = g.node(prod).outputs[0];
        let out = if dim == 2 { vec![m, n] } else { vec![m, 32] };
        let args = vec![arg("self", Arg::Tensor(pv)), arg("dim", Arg::Ints(vec![dim])), arg("keepdim", Arg::Bool(false))];
        g.add_node("sum", "aten.sum.dim_IntList", args, vec![("sum".into(), meta(&out))], NodeMeta::default()).expect("sum");
        kinds.push(OpKind::Reduction);
        (g, kinds, last.expect("at least one op"))
    }

    fn realize(g: &Graph, kinds: &[OpKind]) -> (Vec<NodeId>, HashSet<NodeId>) {
        let mut inlinable: HashSet<NodeId> = g.node_ids().filter(|n| kinds[n.index()] != OpKind::Reduction).collect();
        let fallback = vec![false; g.nodes.len()];
        let hints = HashMap::new();
        (realize_broadcast_fold_operands(g, kinds, &fallback, &Hints(&hints), &mut inlinable), inlinable)
    }

    #[test]
    fn a_costly_operand_broadcast_across_outputs_inside_the_fold_is_realized() {
        // Four ops per element, read by 64 outputs each: 63 · 4 ops of recomputation.
        let (g, kinds, fx) = broadcast_fold(64, 4, 2, None);
        let (realized, inlinable) = realize(&g, &kinds);
        assert_eq!(realized, vec![fx]);
        assert!(!inlinable.contains(&fx));
        // The producers above it stay inline: its own kernel computes them once per element.
        assert_eq!(inlinable.iter().filter(|n| g.node(**n).target == "aten.exp.default").count(), 3);
    }

    #[test]
    fn an_operand_read_in_half_is_realized_and_in_one_row_is_not() {
        // Half of `f(x)` read, 64 ways: computing the other half once costs far less.
        let (g, kinds, fx) = broadcast_fold(64, 4, 2, Some(32));
        assert_eq!(realize(&g, &kinds).0, vec![fx]);
        // One row of 64 read: 32 elements · 252 ops saved, against 2,048 elements computed,
        // written and read back, and a launch.
        let (g, kinds, _) = broadcast_fold(64, 4, 2, Some(1));
        assert!(realize(&g, &kinds).0.is_empty());
    }

    #[test]
    fn a_zero_dim_fold_has_no_broadcast_factor() {
        // `x.sum(0)` of a 0-d `x` (PyTorch accepts dim 0 and -1 there): no axis, one step.
        let scalar = TensorMeta::contiguous(DType::F32, vec![]);
        let hints = HashMap::new();
        assert_eq!(broadcast_factor(&scalar, &scalar, &[0], &Hints(&hints)), None);
    }

    #[test]
    fn a_one_op_operand_stays_inline() {
        // 63 recomputed ops per element: less than a write and a read back are worth.
        let (g, kinds, _) = broadcast_fold(64, 1, 2, None);
        assert!(realize(&g, &kinds).0.is_empty());
    }

    #[test]
    fn a_small_producer_is_not_worth_a_launch() {
        // 16 rows broadcast 16 ways: 512 elements · 60 ops saved, less than a launch.
        let (g, kinds, _) = broadcast_fold(16, 4, 2, None);
        assert!(realize(&g, &kinds).0.is_empty());
    }

    #[test]
    fn a_small_broadcast_stays_inline() {
        // Four ops broadcast four ways: 12 ops.
        let (g, kinds, _) = broadcast_fold(4, 4, 2, None);
        assert!(realize(&g, &kinds).0.is_empty());
    }

    #[test]
    fn an_operand_broadcast_along_the_folded_dim_only_stays_inline() {
        // Folding dim 1, along which `f(x)` is broadcast: it does not vary inside the loop, so
        // code generation hoists it and each work-item computes its element once.
        let (g, kinds, _) = broadcast_fold(64, 4, 1, None);
        assert!(realize(&g, &kinds).0.is_empty());
    }

    #[test]
    fn symbolic_sizes_are_costed_at_the_hints() {
        let read = TensorMeta::contiguous(DType::F32, vec![Expr::symbol("s0"), Expr::int(8)]);
        let hints: HashMap<String, i64> = [("s0".to_string(), 3)].into_iter().collect();
        assert_eq!(Hints(&hints).numel(&read.sizes), Some(24));
        assert_eq!(Hints(&HashMap::new()).numel(&read.sizes), None);
    }
}
