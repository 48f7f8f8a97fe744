//! Shape inference ("meta functions"): the symbolic output metadata of an op from its arguments.
//! Decomposition rules emit new nodes through this, so every emitted value has a symbolic shape
//! that stays right for every legal value of the dynamic dimensions.

mod broadcast;
mod ops;

use crate::ir::{Arg, Graph, NamedArg, SymIntArg, TensorMeta, ValueKind};
use crate::sym::Expr;

pub use broadcast::broadcast_shapes;

/// Why the metadata of an op could not be inferred.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cannot infer the output of `{target}`: {message}")]
pub struct InferError {
    pub target: String,
    pub message: String,
}

/// Output metadata of `target` applied to `args` (values refer to `graph`), one per output.
pub fn infer(target: &str, args: &[NamedArg], graph: &Graph) -> Result<Vec<ValueKind>, InferError> {
    let a = Args { target, args, graph };
    ops::infer(&a)
}

/// Argument access for meta functions, with errors that name the op and argument.
pub(crate) struct Args<'a> {
    pub target: &'a str,
    pub args: &'a [NamedArg],
    pub graph: &'a Graph,
}

impl<'a> Args<'a> {
    pub fn err(&self, message: impl Into<String>) -> InferError {
        InferError { target: self.target.to_string(), message: message.into() }
    }

    pub fn get(&self, name: &str) -> Option<&'a Arg> {
        self.args.iter().find(|a| a.name == name).map(|a| &a.arg)
    }

    pub fn tensor(&self, name: &str) -> Result<&'a TensorMeta, InferError> {
        match self.get(name) {
            Some(Arg::Tensor(v)) => {
                self.graph.value(*v).tensor().ok_or_else(|| self.err(format!("`{name}` is not a tensor")))
            }
            _ => Err(self.err(format!("missing tensor argument `{name}`"))),
        }
    }

    pub fn int(&self, name: &str, default: Option<i64>) -> Result<i64, InferError> {
        match self.get(name) {
            Some(Arg::Int(i)) => Ok(*i),
            Some(Arg::SymInt(SymIntArg::Int(i))) => Ok(*i),
            None | Some(Arg::None) => default.ok_or_else(|| self.err(format!("missing int argument `{name}`"))),
            Some(other) => Err(self.err(format!("`{name}` should be an int, found {other:?}"))),
        }
    }

    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, InferError> {
        match self.get(name) {
            Some(Arg::Ints(v)) => Ok(Some(v.clone())),
            Some(Arg::Int(i)) => Ok(Some(vec![*i])),
            Some(Arg::SymInts(v)) => v
                .iter()
                .map(|s| match s {
                    SymIntArg::Int(i) => Ok(*i),
                    SymIntArg::Value(_) => Err(self.err(format!("`{name}` must be static"))),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            None | Some(Arg::None) => Ok(None),
            Some(other) => Err(self.err(format!("`{name}` should be an int list, found {other:?}"))),
        }
    }

    pub fn bool(&self, name: &str, default: bool) -> Result<bool, InferError> {
        match self.get(name) {
            Some(Arg::Bool(b)) => Ok(*b),
            None | Some(Arg::None) => Ok(default),
            Some(other) => Err(self.err(format!("`{name}` should be a bool, found {other:?}"))),
        }
    }

    /// A symbolic size list (`view`'s `size`, `expand`'s `size`): literals or SymInt values.
    pub fn sym_sizes(&self, name: &str) -> Result<Vec<Expr>, InferError> {
        match self.get(name) {
            Some(Arg::Ints(v)) => Ok(v.iter().map(|i| Expr::int(*i)).collect()),
            Some(Arg::SymInts(v)) => v
                .iter()
                .map(|s| match s {
                    SymIntArg::Int(i) => Ok(Expr::int(*i)),
                    SymIntArg::Value(id) => match &self.graph.value(*id).kind {
                        ValueKind::SymInt(e) => Ok(e.clone()),
                        _ => Err(self.err(format!("`{name}` holds a value that is not a SymInt"))),
                    },
                })
                .collect(),
            _ => Err(self.err(format!("missing size list `{name}`"))),
        }
    }

    pub fn sym_int(&self, name: &str) -> Result<Expr, InferError> {
        match self.get(name) {
            Some(Arg::Int(i)) | Some(Arg::SymInt(SymIntArg::Int(i))) => Ok(Expr::int(*i)),
            Some(Arg::SymInt(SymIntArg::Value(id))) => match &self.graph.value(*id).kind {
                ValueKind::SymInt(e) => Ok(e.clone()),
                _ => Err(self.err(format!("`{name}` is not a SymInt"))),
            },
            _ => Err(self.err(format!("missing SymInt argument `{name}`"))),
        }
    }
}

/// A fresh contiguous tensor of `dtype`-like metadata.
pub(crate) fn contiguous(like: &TensorMeta, dtype: crate::ir::DType, sizes: Vec<Expr>) -> TensorMeta {
    TensorMeta {
        dtype,
        strides: TensorMeta::contiguous_strides(&sizes),
        sizes,
        storage_offset: Expr::int(0),
        device: like.device.clone(),
        requires_grad: false,
    }
}

/// Normalises a possibly negative dimension index against `rank`.
pub fn norm_dim(dim: i64, rank: usize) -> Option<usize> {
    let r = rank.max(1) as i64;
    let d = if dim < 0 { dim + r } else { dim };
    (0..r).contains(&d).then_some(d as usize)
}
