//! The graph IR every stage reads: plain data, no passes (those live in `decomp`, `lower`, ...).
//!
//! A [`Model`] holds one or more [`Graph`]s. A graph owns arenas of [`Node`]s and [`Value`]s
//! addressed by typed ids, so a `NodeId` can never be mistaken for a `ValueId`.

mod arg;
mod dtype;
mod graph;
mod meta;
mod model;

pub use arg::{Arg, NamedArg, SymIntArg};
pub use dtype::DType;
pub use graph::{Graph, GraphError, InputKind, Node, NodeId, Value, ValueId, ValueKind};
pub use meta::{ModuleFrame, NodeMeta, Origin};
pub use model::{Format, Guard, Model, SymbolInfo, Weight, WeightData};

use crate::sym::Expr;

/// Dtype, sizes, strides and storage offset of a tensor; each size/stride is symbolic.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMeta {
    pub dtype: DType,
    pub sizes: Vec<Expr>,
    pub strides: Vec<Expr>,
    pub storage_offset: Expr,
    pub device: String,
    pub requires_grad: bool,
}

impl TensorMeta {
    /// Contiguous (row-major) strides for `sizes`, as PyTorch computes them.
    pub fn contiguous_strides(sizes: &[Expr]) -> Vec<Expr> {
        let mut strides = vec![Expr::int(1); sizes.len()];
        for i in (0..sizes.len().saturating_sub(1)).rev() {
            strides[i] = Expr::mul(strides[i + 1].clone(), Expr::max(sizes[i + 1].clone(), Expr::int(1)));
        }
        strides
    }
}
