//! Calls on one source line that each claim the same op, more of them than the line's AOT ops
//! hold. The check looks ops up by line, so one call's kept op stands for its neighbours': Canine
//! runs one attention line in four layers, two of them 1×1 products (`[B, 4, 1, 16] @ [B, 4, 16, 1]`)
//! that Inductor's table turns into `mul` + `sum` on CPU (its `bmm` decomposition for M = N = 1), and
//! the two remaining `bmm`s made all four calls look kept. On such a line a call keeps the op only
//! where an AOT node of it computes as many elements as the call's output (a product folds its
//! batch dims, not its element count); the calls left without one are checked as if the line
//! lacked the op. Where element counts cannot tell the calls apart, nothing changes.

use std::collections::HashMap;

use super::expect::Alt;
use super::graph::{Buckets, LocKey};
use super::train::Side;
use crate::import::trace::node_location;
use crate::ir::{Graph, NodeId};
use crate::ops::backend::{self, functional_name};
use crate::sym::Expr;

/// Element count of a node's first output, when it is a tensor.
fn numel(g: &Graph, n: NodeId) -> Option<Expr> {
    let t = g.node(n).outputs.first().and_then(|&v| g.value(v).tensor())?;
    Some(t.sizes.iter().cloned().fold(Expr::int(1), Expr::mul))
}

/// The line a node's ops are looked up by: none at all where the AOT graph carries no locations
/// (then every op is in one bucket, see [`Buckets::at`]).
fn loc_key(g: &Graph, n: NodeId, located: bool) -> LocKey {
    if !located {
        return None;
    }
    node_location(g, n).map(|l| (l.file, l.line, l.code))
}

/// The calls of `ops` that do not keep the op they claim (see the module), with that op. Calls
/// in `merged` (CSE'd twins, `super::cse`) have no op of their own and claim none.
pub(super) fn unmatched(
    dynamo: &Graph,
    ops: &[NodeId],
    expected: &[Result<Vec<Alt>, String>],
    side: &Side,
    buckets: &Buckets,
    merged: &HashMap<NodeId, NodeId>,
) -> HashMap<NodeId, String> {
    // (line, op) → the calls that would be found keeping that op there.
    let mut groups: HashMap<(LocKey, String), Vec<NodeId>> = HashMap::new();
    for (&n, alts) in ops.iter().zip(expected) {
        let Ok(alts) = alts else { continue };
        if merged.contains_key(&n) {
            continue;
        }
        let loc = node_location(dynamo, n);
        let present: Vec<String> = buckets.at(loc.as_ref()).into_iter().map(|(op, _)| op.clone()).collect();
        let fits = |a: &&Alt| a.ops.iter().all(|op| present.contains(op));
        let Some(alt) = alts.iter().filter(|a| a.kernel_level).find(fits).or_else(|| alts.iter().find(fits)) else { continue };
        if let [op] = alt.ops.as_slice() {
            groups.entry((loc_key(dynamo, n, buckets.located()), op.clone())).or_default().push(n);
        }
    }
    let mut out = HashMap::new();
    for ((loc, op), calls) in groups {
        let held: Vec<Option<Expr>> = side
            .node_ids()
            .filter(|&m| loc_key(side.graph, m, buckets.located()) == loc)
            .filter(|&m| backend::aten_name(&side.graph.node(m).target).is_some_and(|(name, _)| functional_name(name) == op))
            .map(|m| numel(side.graph, m))
            .collect();
        // Enough for every call, or none at all here (what made the op look present is elsewhere).
        if calls.len() <= held.len() || held.is_empty() {
            continue;
        }
        let mut free: Vec<Option<Expr>> = held.clone();
        let mut left = Vec::new();
        for &n in &calls {
            let want = numel(dynamo, n);
            match free.iter().position(|h| h.is_some() && *h == want) {
                Some(i) => {
                    free.remove(i);
                }
                None => left.push(n),
            }
        }
        // Every AOT node found its call: the rest are the ones without the op.
        if free.is_empty() && left.len() == calls.len() - held.len() {
            out.extend(left.into_iter().map(|n| (n, op.clone())));
        }
    }
    out
}
