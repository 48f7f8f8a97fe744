//! One entry per op target: everything the workbench's passes know about it. The interpreter,
//! the lowering, the decomposition and shape inference look ops up here and keep no lists of
//! their own (as PyTorch's `native_functions.yaml` and tinygrad's op table do); `ops
//! --markdown` writes `docs/OPS.md` from the same entries.
//!
//! Entries are written with a small builder, one line per op in the family files of
//! [`super::table`]:
//!
//! ```text
//! op("aten.silu.default").run(x::pointwise::silu).lower(K::Pointwise, l::pointwise::silu).inductor(r::activation::silu)
//! ```

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::decomp::rules::{Build, Table};
use crate::exec::ops::OpFn;
use crate::infer::MetaFn;
use crate::lower::ops::{LowerFn, OpKind};
use crate::lower::staged::StagesFn;
use crate::lower::SizesFn;

/// Everything known about one op overload (its target, without `torch.ops.`).
#[derive(Clone, Copy)]
pub struct OpDef {
    pub target: &'static str,
    /// The reference interpreter's implementation.
    pub run: Option<OpFn>,
    /// How the op fuses, and the builder of its output elements in a kernel.
    pub lower: Option<(OpKind, LowerFn)>,
    /// The symbolic output metadata, for nodes that decompositions emit.
    pub meta: Option<MetaFn>,
    /// torch.export's core decomposition (`run_decompositions()`), used by Inductor's table too
    /// unless it has its own.
    pub core: Option<Build>,
    /// A core decomposition that Inductor's table leaves out.
    pub core_only: Option<Build>,
    /// Inductor's own decomposition (`select_decomp_table()`), where it differs from core's.
    pub inductor: Option<Build>,
    /// Inductor lowers or calls it directly: a node of it needs no decomposition.
    pub keep: bool,
    /// Inductor never lowers it to a kernel but calls ATen's (LAPACK-backed) implementation as
    /// an eager fallback: the interpreter is the reference, and no kernel lowering is expected.
    /// Without a lowering, a plan runs it as a host step through the interpreter.
    pub eager: bool,
    /// For an op whose kernel covers some argument values only: the nodes for which this holds
    /// run as host steps through the interpreter, as Inductor falls back to ATen for them
    /// (`linalg_matrix_norm` with 'nuc' needs singular values; 'fro' has a kernel).
    pub host_when: Option<HostWhen>,
    /// Its output sizes depend on data (unbacked symbols): the size kernel a plan's sync step
    /// runs to compute them before the outputs' kernels (`lower::sizes`).
    pub sizes: Option<SizesFn>,
    /// Kernels its lowering runs before the output kernel, with scratch buffers between them
    /// (`lower::staged`): a sort's merge passes.
    pub stages: Option<StagesFn>,
    /// Whether it draws from the generator (`super::rng`): a node that draws owns a Philox
    /// stream, and its values are compared by rule (support, distribution), never by value.
    pub random: Random,
    /// The interpreter's implementation for nodes that read a complex value
    /// (`exec::ops::complex`); without one, such a node is refused by dtype.
    pub complex: Option<OpFn>,
}

/// Whether one node of an op with a partial kernel runs on the host (see [`OpDef::host_when`]).
pub type HostWhen = fn(&crate::ir::Graph, &crate::ir::Node) -> bool;

/// When an op draws random numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Random {
    Never,
    Always,
    /// When its bool argument `arg` is true; `default` where the node leaves it out or `None`
    /// (`rrelu`'s `training` defaults to false, `native_dropout`'s `train: bool?` to true).
    When { arg: &'static str, default: bool },
}

/// Starts an entry for `target`.
pub const fn op(target: &'static str) -> OpDef {
    OpDef { target, run: None, lower: None, meta: None, core: None, core_only: None, inductor: None, keep: false, eager: false, host_when: None, sizes: None, stages: None, random: Random::Never, complex: None }
}

impl OpDef {
    pub const fn run(mut self, f: OpFn) -> Self {
        self.run = Some(f);
        self
    }

    /// How the interpreter runs it on complex operands.
    pub const fn complex(mut self, f: OpFn) -> Self {
        self.complex = Some(f);
        self
    }

    pub const fn lower(mut self, kind: OpKind, f: LowerFn) -> Self {
        self.lower = Some((kind, f));
        self
    }

    pub const fn meta(mut self, f: MetaFn) -> Self {
        self.meta = Some(f);
        self
    }

    pub const fn core(mut self, f: Build) -> Self {
        self.core = Some(f);
        self
    }

    pub const fn core_only(mut self, f: Build) -> Self {
        self.core_only = Some(f);
        self
    }

    pub const fn inductor(mut self, f: Build) -> Self {
        self.inductor = Some(f);
        self
    }

    pub const fn keep(mut self) -> Self {
        self.keep = true;
        self
    }

    pub const fn eager(mut self) -> Self {
        self.eager = true;
        self
    }

    /// Eager for the nodes `f` picks (and only those): they run as host steps.
    pub const fn eager_when(mut self, f: HostWhen) -> Self {
        self.host_when = Some(f);
        self
    }

    pub const fn staged(mut self, f: StagesFn) -> Self {
        self.stages = Some(f);
        self
    }

    pub const fn random(mut self) -> Self {
        self.random = Random::Always;
        self
    }

    /// Random when bool argument `arg` is true (`default` when the node leaves it out).
    pub const fn random_if(mut self, arg: &'static str, default: bool) -> Self {
        self.random = Random::When { arg, default };
        self
    }

    pub const fn sizes(mut self, f: SizesFn) -> Self {
        self.sizes = Some(f);
        self
    }

    /// A plan runs it as a host step: an eager-only op with an interpreter implementation and no
    /// kernel lowering (never any other op without a kernel).
    pub fn host_fallback(&self) -> bool {
        self.eager && self.lower.is_none() && self.run.is_some()
    }

    /// The decomposition rule that applies under `table`: Inductor's own rule wins there, and
    /// core rules apply under both tables except the core-only ones. The lowering's table takes
    /// Inductor's rule, else core's, and only for ops without a kernel lowering.
    pub fn rule(&self, table: Table) -> Option<Build> {
        match table {
            Table::Core => self.core.or(self.core_only),
            Table::Inductor => self.inductor.or(self.core),
            Table::Lowering if self.lower.is_some() => None,
            Table::Lowering => self.inductor.or(self.core).or(self.core_only),
        }
    }

    /// Whether any decomposition table has a rule for it.
    pub fn has_rule(&self) -> bool {
        self.core.is_some() || self.core_only.is_some() || self.inductor.is_some()
    }
}

/// The entry of `target`, if the registry has one.
pub fn get(target: &str) -> Option<&'static OpDef> {
    static MAP: OnceLock<HashMap<&'static str, &'static OpDef>> = OnceLock::new();
    MAP.get_or_init(|| all().map(|d| (d.target, d)).collect()).get(target).copied()
}

/// The interpreter's implementation of `target`.
pub fn run_fn(target: &str) -> Option<OpFn> {
    get(target).and_then(|d| d.run)
}

/// The interpreter's implementation of `target` for nodes that read a complex value.
pub fn complex_fn(target: &str) -> Option<OpFn> {
    get(target).and_then(|d| d.complex)
}

/// The fusion kind and lowering of `target`, if this build lowers it.
pub fn lowering(target: &str) -> Option<(OpKind, LowerFn)> {
    get(target).and_then(|d| d.lower)
}

/// The staged kernels of `target`'s lowering ([`OpDef::stages`]), if it has any.
pub fn stages(target: &str) -> Option<StagesFn> {
    get(target).and_then(|d| d.stages)
}

/// Whether a plan runs `target` as a host step ([`OpDef::host_fallback`]).
pub fn host_fallback(target: &str) -> bool {
    get(target).is_some_and(OpDef::host_fallback)
}

/// Whether this node of its op runs as a host step: the op is eager-only, or its kernel does not
/// cover this node's arguments ([`OpDef::host_when`]).
pub fn node_on_host(graph: &crate::ir::Graph, node: &crate::ir::Node) -> bool {
    get(&node.target).is_some_and(|d| d.host_fallback() || d.run.is_some() && d.host_when.is_some_and(|f| f(graph, node)))
}

/// Every entry, family by family.
pub fn all() -> impl Iterator<Item = &'static OpDef> {
    super::table::FAMILIES.iter().flat_map(|f| f.iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_is_registered_once_and_namespaced() {
        let mut seen = std::collections::HashSet::new();
        for d in all() {
            assert!(seen.insert(d.target), "{} registered twice", d.target);
            // `torch.sym_*` and `math.ceil` are Python functions on SymInts, which export records by module path;
            // custom ops of libraries exported graphs call (`transformers.grouped_mm_fallback`)
            // keep their namespace.
            let namespaced = ["aten.", "prims.", "_operator.", "math.", "torch_nn.", "torch.sym_", "transformers."].iter().any(|p| d.target.starts_with(p));
            assert!(namespaced, "{}: targets are written without `torch.ops.`", d.target);
        }
    }

    #[test]
    fn every_entry_says_something() {
        for d in all() {
            let any = d.run.is_some() || d.lower.is_some() || d.meta.is_some() || d.has_rule() || d.keep || d.eager || d.sizes.is_some();
            assert!(any, "{} is registered with nothing", d.target);
        }
    }

    #[test]
    fn inductor_rules_override_core_ones_and_core_ones_apply_under_inductor() {
        let silu = get("aten.silu.default").unwrap();
        assert!(silu.core.is_some() && silu.inductor.is_some());
        assert!(get("aten.linear.default").unwrap().rule(Table::Inductor).is_some());
        assert!(get("aten.native_layer_norm.default").unwrap().rule(Table::Core).is_none());
        assert!(get("aten.addmm.default").unwrap().rule(Table::Core).is_none());
    }
}
