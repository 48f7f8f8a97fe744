//! Indexing: gathers and scatters through index tensors.

use super::prelude::*;

#[rustfmt::skip]
pub(super) const OPS: &[OpDef] = &[
    op("aten.gather.default").run(x::index::gather).lower(K::Pointwise, l::math::gather).keep().meta(m::gather),
    op("aten.take_along_dim.default").run(x::index::take_along_dim).lower(K::Pointwise, l::index::take_along_dim),
    op("aten.take.default").run(x::index::take).lower(K::Pointwise, l::index::take),
    op("aten.scatter.src").run(x::index::scatter).lower(K::Heavy, l::scatter::scatter),
    op("aten.scatter.value").run(x::index::scatter).lower(K::Heavy, l::scatter::scatter),
    op("aten.scatter.reduce").run(x::index::scatter).lower(K::Heavy, l::scatter::scatter),
    op("aten.scatter.value_reduce").run(x::index::scatter).lower(K::Heavy, l::scatter::scatter),
    op("aten.scatter_add.default").run(x::index::scatter_add).lower(K::Heavy, l::scatter::scatter_add),
    op("aten.scatter_reduce.two").run(x::index::scatter_reduce).lower(K::Heavy, l::scatter::scatter_reduce),
    op("aten.index_select.default").run(x::index::index_select).lower(K::Pointwise, l::math::index_select).inductor(r::gather::index_select).keep().meta(m::index_select),
    op("aten.index_add.default").run(x::index::index_add).lower(K::Heavy, l::scatter::index_add),
    op("aten.index_copy.default").run(x::index::index_copy).lower(K::Heavy, l::scatter::index_copy).meta(m::same_as_input),
    op("aten.index_reduce.default").run(x::index::index_reduce).lower(K::Heavy, l::scatter::index_reduce),
    op("aten.index_fill.int_Scalar").run(x::index::index_fill).lower(K::Heavy, l::scatter::index_fill),
    op("aten.index_fill.int_Tensor").run(x::index::index_fill).lower(K::Heavy, l::scatter::index_fill),
    op("aten.index.Tensor").run(x::index::index).lower(K::Pointwise, l::index::index).keep().meta(m::index_tensor),
    op("aten.index_put.default").run(x::index::index_put).lower(K::Heavy, l::put::index_put),
    op("aten.embedding.default").run(x::index::embedding).lower(K::Pointwise, l::math::embedding).keep(),
    op("aten.masked_select.default").run(x::index::masked_select),
    op("aten.masked_scatter.default").run(x::index::masked_scatter).lower(K::Heavy, l::put::masked_scatter),
    op("aten.nonzero.default").run(x::index::nonzero),
    op("aten.nonzero_static.default").run(x::index::nonzero_static),
    op("aten.argwhere.default").run(x::index::argwhere),
    op("aten.select_scatter.default").run(x::index::select_scatter).lower(K::Pointwise, l::view_scatter::select_scatter).keep().meta(m::slice_scatter),
    op("aten.slice_scatter.default").run(x::index::slice_scatter).lower(K::Pointwise, l::view_scatter::slice_scatter).keep().meta(m::slice_scatter),
    op("aten.diagonal_scatter.default").run(x::index::diagonal_scatter).lower(K::Pointwise, l::view_scatter::diagonal_scatter),
    op("aten.put.default").run(x::index::put).lower(K::Heavy, l::put::put),
    op("aten.as_strided_scatter.default").run(x::index::as_strided_scatter).lower(K::Heavy, l::put::as_strided_scatter),
    op("aten._unsafe_masked_index.default").run(x::index::unsafe_masked_index).lower(K::Pointwise, l::index::unsafe_masked_index),
    op("aten._unsafe_masked_index_put_accumulate.default").run(x::index::unsafe_masked_index_put_accumulate).lower(K::Heavy, l::put::unsafe_masked_index_put_accumulate),
    op("aten._unsafe_index.Tensor").run(x::index::index).lower(K::Pointwise, l::index::index),
    op("aten._unsafe_index_put.default").run(x::index::index_put).lower(K::Heavy, l::put::index_put),
];
