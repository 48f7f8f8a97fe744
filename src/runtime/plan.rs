//! Running a lowered [`Plan`]: on a kernel-running [`Device`] (build every module, upload inputs
//! and weights, launch each kernel with its sizes evaluated under the bindings, read outputs and
//! device timestamps), or on the reference interpreter (the `reference` device). Sync and host
//! steps stop the queue in between (`super::host`): the bindings grow by the unbacked symbols
//! the device computes, and every later launch is sized by them.

use std::collections::HashMap;
use std::time::Instant;

use serde::Serialize;

use super::host::{self, RunScalars};
pub use super::phases::HostPhases;
use super::pool::BufferPool;
use super::upload::{stored, upload_pooled, with_kernel};
pub use super::resident::Resident;
pub use super::launch_shape::{launch_grid, launch_shape, launch_shape_with, rng_args, size_args, Grid, LaunchCache, LaunchShape};
use super::{BufferId, Device, EventId, KernelArg, ProgramId, RuntimeError};
use crate::codegen::spirv::{self, CodegenError, SpirvModule};
use crate::exec::complex::ComplexTensor;
use crate::exec::{self, ExecError, Generator, RtValue, Tensor};
use crate::ir::{Arg, DType, Graph, InputKind, Model, SymIntArg, ValueId, WeightData};
use crate::lower::{Plan, Step};
use crate::sym::{Bindings, SymError};

/// Work-group size of elementwise launches; kernels bounds-check the rounded-up grid. The
/// work-group schedules carry their own sizes. 256 rather than 64: on the OpenCL CPU device
/// each group is a task whose start-up 64 work-items (4 vectors of 16) did not pay for, so a
/// copy ran 1.2–1.8× and the bench's GELU kernel 1.25× faster at 8 MB (docs/PERFORMANCE.md);
/// 256 is within every Intel GPU's work-group limit.
pub const WORK_GROUP: usize = 256;

/// What one step cost.
#[derive(Clone, Debug, Serialize)]
pub struct StepRun {
    /// `fallback`, `fused`, `sync` (a size kernel, then the host waits and reads the sizes back)
    /// or `host` (a host fallback through the interpreter: no kernel).
    pub kind: &'static str,
    /// The kernel's entry point; a host step's node.
    pub name: String,
    pub nodes: Vec<String>,
    /// The kernel's time on the device; 0 for a host step.
    pub device_ns: u64,
    /// Time on the host: a host step's read-back, interpreter run and hand-over, a sync step's
    /// wait for the queue and read-back; 0 for a kernel.
    pub host_ns: u64,
    /// When the step started on the host clock ([`puffin::now_ns`]): on the reference
    /// interpreter, whose host time stands in for device time, and for host and sync steps; 0
    /// for a device kernel, which is placed by its own timestamps (see
    /// `profile::TracingDevice`).
    #[serde(skip)]
    pub host_start_ns: i64,
}

/// A finished run: outputs (graph order), per-step timings and the wall time of the run.
#[derive(Clone, Debug)]
pub struct PlanRun {
    pub outputs: Vec<Tensor>,
    pub steps: Vec<StepRun>,
    pub total_device_ns: u64,
    /// Time host and sync steps spent on the host (not device time).
    pub total_host_ns: u64,
    /// From the call to the outputs on the host and the run's buffers handed back: a forward
    /// as a user waits for it. Reading the kernels' device timestamps afterwards is
    /// instrumentation, not part of the forward, and is left out.
    pub wall_ns: u64,
    /// Where the wall time went on the host, phase by phase.
    pub phases: HostPhases,
    /// The bindings the run ended with: the given ones and every unbacked symbol it bound.
    pub bindings: Bindings,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error("kernel `{kernel}`: {what}: {source}")]
    Size { kernel: String, what: String, source: SymError },
    #[error("{0}")]
    Input(String),
    /// A runtime assertion of the graph failed (or could not be evaluated) under the sizes
    /// bound so far.
    #[error("node `{node}` ({target}): {message}")]
    Assertion { node: String, target: String, message: String },
    /// The sizes a sync step read back do not fit the graph.
    #[error("sync after node `{node}`: {message}")]
    Sync { node: String, message: String },
    #[error("host step `{node}` ({target}): {message}")]
    Host { node: String, target: String, message: String },
}

/// The SPIR-V module of every kernel step (`None` for meta steps), in step order.
pub fn compile_plan(plan: &Plan) -> Result<Vec<Option<SpirvModule>>, CodegenError> {
    plan.steps.iter().map(|s| s.kernel().map(spirv::compile).transpose()).collect()
}

/// The nodes a step computes, as the user knows them ([`Plan::step_names`]).
pub(crate) fn step_nodes(plan: &Plan, step: &Step) -> Vec<String> {
    plan.step_names(step)
}

/// Parameters, buffers and constants of `graph`, loaded from the model, as contiguous tensors.
pub fn load_weights(model: &Model, graph: &Graph) -> Result<HashMap<ValueId, Tensor>, RunError> {
    let mut out = HashMap::new();
    for (v, kind) in &graph.inputs {
        if *kind == InputKind::UserInput {
            continue;
        }
        let name = &graph.value(*v).name;
        let Some(fqn) = kind.fqn() else { continue };
        let bad = |m: String| RunError::Input(format!("weight `{fqn}` (input `{name}`): {m}"));
        let w = model.weights.get(fqn).ok_or_else(|| bad("not in the model".into()))?;
        let bytes = match &w.data {
            WeightData::Bytes(b) => b,
            WeightData::Unavailable(why) => return Err(bad(format!("unavailable: {why}"))),
        };
        let ints = |es: &[crate::sym::Expr]| es.iter().map(|e| e.as_int().and_then(|i| usize::try_from(i).ok())).collect::<Option<Vec<_>>>();
        let (Some(sizes), Some(strides), Some(off)) =
            (ints(&w.meta.sizes), ints(&w.meta.strides), w.meta.storage_offset.as_int().and_then(|o| usize::try_from(o).ok()))
        else {
            return Err(bad("sizes must be static".into()));
        };
        out.insert(*v, Tensor::from_le_strided(w.meta.dtype, &sizes, &strides, off, bytes).map_err(bad)?);
    }
    Ok(out)
}

fn numel(graph: &Graph, v: ValueId, b: &Bindings, kernel: &str) -> Result<Vec<usize>, RunError> {
    let meta = graph.value(v).tensor().ok_or_else(|| RunError::Input(format!("`{}` is not a tensor", graph.value(v).name)))?;
    meta.sizes
        .iter()
        .map(|e| {
            e.eval_int(b)
                .map(|i| i.max(0) as usize)
                .map_err(|source| RunError::Size { kernel: kernel.into(), what: format!("size of `{}`", graph.value(v).name), source })
        })
        .collect()
}

/// Runs `plan` on `dev`. `modules` come from [`compile_plan`] and may be reused across runs
/// with different bindings; they are built on `dev` for this run.
pub fn run_on_device(
    dev: &mut dyn Device,
    plan: &Plan,
    modules: &[Option<SpirvModule>],
    model: &Model,
    inputs: &[Tensor],
    bindings: &Bindings,
) -> Result<PlanRun, RunError> {
    run_on_device_with(dev, plan, modules, model, inputs, bindings, &Generator::default())
}

/// [`run_on_device`], random kernels drawing from `gen` (`--seed`; [`run_on_device`] draws
/// from seed 0, as the interpreter's `exec::run` does).
pub fn run_on_device_with(
    dev: &mut dyn Device,
    plan: &Plan,
    modules: &[Option<SpirvModule>],
    model: &Model,
    inputs: &[Tensor],
    bindings: &Bindings,
    gen: &Generator,
) -> Result<PlanRun, RunError> {
    let t0 = Instant::now();
    let programs = build_modules(dev, modules)?;
    let run = run_built(dev, plan, &programs, model, inputs, bindings, gen, t0);
    let released = release_modules(dev, &programs);
    let run = run?;
    released.map(|()| run)
}

/// Releases every program [`build_modules`] built.
pub fn release_modules(dev: &mut dyn Device, programs: &HashMap<String, ProgramId>) -> Result<(), RunError> {
    programs.values().try_for_each(|p| dev.release(*p)).map_err(RunError::from)
}

/// Each module built on `dev`, by kernel name: build once, then [`run_built`] at any binding.
pub fn build_modules(dev: &mut dyn Device, modules: &[Option<SpirvModule>]) -> Result<HashMap<String, ProgramId>, RunError> {
    let mut programs = HashMap::new();
    for module in modules.iter().flatten() {
        // Some drivers abort the process on a malformed module; refuse one that does not parse.
        if let Err(e) = rspirv::dr::load_words(&module.words) {
            return Err(RuntimeError::Build { program: module.name.clone(), log: format!("not a well-formed SPIR-V module: {e}") }.into());
        }
        match dev.build(&module.name, &module.words) {
            Ok(p) => programs.insert(module.name.clone(), p),
            Err(e) => {
                // What was built before the failure is not handed to anyone: release it.
                let _ = release_modules(dev, &programs);
                return Err(e.into());
            }
        };
    }
    Ok(programs)
}

/// Runs `plan` with programs already built on `dev` by [`build_modules`]; `t0` is when the run
/// began, for its wall time. Every drawing kernel gets `gen`'s seed and offset: its nodes'
/// streams are that offset plus their ordinals (`crate::ops::rng`), so no two random nodes of
/// the plan share a stream, and a node recomputed in several kernels draws the same values.
#[allow(clippy::too_many_arguments)]
pub fn run_built(
    dev: &mut dyn Device,
    plan: &Plan,
    programs: &HashMap<String, ProgramId>,
    model: &Model,
    inputs: &[Tensor],
    bindings: &Bindings,
    gen: &Generator,
    t0: Instant,
) -> Result<PlanRun, RunError> {
    let weights = Resident::on_host(model, plan)?;
    let run = run_resident(dev, plan, programs, &weights, inputs, bindings, gen, t0);
    // A one-off run keeps nothing for a next forward: its pooled buffers go now.
    let released = weights.release(dev);
    let run = run?;
    released.map(|()| run)
}

/// Whether a run's kernels are launched with device timestamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Every launch is timed: [`StepRun::device_ns`] and [`PlanRun::total_device_ns`] hold the
    /// kernels' device times (`profile`, and `bench models`' device-time runs).
    Kernels,
    /// No launch is timed (every device time is 0): a forward as a user runs it, for its wall
    /// time alone, without a profiling event per launch.
    WallOnly,
}

/// [`run_built`] with the weights of `weights` (uploaded once by [`Resident::upload`] for
/// repeated forwards: their buffers are read, never freed, here).
#[allow(clippy::too_many_arguments)]
pub fn run_resident(
    dev: &mut dyn Device,
    plan: &Plan,
    programs: &HashMap<String, ProgramId>,
    weights: &Resident,
    inputs: &[Tensor],
    bindings: &Bindings,
    gen: &Generator,
    t0: Instant,
) -> Result<PlanRun, RunError> {
    run_resident_with(dev, plan, programs, weights, inputs, bindings, gen, t0, Timing::Kernels)
}

/// [`run_resident`], its launches timed or not as `timing` says.
#[allow(clippy::too_many_arguments)]
pub fn run_resident_with(
    dev: &mut dyn Device,
    plan: &Plan,
    programs: &HashMap<String, ProgramId>,
    weights: &Resident,
    inputs: &[Tensor],
    bindings: &Bindings,
    gen: &Generator,
    t0: Instant,
    timing: Timing,
) -> Result<PlanRun, RunError> {
    let graph = &plan.graph;
    let host = HostTensors { weights: weights.host(), run: HashMap::new() };
    let mut pool = weights.pool();
    let mut launches = weights.launches();
    let (reused, allocated) = (pool.reused, pool.allocated);
    let buffers = RunBuffers { resident: weights.buffers(), run: HashMap::new(), taken: Vec::new() };
    let mut state = RunState { host, complex: HashMap::new(), buffers, pool: &mut pool, scalars: RunScalars::new(bindings), gen: *gen, records: Vec::new(), phases: HostPhases::default(), timing, launches: &mut launches };
    for (v, t) in exec::user_inputs(graph).into_iter().zip(inputs) {
        // Kernels read an input's buffer as the dtype the graph declares: other bytes would be
        // misread, or read past the buffer's end (float32 values under an int64 input).
        let value = graph.value(v);
        if let Some(want) = value.tensor().map(|m| m.dtype).filter(|d| *d != t.dtype()) {
            return Err(RunError::Input(format!("input `{}`: the graph declares {want:?}, the given tensor is {:?}", value.name, t.dtype())));
        }
        state.host.run.insert(v, t.clone());
    }
    let ran = run_steps(dev, plan, programs, &mut state).and_then(|_| {
        // A blocking read waits for every kernel before it on the in-order queue, so a
        // wall-only forward reads its outputs first and its finish finds the queue drained:
        // one wait instead of two (about 2 µs, scripts/opencl_launch_cost.c). A timed one
        // waits first, so that its phases tell the final wait apart from the read-back.
        let read = |dev: &mut dyn Device, state: &mut RunState| {
            let clock = Instant::now();
            let outputs = read_outputs(dev, graph, state);
            state.phases.add(|p| &mut p.read_back_ns, clock);
            outputs
        };
        let early = if state.timing == Timing::WallOnly { Some(read(dev, &mut state)?) } else { None };
        let clock = Instant::now();
        dev.finish()?;
        state.phases.add(|p| &mut p.finish_ns, clock);
        match early {
            Some(outputs) => Ok(outputs),
            None => read(dev, &mut state),
        }
    });
    // The run's buffers go back to the pool for the next forward: every kernel using them is
    // enqueued, and the queue is in order. Last taken first: the pool hands out the last
    // buffer given back first, so the next forward of the same plan and sizes takes each
    // value's buffer of this one, and its launches pass the arguments the kernel objects hold.
    let clock = Instant::now();
    state.buffers.run.clear();
    let handed_back = std::mem::take(&mut state.buffers.taken).into_iter().rev().try_for_each(|b| state.pool.give_back(b));
    let trimmed = handed_back.and_then(|()| state.pool.trim(dev));
    state.phases.add(|p| &mut p.release_ns, clock);
    let wall_ns = t0.elapsed().as_nanos() as u64;
    let outputs = ran?;
    trimmed?;
    state.phases.buffers_reused = (state.pool.reused - reused) as u32;
    state.phases.buffers_allocated = (state.pool.allocated - allocated) as u32;
    let mut steps = Vec::with_capacity(state.records.len());
    for r in &state.records {
        let device_ns = match r.event {
            Some(ev) => dev.timing(ev)?.duration_ns(),
            None => 0,
        };
        let step = &plan.steps[r.step];
        let name = step.kernel().map_or_else(|| step_nodes(plan, step).join("+"), |k| k.name.clone());
        steps.push(StepRun { kind: step.kind(), name, nodes: step_nodes(plan, step), device_ns, host_ns: r.host_ns, host_start_ns: r.host_start_ns });
    }
    Ok(PlanRun {
        outputs,
        total_device_ns: steps.iter().map(|s| s.device_ns).sum(),
        total_host_ns: steps.iter().map(|s| s.host_ns).sum(),
        steps,
        wall_ns,
        phases: state.phases,
        bindings: state.scalars.bindings,
    })
}

/// One step that ran: its launch (when it launched a kernel) and its time on the host.
struct Record {
    step: usize,
    event: Option<EventId>,
    host_start_ns: i64,
    host_ns: u64,
}

/// Tensors on the host: the weights (shared by runs) and this run's inputs and host steps'
/// outputs. Each is uploaded when a kernel first reads it, unless its buffer is resident.
struct HostTensors<'w> {
    weights: &'w HashMap<ValueId, Tensor>,
    run: HashMap<ValueId, Tensor>,
}

impl HostTensors<'_> {
    fn get(&self, v: &ValueId) -> Option<&Tensor> {
        self.run.get(v).or_else(|| self.weights.get(v))
    }
}

/// Device buffers by graph value name: the resident weights' and this run's, which come from
/// the plan's pool and go back to it at the end (the resident map is not copied per forward).
struct RunBuffers<'w> {
    resident: &'w HashMap<String, BufferId>,
    run: HashMap<String, BufferId>,
    /// This run's buffers in the order they were taken from the pool.
    taken: Vec<BufferId>,
}

impl RunBuffers<'_> {
    fn get(&self, name: &str) -> Option<&BufferId> {
        self.run.get(name).or_else(|| self.resident.get(name))
    }
}

/// What a device run holds while its steps run.
struct RunState<'w> {
    host: HostTensors<'w>,
    /// Complex tensors host steps computed: kernels cannot store them, so they stay here for
    /// the host steps that read them (every node touching a complex value is one).
    complex: HashMap<ValueId, ComplexTensor>,
    buffers: RunBuffers<'w>,
    pool: &'w mut BufferPool,
    scalars: RunScalars,
    /// What drawing kernels and host steps draw from.
    gen: Generator,
    records: Vec<Record>,
    phases: HostPhases,
    timing: Timing,
    launches: &'w mut LaunchCache,
}

fn run_steps(dev: &mut dyn Device, plan: &Plan, programs: &HashMap<String, ProgramId>, st: &mut RunState) -> Result<(), RunError> {
    let graph = &plan.graph;
    let launch_kernel = |dev: &mut dyn Device, st: &mut RunState, step: usize, kernel: &crate::lower::Kernel| -> Result<Option<EventId>, RunError> {
        let program = programs.get(&kernel.name).copied().ok_or_else(|| RunError::Input(format!("kernel `{}` has no compiled module", kernel.name)))?;
        launch(dev, plan, step, kernel, program, st)
    };
    for (i, step) in plan.steps.iter().enumerate() {
        match step {
            Step::Meta { node } => st.scalars.check(graph, graph.node(*node))?,
            Step::Fallback { kernel, .. } | Step::Fused { kernel, .. } => {
                let event = launch_kernel(dev, st, i, kernel)?;
                st.records.push(Record { step: i, event, host_start_ns: 0, host_ns: 0 });
            }
            Step::Sync { node, kernel, values } => {
                let node = graph.node(*node);
                let event = launch_kernel(dev, st, i, kernel)?;
                let (start, clock) = (puffin::now_ns(), Instant::now());
                {
                    puffin::profile_scope!("sync", &node.name);
                    let words = read_sync(dev, kernel, &st.buffers)?;
                    st.scalars.bind_sync(&node.name, values, &words)?;
                }
                st.phases.add(|p| &mut p.syncs_ns, clock);
                st.records.push(Record { step: i, event, host_start_ns: start, host_ns: clock.elapsed().as_nanos() as u64 });
            }
            Step::Host { node } => {
                let node = graph.node(*node);
                let (start, clock) = (puffin::now_ns(), Instant::now());
                {
                    puffin::profile_scope!("host fallback", &node.name);
                    dev.finish()?;
                    let b = st.scalars.bindings.clone();
                    let (on_host, complex, buffers) = (&st.host, &st.complex, &st.buffers);
                    let results = host::run_host_node(graph, node, &mut st.scalars, &st.gen, &mut |v| match complex.get(&v) {
                        Some(c) => Ok(RtValue::Complex(c.clone())),
                        None => read_value(dev, graph, on_host, buffers, &b, v).map(RtValue::Tensor),
                    })?;
                    for (o, r) in node.outputs.iter().zip(results) {
                        match r {
                            RtValue::Tensor(t) => {
                                st.host.run.insert(*o, t);
                            }
                            RtValue::Complex(c) => {
                                st.complex.insert(*o, c);
                            }
                            _ => {}
                        }
                    }
                }
                st.phases.add(|p| &mut p.host_steps_ns, clock);
                st.records.push(Record { step: i, event: None, host_start_ns: start, host_ns: clock.elapsed().as_nanos() as u64 });
            }
        }
    }
    Ok(())
}

/// The i64 words a sync step's size kernel wrote (waits for the queue: a read is a sync point).
fn read_sync(dev: &mut dyn Device, kernel: &crate::lower::Kernel, buffers: &RunBuffers<'_>) -> Result<Vec<i64>, RunError> {
    let out = kernel.buffers.iter().find(|b| b.access == crate::lower::kernel::Access::Write);
    let id = out.and_then(|b| buffers.get(&b.value)).ok_or_else(|| RunError::Input(format!("size kernel `{}` wrote no buffer", kernel.name)))?;
    let n = kernel.domain_sizes.first().and_then(|e| e.as_int()).unwrap_or(0).max(0) as usize;
    let mut bytes = vec![0u8; n * 8];
    dev.read(*id, &mut bytes)?;
    Ok(bytes.chunks_exact(8).map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect())
}

/// Tensor `v` as the host sees it: its host copy, or its device buffer read back.
fn read_value(
    dev: &mut dyn Device,
    graph: &Graph,
    host: &HostTensors<'_>,
    buffers: &RunBuffers<'_>,
    b: &Bindings,
    v: ValueId,
) -> Result<Tensor, RunError> {
    if let Some(t) = host.get(&v) {
        return Ok(t.clone());
    }
    let name = &graph.value(v).name;
    let shape = numel(graph, v, b, "host read-back")?;
    let n: usize = shape.iter().product();
    let dtype = graph.value(v).tensor().map_or(DType::F32, |t| t.dtype);
    let mut bytes = vec![0u8; n * dtype.size_bytes()];
    if n > 0 {
        let id = buffers.get(name).ok_or_else(|| RunError::Input(format!("`{name}` was never computed")))?;
        dev.read(*id, &mut bytes)?;
    }
    Tensor::from_le_bytes(dtype, &shape, &bytes).map_err(RunError::Input)
}

/// Launches `kernel`, first giving each value it touches a buffer: a host tensor's is
/// uploaded, an output's taken from the pool. Each part's host time goes to its phase.
fn launch(dev: &mut dyn Device, plan: &Plan, step: usize, kernel: &crate::lower::Kernel, program: ProgramId, st: &mut RunState) -> Result<Option<EventId>, RunError> {
    let graph = &plan.graph;
    let clock = Instant::now();
    // Host time of uploads and allocations inside this launch, which count in their own phases.
    let mut elsewhere_ns = 0;
    let mut args = Vec::with_capacity(kernel.buffers.len() + kernel.params.len() + 3);
    for buf in &kernel.buffers {
        // Keyed by value and layout: a weight read transposed has a buffer of its own.
        let key = buf.key();
        if let Some(id) = st.buffers.get(&key) {
            args.push(KernelArg::Buffer(*id));
            continue;
        }
        let v = graph.value_id(&buf.value).ok_or_else(|| RunError::Input(format!("kernel `{}`: unknown value `{}`", kernel.name, buf.value)))?;
        let start = Instant::now();
        let id = match st.host.get(&v) {
            Some(t) => {
                let t = stored(t, buf.layout).map_err(|m| RunError::Input(format!("kernel `{}`: `{}`: {m}", kernel.name, buf.value)))?;
                let id = upload_pooled(dev, st.pool, t.as_ref(), &kernel.name)?;
                st.phases.add(|p| &mut p.upload_ns, start);
                id
            }
            // Only weights (host tensors) are stored in another layout (`lower::gemm`).
            None if !buf.layout.is_plain() => {
                return Err(RunError::Input(format!("kernel `{}` reads `{}` in layout {:?}, but it is not a weight", kernel.name, buf.value, buf.layout)))
            }
            None => {
                let n: usize = numel(graph, v, &st.scalars.bindings, &kernel.name)?.iter().product();
                let id = st.pool.take(dev, n * buf.elem.bytes() as usize).map_err(|e| with_kernel(e, &kernel.name))?;
                st.phases.add(|p| &mut p.alloc_ns, start);
                id
            }
        };
        elsewhere_ns += start.elapsed().as_nanos() as u64;
        st.buffers.run.insert(key, id);
        st.buffers.taken.push(id);
        args.push(KernelArg::Buffer(id));
    }
    let event = match st.launches.launch(step, kernel, &st.scalars.bindings)? {
        Some((shape, ints)) => {
            args.extend(ints.iter().copied().chain(rng_args(kernel, &st.gen)).map(KernelArg::I64));
            st.phases.launches += 1;
            let enqueue = Instant::now();
            let event = match st.timing {
                Timing::Kernels => Some(dev.launch(program, &kernel.name, &args, shape.global, Some(shape.local))?),
                Timing::WallOnly => {
                    dev.launch_untimed(program, &kernel.name, &args, shape.global, Some(shape.local))?;
                    None
                }
            };
            st.phases.enqueue_ns += enqueue.elapsed().as_nanos() as u64;
            event
        }
        None => None,
    };
    st.phases.launch_ns += (clock.elapsed().as_nanos() as u64).saturating_sub(elsewhere_ns);
    Ok(event)
}

fn read_outputs(dev: &mut dyn Device, graph: &Graph, st: &RunState) -> Result<Vec<Tensor>, RunError> {
    let mut out = Vec::new();
    for (i, a) in graph.outputs.iter().enumerate() {
        let t = match a {
            Arg::Tensor(v) => {
                if graph.value(*v).tensor().is_none() {
                    return Err(RunError::Input(format!("graph output {i} (`{}`) is not a tensor", graph.value(*v).name)));
                }
                read_value(dev, graph, &st.host, &st.buffers, &st.scalars.bindings, *v).map_err(|e| match e {
                    RunError::Input(m) => RunError::Input(format!("graph output {i}: {m}")),
                    e => e,
                })?
            }
            Arg::SymInt(SymIntArg::Value(v)) | Arg::SymFloat(v) | Arg::SymBool(v) => {
                let x = st.scalars.value_of(graph, *v).map_err(|m| RunError::Input(format!("graph output {i}: {m}")))?;
                exec::scalar_tensor(&x).map_err(|m| RunError::Input(format!("graph output {i} {m}")))?
            }
            Arg::Int(x) | Arg::SymInt(SymIntArg::Int(x)) => Tensor::scalar(*x),
            Arg::Float(x) => Tensor::scalar(*x as f32),
            Arg::Bool(x) => Tensor::scalar(*x),
            other => return Err(RunError::Input(format!("graph output {i} is not a tensor or a number ({other:?})"))),
        };
        out.push(t);
    }
    Ok(out)
}
