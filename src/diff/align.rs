//! Which node of A is which node of B.
//!
//! Passes, strongest evidence first; each only looks at what earlier passes left unmatched:
//! 1. graph inputs: the same name (parameter / buffer fqn, placeholder name), then the same
//!    position among the rest;
//! 2. structure: the same op with the same constant arguments reading values already matched —
//!    an exact correspondence, walked in B's (topological) order so matches propagate;
//! 3. provenance: per group of nodes with the same module path and the same origin (the original
//!    node a decomposition came from, else the source line), the ops in order (a Myers diff);
//!    a pair is refused where a value one reads is matched to something other than what the
//!    other reads (see [`consistent`]);
//! 4. structure again, from what 3 matched;
//! 5. neighbours: a different op on the same matched inputs whose outputs the same matched
//!    consumers read (`view` in one torch, `reshape` in the next);
//! 6. structure again;
//! 7. 3 to 6 once more on what is left, a pair refused only where both values it reads are
//!    matched, each to something else (a node put in between on one side).
//!
//! `getitem` has no identity of its own (it picks an output of a multi-output node), so it is
//! matched only through its producer, by structure.

use std::collections::{HashMap, HashSet};

use super::compare::{const_fingerprint, Normalizer};
use super::{lcs, MatchedBy};
use crate::import::trace::SourceLoc;
use crate::ir::{Graph, Node, NodeId, ValueId};

const GETITEM: &str = "_operator.getitem";

/// The result of alignment.
pub(super) struct Matching {
    pub a2b: Vec<Option<NodeId>>,
    pub b2a: Vec<Option<NodeId>>,
    /// By A's node index: what paired it.
    pub how: Vec<Option<MatchedBy>>,
    pub va2b: Vec<Option<ValueId>>,
    pub vb2a: Vec<Option<ValueId>>,
    /// Graph inputs: A's in order (with their B partner, if any), then B's unpaired ones.
    pub inputs: Vec<(Option<ValueId>, Option<ValueId>)>,
    pub norm: Normalizer,
}

impl Matching {
    fn pair(&mut self, a: &Graph, b: &Graph, ia: NodeId, ib: NodeId, how: MatchedBy) {
        self.a2b[ia.index()] = Some(ib);
        self.b2a[ib.index()] = Some(ia);
        self.how[ia.index()] = Some(how);
        for (&va, &vb) in a.node(ia).outputs.iter().zip(&b.node(ib).outputs) {
            self.va2b[va.index()] = Some(vb);
            self.vb2a[vb.index()] = Some(va);
        }
    }
}

pub(super) fn align(a: &Graph, b: &Graph) -> Matching {
    let mut m = Matching {
        a2b: vec![None; a.nodes.len()],
        b2a: vec![None; b.nodes.len()],
        how: vec![None; a.nodes.len()],
        va2b: vec![None; a.values.len()],
        vb2a: vec![None; b.values.len()],
        inputs: Vec::new(),
        norm: Normalizer::default(),
    };
    let ctx = contexts(a, b);
    match_inputs(a, b, &mut m);
    structure(a, b, &ctx, &mut m);
    for strict in [true, false] {
        provenance(a, b, &ctx, &mut m, strict);
        structure(a, b, &ctx, &mut m);
        neighbours(a, b, &mut m);
        structure(a, b, &ctx, &mut m);
    }
    m
}

fn input_key(g: &Graph, v: ValueId, kind: &crate::ir::InputKind) -> String {
    kind.fqn().map(str::to_string).unwrap_or_else(|| g.value(v).name.clone())
}

fn match_inputs(a: &Graph, b: &Graph, m: &mut Matching) {
    let mut b_by_key: HashMap<String, ValueId> = HashMap::new();
    for (v, kind) in &b.inputs {
        b_by_key.entry(input_key(b, *v, kind)).or_insert(*v);
    }
    let mut pairs: Vec<(Option<ValueId>, Option<ValueId>)> =
        a.inputs.iter().map(|(v, kind)| (Some(*v), b_by_key.get(&input_key(a, *v, kind)).copied())).collect();
    // What names did not pair, position does: the k-th unpaired tensor (symbol, other) input of A
    // with the k-th of B (AOT graphs name inputs `arg0_1`…, dynamo graphs and exports after the
    // user's variable names; a log's graphs take the symbols as inputs, an export does not).
    let taken: HashSet<ValueId> = pairs.iter().filter_map(|p| p.1).collect();
    let kind = |g: &Graph, v: ValueId| std::mem::discriminant(&g.value(v).kind);
    let mut rest_b: Vec<Option<ValueId>> = b.inputs.iter().map(|(v, _)| *v).filter(|v| !taken.contains(v)).map(Some).collect();
    for p in pairs.iter_mut().filter(|p| p.1.is_none()) {
        let Some(va) = p.0 else { continue };
        if let Some(slot) = rest_b.iter_mut().find(|s| s.is_some_and(|vb| kind(b, vb) == kind(a, va))) {
            p.1 = slot.take();
        }
    }
    pairs.extend(rest_b.into_iter().flatten().map(|v| (None, Some(v))));
    for &(va, vb) in &pairs {
        if let (Some(va), Some(vb)) = (va, vb) {
            m.va2b[va.index()] = Some(vb);
            m.vb2a[vb.index()] = Some(va);
            m.norm.learn(&a.value(va).kind, &b.value(vb).kind);
        }
    }
    m.inputs = pairs;
}

/// The structural key of a node: op, constant arguments, and the values it reads — in A's value
/// ids (for a node of B, through the value map; `None` while one of them is unmatched).
type Key = (String, String, Vec<ValueId>);

fn key_a(a: &Graph, id: NodeId, m: &Matching) -> Key {
    let n = a.node(id);
    (n.target.clone(), const_fingerprint(n, Some(&m.norm)), n.inputs().collect())
}

fn key_b(b: &Graph, id: NodeId, m: &Matching) -> Option<Key> {
    let n = b.node(id);
    let inputs: Vec<ValueId> = n.inputs().map(|v| m.vb2a[v.index()]).collect::<Option<_>>()?;
    Some((n.target.clone(), const_fingerprint(n, None), inputs))
}

/// Each node's provenance group, per graph (see [`contexts`]).
type Contexts = (Vec<String>, Vec<String>);

fn structure(a: &Graph, b: &Graph, (ctx_a, ctx_b): &Contexts, m: &mut Matching) {
    let mut index: HashMap<Key, Vec<NodeId>> = HashMap::new();
    for id in a.node_ids().filter(|id| m.a2b[id.index()].is_none()) {
        index.entry(key_a(a, id, m)).or_default().push(id);
    }
    for ib in b.node_ids() {
        if m.b2a[ib.index()].is_some() {
            continue;
        }
        let Some(key) = key_b(b, ib, m) else { continue };
        let Some(cands) = index.get_mut(&key) else { continue };
        // Identical computations (a value CSE left twice): the one from the same place first,
        // looked for among the first few so that many identical nodes stay linear.
        let pick = cands.iter().take(64).position(|c| ctx_a[c.index()] == ctx_b[ib.index()]).or((!cands.is_empty()).then_some(0));
        if let Some(i) = pick {
            let ia = cands.remove(i);
            m.pair(a, b, ia, ib, MatchedBy::Structure);
        }
    }
}

/// Where a node comes from, as far as both graphs can tell: module path and origin (the
/// original node's name where the other graph knows that name too, else the source line).
/// `"|"` where a graph records nothing.
fn contexts(a: &Graph, b: &Graph) -> Contexts {
    let origins = |g: &Graph| -> HashSet<String> { g.nodes.iter().map(|n| origin(n).to_string()).collect() };
    let (oa, ob) = (origins(a), origins(b));
    let has_from = |g: &Graph| g.nodes.iter().any(|n| !n.meta.from_node.is_empty());
    let by_origin = has_from(a) || has_from(b);
    let ctx = |g: &Graph, other: &HashSet<String>| -> Vec<String> {
        g.nodes
            .iter()
            .map(|n| {
                let module = n.meta.module_path();
                let o = origin(n);
                if by_origin && other.contains(o) {
                    return format!("{module}|node {o}");
                }
                match n.meta.stack_trace.as_deref().and_then(SourceLoc::from_stack_trace) {
                    // File and line differ between machines and torch versions (a temporary
                    // folder, a few lines added to `activation.py`); the code line does not.
                    Some(l) => format!("{module}|{}:{}:{}", basename(&l.file), l.function, l.code),
                    None => format!("{module}|"),
                }
            })
            .collect()
    };
    (ctx(a, &ob), ctx(b, &oa))
}

/// The original node a node was made from (the oldest `from_node` entry), else the node itself.
fn origin(n: &Node) -> &str {
    n.meta.from_node.last().map(|o| o.name.as_str()).unwrap_or(&n.name)
}

pub(super) fn basename(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

fn provenance(a: &Graph, b: &Graph, (ctx_a, ctx_b): &Contexts, m: &mut Matching, strict: bool) {
    // Unmatched nodes per provenance group, in graph order; groups in A's order of appearance.
    fn groups<'c>(g: &Graph, ctx: &'c [String], mapped: &[Option<NodeId>]) -> (HashMap<&'c str, Vec<NodeId>>, Vec<&'c str>) {
        let mut groups: HashMap<&str, Vec<NodeId>> = HashMap::new();
        let mut order = Vec::new();
        for id in g.node_ids().filter(|id| mapped[id.index()].is_none() && g.node(*id).target != GETITEM) {
            let c = ctx[id.index()].as_str();
            let members = groups.entry(c).or_default();
            if members.is_empty() {
                order.push(c);
            }
            members.push(id);
        }
        (groups, order)
    }
    let (ga, order) = groups(a, ctx_a, &m.a2b);
    let (gb, _) = groups(b, ctx_b, &m.b2a);
    let mut pairs: Vec<(NodeId, NodeId, MatchedBy)> = Vec::new();
    for c in order {
        let (Some(na), Some(nb)) = (ga.get(c), gb.get(c)) else { continue };
        let ta: Vec<&str> = na.iter().map(|id| a.node(*id).target.as_str()).collect();
        let tb: Vec<&str> = nb.iter().map(|id| b.node(*id).target.as_str()).collect();
        let how = if c == "|" { MatchedBy::Order } else { MatchedBy::Provenance };
        pairs.extend(lcs::align(&ta, &tb).into_iter().map(|(i, j)| (na[i], nb[j], how)));
    }
    // In A's order, so a pair is checked against the pairs of the nodes it reads.
    pairs.sort_by_key(|p| p.0);
    for (ia, ib, how) in pairs {
        if consistent(a.node(ia), b.node(ib), m, strict) {
            m.pair(a, b, ia, ib, how);
        }
    }
}

/// Whether `na` and `nb` may be one node, as far as the values they read tell. `strict`: no value
/// either reads is matched to something other than what the other reads at the same place — in a
/// group of many equal ops (2,000 `relu`s from one source line) the in-order alignment is
/// ambiguous, and only this keeps it from pairing each `relu` with its neighbour's. Otherwise,
/// for what the strict round and structure left: only two values matched each to something else
/// refuse the pair, since where one side's value is unmatched that side may have put a node in
/// between (torch 2.15's bert reshapes the attention output before the same `transpose`); the pair
/// stands and the diff names the rewired argument.
fn consistent(na: &Node, nb: &Node, m: &Matching, strict: bool) -> bool {
    na.args.iter().zip(&nb.args).all(|(x, y)| {
        let (vx, vy) = (x.arg.values(), y.arg.values());
        vx.iter().zip(&vy).all(|(va, vb)| match (m.va2b[va.index()], m.vb2a[vb.index()]) {
            (Some(mb), Some(_)) => mb == *vb,
            (Some(_), None) | (None, Some(_)) => !strict,
            (None, None) => true,
        })
    })
}

fn neighbours(a: &Graph, b: &Graph, m: &mut Matching) {
    // Unmatched nodes of A by the values they read (all matched, at least one).
    let mut by_inputs: HashMap<Vec<ValueId>, Vec<NodeId>> = HashMap::new();
    for id in a.node_ids().filter(|id| m.a2b[id.index()].is_none()) {
        let ins: Vec<ValueId> = a.node(id).inputs().collect();
        if !ins.is_empty() && ins.iter().all(|v| m.va2b[v.index()].is_some()) {
            by_inputs.entry(ins).or_default().push(id);
        }
    }
    let (users_a, users_b) = (a.users(), b.users());
    let out_pos = |g: &Graph, v: ValueId| g.outputs.iter().position(|o| o.values().contains(&v));
    for ib in b.node_ids() {
        if m.b2a[ib.index()].is_some() {
            continue;
        }
        let ins: Option<Vec<ValueId>> = b.node(ib).inputs().map(|v| m.vb2a[v.index()]).collect();
        let Some(ins) = ins.filter(|i| !i.is_empty()) else { continue };
        let Some(cands) = by_inputs.get_mut(&ins) else { continue };
        let nb = b.node(ib);
        let found = cands.iter().position(|&ia| {
            let na = a.node(ia);
            m.a2b[ia.index()].is_none()
                && na.outputs.len() == nb.outputs.len()
                && na.outputs.iter().zip(&nb.outputs).all(|(&va, &vb)| {
                    let read_alike = users_b[vb.index()].iter().any(|&ub| {
                        m.b2a[ub.index()].is_some_and(|ua| {
                            users_a[va.index()].contains(&ua) && arg_slot(a.node(ua), va) == arg_slot(b.node(ub), vb)
                        })
                    });
                    let returned_alike = out_pos(a, va).is_some() && out_pos(a, va) == out_pos(b, vb);
                    read_alike || returned_alike
                })
        });
        if let Some(i) = found {
            let ia = cands.remove(i);
            m.pair(a, b, ia, ib, MatchedBy::Neighbours);
        }
    }
}

/// The first argument position (and position within it) at which `n` reads `v`.
fn arg_slot(n: &Node, v: ValueId) -> Option<(usize, usize)> {
    n.args.iter().enumerate().find_map(|(i, x)| x.arg.values().iter().position(|&w| w == v).map(|j| (i, j)))
}
