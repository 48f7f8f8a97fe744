use std::collections::HashMap;

use super::{Arg, NamedArg, NodeMeta, TensorMeta};
use crate::sym::Expr;

/// Index of a node in its graph's node arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// Index of a value in its graph's value arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl ValueId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a value holds.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueKind {
    Tensor(TensorMeta),
    SymInt(Expr),
    SymBool(Expr),
    SymFloat(Expr),
    /// A value whose type the importer does not model (a custom object, a token).
    Other(String),
}

/// A named value: a graph input or one output of a node.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    pub name: String,
    pub kind: ValueKind,
    /// The node that produces it; `None` for graph inputs.
    pub producer: Option<NodeId>,
}

impl Value {
    pub fn tensor(&self) -> Option<&TensorMeta> {
        match &self.kind {
            ValueKind::Tensor(t) => Some(t),
            _ => None,
        }
    }
}

/// Why a graph input exists (torch.export's input specs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputKind {
    UserInput,
    Parameter { fqn: String },
    Buffer { fqn: String, persistent: bool },
    TensorConstant { fqn: String },
    CustomObject { fqn: String },
    Token,
    Constant,
}

impl InputKind {
    pub fn name(&self) -> &'static str {
        match self {
            InputKind::UserInput => "user_input",
            InputKind::Parameter { .. } => "parameter",
            InputKind::Buffer { .. } => "buffer",
            InputKind::TensorConstant { .. } => "tensor_constant",
            InputKind::CustomObject { .. } => "custom_object",
            InputKind::Token => "token",
            InputKind::Constant => "constant",
        }
    }

    /// The state-dict / constants name the input is loaded from, if any.
    pub fn fqn(&self) -> Option<&str> {
        match self {
            InputKind::Parameter { fqn }
            | InputKind::Buffer { fqn, .. }
            | InputKind::TensorConstant { fqn }
            | InputKind::CustomObject { fqn } => Some(fqn),
            _ => None,
        }
    }
}

/// One operation: a PyTorch op target applied to typed arguments, defining output values.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub name: String,
    /// The op target without `torch.ops.` (`aten.layer_norm.default`, `_operator.mul`).
    pub target: String,
    pub args: Vec<NamedArg>,
    pub outputs: Vec<ValueId>,
    pub meta: NodeMeta,
}

impl Node {
    pub fn arg(&self, name: &str) -> Option<&Arg> {
        self.args.iter().find(|a| a.name == name).map(|a| &a.arg)
    }

    /// Every value this node reads, in argument order.
    pub fn inputs(&self) -> impl Iterator<Item = ValueId> + '_ {
        self.args.iter().flat_map(|a| a.arg.values())
    }
}

/// A structural problem in a graph being built: names what and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GraphError {
    #[error("value `{0}` is defined twice")]
    Redefined(String),
    #[error("node `{node}` reads `{value}`, which no earlier node or input defines")]
    Dangling { node: String, value: String },
}

/// A dataflow graph in topological order: every value is defined before it is read,
/// which also rules out cycles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    pub name: String,
    /// The torch version that made the graph, when the file says (`2.15.0+cu132`): decompositions
    /// follow that version's tables where versions differ.
    pub torch_version: Option<String>,
    pub nodes: Vec<Node>,
    pub values: Vec<Value>,
    pub inputs: Vec<(ValueId, InputKind)>,
    pub outputs: Vec<Arg>,
    by_name: HashMap<String, ValueId>,
}

impl Graph {
    pub fn new(name: impl Into<String>) -> Graph {
        Graph { name: name.into(), ..Graph::default() }
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    pub fn value(&self, id: ValueId) -> &Value {
        &self.values[id.index()]
    }

    pub fn value_id(&self, name: &str) -> Option<ValueId> {
        self.by_name.get(name).copied()
    }

    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> {
        (0..self.nodes.len() as u32).map(NodeId)
    }

    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name).map(|i| NodeId(i as u32))
    }

    /// Adds a graph input value.
    pub fn add_input(&mut self, name: &str, kind: ValueKind, input: InputKind) -> Result<ValueId, GraphError> {
        let id = self.define(name, kind, None)?;
        self.inputs.push((id, input));
        Ok(id)
    }

    /// Defines a value with no producer and no input spec (a constant the importer materialises).
    pub fn add_free_value(&mut self, name: &str, kind: ValueKind) -> Result<ValueId, GraphError> {
        self.define(name, kind, None)
    }

    /// Appends a node; its arguments must read values already defined, and its outputs must be new.
    pub fn add_node(
        &mut self,
        name: &str,
        target: &str,
        args: Vec<NamedArg>,
        outputs: Vec<(String, ValueKind)>,
        meta: NodeMeta,
    ) -> Result<NodeId, GraphError> {
        for v in args.iter().flat_map(|a| a.arg.values()) {
            if v.index() >= self.values.len() {
                return Err(GraphError::Dangling { node: name.to_string(), value: format!("#{}", v.0) });
            }
        }
        let id = NodeId(self.nodes.len() as u32);
        let mut out_ids = Vec::with_capacity(outputs.len());
        for (out_name, kind) in outputs {
            out_ids.push(self.define(&out_name, kind, Some(id))?);
        }
        self.nodes.push(Node { name: name.to_string(), target: target.to_string(), args, outputs: out_ids, meta });
        Ok(id)
    }

    /// Drops every node from `nodes` on and every value from `values` on: undoes appends made
    /// since the graph had that many (a rewrite that failed half-way). Inputs and outputs that
    /// name a dropped value go too.
    pub fn truncate(&mut self, nodes: usize, values: usize) {
        self.nodes.truncate(nodes);
        for v in self.values.drain(values.min(self.values.len())..) {
            self.by_name.remove(&v.name);
        }
        self.inputs.retain(|(v, _)| v.index() < values);
        self.outputs.retain(|o| o.values().iter().all(|v| v.index() < values));
    }

    fn define(&mut self, name: &str, kind: ValueKind, producer: Option<NodeId>) -> Result<ValueId, GraphError> {
        if self.by_name.contains_key(name) {
            return Err(GraphError::Redefined(name.to_string()));
        }
        let id = ValueId(self.values.len() as u32);
        self.values.push(Value { name: name.to_string(), kind, producer });
        self.by_name.insert(name.to_string(), id);
        Ok(id)
    }

    /// For each value, the nodes that read it (in graph order).
    pub fn users(&self) -> Vec<Vec<NodeId>> {
        let mut users = vec![Vec::new(); self.values.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            for v in n.inputs() {
                let list: &mut Vec<NodeId> = &mut users[v.index()];
                if list.last() != Some(&NodeId(i as u32)) {
                    list.push(NodeId(i as u32));
                }
            }
        }
        users
    }

    /// Op histogram: target → count, sorted by target.
    pub fn op_histogram(&self) -> std::collections::BTreeMap<String, usize> {
        let mut h = std::collections::BTreeMap::new();
        for n in &self.nodes {
            *h.entry(n.target.clone()).or_insert(0) += 1;
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Arg, DType};

    fn t() -> ValueKind {
        ValueKind::Tensor(TensorMeta {
            dtype: DType::F32,
            sizes: vec![Expr::symbol("s0")],
            strides: vec![Expr::int(1)],
            storage_offset: Expr::int(0),
            device: "cpu".into(),
            requires_grad: false,
        })
    }

    #[test]
    fn values_must_be_defined_before_use_and_only_once() {
        let mut g = Graph::new("g");
        let x = g.add_input("x", t(), InputKind::UserInput).unwrap();
        let arg = vec![NamedArg { name: "self".into(), arg: Arg::Tensor(x), kwarg: false }];
        g.add_node("relu", "aten.relu.default", arg.clone(), vec![("relu".into(), t())], NodeMeta::default())
            .unwrap();
        assert_eq!(
            g.add_node("relu", "aten.relu.default", arg, vec![("relu".into(), t())], NodeMeta::default()),
            Err(GraphError::Redefined("relu".into()))
        );
        let bad = vec![NamedArg { name: "self".into(), arg: Arg::Tensor(ValueId(42)), kwarg: false }];
        assert!(matches!(
            g.add_node("n", "aten.relu.default", bad, vec![], NodeMeta::default()),
            Err(GraphError::Dangling { .. })
        ));
        assert_eq!(g.users()[x.index()], vec![NodeId(0)]);
        assert_eq!(g.op_histogram().get("aten.relu.default"), Some(&1));
    }

    #[test]
    fn truncating_undoes_appends_and_frees_their_names() {
        let mut g = Graph::new("g");
        let x = g.add_input("x", t(), InputKind::UserInput).unwrap();
        let arg = vec![NamedArg { name: "self".into(), arg: Arg::Tensor(x), kwarg: false }];
        let (nodes, values) = (g.nodes.len(), g.values.len());
        g.add_node("relu", "aten.relu.default", arg.clone(), vec![("relu".into(), t())], NodeMeta::default()).unwrap();
        g.truncate(nodes, values);
        assert_eq!((g.nodes.len(), g.values.len()), (0, 1));
        assert_eq!(g.value_id("relu"), None);
        assert_eq!(g.value_id("x"), Some(x));
        g.add_node("relu", "aten.relu.default", arg, vec![("relu".into(), t())], NodeMeta::default()).unwrap();
    }
}
