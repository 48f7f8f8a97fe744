//! What differs between matched nodes, and the entries of a diff in reading order.

use std::collections::{BTreeMap, HashMap};

use super::align::{basename, Matching};
use super::{Change, ChangeKind, Class, Entry, MatchedBy, NodeRef};
use crate::import::trace::SourceLoc;
use crate::ir::{Arg, Graph, Node, NodeId, SymIntArg, TensorMeta, ValueId, ValueKind};
use crate::sym::Expr;

/// A's symbols and devices as B calls them, learnt from matched graph inputs: the first
/// pairing of a name wins, so the map is a function of the input order.
#[derive(Clone, Debug, Default)]
pub(super) struct Normalizer {
    symbols: BTreeMap<String, String>,
    devices: BTreeMap<String, String>,
}

impl Normalizer {
    pub fn learn(&mut self, a: &ValueKind, b: &ValueKind) {
        match (a, b) {
            (ValueKind::SymInt(x), ValueKind::SymInt(y)) => self.learn_expr(x, y),
            (ValueKind::Tensor(x), ValueKind::Tensor(y)) => {
                if x.sizes.len() == y.sizes.len() {
                    for (p, q) in x.sizes.iter().zip(&y.sizes) {
                        self.learn_expr(p, q);
                    }
                }
                self.devices.entry(x.device.clone()).or_insert_with(|| y.device.clone());
            }
            _ => {}
        }
    }

    fn learn_expr(&mut self, x: &Expr, y: &Expr) {
        if let (Expr::Symbol(p), Expr::Symbol(q)) = (x, y) {
            self.symbols.entry(p.to_string()).or_insert_with(|| q.to_string());
        }
    }

    pub fn expr(&self, e: &Expr) -> Expr {
        if self.symbols.iter().all(|(p, q)| p == q) {
            return e.clone();
        }
        e.substitute(&|name| self.symbols.get(name).map(|n| Expr::symbol(n)))
    }

    pub fn device<'s>(&'s self, d: &'s str) -> &'s str {
        self.devices.get(d).map(String::as_str).unwrap_or(d)
    }

    /// Only the names that change.
    pub fn symbols(&self) -> Vec<(String, String)> {
        self.symbols.iter().filter(|(p, q)| p != q).map(|(p, q)| (p.clone(), q.clone())).collect()
    }

    pub fn devices(&self) -> Vec<(String, String)> {
        self.devices.iter().filter(|(p, q)| p != q).map(|(p, q)| (p.clone(), q.clone())).collect()
    }
}

/// A node's constant arguments in order, values left as `%`: what must be equal for two nodes
/// on matched inputs to compute the same thing. `norm` renames A's symbols and devices as B's.
pub(super) fn const_fingerprint(n: &Node, norm: Option<&Normalizer>) -> String {
    let mut s = String::new();
    for a in &n.args {
        s.push_str(&render_arg(&a.arg, norm, &|_| "%".to_string()));
        s.push(';');
    }
    s
}

/// An argument as text; `value` names each value it reads.
fn render_arg(arg: &Arg, norm: Option<&Normalizer>, value: &dyn Fn(ValueId) -> String) -> String {
    let sym = |x: &SymIntArg| match x {
        SymIntArg::Int(i) => i.to_string(),
        SymIntArg::Value(v) => value(*v),
    };
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    match arg {
        Arg::None => "None".into(),
        Arg::Tensor(v) | Arg::SymBool(v) | Arg::SymFloat(v) => value(*v),
        Arg::Tensors(vs) => list(vs.iter().map(|v| value(*v)).collect()),
        Arg::OptionalTensors(vs) => list(vs.iter().map(|v| v.map_or("None".into(), value)).collect()),
        Arg::Int(i) => i.to_string(),
        Arg::Ints(xs) => list(xs.iter().map(i64::to_string).collect()),
        // Exact: `1e-06` and its f32 rounding are different constants.
        Arg::Float(f) => format!("{f:?}"),
        Arg::Floats(xs) => list(xs.iter().map(|f| format!("{f:?}")).collect()),
        Arg::Bool(b) => b.to_string(),
        Arg::Bools(xs) => list(xs.iter().map(bool::to_string).collect()),
        Arg::String(t) => format!("{t:?}"),
        Arg::Strings(xs) => list(xs.iter().map(|t| format!("{t:?}")).collect()),
        Arg::SymInt(x) => sym(x),
        Arg::SymInts(xs) => list(xs.iter().map(sym).collect()),
        Arg::ScalarType(d) => d.to_string(),
        Arg::MemoryFormat(t) | Arg::Layout(t) => t.clone(),
        Arg::Device(d) => norm.map_or(d.clone(), |n| n.device(d).to_string()),
        Arg::Opaque { kind, json } => format!("{kind}:{json}"),
    }
}

fn output_text(k: &ValueKind) -> String {
    match k {
        ValueKind::Tensor(t) => {
            format!("{}[{}]", t.dtype.short_name(), t.sizes.iter().map(Expr::to_string).collect::<Vec<_>>().join(", "))
        }
        ValueKind::SymInt(e) => format!("Sym({e})"),
        ValueKind::SymBool(e) => format!("SymBool({e})"),
        ValueKind::SymFloat(e) => format!("SymFloat({e})"),
        ValueKind::Other(t) => t.clone(),
    }
}

fn node_ref(g: &Graph, id: NodeId) -> NodeRef {
    let n = g.node(id);
    NodeRef {
        index: Some(id.0),
        name: n.name.clone(),
        op: n.target.clone(),
        outputs: n.outputs.iter().map(|v| output_text(&g.value(*v).kind)).collect(),
    }
}

fn input_ref(g: &Graph, v: ValueId) -> NodeRef {
    let val = g.value(v);
    NodeRef { index: None, name: val.name.clone(), op: "input".into(), outputs: vec![output_text(&val.kind)] }
}

/// The group a node is listed under: its module path, else its source line, else none.
fn group_of(n: &Node) -> String {
    let module = n.meta.module_path();
    if !module.is_empty() {
        return module.to_string();
    }
    match n.meta.stack_trace.as_deref().and_then(SourceLoc::from_stack_trace) {
        Some(l) => format!("{}:{}", basename(&l.file), l.line),
        None => String::new(),
    }
}

/// Each graph input's group: the module its parameter or buffer belongs to.
fn input_groups(g: &Graph) -> HashMap<ValueId, String> {
    g.inputs
        .iter()
        .map(|(v, k)| (*v, k.fqn().and_then(|f| f.rsplit_once('.')).map(|(module, _)| module.to_string()).unwrap_or_default()))
        .collect()
}

/// Every graph input and node of both graphs as entries: inputs first, then A's nodes in order
/// with B's unmatched nodes placed before the first B node that follows them and has a partner.
pub(super) fn entries(a: &Graph, b: &Graph, m: &Matching) -> Vec<Entry> {
    let mut out = Vec::with_capacity(a.nodes.len() + b.inputs.len() + a.inputs.len());
    let (groups_a, groups_b) = (input_groups(a), input_groups(b));
    for &(va, vb) in &m.inputs {
        let changes = match (va, vb) {
            (Some(x), Some(y)) => value_changes("input", &a.value(x).kind, &b.value(y).kind, &m.norm),
            _ => Vec::new(),
        };
        let class = match (va, vb) {
            (Some(_), None) => Class::OnlyA,
            (None, Some(_)) => Class::OnlyB,
            _ if changes.is_empty() => Class::Same,
            _ => Class::Changed,
        };
        let group = va.and_then(|v| groups_a.get(&v)).or_else(|| vb.and_then(|v| groups_b.get(&v))).cloned().unwrap_or_default();
        out.push(Entry {
            class,
            group,
            a: va.map(|v| input_ref(a, v)),
            b: vb.map(|v| input_ref(b, v)),
            matched_by: (va.is_some() && vb.is_some()).then_some(MatchedBy::Input),
            changes,
        });
    }
    let only_b = |ib: NodeId| Entry {
        class: Class::OnlyB,
        group: group_of(b.node(ib)),
        a: None,
        b: Some(node_ref(b, ib)),
        matched_by: None,
        changes: Vec::new(),
    };
    let mut next_b = 0usize;
    for ia in a.node_ids() {
        match m.a2b[ia.index()] {
            Some(ib) => {
                while next_b < ib.index() {
                    if m.b2a[next_b].is_none() {
                        out.push(only_b(NodeId(next_b as u32)));
                    }
                    next_b += 1;
                }
                next_b = next_b.max(ib.index() + 1);
                let changes = node_changes(a, b, ia, ib, m);
                let (na, nb) = (a.node(ia), b.node(ib));
                let group = Some(group_of(na)).filter(|g| !g.is_empty()).unwrap_or_else(|| group_of(nb));
                out.push(Entry {
                    class: if changes.is_empty() { Class::Same } else { Class::Changed },
                    group,
                    a: Some(node_ref(a, ia)),
                    b: Some(node_ref(b, ib)),
                    matched_by: m.how[ia.index()],
                    changes,
                });
            }
            None => out.push(Entry {
                class: Class::OnlyA,
                group: group_of(a.node(ia)),
                a: Some(node_ref(a, ia)),
                b: None,
                matched_by: None,
                changes: Vec::new(),
            }),
        }
    }
    for ib in next_b..b.nodes.len() {
        if m.b2a[ib].is_none() {
            out.push(only_b(NodeId(ib as u32)));
        }
    }
    out
}

fn node_changes(a: &Graph, b: &Graph, ia: NodeId, ib: NodeId, m: &Matching) -> Vec<Change> {
    let (na, nb) = (a.node(ia), b.node(ib));
    let mut out = Vec::new();
    if na.target != nb.target {
        out.push(Change { kind: ChangeKind::Op, what: "op".into(), a: na.target.clone(), b: nb.target.clone() });
    }
    // Arguments by position: `view(self, size)` and `reshape(self, shape)` take the same ones.
    for i in 0..na.args.len().max(nb.args.len()) {
        let (x, y) = (na.args.get(i), nb.args.get(i));
        let name = x.or(y).map(|n| n.name.as_str()).unwrap_or("");
        let what = format!("arg {i} ({name})");
        let (Some(x), Some(y)) = (x, y) else {
            let text = |n: Option<&crate::ir::NamedArg>, g: &Graph| n.map_or("absent".into(), |n| render_arg(&n.arg, None, &|v| g.value(v).name.clone()));
            out.push(Change { kind: ChangeKind::Arguments, what, a: text(x, a), b: text(y, b) });
            continue;
        };
        // Two values made by nodes only one side has each say nothing about this node: those
        // nodes are listed on their own. A value matched to something other than what the other
        // side reads is a change of wiring; a different constant is a change of argument.
        let rewired = x.arg.values().iter().zip(y.arg.values().iter()).any(|(va, vb)| {
            let (p, q) = (m.va2b[va.index()], m.vb2a[vb.index()]);
            (p.is_some() || q.is_some()) && p != Some(*vb)
        });
        let consts_differ = render_arg(&x.arg, Some(&m.norm), &|_| "%".into()) != render_arg(&y.arg, None, &|_| "%".into());
        if rewired || consts_differ || x.arg.values().len() != y.arg.values().len() {
            out.push(Change {
                kind: ChangeKind::Arguments,
                what,
                a: render_arg(&x.arg, None, &|v| a.value(v).name.clone()),
                b: render_arg(&y.arg, None, &|v| b.value(v).name.clone()),
            });
        }
    }
    if na.outputs.len() != nb.outputs.len() {
        out.push(Change { kind: ChangeKind::Shape, what: "outputs".into(), a: na.outputs.len().to_string(), b: nb.outputs.len().to_string() });
    }
    for (k, (va, vb)) in na.outputs.iter().zip(&nb.outputs).enumerate() {
        out.extend(value_changes(&format!("output {k}"), &a.value(*va).kind, &b.value(*vb).kind, &m.norm));
    }
    out
}

/// Shape, strides and dtype of two values, A's symbols renamed as B's.
fn value_changes(what: &str, x: &ValueKind, y: &ValueKind, norm: &Normalizer) -> Vec<Change> {
    let mut out = Vec::new();
    let change = |kind, a: String, b: String| Change { kind, what: what.to_string(), a, b };
    match (x, y) {
        (ValueKind::Tensor(p), ValueKind::Tensor(q)) => {
            let dims = |t: &TensorMeta, f: fn(&TensorMeta) -> &Vec<Expr>| {
                f(t).iter().map(Expr::to_string).collect::<Vec<_>>().join(", ")
            };
            let mapped = |es: &[Expr]| es.iter().map(|e| norm.expr(e)).collect::<Vec<_>>();
            if mapped(&p.sizes) != q.sizes {
                out.push(change(ChangeKind::Shape, format!("[{}]", dims(p, |t| &t.sizes)), format!("[{}]", dims(q, |t| &t.sizes))));
            } else if mapped(&p.strides) != q.strides {
                out.push(change(ChangeKind::Strides, format!("[{}]", dims(p, |t| &t.strides)), format!("[{}]", dims(q, |t| &t.strides))));
            }
            if p.dtype != q.dtype {
                out.push(change(ChangeKind::Dtype, p.dtype.to_string(), q.dtype.to_string()));
            }
        }
        (ValueKind::SymInt(p), ValueKind::SymInt(q)) | (ValueKind::SymFloat(p), ValueKind::SymFloat(q)) | (ValueKind::SymBool(p), ValueKind::SymBool(q)) => {
            if norm.expr(p) != *q {
                out.push(change(ChangeKind::Shape, p.to_string(), q.to_string()));
            }
        }
        (ValueKind::Other(_), ValueKind::Other(_)) => {}
        _ => out.push(change(ChangeKind::Dtype, output_text(x), output_text(y))),
    }
    out
}
