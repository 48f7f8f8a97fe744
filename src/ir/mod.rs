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
pub use model::{Format, Guard, Model, SymbolInfo, UnreadGuard, Weight, WeightData};

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
    /// A contiguous tensor of `sizes` on the CPU, as tests and rewrites build fresh values.
    pub fn contiguous(dtype: DType, sizes: Vec<Expr>) -> TensorMeta {
        TensorMeta { dtype, strides: TensorMeta::contiguous_strides(&sizes), sizes, storage_offset: Expr::int(0), device: "cpu".into(), requires_grad: false }
    }

    /// Contiguous (row-major) strides for `sizes`. PyTorch multiplies by `max(size, 1)`; sizes
    /// here are symbols with ranges starting at 1 or more (or literals), where that is the size
    /// itself, and FX graphs record the plain product (`8*s27`), so that is what we write.
    pub fn contiguous_strides(sizes: &[Expr]) -> Vec<Expr> {
        let mut strides = vec![Expr::int(1); sizes.len()];
        for i in (0..sizes.len().saturating_sub(1)).rev() {
            let next = match sizes[i + 1].as_int() {
                Some(n) => Expr::int(n.max(1)),
                None => sizes[i + 1].clone(),
            };
            strides[i] = Expr::mul(strides[i + 1].clone(), next);
        }
        strides
    }
}
