//! Attention.

use super::prelude::*;

#[rustfmt::skip]
pub(super) const OPS: &[OpDef] = &[
    op("aten.scaled_dot_product_attention.default").run(x::attention::sdpa).lower(K::Heavy, l::linalg::sdpa).core(r::attention::sdpa_math).inductor(r::attention::sdpa_flash_cpu).meta(m::sdpa),
    op("aten._scaled_dot_product_flash_attention_for_cpu.default").run(x::attention::flash_for_cpu).lower(K::Heavy, l::linalg::sdpa_flash_cpu).keep().meta(m::sdpa_flash_cpu),
];
