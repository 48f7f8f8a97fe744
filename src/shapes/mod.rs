//! Concrete shapes: bind every dynamic dimension to a value in its range, then evaluate each
//! tensor's sizes, strides and byte size, and every guard. The app runs this on each slider move.

use crate::ir::{DType, Graph, Model, ValueKind};
use crate::sym::{Bindings, Range, SymError};

/// A binding the user asked for that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BindError {
    #[error("unknown symbol `{name}`; this model's symbols are: {known}")]
    UnknownSymbol { name: String, known: String },
    #[error("{name} = {value} is outside its range {range}")]
    OutOfRange { name: String, value: i64, range: Range },
    #[error("symbol `{name}` has no hint; bind it with --bind {name}=N (range {range})")]
    NoHint { name: String, range: Range },
    #[error("`{0}` is not of the form SYM=INT")]
    Syntax(String),
    #[error("`{0}` is a data-dependent size (an unbacked symbol): a run computes it from the data, it cannot be bound")]
    Unbacked(String),
}

/// Parses `SYM=INT`.
pub fn parse_binding(text: &str) -> Result<(String, i64), BindError> {
    let (name, value) = text.split_once('=').ok_or_else(|| BindError::Syntax(text.to_string()))?;
    let value = value.trim().parse::<i64>().map_err(|_| BindError::Syntax(text.to_string()))?;
    Ok((name.trim().to_string(), value))
}

/// Every backed symbol of the model bound: explicit values first (checked against their
/// ranges), then the traced hint. Unbacked symbols (`u0`: sizes that depend on data) stay
/// unbound: a run computes them.
pub fn resolve_bindings(model: &Model, explicit: &[(String, i64)]) -> Result<Bindings, BindError> {
    let known = || model.symbols.iter().map(|s| format!("{} ∈ {}", s.name, s.range)).collect::<Vec<_>>().join(", ");
    let mut b = Bindings::new();
    for (name, value) in explicit {
        if crate::sym::is_unbacked(name) {
            return Err(BindError::Unbacked(name.clone()));
        }
        let sym = model
            .symbol(name)
            .ok_or_else(|| BindError::UnknownSymbol { name: name.clone(), known: known() })?;
        if !sym.range.contains(*value) {
            return Err(BindError::OutOfRange { name: name.clone(), value: *value, range: sym.range });
        }
        b.set(name, *value);
    }
    for s in model.symbols.iter().filter(|s| !crate::sym::is_unbacked(&s.name)) {
        if b.get(&s.name).is_none() {
            let hint = s.hint.ok_or_else(|| BindError::NoHint { name: s.name.clone(), range: s.range })?;
            b.set(&s.name, hint);
        }
    }
    Ok(b)
}

/// A tensor's shape under concrete bindings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConcreteTensor {
    pub dtype: DType,
    pub shape: Vec<i64>,
    pub strides: Vec<i64>,
    pub storage_offset: i64,
    /// Elements times element size; `None` when it overflows 64 bits.
    pub bytes: Option<u64>,
}

/// Evaluates one tensor value's metadata.
pub fn concrete_tensor(meta: &crate::ir::TensorMeta, b: &Bindings) -> Result<ConcreteTensor, SymError> {
    let shape = meta.sizes.iter().map(|e| e.eval_int(b)).collect::<Result<Vec<_>, _>>()?;
    let strides = meta.strides.iter().map(|e| e.eval_int(b)).collect::<Result<Vec<_>, _>>()?;
    let storage_offset = meta.storage_offset.eval_int(b)?;
    let bytes = shape
        .iter()
        .try_fold(meta.dtype.size_bytes() as u64, |acc, &d| u64::try_from(d).ok().and_then(|d| acc.checked_mul(d)));
    Ok(ConcreteTensor { dtype: meta.dtype, shape, strides, storage_offset, bytes })
}

/// Concrete metadata of every tensor value of `graph`, indexed like `graph.values`
/// (`None` for values that are not tensors).
pub fn evaluate_graph(graph: &Graph, b: &Bindings) -> Vec<Option<Result<ConcreteTensor, SymError>>> {
    graph
        .values
        .iter()
        .map(|v| match &v.kind {
            ValueKind::Tensor(t) => Some(concrete_tensor(t, b)),
            _ => None,
        })
        .collect()
}

/// Each guard of the model evaluated under `b`.
pub fn evaluate_guards(model: &Model, b: &Bindings) -> Vec<Result<bool, SymError>> {
    model.guards.iter().map(|g| g.expr.eval_bool(b)).collect()
}
