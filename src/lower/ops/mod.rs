//! The lowerings: per op, its fusion kind and the function that builds the element of its
//! output at symbolic coordinates, registered by target in the op registry (`crate::ops`,
//! `.lower(kind, f)`), where the partitioner and the kernel builder look them up.

pub(crate) mod antialias;
pub(crate) mod batch_norm;
pub(crate) mod bessel;
pub(crate) mod block_scan;
pub(crate) mod compact;
pub(crate) mod conv;
pub(crate) mod conv_grad;
pub(crate) mod distance;
pub(crate) mod dropout;
pub(crate) mod embed;
pub(crate) mod create;
mod depthwise;
#[cfg(test)]
mod edge_tests;
pub(crate) mod embedding_bag;
pub(crate) mod fft;
pub(crate) mod grid_sample;
pub(crate) mod grouped;
pub(crate) mod grouped_columns;
pub(crate) mod histogram;
pub(crate) mod im2col;
pub(crate) mod index;
pub(crate) mod layout;
pub(crate) mod linalg;
pub(crate) mod machine;
pub(crate) mod math;
mod math_binary;
mod math_logic;
mod math_remap;
pub(crate) mod merge_sort;
pub(crate) mod norm;
pub(crate) mod norm_grad;
pub(crate) mod numeric;
pub(crate) mod pointwise;
pub(crate) mod poly;
pub(crate) mod pool_grad;
pub(crate) mod pooling;
pub(crate) mod products;
pub(crate) mod put;
pub(crate) mod random;
mod rank_pick;
mod rank_sort;
pub(crate) mod reduce;
pub(crate) mod repeat;
pub(crate) mod resample;
pub(crate) mod resample_u8;
pub(crate) mod scatter;
pub(crate) mod segment;
pub(crate) mod select_kernel;
pub(crate) mod sort;
mod sort_search;
pub(crate) mod special;
mod special_erf;
mod special_gamma;
pub(crate) mod topk_lines;
pub(crate) mod unique;
pub(crate) mod view;
pub(crate) mod view_scatter;

use super::ctx::Ctx;
use super::kernel::ExprId;
use super::LowerError;
use crate::ir::Node;

/// How an op takes part in fusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Reindexes its input: never a kernel of its own, read through by consumers.
    View,
    /// Elementwise: inlined into its consumers inside fused kernels.
    Pointwise,
    /// Folds over some dims: always the root of its own kernel (with its producers fused in).
    Reduction,
    /// Matrix products, convolutions, attention, pooling: the root of its own kernel.
    Heavy,
    /// Computes symbolic ints only: no kernel.
    Meta,
}

/// Builds output `out` of `node` at coordinates `idx`.
pub type LowerFn = for<'a> fn(&mut Ctx<'a>, &'a Node, usize, &[ExprId]) -> Result<ExprId, LowerError>;

/// The lowering of ops that compute symbolic ints only: asking for an element is an error.
pub(crate) fn meta(cx: &mut Ctx<'_>, node: &Node, _: usize, _: &[ExprId]) -> Result<ExprId, LowerError> {
    Err(cx.err(node, "computes symbolic ints, not tensor elements"))
}
