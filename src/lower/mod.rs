//! Lowering: a decomposed graph becomes a [`Plan`] of steps, each a kernel or a metadata-only
//! node, in graph order.
//!
//! - `none`: every compute node is a single-op fallback kernel (eager ATen).
//! - `lite`: nodes the user kept run as fallback kernels; the products of marked nodes are
//!   fused as in full mode.
//! - `full`: Inductor-style fusion: pointwise chains and small row reductions are inlined into
//!   their consumers, so each kernel is one reduction, norm or softmax with its pointwise
//!   producers folded in, a matrix product with its pointwise epilogue, a convolution, attention
//!   or pooling reading its operands from memory (as Inductor realizes the inputs of extern and
//!   template kernels: they read each element many times), or one pointwise group ending at a
//!   graph output or a heavy kernel's operand.
//!
//! Views never get kernels: consumers read through them. Kernels take symbolic sizes as i64
//! arguments, so one compiled plan serves every binding that passes the plan's guards.
//!
//! Two kinds of step need the host between launches: a node whose output sizes depend on data
//! gets a [`Step::Sync`] (its size kernel runs, the runner reads the sizes back and binds the
//! unbacked symbols, `sizes`), and an op Inductor only ever runs eagerly (`.eager()` in the
//! registry: LAPACK-backed linear algebra) with no kernel lowering runs as a [`Step::Host`]
//! through the interpreter. So does every node that reads or produces a complex tensor
//! ([`runs_on_host`]): generated kernels store real dtypes only, and Inductor likewise leaves
//! complex ops to eager ATen. Complex values stay on the host between such steps; a complex
//! graph output is refused. Nothing else falls back to the host: any other op without a kernel
//! lowering fails to lower.
//!
//! A node whose op has no kernel lowering but a decomposition rule is expanded first and its
//! products lowered ([`expand`]), in every mode; the plan attributes their kernels to it.

mod ctx;
pub mod coverage;
pub mod depthwise;
mod expand;
mod fold_operands;
mod fusion;
pub mod gemm;
pub mod kernel;
pub mod ops;
mod plan;
pub mod recompute;
mod reduction_budget;
pub mod rng;
pub mod schedule;
mod strided_rows;
pub mod tiny_map;
mod sizes;
pub mod staged;
pub mod wide_block;

use std::collections::{BTreeSet, HashSet};

pub use sizes::{bare_symbol, defined_symbols, Size, SizesFn, SyncValue};

use crate::decomp::{self, DecompError, Decomposition, Marks, Mode};
use crate::ir::{Arg, DType, Graph, Model, NodeId, TensorMeta, ValueId, ValueKind};
use ctx::Ctx;
use kernel::{Access, KernelBuilder, KernelError, Store, VarId};
pub use expand::{Expanded, EXPANDED_NOTE};
pub use kernel::Kernel;
pub use ops::OpKind;
pub use plan::{Plan, Step};
use fusion::{fuse_conv_epilogues, fuse_matmul_epilogues, realize_heavy_operands, Fusion};

/// Why a graph could not be lowered; names the node.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LowerError {
    #[error(transparent)]
    Decomp(#[from] DecompError),
    #[error("node `{node}`: no kernel lowering for `{target}`")]
    NoLowering { node: String, target: String },
    /// It has a decomposition, but expanding it did not give ops that all lower.
    #[error("node `{node}`: no kernel lowering for `{target}`, and {why}")]
    NotExpanded { node: String, target: String, why: String },
    #[error("no kernel lowering for {} ops the graph needs: {}", .0.len(), crate::exec::coverage::describe(.0))]
    NoLowerings(Vec<crate::exec::coverage::MissingOp>),
    #[error("node `{node}` ({target}): {message}")]
    Unsupported { node: String, target: String, message: String },
    #[error("value `{value}` has dtype {dtype}; generated kernels store float32/16, bfloat16, integers and bool, not {dtype}")]
    DType { value: String, dtype: String },
    #[error("kernel expression: {0}")]
    Expr(#[from] KernelError),
    #[error("internal lowering error: {0}")]
    Internal(String),
    /// A pass produced a kernel that breaks the IR's invariants (checked in debug builds and tests).
    #[error("after {pass}: {source}")]
    Invalid { pass: &'static str, source: kernel::InvalidKernel },
    #[error("lowering node `{node}` ({target}): {source}")]
    At { node: String, target: String, source: Box<LowerError> },
}

/// Decomposes `graph` with `mode` and lowers the result.
pub fn lower(model: &Model, graph: &Graph, mode: Mode, marks: &Marks) -> Result<Plan, LowerError> {
    let d = decomp::decompose(graph, mode, marks)?;
    lower_decomposed(model, &d)
}

/// Whether `node` runs as a [`Step::Host`] through the interpreter: an eager-only op
/// (`.eager()` in the registry, with no kernel lowering), a node whose arguments its op's kernel
/// does not cover (`.eager_when(..)`), or any node that reads or produces a complex tensor,
/// which kernels cannot store (Inductor falls back to eager ATen for those).
pub fn runs_on_host(graph: &Graph, node: &crate::ir::Node) -> bool {
    crate::ops::node_on_host(graph, node) || node.inputs().chain(node.outputs.iter().copied()).any(|v| is_complex(graph, v))
}

fn is_complex(graph: &Graph, v: ValueId) -> bool {
    graph.value(v).tensor().is_some_and(|t| t.dtype.is_complex())
}

/// Whether each node of the decomposed graph runs as an eager fallback.
fn fallbacks(d: &Decomposition) -> Vec<bool> {
    let kept: HashSet<NodeId> = d.kept.iter().chain(&d.no_rule).copied().collect();
    (0..d.graph.nodes.len())
        .map(|i| match d.mode {
            Mode::None => true,
            Mode::Lite => d.provenance.origin.get(i).is_some_and(|o| kept.contains(o)),
            Mode::Core | Mode::Full => false,
        })
        .collect()
}

fn kind_of(graph: &Graph, n: NodeId) -> Result<OpKind, LowerError> {
    let node = graph.node(n);
    crate::ops::lowering(&node.target)
        .map(|(k, _)| k)
        .ok_or_else(|| LowerError::NoLowering { node: node.name.clone(), target: node.target.clone() })
}

/// The value a view chain starting at `v` reads from.
fn through_views(graph: &Graph, mut v: ValueId) -> ValueId {
    while let Some(p) = graph.value(v).producer {
        let node = graph.node(p);
        match crate::ops::lowering(&node.target) {
            Some((OpKind::View, _)) => match node.args.iter().find_map(|a| a.arg.as_tensor()) {
                Some(src) => v = src,
                None => break,
            },
            _ => break,
        }
    }
    v
}

/// Lowers an already decomposed graph.
///
/// Mode `none` shows the graph as exported; what runs is its functionalized form (in-place
/// writes made functional, as Inductor does before anything else).
pub fn lower_decomposed(model: &Model, d: &Decomposition) -> Result<Plan, LowerError> {
    // Inlining a producer into its consumer recurses once per fused value (`Ctx::read`), so a
    // long chain of pointwise nodes (the 12,000-node sample fuses into one kernel) needs a far
    // deeper stack than a spawned thread's 2 MiB or a debug build's 8 MiB main thread: the
    // lowering runs on a thread of its own, whoever calls it. Only touched pages cost memory.
    const LOWER_STACK: usize = 256 << 20;
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new().name("lower".into()).stack_size(LOWER_STACK).spawn_scoped(s, || lower_here(model, d));
        match spawned {
            Ok(handle) => handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: lower here, as deep as this stack allows.
            Err(_) => lower_here(model, d),
        }
    })
}

fn lower_here(model: &Model, d: &Decomposition) -> Result<Plan, LowerError> {
    puffin::profile_scope!("lower");
    let functional;
    let d = if d.mode == Mode::None && decomp::functionalize::mutates(&d.graph) {
        functional = decomp::functionalize(&d.graph)?;
        &functional
    } else {
        d
    };
    let lowerable = expand::expand(d)?;
    let graph = &lowerable.ex.graph;
    let fallback = &lowerable.fallback;
    let mut missing = coverage::missing_after_expansion(&d.graph, &lowerable.ex, |n| n);
    if missing.len() > 1 || missing.first().is_some_and(|m| m.nodes.len() > 1) {
        return Err(LowerError::NoLowerings(missing));
    }
    if let Some(m) = missing.pop() {
        let (node, target) = (m.nodes[0].clone(), m.target);
        return Err(match m.why.is_empty() {
            true => LowerError::NoLowering { node, target },
            false => LowerError::NotExpanded { node, target, why: m.why.join("; ") },
        });
    }
    if let Some(v) = graph.outputs.iter().filter_map(Arg::as_tensor).find(|v| is_complex(graph, *v)) {
        let value = graph.value(v);
        return Err(LowerError::DType { value: value.name.clone(), dtype: value.tensor().map_or("?", |t| t.dtype.name()).into() });
    }
    let host: Vec<bool> = graph.nodes.iter().map(|n| runs_on_host(graph, n)).collect();
    // A host step reads its inputs from memory and writes its outputs there: for fusion it is
    // a heavy kernel (never inlined, its operands realized).
    let kinds = graph.node_ids().map(|n| if host[n.index()] { Ok(OpKind::Heavy) } else { kind_of(graph, n) }).collect::<Result<Vec<_>, _>>()?;
    let defined = sizes::defined_symbols(graph);
    let users = graph.users();
    let outputs: HashSet<ValueId> = graph.outputs.iter().filter_map(Arg::as_tensor).collect();
    let needed = |v: ValueId| outputs.contains(&v) || !users[v.index()].is_empty();

    // What fused kernels may compute inline: pointwise ops, and reductions over a small static
    // row (a norm's or softmax's statistics: the consumer's kernel gets the row schedule, which
    // computes them once per row, as Inductor's persistent reductions keep the row on chip);
    // matrix products only into their pointwise epilogue; nothing into a heavy kernel.
    let mut inlinable: HashSet<NodeId> = graph
        .node_ids()
        .filter(|n| {
            !fallback[n.index()]
                && defined[n.index()].is_empty()
                && match kinds[n.index()] {
                    OpKind::Pointwise => true,
                    OpKind::Reduction => reduction_size(graph, *n).is_some_and(|s| s <= MAX_INLINE_REDUCTION),
                    _ => false,
                }
        })
        .collect();
    // A size kernel reads its node's operands from memory, as heavy kernels do.
    let reads_memory: Vec<bool> = (0..graph.nodes.len()).map(|i| kinds[i] == OpKind::Heavy || !defined[i].is_empty()).collect();
    realize_heavy_operands(graph, &reads_memory, fallback, &mut inlinable);
    let fusion = Fusion { graph, kinds: &kinds, fallback, users: &users, outputs: &outputs };
    fuse_matmul_epilogues(&fusion, &mut inlinable);
    fuse_conv_epilogues(&fusion, &mut inlinable);
    let hints: std::collections::HashMap<String, i64> = model.symbols.iter().filter_map(|s| Some((s.name.clone(), s.hint?))).collect();
    fold_operands::realize_broadcast_fold_operands(graph, &kinds, fallback, &fold_operands::Hints(&hints), &mut inlinable);
    expand::keep_within_domains(graph, &kinds, &lowerable.domain, &mut inlinable);
    let mut budget = reduction_budget::MAX_INLINED_REDUCTIONS;
    reduction_budget::bound_inlined_reductions(graph, &kinds, &mut inlinable, budget);
    // A matrix product computed inside a kernel that does not compute it once per output (the
    // tiled schedule, or a small product on columns: `schedule::product_once`) is a serial dot
    // product per read: per output element, twice where the epilogue reads it at
    // two places (a rotary embedding's `rotate_half`), once per statistics pass and again per
    // output where a norm follows it. Such products get their own (tiled) kernel instead, and
    // the plan is built again without them inlined. So are reductions whose fused statistics
    // the kernel would fold again per output (`recompute`).
    let nodes = NodeKinds { kinds: &kinds, fallback, host: &host, defined: &defined, expansion: &lowerable.expansion, expanded: &lowerable.expanded };
    let (steps, plan_graph) = loop {
        let (steps, plan_graph, untiled) = match build_steps(graph, &nodes, &inlinable, &needed) {
            // The budget counts reductions, a kernel's loops are reductions times the index
            // patterns they are read at (`reduction_budget`): a kernel that still ran out of
            // loops gets the plan built again under half the budget.
            Err(e) if budget > 1 && reduction_budget::out_of_loops(&e) => {
                budget /= 2;
                reduction_budget::bound_inlined_reductions(graph, &kinds, &mut inlinable, budget);
                continue;
            }
            r => r?,
        };
        if untiled.is_empty() {
            break (steps, plan_graph);
        }
        for n in untiled {
            inlinable.remove(&n);
        }
    };
    let mut guards: Vec<String> = model.symbols.iter().map(|s| format!("{} in {}", s.name, s.range)).collect();
    guards.extend(model.guards.iter().map(|g| g.source.clone()));
    let expand::Lowerable { expanded, expansion, .. } = lowerable;
    Ok(Plan { mode: d.mode, graph: plan_graph, steps, guards, expanded, expansion })
}

/// What lowering decided per node before building kernels: its kind, whether it runs as an
/// eager fallback or on the host, and the symbols its size kernel defines.
struct NodeKinds<'a> {
    kinds: &'a [OpKind],
    fallback: &'a [bool],
    host: &'a [bool],
    defined: &'a [Vec<String>],
    /// Per node: its entry in `expanded` if it is a product of an expansion.
    expansion: &'a [Option<usize>],
    expanded: &'a [Expanded],
}

/// The steps of a plan (and its graph, with the size kernels' outputs) with `inlinable`
/// producers computed inside their consumers' kernels, and the matrix products that were
/// inlined into a kernel without the tiled schedule and the reductions inlined where their
/// statistics are folded more than once (`recompute`).
fn build_steps(
    graph: &Graph,
    nodes: &NodeKinds,
    inlinable: &HashSet<NodeId>,
    needed: &dyn Fn(ValueId) -> bool,
) -> Result<(Vec<Step>, Graph, Vec<NodeId>), LowerError> {
    let NodeKinds { kinds, fallback, host, defined, expansion, expanded } = *nodes;
    let outputs: HashSet<ValueId> = graph.outputs.iter().filter_map(Arg::as_tensor).collect();
    let mut materialized: HashSet<ValueId> = graph.inputs.iter().map(|(v, _)| *v).collect();
    for (i, node) in graph.nodes.iter().enumerate() {
        let kind = kinds[i];
        let own_kernel = match kind {
            OpKind::Meta | OpKind::View => false,
            OpKind::Pointwise | OpKind::Reduction | OpKind::Heavy => !inlinable.contains(&NodeId(i as u32)),
        };
        for &o in &node.outputs {
            if graph.value(o).tensor().is_some() && needed(o) && (own_kernel || outputs.contains(&o)) {
                materialized.insert(o);
            }
        }
        // Eager kernels and size kernels read their inputs from memory: fused producers feeding
        // them must be written out.
        let eager = fallback[i] && matches!(kind, OpKind::Pointwise | OpKind::Reduction | OpKind::Heavy);
        if eager || !defined[i].is_empty() {
            for v in node.inputs() {
                if graph.value(v).tensor().is_some() {
                    materialized.insert(through_views(graph, v));
                }
            }
        }
        // The host reads whole tensors back: a view it takes gets a copy kernel.
        if host[i] {
            materialized.extend(node.inputs().filter(|v| graph.value(*v).tensor().is_some()));
        }
    }

    let mut plan_graph = graph.clone();
    let mut steps = Vec::new();
    let mut untiled = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let id = NodeId(i as u32);
        // A product of an expansion is the user's node to the user: its errors say so.
        let expanded_from = expansion[i].map(|x| &expanded[x]);
        let at = |e: LowerError| match (e, expanded_from) {
            (e, Some(x)) => LowerError::At { node: x.node.clone(), target: format!("{}, {EXPANDED_NOTE}", x.target), source: Box::new(e) },
            (e @ (LowerError::Unsupported { .. } | LowerError::NoLowering { .. } | LowerError::NoLowerings(_)), None) => e,
            (e, None) => LowerError::At { node: node.name.clone(), target: node.target.clone(), source: Box::new(e) },
        };
        if host[i] {
            steps.push(Step::Host { node: id });
            continue;
        }
        if !defined[i].is_empty() {
            let out = fresh_name(&plan_graph, &format!("{}_sizes", node.name));
            let (kernel, values) = sizes::sync_kernel(graph, id, &materialized, &defined[i], &out).map_err(at)?;
            let kernel = checked(kernel, "the size kernel").map_err(at)?;
            let meta = TensorMeta {
                dtype: DType::I64,
                sizes: vec![crate::sym::Expr::int(values.len() as i64)],
                strides: vec![crate::sym::Expr::int(1)],
                storage_offset: crate::sym::Expr::int(0),
                device: String::new(),
                requires_grad: false,
            };
            plan_graph.add_free_value(&out, ValueKind::Tensor(meta)).map_err(|e| LowerError::Internal(e.to_string()))?;
            steps.push(Step::Sync { node: id, kernel, values });
        }
        let outs: Vec<usize> = (0..node.outputs.len()).filter(|k| materialized.contains(&node.outputs[*k])).collect();
        if outs.is_empty() {
            steps.push(Step::Meta { node: id });
            continue;
        }
        let is_fallback = fallback[i];
        let fuse = if fallback[i] { None } else { Some(inlinable) };
        let mut staged_reads = Vec::new();
        if let Some(stages) = crate::ops::stages(&node.target) {
            let prefix = if is_fallback { "fallback" } else { "fused" };
            let stager = staged::Stager { graph, plan_graph: &plan_graph, materialized: &materialized, fuse, prefix };
            if let Some(st) = stages(&stager, node).map_err(at)? {
                for (name, meta) in st.scratch {
                    plan_graph.add_free_value(&name, ValueKind::Tensor(meta)).map_err(|e| LowerError::Internal(e.to_string()))?;
                }
                for (kernel, inlined) in st.kernels {
                    let kernel = checked(schedule::finish(kernel), "a staged kernel's schedule").map_err(at)?;
                    let mut nodes: Vec<NodeId> = inlined.into_iter().collect();
                    nodes.push(id);
                    steps.push(if is_fallback { Step::Fallback { node: id, kernel } } else { Step::Fused { nodes, kernel } });
                }
                staged_reads = st.reads;
            }
        }
        // One kernel per output shape: `_fused_rms_norm`'s `rstd` has the rows' shape, not the input's.
        for (g, group) in groups_by_shape(graph, node, &outs).into_iter().enumerate() {
            let (mut kernel, inlined) = build_kernel(graph, id, &group, &materialized, fuse, is_fallback, &staged_reads).map_err(at)?;
            if g > 0 {
                kernel.name = format!("{}_out{}", kernel.name, group[0]);
            }
            if !schedule::product_once(&kernel) {
                untiled.extend(inlined.iter().copied().filter(|n| MATMULS.contains(&graph.node(*n).target.as_str())));
            }
            // A fused statistic that work-items fold again and again (a channel norm's over `C`
            // per output channel, a token mean's norm per output column) is folded once in a
            // kernel of its own and read back from memory instead.
            if !recompute::recomputed(&kernel).is_empty() {
                untiled.extend(inlined.iter().copied().filter(|n| kinds[n.index()] == OpKind::Reduction));
            }
            let mut nodes: Vec<NodeId> = inlined.into_iter().collect();
            nodes.push(id);
            let kernel = gemm::pack_weights(graph, ops::grouped_columns::columns(graph, kernel));
            // A convolution on a tiny map takes its channels across the work-items, finished.
            let kernels = match tiny_map::spread(graph, &kernel) {
                Some(spread) => vec![checked(spread, "tiny_map::spread").map_err(at)?],
                None => split_reduction(&mut plan_graph, kernel)?,
            };
            for kernel in kernels {
                steps.push(if is_fallback { Step::Fallback { node: id, kernel } } else { Step::Fused { nodes: nodes.clone(), kernel } });
            }
        }
    }
    Ok((steps, plan_graph, untiled))
}

/// The materialized outputs `outs` of `node`, grouped by symbolic shape in output order.
fn groups_by_shape(graph: &Graph, node: &crate::ir::Node, outs: &[usize]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(Option<Vec<crate::sym::Expr>>, Vec<usize>)> = Vec::new();
    for &k in outs {
        let sizes = graph.value(node.outputs[k]).tensor().map(|t| t.sizes.clone());
        match groups.iter_mut().find(|(s, _)| *s == sizes) {
            Some((_, g)) => g.push(k),
            None => groups.push((sizes, vec![k])),
        }
    }
    groups.into_iter().map(|(_, g)| g).collect()
}

/// Largest static reduction (elements per output) a fused kernel computes inline.
pub const MAX_INLINE_REDUCTION: i64 = 1024;

/// Roots that get the tiled matrix-product schedule when their kernel has the shape for it.
const MATMULS: &[&str] = &["aten.mm.default", "aten.bmm.default", "aten.addmm.default", "aten.linear.default"];

/// Elements folded into each output of reduction node `n`, when static.
fn reduction_size(graph: &Graph, n: NodeId) -> Option<i64> {
    let node = graph.node(n);
    let input = node.args.iter().find_map(|a| a.arg.as_tensor())?;
    let sizes = &graph.value(input).tensor()?.sizes;
    let dims: Vec<i64> = match node.arg("dim") {
        Some(Arg::Ints(d)) => d.clone(),
        Some(Arg::Int(d)) => vec![*d],
        None | Some(Arg::None) => vec![],
        _ => return None,
    };
    let dims = ctx::wrap_dims(&dims, sizes.len()).ok()?;
    // A 0-dim input takes dim 0 or -1 (`wrap_dims`) and folds its one element: no size to read.
    dims.iter().filter(|d| **d < sizes.len()).try_fold(1i64, |acc, d| sizes[*d].as_int().and_then(|s| acc.checked_mul(s)))
}

/// `kernel` (its schedule chosen) [`schedule::finish`]ed, or the two kernels of its split
/// reduction (`kernel::split`: few long rows folded by many work-groups), their scratch
/// buffers declared in `graph` as float32 values. The split looks at the output coordinates
/// before `finish` rewrites them.
fn split_reduction(graph: &mut Graph, kernel: Kernel) -> Result<Vec<Kernel>, LowerError> {
    let Some(split) = kernel::split::split(&kernel, |i| fresh_name(graph, &format!("{}_partials{i}", kernel.name))) else {
        return Ok(vec![checked(schedule::finish(kernel), "schedule::finish")?]);
    };
    for (name, sizes) in split.scratch {
        let meta = TensorMeta::contiguous(DType::F32, sizes);
        graph.add_free_value(&name, ValueKind::Tensor(meta)).map_err(|e| LowerError::Internal(e.to_string()))?;
    }
    Ok(vec![checked(split.partials, "the reduction split")?, checked(split.finish, "the reduction split")?])
}

/// `kernel`, checked after `pass` in debug builds and tests ([`Kernel::validate`]): a pass that
/// breaks the IR fails right after it, by name. Release builds trust the passes.
fn checked(kernel: Kernel, pass: &'static str) -> Result<Kernel, LowerError> {
    #[cfg(debug_assertions)]
    kernel.validate().map_err(|source| LowerError::Invalid { pass, source })?;
    #[cfg(not(debug_assertions))]
    let _ = pass;
    Ok(kernel)
}

/// `base`, or `base_1`, `base_2`, … : the first name no value of `graph` has.
fn fresh_name(graph: &Graph, base: &str) -> String {
    let mut name = base.to_string();
    let mut k = 0;
    while graph.value_id(&name).is_some() {
        k += 1;
        name = format!("{base}_{k}");
    }
    name
}

/// Entry-point names must be identifiers; node names nearly always are already.
fn ident(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

fn build_kernel(
    graph: &Graph,
    root: NodeId,
    outs: &[usize],
    materialized: &HashSet<ValueId>,
    fuse: Option<&HashSet<NodeId>>,
    is_fallback: bool,
    staged: &[String],
) -> Result<(Kernel, BTreeSet<NodeId>), LowerError> {
    let node = graph.node(root);
    let first = node.outputs[outs[0]];
    let sizes = graph.value(first).tensor().ok_or_else(|| LowerError::Internal("kernel output is not a tensor".into()))?.sizes.clone();
    for &k in &outs[1..] {
        let other = &graph.value(node.outputs[k]).tensor().map(|t| t.sizes.clone()).unwrap_or_default();
        if *other != sizes {
            return Err(LowerError::Unsupported {
                node: node.name.clone(),
                target: node.target.clone(),
                message: "outputs of different shapes in one kernel".into(),
            });
        }
    }
    let mut cx = Ctx { graph, kb: KernelBuilder::new(sizes.len()), materialized, fuse, inlined: BTreeSet::new(), node: Some(node), mask: None, reads: Default::default(), staged: staged.to_vec() };
    let coords: Vec<_> = (0..sizes.len()).map(|i| cx.kb.var(VarId(i as u32))).collect();
    let domain: Vec<_> = sizes.iter().map(|s| cx.kb.size(s)).collect();
    cx.kb.set_coord_extents(&domain);
    let (_, lower) = crate::ops::lowering(&node.target).ok_or_else(|| LowerError::NoLowering { node: node.name.clone(), target: node.target.clone() })?;
    let mut stores = Vec::new();
    for &k in outs {
        let value = lower(&mut cx, node, k, &coords)?;
        let out = graph.value(node.outputs[k]);
        let dtype = out.tensor().map(|t| t.dtype);
        let Some(elem) = dtype.and_then(kernel::Elem::from_dtype) else {
            return Err(LowerError::DType { value: out.name.clone(), dtype: dtype.map_or("?", |d| d.name()).into() });
        };
        let value = cx.kb.cast(value, elem.ty());
        let buf = cx.kb.buffer_of(&out.name, Access::Write, elem);
        stores.push(Store { buf, value });
    }
    let prefix = if is_fallback { "fallback" } else { "fused" };
    let name = format!("{prefix}_{}", ident(&node.name));
    let inlined = std::mem::take(&mut cx.inlined);
    let kernel = cx.kb.finish(name, sizes, domain, stores);
    // The tiled schedule stages float32 operands in local memory: f64 kernels, integer
    // reductions and products keep their dot products serial (the row schedule checks its own).
    let f32_only = !kernel.types.contains(&kernel::Ty::F64)
        && !kernel.exprs.iter().zip(&kernel.types).any(|(e, t)| {
            matches!(e, kernel::KExpr::Reduce { op, .. } if *t != kernel::Ty::F32 || *op == kernel::RedOp::Prod)
        });
    let matmul = f32_only
        && std::iter::once(root).chain(inlined.iter().copied()).any(|n| MATMULS.contains(&graph.node(n).target.as_str()));
    let mut kernel = checked(kernel, "building the kernel")?;
    kernel.schedule = schedule::choose(&kernel, matmul);
    Ok((checked(kernel, "schedule::choose")?, inlined))
}
