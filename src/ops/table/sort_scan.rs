//! Picking by value and scans: sorts, selections, cumulative ops.

use super::prelude::*;

#[rustfmt::skip]
pub(super) const OPS: &[OpDef] = &[
    op("aten.sort.default").run(x::sort::sort).lower(K::Heavy, l::sort::sort).meta(m::sort),
    op("aten.sort.stable").run(x::sort::sort).lower(K::Heavy, l::sort::sort).meta(m::sort),
    op("aten.argsort.default").run(x::sort::argsort).lower(K::Heavy, l::sort::sort),
    op("aten.argsort.stable").run(x::sort::argsort).lower(K::Heavy, l::sort::sort),
    op("aten.msort.default").run(x::sort::msort).lower(K::Heavy, l::sort::sort),
    op("aten.topk.default").run(x::sort::topk).lower(K::Heavy, l::sort::topk),
    op("aten.kthvalue.default").run(x::sort::kthvalue).lower(K::Heavy, l::sort::kthvalue),
    op("aten.median.default").run(x::sort::median).lower(K::Heavy, l::sort::median),
    op("aten.median.dim").run(x::sort::median).lower(K::Heavy, l::sort::median),
    op("aten.nanmedian.default").run(x::sort::nanmedian).lower(K::Heavy, l::sort::median),
    op("aten.nanmedian.dim").run(x::sort::nanmedian).lower(K::Heavy, l::sort::median),
    op("aten.mode.default").run(x::sort::mode).lower(K::Heavy, l::sort::mode),
    op("aten.max.dim").run(x::sort::max_dim).lower(K::Heavy, l::sort::max_dim),
    op("aten.min.dim").run(x::sort::min_dim).lower(K::Heavy, l::sort::min_dim),
    op("aten.max.default").run(x::sort::max_all).lower(K::Reduction, l::reduce::max_all),
    op("aten.min.default").run(x::sort::min_all).lower(K::Reduction, l::reduce::min_all),
    op("aten.argmax.default").run(x::sort::argmax).lower(K::Reduction, l::reduce::argmax),
    op("aten.argmin.default").run(x::sort::argmin).lower(K::Reduction, l::reduce::argmin),
    op("aten.cumsum.default").run(x::sort::cumsum).lower(K::Heavy, l::reduce::cumsum).meta(m::scan),
    op("aten.cumprod.default").run(x::sort::cumprod).lower(K::Heavy, l::reduce::cumprod).meta(m::scan),
    op("aten.logcumsumexp.default").run(x::sort::logcumsumexp).lower(K::Heavy, l::sort::logcumsumexp),
    op("aten.cummax.default").run(x::sort::cummax).lower(K::Heavy, l::sort::cummax),
    op("aten.cummin.default").run(x::sort::cummin).lower(K::Heavy, l::sort::cummin),
    op("aten._unique2.default").run(x::unique::unique2),
    op("aten.unique_dim.default").run(x::unique::unique_dim),
    op("aten.unique_consecutive.default").run(x::unique::unique_consecutive),
    op("aten._chunk_cat.default").run(x::unique::chunk_cat).lower(K::Pointwise, l::layout::chunk_cat),
    op("aten.resize_.default").run(x::unique::resize_).lower(K::View, l::view::reshape),
    op("aten.resize_as_.default").run(x::unique::resize_as_).lower(K::View, l::view::reshape),
    op("aten.native_dropout_backward.default").run(x::unique::native_dropout_backward).core(r::gates::native_dropout_backward).meta(m::dropout_backward),
    op("aten._softmax_backward_data.default").run(x::unique::softmax_backward_data).core(r::gates::softmax_backward_data).meta(m::softmax_backward_data),
];
