//! Runtime values: what each graph value holds once the interpreter has computed it.

use super::complex::ComplexTensor;
use super::tensor::Tensor;
use crate::ir::{Graph, ValueId};

/// One computed value: a tensor, or a symbolic scalar made concrete.
#[derive(Clone, Debug, PartialEq)]
pub enum RtValue {
    Tensor(Tensor),
    /// A complex tensor between two nodes (see [`super::complex`]).
    Complex(ComplexTensor),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl RtValue {
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            RtValue::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// What it is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            RtValue::Tensor(_) => "tensor",
            RtValue::Complex(_) => "complex tensor",
            RtValue::Int(_) => "int",
            RtValue::Float(_) => "float",
            RtValue::Bool(_) => "bool",
        }
    }
}

/// Every value of one run, indexed by [`ValueId`]; `None` for values never computed (a graph
/// input the run did not need, or values after a failure).
#[derive(Clone, Debug, Default)]
pub struct Values {
    slots: Vec<Option<RtValue>>,
}

impl Values {
    pub fn new(graph: &Graph) -> Values {
        Values { slots: vec![None; graph.values.len()] }
    }

    /// Room for values with ids below `len`, none computed (an op run on substituted operands).
    pub fn with_len(len: usize) -> Values {
        Values { slots: vec![None; len] }
    }

    pub fn get(&self, v: ValueId) -> Option<&RtValue> {
        self.slots.get(v.index()).and_then(Option::as_ref)
    }

    pub fn tensor(&self, v: ValueId) -> Option<&Tensor> {
        self.get(v).and_then(RtValue::as_tensor)
    }

    pub fn set(&mut self, v: ValueId, value: RtValue) {
        if let Some(slot) = self.slots.get_mut(v.index()) {
            *slot = Some(value);
        }
    }

    /// Computed values with their ids, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (ValueId, &RtValue)> {
        self.slots.iter().enumerate().filter_map(|(i, v)| v.as_ref().map(|v| (ValueId(i as u32), v)))
    }
}
