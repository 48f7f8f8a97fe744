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

/// The views of [`INVERSES`] that only reshape (written back by [`view_inverse`]).
const RESHAPES: &[&str] = &["aten.view.default", "aten._unsafe_view.default"];

/// PyTorch functionalizes the decomposed program, so a composite op whose body ends in a reshape
/// of an intermediate (`matmul` → `mm` → `_unsafe_view`) returns a view of it there, and a write
/// into its result goes back into that intermediate. The intermediate, when output-graph value
/// `img` was made so.
fn reshaped_base(rw: &Rw, img: ValueId) -> Option<ValueId> {
    let out = &rw.em.out;
    let node = out.node(out.value(img).producer?);
    if !RESHAPES.contains(&node.target.as_str()) {
        return None;
    }
    node.args.first()?.arg.as_tensor()
}

/// `view(x, sizes of like)`.
fn view_like(rw: &mut Rw, x: ValueId, like: ValueId) -> Result<ValueId, RuleError> {
    let sizes: Vec<SymIntArg> = (0..rw.rank(like)?).map(|d| rw.size(like, d)).collect::<Result<_, _>>()?;
    rw.op("aten.view.default", vec![("self", A::T(x)), ("size", A::Sizes(sizes))])
}

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

    /// Records what `node`'s outputs alias, if its op is a view. `image` maps an input-graph
    /// value to the output-graph value it became.
    pub fn note(&mut self, graph: &Graph, id: NodeId, image: impl Fn(ValueId) -> Option<ValueId>) {
        let node = graph.node(id);
        let Some(src) = Self::first_tensor(node) else { return };
        let kind = aliasing(graph, &node.target);
        for (k, out) in node.outputs.iter().enumerate() {
            // A composite op that returned its input as it is (`to` of the same dtype,
            // `contiguous` of a contiguous tensor: ATen's `return self`) is that tensor, no view
            // of it: PyTorch records no view step, so a write through it goes back through
            // none, and a read after one takes none again.
            if kind == Aliasing::Maybe && image(src).is_some() && image(src) == image(*out) {
                let alias = self.alias[src.index()].clone().unwrap_or(Alias::View { root: src, chain: Vec::new() });
                self.seen[out.index()] = self.version[alias.root().index()];
                self.alias[out.index()] = Some(alias);
                continue;
            }
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
        // The root itself a reshape of what its op decomposed into (MobileBERT's
        // `matmul(..) += bias`): the write goes back into that, and the root is read again as
        // the reshape taken anew.
        let img = rw.current(root)?;
        if let Some(base) = reshaped_base(rw, img) {
            let back = view_like(rw, new_root, base)?;
            new_root = view_like(rw, back, img)?;
        }
        rw.rebind(root, new_root);
        self.version[root.index()] += 1;
        let now = self.version[root.index()];
        // Written through a view, the tensor is that view of the new base when read again, not
        // the op's result: FunctionalTensorWrapper::commit_update leaves the view's generation
        // behind its storage's, so PyTorch's next read regenerates it (the inverse views, then
        // the views replayed: Kosmos-2.5's `view(..).detach().to(..).add_(..)` read by an add
        // is `alias(view(view(add)))`). A written root is its new value as it is.
        for v in [target, out] {
            rw.rebind(v, if chain.is_empty() { new_root } else { result });
            self.seen[v.index()] = if chain.is_empty() { now } else { now - 1 };
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
mod tests;

#[cfg(test)]
mod read_after_write;
