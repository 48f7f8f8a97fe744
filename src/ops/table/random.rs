//! Random sampling: values checked by support and shape, never by equality.

use super::prelude::*;

#[rustfmt::skip]
pub(super) const OPS: &[OpDef] = &[
    op("aten.rand.default").run(x::random::rand),
    op("aten.randn.default").run(x::random::randn),
    op("aten.rand_like.default").run(x::random::rand_like),
    op("aten.randn_like.default").run(x::random::randn_like),
    op("aten.randint.default").run(x::random::randint),
    op("aten.randint.low").run(x::random::randint),
    op("aten.randint_like.default").run(x::random::randint_like),
    op("aten.randint_like.low_dtype").run(x::random::randint_like),
    op("aten.randperm.default").run(x::random::randperm),
    op("aten.bernoulli.default").run(x::random::bernoulli),
    op("aten.bernoulli.p").run(x::random::bernoulli),
    op("aten.bernoulli.Tensor").run(x::random::bernoulli),
    op("aten.uniform_.default").run(x::random::uniform_),
    op("aten.uniform.default").run(x::random::uniform_),
    op("aten.normal_.default").run(x::random::normal_),
    op("aten.exponential_.default").run(x::random::exponential_),
    op("aten.exponential.default").run(x::random::exponential_),
    op("aten.cauchy_.default").run(x::random::cauchy_),
    op("aten.log_normal_.default").run(x::random::log_normal_),
    op("aten.geometric_.default").run(x::random::geometric_),
    op("aten.normal.Tensor_Tensor").run(x::random::normal),
    op("aten.normal.Tensor_float").run(x::random::normal),
    op("aten.normal.float_Tensor").run(x::random::normal),
    op("aten.normal.float_float").run(x::random::normal),
    op("aten.multinomial.default").run(x::random::multinomial),
    op("aten.empty_permuted.default").run(x::random::empty_sized).lower(K::Pointwise, l::math::zeros),
    op("aten.new_empty_strided.default").run(x::random::empty_sized).lower(K::Pointwise, l::math::zeros),
];
