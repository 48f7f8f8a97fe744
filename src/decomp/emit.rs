//! The rewriting engine: copies a graph node by node, replacing the nodes the mode decomposes
//! with what their rules emit (recursively, to a fixpoint, as Inductor does), and records
//! provenance.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::functionalize;
use super::rules::{self, Table};
use super::{DecompError, Decomposed, Decomposition, Marks, Mode, Provenance};
use crate::infer::{infer, InferError};
use crate::ir::{Arg, Graph, NamedArg, Node, NodeId, NodeMeta, Origin, SymIntArg, TensorMeta, ValueId, ValueKind};
use crate::sym::Expr;

/// Why a rule could not rewrite a node.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuleError {
    #[error("argument `{name}`: {message}")]
    Arg { name: String, message: String },
    #[error(transparent)]
    Infer(#[from] InferError),
    #[error("{0}")]
    Unsupported(String),
    #[error("rules nest deeper than {0} levels (a rule emits its own op?)")]
    TooDeep(usize),
    /// The rule does not apply to these arguments and the op stays whole, as a PyTorch
    /// decomposition that returns `NotImplemented`. A rule declines before emitting anything.
    #[error("the decomposition declines these arguments")]
    Declined,
}

const MAX_DEPTH: usize = 16;

/// Which nodes a rewrite decomposes, and with which table.
#[derive(Clone, Copy)]
pub(super) enum Select<'a> {
    /// `mode`'s table on every node; in lite mode only on the nodes these marks mark.
    Marked(&'a Marks),
    /// [`Table::Lowering`] on every node: what has no kernel lowering is expanded, to a fixpoint.
    /// Nothing is pruned, and a rule that fails keeps its node whole (in `failed`), so that one
    /// bad node does not hide what the others expand to.
    NoKernel,
}

/// Rewrites `graph` under `mode`, decomposing what `select` selects; with `functional`, in-place
/// ops first become functional ones and writes through views become scatters into their base
/// ([`functionalize`]).
pub(super) fn run(graph: &Graph, mode: Mode, select: Select, functional: bool) -> Result<Decomposition, DecompError> {
    let mut out = Graph::new(graph.name.clone());
    out.torch_version = graph.torch_version.clone();
    let mut map: Vec<Option<ValueId>> = vec![None; graph.values.len()];
    let mut taken: HashSet<String> = graph.values.iter().map(|v| v.name.clone()).collect();
    taken.extend(graph.nodes.iter().map(|n| n.name.clone()));
    for (v, kind) in &graph.inputs {
        let value = graph.value(*v);
        // Names are unique in `graph`, so re-adding them cannot collide.
        let id = out.add_input(&value.name, value.kind.clone(), kind.clone()).map_err(|e| DecompError {
            node: value.name.clone(),
            target: "placeholder".into(),
            source: RuleError::Unsupported(e.to_string()),
        })?;
        map[v.index()] = Some(id);
    }
    let grad = grad_values(graph);
    let mut em = Emitter { out, map, taken, counter: 0, origin: Vec::new(), sym_values: HashMap::new(), pinned: HashSet::new(), grad };
    let mut decomposed = Vec::new();
    let mut kept = Vec::new();
    let mut no_rule = Vec::new();
    let mut products = vec![Vec::new(); graph.nodes.len()];
    let mut functionalized = Vec::new();
    let mut views = functionalize::Views::new(graph);
    let mut write_backs = Vec::new();
    let mut failed = Vec::new();
    // PyTorch's decompositions re-trace the program, so what nothing reads is not in their graphs.
    let prunes = mode != Mode::None && matches!(select, Select::Marked(_));
    let live = if prunes { live_nodes(graph) } else { vec![true; graph.nodes.len()] };
    for (i, node) in graph.nodes.iter().enumerate() {
        let id = NodeId(i as u32);
        if !live[i] {
            continue;
        }
        let err = |source: RuleError| DecompError { node: node.name.clone(), target: node.target.clone(), source };
        let table = match select {
            Select::Marked(marks) if mode == Mode::Lite && !marks.marks(node) => None,
            Select::Marked(_) => mode.table(),
            Select::NoKernel => Some(Table::Lowering),
        };
        let first_new = em.out.nodes.len();
        if functional {
            // A view read after its base was written in place is taken again from the new base.
            let before = em.out.nodes.len();
            let mut rw = Rw::at(&mut em, node, table, id);
            views.refresh(&mut rw, graph, node.inputs()).map_err(err)?;
            write_backs.extend((before..em.out.nodes.len()).map(|n| NodeId(n as u32)));
        }
        if functional && functionalize::writes_nothing(&node.target) {
            // Nothing to emit: the result is the input as it is now.
            let input = functionalize::written(node)
                .ok_or_else(|| err(RuleError::Arg { name: "self".into(), message: "expected a tensor".into() }))?;
            let now = em.mapped(input).map_err(err)?;
            em.bind_outputs(graph, node, &[now]).map_err(err)?;
            functionalized.push(id);
            products[i] = (first_new..em.out.nodes.len()).map(|n| NodeId(n as u32)).collect();
            continue;
        }
        // Every mode but `none` works on the functionalized graph, as PyTorch's do, unless the
        // table has a rule for the in-place op itself (`dropout_`: torch decomposes it whole).
        let version = em.out.torch_version.clone();
        let inplace_rule = table.is_some_and(|t| rules::find_for(t, &node.target, version.as_deref()).is_some());
        let functional_node = match functionalize::functional_node(node) {
            Some(f) if functional && !inplace_rule => {
                views.check_writable(graph, node).map_err(err)?;
                functionalized.push(id);
                Some(f)
            }
            _ => None,
        };
        let node = functional_node.as_ref().unwrap_or(node);
        let rule = match table {
            Some(t) => rules::find_for(t, &node.target, version.as_deref()).map(|r| (Some(t), r)),
            // What the interpreter and the kernels cannot run, tracing would have expanded:
            // a composite op known only by its traced body becomes that body here.
            None if functional && rules::traced::only_traced(&node.target) => Some((None, rules::traced::expand as rules::Build)),
            None => None,
        };
        let rule_start = em.out.nodes.len();
        let built = match rule {
            Some((table, rule)) => {
                let mark = em.mark();
                let mut rw = Rw { em: &mut em, node, table, origin: id, depth: 0, nested: false };
                match rule(&mut rw) {
                    Err(RuleError::Declined) => None,
                    Err(e) if matches!(select, Select::NoKernel) => {
                        em.rollback(mark);
                        failed.push((id, e));
                        None
                    }
                    result => Some(result.map_err(err)?),
                }
            }
            None => None,
        };
        match built {
            Some(outs) => {
                em.bind_outputs(graph, node, &outs).map_err(err)?;
                let into = em.out.nodes[rule_start..].iter().fold(BTreeMap::new(), |mut h, n| {
                    *h.entry(n.target.clone()).or_insert(0) += 1;
                    h
                });
                decomposed.push(Decomposed { node: id, into });
            }
            // A size computed again whose expression has a value already (`2*s53*s72` that an
            // earlier node's size was built as) is that value: torch's re-trace looks sizes up by
            // expression (`sympy_expr_tracker`), and the node is not traced again.
            None if mode != Mode::None && existing_size(&em, graph, node).is_some() => {
                if let (Some(v), [out]) = (existing_size(&em, graph, node), &node.outputs[..]) {
                    em.map[out.index()] = Some(v);
                }
                let operands: Vec<ValueId> = node.inputs().filter_map(|v| em.image(v)).collect();
                em.pin(operands);
                kept.push(id);
            }
            None => {
                if table.is_some_and(|t| rule.is_none() && rules::wants_rule(t, &node.target, em.out.torch_version.as_deref())) {
                    no_rule.push(id);
                }
                em.copy(graph, node, id).map_err(err)?;
                kept.push(id);
            }
        }
        if functional_node.is_some() {
            // Later readers of the mutated tensor (and of its base) read the functional result.
            let before = em.out.nodes.len();
            let mut rw = Rw::at(&mut em, node, table, id);
            views.write_back(&mut rw, graph, id).map_err(err)?;
            write_backs.extend((before..em.out.nodes.len()).map(|n| NodeId(n as u32)));
        } else if functional {
            views.note(graph, id);
        }
        products[i] = (first_new..em.out.nodes.len()).map(|n| NodeId(n as u32)).collect();
    }
    if functional {
        let outputs: Vec<ValueId> = graph.outputs.iter().flat_map(|o| o.values()).collect();
        let last = graph.nodes.len().checked_sub(1).map(|n| NodeId(n as u32));
        if let Some(last) = last {
            let before = em.out.nodes.len();
            // Views taken again for the outputs: lite keeps them as written (nothing marked them).
            let table = if mode == Mode::Lite { None } else { mode.table() };
            let mut rw = Rw::at(&mut em, &graph.nodes[last.index()], table, last);
            views.refresh(&mut rw, graph, outputs.into_iter())
                .map_err(|e| DecompError { node: "output".into(), target: "output".into(), source: e })?;
            let taken: Vec<NodeId> = (before..em.out.nodes.len()).map(|n| NodeId(n as u32)).collect();
            products[last.index()].extend(taken.iter().copied());
            write_backs.extend(taken);
        }
    }
    for o in &graph.outputs {
        let arg = em.map_arg(o).map_err(|e| DecompError { node: "output".into(), target: "output".into(), source: e })?;
        em.out.outputs.push(arg);
    }
    let mutations = views.mutations(graph, &em);
    let pinned = std::mem::take(&mut em.pinned);
    let d = Decomposition {
        mode,
        graph: em.out,
        provenance: Provenance { origin: em.origin, products },
        decomposed,
        kept,
        no_rule,
        failed,
        functionalized,
        write_backs,
        mutations,
    };
    if prunes {
        super::prune::prune(d, &pinned)
    } else {
        Ok(d)
    }
}

/// For a Python operator on SymInts whose result expression already has a value in the output
/// graph: that value.
fn existing_size(em: &Emitter, graph: &Graph, node: &Node) -> Option<ValueId> {
    if !node.target.starts_with("_operator.") {
        return None;
    }
    match (&node.outputs[..], node.outputs.first().map(|o| &graph.value(*o).kind)) {
        ([_], Some(ValueKind::SymInt(e))) => em.sym_values.get(e).copied(),
        _ => None,
    }
}

/// Per value of `graph`: whether it requires grad when torch re-traces it (export's retrace takes
/// parameters as inputs that require grad, whatever the archive's metadata says): a floating
/// tensor computed from a parameter, not through a `detach` or a factory that reads only its
/// input's shape and dtype (`zeros_like`, `new_empty`).
fn grad_values(graph: &Graph) -> Vec<bool> {
    let mut grad = vec![false; graph.values.len()];
    let floating = |v: ValueId| graph.value(v).tensor().is_some_and(|m| m.dtype.is_floating() || m.dtype.is_complex());
    for (v, kind) in &graph.inputs {
        grad[v.index()] = matches!(kind, crate::ir::InputKind::Parameter { .. }) && floating(*v);
    }
    for n in &graph.nodes {
        let op = n.target.split('.').nth(1).unwrap_or("");
        if op.starts_with("detach") || op.ends_with("_like") || op.starts_with("new_") || !n.inputs().any(|v| grad[v.index()]) {
            continue;
        }
        for v in &n.outputs {
            grad[v.index()] = floating(*v);
        }
    }
    grad
}

/// Which nodes a re-trace keeps: those whose results reach a graph output, and those with an
/// effect (`_assert_*`, `sym_constrain_range*`, in-place writes) whatever reads them.
fn live_nodes(graph: &Graph) -> Vec<bool> {
    let mut live = vec![false; graph.nodes.len()];
    let mut needed = vec![false; graph.values.len()];
    for o in &graph.outputs {
        for v in o.values() {
            needed[v.index()] = true;
        }
    }
    for (i, n) in graph.nodes.iter().enumerate().rev() {
        let effect = super::prune::has_effect(&n.target) || functionalize::functional_target(&n.target).is_some();
        if effect || n.outputs.iter().any(|v| needed[v.index()]) {
            live[i] = true;
            for v in n.inputs() {
                needed[v.index()] = true;
            }
        }
    }
    live
}

/// The graph being built, the value map from input to output graph, and fresh-name state.
pub(super) struct Emitter {
    pub out: Graph,
    map: Vec<Option<ValueId>>,
    taken: HashSet<String>,
    counter: usize,
    origin: Vec<NodeId>,
    /// A SymInt value of the output graph for each size expression, copied or emitted, so rules
    /// reuse one `sym_size` / `mul` node per expression as PyTorch's graphs do.
    sym_values: HashMap<Expr, ValueId>,
    /// Sizes that an operation torch records and then erases read ([`Emitter::pin`]): they stay
    /// in the graph whether anything reads them or not.
    pinned: HashSet<ValueId>,
    /// Per input-graph value: whether it requires grad when torch re-traces ([`grad_values`]).
    grad: Vec<bool>,
}

impl Emitter {
    /// An emitter that appends to a copy of `graph`, every value standing for itself.
    fn scratch(graph: &Graph) -> Emitter {
        let map = (0..graph.values.len()).map(|i| Some(ValueId(i as u32))).collect();
        let mut taken: HashSet<String> = graph.values.iter().map(|v| v.name.clone()).collect();
        taken.extend(graph.nodes.iter().map(|n| n.name.clone()));
        let grad = vec![false; graph.values.len()];
        let mut em = Emitter { out: graph.clone(), map, taken, counter: 0, origin: Vec::new(), sym_values: HashMap::new(), pinned: HashSet::new(), grad };
        let ids: Vec<ValueId> = (0..graph.values.len()).map(|i| ValueId(i as u32)).collect();
        em.register_sym_ints(&ids);
        em
    }

    /// The output-graph value input-graph value `v` stands for now, if any.
    pub(super) fn image(&self, v: ValueId) -> Option<ValueId> {
        self.map.get(v.index()).copied().flatten()
    }

    fn mapped(&self, v: ValueId) -> Result<ValueId, RuleError> {
        self.map
            .get(v.index())
            .copied()
            .flatten()
            .ok_or_else(|| RuleError::Unsupported(format!("value #{} has no image in the output graph", v.0)))
    }

    fn map_arg(&self, a: &Arg) -> Result<Arg, RuleError> {
        a.try_map_values(|v| self.mapped(v))
    }

    /// Copies `node` whole, keeping its name and output names.
    fn copy(&mut self, graph: &Graph, node: &Node, origin: NodeId) -> Result<(), RuleError> {
        let args = node
            .args
            .iter()
            .map(|a| Ok(NamedArg { name: a.name.clone(), arg: self.map_arg(&a.arg)?, kwarg: a.kwarg }))
            .collect::<Result<Vec<_>, RuleError>>()?;
        let outputs = node.outputs.iter().map(|v| (graph.value(*v).name.clone(), graph.value(*v).kind.clone())).collect();
        self.out
            .add_node(&node.name, &node.target, args, outputs, node.meta.clone())
            .map_err(|e| RuleError::Unsupported(e.to_string()))?;
        self.origin.push(origin);
        let new = self.out.nodes.last().map(|n| n.outputs.clone()).unwrap_or_default();
        for (old, new) in node.outputs.iter().zip(&new) {
            self.map[old.index()] = Some(*new);
        }
        self.register_sym_ints(&new);
        Ok(())
    }

    /// A rule returned one value per output of the original node (possibly fewer when
    /// trailing outputs are unused by anything: those must be unused, or it is an error).
    fn bind_outputs(&mut self, graph: &Graph, node: &Node, outs: &[ValueId]) -> Result<(), RuleError> {
        if outs.len() < node.outputs.len() {
            let users = graph.users();
            for old in &node.outputs[outs.len()..] {
                let used = !users[old.index()].is_empty() || graph.outputs.iter().any(|o| o.values().contains(old));
                if used {
                    return Err(RuleError::Unsupported(format!(
                        "the rule does not produce output `{}`, which is used",
                        graph.value(*old).name
                    )));
                }
            }
        }
        for (old, new) in node.outputs.iter().zip(outs) {
            self.map[old.index()] = Some(*new);
        }
        Ok(())
    }

    /// Keeps the size operands of a size operation that is not emitted because its result has
    /// a value already. Torch's re-trace records the operation, drops what nothing reads, then
    /// hash-conses sizes by expression (`insert_deferred_runtime_asserts`): the duplicate is
    /// erased after that, and its operands stay, read by nothing (Bloom's `64*b*s` of a
    /// `reshape`'s `-1`, an `arange`'s length that folds back to its end).
    fn pin(&mut self, operands: impl IntoIterator<Item = ValueId>) {
        for v in operands {
            if matches!(self.out.value(v).kind, ValueKind::SymInt(_)) {
                self.pinned.insert(v);
            }
        }
    }

    fn register_sym_ints(&mut self, values: &[ValueId]) {
        for v in values {
            if let ValueKind::SymInt(e) = &self.out.value(*v).kind {
                self.sym_values.entry(e.clone()).or_insert(*v);
            }
        }
    }

    /// Where the output graph stands now, to roll back to.
    fn mark(&self) -> EmitMark {
        EmitMark { nodes: self.out.nodes.len(), values: self.out.values.len() }
    }

    /// Forgets what was emitted since `mark` (a rule that failed half-way). Input-graph values
    /// are bound only once a rule succeeds, so no binding points past the mark.
    fn rollback(&mut self, mark: EmitMark) {
        self.out.truncate(mark.nodes, mark.values);
        self.origin.truncate(mark.nodes);
        self.sym_values.retain(|_, v| v.index() < mark.values);
        self.pinned.retain(|v| v.index() < mark.values);
    }

    fn fresh(&mut self, base: &str) -> String {
        loop {
            self.counter += 1;
            let name = format!("{base}_d{}", self.counter);
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}

/// The outputs' metadata of `target(args)` (arguments are values of `graph`) read off the op's
/// decomposition, built on a scratch copy of `graph` with nothing decomposed further: a
/// composite op's meta function is its decomposition, as PyTorch traces composite ops on fake
/// tensors. `None` when the op has no rule.
pub(crate) fn infer_by_rule(target: &str, args: &[NamedArg], graph: &Graph) -> Option<Result<Vec<ValueKind>, RuleError>> {
    let rule = rules::find(Table::Core, target).or_else(|| rules::find(Table::Inductor, target))?;
    let mut em = Emitter::scratch(graph);
    let node = Node { name: "meta".into(), target: target.into(), args: args.to_vec(), outputs: Vec::new(), meta: NodeMeta::default() };
    let outs = {
        let mut rw = Rw { em: &mut em, node: &node, table: None, origin: NodeId(0), depth: 0, nested: true };
        rule(&mut rw)
    };
    Some(outs.map(|outs| outs.iter().map(|v| em.out.value(*v).kind.clone()).collect()))
}

/// The size of the output graph at some point of a rewrite.
#[derive(Clone, Copy)]
struct EmitMark {
    nodes: usize,
    values: usize,
}

/// What a rule builder sees: the node being rewritten, its arguments mapped into the output
/// graph, and ways to emit new nodes.
pub struct Rw<'a> {
    em: &'a mut Emitter,
    node: &'a Node,
    /// `None` where nothing is decomposed (mode `none`, lite's unmarked nodes): ops are emitted as they are.
    table: Option<Table>,
    origin: NodeId,
    depth: usize,
    /// A nested rule's node already reads output-graph values: no mapping.
    nested: bool,
}

/// An argument value for an emitted node.
pub enum A {
    T(ValueId),
    OptT(Option<ValueId>),
    F(f64),
    I(i64),
    Is(Vec<i64>),
    B(bool),
    S(String),
    Sizes(Vec<SymIntArg>),
    Raw(Arg),
}

impl<'a> Rw<'a> {
    /// A writer of nodes on behalf of `node` (input-graph node `origin`) that reads output-graph
    /// values: what functionalization emits (views taken again, scatters) is attributed to it.
    pub(super) fn at(em: &'a mut Emitter, node: &'a Node, table: Option<Table>, origin: NodeId) -> Rw<'a> {
        Rw { em, node, table, origin, depth: 0, nested: true }
    }

    /// The output-graph value standing for input-graph value `v` now.
    pub(super) fn current(&self, v: ValueId) -> Result<ValueId, RuleError> {
        self.em.mapped(v)
    }

    /// Makes input-graph value `v` stand for output-graph value `new` from here on.
    pub(super) fn rebind(&mut self, v: ValueId, new: ValueId) {
        self.em.map[v.index()] = Some(new);
    }

    /// An input-graph argument with its values mapped into the output graph.
    pub(super) fn mapped_arg(&self, a: &Arg) -> Result<Arg, RuleError> {
        self.em.map_arg(a)
    }

    /// Emits `node` of the input graph again (a view taken anew), reading `src` for its first
    /// tensor argument; returns every output.
    pub(super) fn again(&mut self, node: &Node, src: ValueId) -> Result<Vec<ValueId>, RuleError> {
        let mut args = Vec::with_capacity(node.args.len());
        let mut replaced = false;
        for a in &node.args {
            let arg = match &a.arg {
                Arg::Tensor(_) if !replaced => {
                    replaced = true;
                    Arg::Tensor(src)
                }
                other => self.em.map_arg(other)?,
            };
            args.push((a.name.as_str(), A::Raw(arg)));
        }
        self.op_n(&node.target, args)
    }

    fn raw(&self, name: &str) -> Option<&'a Arg> {
        // The first argument is `self` in some overloads of an op and `input` in others
        // (`dropout_(Tensor(a!) self, ...)` vs `dropout(Tensor input, ...)`): functionalized nodes
        // keep the in-place spelling.
        self.node.arg(name).or_else(|| match name {
            "input" => self.node.arg("self"),
            "self" => self.node.arg("input"),
            _ => None,
        })
    }

    fn arg_err(name: &str, message: impl Into<String>) -> RuleError {
        RuleError::Arg { name: name.to_string(), message: message.into() }
    }

    fn resolve(&self, v: ValueId) -> Result<ValueId, RuleError> {
        if self.nested {
            Ok(v)
        } else {
            self.em.mapped(v)
        }
    }

    /// A tensor argument of the node being rewritten, as its output-graph value.
    pub fn t(&self, name: &str) -> Result<ValueId, RuleError> {
        match self.raw(name) {
            Some(Arg::Tensor(v)) => self.resolve(*v),
            _ => Err(Self::arg_err(name, "expected a tensor")),
        }
    }

    pub fn opt_t(&self, name: &str) -> Result<Option<ValueId>, RuleError> {
        match self.raw(name) {
            None | Some(Arg::None) => Ok(None),
            _ => self.t(name).map(Some),
        }
    }

    pub fn int(&self, name: &str, default: Option<i64>) -> Result<i64, RuleError> {
        match self.raw(name) {
            Some(Arg::Int(i)) | Some(Arg::SymInt(SymIntArg::Int(i))) => Ok(*i),
            None | Some(Arg::None) => default.ok_or_else(|| Self::arg_err(name, "missing")),
            Some(a) => Err(Self::arg_err(name, format!("expected an int, found {a:?}"))),
        }
    }

    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, RuleError> {
        match self.raw(name) {
            Some(Arg::Ints(v)) => Ok(Some(v.clone())),
            Some(Arg::Int(i)) => Ok(Some(vec![*i])),
            None | Some(Arg::None) => Ok(None),
            Some(a) => Err(Self::arg_err(name, format!("expected an int list, found {a:?}"))),
        }
    }

    pub fn float(&self, name: &str, default: Option<f64>) -> Result<f64, RuleError> {
        match self.raw(name) {
            Some(Arg::Float(f)) => Ok(*f),
            Some(Arg::Int(i)) => Ok(*i as f64),
            None | Some(Arg::None) => default.ok_or_else(|| Self::arg_err(name, "missing")),
            Some(a) => Err(Self::arg_err(name, format!("expected a number, found {a:?}"))),
        }
    }

    /// A scalar argument kept as given (int or float), for ops that take either.
    pub fn scalar(&self, name: &str) -> Option<A> {
        match self.raw(name) {
            Some(Arg::Float(f)) => Some(A::F(*f)),
            Some(Arg::Int(i)) => Some(A::I(*i)),
            _ => None,
        }
    }

    pub fn bool(&self, name: &str, default: bool) -> Result<bool, RuleError> {
        match self.raw(name) {
            Some(Arg::Bool(b)) => Ok(*b),
            None | Some(Arg::None) => Ok(default),
            Some(a) => Err(Self::arg_err(name, format!("expected a bool, found {a:?}"))),
        }
    }

    pub fn string(&self, name: &str, default: &str) -> Result<String, RuleError> {
        match self.raw(name) {
            Some(Arg::String(s)) => Ok(s.clone()),
            None | Some(Arg::None) => Ok(default.to_string()),
            Some(a) => Err(Self::arg_err(name, format!("expected a string, found {a:?}"))),
        }
    }

    /// The original argument, with values mapped (for rules that forward it untouched).
    pub fn passthrough(&self, name: &str) -> Result<Option<Arg>, RuleError> {
        match self.raw(name) {
            Some(a) if self.nested => Ok(Some(a.clone())),
            Some(a) => self.em.map_arg(a).map(Some),
            None => Ok(None),
        }
    }

    /// The target of the node being rewritten (rules shared by several ops read it).
    pub fn target(&self) -> &str {
        &self.node.target
    }

    /// The table this rewrite applies (`None`: nothing is decomposed further).
    pub fn table(&self) -> Option<Table> {
        self.table
    }

    /// The torch version of the graph being rewritten, if the file records it.
    pub fn torch_version(&self) -> Option<&str> {
        self.em.out.torch_version.as_deref()
    }

    /// What output-graph value `v` is (a tensor, a SymInt, ...).
    pub fn kind(&self, v: ValueId) -> &ValueKind {
        &self.em.out.value(v).kind
    }

    pub fn meta(&self, v: ValueId) -> Result<&TensorMeta, RuleError> {
        self.em.out.value(v).tensor().ok_or_else(|| RuleError::Unsupported("expected a tensor value".into()))
    }

    pub fn rank(&self, v: ValueId) -> Result<usize, RuleError> {
        Ok(self.meta(v)?.sizes.len())
    }

    /// Emits `target(args)` and returns its first output.
    pub fn op(&mut self, target: &str, args: Vec<(&str, A)>) -> Result<ValueId, RuleError> {
        self.op_n(target, args)?
            .first()
            .copied()
            .ok_or_else(|| RuleError::Unsupported(format!("{target} has no outputs")))
    }

    /// Emits `target(args)`; if the table has a rule for `target`, applies it instead
    /// (decomposition to a fixpoint). Returns every output.
    pub fn op_n(&mut self, target: &str, args: Vec<(&str, A)>) -> Result<Vec<ValueId>, RuleError> {
        self.op_n_with(target, args, None)
    }

    /// [`Rw::op_n`], with the outputs' metadata to use where the op has no meta function
    /// (torch's own, recorded with a traced expansion).
    pub fn op_n_with(&mut self, target: &str, args: Vec<(&str, A)>, known: Option<Vec<ValueKind>>) -> Result<Vec<ValueId>, RuleError> {
        let named: Vec<NamedArg> =
            args.into_iter().map(|(n, a)| NamedArg { name: n.to_string(), arg: a.into_arg(), kwarg: false }).collect();
        let version = self.em.out.torch_version.as_deref();
        if let Some(rule) = self.table.and_then(|t| rules::find_for(t, target, version)) {
            if self.depth >= MAX_DEPTH {
                return Err(RuleError::TooDeep(MAX_DEPTH));
            }
            // A transient node, so the nested rule reads its arguments like any other.
            let mut from_node = vec![Origin { name: self.node.name.clone(), target: self.node.target.clone() }];
            from_node.extend(self.node.meta.from_node.iter().cloned());
            let inner = Node {
                name: self.node.name.clone(),
                target: target.to_string(),
                args: named.clone(),
                outputs: Vec::new(),
                meta: NodeMeta { from_node, ..self.node.meta.clone() },
            };
            match self.nested(inner, rule) {
                Err(RuleError::Declined) => {}
                done => return done,
            }
        }
        self.emit(target, named, known)
    }

    fn emit(&mut self, target: &str, named: Vec<NamedArg>, known: Option<Vec<ValueKind>>) -> Result<Vec<ValueId>, RuleError> {
        let kinds = match (infer(target, &named, &self.em.out), known) {
            (Ok(kinds), _) => kinds,
            (Err(_), Some(kinds)) => kinds,
            (Err(e), None) => return Err(e.into()),
        };
        let base = target.split('.').nth(1).unwrap_or(target).trim_start_matches('_').to_string();
        let names: Vec<(String, ValueKind)> = kinds.into_iter().map(|k| (self.em.fresh(&base), k)).collect();
        let node_name = names.first().map(|(n, _)| n.clone()).unwrap_or_else(|| self.em.fresh(&base));
        let mut from_node = vec![Origin { name: self.node.name.clone(), target: self.node.target.clone() }];
        from_node.extend(self.node.meta.from_node.iter().cloned());
        let meta = NodeMeta { from_node, ..self.node.meta.clone() };
        let id = self
            .em
            .out
            .add_node(&node_name, target, named, names, meta)
            .map_err(|e| RuleError::Unsupported(e.to_string()))?;
        self.em.origin.push(self.origin);
        let outs = self.em.out.node(id).outputs.clone();
        self.em.register_sym_ints(&outs);
        Ok(outs)
    }

    /// Runs `rule` on a node whose arguments are already output-graph values.
    fn nested(&mut self, inner: Node, rule: rules::Build) -> Result<Vec<ValueId>, RuleError> {
        let mut rw = Rw {
            em: &mut *self.em,
            node: &inner,
            table: self.table,
            origin: self.origin,
            depth: self.depth + 1,
            nested: true,
        };
        rule(&mut rw)
    }

    /// Whether the graph was made by a torch older than `major.minor`; an unknown version counts
    /// as the newest (rules follow current PyTorch unless told otherwise).
    pub fn torch_older_than(&self, major: u32, minor: u32) -> bool {
        let Some(v) = self.em.out.torch_version.as_deref() else { return false };
        let mut parts = v.split(|c: char| !c.is_ascii_digit()).filter(|p| !p.is_empty()).map(|p| p.parse::<u32>().unwrap_or(0));
        let (a, b) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        (a, b) < (major, minor)
    }

    /// Size `dim` of `v` as a SymInt argument: a literal when static, else a `sym_size` node.
    pub fn size(&mut self, v: ValueId, dim: usize) -> Result<SymIntArg, RuleError> {
        let e = self.meta(v)?.sizes.get(dim).cloned().ok_or_else(|| RuleError::Unsupported("dim out of range".into()))?;
        if let Some(i) = e.as_int() {
            return Ok(SymIntArg::Int(i));
        }
        if let Some(s) = self.em.sym_values.get(&e) {
            return Ok(SymIntArg::Value(*s));
        }
        if let Some(s) = self.product_of_known(&e)? {
            return Ok(s);
        }
        Ok(SymIntArg::Value(self.op("aten.sym_size.int", vec![("self", A::T(v)), ("dim", A::I(dim as i64))])?))
    }

    /// A size that is a product of sizes with values already (`2*s53*s72` of the inputs'
    /// symbols), computed from them as torch's re-trace does for a size it has not seen
    /// (`_build_proxy_for_sym_expr`): the factors but the last folded left with
    /// `_operator.mul`, times the last; only the whole product is remembered as a value (the
    /// partial products stay unknown to later lookups, as in torch's `sympy_expr_tracker`).
    fn product_of_known(&mut self, e: &Expr) -> Result<Option<SymIntArg>, RuleError> {
        let Expr::Mul(factors) = e else { return Ok(None) };
        let known: Option<Vec<SymIntArg>> = factors
            .iter()
            .map(|f| match f.as_int() {
                Some(i) => Some(SymIntArg::Int(i)),
                None => self.em.sym_values.get(f).map(|v| SymIntArg::Value(*v)),
            })
            .collect();
        let Some(mut known) = known else { return Ok(None) };
        let Some(last) = known.pop() else { return Ok(None) };
        let mut acc = match known.first() {
            Some(first) => first.clone(),
            None => return Ok(None),
        };
        let mul = |rw: &mut Self, a: SymIntArg, b: SymIntArg| {
            rw.op("_operator.mul", vec![("a", A::Raw(Arg::SymInt(a))), ("b", A::Raw(Arg::SymInt(b)))])
        };
        for f in known.into_iter().skip(1) {
            let partial = mul(self, acc, f)?;
            // Forgotten again (where this node made it known): only the whole product is tracked.
            if let ValueKind::SymInt(pe) = self.em.out.value(partial).kind.clone() {
                if self.em.sym_values.get(&pe) == Some(&partial) {
                    self.em.sym_values.remove(&pe);
                }
            }
            acc = SymIntArg::Value(partial);
        }
        Ok(Some(SymIntArg::Value(mul(self, acc, last)?)))
    }

    /// The product of SymInt arguments, emitting `_operator.mul` for symbolic factors.
    pub fn product(&mut self, factors: Vec<SymIntArg>) -> Result<SymIntArg, RuleError> {
        let mut acc = SymIntArg::Int(1);
        for f in factors {
            acc = match (acc, f) {
                (SymIntArg::Int(a), SymIntArg::Int(b)) => SymIntArg::Int(a.checked_mul(b).ok_or_else(|| {
                    RuleError::Unsupported("static size product overflows".into())
                })?),
                (SymIntArg::Int(1), s) | (s, SymIntArg::Int(1)) => s,
                (a, b) => {
                    let e = Expr::mul(self.sym_expr(&a)?, self.sym_expr(&b)?);
                    match self.em.sym_values.get(&e).copied() {
                        Some(v) => {
                            self.em.pin([&a, &b].into_iter().filter_map(value_of));
                            SymIntArg::Value(v)
                        }
                        None => SymIntArg::Value(
                            self.op("_operator.mul", vec![("a", A::Raw(Arg::SymInt(a))), ("b", A::Raw(Arg::SymInt(b)))])?,
                        ),
                    }
                }
            };
        }
        Ok(acc)
    }

    /// `a <op> b` on a size (`_operator.add` / `sub` / `floordiv`), as PyTorch's symbolic tracing
    /// records it: a literal when both are static, the existing value when the expression already
    /// has one (`s + 1 - 1` is `s`), else a new `_operator` node.
    pub fn sym_arith(&mut self, op: &str, a: SymIntArg, b: i64) -> Result<SymIntArg, RuleError> {
        let e = self.sym_expr(&a)?;
        let r = match op {
            "add" => Expr::add(e, Expr::int(b)),
            "sub" => Expr::sub(e, Expr::int(b)),
            "floordiv" if b != 0 => Expr::floordiv(e, Expr::int(b)),
            _ => return Err(RuleError::Unsupported(format!("size arithmetic `{op}` by {b}"))),
        };
        if let Some(i) = r.as_int() {
            return Ok(SymIntArg::Int(i));
        }
        if let Some(v) = self.em.sym_values.get(&r).copied() {
            self.em.pin(value_of(&a));
            return Ok(SymIntArg::Value(v));
        }
        let target = format!("_operator.{op}");
        Ok(SymIntArg::Value(self.op(&target, vec![("a", A::Raw(Arg::SymInt(a))), ("b", A::I(b))])?))
    }

    /// `a <op> b` on two sizes, either of which may be symbolic (`end - start` of an `arange`
    /// from a dynamic start): as [`Rw::sym_arith`], a literal, an existing value, or a new node.
    pub fn sym_arith2(&mut self, op: &str, a: SymIntArg, b: SymIntArg) -> Result<SymIntArg, RuleError> {
        if let SymIntArg::Int(i) = b {
            return self.sym_arith(op, a, i);
        }
        let (x, y) = (self.sym_expr(&a)?, self.sym_expr(&b)?);
        let r = match op {
            "add" => Expr::add(x, y),
            "sub" => Expr::sub(x, y),
            "floordiv" => Expr::floordiv(x, y),
            _ => return Err(RuleError::Unsupported(format!("size arithmetic `{op}`"))),
        };
        if let Some(i) = r.as_int() {
            return Ok(SymIntArg::Int(i));
        }
        if let Some(v) = self.em.sym_values.get(&r).copied() {
            self.em.pin([&a, &b].into_iter().filter_map(value_of));
            return Ok(SymIntArg::Value(v));
        }
        let target = format!("_operator.{op}");
        Ok(SymIntArg::Value(self.op(&target, vec![("a", A::Raw(Arg::SymInt(a))), ("b", A::Raw(Arg::SymInt(b)))])?))
    }

    /// The expression a size argument stands for.
    pub fn sym_expr(&self, s: &SymIntArg) -> Result<Expr, RuleError> {
        match s {
            SymIntArg::Int(i) => Ok(Expr::int(*i)),
            SymIntArg::Value(v) => match &self.em.out.value(*v).kind {
                ValueKind::SymInt(e) => Ok(e.clone()),
                _ => Err(RuleError::Unsupported("a size argument is not a SymInt".into())),
            },
        }
    }

    /// Whether `v` requires grad when torch re-traces the graph: it stands for a value of the
    /// input graph that does ([`grad_values`]). A tensor a rule made is made inside a composite
    /// op's body, below autograd, and requires none: `linear`'s `weight.t()` does not, where an
    /// exported `t` node of the same weight does. ATen's `matmul` folds a batch of rows times
    /// such a matrix into one `mm`, whatever the rows' strides.
    pub fn requires_grad(&self, v: ValueId) -> bool {
        self.em.map.iter().zip(&self.em.grad).any(|(image, grad)| *grad && *image == Some(v))
    }

    /// Static sizes of `v`, for rules that need them (e.g. the normalized shape).
    pub fn static_sizes(&self, v: ValueId) -> Option<Vec<i64>> {
        self.meta(v).ok()?.sizes.iter().map(Expr::as_int).collect()
    }
}

/// The value a size argument reads, if it is no literal.
fn value_of(s: &SymIntArg) -> Option<ValueId> {
    match s {
        SymIntArg::Value(v) => Some(*v),
        SymIntArg::Int(_) => None,
    }
}

impl A {
    fn into_arg(self) -> Arg {
        match self {
            A::T(v) => Arg::Tensor(v),
            A::OptT(Some(v)) => Arg::Tensor(v),
            A::OptT(None) => Arg::None,
            A::F(f) => Arg::Float(f),
            A::I(i) => Arg::Int(i),
            A::Is(v) => Arg::Ints(v),
            A::B(b) => Arg::Bool(b),
            A::S(s) => Arg::String(s),
            A::Sizes(v) => Arg::SymInts(v),
            A::Raw(a) => a,
        }
    }
}
