//! `bench import`, `diff`, `puffin`, `slider` and `frame` (`bench kernels` and `bench models`
//! have their own files). `bench import`: how long loading a model and evaluating every shape takes,
//! as a median over repetitions, so `docs/PERFORMANCE.md` numbers can be reproduced with one
//! command.

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

/// `bench diff`: median time of [`crate::diff::diff`] on each pair of graphs the files give.
pub fn diff(a: &Path, b: &Path, stage: Option<&str>, repeat: usize) -> ExitCode {
    let repeat = repeat.max(1);
    let pairs = match crate::diff::graph_pairs(a, b, stage) {
        Ok(p) => p,
        Err(e) => return super::fail(super::EXIT_USAGE, &e),
    };
    let mut rows = Vec::new();
    for (la, ga, lb, gb) in &pairs.pairs {
        let mut times = Vec::with_capacity(repeat);
        let mut counts = None;
        for _ in 0..repeat {
            let t0 = Instant::now();
            let d = crate::diff::diff(ga, gb);
            times.push(t0.elapsed());
            counts = Some(d.counts);
        }
        rows.push(json!({
            "a": la, "b": lb, "a_nodes": ga.nodes.len(), "b_nodes": gb.nodes.len(), "counts": counts,
            "median_ms": median(&mut times).as_secs_f64() * 1e3,
        }));
    }
    super::print_json(&json!({"a": pairs.a_file, "b": pairs.b_file, "repeat": repeat, "pairs": rows, "load_average": load_average()}));
    ExitCode::SUCCESS
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`), for benchmark reports: device
/// times on a CPU device move with what else the machine runs.
pub(crate) fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = text.split_whitespace().map(|w| w.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
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
