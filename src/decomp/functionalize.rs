//! Functionalization: in-place ops become their functional overloads, as PyTorch's
//! functionalization does inside `run_decompositions()` and AOT autograd before any
//! decomposition (`relu_` → `relu`, `add_.Tensor` → `add.Tensor`, `fill_.Scalar` → `fill.Scalar`,
//! then decomposed like any other node). Readers of the mutated tensor afterwards read the
//! functional result.
//!
//! A write through a view (`mask[:, 0:4].fill_(1)`: `fill_` of `slice(slice(mask))`) is written
//! back into the base the way PyTorch's `FunctionalStorageImpl` does: the intermediate views are
//! taken again from the current base, and the new value is scattered back through each view's
//! inverse, innermost first (`slice_scatter`, `select_scatter`, ...). A view read after its base
//! was written is taken again from the new base. Which ops alias their input comes from the op
//! registry (the backend tables' `view` fact, from `native_functions.yaml`).
//!
//! What cannot be done exactly is refused with the node named, never run with the write lost: a
//! write through a view with no inverse here (`expand`), or through a composite op that aliases
//! its input only for some strides (`reshape`, `contiguous`).

use super::emit::{Emitter, Rw, A};
use super::{Mutation, RuleError};
use crate::ir::{Arg, Graph, Node, NodeId, SymIntArg, ValueId};

/// The functional overload of an in-place or out= ATen op: `aten.relu_.default` →
/// `aten.relu.default`, `aten.add_.Tensor` → `aten.add.Tensor`, and (torchgen's naming of out=
/// variants) `aten.atan2.out` → `aten.atan2.default`, `aten.add.Scalar_out` → `aten.add.Scalar`
/// where PyTorch has that overload. `None` for functional ops and dunders (`__and__`).
pub fn functional_target(target: &str) -> Option<String> {
    let mut parts = target.splitn(3, '.');
    let (ns, name, overload) = (parts.next()?, parts.next()?, parts.next()?);
    if ns != "aten" || name.ends_with("__") {
        return None;
    }
    if let Some(functional) = out_overload_functional(overload) {
        // The backend tables key overloads as `name` (default) or `name.overload`.
        let key = if functional == "default" { name.to_string() } else { format!("{name}.{functional}") };
        let known = crate::ops::backend::table_for(None).is_some_and(|t| t.ops.contains_key(&key));
        return known.then(|| format!("{ns}.{name}.{functional}"));
    }
    let base = name.strip_suffix('_').filter(|b| !b.is_empty())?;
    Some(format!("{ns}.{base}.{overload}"))
}

/// The functional overload name of an out= overload (`out` → `default`, `Scalar_out` →
/// `Scalar`), or `None` for other overloads.
fn out_overload_functional(overload: &str) -> Option<&str> {
    match overload {
        "out" => Some("default"),
        o => o.strip_suffix("_out").filter(|b| !b.is_empty()),
    }
}

/// The tensor an in-place or out= node writes: its `out` argument for out= overloads, else its
/// first argument.
pub fn written(node: &Node) -> Option<ValueId> {
    let overload = node.target.rsplit('.').next().unwrap_or("");
    if out_overload_functional(overload).is_some() {
        return node.arg("out").and_then(Arg::as_tensor);
    }
    match node.args.first().map(|a| &a.arg) {
        Some(Arg::Tensor(v)) => Some(*v),
        _ => None,
    }
}

/// In-place ops that write no element, only what autograd knows of the tensor (`detach_`): a
/// functional graph holds nothing of them, and readers of their result read their input, as
/// after PyTorch's functionalization (`torch.tensor(..)` in a forward exports as
/// `lift_fresh_copy` + `detach_`, and `run_decompositions()` leaves only the copy).
const WRITE_NOTHING: &[&str] = &["aten.detach_.default"];

/// Whether `target` is an in-place op that writes no element ([`WRITE_NOTHING`]).
pub fn writes_nothing(target: &str) -> bool {
    WRITE_NOTHING.contains(&target)
}

/// Whether `graph` writes any tensor in place (so running it needs functionalizing first).
pub fn mutates(graph: &Graph) -> bool {
    graph.nodes.iter().any(|n| functional_target(&n.target).is_some())
}

/// Whether [`crate::decomp::functionalize`] changes `graph`: it writes in place, or calls a
/// composite op known only by its traced body (which functionalization expands).
pub fn changes(graph: &Graph) -> bool {
    mutates(graph) || graph.nodes.iter().any(|n| super::rules::traced::only_traced(&n.target))
}

/// The functional node of an in-place one: its target, and its first argument renamed where the
/// functional schema spells it differently (`dropout_(Tensor(a!) self, ...)` but
/// `dropout(Tensor input, ...)`, the whole dropout family), so kept nodes read as PyTorch's do.
pub fn functional_node(node: &Node) -> Option<Node> {
    let target = functional_target(&node.target)?;
    let mut args = node.args.clone();
    // An out= overload's result is its return value; the tensor it wrote is rebound to it.
    if out_overload_functional(node.target.rsplit('.').next().unwrap_or("")).is_some() {
        args.retain(|a| a.name != "out");
    }
    if target.contains("dropout") {
        if let Some(first) = args.first_mut().filter(|a| a.name == "self") {
            first.name = "input".into();
        }
    }
    Some(Node { target, args, ..node.clone() })
}

/// What in-place `node` writes, for the inspector: the tensor, and the views it is seen through
/// back to the tensor that owns the memory, e.g. "`slice_2`, a view of `new_zeros` (through
/// `slice_1` → `slice_2`): run as `aten.fill.Scalar`, scattered back into `new_zeros`". `None`
/// for a node that writes nothing in place.
pub fn describe_write(graph: &Graph, node: &Node) -> Option<String> {
    let functional = functional_target(&node.target)?;
    let target = written(node)?;
    let mut chain = Vec::new();
    let mut v = target;
    while let Some(p) = graph.value(v).producer {
        let n = graph.node(p);
        if aliasing(graph, &n.target) == Aliasing::None {
            break;
        }
        let Some(src) = n.args.iter().find_map(|a| a.arg.as_tensor()) else { break };
        chain.push(n.name.clone());
        v = src;
    }
    let (name, base) = (&graph.value(target).name, &graph.value(v).name);
    let kind = match graph.inputs.iter().find(|(i, _)| *i == v) {
        Some((_, k)) => format!(" (graph input, {})", k.name()),
        None => String::new(),
    };
    Some(if chain.is_empty() {
        format!("`{name}`{kind}: run as `{functional}`, whose result later readers of `{name}` read")
    } else {
        chain.reverse();
        format!(
            "`{name}`, a view of `{base}`{kind} (through {}): run as `{functional}`, scattered back into `{base}`",
            chain.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(" → ")
        )
    })
}

/// How an op's output relates to its first tensor argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aliasing {
    /// A new tensor.
    None,
    /// Always a view of it (`slice`, `view`, `permute`, `select`, ...).
    View,
    /// A view for some inputs and a copy for others (`reshape`, `contiguous`, `to`: composite
    /// ops whose schema says `Tensor(a)`, decided by strides and dtypes at run time).
    Maybe,
}

/// What the op registry says about `target` for the torch version that made `graph`.
pub fn aliasing(graph: &Graph, target: &str) -> Aliasing {
    let table = crate::ops::backend::table_for(graph.torch_version.as_deref());
    match table.and_then(|t| t.op(target)) {
        Some(f) if f.view && f.composite => Aliasing::Maybe,
        Some(f) if f.view => Aliasing::View,
        _ => Aliasing::None,
    }
}

/// Writes `mutated` back through view `view` (of `base`): the new value of `base`.
type Inverse = fn(&mut Rw, &Node, ValueId, ValueId) -> Result<ValueId, RuleError>;

/// The views a write can go back through, with the op that writes back (PyTorch's
/// `ViewMeta` reverse functions).
const INVERSES: &[(&str, Inverse)] = &[
    ("aten.slice.Tensor", slice_inverse),
    ("aten.select.int", select_inverse),
    ("aten.view.default", view_inverse),
    ("aten._unsafe_view.default", view_inverse),
    ("aten.unsqueeze.default", view_inverse),
    ("aten.squeeze.dim", view_inverse),
    ("aten.squeeze.dims", view_inverse),
    ("aten.squeeze.default", view_inverse),
    ("aten.permute.default", permute_inverse),
    ("aten.transpose.int", transpose_inverse),
    ("aten.t.default", transpose_inverse),
    ("aten.alias.default", alias_inverse),
    ("aten.detach.default", alias_inverse),
];

fn inverse(target: &str) -> Option<Inverse> {
    INVERSES.iter().find(|(t, _)| *t == target).map(|(_, f)| *f)
}

/// The view's own arguments besides its input, mapped into the output graph.
fn view_args<'n>(rw: &Rw, view: &'n Node) -> Result<Vec<(&'n str, A)>, RuleError> {
    view.args
        .iter()
        .filter(|a| a.name != "self" && a.name != "input")
        .map(|a| Ok((a.name.as_str(), A::Raw(rw.mapped_arg(&a.arg)?))))
        .collect()
}

fn slice_inverse(rw: &mut Rw, view: &Node, base: ValueId, mutated: ValueId) -> Result<ValueId, RuleError> {
    let mut args = vec![("self", A::T(base)), ("src", A::T(mutated))];
    args.extend(view_args(rw, view)?);
    rw.op("aten.slice_scatter.default", args)
}

fn select_inverse(rw: &mut Rw, view: &Node, base: ValueId, mutated: ValueId) -> Result<ValueId, RuleError> {
    let mut args = vec![("self", A::T(base)), ("src", A::T(mutated))];
    args.extend(view_args(rw, view)?);
    rw.op("aten.select_scatter.default", args)
}

/// Back to the base's shape (the base is contiguous wherever `view` succeeded on it).
fn view_inverse(rw: &mut Rw, _view: &Node, base: ValueId, mutated: ValueId) -> Result<ValueId, RuleError> {
    let sizes: Vec<SymIntArg> = (0..rw.rank(base)?).map(|d| rw.size(base, d)).collect::<Result<_, _>>()?;
    rw.op("aten.view.default", vec![("self", A::T(mutated)), ("size", A::Sizes(sizes))])
}

fn permute_inverse(rw: &mut Rw, view: &Node, _base: ValueId, mutated: ValueId) -> Result<ValueId, RuleError> {
    let dims = match view.arg("dims") {
        Some(Arg::Ints(d)) => d.clone(),
        _ => return Err(RuleError::Arg { name: "dims".into(), message: "expected an int list".into() }),
    };
    let rank = dims.len();
    let mut inv = vec![0i64; rank];
    for (i, d) in dims.iter().enumerate() {
        let d = super::rules::dim(*d, rank, "dims")?;
        inv[d] = i as i64;
    }
    rw.op("aten.permute.default", vec![("self", A::T(mutated)), ("dims", A::Is(inv))])
}

fn transpose_inverse(rw: &mut Rw, view: &Node, _base: ValueId, mutated: ValueId) -> Result<ValueId, RuleError> {
    let (d0, d1) = match (view.arg("dim0"), view.arg("dim1")) {
        (Some(Arg::Int(a)), Some(Arg::Int(b))) => (*a, *b),
        _ => (0, 1), // `t`
    };
    rw.op("aten.transpose.int", vec![("self", A::T(mutated)), ("dim0", A::I(d0)), ("dim1", A::I(d1))])
}

fn alias_inverse(_rw: &mut Rw, _view: &Node, _base: ValueId, mutated: ValueId) -> Result<ValueId, RuleError> {
    Ok(mutated)
}

/// One view on the way from a root to a value: the node, which of its outputs, and how a write
/// goes back through it (`None`: it cannot).
#[derive(Clone, Copy, Debug)]
struct Link {
    node: NodeId,
    out: usize,
    back: Option<Inverse>,
}

/// Whether `out`, made from `src` by a composite op that aliases for some inputs (`reshape`,
/// `flatten`, `contiguous`, `to`), is a view here: `Some(true)` when it is exactly `view(src)`'s
/// layout, `Some(false)` when it is a fresh contiguous copy (another dtype or device, or no view
/// possible), `None` when the metadata cannot tell.
fn composite_is_view(graph: &Graph, src: ValueId, out: ValueId) -> Option<bool> {
    let (i, o) = (graph.value(src).tensor()?, graph.value(out).tensor()?);
    if i.dtype != o.dtype || i.device != o.device {
        return Some(false);
    }
    let numel = |sizes: &[crate::sym::Expr]| sizes.iter().cloned().fold(crate::sym::Expr::int(1), crate::sym::Expr::mul);
    if numel(&i.sizes) != numel(&o.sizes) {
        return None;
    }
    let same = |a: &[crate::sym::Expr]| {
        a.len() == o.strides.len() && a.iter().zip(&o.strides).zip(&o.sizes).all(|((x, y), n)| x == y || n.as_int() == Some(1))
    };
    match crate::infer::view_strides(i, &o.sizes) {
        Some(strides) if same(&strides) => Some(true),
        _ if same(&crate::ir::TensorMeta::contiguous_strides(&o.sizes)) => Some(false),
        _ => None,
    }
}

/// What an input-graph value aliases.
#[derive(Clone, Debug)]
enum Alias {
    /// `root` seen through `chain`, outermost first; an empty chain is the root itself (the
    /// output of an in-place op on it).
    View { root: ValueId, chain: Vec<Link> },
    /// Made by `node`, which may or may not alias `root`.
    Maybe { root: ValueId, node: NodeId },
}

impl Alias {
    fn root(&self) -> ValueId {
        match self {
            Alias::View { root, .. } | Alias::Maybe { root, .. } => *root,
        }
    }
}

/// Which values of the input graph alias which, and which bases were written since each view's
/// output-graph value was taken.
pub(super) struct Views {
    alias: Vec<Option<Alias>>,
    /// Writes so far into each root value.
    version: Vec<u32>,
    /// The root's version when each value's output-graph image was taken.
    seen: Vec<u32>,
    /// Input-graph roots written in place, with the nodes that wrote them.
    written: Vec<(ValueId, Vec<NodeId>)>,
}

impl Views {
    pub fn new(graph: &Graph) -> Views {
        let n = graph.values.len();
        Views { alias: vec![None; n], version: vec![0; n], seen: vec![0; n], written: Vec::new() }
    }

    fn first_tensor(node: &Node) -> Option<ValueId> {
        node.args.iter().find_map(|a| a.arg.as_tensor())
    }

    /// Records what `node`'s outputs alias, if its op is a view.
    pub fn note(&mut self, graph: &Graph, id: NodeId) {
        let node = graph.node(id);
        let Some(src) = Self::first_tensor(node) else { return };
        let kind = aliasing(graph, &node.target);
        for (k, out) in node.outputs.iter().enumerate() {
            let link = match kind {
                Aliasing::None => continue,
                Aliasing::View => Link { node: id, out: k, back: inverse(&node.target) },
                Aliasing::Maybe => match composite_is_view(graph, src, *out) {
                    Some(false) => continue,
                    Some(true) => Link { node: id, out: k, back: Some(view_inverse) },
                    None => {
                        let root = self.alias[src.index()].as_ref().map_or(src, Alias::root);
                        self.seen[out.index()] = self.version[root.index()];
                        self.alias[out.index()] = Some(Alias::Maybe { root, node: id });
                        continue;
                    }
                },
            };
            let alias = match self.alias[src.index()].clone() {
                None => Alias::View { root: src, chain: vec![link] },
                Some(Alias::View { root, mut chain }) => {
                    chain.push(link);
                    Alias::View { root, chain }
                }
                Some(Alias::Maybe { root, node }) => Alias::Maybe { root, node },
            };
            self.seen[out.index()] = self.version[alias.root().index()];
            self.alias[out.index()] = Some(alias);
        }
    }

    /// Takes again, from the current base, every view among `values` whose base was written
    /// since its image was taken.
    pub fn refresh(&mut self, rw: &mut Rw, graph: &Graph, values: impl Iterator<Item = ValueId>) -> Result<(), RuleError> {
        for v in values {
            let Some(alias) = self.alias[v.index()].clone() else { continue };
            let root = alias.root();
            if self.seen[v.index()] == self.version[root.index()] {
                continue;
            }
            match alias {
                Alias::Maybe { node, .. } => {
                    let n = graph.node(node);
                    return Err(RuleError::Unsupported(format!(
                        "cannot functionalize: `{}` is read after `{}` was written in place, and `{}` ({}) may or may \
                         not alias it (a copy for some strides)",
                        graph.value(v).name,
                        graph.value(root).name,
                        n.name,
                        n.target
                    )));
                }
                Alias::View { chain, .. } => {
                    let mut cur = rw.current(root)?;
                    for link in chain {
                        let node = graph.node(link.node);
                        cur = rw.again(node, cur)?.get(link.out).copied().ok_or_else(|| {
                            RuleError::Unsupported(format!("view `{}` has no output {} when taken again", node.name, link.out))
                        })?;
                        let out = node.outputs[link.out];
                        rw.rebind(out, cur);
                        self.seen[out.index()] = self.version[root.index()];
                    }
                    rw.rebind(v, cur);
                    self.seen[v.index()] = self.version[root.index()];
                }
            }
        }
        Ok(())
    }

    /// Refuses an in-place `node` whose write cannot be carried back into its base.
    pub fn check_writable(&self, graph: &Graph, node: &Node) -> Result<(), RuleError> {
        let Some(target) = written(node) else {
            return Err(RuleError::Unsupported("cannot functionalize: the tensor it writes is not a tensor argument".into()));
        };
        match &self.alias[target.index()] {
            None => Ok(()),
            Some(Alias::Maybe { node: n, .. }) => {
                let n = graph.node(*n);
                Err(RuleError::Unsupported(format!(
                    "cannot functionalize: it writes through `{}` ({}), which may or may not alias its input (a copy \
                     for some strides)",
                    n.name, n.target
                )))
            }
            Some(Alias::View { chain, .. }) => match chain.iter().find(|l| l.back.is_none()) {
                None => Ok(()),
                Some(l) => {
                    let n = graph.node(l.node);
                    Err(RuleError::Unsupported(format!(
                        "cannot functionalize: it writes through `{}` ({}), a view with no scatter back into its base",
                        n.name, n.target
                    )))
                }
            },
        }
    }

    /// After the functional form of in-place `node` was emitted: its result becomes the new
    /// value of the tensor it wrote, and is scattered back into that tensor's base.
    pub fn write_back(&mut self, rw: &mut Rw, graph: &Graph, id: NodeId) -> Result<(), RuleError> {
        let node = graph.node(id);
        let (Some(target), Some(&out)) = (written(node), node.outputs.first()) else {
            return Err(RuleError::Unsupported("cannot functionalize: no tensor written".into()));
        };
        let result = rw.current(out)?;
        let (root, chain) = match self.alias[target.index()].clone() {
            None => (target, Vec::new()),
            Some(Alias::View { root, chain }) => (root, chain),
            Some(Alias::Maybe { .. }) => return self.check_writable(graph, node),
        };
        let mut new_root = result;
        if !chain.is_empty() {
            // The bases of each view, taken again from the current root (innermost excluded).
            let mut bases = vec![rw.current(root)?];
            for link in &chain[..chain.len() - 1] {
                let taken = rw.again(graph.node(link.node), bases[bases.len() - 1])?;
                bases.push(taken.get(link.out).copied().ok_or_else(|| RuleError::Unsupported("view output missing".into()))?);
            }
            for (link, base) in chain.iter().zip(bases).rev() {
                let view = graph.node(link.node);
                let back = link.back.ok_or_else(|| {
                    RuleError::Unsupported(format!("cannot functionalize: no scatter back through `{}` ({})", view.name, view.target))
                })?;
                new_root = back(rw, view, base, new_root)?;
            }
        }
        rw.rebind(root, new_root);
        self.version[root.index()] += 1;
        let now = self.version[root.index()];
        for v in [target, out] {
            rw.rebind(v, result);
            self.seen[v.index()] = now;
        }
        self.alias[out.index()] = Some(Alias::View { root, chain });
        if graph.value(root).producer.is_none() {
            match self.written.iter_mut().find(|(r, _)| *r == root) {
                Some((_, by)) => by.push(id),
                None => self.written.push((root, vec![id])),
            }
        }
        Ok(())
    }

    /// The graph inputs written in place, with their final values in the output graph.
    pub fn mutations(&self, graph: &Graph, em: &Emitter) -> Vec<Mutation> {
        self.written
            .iter()
            .filter_map(|(root, by)| {
                let value = em.image(*root)?;
                let input = em.out.value_id(&graph.value(*root).name)?;
                Some(Mutation { input, value, by: by.clone() })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_place_overloads_map_to_functional_ones() {
        assert_eq!(functional_target("aten.relu_.default").as_deref(), Some("aten.relu.default"));
        assert_eq!(functional_target("aten.add_.Tensor").as_deref(), Some("aten.add.Tensor"));
        assert_eq!(functional_target("aten.hardswish_.default").as_deref(), Some("aten.hardswish.default"));
        assert_eq!(functional_target("aten.fill_.Scalar").as_deref(), Some("aten.fill.Scalar"));
        assert_eq!(functional_target("aten.relu.default"), None);
        assert_eq!(functional_target("aten.__and__.Tensor"), None);
        assert_eq!(functional_target("aten._assert_tensor_metadata.default"), None);
        assert_eq!(functional_target("_operator.mul"), None);
        assert_eq!(functional_target("aten.atan2.out").as_deref(), Some("aten.atan2.default"));
        assert_eq!(functional_target("aten.add.Scalar_out").as_deref(), Some("aten.add.Scalar"));
        assert_eq!(functional_target("aten.no_such_op.out"), None);
    }

    #[test]
    fn a_write_through_views_is_described_back_to_its_base() {
        use crate::ir::{DType, InputKind, NamedArg, NodeMeta, TensorMeta, ValueKind};
        use crate::sym::Expr;
        let t = |sizes: &[i64]| {
            let sizes: Vec<Expr> = sizes.iter().map(|s| Expr::int(*s)).collect();
            ValueKind::Tensor(TensorMeta::contiguous(DType::F32, sizes))
        };
        let arg = |name: &str, arg: Arg| NamedArg { name: name.into(), arg, kwarg: false };
        let mut g = Graph::new("g");
        let x = g.add_input("x", t(&[4, 4]), InputKind::UserInput).unwrap();
        let s = g
            .add_node("slice_1", "aten.slice.Tensor", vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Int(0)), arg("end", Arg::Int(2))], vec![("slice_1".into(), t(&[2, 4]))], NodeMeta::default())
            .unwrap();
        let sv = g.node(s).outputs[0];
        let f = g
            .add_node("fill_", "aten.fill_.Scalar", vec![arg("self", Arg::Tensor(sv)), arg("value", Arg::Int(1))], vec![("fill_".into(), t(&[2, 4]))], NodeMeta::default())
            .unwrap();
        let r = g
            .add_node("relu_", "aten.relu_.default", vec![arg("self", Arg::Tensor(x))], vec![("relu_".into(), t(&[4, 4]))], NodeMeta::default())
            .unwrap();
        let through = describe_write(&g, g.node(f)).unwrap();
        assert!(through.contains("a view of `x` (graph input, user_input) (through `slice_1`)"), "{through}");
        assert!(through.contains("aten.fill.Scalar") && through.contains("scattered back into `x`"), "{through}");
        let direct = describe_write(&g, g.node(r)).unwrap();
        assert!(direct.starts_with("`x` (graph input, user_input): run as `aten.relu.default`"), "{direct}");
        assert_eq!(describe_write(&g, g.node(s)), None);
    }

    #[test]
    fn an_out_overload_runs_as_its_functional_op_and_rebinds_out() {
        use crate::exec::Tensor;
        use crate::ir::{DType, Format, InputKind, Model, NamedArg, NodeMeta, TensorMeta, ValueKind};
        use crate::sym::Expr;
        let t = ValueKind::Tensor(TensorMeta {
            dtype: DType::F32,
            strides: vec![Expr::int(1)],
            sizes: vec![Expr::int(3)],
            storage_offset: Expr::int(0),
            device: "cpu".into(),
            requires_grad: false,
        });
        let arg = |name: &str, arg: Arg, kwarg: bool| NamedArg { name: name.into(), arg, kwarg };
        let mut g = Graph::new("g");
        let (y, x, o) = (g.add_input("y", t.clone(), InputKind::UserInput).unwrap(), g.add_input("x", t.clone(), InputKind::UserInput).unwrap(), g.add_input("o", t.clone(), InputKind::UserInput).unwrap());
        let args = vec![arg("self", Arg::Tensor(y), false), arg("other", Arg::Tensor(x), false), arg("out", Arg::Tensor(o), true)];
        let n = g.add_node("atan2_out", "aten.atan2.out", args, vec![("atan2_out".into(), t.clone())], NodeMeta::default()).unwrap();
        let r = g.node(n).outputs[0];
        // The written tensor is read after the write, then the node's own result.
        let neg = g.add_node("neg", "aten.neg.default", vec![arg("self", Arg::Tensor(o), false)], vec![("neg".into(), t)], NodeMeta::default()).unwrap();
        g.outputs = vec![Arg::Tensor(g.node(neg).outputs[0]), Arg::Tensor(r)];
        assert_eq!(written(g.node(n)), Some(o));
        assert!(mutates(&g));
        let f = crate::decomp::functionalize(&g).unwrap();
        let targets: Vec<&str> = f.graph.nodes.iter().map(|n| n.target.as_str()).collect();
        assert_eq!(targets, ["aten.atan2.default", "aten.neg.default"]);
        assert!(f.graph.nodes[0].arg("out").is_none());
        let mut m = Model::new(Format::Pt2, "test");
        m.graphs.push(g.clone());
        let v = |xs: [f32; 3]| Tensor::from_vec(&[3], xs.to_vec()).unwrap();
        let outs = crate::exec::run(&m, &g, &[v([1.0, -1.0, 0.5]), v([1.0, 1.0, -2.0]), v([9.0, 9.0, 9.0])]).unwrap();
        let want: Vec<f64> = [(1.0f32, 1.0f32), (-1.0, 1.0), (0.5, -2.0)].iter().map(|(a, b)| a.atan2(*b) as f64).collect();
        assert_eq!(outs[1].to_f64_vec(), want);
        assert_eq!(outs[0].to_f64_vec(), want.iter().map(|w| -w).collect::<Vec<_>>());
        let plan = crate::lower::lower(&m, &g, crate::decomp::Mode::None, &crate::decomp::Marks::default()).unwrap();
        assert!(plan.graph.nodes.iter().any(|n| n.target == "aten.atan2.default"));
    }

    #[test]
    fn composite_views_are_decided_from_their_metadata() {
        use crate::ir::{DType, InputKind, NamedArg, NodeMeta, TensorMeta, ValueKind};
        use crate::sym::Expr;
        let meta = |dtype: DType, sizes: &[i64], strides: &[i64]| {
            ValueKind::Tensor(TensorMeta {
                dtype,
                sizes: sizes.iter().map(|s| Expr::int(*s)).collect(),
                strides: strides.iter().map(|s| Expr::int(*s)).collect(),
                storage_offset: Expr::int(0),
                device: "cpu".into(),
                requires_grad: false,
            })
        };
        let mut g = Graph::new("g");
        let x = g.add_input("x", meta(DType::F32, &[2, 3, 4], &[12, 4, 1]), InputKind::UserInput).unwrap();
        let xt = g.add_input("xt", meta(DType::F32, &[4, 3], &[1, 4]), InputKind::UserInput).unwrap();
        let mut out = |name: &str, src, kind| {
            let arg = vec![NamedArg { name: "self".into(), arg: Arg::Tensor(src), kwarg: false }];
            let n = g.add_node(name, "aten.reshape.default", arg, vec![(name.to_string(), kind)], NodeMeta::default()).unwrap();
            g.node(n).outputs[0]
        };
        let flat = out("flat", x, meta(DType::F32, &[6, 4], &[4, 1]));
        let copied = out("copied", xt, meta(DType::F32, &[12], &[1]));
        let cast = out("cast", x, meta(DType::F16, &[2, 3, 4], &[12, 4, 1]));
        let odd = out("odd", xt, meta(DType::F32, &[3, 4], &[1, 3]));
        assert_eq!(composite_is_view(&g, x, flat), Some(true));
        assert_eq!(composite_is_view(&g, xt, copied), Some(false));
        assert_eq!(composite_is_view(&g, x, cast), Some(false));
        assert_eq!(composite_is_view(&g, xt, odd), None);
    }

    #[test]
    fn the_registry_says_which_ops_alias() {
        let g = Graph::new("g");
        assert_eq!(aliasing(&g, "aten.slice.Tensor"), Aliasing::View);
        assert_eq!(aliasing(&g, "aten.permute.default"), Aliasing::View);
        assert_eq!(aliasing(&g, "aten.reshape.default"), Aliasing::Maybe);
        assert_eq!(aliasing(&g, "aten.add.Tensor"), Aliasing::None);
    }
}
