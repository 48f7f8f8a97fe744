//! Higher-order ops whose body computes the same values as if it were written inline, replaced
//! by that body at import: `wrap_with_set_grad_enabled` (a `torch.no_grad()` or
//! `torch.enable_grad()` block; grad mode changes what autograd records, never a forward value)
//! and `wrap_with_autocast` whose `enabled` argument is false (transformers' rotary embeddings
//! turn autocast off around their cos/sin). torch.export keeps each as one node holding its
//! subgraph (`as_graph`); left whole, the interpreter, the decompositions and the lowering each
//! met one op they could not run, and the graph view hid the body's ops. An enabled autocast
//! block stays whole: its body runs at other dtypes than its tensors record.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::schema::{Argument, Graph, Node, SymBoolArgument, SymFloatArgument, SymIntArgument};

/// The serialized `as_graph` argument of a higher-order op.
#[derive(Deserialize)]
struct GraphArgument {
    name: String,
    graph: Graph,
}

const SET_GRAD: &str = "torch.ops.higher_order.wrap_with_set_grad_enabled";
const AUTOCAST: &str = "torch.ops.higher_order.wrap_with_autocast";

/// Inlines every such op of `g` (and of the bodies it inlines); returns how many it inlined.
pub(super) fn inline_wrappers(g: &mut Graph) -> usize {
    let mut taken: HashSet<String> = g.tensor_values.keys().cloned().collect();
    taken.extend(g.sym_int_values.keys().cloned());
    taken.extend(g.nodes.iter().filter_map(|n| n.name.clone()));
    let mut count = 0;
    let mut nodes = Vec::with_capacity(g.nodes.len());
    for node in std::mem::take(&mut g.nodes) {
        match body(&node) {
            Some((body_at, args_from)) => match take_body(node, body_at) {
                Ok((node, mut sub)) if conforms(&node, &sub.graph, args_from) => {
                    count += 1 + inline_wrappers(&mut sub.graph);
                    splice(g, &mut nodes, &node, sub, args_from, &mut taken);
                }
                Ok((node, _)) | Err(node) => nodes.push(node),
            },
            None => nodes.push(node),
        }
    }
    g.nodes = nodes;
    count
}

/// Where an inlinable op keeps its body and where the body's arguments begin; `None` for any
/// other node.
fn body(node: &Node) -> Option<(usize, usize)> {
    let is_graph = |i: usize| matches!(node.inputs.get(i).map(|a| &a.arg), Some(Argument::Other { kind, .. }) if kind == "as_graph");
    match node.target.as_str() {
        // (enable_grad, body, *args)
        SET_GRAD if is_graph(1) => Some((1, 2)),
        // (device_type, dtype, enabled, cache_enabled, body, *args)
        AUTOCAST if is_graph(4) && matches!(node.inputs.get(2).map(|a| &a.arg), Some(Argument::Bool(false))) => Some((4, 5)),
        _ => None,
    }
}

/// Whether `body` can stand in for `node`: one parameter per argument after `args_from`, one
/// result per output, each result computed by a body node. A result that is a parameter passed
/// through would leave the op's output named by no node: such an op (or any other calling
/// convention) is kept whole rather than guessed at.
fn conforms(node: &Node, body: &Graph, args_from: usize) -> bool {
    let computed: HashSet<&str> = body.nodes.iter().flat_map(|n| n.outputs.iter().filter_map(value_name)).collect();
    body.inputs.len() == node.inputs.len() - args_from
        && body.outputs.len() == node.outputs.len()
        && body.outputs.iter().all(|o| value_name(o).is_some_and(|n| computed.contains(n)))
}

/// The node and its parsed body; the node unchanged when the body does not parse.
fn take_body(node: Node, at: usize) -> Result<(Node, GraphArgument), Node> {
    let parsed = match &node.inputs[at].arg {
        Argument::Other { json, .. } => serde_json::from_str::<GraphArgument>(json).ok(),
        _ => None,
    };
    match parsed {
        Some(sub) => Ok((node, sub)),
        None => Err(node),
    }
}

/// Appends `sub`'s nodes to `out` in place of `node`: the body's inputs read the op's arguments,
/// its outputs are the op's outputs, and its other values keep their names unless the outer
/// graph has them already.
fn splice(g: &mut Graph, out: &mut Vec<Node>, node: &Node, sub: GraphArgument, args_from: usize, taken: &mut HashSet<String>) {
    let GraphArgument { name: body_name, graph: mut body } = sub;
    let args = &node.inputs[args_from..];
    let mut rename: HashMap<String, String> = HashMap::new();
    for (param, a) in body.inputs.iter().zip(args) {
        if let (Some(p), Some(v)) = (value_name(param), value_name(&a.arg)) {
            rename.insert(p.to_string(), v.to_string());
        }
    }
    for (inner, outer) in body.outputs.iter().zip(&node.outputs) {
        if let (Some(i), Some(o)) = (value_name(inner), value_name(outer)) {
            rename.insert(i.to_string(), o.to_string());
        }
    }
    let mut fresh = |name: &str, rename: &mut HashMap<String, String>| -> String {
        if let Some(n) = rename.get(name) {
            return n.clone();
        }
        let mut n = name.to_string();
        let mut k = 0;
        while taken.contains(&n) {
            k += 1;
            n = format!("{body_name}_{name}_{k}");
        }
        taken.insert(n.clone());
        rename.insert(name.to_string(), n.clone());
        n
    };
    for mut inner in std::mem::take(&mut body.nodes) {
        // A node is named after its first output (torch >= 2.8 writes the name; older archives
        // leave it to the importer, which does the same): it follows that output's new name.
        let first = inner.outputs.first().and_then(value_name).map(str::to_string);
        for o in &mut inner.outputs {
            for name in names_mut(o) {
                *name = fresh(name, &mut rename);
            }
        }
        for a in &mut inner.inputs {
            for name in names_mut(&mut a.arg) {
                if let Some(n) = rename.get(name.as_str()) {
                    *name = n.clone();
                }
            }
        }
        if let Some(n) = &mut inner.name {
            match first.as_deref().filter(|f| *f == n.as_str()).and_then(|f| rename.get(f)) {
                Some(new) => *n = new.clone(),
                None => *n = fresh(n, &mut HashMap::new()),
            }
        }
        out.push(inner);
    }
    for (name, meta) in body.tensor_values {
        if let Some(n) = rename.get(&name) {
            g.tensor_values.entry(n.clone()).or_insert(meta);
        }
    }
    for (name, v) in body.sym_int_values {
        if let Some(n) = rename.get(&name) {
            g.sym_int_values.entry(n.clone()).or_insert(v);
        }
    }
    for (name, v) in body.sym_bool_values {
        if let Some(n) = rename.get(&name) {
            g.sym_bool_values.entry(n.clone()).or_insert(v);
        }
    }
    for (name, v) in body.sym_float_values {
        if let Some(n) = rename.get(&name) {
            g.sym_float_values.entry(n.clone()).or_insert(v);
        }
    }
}

/// The value an argument names, when it names exactly one.
fn value_name(a: &Argument) -> Option<&str> {
    match a {
        Argument::Tensor(n) => Some(n),
        Argument::SymInt(SymIntArgument::AsName(n)) | Argument::SymBool(SymBoolArgument::AsName(n)) | Argument::SymFloat(SymFloatArgument::AsName(n)) => Some(n),
        _ => None,
    }
}

/// Every value name an argument holds, to rewrite in place.
fn names_mut(a: &mut Argument) -> Vec<&mut String> {
    match a {
        Argument::Tensor(n) => vec![n],
        Argument::Tensors(ns) => ns.iter_mut().collect(),
        Argument::OptionalTensors(ns) => ns.iter_mut().flatten().collect(),
        Argument::SymInt(SymIntArgument::AsName(n)) | Argument::SymBool(SymBoolArgument::AsName(n)) | Argument::SymFloat(SymFloatArgument::AsName(n)) => vec![n],
        Argument::SymInts(xs) => xs
            .iter_mut()
            .filter_map(|x| match x {
                SymIntArgument::AsName(n) => Some(n),
                SymIntArgument::AsInt(_) => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `no_grad` block over `x` whose body is `body_nodes` and returns `ret`.
    fn program(body_nodes: &str, ret: &str) -> Graph {
        let body = format!(
            r#"{{"name": "submod_1", "graph": {{"inputs": [{{"as_tensor": {{"name": "x_1"}}}}], "outputs": [{{"as_tensor": {{"name": "{ret}"}}}}],
                "nodes": [{body_nodes}], "tensor_values": {{}}}}}}"#
        );
        let json = format!(
            r#"{{"inputs": [{{"as_tensor": {{"name": "x"}}}}], "outputs": [{{"as_tensor": {{"name": "y"}}}}], "tensor_values": {{}},
                "nodes": [{{"target": "{SET_GRAD}", "inputs": [{{"name": "", "arg": {{"as_bool": false}}}}, {{"name": "", "arg": {{"as_graph": {body}}}}}, {{"name": "", "arg": {{"as_tensor": {{"name": "x"}}}}}}],
                            "outputs": [{{"as_tensor": {{"name": "y"}}}}]}}]}}"#
        );
        serde_json::from_str(&json).unwrap()
    }

    #[test]
    fn a_body_is_spliced_reading_the_arguments_and_writing_the_outputs() {
        let cos = r#"{"target": "torch.ops.aten.cos.default", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x_1"}}}], "outputs": [{"as_tensor": {"name": "cos"}}]}"#;
        let mut g = program(cos, "cos");
        assert_eq!(inline_wrappers(&mut g), 1);
        assert_eq!(g.nodes.len(), 1);
        assert_eq!(g.nodes[0].target, "torch.ops.aten.cos.default");
        assert!(matches!(&g.nodes[0].inputs[0].arg, Argument::Tensor(n) if n == "x"));
        assert!(matches!(&g.nodes[0].outputs[0], Argument::Tensor(n) if n == "y"));
    }

    #[test]
    fn a_body_that_passes_a_parameter_through_is_kept_whole() {
        let mut g = program("", "x_1");
        assert_eq!(inline_wrappers(&mut g), 0);
        assert_eq!(g.nodes.len(), 1, "the wrapper stays, its output still defined");
        assert_eq!(g.nodes[0].target, SET_GRAD);
    }
}
