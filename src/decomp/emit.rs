//! The rewriting engine: copies a graph node by node, replacing the nodes the mode decomposes
//! with what their rules emit (recursively, to a fixpoint, as Inductor does), and records
//! provenance.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::functionalize;
use super::rules::{self, Table};
use super::{DecompError, Decomposed, Decomposition, Marks, Mode, Provenance};
use crate::infer::InferError;
use crate::ir::{Arg, Graph, NamedArg, Node, NodeId, NodeMeta, ValueId, ValueKind};
use crate::sym::Expr;

pub use super::emit_rw::{Rw, A};

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

pub(super) const MAX_DEPTH: usize = 16;

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
    let mut em = Emitter { out, map, taken, counter: 0, origin: Vec::new(), sym_values: HashMap::new(), pinned: HashSet::new(), grad, laid: HashSet::new() };
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
            views.note(graph, id, |v| em.image(v));
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

/// For a size query or size arithmetic (a node whose one result is a SymInt: `_operator.sub`,
/// `aten.sym_size.int` of a tensor whose size a rule already read) whose result expression
/// already has a value in the output graph: that value. Torch's re-trace reads a tensor's size
/// off its fake tensor, whose SymInt already has a proxy, so `sym_size` records no node (XLNet's
/// `einsum_5.size(3)` is the `sym_size` einsum_3's decomposition took, or arange's `math.ceil`).
/// Effects (`_assert_*`, `sym_constrain_range`) always stay.
fn existing_size(em: &Emitter, graph: &Graph, node: &Node) -> Option<ValueId> {
    if super::prune::has_effect(&node.target) {
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
    pub(super) map: Vec<Option<ValueId>>,
    taken: HashSet<String>,
    counter: usize,
    pub(super) origin: Vec<NodeId>,
    /// A SymInt value of the output graph for each size expression, copied or emitted, so rules
    /// reuse one `sym_size` / `mul` node per expression as PyTorch's graphs do.
    pub(super) sym_values: HashMap<Expr, ValueId>,
    /// Sizes that an operation torch records and then erases read ([`Emitter::pin`]): they stay
    /// in the graph whether anything reads them or not.
    pinned: HashSet<ValueId>,
    /// Per input-graph value: whether it requires grad when torch re-traces ([`grad_values`]).
    pub(super) grad: Vec<bool>,
    /// Output-graph values of copied nodes whose strides [`super::relayout`] computed again.
    pub(super) laid: HashSet<ValueId>,
}

impl Emitter {
    /// An emitter that appends to a copy of `graph`, every value standing for itself.
    fn scratch(graph: &Graph) -> Emitter {
        let map = (0..graph.values.len()).map(|i| Some(ValueId(i as u32))).collect();
        let mut taken: HashSet<String> = graph.values.iter().map(|v| v.name.clone()).collect();
        taken.extend(graph.nodes.iter().map(|n| n.name.clone()));
        let grad = vec![false; graph.values.len()];
        let mut em = Emitter { out: graph.clone(), map, taken, counter: 0, origin: Vec::new(), sym_values: HashMap::new(), pinned: HashSet::new(), grad, laid: HashSet::new() };
        let ids: Vec<ValueId> = (0..graph.values.len()).map(|i| ValueId(i as u32)).collect();
        em.register_sym_ints(&ids);
        em
    }

    /// The output-graph value input-graph value `v` stands for now, if any.
    pub(super) fn image(&self, v: ValueId) -> Option<ValueId> {
        self.map.get(v.index()).copied().flatten()
    }

    pub(super) fn mapped(&self, v: ValueId) -> Result<ValueId, RuleError> {
        self.map
            .get(v.index())
            .copied()
            .flatten()
            .ok_or_else(|| RuleError::Unsupported(format!("value #{} has no image in the output graph", v.0)))
    }

    pub(super) fn map_arg(&self, a: &Arg) -> Result<Arg, RuleError> {
        a.try_map_values(|v| self.mapped(v))
    }

    /// Copies `node` whole, keeping its name and output names.
    fn copy(&mut self, graph: &Graph, node: &Node, origin: NodeId) -> Result<(), RuleError> {
        let args = node
            .args
            .iter()
            .map(|a| Ok(NamedArg { name: a.name.clone(), arg: self.map_arg(&a.arg)?, kwarg: a.kwarg }))
            .collect::<Result<Vec<_>, RuleError>>()?;
        // Strides computed again where an input's layout changed upstream, as torch's re-trace does.
        let relaid = super::relayout::relaid(graph, node, &self.out, &args, &self.map, &self.laid);
        let laid = relaid.is_some();
        let kinds = relaid.unwrap_or_else(|| node.outputs.iter().map(|v| graph.value(*v).kind.clone()).collect());
        let outputs = node.outputs.iter().zip(kinds).map(|(v, k)| (graph.value(*v).name.clone(), k)).collect();
        self.out
            .add_node(&node.name, &node.target, args, outputs, node.meta.clone())
            .map_err(|e| RuleError::Unsupported(e.to_string()))?;
        self.origin.push(origin);
        let new = self.out.nodes.last().map(|n| n.outputs.clone()).unwrap_or_default();
        if laid {
            self.laid.extend(new.iter().copied());
        }
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
            self.alias_sizes(graph.value(*old), *new);
        }
        Ok(())
    }

    /// Where a rule's result has a size that the archive wrote as another, equal expression
    /// (XLNet's `arange(s, -s, -1.0)`: the export's meta says `ceil((ToFloat(-s) - ToFloat(s)) / -1)`,
    /// the decomposition's `math.ceil` computed `ceil(ToFloat(-2*s) / -1)`), the archive's
    /// expression names the rule's value from now on. Torch's re-trace recomputes every later
    /// shape from the new tensor, so later nodes' sizes *are* the rule's expression; ours keep the
    /// archive's metadata, and this is what lets them find the value instead of a new `sym_size`.
    fn alias_sizes(&mut self, old: &crate::ir::Value, new: ValueId) {
        let (Some(was), Some(now)) = (old.tensor(), self.out.value(new).tensor()) else { return };
        if was.sizes.len() != now.sizes.len() {
            return;
        }
        let pairs: Vec<(Expr, ValueId)> = was
            .sizes
            .iter()
            .zip(&now.sizes)
            .filter(|(w, n)| w != n && w.as_int().is_none())
            .filter_map(|(w, n)| self.sym_values.get(n).map(|v| (w.clone(), *v)))
            .collect();
        for (w, v) in pairs {
            self.sym_values.entry(w).or_insert(v);
        }
    }

    /// Keeps the size operands of a size operation that is not emitted because its result has
    /// a value already. Torch's re-trace records the operation, drops what nothing reads, then
    /// hash-conses sizes by expression (`insert_deferred_runtime_asserts`): the duplicate is
    /// erased after that, and its operands stay, read by nothing (Bloom's `64*b*s` of a
    /// `reshape`'s `-1`, an `arange`'s length that folds back to its end).
    pub(super) fn pin(&mut self, operands: impl IntoIterator<Item = ValueId>) {
        for v in operands {
            if matches!(self.out.value(v).kind, ValueKind::SymInt(_)) {
                self.pinned.insert(v);
            }
        }
    }

    pub(super) fn register_sym_ints(&mut self, values: &[ValueId]) {
        for v in values {
            // SymFloats too (`torch.sym_float`, `_operator.truediv` of an arange's length): their
            // expressions never equal a SymInt's, and torch erases a repeated one as it does a size.
            if let ValueKind::SymInt(e) | ValueKind::SymFloat(e) = &self.out.value(*v).kind {
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

    pub(super) fn fresh(&mut self, base: &str) -> String {
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
