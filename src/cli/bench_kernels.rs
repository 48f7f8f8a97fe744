//! `bench kernels`: achieved bandwidth of generated kernels against a plain copy kernel on the
//! same OpenCL device, over buffer sizes from 1 MB up to `--max-mb`; GFLOP/s of the matrix
//! products; and the kernel counts of every sample's lite and full plans.
//!
//! The kernels are built with the same IR, code generator and launch path as compiled plans
//! (sizes as i64 arguments, the launch shape from `runtime::plan::launch_shape`, so the row
//! schedule's mapping is chosen from the actual sizes as in a plan).

use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use super::bench::median;
use crate::codegen::spirv;
use crate::import;
use crate::lower::kernel::{split, Access, BinOp, KernelBuilder, RedOp, Store, UnOp, VarId};
use crate::lower::{schedule, Kernel};
use crate::runtime::opencl::OpenClDevice;
use crate::runtime::{Device, KernelArg, RuntimeError};
use crate::sym::Expr;

#[derive(Clone, Copy, PartialEq)]
enum Bench {
    Copy,
    Pointwise,
    /// `(a·b + 1)·a`: the same two inputs and one output as [`Bench::Pointwise`] without its
    /// `erf` and `exp`, to tell memory time from math time.
    Arith,
    /// `out[i] = exp(a[i])`: the copy's bytes and one `exp` per element, the least time any
    /// kernel with an `exp` per element can take (its ratio to copy caps theirs).
    ExpOnly,
    /// `out[i] = erf(a[i])`, the same for `erf`.
    ErfOnly,
    /// `out[b, t, e] = a[b, t, e] + bias[e]` over `[4, s, 768]` with `s` dynamic: a
    /// transformer's bias add, the copy's bytes through three output coordinates (the index
    /// arithmetic real kernels have and the 1-D kernels above do not).
    BiasAdd3d,
    /// The same kernel with its output coordinates split from the work-item id by codegen and
    /// joined again by the read (no [`Kernel::linearize`]): the baseline for [`Bench::BiasAdd3d`].
    BiasAdd3dSplit,
    /// The same kernel on the one-dimensional elementwise schedule, its coordinates digits of
    /// the linear index (the bias read `b[L % 768]`): the baseline for the column schedule
    /// that [`Bench::BiasAdd3d`] gets.
    BiasAdd3dLinear,
    /// Row sums of `exp(x)` over rows of [`ROW`], one work-item folding each row serially (the
    /// elementwise schedule: the baseline).
    Reduction,
    /// The same kernel on the row schedule.
    ReductionRows,
    /// Row sums of `x` (no `exp`) over rows of [`ROW`] on the row schedule: the memory path
    /// of [`Bench::ReductionRows`] alone, to tell memory time from `exp` time (as
    /// [`Bench::Arith`] does for the pointwise kernel).
    ReductionRowsPlain,
    /// Many short rows ([`SHORT`] elements).
    ReductionShortRows,
    /// [`FEW`] long rows.
    ReductionFewRows,
    /// One row of all `n` elements (a full `sum(exp(x))`), split over many work-groups in two
    /// kernels as the lowering splits it (`lower::kernel::split`).
    ReductionOneRow,
    /// The same row on one work-group: the baseline for [`Bench::ReductionOneRow`].
    ReductionOneRowUnsplit,
    /// `softmax` over rows of [`ROW`]: maximum, denominator and output in one kernel.
    Softmax,
    /// `n × n` matrix product, one work-item per output.
    Matmul,
    /// The same kernel on the tiled schedule.
    MatmulTiled,
}

/// Elements per row of the reduction and softmax benchmarks.
const ROW: i64 = 1024;
/// Elements per row of the short-row benchmark.
const SHORT: i64 = 64;
/// Rows of the few-rows benchmark.
const FEW: i64 = 16;

/// Batch and hidden size of [`Bench::BiasAdd3d`] (its sequence length is the dynamic `s`).
const BIAS_BATCH: i64 = 4;
const HIDDEN: i64 = 768;

const BANDWIDTH: [Bench; 16] = [
    Bench::Copy,
    Bench::Pointwise,
    Bench::Arith,
    Bench::BiasAdd3d,
    Bench::BiasAdd3dSplit,
    Bench::BiasAdd3dLinear,
    Bench::ExpOnly,
    Bench::ErfOnly,
    Bench::Reduction,
    Bench::ReductionRows,
    Bench::ReductionRowsPlain,
    Bench::ReductionShortRows,
    Bench::ReductionFewRows,
    Bench::ReductionOneRow,
    Bench::ReductionOneRowUnsplit,
    Bench::Softmax,
];

pub fn kernels(max_mb: usize, repeat: usize, matmuls: bool) -> ExitCode {
    let mut dev = match OpenClDevice::open() {
        Ok(d) => d,
        Err(e) => return super::fail(super::EXIT_FAILED, &e),
    };
    let info = dev.info().clone();
    let load_before = super::bench::load_average();
    // Three buffers of the largest size must fit comfortably beside everything else.
    let cap_mb = (info.global_mem_bytes / (1 << 20) / 8) as usize;
    let mut rows = Vec::new();
    let top = max_mb.min(cap_mb.max(1));
    let mut sizes: Vec<usize> = std::iter::successors(Some(1usize), |m| Some(m * 8)).take_while(|m| *m <= top).collect();
    if sizes.last() != Some(&top) {
        sizes.push(top);
    }
    for mb in sizes {
        match bandwidth_round(&mut dev, mb, repeat) {
            Ok(r) => rows.extend(r),
            Err(e) => return super::fail(super::EXIT_FAILED, &e),
        }
    }
    // Square matrix products, serial dot product per work-item against 16×16 tiles.
    let mut products = Vec::new();
    for side in if matmuls { &[128usize, 256, 512, 1024][..] } else { &[] } {
        for which in [Bench::Matmul, Bench::MatmulTiled] {
            let kernel = synthetic(which);
            let timed = spirv::compile(&kernel)
                .map_err(|e| e.to_string())
                .and_then(|m| time_kernel(&mut dev, &kernel, &m, *side as i64, side * side * 4, repeat).map_err(|e| e.to_string()));
            match timed {
                Ok((ns, _, _)) => products.push(json!({
                    "kernel": kernel.name,
                    "m_n_k": side,
                    "median_ns": ns,
                    "gflop_per_s": 2.0 * (*side as f64).powi(3) / ns.max(1) as f64,
                })),
                Err(e) => return super::fail(super::EXIT_FAILED, &e),
            }
        }
    }
    let mut plans = Vec::new();
    for s in ["mlp", "transformer_block", "cnn", "activations", "annotated"] {
        let path = std::path::PathBuf::from(format!("samples/{s}.pt2"));
        let Ok(model) = import::load(&path) else { continue };
        let count = |mode| {
            crate::lower::lower(&model, &model.graphs[0], mode, &crate::decomp::Marks::default()).map(|p| p.kernel_count()).ok()
        };
        plans.push(json!({"sample": s, "lite_kernels": count(crate::decomp::Mode::Lite), "full_kernels": count(crate::decomp::Mode::Full)}));
    }
    super::print_json(&json!({
        "device": format!("{} ({})", info.name, info.backend),
        "repeat": repeat,
        "load_average_before": load_before,
        "load_average_after": super::bench::load_average(),
        "work_group": crate::runtime::plan::WORK_GROUP,
        "kernels": rows,
        "matmuls": products,
        "plans": plans,
    }));
    ExitCode::SUCCESS
}

const OK: &str = "kernel IR of the benchmark is well-typed";

/// The benchmark kernels over a dynamic element count `n` (an i64 argument, as dynamic dims
/// are; the side for matmuls), on the schedule the lowering would give them or, for the serial
/// baselines, the elementwise one.
fn synthetic(which: Bench) -> Kernel {
    let n = Expr::symbol("n");
    let whole = |e: i64| Expr::floordiv(n.clone(), Expr::int(e));
    let (mut k, lowering_schedule) = match which {
        Bench::Copy | Bench::Pointwise | Bench::Arith | Bench::ExpOnly | Bench::ErfOnly => (pointwise(which, n), false),
        Bench::BiasAdd3d => return schedule::apply(bias_add_3d("bias_add_3d"), false),
        Bench::BiasAdd3dSplit => (bias_add_3d("bias_add_3d_split"), false),
        Bench::BiasAdd3dLinear => return bias_add_3d("bias_add_3d_linear").linearize(),
        Bench::Reduction => (row_sums("fused_reduction", whole(ROW), Expr::int(ROW), true), false),
        Bench::ReductionRows => (row_sums("fused_reduction_rows", whole(ROW), Expr::int(ROW), true), true),
        Bench::ReductionRowsPlain => (row_sums("reduction_rows_plain", whole(ROW), Expr::int(ROW), false), true),
        Bench::ReductionShortRows => (row_sums("fused_reduction_short_rows", whole(SHORT), Expr::int(SHORT), true), true),
        Bench::ReductionFewRows => (row_sums("fused_reduction_few_rows", Expr::int(FEW), whole(FEW), true), true),
        Bench::ReductionOneRow => (row_sums("fused_reduction_one_row", Expr::int(1), n, true), true),
        Bench::ReductionOneRowUnsplit => (row_sums("fused_reduction_one_row_unsplit", Expr::int(1), n, true), true),
        Bench::Softmax => (softmax(whole(ROW)), true),
        Bench::Matmul => (matmul("matmul", n), false),
        Bench::MatmulTiled => (matmul("matmul_tiled", n), true),
    };
    if lowering_schedule {
        k.schedule = schedule::choose(&k, matches!(which, Bench::MatmulTiled));
    }
    k
}

/// `out[i] = a[i]` (or `exp(a[i])`, `erf(a[i])`), the six-op chain `gelu(a·b + 1) · exp(-|a|)`
/// or `(a·b + 1)·a`.
fn pointwise(which: Bench, n: Expr) -> Kernel {
    let mut kb = KernelBuilder::new(1);
    let i = kb.var(VarId(0));
    let a = kb.buffer("a", Access::Read);
    let b = matches!(which, Bench::Pointwise | Bench::Arith).then(|| kb.buffer("b", Access::Read));
    let out = kb.buffer("out", Access::Write);
    let d = kb.size(&n);
    let x = kb.load(a, i);
    let Some(b) = b else {
        let (name, value) = match which {
            Bench::ExpOnly => ("exp_only", kb.unary(UnOp::Exp, x)),
            Bench::ErfOnly => ("erf_only", kb.unary(UnOp::Erf, x)),
            _ => ("copy", x),
        };
        return kb.finish(name.into(), vec![n], vec![d], vec![Store { buf: out, value }]);
    };
    let y = kb.load(b, i);
    let one = kb.f32(1.0);
    let xy = kb.binary(BinOp::Mul, x, y).expect(OK);
    let t = kb.binary(BinOp::Add, xy, one).expect(OK);
    if which == Bench::Arith {
        let v = kb.binary(BinOp::Mul, t, x).expect(OK);
        return kb.finish("fused_arith".into(), vec![n], vec![d], vec![Store { buf: out, value: v }]);
    }
    let c = kb.f32(std::f32::consts::FRAC_1_SQRT_2);
    let e = kb.binary(BinOp::Mul, t, c).expect(OK);
    let e = kb.unary(UnOp::Erf, e);
    let e = kb.binary(BinOp::Add, e, one).expect(OK);
    let half = kb.f32(0.5);
    let g = kb.binary(BinOp::Mul, t, half).expect(OK);
    let g = kb.binary(BinOp::Mul, g, e).expect(OK);
    let ax = kb.unary(UnOp::Abs, x);
    let nx = kb.unary(UnOp::Neg, ax);
    let ex = kb.unary(UnOp::Exp, nx);
    let v = kb.binary(BinOp::Mul, g, ex).expect(OK);
    kb.finish("fused_pointwise".into(), vec![n], vec![d], vec![Store { buf: out, value: v }])
}

/// `a + bias` over `[BIAS_BATCH, s, HIDDEN]`, read and written contiguously, `bias` broadcast.
fn bias_add_3d(name: &str) -> Kernel {
    let sizes = vec![Expr::int(BIAS_BATCH), Expr::symbol("s"), Expr::int(HIDDEN)];
    let mut kb = KernelBuilder::new(3);
    let domain: Vec<_> = sizes.iter().map(|s| kb.size(s)).collect();
    kb.set_coord_extents(&domain);
    let (a, bias, out) = (kb.buffer("a", Access::Read), kb.buffer("bias", Access::Read), kb.buffer("out", Access::Write));
    let mut index = kb.i64(0);
    for (d, stride) in crate::ir::TensorMeta::contiguous_strides(&sizes).iter().enumerate() {
        let (c, st) = (kb.var(VarId(d as u32)), kb.size(stride));
        let term = kb.binary(BinOp::Mul, c, st).expect(OK);
        index = kb.binary(BinOp::Add, index, term).expect(OK);
    }
    let e = kb.var(VarId(2));
    let (x, b) = (kb.load(a, index), kb.load(bias, e));
    let v = kb.binary(BinOp::Add, x, b).expect(OK);
    kb.finish(name.into(), sizes, domain, vec![Store { buf: out, value: v }])
}

/// Row sums of `exp(x)` (of `x` without `exp`): `rows` outputs, each folding `row` contiguous
/// elements.
fn row_sums(name: &str, rows: Expr, row: Expr, exp: bool) -> Kernel {
    let mut kb = KernelBuilder::new(1);
    let i = kb.var(VarId(0));
    let (a, out) = (kb.buffer("a", Access::Read), kb.buffer("out", Access::Write));
    let (d, len) = (kb.size(&rows), kb.size(&row));
    let j = kb.fresh_var().expect(OK);
    let jv = kb.var(j);
    let base = kb.binary(BinOp::Mul, i, len).expect(OK);
    let at = kb.binary(BinOp::Add, base, jv).expect(OK);
    let x = kb.load(a, at);
    let x = if exp { kb.unary(UnOp::Exp, x) } else { x };
    let s = kb.reduce(RedOp::Sum, j, len, x).expect(OK);
    kb.finish(name.into(), vec![rows], vec![d], vec![Store { buf: out, value: s }])
}

/// `out[r, e] = exp(x[r, e] - max_r) / Σ_e exp(x[r, e] - max_r)` over rows of [`ROW`].
fn softmax(rows: Expr) -> Kernel {
    let mut kb = KernelBuilder::new(2);
    let (a, out) = (kb.buffer("a", Access::Read), kb.buffer("out", Access::Write));
    let (d, len) = (kb.size(&rows), kb.i64(ROW));
    let r = kb.var(VarId(0));
    let base = kb.binary(BinOp::Mul, r, len).expect(OK);
    let at = |kb: &mut KernelBuilder, v: VarId| {
        let e = kb.var(v);
        let i = kb.binary(BinOp::Add, base, e).expect(OK);
        kb.load(a, i)
    };
    let j = kb.fresh_var().expect(OK);
    let xj = at(&mut kb, j);
    let m = kb.reduce(RedOp::Max, j, len, xj).expect(OK);
    let j2 = kb.fresh_var().expect(OK);
    let xj2 = at(&mut kb, j2);
    let dj = kb.binary(BinOp::Sub, xj2, m).expect(OK);
    let ej = kb.unary(UnOp::Exp, dj);
    let z = kb.reduce(RedOp::Sum, j2, len, ej).expect(OK);
    let x = at(&mut kb, VarId(1));
    let dx = kb.binary(BinOp::Sub, x, m).expect(OK);
    let ex = kb.unary(UnOp::Exp, dx);
    let v = kb.binary(BinOp::Div, ex, z).expect(OK);
    kb.finish("fused_softmax".into(), vec![rows, Expr::int(ROW)], vec![d, len], vec![Store { buf: out, value: v }])
}

/// `out = a · b`, both `n × n`.
fn matmul(name: &str, n: Expr) -> Kernel {
    let mut kb = KernelBuilder::new(2);
    let (a, b, out) = (kb.buffer("a", Access::Read), kb.buffer("b", Access::Read), kb.buffer("out", Access::Write));
    let d = kb.size(&n);
    let (i, j) = (kb.var(VarId(0)), kb.var(VarId(1)));
    let v = kb.fresh_var().expect(OK);
    let kv = kb.var(v);
    let ai = kb.binary(BinOp::Mul, i, d).expect(OK);
    let ai = kb.binary(BinOp::Add, ai, kv).expect(OK);
    let bi = kb.binary(BinOp::Mul, kv, d).expect(OK);
    let bi = kb.binary(BinOp::Add, bi, j).expect(OK);
    let (x, y) = (kb.load(a, ai), kb.load(b, bi));
    let p = kb.binary(BinOp::Mul, x, y).expect(OK);
    let s = kb.reduce(RedOp::Sum, v, d, p).expect(OK);
    kb.finish(name.into(), vec![n.clone(), n], vec![d, d], vec![Store { buf: out, value: s }])
}

/// Median and fastest device time of `repeat` launches with `n` bound to `n` and input buffers
/// of `bytes`, and the bytes each launch reads and writes.
fn time_kernel(dev: &mut OpenClDevice, kernel: &Kernel, module: &spirv::SpirvModule, n: i64, bytes: usize, repeat: usize) -> Result<(u64, u64, u64), RuntimeError> {
    let b = {
        let mut b = crate::sym::Bindings::new();
        b.set("n", n);
        b.set("s", n / (BIAS_BATCH * HIDDEN));
        b
    };
    let grid: i64 = kernel.domain_sizes.iter().map(|d| d.eval_int(&b).unwrap_or(0)).product();
    let mut args = Vec::new();
    let mut moved = 0u64;
    let mut held = Vec::new();
    for buf in &kernel.buffers {
        let len = if buf.access == Access::Write { grid as usize * 4 } else { bytes };
        moved += len as u64;
        let id = dev.alloc(len).map_err(|e| match e {
            RuntimeError::OutOfMemory { bytes, .. } => RuntimeError::OutOfMemory { bytes, kernel: Some(kernel.name.clone()) },
            e => e,
        })?;
        // 0.5f everywhere: finite for every benchmark expression.
        dev.write(id, &0x3f00_0000u32.to_le_bytes().repeat(len / 4))?;
        held.push(id);
        args.push(KernelArg::Buffer(id));
    }
    let program = dev.build(&kernel.name, &module.words)?;
    let shape = crate::runtime::plan::launch_shape(kernel, &b)
        .ok()
        .flatten()
        .ok_or_else(|| RuntimeError::Invalid { what: "benchmark size", detail: format!("`{}` has an empty grid", kernel.name) })?;
    for p in &kernel.params {
        args.push(KernelArg::I64(p.eval_int(&b).unwrap_or(0)));
    }
    args.extend(shape.schedule_args.iter().map(|a| KernelArg::I64(*a)));
    // One warm-up launch: the first pays for the driver's lazy JIT and page faults.
    let warm = dev.launch(program, &kernel.name, &args, shape.global, Some(shape.local))?;
    dev.finish()?;
    dev.timing(warm)?;
    let mut times = Vec::with_capacity(repeat);
    for _ in 0..repeat.max(1) {
        let ev = dev.launch(program, &kernel.name, &args, shape.global, Some(shape.local))?;
        dev.finish()?;
        times.push(Duration::from_nanos(dev.timing(ev)?.duration_ns()));
    }
    for id in held {
        dev.free(id)?;
    }
    dev.release(program)?;
    let fastest = times.iter().min().copied().unwrap_or_default();
    Ok((median(&mut times).as_nanos() as u64, fastest.as_nanos() as u64, moved))
}

/// One launch of a benchmark: its kernel built and bound to its arguments at one size.
struct Launch {
    kernel: Kernel,
    program: crate::runtime::ProgramId,
    args: Vec<KernelArg>,
    shape: crate::runtime::plan::LaunchShape,
}

/// One benchmark at one size: its launches (two for a split reduction), the bytes the
/// unsplit kernel reads and writes, and the time of each round (all launches).
struct Prepared {
    name: String,
    launches: Vec<Launch>,
    moved: u64,
    times: Vec<Duration>,
}

/// The kernels of benchmark `which` in launch order: the lowering's split into partials and
/// finish for [`Bench::ReductionOneRow`], else the one kernel.
fn launches_of(which: Bench) -> Result<Vec<Kernel>, String> {
    let kernel = synthetic(which);
    if which != Bench::ReductionOneRow {
        return Ok(vec![kernel]);
    }
    let split = split::split(&kernel, |_| "one_row_partials".to_string()).ok_or_else(|| format!("`{}` was not split", kernel.name))?;
    Ok(vec![split.partials, split.finish])
}

/// The bandwidth kernels at inputs of `mb` MB each, timed in interleaved rounds (one launch
/// of each kernel per round, `repeat` rounds after a warm-up round) so that every kernel sees
/// the same machine load as the copy kernel it is compared with: one JSON row per kernel.
fn bandwidth_round(dev: &mut OpenClDevice, mb: usize, repeat: usize) -> Result<Vec<serde_json::Value>, String> {
    let bytes = mb << 20;
    let n = (bytes / 4) as i64;
    let b = {
        let mut b = crate::sym::Bindings::new();
        b.set("n", n);
        b.set("s", n / (BIAS_BATCH * HIDDEN));
        b
    };
    // Every kernel reads `a` (and `b`) of `bytes` and writes at most as many elements to `out`.
    let mut held = Vec::new();
    for _ in 0..3 {
        let id = dev.alloc(bytes).map_err(|e| e.to_string())?;
        // 0.5f everywhere: finite for every benchmark expression.
        dev.write(id, &0x3f00_0000u32.to_le_bytes().repeat(bytes / 4)).map_err(|e| e.to_string())?;
        held.push(id);
    }
    // Scratch buffers of split reductions, by name (a few hundred floats).
    let mut scratch: Vec<(String, crate::runtime::BufferId)> = Vec::new();
    let mut prepared = Vec::new();
    for which in BANDWIDTH {
        let mut launches = Vec::new();
        let mut moved = 0u64;
        for kernel in launches_of(which)? {
            let module = spirv::compile(&kernel).map_err(|e| e.to_string())?;
            let program = dev.build(&kernel.name, &module.words).map_err(|e| e.to_string())?;
            let shape = crate::runtime::plan::launch_shape(&kernel, &b)
                .ok()
                .flatten()
                .ok_or_else(|| format!("`{}` has an empty grid", kernel.name))?;
            let grid: i64 = kernel.domain_sizes.iter().map(|d| d.eval_int(&b).unwrap_or(0)).product();
            let mut args = Vec::new();
            for buf in &kernel.buffers {
                let id = match buf.value.as_str() {
                    "out" => {
                        moved += grid as u64 * 4;
                        held[2]
                    }
                    input @ ("a" | "b") => {
                        moved += match (which, input) {
                            // `a` covers the grid (a whole number of [4, 1, 768] slices); the
                            // broadcast bias is one row of HIDDEN floats.
                            (Bench::BiasAdd3d | Bench::BiasAdd3dSplit | Bench::BiasAdd3dLinear, "a") => grid as u64 * 4,
                            (Bench::BiasAdd3d | Bench::BiasAdd3dSplit | Bench::BiasAdd3dLinear, _) => HIDDEN as u64 * 4,
                            _ => bytes as u64,
                        };
                        held[usize::from(input == "b")]
                    }
                    // A split's partials: its own traffic is not counted, so both variants of
                    // a reduction are measured against the same bytes.
                    name => match scratch.iter().find(|(n, _)| n == name) {
                        Some((_, id)) => *id,
                        None => {
                            let id = dev.alloc(grid.max(1) as usize * 4).map_err(|e| e.to_string())?;
                            scratch.push((name.to_string(), id));
                            id
                        }
                    },
                };
                args.push(KernelArg::Buffer(id));
            }
            args.extend(kernel.params.iter().map(|p| KernelArg::I64(p.eval_int(&b).unwrap_or(0))));
            args.extend(shape.schedule_args.iter().map(|a| KernelArg::I64(*a)));
            launches.push(Launch { kernel, program, args, shape });
        }
        let name = synthetic(which).name;
        prepared.push(Prepared { name, launches, moved, times: Vec::with_capacity(repeat) });
    }
    // Round 0 is the warm-up: the first launch pays for the driver's lazy JIT and page faults.
    for round in 0..=repeat.max(1) {
        for p in &mut prepared {
            let mut ns = 0;
            for l in &p.launches {
                let ev = dev.launch(l.program, &l.kernel.name, &l.args, l.shape.global, Some(l.shape.local)).map_err(|e| e.to_string())?;
                dev.finish().map_err(|e| e.to_string())?;
                ns += dev.timing(ev).map_err(|e| e.to_string())?.duration_ns();
            }
            if round > 0 {
                p.times.push(Duration::from_nanos(ns));
            }
        }
    }
    for id in held.into_iter().chain(scratch.into_iter().map(|(_, id)| id)) {
        dev.free(id).map_err(|e| e.to_string())?;
    }
    for l in prepared.iter().flat_map(|p| &p.launches) {
        dev.release(l.program).map_err(|e| e.to_string())?;
    }
    let stats: Vec<(u64, u64)> = prepared
        .iter_mut()
        .map(|p| {
            let fastest = p.times.iter().min().copied().unwrap_or_default();
            (median(&mut p.times).as_nanos().max(1) as u64, fastest.as_nanos().max(1) as u64)
        })
        .collect();
    let (copy_med, copy_min) = stats[0];
    let copy = &prepared[0];
    Ok(prepared
        .iter()
        .zip(&stats)
        .map(|(p, (med, min))| {
            let gbs = p.moved as f64 / *med as f64;
            let copy_gbs = copy.moved as f64 / copy_med as f64;
            json!({
                "kernel": p.name,
                "launches": p.launches.len(),
                "mb": mb,
                "bytes_moved": p.moved,
                "median_ns": med,
                "min_ns": min,
                "gb_per_s": gbs,
                "ratio_to_copy": gbs / copy_gbs,
                "ratio_to_copy_of_minima": (p.moved as f64 / *min as f64) / (copy.moved as f64 / copy_min as f64),
            })
        })
        .collect())
}
