//! The decomposition rules: one builder per op overload, registered in [`TABLE`].
//!
//! A rule reads its node's arguments through [`Rw`] and emits replacement nodes; emitting an op
//! that itself has a rule in the same table applies that rule too (Inductor decomposes to a
//! fixpoint), so `layer_norm` → `native_layer_norm` → `var_mean`, `rsqrt`, ... under `full`.

mod activation;
mod attention;
mod cat;
mod fill;
mod gather;
mod linear;
mod norm;
mod pool;
mod softmax;
mod view;

pub use super::emit::{Rw, A};
use super::RuleError;
use crate::ir::ValueId;

/// Which decomposition table a rule belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    /// torch.export's core ATen decompositions (`run_decompositions()`).
    Core,
    /// Inductor's default table (`select_decomp_table()`), which includes the core rules.
    Inductor,
    /// A rule of torch.export's table that Inductor's leaves out (`squeeze.dim` → `squeeze.dims`).
    CoreOnly,
}

pub type Build = fn(&mut Rw) -> Result<Vec<ValueId>, RuleError>;

pub struct Rule {
    /// The op overload, without `torch.ops.` (`aten.gelu.default`).
    pub target: &'static str,
    /// `Core` rules apply under both tables unless an `Inductor` rule for the same target exists.
    pub table: Table,
    pub build: Build,
}

const fn core(target: &'static str, build: Build) -> Rule {
    Rule { target, table: Table::Core, build }
}

const fn core_only(target: &'static str, build: Build) -> Rule {
    Rule { target, table: Table::CoreOnly, build }
}

const fn inductor(target: &'static str, build: Build) -> Rule {
    Rule { target, table: Table::Inductor, build }
}

/// Every rule, in one place.
pub static TABLE: &[Rule] = &[
    core("aten.linear.default", linear::linear),
    core("aten.t.default", linear::t),
    core("aten.matmul.default", linear::matmul),
    core("aten.layer_norm.default", norm::layer_norm),
    inductor("aten.native_layer_norm.default", norm::native_layer_norm),
    core("aten.rms_norm.default", norm::rms_norm),
    core("aten._fused_rms_norm.default", norm::fused_rms_norm),
    core("aten.batch_norm.default", norm::batch_norm),
    inductor("aten._native_batch_norm_legit_no_training.default", norm::batch_norm_no_training),
    core("aten.softmax.int", softmax::softmax),
    core("aten.log_softmax.int", softmax::log_softmax),
    inductor("aten._softmax.default", softmax::softmax_primitive),
    inductor("aten._log_softmax.default", softmax::log_softmax_primitive),
    inductor("aten.gelu.default", activation::gelu),
    core("aten.silu.default", activation::silu_core),
    inductor("aten.silu.default", activation::silu),
    core("aten.hardswish.default", activation::hardswish_core),
    inductor("aten.hardswish.default", activation::hardswish),
    core("aten.hardsigmoid.default", activation::hardsigmoid_core),
    inductor("aten.hardsigmoid.default", activation::hardsigmoid),
    core("aten.relu6.default", activation::relu6),
    inductor("aten.hardtanh.default", activation::hardtanh),
    inductor("aten.clamp.default", activation::clamp),
    core("aten.dropout.default", activation::dropout),
    core("aten.dropout_.default", activation::dropout_inplace),
    core("aten.addcmul.default", activation::addcmul),
    core("aten.var.dim", activation::var_dim),
    core("aten.std.dim", activation::std_dim),
    core("aten.transpose.int", view::transpose),
    core("aten.reshape.default", view::reshape),
    core("aten.flatten.using_ints", view::flatten),
    core("aten.unflatten.int", view::unflatten),
    core("aten.contiguous.default", view::contiguous),
    core_only("aten.squeeze.dim", view::squeeze_dim),
    core("aten.__and__.Tensor", view::and),
    core("aten.new_ones.default", view::new_ones),
    core("aten.to.dtype", view::to),
    core("aten.to.device", view::to),
    core("aten.to.dtype_layout", view::to),
    inductor("aten._to_copy.default", view::to_copy_convert),
    core("aten.chunk.default", view::chunk_core),
    inductor("aten.chunk.default", view::chunk),
    core("aten.conv1d.default", view::conv1d),
    core("aten.conv2d.default", view::conv2d),
    core("aten.max_pool2d.default", view::max_pool2d),
    core("aten.where.ScalarOther", view::where_scalar_other),
    core("aten.min.other", view::min_other),
    core("aten.adaptive_avg_pool2d.default", view::adaptive_avg_pool2d),
    core("aten.scaled_dot_product_attention.default", attention::sdpa_math),
    inductor("aten.scaled_dot_product_attention.default", attention::sdpa_flash_cpu),
    core("aten.arange.default", view::arange),
    inductor("aten.arange.start_step", view::arange_iota),
    // Factories and fills (what functionalized in-place fills become).
    core("aten.new_zeros.default", fill::new_zeros),
    core("aten.fill.Scalar", fill::fill_scalar),
    core("aten.fill.Tensor", fill::fill_tensor),
    core("aten.lift_fresh_copy.default", fill::lift_fresh_copy),
    inductor("aten.full_like.default", fill::full_like),
    // Picking and placing elements.
    core("aten.pad.default", gather::pad),
    core("aten.masked_fill.Scalar", gather::masked_fill),
    core("aten.roll.default", gather::roll),
    inductor("aten.index_select.default", gather::index_select),
    // Inductor's cat: a tensor joined with itself is an expand, no concatenation.
    inductor("aten.cat.default", cat::cat),
    // Inductor's low-memory max-pool.
    inductor("aten.max_pool2d_with_indices.default", pool::max_pool2d_with_indices),
];

/// The rule for `target` under `table`: an `Inductor` rule wins over a `Core` one there.
pub fn find(table: Table, target: &str) -> Option<&'static Rule> {
    let mut found = None;
    for r in TABLE.iter().filter(|r| r.target == target) {
        match (table, r.table) {
            (Table::Core, Table::Core | Table::CoreOnly) => return Some(r),
            (Table::Inductor, Table::Inductor) => return Some(r),
            (Table::Inductor, Table::Core) => found = found.or(Some(r)),
            (Table::Core, Table::Inductor) | (Table::Inductor, Table::CoreOnly) => {}
            (Table::CoreOnly, _) => {}
        }
    }
    found
}

/// Ops Inductor lowers or calls directly (no decomposition expected). A node whose op is
/// neither here nor in [`TABLE`] is reported as having no rule, and kept.
const PRIMITIVES: &[&str] = &[
    "aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor", "aten.div.Tensor", "aten.mul.Scalar",
    "aten.add.Scalar", "aten.div.Scalar", "aten.sub.Scalar", "aten.neg.default", "aten.exp.default",
    "aten.log.default", "aten.sqrt.default", "aten.reciprocal.default", "aten.rsqrt.default", "aten.erf.default", "aten.tanh.default",
    "aten.sigmoid.default", "aten.relu.default", "aten.abs.default", "aten.clamp_min.default",
    "aten.clamp_max.default", "aten.where.self", "aten.eq.Scalar", "aten.logical_not.default",
    "aten.any.dim", "aten.full_like.default", "aten.full.default", "aten.arange.start_step",
    "prims.iota.default", "prims.convert_element_type.default", "aten.cat.default", "aten.view.default", "aten.permute.default",
    "aten.expand.default", "aten.clone.default", "aten.alias.default", "aten.unsqueeze.default",
    "aten.squeeze.dim", "aten.slice.Tensor", "aten.select.int", "aten.split.Tensor",
    "aten.split_with_sizes.default", "aten.sym_size.int", "aten.mm.default", "aten.addmm.default",
    "aten.bmm.default", "aten.convolution.default", "aten.sum.dim_IntList", "aten.mean.dim", "aten.mean.default",
    "aten.amax.default", "aten.amin.default", "aten.var_mean.correction", "aten.var.correction",
    "aten.max_pool2d_with_indices.default", "aten.avg_pool2d.default",
    "aten.adaptive_avg_pool2d.default", "aten._scaled_dot_product_flash_attention_for_cpu.default",
    "aten._to_copy.default", "aten.to.dtype", "aten.gelu.default", "aten.hardtanh.default",
    "aten.clamp.default", "aten._softmax.default", "aten._log_softmax.default",
    "aten.native_layer_norm.default", "aten._native_batch_norm_legit_no_training.default",
    // Core ATen ops that torch 2.15 leaves in the zoo's `run_decompositions()` graphs.
    "aten._assert_tensor_metadata.default", "aten.as_strided.default", "aten.bitwise_and.Tensor",
    "aten.constant_pad_nd.default", "aten.cos.default", "aten.sin.default", "aten.embedding.default",
    "aten.fmod.Scalar", "aten.gather.default", "aten.ge.Scalar", "aten.gt.Scalar", "aten.le.Tensor",
    "aten.lt.Scalar", "aten.ne.Scalar", "aten.index.Tensor", "aten.index_select.default",
    "aten.minimum.default", "aten.pow.Tensor_Scalar", "aten.scalar_tensor.default",
    "aten.slice_scatter.default", "aten.squeeze.dims", "prims._low_memory_max_pool_with_offsets.default",
    "prims._low_memory_max_pool_offsets_to_indices.default", "aten.select_scatter.default", "aten.copy.default",
];

/// Whether `target` is an op PyTorch would decompose further (so a missing rule matters).
pub fn decomposes_in_torch(target: &str) -> bool {
    !(target.starts_with("_operator.") || PRIMITIVES.contains(&target))
}

/// Normalises a possibly negative dim against `rank`, as a rule argument error when out of range.
pub(crate) fn dim(d: i64, rank: usize, name: &str) -> Result<usize, RuleError> {
    crate::infer::norm_dim(d, rank)
        .ok_or_else(|| RuleError::Arg { name: name.to_string(), message: format!("dim {d} out of range for rank {rank}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inductor_rules_override_core_ones_and_core_ones_apply_under_inductor() {
        let core_silu = find(Table::Core, "aten.silu.default").unwrap();
        let ind_silu = find(Table::Inductor, "aten.silu.default").unwrap();
        assert_eq!(core_silu.table, Table::Core);
        assert_eq!(ind_silu.table, Table::Inductor);
        assert!(find(Table::Inductor, "aten.linear.default").is_some());
        assert!(find(Table::Core, "aten.native_layer_norm.default").is_none());
        assert!(find(Table::Core, "aten.addmm.default").is_none());
    }

    #[test]
    fn every_rule_target_is_unique_per_table() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert!(!(a.target == b.target && a.table == b.table), "{} registered twice", a.target);
            }
        }
    }
}
