//! The lowering table: one entry per op target, giving the op's fusion kind and the function
//! that builds the element of its output at symbolic coordinates. Everything the partitioner
//! and the kernel builder know about an op is here, in one place (tinygrad's rule tables).

mod create;
mod linalg;
mod norm;
mod pointwise;
mod pool;
mod reduce;
mod view;

use std::collections::HashMap;
use std::sync::OnceLock;

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

fn meta(cx: &mut Ctx<'_>, node: &Node, _: usize, _: &[ExprId]) -> Result<ExprId, LowerError> {
    Err(cx.err(node, "computes symbolic ints, not tensor elements"))
}

const TABLE: &[(&str, OpKind, LowerFn)] = &[
    ("aten.sym_size.int", OpKind::Meta, meta),
    ("aten.sym_numel.default", OpKind::Meta, meta),
    ("_operator.mul", OpKind::Meta, meta),
    ("_operator.add", OpKind::Meta, meta),
    ("_operator.sub", OpKind::Meta, meta),
    ("_operator.floordiv", OpKind::Meta, meta),
    ("_operator.mod", OpKind::Meta, meta),
    ("_operator.neg", OpKind::Meta, meta),
    // Views and copies that keep element order.
    ("aten.view.default", OpKind::View, view::reshape),
    ("aten.reshape.default", OpKind::View, view::reshape),
    ("aten._unsafe_view.default", OpKind::View, view::reshape),
    ("aten.unsqueeze.default", OpKind::View, view::reshape),
    ("aten.squeeze.dim", OpKind::View, view::reshape),
    ("aten.squeeze.dims", OpKind::View, view::reshape),
    ("aten.squeeze.default", OpKind::View, view::reshape),
    ("aten.flatten.using_ints", OpKind::View, view::reshape),
    ("aten.unflatten.int", OpKind::View, view::reshape),
    ("aten.clone.default", OpKind::View, view::reshape),
    ("aten.contiguous.default", OpKind::View, view::reshape),
    ("aten.alias.default", OpKind::View, view::reshape),
    ("aten.detach.default", OpKind::View, view::reshape),
    ("aten.lift_fresh_copy.default", OpKind::View, view::reshape),
    ("aten.dropout.default", OpKind::View, view::dropout),
    ("aten._to_copy.default", OpKind::View, view::to_copy),
    ("aten.permute.default", OpKind::View, view::permute),
    ("aten.transpose.int", OpKind::View, view::transpose),
    ("aten.t.default", OpKind::View, view::transpose),
    ("aten.expand.default", OpKind::View, view::expand),
    ("aten.chunk.default", OpKind::View, view::split),
    ("aten.split.Tensor", OpKind::View, view::split),
    ("aten.split_with_sizes.default", OpKind::View, view::split),
    ("aten.slice.Tensor", OpKind::View, view::slice),
    ("aten.select.int", OpKind::View, view::select),
    // Elementwise.
    ("aten.arange.default", OpKind::Pointwise, create::arange),
    ("aten.arange.start_step", OpKind::Pointwise, create::arange),
    ("prims.iota.default", OpKind::Pointwise, create::iota),
    ("prims.convert_element_type.default", OpKind::Pointwise, create::convert_element_type),
    ("aten.cat.default", OpKind::Pointwise, create::cat),
    ("aten.add.Tensor", OpKind::Pointwise, pointwise::add),
    ("aten.add.Scalar", OpKind::Pointwise, pointwise::add),
    ("aten.sub.Tensor", OpKind::Pointwise, pointwise::sub),
    ("aten.sub.Scalar", OpKind::Pointwise, pointwise::sub),
    ("aten.rsub.Scalar", OpKind::Pointwise, pointwise::rsub),
    ("aten.rsub.Tensor", OpKind::Pointwise, pointwise::rsub),
    ("aten.mul.Tensor", OpKind::Pointwise, pointwise::mul),
    ("aten.mul.Scalar", OpKind::Pointwise, pointwise::mul),
    ("aten.div.Tensor", OpKind::Pointwise, pointwise::div),
    ("aten.div.Scalar", OpKind::Pointwise, pointwise::div),
    ("aten.pow.Tensor_Scalar", OpKind::Pointwise, pointwise::pow),
    ("aten.pow.Tensor_Tensor", OpKind::Pointwise, pointwise::pow),
    ("aten.maximum.default", OpKind::Pointwise, pointwise::maximum),
    ("aten.minimum.default", OpKind::Pointwise, pointwise::minimum),
    ("aten.neg.default", OpKind::Pointwise, pointwise::neg),
    ("aten.abs.default", OpKind::Pointwise, pointwise::abs),
    ("aten.exp.default", OpKind::Pointwise, pointwise::exp),
    ("aten.log.default", OpKind::Pointwise, pointwise::log),
    ("aten.sqrt.default", OpKind::Pointwise, pointwise::sqrt),
    ("aten.rsqrt.default", OpKind::Pointwise, pointwise::rsqrt),
    ("aten.reciprocal.default", OpKind::Pointwise, pointwise::reciprocal),
    ("aten.erf.default", OpKind::Pointwise, pointwise::erf),
    ("aten.tanh.default", OpKind::Pointwise, pointwise::tanh),
    ("aten.sigmoid.default", OpKind::Pointwise, pointwise::sigmoid),
    ("aten.relu.default", OpKind::Pointwise, pointwise::relu),
    ("aten.gelu.default", OpKind::Pointwise, pointwise::gelu),
    ("aten.silu.default", OpKind::Pointwise, pointwise::silu),
    ("aten.hardswish.default", OpKind::Pointwise, pointwise::hardswish),
    ("aten.hardsigmoid.default", OpKind::Pointwise, pointwise::hardsigmoid),
    ("aten.relu6.default", OpKind::Pointwise, pointwise::relu6),
    ("aten.hardtanh.default", OpKind::Pointwise, pointwise::hardtanh),
    ("aten.clamp.default", OpKind::Pointwise, pointwise::clamp),
    ("aten.clamp_min.default", OpKind::Pointwise, pointwise::clamp_min),
    ("aten.clamp_max.default", OpKind::Pointwise, pointwise::clamp_max),
    ("aten.addcmul.default", OpKind::Pointwise, pointwise::addcmul),
    ("aten.batch_norm.default", OpKind::Pointwise, norm::batch_norm),
    // Reductions (and the kept forms of ops built on them).
    ("aten.sum.dim_IntList", OpKind::Reduction, reduce::sum),
    ("aten.sum.default", OpKind::Reduction, reduce::sum),
    ("aten.mean.dim", OpKind::Reduction, reduce::mean),
    ("aten.mean.default", OpKind::Reduction, reduce::mean),
    ("aten.amax.default", OpKind::Reduction, reduce::amax),
    ("aten.amin.default", OpKind::Reduction, reduce::amin),
    ("aten.var.dim", OpKind::Reduction, reduce::var),
    ("aten.var.correction", OpKind::Reduction, reduce::var),
    ("aten.std.dim", OpKind::Reduction, reduce::std),
    ("aten.std.correction", OpKind::Reduction, reduce::std),
    ("aten.var_mean.correction", OpKind::Reduction, reduce::var_mean),
    ("aten.softmax.int", OpKind::Reduction, norm::softmax),
    ("aten._softmax.default", OpKind::Reduction, norm::softmax),
    ("aten.log_softmax.int", OpKind::Reduction, norm::log_softmax),
    ("aten._log_softmax.default", OpKind::Reduction, norm::log_softmax),
    ("aten.layer_norm.default", OpKind::Reduction, norm::layer_norm),
    ("aten.rms_norm.default", OpKind::Reduction, norm::rms_norm),
    ("aten._fused_rms_norm.default", OpKind::Reduction, norm::rms_norm),
    // Matrix products, attention, convolution and pooling.
    ("aten.mm.default", OpKind::Heavy, linalg::mm),
    ("aten.bmm.default", OpKind::Heavy, linalg::mm),
    ("aten.addmm.default", OpKind::Heavy, linalg::addmm),
    ("aten.linear.default", OpKind::Heavy, linalg::linear),
    ("aten.scaled_dot_product_attention.default", OpKind::Heavy, linalg::sdpa),
    // The fused op Inductor's table keeps on CPU; its logsumexp output is never read in inference.
    ("aten._scaled_dot_product_flash_attention_for_cpu.default", OpKind::Heavy, linalg::sdpa),
    ("aten.conv2d.default", OpKind::Heavy, pool::conv2d),
    ("aten.convolution.default", OpKind::Heavy, pool::conv2d),
    ("aten.max_pool2d.default", OpKind::Heavy, pool::max_pool2d),
    ("aten.max_pool2d_with_indices.default", OpKind::Heavy, pool::max_pool2d),
    ("aten.avg_pool2d.default", OpKind::Heavy, pool::avg_pool2d),
    ("aten.adaptive_avg_pool2d.default", OpKind::Heavy, pool::adaptive_avg_pool2d),
    ("aten._adaptive_avg_pool2d.default", OpKind::Heavy, pool::adaptive_avg_pool2d),
];

/// The fusion kind and lowering of `target`, if this build lowers it.
pub fn lookup(target: &str) -> Option<(OpKind, LowerFn)> {
    static MAP: OnceLock<HashMap<&'static str, (OpKind, LowerFn)>> = OnceLock::new();
    MAP.get_or_init(|| TABLE.iter().map(|(t, k, f)| (*t, (*k, *f))).collect()).get(target).copied()
}

/// Every target this build lowers, in table order.
pub fn supported_targets() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|(t, _, _)| *t)
}
