//! Random sampling: values checked by support and distribution, never by value. Every sampler
//! draws from the run's Philox generator (`crate::ops::rng`), in the interpreter and in kernels.
//! The in-place forms run functionalized, as their functional overloads.

use super::prelude::*;

#[rustfmt::skip]
pub(super) const OPS: &[OpDef] = &[
    op("aten.rand.default").run(x::random::rand).lower(K::Pointwise, l::random::rand).random(),
    op("aten.randn.default").run(x::random::randn).lower(K::Pointwise, l::random::randn).random(),
    op("aten.rand_like.default").run(x::random::rand_like).lower(K::Pointwise, l::random::rand).random(),
    op("aten.randn_like.default").run(x::random::randn_like).lower(K::Pointwise, l::random::randn).random(),
    op("aten.randint.default").run(x::random::randint).lower(K::Pointwise, l::random::randint).random(),
    op("aten.randint.low").run(x::random::randint).lower(K::Pointwise, l::random::randint).random(),
    op("aten.randint_like.default").run(x::random::randint_like).lower(K::Pointwise, l::random::randint).random(),
    op("aten.randint_like.low_dtype").run(x::random::randint_like).lower(K::Pointwise, l::random::randint).random(),
    op("aten.randperm.default").run(x::random::randperm).lower(K::Heavy, l::random::randperm).random(),
    op("aten.bernoulli.default").run(x::random::bernoulli).lower(K::Pointwise, l::random::bernoulli).random(),
    op("aten.bernoulli.p").run(x::random::bernoulli).lower(K::Pointwise, l::random::bernoulli).random(),
    op("aten.bernoulli.Tensor").run(x::random::bernoulli).lower(K::Pointwise, l::random::bernoulli).random(),
    op("aten.uniform_.default").run(x::random::uniform_).random(),
    op("aten.uniform.default").run(x::random::uniform_).lower(K::Pointwise, l::random::uniform).random(),
    op("aten.normal_.default").run(x::random::normal_).random(),
    op("aten.normal.default").run(x::random::normal_).lower(K::Pointwise, l::random::normal).random(),
    op("aten.normal.functional").run(x::random::normal_).lower(K::Pointwise, l::random::normal).random(),
    op("aten.exponential_.default").run(x::random::exponential_).random(),
    op("aten.exponential.default").run(x::random::exponential_).lower(K::Pointwise, l::random::exponential).random(),
    op("aten.cauchy_.default").run(x::random::cauchy_).random(),
    op("aten.cauchy.default").run(x::random::cauchy_).lower(K::Pointwise, l::random::cauchy).random(),
    op("aten.log_normal_.default").run(x::random::log_normal_).random(),
    op("aten.log_normal.default").run(x::random::log_normal_).lower(K::Pointwise, l::random::log_normal).random(),
    op("aten.geometric_.default").run(x::random::geometric_).random(),
    op("aten.geometric.default").run(x::random::geometric_).lower(K::Pointwise, l::random::geometric).random(),
    op("aten.normal.Tensor_Tensor").run(x::random::normal).lower(K::Pointwise, l::random::normal).random(),
    op("aten.normal.Tensor_float").run(x::random::normal).lower(K::Pointwise, l::random::normal).random(),
    op("aten.normal.float_Tensor").run(x::random::normal).lower(K::Pointwise, l::random::normal).random(),
    op("aten.normal.float_float").run(x::random::normal).lower(K::Pointwise, l::random::normal).random(),
    op("aten.multinomial.default").run(x::random::multinomial).lower(K::Heavy, l::random::multinomial).random(),
    op("aten.empty_permuted.default").run(x::random::empty_sized).lower(K::Pointwise, l::math::zeros).inductor(r::fill::empty_permuted).meta(m::full),
    op("aten.new_empty_strided.default").run(x::random::empty_sized).lower(K::Pointwise, l::math::zeros),
];
