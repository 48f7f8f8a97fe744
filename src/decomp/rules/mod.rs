//! The decomposition rules: one builder per op overload, registered with the op in the op
//! registry (`crate::ops`, `.core(..)` / `.inductor(..)` / `.core_only(..)`).
//!
//! A rule reads its node's arguments through [`Rw`] and emits replacement nodes; emitting an op
//! that itself has a rule in the same table applies that rule too (Inductor decomposes to a
//! fixpoint), so `layer_norm` → `native_layer_norm` → `var_mean`, `rsqrt`, ... under `full`.

pub(crate) mod activation;
pub(crate) mod arange;
pub(crate) mod attention;
mod build;
pub(crate) mod cat;
mod chunk_dyn;
pub(crate) mod combine;
pub(crate) mod diff;
pub(crate) mod distance;
pub(crate) mod einsum;
pub(crate) mod fill;
pub(crate) mod gates;
pub(crate) mod gather;
pub(crate) mod gradient;
pub(crate) mod im2col;
pub(crate) mod group_norm;
mod infer_size;
mod layout;
pub(crate) mod like_other;
pub(crate) mod linalg;
pub(crate) mod linear;
#[cfg(test)]
mod test_graph;
pub(crate) mod logical;
pub(crate) mod loss;
pub(crate) mod margin;
pub(crate) mod nll;
pub(crate) mod norm;
pub(crate) mod numeric;
pub(crate) mod pool;
pub(crate) mod products;
pub(crate) mod repeat;
pub(crate) mod search;
pub(crate) mod softmax;
pub(crate) mod spelling;
pub(crate) mod traced;
pub(crate) mod upsample;
pub(crate) mod vector_norm;
pub(crate) mod view;

pub use super::emit::{Rw, A};
use super::RuleError;
use crate::ir::ValueId;

/// Which decomposition table a pass applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    /// torch.export's core ATen decompositions (`run_decompositions()`).
    Core,
    /// Inductor's default table (`select_decomp_table()`), which includes most core rules.
    Inductor,
    /// What the lowering expands: ops with no kernel lowering, by Inductor's rule, else core's
    /// (eager PyTorch runs such an op as its composite body; Inductor decomposes it). Ops that
    /// lower directly have no rule here, so nested rules stop at the first op that has a kernel.
    Lowering,
}

/// A rule's builder: reads its node through [`Rw`], emits the replacement, returns its outputs.
pub type Build = fn(&mut Rw) -> Result<Vec<ValueId>, RuleError>;

/// The builder for `target` under `table`, from the op registry (`crate::ops`); for a composite
/// op with no rule of its own there, the graph torch traced it into ([`traced`]), under every
/// table (torch's tracing expands a composite op whatever the table) unless Inductor keeps it
/// whole, and for the lowering only when it has no kernel and is no host step.
pub fn find(table: Table, target: &str) -> Option<Build> {
    find_for(table, target, None)
}

/// [`find`] for a graph made by torch `version`: under [`Table::Core`], an op that is no
/// composite there and that this torch's export table leaves out while another torch's
/// decomposes it (`linalg_vector_norm`: kept by 2.11, `pow`/`sum`/`pow` in 2.15) has no rule,
/// neither the registry's nor a trace from the other torch's table.
pub fn find_for(table: Table, target: &str, version: Option<&str>) -> Option<Build> {
    if table == Table::Core && kept_by_core_of(target, version) {
        return None;
    }
    let def = crate::ops::get(target);
    if let Some(rule) = def.and_then(|d| d.rule(table)) {
        return Some(rule);
    }
    // The lowering runs an op with a kernel, or an eager-only one as a host step, as it is.
    let runs = |d: &crate::ops::OpDef| d.lower.is_some() || d.host_fallback() || d.host_when.is_some();
    // A composite op the interpreter already runs is still expanded as torch's tracing expands
    // it (`square` → `pow`, `expand_as` → `expand`), unless its trace calls ops nothing here
    // runs (`linalg_svd` → `_linalg_svd`): `traced::expand` declines those.
    let own = def.is_some_and(|d| d.has_rule() || (table == Table::Inductor && d.keep) || (table == Table::Lowering && runs(d)));
    (!own && traced::has(Some(table), target)).then_some(traced::expand as Build)
}

/// Whether `target` is an op PyTorch would decompose further under `table` (so a missing rule
/// matters), read off the kernel table of torch `version` where it knows the op: under `Core`, a
/// composite op or one in torch.export's default table, never a Core ATen op (`run_decompositions()`
/// keeps `gt.Tensor` and `expm1` whole, and `_assert_tensor_metadata`, which no table decomposes);
/// under `Inductor`, a composite op or one in Inductor's default table that the registry does not
/// mark as lowered whole. Python functions on symbolic ints never decompose;
/// an op the table does not know falls back to the registry's `keep`.
pub fn decomposes_in_torch(table: Table, target: &str, version: Option<&str>) -> bool {
    // Python functions on SymInts (`operator.mul`, `torch.sym_min`) are no ATen ops.
    if target.starts_with("_operator.") || target.starts_with("torch.sym_") {
        return false;
    }
    // A library's custom op (`transformers.grouped_mm_fallback`, `torchvision.nms`) is opaque to
    // both tables: torch.library.custom_op registers no composite body, so export and Inductor
    // keep it whole (and it was reported as a missing rule on 16 MoE models of the corpus).
    if !(target.starts_with("aten.") || target.starts_with("prims.")) {
        return false;
    }
    let keep = crate::ops::get(target).is_some_and(|d| d.keep);
    match crate::ops::table_for(version).and_then(|t| t.op(target)) {
        Some(f) if table == Table::Core => !f.core && (f.composite || crate::ops::composite_traces::in_core_table_of(target, version)),
        Some(f) => (f.composite || f.inductor) && !keep,
        None => !keep,
    }
}

/// Whether torch `version`'s `run_decompositions()` keeps `target` whole though some torch's
/// export table decomposes it: the op is no composite in that torch's kernel table, and its own
/// export table (`crate::ops::composite_traces`) does not list it.
fn kept_by_core_of(target: &str, version: Option<&str>) -> bool {
    let composite = crate::ops::table_for(version).and_then(|t| t.op(target)).is_some_and(|f| f.composite);
    !composite && crate::ops::composite_traces::core_table_keeps(target, version)
}

/// Whether a node of `target` that `table` has no rule for is worth reporting: under the
/// decomposition tables, when PyTorch would decompose it; under [`Table::Lowering`], when it
/// has no kernel lowering either.
pub fn wants_rule(table: Table, target: &str, version: Option<&str>) -> bool {
    match table {
        Table::Core | Table::Inductor => decomposes_in_torch(table, target, version),
        Table::Lowering => crate::ops::lowering(target).is_none(),
    }
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
    fn core_only_rules_stay_out_of_inductors_table() {
        assert!(find(Table::Core, "aten.squeeze.dim").is_some());
        assert!(find(Table::Inductor, "aten.squeeze.dim").is_none());
    }

    #[test]
    fn the_lowering_table_holds_rules_only_for_ops_without_a_kernel() {
        // `silu` lowers directly: nothing to expand, whatever the tables say.
        assert!(find(Table::Inductor, "aten.silu.default").is_some());
        assert!(find(Table::Lowering, "aten.silu.default").is_none());
        assert!(!wants_rule(Table::Lowering, "aten.silu.default", None));
        assert!(wants_rule(Table::Lowering, "aten.made_up.default", None));
        // Core-only rules count too: the lowering takes any rule there is.
        let core_only = crate::ops::all().find(|d| d.lower.is_none() && d.inductor.is_none() && d.core.is_none() && d.core_only.is_some());
        if let Some(d) = core_only {
            assert!(find(Table::Lowering, d.target).is_some(), "{}", d.target);
        }
    }

    #[test]
    fn only_what_torchs_own_table_decomposes_wants_a_rule() {
        // In neither table: kept whole by torch, so no missing rule to report.
        assert!(!wants_rule(Table::Core, "aten.expm1.default", None));
        assert!(!wants_rule(Table::Inductor, "aten.expm1.default", None));
        // Export's table has `unbind`, Inductor's does not.
        assert!(wants_rule(Table::Core, "aten.unbind.int", None));
        assert!(!wants_rule(Table::Inductor, "aten.unbind.int", None));
        // A composite op is expanded by any tracing.
        assert!(wants_rule(Table::Inductor, "aten.type_as.default", None));
    }

    /// torch 2.11's export table has no `linalg_vector_norm` (2.15's has): a 2.11 graph keeps
    /// it under core (12 corpus stages decomposed it to `pow`/`sum`/`pow`), a 2.15 one does not,
    /// and Inductor's table decomposes it in both.
    #[test]
    fn core_rules_follow_the_graphs_own_torch() {
        let n = "aten.linalg_vector_norm.default";
        assert!(find_for(Table::Core, n, Some("2.11.0+cu130")).is_none());
        assert!(!decomposes_in_torch(Table::Core, n, Some("2.11.0+cu130")));
        assert!(find_for(Table::Core, n, Some("2.15.0")).is_some());
        assert!(decomposes_in_torch(Table::Core, n, Some("2.15.0")));
        assert!(find_for(Table::Core, n, None).is_some());
        assert!(find_for(Table::Inductor, n, Some("2.11.0+cu130")).is_some());
        // Rules of ops both torches decompose stay.
        assert!(find_for(Table::Core, "aten.silu.default", Some("2.11.0")).is_some());
    }

    #[test]
    fn inductor_keeps_what_it_lowers() {
        assert!(!decomposes_in_torch(Table::Inductor, "aten.add.Tensor", None));
        assert!(!decomposes_in_torch(Table::Inductor, "_operator.add", None));
        assert!(decomposes_in_torch(Table::Inductor, "aten.silu.default", None));
    }

    /// Core ATen ops are what `run_decompositions()` decomposes into, never from: comparisons and
    /// `expm1` had no `keep` in the registry and were reported as missing a rule (corpus: Cwm's
    /// sliding-window mask `gt.Tensor`, Apertus's `expm1`).
    #[test]
    fn core_keeps_the_core_opset_by_torchs_table() {
        for t in ["aten.gt.Tensor", "aten.eq.Tensor", "aten.le.Scalar", "aten.expm1.default", "aten.add.Tensor", "aten._assert_tensor_metadata.default"] {
            assert!(!decomposes_in_torch(Table::Core, t, Some("2.15.0")), "{t}");
            assert!(!decomposes_in_torch(Table::Core, t, Some("2.11.0")), "{t}");
        }
        for t in ["aten.silu.default", "aten.detach.default", "aten.type_as.default"] {
            assert!(decomposes_in_torch(Table::Core, t, Some("2.15.0")), "{t}");
        }
        assert!(!decomposes_in_torch(Table::Inductor, "aten.gt.Tensor", Some("2.15.0")));
        for t in [Table::Core, Table::Inductor] {
            assert!(!decomposes_in_torch(t, "transformers.grouped_mm_fallback.default", None));
            assert!(!decomposes_in_torch(t, "torchvision.nms.default", None));
        }
    }
}
