//! Graph building for the rules' unit tests: a named argument, and a node whose outputs are what
//! shape inference says of it.

use crate::infer::infer;
use crate::ir::{Arg, Graph, NamedArg, NodeMeta, ValueId};

pub(crate) fn arg(name: &str, arg: Arg) -> NamedArg {
    NamedArg { name: name.into(), arg, kwarg: false }
}

/// Adds `target(args)` as node `name` and returns its first output.
pub(crate) fn node(g: &mut Graph, name: &str, target: &str, args: Vec<NamedArg>) -> ValueId {
    let kinds = infer(target, &args, g).unwrap();
    let outs = kinds.into_iter().map(|k| (name.to_string(), k)).collect();
    let id = g.add_node(name, target, args, outs, NodeMeta::default()).unwrap();
    g.node(id).outputs[0]
}
