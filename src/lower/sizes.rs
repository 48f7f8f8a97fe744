//! Data-dependent sizes. torch.export names a size that depends on tensor data with an unbacked
//! symbol (`u0`, …; `zuf0` for the float of an `item()`), defined by the node that produces
//! it: the first node whose output metadata (sizes, strides, storage offset, symbolic value)
//! mentions it. Such a node gets a [`Step::Sync`](super::Step::Sync) ahead of its own kernels,
//! as Inductor handles unbacked symbols: a size kernel (the op's `.sizes(..)` entry in the
//! registry) computes the symbols' values into a small i64 buffer, the runner waits for it,
//! reads the values back and binds the symbols, and every later launch gets them as size
//! arguments (grids, buffer sizes and loop extents follow).

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use serde::Serialize;

use super::ctx::Ctx;
use super::kernel::{Access, CmpOp, Elem, ExprId, Kernel, KernelBuilder, Store, Ty, VarId};
use super::{ident, schedule, LowerError};
use crate::ir::{Graph, Node, NodeId, ValueId, ValueKind};
use crate::sym;

/// One data-dependent quantity of a node, as its op's size function builds it.
pub struct Size {
    /// The graph's expression for it: an unbacked symbol, or any expression the value must
    /// equal (a static size, a count that must be 0).
    pub expr: sym::Expr,
    /// The kernel expression that computes it. It may loop over the inputs but not depend on
    /// the output coordinate: the sync kernel evaluates each once.
    pub value: ExprId,
    /// What it is, for plans and errors ("nonzero elements").
    pub what: &'static str,
}

/// Builds, for `node`, each data-dependent quantity it defines ([`Size`]).
pub type SizesFn = for<'a> fn(&mut Ctx<'a>, &'a Node) -> Result<Vec<Size>, LowerError>;

/// One value a sync step reads back, and what it binds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SyncValue {
    /// The graph's expression for the value: an unbound symbol is bound to it; anything else
    /// is checked against it.
    #[serde(serialize_with = "ser_expr")]
    pub expr: sym::Expr,
    /// The i64 read back holds a float64's bit pattern (the float of an `item()`).
    pub float: bool,
    pub what: &'static str,
}

fn ser_expr<S: serde::Serializer>(e: &sym::Expr, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&e.to_string())
}

/// Every symbolic expression in `v`'s metadata.
fn exprs_of(kind: &ValueKind) -> Vec<&sym::Expr> {
    match kind {
        ValueKind::Tensor(t) => t.sizes.iter().chain(&t.strides).chain(std::iter::once(&t.storage_offset)).collect(),
        ValueKind::SymInt(e) | ValueKind::SymBool(e) | ValueKind::SymFloat(e) => vec![e],
        ValueKind::Other(_) => Vec::new(),
    }
}

/// Per node (graph order), the unbacked symbols it defines: those its outputs' metadata
/// mention first, in the order they are mentioned. A symbol the graph inputs mention is bound
/// from their shapes, never defined here.
pub fn defined_symbols(graph: &Graph) -> Vec<Vec<String>> {
    let mut seen: HashSet<Arc<str>> = HashSet::new();
    for (v, _) in &graph.inputs {
        for e in exprs_of(&graph.value(*v).kind) {
            seen.extend(e.free_symbols());
        }
    }
    graph
        .nodes
        .iter()
        .map(|node| {
            let mut defined = Vec::new();
            for o in &node.outputs {
                for e in exprs_of(&graph.value(*o).kind) {
                    for s in e.free_symbols() {
                        if sym::is_unbacked(&s) && seen.insert(s.clone()) {
                            defined.push(s.to_string());
                        }
                    }
                }
            }
            defined
        })
        .collect()
}

/// The bare symbol an expression is, if it is one.
pub fn bare_symbol(e: &sym::Expr) -> Option<&str> {
    match e {
        sym::Expr::Symbol(s) => Some(s),
        _ => None,
    }
}

/// The sync kernel of `id`, which defines `symbols`: element `i` of the i64 buffer `out` gets
/// the `i`-th value of the op's size function (a float as its f64 bit pattern).
pub(super) fn sync_kernel(
    graph: &Graph,
    id: NodeId,
    materialized: &HashSet<ValueId>,
    symbols: &[String],
    out: &str,
) -> Result<(Kernel, Vec<SyncValue>), LowerError> {
    let node = graph.node(id);
    let unsupported = |message: String| LowerError::Unsupported { node: node.name.clone(), target: node.target.clone(), message };
    let Some(sizes) = crate::ops::get(&node.target).and_then(|d| d.sizes) else {
        return Err(unsupported(format!(
            "its output sizes depend on tensor data (symbols {}) and the op has no size kernel to compute them",
            symbols.join(", ")
        )));
    };
    let mut cx = Ctx {
        graph,
        kb: KernelBuilder::new(1),
        materialized,
        fuse: None,
        inlined: BTreeSet::new(),
        node: Some(node),
        mask: None,
        reads: Default::default(),
        staged: Vec::new(),
    };
    let values = sizes(&mut cx, node)?;
    let computed: HashSet<&str> = values.iter().filter_map(|v| bare_symbol(&v.expr)).collect();
    let missed: Vec<&str> = symbols.iter().map(String::as_str).filter(|s| !computed.contains(s)).collect();
    if !missed.is_empty() {
        return Err(unsupported(format!("its size kernel does not compute symbol(s) {}", missed.join(", "))));
    }
    let k = values.len() as i64;
    let extent = cx.kb.size(&sym::Expr::int(k));
    cx.kb.set_coord_extents(&[extent]);
    let i = cx.kb.var(VarId(0));
    let mut word = cx.kb.i64(0);
    let mut read_back = Vec::with_capacity(values.len());
    for (j, Size { expr, value: e, what }) in values.into_iter().enumerate().rev() {
        let float = cx.kb.ty(e).is_float();
        let w = if float {
            let wide = cx.kb.cast(e, Ty::F64);
            cx.kb.bits(wide)?
        } else {
            cx.kb.cast(e, Ty::I64)
        };
        let at = cx.kb.i64(j as i64);
        let hit = cx.kb.cmp(CmpOp::Eq, i, at)?;
        word = cx.kb.select(hit, w, word)?;
        read_back.push(SyncValue { expr, float, what });
    }
    read_back.reverse();
    let buf = cx.kb.buffer_of(out, Access::Write, Elem::I64);
    let kernel = cx.kb.finish(format!("sync_{}", ident(&node.name)), vec![sym::Expr::int(k)], vec![extent], vec![Store { buf, value: word }]);
    Ok((schedule::apply(kernel, false), read_back))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Arg, DType, InputKind, NamedArg, NodeMeta, TensorMeta};

    fn tensor(sizes: Vec<sym::Expr>) -> ValueKind {
        ValueKind::Tensor(TensorMeta {
            dtype: DType::F32,
            strides: TensorMeta::contiguous_strides(&sizes),
            sizes,
            storage_offset: sym::Expr::int(0),
            device: String::new(),
            requires_grad: false,
        })
    }

    #[test]
    fn unbacked_symbols_follow_torch_prefixes() {
        use sym::is_unbacked;
        assert!(is_unbacked("u0") && is_unbacked("u12") && is_unbacked("zuf3"));
        assert!(!is_unbacked("s0") && !is_unbacked("u") && !is_unbacked("batch") && !is_unbacked("u0x") && !is_unbacked("zf1"));
    }

    #[test]
    fn a_symbol_is_defined_by_the_first_node_that_shows_it() {
        let mut g = Graph::new("g");
        let x = g.add_input("x", tensor(vec![sym::Expr::symbol("s0")]), InputKind::UserInput).unwrap();
        let arg = |v| vec![NamedArg { name: "self".into(), arg: Arg::Tensor(v), kwarg: false }];
        let (u0, u1) = (sym::Expr::symbol("u0"), sym::Expr::symbol("u1"));
        let a = g.add_node("a", "aten.nonzero.default", arg(x), vec![("a".into(), tensor(vec![u0.clone(), sym::Expr::symbol("s0")]))], NodeMeta::default()).unwrap();
        let a = g.node(a).outputs[0];
        let b = g.add_node("b", "aten.relu.default", arg(a), vec![("b".into(), tensor(vec![u0.clone(), u1.clone()]))], NodeMeta::default()).unwrap();
        let b = g.node(b).outputs[0];
        g.add_node("c", "aten.relu.default", arg(b), vec![("c".into(), tensor(vec![sym::Expr::add(u0, u1)]))], NodeMeta::default()).unwrap();
        assert_eq!(defined_symbols(&g), vec![vec!["u0".to_string()], vec!["u1".to_string()], vec![]]);
    }
}
