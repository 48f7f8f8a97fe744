//! The rule builder's interface, [`Rw`]: what a decomposition rule reads (the node's arguments,
//! metadata of values) and how it emits nodes (`op`, sizes as SymInts, `_operator` arithmetic).
//! Kept apart from `emit.rs`, the rewriting engine that drives rules over a graph, because rules
//! see only this; `emit.rs` re-exports [`Rw`] and [`A`] so `super::emit::{Rw, A}` still works.

use super::emit::{Emitter, RuleError, MAX_DEPTH};
use super::rules::{self, Table};
use crate::infer::infer;
use crate::ir::{Arg, NamedArg, Node, NodeId, NodeMeta, Origin, SymIntArg, TensorMeta, ValueId, ValueKind};
use crate::sym::Expr;

/// What a rule builder sees: the node being rewritten, its arguments mapped into the output
/// graph, and ways to emit new nodes.
pub struct Rw<'a> {
    pub(super) em: &'a mut Emitter,
    pub(super) node: &'a Node,
    /// `None` where nothing is decomposed (mode `none`, lite's unmarked nodes): ops are emitted as they are.
    pub(super) table: Option<Table>,
    pub(super) origin: NodeId,
    pub(super) depth: usize,
    /// A nested rule's node already reads output-graph values: no mapping.
    pub(super) nested: bool,
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
        let mut kinds = match (infer(target, &named, &self.em.out), known) {
            (Ok(kinds), _) => kinds,
            (Err(_), Some(kinds)) => kinds,
            (Err(e), None) => return Err(e.into()),
        };
        self.lay_out_pointwise(target, &named, &mut kinds);
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

    /// An elementwise op's output laid out as TensorIterator lays it out (the operands' memory
    /// order), where its meta function said row-major: a rule's `mul` of a transposed operand
    /// is not contiguous in torch's re-trace, and `linear` after it is `matmul` + `add`, not a
    /// flattened `addmm` (ConvBERT's span convolution gate, `traced` `multiply` → `mul`).
    fn lay_out_pointwise(&self, target: &str, named: &[NamedArg], kinds: &mut [ValueKind]) {
        let pointwise = crate::ops::get(target).and_then(|d| d.lower.map(|(k, _)| k)) == Some(crate::lower::ops::OpKind::Pointwise);
        let [ValueKind::Tensor(m)] = kinds else { return };
        if !pointwise {
            return;
        }
        if let Some(strides) = super::relayout::pointwise_strides(named, &self.em.out, &m.sizes) {
            m.strides = strides;
        }
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

    /// A size that is an expression over sizes with values already (`2*s53*s72` of the inputs'
    /// symbols, `(s - 1) // 2` of a strided `arange`'s length), computed from them as torch's
    /// re-trace does for a size it has not seen (`_build_proxy_for_sym_expr`): each argument of
    /// a sum, product or floor division built first (recursively), then the n-ary operation
    /// folded left with `_operator.add` / `mul` / `floordiv`. The whole expression and each
    /// argument's are remembered as values; the partial results of a fold stay unknown to later
    /// lookups, as in torch's `sympy_expr_tracker`. `None` when some leaf is a size with no value.
    fn product_of_known(&mut self, e: &Expr) -> Result<Option<SymIntArg>, RuleError> {
        self.build_known(e, 0)
    }

    fn build_known(&mut self, e: &Expr, depth: usize) -> Result<Option<SymIntArg>, RuleError> {
        if let Some(i) = e.as_int() {
            return Ok(Some(SymIntArg::Int(i)));
        }
        if let Some(v) = self.em.sym_values.get(e) {
            return Ok(Some(SymIntArg::Value(*v)));
        }
        let (op, args): (&str, &[Expr]) = match e {
            Expr::Add(a) => ("_operator.add", a),
            Expr::Mul(a) => ("_operator.mul", a),
            Expr::Call(crate::sym::Func::FloorDiv, a) if a.len() == 2 => ("_operator.floordiv", a),
            _ => return Ok(None),
        };
        // Deep nests are no sizes torch computed; refuse them rather than recurse without end.
        if depth > 16 || args.len() < 2 {
            return Ok(None);
        }
        let mut leaves = Vec::with_capacity(args.len());
        for a in args.iter() {
            match self.build_known(a, depth + 1)? {
                Some(s) => leaves.push(s),
                None => return Ok(None),
            }
        }
        let mut it = leaves.into_iter();
        let Some(mut acc) = it.next() else { return Ok(None) };
        for b in it {
            let node = self.op(op, vec![("a", A::Raw(Arg::SymInt(acc))), ("b", A::Raw(Arg::SymInt(b)))])?;
            // Forgotten again (where this node made it known): only the whole expression is tracked.
            if let ValueKind::SymInt(pe) = self.em.out.value(node).kind.clone() {
                if self.em.sym_values.get(&pe) == Some(&node) {
                    self.em.sym_values.remove(&pe);
                }
            }
            acc = SymIntArg::Value(node);
        }
        // An argument's result is remembered, though: export's hash-consing keeps one node per
        // expression, so a second size that needs it reads it (LongT5's block count
        // `p // (p // 128)`, inside two einsums' products, is one `floordiv` in torch's graph).
        if let SymIntArg::Value(v) = &acc {
            self.em.sym_values.insert(e.clone(), *v);
        }
        Ok(Some(acc))
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

    /// `target(a, b?)` on sizes whose result `expr` is known before emitting (torch's SymFloat
    /// arithmetic): the value that already has `expr`, as export's hash-consing keeps one node
    /// per expression, else a new node.
    pub fn sym_call(&mut self, target: &str, expr: &Expr, args: Vec<(&str, A)>) -> Result<ValueId, RuleError> {
        match self.em.sym_values.get(expr) {
            Some(v) => Ok(*v),
            None => self.op(target, args),
        }
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
