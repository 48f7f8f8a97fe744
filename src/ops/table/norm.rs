//! Normalisation layers.

use super::prelude::*;

#[rustfmt::skip]
pub(super) const OPS: &[OpDef] = &[
    op("aten.group_norm.default").run(x::norm::group_norm).lower(K::Reduction, l::norm::group_norm).core(r::group_norm::group_norm).meta(m::composite_norm),
    op("aten.native_group_norm.default").run(x::norm::native_group_norm).lower(K::Reduction, l::norm::native_group_norm).inductor(r::group_norm::native_group_norm),
    op("aten.layer_norm.default").run(x::norm::layer_norm).lower(K::Reduction, l::norm::layer_norm).core(r::norm::layer_norm).meta(m::composite_norm),
    op("aten.native_layer_norm.default").run(x::norm::native_layer_norm).lower(K::Reduction, l::norm::native_layer_norm).inductor(r::norm::native_layer_norm).keep().meta(m::native_layer_norm),
    op("aten.rms_norm.default").run(x::norm::rms_norm).lower(K::Reduction, l::norm::rms_norm).core(r::norm::rms_norm).meta(m::composite_norm),
    op("aten._fused_rms_norm.default").run(x::norm::fused_rms_norm).lower(K::Reduction, l::norm::rms_norm).core(r::norm::fused_rms_norm).meta(m::fused_rms_norm),
    op("aten._native_batch_norm_legit_no_training.default").run(x::norm::native_batch_norm_no_training).lower(K::Reduction, l::batch_norm::native_batch_norm).inductor(r::norm::batch_norm_no_training).keep().meta(m::batch_norm_no_training),
    op("aten.batch_norm.default").run(x::batch_stats::batch_norm).lower(K::Pointwise, l::batch_norm::batch_norm).core(r::norm::batch_norm).meta(m::composite_norm),
    op("aten.native_batch_norm.default").run(x::batch_stats::native_batch_norm).lower(K::Reduction, l::batch_norm::native_batch_norm),
    op("aten._native_batch_norm_legit.default").run(x::batch_stats::native_batch_norm).lower(K::Reduction, l::batch_norm::native_batch_norm),
    op("aten._native_batch_norm_legit.no_stats").run(x::batch_stats::native_batch_norm_no_stats).lower(K::Reduction, l::batch_norm::native_batch_norm).inductor(r::norm::native_batch_norm_no_stats).meta(m::batch_norm_batch_stats),
    op("aten._batch_norm_with_update.default").run(x::batch_stats::batch_norm_with_update).lower(K::Reduction, l::batch_norm::native_batch_norm),
    op("aten.native_layer_norm_backward.default").run(x::norm_grad::native_layer_norm_backward).lower(K::Reduction, l::norm_grad::native_layer_norm_backward),
    op("aten.native_group_norm_backward.default").run(x::norm_grad::native_group_norm_backward).lower(K::Reduction, l::norm_grad::native_group_norm_backward),
    op("aten._weight_norm.default").run(x::norm::weight_norm).core(r::vector_norm::weight_norm),
    op("aten._weight_norm_interface.default").run(x::norm::weight_norm_interface).core(r::vector_norm::weight_norm_interface),
    op("aten.instance_norm.default").run(x::batch_stats::instance_norm).lower(K::Reduction, l::batch_norm::instance_norm),
];
