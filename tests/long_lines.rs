//! Sorts and scans of long lines against PyTorch: the cases of `tests/data/long_lines`
//! (`scripts/gen_long_lines.py`: `argsort` of 8,000 float32 values, sorts of several dtypes
//! with ties, NaN and ±0.0, ascending and descending, stable or not, inner and outer dims,
//! `msort`, `topk` of lines longer than 16, `cumsum`/`cumprod`/`logcumsumexp`/`cummax`/`cummin`
//! of lines scanned in blocks) run through the interpreter and through OpenCL (mode none: the
//! merge-pass kernels of `lower::ops::merge_sort`, the blocked scans of `lower::ops::block_scan`;
//! and in mode full, whose kernels are named and grouped otherwise), every module validated by
//! `spirv-val`.
//! Sorts and running extremes must equal PyTorch's outputs bit for bit; float sums must be
//! within PyTorch's `assert_close` defaults (the case's `rtol`/`atol`). The 8,000-value
//! `argsort` must also finish within a generous bound: the stable-rank lowering it replaces took
//! 197 s on this machine's OpenCL CPU device.

mod common;

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::opinfo::{self, Case, Members};
use xpu_workbench::runtime::plan::{compile_plan, run_on_device};

/// Lowering, compiling, building and running the 8,000-value `argsort` must take less than this.
const BOUND: Duration = Duration::from_secs(5);

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/long_lines")
}

/// Equality with PyTorch's outputs: shape and dtype, then bit for bit where the case's
/// tolerance is 0, else `|a - b| <= atol + rtol·|b|` (infinities equal to themselves, NaN to
/// NaN); names the first element that differs.
fn same(case: &Case, got: &[Tensor], want: &[Tensor]) -> Result<(), String> {
    let what = case.key();
    if got.len() != want.len() {
        return Err(format!("{what}: {} outputs, PyTorch {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.shape() != w.shape() || g.dtype() != w.dtype() {
            return Err(format!("{what}: output {i} is {} {:?}, PyTorch {} {:?}", g.dtype(), g.shape(), w.dtype(), w.shape()));
        }
        let (rtol, atol) = (case.rtol.get(i).copied().unwrap_or(0.0), case.atol.get(i).copied().unwrap_or(0.0));
        if rtol > 0.0 || atol > 0.0 {
            let (a, b) = (g.to_f64_vec(), w.to_f64_vec());
            if let Some(at) = a.iter().zip(&b).position(|(x, y)| !(x == y || x.is_nan() && y.is_nan() || (x - y).abs() <= atol + rtol * y.abs())) {
                return Err(format!("{what}: output {i} element {at}: {}, PyTorch {} (rtol {rtol:e}, atol {atol:e})", a[at], b[at]));
            }
        } else if g.to_le_bytes() != w.to_le_bytes() {
            let (a, b) = (g.to_f64_vec(), w.to_f64_vec());
            let at = a.iter().zip(&b).position(|(x, y)| x.to_bits() != y.to_bits()).unwrap_or(0);
            return Err(format!("{what}: output {i} element {at}: {:?}, PyTorch {:?}", a.get(at), b.get(at)));
        }
    }
    Ok(())
}

/// The sort dim of a case whose graph calls PyTorch's unstable sort (`sort.default`,
/// `msort`), whose order among equal values is its own algorithm's and not promised; `None`
/// for every other case.
fn unstable_dim(model: &xpu_workbench::ir::Model, rank: usize) -> Option<usize> {
    let node = model.graphs.first()?.nodes.iter().find(|n| n.target == "aten.sort.default" || n.target == "aten.msort.default")?;
    if node.target == "aten.msort.default" {
        return Some(0);
    }
    let d = match node.arg("dim") {
        Some(xpu_workbench::ir::Arg::Int(d)) => *d,
        _ => -1,
    };
    usize::try_from(if d < 0 { d + rank as i64 } else { d }).ok()
}

/// An unstable sort's outputs: values equal to PyTorch's as numbers (-0.0 equal to 0.0, NaN to
/// NaN), and indices (when there are any) a permutation of each line that picks exactly those
/// values from the input.
fn same_unstable(case: &Case, input: &Tensor, d: usize, got: &[Tensor], want: &[Tensor]) -> Result<(), String> {
    let what = case.key();
    let (gv, wv) = (got[0].to_f64_vec(), want[0].to_f64_vec());
    if got[0].shape() != want[0].shape() || got[0].dtype() != want[0].dtype() {
        return Err(format!("{what}: values {} {:?}, PyTorch {} {:?}", got[0].dtype(), got[0].shape(), want[0].dtype(), want[0].shape()));
    }
    if let Some(at) = gv.iter().zip(&wv).position(|(a, b)| !(a == b || a.is_nan() && b.is_nan())) {
        return Err(format!("{what}: value {at}: {}, PyTorch {}", gv[at], wv[at]));
    }
    let Some(ix) = got.get(1) else { return Ok(()) };
    let shape = input.shape();
    let (n, inner) = (shape[d], shape[d + 1..].iter().product::<usize>());
    let (x, ix) = (input.to_f64_vec(), ix.to_f64_vec());
    for line in 0..x.len() / n.max(1) {
        let (o, i) = (line / inner, line % inner);
        let mut seen = vec![false; n];
        for p in 0..n {
            let at = (o * n + p) * inner + i;
            let k = ix[at] as usize;
            if k >= n || std::mem::replace(&mut seen[k], true) {
                return Err(format!("{what}: indices of line {line} are not a permutation (index {k} at {p})"));
            }
            if x[(o * n + k) * inner + i].to_bits() != gv[at].to_bits() {
                return Err(format!("{what}: index {k} at {at} picks {}, the value there is {}", x[(o * n + k) * inner + i], gv[at]));
            }
        }
    }
    Ok(())
}

/// [`same`], or [`same_unstable`] for the cases of PyTorch's unstable sort.
fn check(case: &Case, model: &xpu_workbench::ir::Model, inputs: &[Tensor], got: &[Tensor], want: &[Tensor]) -> Result<(), String> {
    match unstable_dim(model, inputs[0].ndim()) {
        Some(d) => same_unstable(case, &inputs[0], d, got, want),
        None => same(case, got, want),
    }
}

fn load(case: &Case, files: &Members) -> (xpu_workbench::ir::Model, Vec<Tensor>, Vec<Tensor>) {
    let model = opinfo::model(case, files).expect("case graph");
    let inputs = opinfo::inputs(case, files).expect("case inputs");
    let want = opinfo::outputs(case, files).expect("PyTorch's outputs");
    (model, inputs, want)
}

#[test]
fn interpreter_sorts_as_pytorch() {
    let index = opinfo::read_index(&dir()).expect("tests/data/long_lines/index.json");
    assert!(index.cases.len() >= 10);
    let mut failures = Vec::new();
    for case in &index.cases {
        let files = opinfo::read_archive(&dir(), &case.file).expect("archive");
        let (model, inputs, want) = load(case, &files);
        let got = exec::run(&model, &model.graphs[0], &inputs).expect("interpreter");
        if let Err(e) = check(case, &model, &inputs, &got, &want) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One case on OpenCL, lowered in `mode`: its outputs and how long lowering, compiling and
/// running took.
fn run_opencl(case: &Case, files: &Members, mode: Mode) -> Result<(Vec<Tensor>, Duration), String> {
    let (model, inputs, _) = load(case, files);
    let mut dev = xpu_workbench::runtime::opencl::OpenClDevice::open().map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let graph = &model.graphs[0];
    let plan = xpu_workbench::lower::lower(&model, graph, mode, &Marks::default()).map_err(|e| e.to_string())?;
    let modules = compile_plan(&plan).map_err(|e| e.to_string())?;
    for m in modules.iter().flatten() {
        if let Some(Err(e)) = common::spirv_val(m) {
            return Err(format!("spirv-val rejects `{}`: {}", m.name, e.lines().next().unwrap_or("")));
        }
    }
    let b = exec::infer_bindings(&model, &plan.graph, &inputs).map_err(|e| e.to_string())?;
    let r = run_on_device(&mut dev, &plan, &modules, &model, &inputs, &b).map_err(|e| e.to_string())?;
    Ok((r.outputs, t0.elapsed()))
}

#[test]
fn opencl_sorts_as_pytorch_and_argsort_of_8000_floats_takes_milliseconds() {
    if common::opencl_device().is_none() {
        return;
    }
    let index = opinfo::read_index(&dir()).expect("tests/data/long_lines/index.json");
    let mut failures = Vec::new();
    let mut timed = false;
    for case in &index.cases {
        let files = opinfo::read_archive(&dir(), &case.file).expect("archive");
        let (model, inputs, want) = load(case, &files);
        // On a worker thread, so that a kernel that runs for minutes fails the test at the
        // bound instead of holding it (the driver cannot cancel a launched kernel; the thread
        // is left behind and the process exits with the test).
        let (tx, rx) = mpsc::channel();
        let (c, f) = (case.clone(), files.clone());
        std::thread::spawn(move || {
            let _ = tx.send(run_opencl(&c, &f, Mode::None));
        });
        let big = case.inputs.iter().any(|(_, s)| s.iter().product::<usize>() >= 8000);
        let wait = if big { BOUND } else { Duration::from_secs(120) };
        match rx.recv_timeout(wait) {
            Ok(Ok((got, took))) => {
                if let Err(e) = check(case, &model, &inputs, &got, &want) {
                    failures.push(e);
                }
                if big {
                    timed = true;
                    eprintln!("{} ({:?}): lowered, compiled, validated (spirv-val), built and run in {took:?}", case.key(), case.inputs);
                }
            }
            Ok(Err(e)) => failures.push(format!("{}: {e}", case.key())),
            Err(_) => failures.push(format!("{}: no result within {wait:?}", case.key())),
        }
    }
    // Full mode: kernels named `fused_*`, pointwise producers and consumers around the sorts.
    for case in &index.cases {
        let files = opinfo::read_archive(&dir(), &case.file).expect("archive");
        let (model, inputs, want) = load(case, &files);
        match run_opencl(case, &files, Mode::Full) {
            Ok((got, _)) => {
                if let Err(e) = check(case, &model, &inputs, &got, &want) {
                    failures.push(format!("full mode: {e}"));
                }
            }
            Err(e) => failures.push(format!("{} (full mode): {e}", case.key())),
        }
    }
    assert!(timed, "the 8,000-value argsort case is missing from tests/data/long_lines");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
