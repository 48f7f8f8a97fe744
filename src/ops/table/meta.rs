//! Metadata assertions and symbolic integers: no tensor elements are computed.

use super::prelude::*;

#[rustfmt::skip]
pub(super) const OPS: &[OpDef] = &[
    op("aten._assert_tensor_metadata.default").run(x::scalar::no_op).lower(K::Meta, l::meta).keep(),
    op("aten._assert_scalar.default").run(x::scalar::assert_scalar).lower(K::Meta, l::meta),
    op("aten.sym_constrain_range_for_size.default").run(x::scalar::constrain_range_for_size).lower(K::Meta, l::meta),
    op("aten.sym_constrain_range.default").run(x::scalar::constrain_range).lower(K::Meta, l::meta),
    // Data-dependent checks on a tensor's value: the host reads the one element back, as
    // ATen's CPU kernel does (a device run syncs there).
    op("aten._assert_async.default").run(x::scalar::assert_async).eager(),
    op("aten._assert_async.msg").run(x::scalar::assert_async).eager(),
    op("aten.item.default").run(x::scalar::item).lower(K::Meta, l::meta).sizes(l::compact::item_sizes),
    op("aten.sym_storage_offset.default").run(x::scalar::sym_storage_offset).lower(K::Meta, l::meta),
    op("_operator.ge").run(x::scalar::ge).lower(K::Meta, l::meta),
    op("_operator.le").run(x::scalar::le).lower(K::Meta, l::meta),
    op("_operator.gt").run(x::scalar::gt).lower(K::Meta, l::meta),
    op("_operator.lt").run(x::scalar::lt).lower(K::Meta, l::meta),
    op("_operator.eq").run(x::scalar::eq).lower(K::Meta, l::meta),
    op("_operator.ne").run(x::scalar::ne).lower(K::Meta, l::meta),
    op("aten._local_scalar_dense.default").run(x::scalar::item).lower(K::Meta, l::meta).sizes(l::compact::item_sizes),
    op("aten.sym_stride.int").run(x::scalar::sym_stride).lower(K::Meta, l::meta),
    op("aten.sym_is_contiguous.default").run(x::scalar::sym_is_contiguous).lower(K::Meta, l::meta),
    op("aten.sym_size.int").run(x::scalar::sym_size).lower(K::Meta, l::meta).keep().meta(m::sym_size),
    op("aten.sym_numel.default").run(x::scalar::sym_numel).lower(K::Meta, l::meta),
    op("_operator.mul").run(x::scalar::mul).lower(K::Meta, l::meta).meta(m::sym_arith),
    op("_operator.add").run(x::scalar::add).lower(K::Meta, l::meta).meta(m::sym_arith),
    op("_operator.sub").run(x::scalar::sub).lower(K::Meta, l::meta).meta(m::sym_arith),
    op("_operator.floordiv").run(x::scalar::floordiv).lower(K::Meta, l::meta).meta(m::sym_arith),
    op("_operator.mod").run(x::scalar::modulo).lower(K::Meta, l::meta),
    op("_operator.neg").run(x::scalar::neg).lower(K::Meta, l::meta),
    op("torch.sym_float").run(x::scalar::sym_float).lower(K::Meta, l::meta).meta(m::sym_float_arith),
    op("_operator.truediv").run(x::scalar::truediv).lower(K::Meta, l::meta).meta(m::sym_float_arith),
    op("math.ceil").run(x::scalar::ceil).lower(K::Meta, l::meta).meta(m::sym_float_arith),
    op("torch.sym_min").run(x::scalar::sym_min).lower(K::Meta, l::meta).meta(m::sym_arith),
    op("torch.sym_max").run(x::scalar::sym_max).lower(K::Meta, l::meta).meta(m::sym_arith),
];
