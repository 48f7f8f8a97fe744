use super::{DType, ValueId};

/// A symbolic integer argument: a literal, or a value produced by a node (e.g. `sym_size`).
#[derive(Clone, Debug, PartialEq)]
pub enum SymIntArg {
    Int(i64),
    Value(ValueId),
}

/// One typed argument of a node, as torch.export's schema distinguishes them.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    None,
    Tensor(ValueId),
    Tensors(Vec<ValueId>),
    OptionalTensors(Vec<Option<ValueId>>),
    Int(i64),
    Ints(Vec<i64>),
    Float(f64),
    Floats(Vec<f64>),
    Bool(bool),
    Bools(Vec<bool>),
    String(String),
    Strings(Vec<String>),
    SymInt(SymIntArg),
    SymInts(Vec<SymIntArg>),
    SymBool(ValueId),
    SymFloat(ValueId),
    ScalarType(DType),
    MemoryFormat(String),
    Layout(String),
    Device(String),
    /// An argument kind this build keeps but does not interpret (graphs of higher-order ops,
    /// custom objects, ...): its schema kind and raw JSON, so nothing is silently dropped.
    Opaque { kind: String, json: String },
}

impl Arg {
    /// Every value this argument reads.
    pub fn values(&self) -> Vec<ValueId> {
        match self {
            Arg::Tensor(v) | Arg::SymBool(v) | Arg::SymFloat(v) => vec![*v],
            Arg::Tensors(vs) => vs.clone(),
            Arg::OptionalTensors(vs) => vs.iter().flatten().copied().collect(),
            Arg::SymInt(SymIntArg::Value(v)) => vec![*v],
            Arg::SymInts(xs) => xs
                .iter()
                .filter_map(|x| match x {
                    SymIntArg::Value(v) => Some(*v),
                    SymIntArg::Int(_) => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The same argument reading `f(v)` for every value `v` it reads.
    pub fn try_map_values<E>(&self, f: impl Fn(ValueId) -> Result<ValueId, E>) -> Result<Arg, E> {
        let sym = |x: &SymIntArg| match x {
            SymIntArg::Value(v) => f(*v).map(SymIntArg::Value),
            SymIntArg::Int(i) => Ok(SymIntArg::Int(*i)),
        };
        Ok(match self {
            Arg::Tensor(v) => Arg::Tensor(f(*v)?),
            Arg::Tensors(vs) => Arg::Tensors(vs.iter().map(|v| f(*v)).collect::<Result<_, _>>()?),
            Arg::OptionalTensors(vs) => {
                Arg::OptionalTensors(vs.iter().map(|v| v.map(&f).transpose()).collect::<Result<_, _>>()?)
            }
            Arg::SymInt(x) => Arg::SymInt(sym(x)?),
            Arg::SymInts(xs) => Arg::SymInts(xs.iter().map(sym).collect::<Result<_, _>>()?),
            Arg::SymBool(v) => Arg::SymBool(f(*v)?),
            Arg::SymFloat(v) => Arg::SymFloat(f(*v)?),
            other => other.clone(),
        })
    }

    pub fn as_tensor(&self) -> Option<ValueId> {
        match self {
            Arg::Tensor(v) => Some(*v),
            _ => None,
        }
    }
}

/// An argument with its schema name (`input`, `weight`, `dim`, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct NamedArg {
    pub name: String,
    pub arg: Arg,
    /// Passed by keyword in the original call (schema `kind` 2).
    pub kwarg: bool,
}
