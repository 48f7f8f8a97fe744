//! Dead-node removal after rewriting. PyTorch's decompositions re-trace the program, so what a
//! rule emitted and nothing reads is not in their graphs: the indices of a max-pool whose caller
//! wanted the values only, the views of a tensor a `fill` replaced with a `full`.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{Decomposed, Decomposition, DecompError, Mutation, Provenance, RuleError};
use crate::ir::{Arg, Graph, NodeId, SymIntArg, ValueId, ValueKind};

/// Whether a node of `target` must stay whatever reads it (`_assert_*`, `sym_constrain_range*`).
pub(super) fn has_effect(target: &str) -> bool {
    target.contains("._assert") || target.contains("constrain_range")
}

/// `d` without the nodes whose results reach no graph output, no graph-input mutation and no node
/// with an effect; provenance and histograms follow.
pub(super) fn prune(d: Decomposition, pinned: &HashSet<ValueId>) -> Result<Decomposition, DecompError> {
    let g = &d.graph;
    let mut needed = vec![false; g.values.len()];
    for v in g.outputs.iter().flat_map(|o| o.values()) {
        needed[v.index()] = true;
    }
    for m in &d.mutations {
        needed[m.value.index()] = true;
    }
    let mut live = vec![false; g.nodes.len()];
    let numbers = static_sizes(g);
    // Size arithmetic goes as the rest when nothing reads it (torch's re-trace drops it before
    // it hash-conses sizes), but the operands of what that erased stay ([`super::emit`]'s
    // `pinned`). A size that is a number is no node of a re-trace: its readers take the number.
    for (i, n) in g.nodes.iter().enumerate().rev() {
        // Arithmetic on symbolic sizes is a traced node even where its result is a number
        // (`split`'s gap `3*s - 3*s` = 0 in ProphetNet's chunks): only a size torch read as a
        // number (a specialized `sym_size`) has none.
        let traced = n.target.starts_with("_operator.") && n.inputs().any(|v| !numbers.contains_key(&v));
        let pin = n.outputs.iter().any(|v| pinned.contains(v) && (traced || !numbers.contains_key(v)));
        if has_effect(&n.target) || pin || n.outputs.iter().any(|v| needed[v.index()]) {
            live[i] = true;
            for v in n.args.iter().flat_map(|a| literal(&a.arg, &numbers).values()) {
                needed[v.index()] = true;
            }
        }
    }
    if live.iter().all(|l| *l) {
        return Ok(d);
    }
    let err = |node: &str, e: String| DecompError { node: node.to_string(), target: "prune".into(), source: RuleError::Unsupported(e) };
    let mut out = Graph::new(g.name.clone());
    out.torch_version = g.torch_version.clone();
    let mut map: Vec<Option<ValueId>> = vec![None; g.values.len()];
    for (v, kind) in &g.inputs {
        let value = g.value(*v);
        map[v.index()] = Some(out.add_input(&value.name, value.kind.clone(), kind.clone()).map_err(|e| err(&value.name, e.to_string()))?);
    }
    let mapped = |map: &[Option<ValueId>], v: ValueId| map[v.index()].ok_or_else(|| format!("value `{}` was removed", g.value(v).name));
    let mut new_id: Vec<Option<NodeId>> = vec![None; g.nodes.len()];
    let mut origin = Vec::new();
    for (i, n) in g.nodes.iter().enumerate().filter(|(i, _)| live[*i]) {
        let args = n
            .args
            .iter()
            .map(|a| Ok(crate::ir::NamedArg { arg: literal(&a.arg, &numbers).try_map_values(|v| mapped(&map, v))?, ..a.clone() }))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|e| err(&n.name, e))?;
        let outs = n.outputs.iter().map(|v| (g.value(*v).name.clone(), g.value(*v).kind.clone())).collect();
        let id = out.add_node(&n.name, &n.target, args, outs, n.meta.clone()).map_err(|e| err(&n.name, e.to_string()))?;
        for (old, new) in n.outputs.iter().zip(out.node(id).outputs.clone()) {
            map[old.index()] = Some(new);
        }
        new_id[i] = Some(id);
        origin.push(d.provenance.origin[i]);
    }
    out.outputs = g
        .outputs
        .iter()
        .map(|o| o.try_map_values(|v| mapped(&map, v)))
        .collect::<Result<_, _>>()
        .map_err(|e| err("output", e))?;
    let products: Vec<Vec<NodeId>> =
        d.provenance.products.iter().map(|ps| ps.iter().filter_map(|p| new_id[p.index()]).collect()).collect();
    let decomposed = d
        .decomposed
        .iter()
        .map(|x| {
            let mut into = BTreeMap::new();
            for p in &products[x.node.index()] {
                *into.entry(out.node(*p).target.clone()).or_insert(0) += 1;
            }
            Decomposed { node: x.node, into }
        })
        .collect();
    let mutations = d
        .mutations
        .iter()
        .map(|m| Ok(Mutation { input: mapped(&map, m.input)?, value: mapped(&map, m.value)?, by: m.by.clone() }))
        .collect::<Result<_, String>>()
        .map_err(|e| err("mutation", e))?;
    let write_backs = d.write_backs.iter().filter_map(|n| new_id[n.index()]).collect();
    Ok(Decomposition {
        graph: out,
        provenance: Provenance { origin, products },
        decomposed,
        write_backs,
        mutations,
        ..d
    })
}

/// The SymInt results of size ops that are numbers (`sym_size.int` of a dim export recorded as
/// dynamic and then specialized to 12, CANINE's and CPM-Ant's): torch's re-trace reads such a
/// size as a plain int and records no node for it.
fn static_sizes(g: &Graph) -> HashMap<ValueId, i64> {
    g.nodes
        .iter()
        .filter(|n| n.outputs.len() == 1 && (n.target.starts_with("aten.sym_") || n.target.starts_with("_operator.")))
        .filter_map(|n| match &g.value(n.outputs[0]).kind {
            ValueKind::SymInt(e) => e.as_int().map(|k| (n.outputs[0], k)),
            _ => None,
        })
        .collect()
}

/// `a` with the sizes of `numbers` written as the numbers they are.
fn literal(a: &Arg, numbers: &HashMap<ValueId, i64>) -> Arg {
    let lit = |s: &SymIntArg| match s {
        SymIntArg::Value(v) => numbers.get(v).map_or(s.clone(), |k| SymIntArg::Int(*k)),
        SymIntArg::Int(_) => s.clone(),
    };
    match a {
        Arg::SymInt(s) => Arg::SymInt(lit(s)),
        Arg::SymInts(v) => Arg::SymInts(v.iter().map(lit).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use crate::decomp::{decompose, Marks, Mode};
    use crate::ir::{Arg, DType, Graph, InputKind, NamedArg, NodeMeta, TensorMeta, ValueKind};
    use crate::sym::Expr;

    fn t(dtype: DType, sizes: &[i64]) -> ValueKind {
        let sizes: Vec<Expr> = sizes.iter().map(|s| Expr::int(*s)).collect();
        ValueKind::Tensor(TensorMeta::contiguous(dtype, sizes))
    }

    /// `max_pool2d_with_indices` whose indices are (or are not) a graph output.
    fn pool(indices_out: bool) -> Graph {
        let mut g = Graph::new("g");
        let x = g.add_input("x", t(DType::F32, &[1, 2, 4, 4]), InputKind::UserInput).unwrap();
        let args = vec![
            NamedArg { name: "self".into(), arg: Arg::Tensor(x), kwarg: false },
            NamedArg { name: "kernel_size".into(), arg: Arg::Ints(vec![2, 2]), kwarg: false },
        ];
        let outs = vec![("v".into(), t(DType::F32, &[1, 2, 2, 2])), ("i".into(), t(DType::I64, &[1, 2, 2, 2]))];
        let n = g.add_node("pool", "aten.max_pool2d_with_indices.default", args, outs, NodeMeta::default()).unwrap();
        let (v, i) = (g.node(n).outputs[0], g.node(n).outputs[1]);
        g.outputs.push(Arg::Tensor(v));
        if indices_out {
            g.outputs.push(Arg::Tensor(i));
        }
        g
    }

    #[test]
    fn what_a_rule_emitted_and_nothing_reads_is_dropped() {
        let to_indices = "prims._low_memory_max_pool_offsets_to_indices.default";
        let values_only = decompose(&pool(false), Mode::Full, &Marks::default()).unwrap();
        let h = values_only.graph.op_histogram();
        assert_eq!(h.get("prims._low_memory_max_pool_with_offsets.default"), Some(&1));
        assert_eq!(h.get(to_indices), None, "{h:?}");
        assert_eq!(values_only.provenance.origin.len(), values_only.graph.nodes.len());
        assert_eq!(values_only.decomposed[0].into.get(to_indices), None);
        let both = decompose(&pool(true), Mode::Full, &Marks::default()).unwrap();
        assert_eq!(both.graph.op_histogram().get(to_indices), Some(&1));
    }

    /// A `sym_size.int` that export recorded and that is a number (CANINE's specialized sequence
    /// length, 12): the core graph has no node for it, and the view reads the number.
    #[test]
    fn a_size_that_is_a_number_is_no_node() {
        use crate::ir::SymIntArg;
        let arg = |name: &str, arg: Arg| NamedArg { name: name.into(), arg, kwarg: false };
        let mut g = Graph::new("g");
        let meta = TensorMeta::contiguous(DType::F32, vec![Expr::symbol("s0"), Expr::int(12)]);
        let x = g.add_input("x", ValueKind::Tensor(meta), InputKind::UserInput).unwrap();
        let size = vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Int(1))];
        let n = g.add_node("sym_size_int", "aten.sym_size.int", size, vec![("sym_size_int".into(), ValueKind::SymInt(Expr::int(12)))], NodeMeta::default()).unwrap();
        let twelve = g.node(n).outputs[0];
        let shape = Arg::SymInts(vec![SymIntArg::Int(-1), SymIntArg::Value(twelve)]);
        let args = vec![arg("self", Arg::Tensor(x)), arg("size", shape)];
        let out = crate::infer::infer("aten.view.default", &args, &g).unwrap();
        let v = g.add_node("view", "aten.view.default", args, vec![("view".into(), out[0].clone())], NodeMeta::default()).unwrap();
        g.outputs.push(Arg::Tensor(g.node(v).outputs[0]));
        assert_eq!(decompose(&g, Mode::None, &Marks::default()).unwrap().graph.op_histogram().get("aten.sym_size.int"), Some(&1));
        let core = decompose(&g, Mode::Core, &Marks::default()).unwrap();
        assert_eq!(core.graph.op_histogram().get("aten.sym_size.int"), None, "{:?}", core.graph.op_histogram());
        let view = core.graph.nodes.iter().find(|n| n.target == "aten.view.default").unwrap();
        assert_eq!(view.args[1].arg, Arg::SymInts(vec![SymIntArg::Int(-1), SymIntArg::Int(12)]));
    }

    /// DeepSeek-V4's block size: `mul(s0 // 128, 128)` bounds a slice that only a `new_zeros`
    /// reads, for its dtype (`new_ones` here). Once that is a `full`, the slice and the size arithmetic are
    /// read by nothing, and torch's graph has neither.
    #[test]
    fn size_arithmetic_nothing_reads_goes_with_its_reader() {
        use crate::ir::SymIntArg;
        let arg = |name: &str, arg: Arg| NamedArg { name: name.into(), arg, kwarg: false };
        let mut g = Graph::new("g");
        let meta = TensorMeta::contiguous(DType::F32, vec![Expr::symbol("s0"), Expr::int(8)]);
        let x = g.add_input("x", ValueKind::Tensor(meta), InputKind::UserInput).unwrap();
        let node = |g: &mut Graph, name: &str, target: &str, args: Vec<NamedArg>| {
            let kinds = crate::infer::infer(target, &args, g).unwrap();
            let outs = kinds.into_iter().map(|k| (name.to_string(), k)).collect();
            let id = g.add_node(name, target, args, outs, NodeMeta::default()).unwrap();
            g.node(id).outputs[0]
        };
        let b = node(&mut g, "sym_size_int", "aten.sym_size.int", vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Int(0))]);
        let m = node(&mut g, "mul", "_operator.mul", vec![arg("a", Arg::SymInt(SymIntArg::Value(b))), arg("b", Arg::SymInt(SymIntArg::Int(2)))]);
        let slice = vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Int(0)), arg("start", Arg::Int(0)), arg("end", Arg::SymInt(SymIntArg::Value(m)))];
        // The archive's metadata, as the meta function takes no SymInt `end`.
        let kind = g.value(x).kind.clone();
        let sl = g.add_node("slice_1", "aten.slice.Tensor", slice, vec![("slice_1".into(), kind)], NodeMeta::default()).unwrap();
        let sl = g.node(sl).outputs[0];
        let z = node(&mut g, "new_ones", "aten.new_ones.default", vec![arg("self", Arg::Tensor(sl)), arg("size", Arg::Ints(vec![2, 3]))]);
        g.outputs.push(Arg::Tensor(z));
        let none = decompose(&g, Mode::None, &Marks::default()).unwrap().graph.op_histogram();
        assert_eq!(none.get("_operator.mul"), Some(&1));
        let core = decompose(&g, Mode::Core, &Marks::default()).unwrap().graph.op_histogram();
        for gone in ["_operator.mul", "aten.slice.Tensor", "aten.sym_size.int"] {
            assert_eq!(core.get(gone), None, "{gone}: {core:?}");
        }
        assert_eq!(core.get("aten.full.default"), Some(&1), "{core:?}");
    }
}
