//! `bench import`: how long loading a model and evaluating every shape takes, as a median over
//! repetitions, so `docs/PERFORMANCE.md` numbers can be reproduced with one command.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::import;
use crate::shapes::{evaluate_graph, resolve_bindings};

pub fn import(file: &Path, repeat: usize) -> ExitCode {
    let repeat = repeat.max(1);
    let mut load_times = Vec::with_capacity(repeat);
    let mut shape_times = Vec::with_capacity(repeat);
    let mut tensors = 0usize;
    let mut nodes = 0usize;
    for _ in 0..repeat {
        let t0 = Instant::now();
        let model = match import::load(file) {
            Ok(m) => m,
            Err(e) => return super::fail(super::EXIT_USAGE, &e),
        };
        let t1 = Instant::now();
        let bindings = match resolve_bindings(&model, &[]) {
            Ok(b) => b,
            Err(e) => return super::fail(super::EXIT_USAGE, &e),
        };
        tensors = 0;
        nodes = 0;
        for g in &model.graphs {
            nodes += g.nodes.len();
            tensors += evaluate_graph(g, &bindings).iter().flatten().filter(|r| r.is_ok()).count();
        }
        let t2 = Instant::now();
        load_times.push(t1 - t0);
        shape_times.push(t2 - t1);
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let doc = json!({
        "file": file.display().to_string(),
        "repeat": repeat,
        "nodes": nodes,
        "tensors": tensors,
        "import_median_ms": ms(median(&mut load_times)),
        "shapes_median_ms": ms(median(&mut shape_times)),
        "total_median_ms": ms(median(&mut load_times.iter().zip(&shape_times).map(|(a, b)| *a + *b).collect::<Vec<_>>())),
    });
    super::print_json(&doc);
    ExitCode::SUCCESS
}

pub(crate) fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// One scope, as the call sites write them (a name and a cheap `&str` of data).
#[inline(never)]
fn scoped(i: u64) -> u64 {
    puffin::profile_scope!("bench_scope", "data");
    std::hint::black_box(i)
}

/// [`scoped`] without the scope: what the call itself costs.
#[inline(never)]
fn unscoped(i: u64) -> u64 {
    std::hint::black_box(i)
}

/// Median nanoseconds per scope over `repeat` rounds of `scopes` scopes. `nested` opens them all
/// inside one enclosing scope (the usual case: launches inside a repetition); otherwise each is
/// top-level and is handed to puffin's global profiler when it closes.
fn ns_per_scope(on: bool, nested: bool, scopes: u64, repeat: usize) -> f64 {
    puffin::set_scopes_on(on);
    let mut rounds = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        let t0 = Instant::now();
        if nested {
            puffin::profile_scope!("bench_round");
            for i in 0..scopes {
                scoped(i);
            }
        } else {
            for i in 0..scopes {
                scoped(i);
            }
        }
        rounds.push(t0.elapsed());
        // Hand the recorded scopes over (and drop them: no sink) outside the timed part.
        puffin::GlobalProfiler::lock().new_frame();
    }
    puffin::set_scopes_on(false);
    median(&mut rounds).as_nanos() as f64 / scopes as f64
}

/// `bench puffin`: what a `profile_scope!` costs with scopes off (the default) and on.
pub fn puffin_overhead(scopes: u64, repeat: usize) -> ExitCode {
    let (scopes, repeat) = (scopes.max(1), repeat.max(1));
    let baseline = {
        let mut rounds = Vec::with_capacity(repeat);
        for _ in 0..repeat {
            let t0 = Instant::now();
            for i in 0..scopes {
                unscoped(i);
            }
            rounds.push(t0.elapsed());
        }
        median(&mut rounds).as_nanos() as f64 / scopes as f64
    };
    let doc = json!({
        "scopes_per_round": scopes,
        "repeat": repeat,
        "call_without_scope_ns": baseline,
        "off_ns_per_scope": ns_per_scope(false, true, scopes, repeat),
        "on_nested_ns_per_scope": ns_per_scope(true, true, scopes, repeat),
        "on_top_level_ns_per_scope": ns_per_scope(true, false, scopes, repeat),
    });
    super::print_json(&doc);
    ExitCode::SUCCESS
}

/// `bench kernels`: achieved bandwidth of generated kernels against a plain copy kernel on the
/// same OpenCL device, over buffer sizes from 1 MB up to `max_mb`, plus the kernel counts of
/// every sample's lite and full plans.
pub fn kernels(max_mb: usize, repeat: usize) -> ExitCode {
    use crate::codegen::spirv;
    use crate::runtime::opencl::OpenClDevice;
    use crate::runtime::Device;

    let mut dev = match OpenClDevice::open() {
        Ok(d) => d,
        Err(e) => return super::fail(super::EXIT_FAILED, &e),
    };
    let info = dev.info().clone();
    // Three buffers of the largest size must fit comfortably beside everything else.
    let cap_mb = (info.global_mem_bytes / (1 << 20) / 8) as usize;
    let mut rows = Vec::new();
    let top = max_mb.min(cap_mb.max(1));
    let mut sizes: Vec<usize> = std::iter::successors(Some(1usize), |m| Some(m * 8)).take_while(|m| *m <= top).collect();
    if sizes.last() != Some(&top) {
        sizes.push(top);
    }
    for mb in sizes {
        for which in [Bench::Copy, Bench::Pointwise, Bench::Reduction, Bench::ReductionRows] {
            let kernel = synthetic(which);
            let module = match spirv::compile(&kernel) {
                Ok(m) => m,
                Err(e) => return super::fail(super::EXIT_FAILED, &e),
            };
            let bytes = mb << 20;
            match time_kernel(&mut dev, &kernel, &module, (bytes / 4) as i64, bytes, repeat) {
                Ok((ns, bytes)) => rows.push(json!({
                    "kernel": kernel.name,
                    "mb": mb,
                    "bytes_moved": bytes,
                    "median_ns": ns,
                    "gb_per_s": bytes as f64 / ns.max(1) as f64,
                })),
                Err(e) => return super::fail(super::EXIT_FAILED, &e),
            }
        }
    }
    // Square matrix products, serial dot product per work-item against 16×16 tiles.
    let mut matmuls = Vec::new();
    for side in [128usize, 256, 512, 1024] {
        for which in [Bench::Matmul, Bench::MatmulTiled] {
            let kernel = synthetic(which);
            let module = match spirv::compile(&kernel) {
                Ok(m) => m,
                Err(e) => return super::fail(super::EXIT_FAILED, &e),
            };
            match time_kernel(&mut dev, &kernel, &module, side as i64, side * side * 4, repeat) {
                Ok((ns, _)) => matmuls.push(json!({
                    "kernel": kernel.name,
                    "m_n_k": side,
                    "median_ns": ns,
                    "gflop_per_s": 2.0 * (side as f64).powi(3) / ns.max(1) as f64,
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
        "work_group": crate::runtime::plan::WORK_GROUP,
        "kernels": rows,
        "matmuls": matmuls,
        "plans": plans,
    }));
    ExitCode::SUCCESS
}

#[derive(Clone, Copy)]
enum Bench {
    Copy,
    Pointwise,
    /// One work-item folds each row serially.
    Reduction,
    /// The same kernel on the row schedule: one work-group per row.
    ReductionRows,
    /// `n × n` matrix product, one work-item per output.
    Matmul,
    /// The same kernel on the tiled schedule.
    MatmulTiled,
}

/// Elements per row of the reduction benchmark.
const ROW: i64 = 1024;

/// The benchmark kernels, built with the same IR and code generator as compiled plans, over a
/// dynamic element count `n` (an i64 argument, as dynamic dims are; the side for matmuls), on
/// the schedule the lowering would give them or, for the serial baselines, the elementwise one.
fn synthetic(which: Bench) -> crate::lower::Kernel {
    use crate::lower::kernel::{Access, BinOp, KernelBuilder, RedOp, Store, UnOp, VarId};
    use crate::lower::schedule;
    use crate::sym::Expr;
    let n = Expr::symbol("n");
    match which {
        Bench::ReductionRows => {
            let mut k = synthetic(Bench::Reduction);
            k.name = "fused_reduction_rows".into();
            k.schedule = schedule::choose(&k, true, false);
            return k;
        }
        Bench::Matmul | Bench::MatmulTiled => {
            let mut kb = KernelBuilder::new(2);
            let ok = "kernel IR of the benchmark is well-typed";
            let (a, b, out) = (kb.buffer("a", Access::Read), kb.buffer("b", Access::Read), kb.buffer("out", Access::Write));
            let d = kb.size(&n);
            let (i, j) = (kb.var(VarId(0)), kb.var(VarId(1)));
            let v = kb.fresh_var().expect(ok);
            let kv = kb.var(v);
            let ai = kb.binary(BinOp::Mul, i, d).expect(ok);
            let ai = kb.binary(BinOp::Add, ai, kv).expect(ok);
            let bi = kb.binary(BinOp::Mul, kv, d).expect(ok);
            let bi = kb.binary(BinOp::Add, bi, j).expect(ok);
            let (x, y) = (kb.load(a, ai), kb.load(b, bi));
            let p = kb.binary(BinOp::Mul, x, y).expect(ok);
            let s = kb.reduce(RedOp::Sum, v, d, p).expect(ok);
            let name = if matches!(which, Bench::Matmul) { "matmul" } else { "matmul_tiled" };
            let mut k = kb.finish(name.into(), vec![n.clone(), n], vec![d, d], vec![Store { buf: out, value: s }]);
            if matches!(which, Bench::MatmulTiled) {
                k.schedule = schedule::choose(&k, false, true);
            }
            return k;
        }
        _ => {}
    }
    let mut kb = KernelBuilder::new(1);
    let i = kb.var(VarId(0));
    let ok = "kernel IR of the benchmark is well-typed";
    match which {
        Bench::Copy => {
            let (a, out) = (kb.buffer("a", Access::Read), kb.buffer("out", Access::Write));
            let d = kb.size(&n);
            let v = kb.load(a, i);
            kb.finish("copy".into(), vec![n], vec![d], vec![Store { buf: out, value: v }])
        }
        Bench::Pointwise => {
            // gelu(a·b + 1) · exp(-|a|): a fused chain of six pointwise ops, two inputs.
            let (a, b, out) = (kb.buffer("a", Access::Read), kb.buffer("b", Access::Read), kb.buffer("out", Access::Write));
            let d = kb.size(&n);
            let (x, y) = (kb.load(a, i), kb.load(b, i));
            let one = kb.f32(1.0);
            let xy = kb.binary(BinOp::Mul, x, y).expect(ok);
            let t = kb.binary(BinOp::Add, xy, one).expect(ok);
            let k = kb.f32(std::f32::consts::FRAC_1_SQRT_2);
            let e = kb.binary(BinOp::Mul, t, k).expect(ok);
            let e = kb.unary(UnOp::Erf, e);
            let e = kb.binary(BinOp::Add, e, one).expect(ok);
            let half = kb.f32(0.5);
            let g = kb.binary(BinOp::Mul, t, half).expect(ok);
            let g = kb.binary(BinOp::Mul, g, e).expect(ok);
            let ax = kb.unary(UnOp::Abs, x);
            let nx = kb.unary(UnOp::Neg, ax);
            let ex = kb.unary(UnOp::Exp, nx);
            let v = kb.binary(BinOp::Mul, g, ex).expect(ok);
            kb.finish("fused_pointwise".into(), vec![n], vec![d], vec![Store { buf: out, value: v }])
        }
        Bench::Reduction => {
            // Row sums of exp(x): one output per row of ROW elements.
            let rows = Expr::floordiv(n.clone(), Expr::int(ROW));
            let (a, out) = (kb.buffer("a", Access::Read), kb.buffer("out", Access::Write));
            let d = kb.size(&rows);
            let j = kb.fresh_var().expect(ok);
            let jv = kb.var(j);
            let row = kb.i64(ROW);
            let base = kb.binary(BinOp::Mul, i, row).expect(ok);
            let at = kb.binary(BinOp::Add, base, jv).expect(ok);
            let x = kb.load(a, at);
            let x = kb.unary(UnOp::Exp, x);
            let s = kb.reduce(RedOp::Sum, j, row, x).expect(ok);
            kb.finish("fused_reduction".into(), vec![rows], vec![d], vec![Store { buf: out, value: s }])
        }
        Bench::ReductionRows | Bench::Matmul | Bench::MatmulTiled => unreachable!("built above"),
    }
}

/// Median device time of `repeat` launches with `n` bound to `n` and input buffers of `bytes`,
/// and the bytes each launch reads and writes.
fn time_kernel(
    dev: &mut crate::runtime::opencl::OpenClDevice,
    kernel: &crate::lower::Kernel,
    module: &crate::codegen::spirv::SpirvModule,
    n: i64,
    bytes: usize,
    repeat: usize,
) -> Result<(u64, u64), crate::runtime::RuntimeError> {
    use crate::lower::kernel::Access;
    use crate::runtime::{Device, KernelArg};
    let b = {
        let mut b = crate::sym::Bindings::new();
        b.set("n", n);
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
            crate::runtime::RuntimeError::OutOfMemory { bytes, .. } => crate::runtime::RuntimeError::OutOfMemory { bytes, kernel: Some(kernel.name.clone()) },
            e => e,
        })?;
        // 0.5f everywhere: finite for every benchmark expression.
        dev.write(id, &0x3f00_0000u32.to_le_bytes().repeat(len / 4))?;
        held.push(id);
        args.push(KernelArg::Buffer(id));
    }
    for p in &kernel.params {
        args.push(KernelArg::I64(p.eval_int(&b).unwrap_or(0)));
    }
    let program = dev.build(&kernel.name, &module.words)?;
    let (global, local) = crate::runtime::plan::launch_grid(kernel, &b)
        .ok()
        .flatten()
        .ok_or_else(|| crate::runtime::RuntimeError::Invalid { what: "benchmark size", detail: format!("`{}` has an empty grid", kernel.name) })?;
    // One warm-up launch: the first pays for the driver's lazy JIT and page faults.
    let warm = dev.launch(program, &kernel.name, &args, global, Some(local))?;
    dev.finish()?;
    dev.timing(warm)?;
    let mut times = Vec::with_capacity(repeat);
    for _ in 0..repeat.max(1) {
        let ev = dev.launch(program, &kernel.name, &args, global, Some(local))?;
        dev.finish()?;
        times.push(Duration::from_nanos(dev.timing(ev)?.duration_ns()));
    }
    for id in held {
        dev.free(id)?;
    }
    Ok((median(&mut times).as_nanos() as u64, moved))
}
fn stats(times: &mut [Duration]) -> serde_json::Value {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    times.sort();
    json!({
        "median_ms": ms(median(times)),
        "min_ms": ms(times.first().copied().unwrap_or_default()),
        "max_ms": ms(times.last().copied().unwrap_or_default()),
        "n": times.len(),
    })
}

/// `bench slider`: the app's slider hot path on every view of the file's first graph.
pub fn slider(file: &Path, repeat: usize) -> ExitCode {
    let model = match super::load(file) {
        Ok(m) => m,
        Err(code) => return code,
    };
    match crate::ui::bench::slider(&model, repeat.max(1)) {
        Ok(mut t) => {
            let views: Vec<_> = t
                .views
                .iter()
                .map(|(v, nodes, tensors)| json!({"view": v.name(), "nodes": nodes, "tensors": tensors}))
                .collect();
            super::print_json(&json!({
                "file": file.display().to_string(),
                "symbol": t.symbol,
                "views": views,
                "original_only": stats(&mut t.original_only),
                "all_views": stats(&mut t.all_views),
            }));
            ExitCode::SUCCESS
        }
        Err(e) => super::fail(super::EXIT_USAGE, &format!("{}: {e}", file.display())),
    }
}

/// `bench frame`: headless frame times of the graph views.
pub fn frame(file: &Path, nodes: &[usize], frames: usize, node_graph: bool) -> ExitCode {
    use crate::ui::bench::{frame_times, Renderer};
    let model = match super::load(file) {
        Ok(m) => m,
        Err(code) => return code,
    };
    if model.graphs.is_empty() {
        return super::fail(super::EXIT_USAGE, &format!("{}: the file holds no graph", file.display()));
    }
    let total = model.graphs[0].nodes.len();
    let mut rows = Vec::new();
    for &n in nodes {
        let n = n.min(total);
        let mut renderers = vec![Renderer::CanvasFit, Renderer::CanvasReadable, Renderer::CanvasFirstView, Renderer::CanvasFoldAll];
        if node_graph {
            renderers.insert(0, Renderer::NodeGraph);
        }
        for r in renderers {
            let mut f = frame_times(&model, n, r, frames.max(1));
            rows.push(json!({"nodes": n, "renderer": r.name(), "frame": stats(&mut f.times), "vertices": f.vertices, "boxes_in_view": f.visible, "zoom": f.zoom, "setup_ms": f.layout.as_secs_f64() * 1e3}));
        }
    }
    super::print_json(&json!({"file": file.display().to_string(), "screen": "1600x1000", "rows": rows}));
    ExitCode::SUCCESS
}
