//! Nodes whose op has no kernel lowering run as their decomposition, as eager PyTorch runs a
//! CompositeImplicitAutograd op as its body and Inductor decomposes it: the lowering expands them
//! with lite mode's machinery ([`decomp::expand_for_lowering`]) and lowers the products.
//!
//! In the modes that keep nodes whole (`none`, lite's unmarked nodes) the products of one node
//! fuse with each other only, so their kernels stand for that one node's eager call; in `full`
//! and `core`, and for lite's marked nodes, they fuse like any other decomposed node.

use std::collections::HashSet;

use super::{fallbacks, LowerError, OpKind};
use crate::decomp::{self, Decomposition};
use crate::ir::{DType, Graph, NodeId};

/// What plan output says about a node expanded for lowering.
pub const EXPANDED_NOTE: &str = "expanded for lowering (no direct kernel)";

/// A node of the lowering's input graph that has no kernel lowering, expanded through its
/// decomposition rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Expanded {
    /// Its name and op in the graph handed to the lowering (in mode `none`, the user's node).
    pub node: String,
    pub target: String,
    /// The nodes of the plan's graph it became, in graph order.
    pub products: Vec<NodeId>,
}

/// The graph the kernels are built from, and how its nodes may run.
pub(super) struct Lowerable {
    /// The input graph with what had no kernel expanded, and where each of its nodes came from.
    pub ex: Decomposition,
    /// Per node: a kept node run as its own eager kernel.
    pub fallback: Vec<bool>,
    /// Per node: the input node whose eager call its kernel stands for, when only that node's
    /// products may fuse with it.
    pub domain: Vec<Option<NodeId>>,
    pub expanded: Vec<Expanded>,
    /// Per node: its entry in `expanded`, if it is a product of one.
    pub expansion: Vec<Option<usize>>,
}

/// Expands what `d`'s graph cannot lower directly; every other node is as `d` has it.
pub(super) fn expand(d: &Decomposition) -> Result<Lowerable, LowerError> {
    let before = fallbacks(d);
    let ex = decomp::expand_for_lowering(&d.graph, d.mode)?;
    let origin = &ex.provenance.origin;
    let mut expanded = Vec::with_capacity(ex.decomposed.len());
    let mut expansion = vec![None; ex.graph.nodes.len()];
    for x in &ex.decomposed {
        let node = d.graph.node(x.node);
        let products = ex.provenance.products[x.node.index()].clone();
        for p in &products {
            expansion[p.index()] = Some(expanded.len());
        }
        expanded.push(Expanded { node: node.name.clone(), target: node.target.clone(), products });
    }
    let fallback = (0..ex.graph.nodes.len()).map(|i| expansion[i].is_none() && before[origin[i].index()]).collect();
    let domain = (0..ex.graph.nodes.len()).map(|i| (expansion[i].is_some() && before[origin[i].index()]).then_some(origin[i])).collect();
    Ok(Lowerable { ex, fallback, domain, expanded, expansion })
}

/// Takes out of `inlinable` every node read (through views) by a node of another fusion domain:
/// a kernel standing for one node's eager call computes nothing of another's, so what crosses
/// goes through memory, as between eager kernels. Within an expanded node's domain, a product
/// of a dtype that kernels compute in a wider type (float16/bfloat16 in float32, the narrow
/// integers in int64) is written out too: eager runs a composite body op by op, rounding or
/// wrapping every intermediate in its dtype, which a fused kernel would not.
pub(super) fn keep_within_domains(graph: &Graph, kinds: &[OpKind], domain: &[Option<NodeId>], inlinable: &mut HashSet<NodeId>) {
    let users = graph.users();
    let narrow = |t: &crate::ir::TensorMeta| matches!(t.dtype, DType::F16 | DType::BF16 | DType::U8 | DType::I8 | DType::I16 | DType::I32);
    let rounds = |p: NodeId| graph.node(p).outputs.iter().any(|o| graph.value(*o).tensor().is_some_and(narrow));
    let crossing: Vec<NodeId> = inlinable
        .iter()
        .copied()
        .filter(|&p| {
            if domain[p.index()].is_some() && rounds(p) {
                return true;
            }
            let mut stack: Vec<NodeId> = graph.node(p).outputs.iter().flat_map(|o| users[o.index()].iter().copied()).collect();
            let mut seen = HashSet::new();
            while let Some(u) = stack.pop() {
                if !seen.insert(u) {
                    continue;
                }
                if kinds[u.index()] == OpKind::View {
                    stack.extend(graph.node(u).outputs.iter().flat_map(|o| users[o.index()].iter().copied()));
                } else if domain[u.index()] != domain[p.index()] {
                    return true;
                }
            }
            false
        })
        .collect();
    for p in crossing {
        inlinable.remove(&p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decomp::{decompose, Marks, Mode};
    use crate::ir::{Arg, Format, InputKind, Model, NamedArg, NodeMeta, TensorMeta, ValueId, ValueKind};
    use crate::lower::{lower, LowerError, Step};
    use crate::sym::Expr;

    /// `huber_loss` has no kernel but a core rule: the op expanded.
    const HUBER: &str = "aten.huber_loss.default";

    fn t(sizes: &[i64]) -> ValueKind {
        t_of(sizes, DType::F32)
    }

    fn t_of(sizes: &[i64], dtype: DType) -> ValueKind {
        let sizes: Vec<Expr> = sizes.iter().map(|s| Expr::int(*s)).collect();
        ValueKind::Tensor(TensorMeta::contiguous(dtype, sizes))
    }

    fn arg(name: &str, arg: Arg) -> NamedArg {
        NamedArg { name: name.into(), arg, kwarg: false }
    }

    fn unary(g: &mut Graph, name: &str, target: &str, x: ValueId, sizes: &[i64]) -> ValueId {
        let n = g.add_node(name, target, vec![arg("self", Arg::Tensor(x))], vec![(name.into(), t(sizes))], NodeMeta::default()).unwrap();
        g.node(n).outputs[0]
    }

    /// `relu → huber_loss(·, target, reduction none, delta) → silu`, on inputs of `sizes`.
    fn graph_with(sizes: &[i64], delta: f64) -> Graph {
        let mut g = Graph::new("g");
        let x = g.add_input("x", t(sizes), InputKind::UserInput).unwrap();
        let target = g.add_input("target", t(sizes), InputKind::UserInput).unwrap();
        let r = unary(&mut g, "relu", "aten.relu.default", x, sizes);
        let args = vec![
            arg("self", Arg::Tensor(r)),
            arg("target", Arg::Tensor(target)),
            arg("reduction", Arg::Int(0)),
            arg("delta", Arg::Float(delta)),
        ];
        let n = g.add_node("huber", HUBER, args, vec![("huber".into(), t(sizes))], NodeMeta::default()).unwrap();
        let y = g.node(n).outputs[0];
        let s = unary(&mut g, "silu", "aten.silu.default", y, sizes);
        g.outputs.push(Arg::Tensor(s));
        g
    }

    fn graph(sizes: &[i64]) -> Graph {
        graph_with(sizes, 0.5)
    }

    fn steps_of<'p>(plan: &'p crate::lower::Plan, name: &str) -> Vec<&'p Step> {
        plan.steps.iter().filter(|s| s.kernel().is_some() && plan.step_names(s) == [name]).collect()
    }

    /// The plan computes what the graph does (each step's nodes interpreted in plan order).
    fn assert_runs_like_the_graph(plan: &crate::lower::Plan, g: &Graph) {
        let model = Model::new(Format::Pt2, "test");
        let inputs = crate::exec::random_inputs(g, &Default::default(), 3).unwrap();
        let want = crate::exec::run(&model, g, &inputs).unwrap();
        let got = crate::runtime::reference::run_reference(plan, &model, &inputs, &Default::default()).unwrap().outputs;
        for (a, b) in got[0].to_f64_vec().iter().zip(want[0].to_f64_vec()) {
            assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "{a} vs {b}");
        }
    }

    #[test]
    fn in_mode_none_an_expanded_node_is_one_group_of_its_own_products() {
        let g = graph(&[2, 3, 4]);
        let model = Model::new(Format::Pt2, "test");
        let plan = lower(&model, &g, Mode::None, &Marks::default()).unwrap();
        assert_eq!(plan.expanded.len(), 1);
        let x = &plan.expanded[0];
        assert_eq!((x.node.as_str(), x.target.as_str()), ("huber", HUBER));
        assert!(x.products.len() > 3, "{:?}", x.products);
        // Its pointwise products make one fused kernel standing for the node; its neighbours
        // stay eager fallbacks that compute nothing of it.
        let huber = steps_of(&plan, "huber");
        assert_eq!(huber.len(), 1);
        assert!(matches!(huber[0], Step::Fused { nodes, .. } if nodes.len() > 1 && nodes.iter().all(|n| x.products.contains(n))));
        for name in ["relu", "silu"] {
            assert!(matches!(steps_of(&plan, name)[..], [Step::Fallback { .. }]), "{name}");
        }
        assert_runs_like_the_graph(&plan, &g);
    }

    #[test]
    fn in_lite_mode_a_kept_expanded_node_fuses_with_nothing_marked() {
        let g = graph(&[2, 3, 4]);
        let model = Model::new(Format::Pt2, "test");
        let marks = Marks::parse(&["silu".to_string()]).unwrap();
        let plan = lower(&model, &g, Mode::Lite, &marks).unwrap();
        assert_eq!(plan.expanded.iter().map(|x| x.node.as_str()).collect::<Vec<_>>(), ["huber"]);
        let products: HashSet<NodeId> = plan.expanded[0].products.iter().copied().collect();
        // The marked silu's products are fused among themselves, the Huber loss's among
        // themselves: no kernel mixes the two, though both are pointwise and adjacent.
        for s in plan.steps.iter().filter(|s| s.kernel().is_some()) {
            let mine = s.nodes().iter().filter(|n| products.contains(n)).count();
            assert!(mine == 0 || mine == s.nodes().len(), "{:?}", plan.step_names(s));
        }
        assert_eq!(steps_of(&plan, "huber").len(), 1);
        // The marked silu, decomposed by the mode (not expanded), is a fused kernel of its own.
        let silu = plan.steps.iter().filter(|s| matches!(s, Step::Fused { nodes, .. } if !nodes.iter().any(|n| products.contains(n))));
        assert_eq!(silu.count(), 1);
        assert_runs_like_the_graph(&plan, &g);
    }

    /// `l1_loss(x, y, reduction none)` (`sub`, then `abs`, no casts) on inputs of `dtype`.
    fn l1_graph(dtype: DType) -> Graph {
        let mut g = Graph::new("l1");
        let x = g.add_input("x", t_of(&[2, 3], dtype), InputKind::UserInput).unwrap();
        let y = g.add_input("y", t_of(&[2, 3], dtype), InputKind::UserInput).unwrap();
        let args = vec![arg("self", Arg::Tensor(x)), arg("target", Arg::Tensor(y)), arg("reduction", Arg::Int(0))];
        let n = g.add_node("l1", "aten.l1_loss.default", args, vec![("l1".into(), t_of(&[2, 3], dtype))], NodeMeta::default()).unwrap();
        let out = g.node(n).outputs[0];
        g.outputs.push(Arg::Tensor(out));
        g
    }

    #[test]
    fn products_that_eager_rounds_or_wraps_are_written_out_the_others_fuse() {
        let model = Model::new(Format::Pt2, "test");
        let kernels = |dtype| {
            let plan = lower(&model, &l1_graph(dtype), Mode::None, &Marks::default()).unwrap();
            assert_eq!(plan.expanded.len(), 1);
            steps_of(&plan, "l1").len()
        };
        // float32 and int64 are what kernels compute in: `sub` and `abs` make one kernel.
        assert_eq!(kernels(DType::F32), 1);
        assert_eq!(kernels(DType::I64), 1);
        // Eager rounds (float16, bfloat16) or wraps (uint8) the difference before `abs`.
        for dtype in [DType::F16, DType::BF16, DType::U8] {
            assert_eq!(kernels(dtype), 2, "{dtype:?}");
        }
    }

    #[test]
    fn in_full_mode_the_table_decomposes_it_and_nothing_is_left_to_expand() {
        let g = graph(&[2, 3, 4]);
        let model = Model::new(Format::Pt2, "test");
        let plan = lower(&model, &g, Mode::Full, &Marks::default()).unwrap();
        assert!(plan.expanded.is_empty());
        assert!(!plan.graph.nodes.iter().any(|n| n.target == HUBER));
    }

    #[test]
    fn every_product_keeps_its_provenance_to_the_users_node() {
        let g = graph(&[2, 3, 4]);
        let d = decompose(&g, Mode::None, &Marks::default()).unwrap();
        let l = expand(&d).unwrap();
        let huber = g.node_by_name("huber").unwrap();
        let products = &l.ex.provenance.products[huber.index()];
        assert_eq!(products, &l.expanded[0].products);
        for p in products {
            assert_eq!(l.ex.provenance.origin[p.index()], huber);
            assert_eq!(l.expansion[p.index()], Some(0));
            // The graph's own record of where a node came from names the user's node too.
            assert_eq!(l.ex.graph.node(*p).meta.from_node.first().map(|o| o.name.as_str()), Some("huber"));
        }
        let plan = lower(&Model::new(Format::Pt2, "test"), &g, Mode::None, &Marks::default()).unwrap();
        for p in &plan.expanded[0].products {
            assert_eq!(plan.attributed(*p), "huber");
        }
        let relu = plan.graph.node_by_name("relu").unwrap();
        assert_eq!((plan.attributed(relu), plan.expansion_of(relu)), ("relu", None));
        // Kernels and profiles are labelled with the user's node.
        let labels = crate::profile::launch_labels(&plan, &Default::default());
        let huber_kernel = &steps_of(&plan, "huber")[0].kernel().unwrap().name;
        assert_eq!(labels[huber_kernel].node, "huber");
    }

    #[test]
    fn a_rule_that_fails_keeps_the_node_and_the_error_names_it() {
        // Huber loss needs a positive delta: the rule refuses -1.
        let mut g = graph_with(&[3], -1.0);
        g.name = "one_d".into();
        let model = Model::new(Format::Pt2, "test");
        let e = lower(&model, &g, Mode::None, &Marks::default()).unwrap_err();
        assert!(matches!(&e, LowerError::NotExpanded { node, target, .. } if node == "huber" && target == HUBER), "{e}");
        let text = e.to_string();
        assert!(text.contains("node `huber`: no kernel lowering for") && text.contains("positive delta"), "{text}");
        // `inspect` and the coverage count say the same.
        let missing = crate::lower::coverage::missing_in_kernels(&g);
        assert_eq!(missing.len(), 1);
        assert_eq!((missing[0].target.as_str(), missing[0].nodes.as_slice()), (HUBER, ["huber".to_string()].as_slice()));
        assert!(crate::lower::coverage::missing_in_kernels(&graph(&[2, 3, 4])).is_empty());
    }
}
