//! PyTorch's OpInfo samples, op by op: every case `scripts/gen_opinfo.py` exported (a tiny graph
//! calling one op on one sample input, and PyTorch's eager outputs) runs through the reference
//! interpreter and through the OpenCL kernels (lowered in `none` mode, so every op is its own
//! kernel as in lite mode's fallbacks), and is compared with PyTorch's outputs like
//! `torch.testing.assert_close` compares: same shape and dtype, `|a - b| <= atol + rtol·|b|`
//! with PyTorch's default tolerances per dtype, NaN equal to NaN, infinities equal to themselves.
//! A float16, bfloat16 or float32 output outside those tolerances still passes when it is no
//! farther from PyTorch's float64 answer on the same sample (`K.refI.npy`) than eager's own
//! output is: the rule PyTorch's test_decomp applies to every decomposition in low precision,
//! because eager kernels round intermediate results at steps of their own (CPU convolution
//! backward rounds its column product to half before col2im). The summary counts those passes.
//!
//! Random ops and uninitialised tensors (`empty*`) cannot give PyTorch's values: their cases
//! carry a `check` rule in the index (written by `scripts/gen_opinfo.py`) and are compared by it
//! instead — random: same shape and dtype, every value in the sampler's support (integral where
//! the sampler is), finite when PyTorch's whole sample is, and a median within half an
//! interquartile range of PyTorch's on samples of at least 100 values (one range on 20);
//! uninitialised: shape and dtype only; an output whose eager shape contradicts the exported
//! graph's own metadata (bfloat16 `_embedding_bag`'s `offset2bag`): the metadata's shape. The summary prints how many cases were checked by rule. Eigenvectors and singular vectors, unique only up to
//! sign, are compared by value after each vector's sign is aligned with PyTorch's.
//!
//! An op Inductor only runs eagerly (`.eager()` linear algebra) runs on OpenCL as a host step
//! of the plan (the interpreter, between launches); the summary says how many OpenCL passes
//! used one, and `OPINFO_VERBOSE` marks those cases `opencl (host step)`.
//!
//! No case may panic. Per op, the number of passing cases may not drop below the floor committed
//! in `tests/data/opinfo_floor.json` (so coverage cannot silently regress); the summary printed
//! at the end is what `docs/OPS.md` reports. `OPINFO_WRITE_FLOOR=1` rewrites the floor file from
//! this run (after adding coverage); `OPINFO_ONLY=name,name` restricts the run to some ops;
//! `OPINFO_DIR=DIR` runs a set exported elsewhere (other samples, seed or torch version: cases
//! nobody tuned the code on) and prints its summary without holding it to the floor.

mod common;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use common::opinfo::{data_dir, read_archive, tensor, Case, Check, Members};
use serde::{Deserialize, Serialize};
use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::runtime::plan::{compile_plan, run_on_device};
use xpu_workbench::{import, lower};

/// `got` with each column (last-dim index; with `by_row`, each row) negated where it points away
/// from `want`'s.
fn align_columns(got: &Tensor, want: &Tensor, by_row: bool) -> Result<Tensor, String> {
    if got.shape() != want.shape() || got.ndim() < 2 {
        return Ok(got.clone());
    }
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    let s = got.shape();
    let (rows, cols) = (s[s.len() - 2], s[s.len() - 1]);
    // Vector `v` of a matrix, as (count, length, position of element `e` of vector `v`).
    let (count, len) = if by_row { (rows, cols) } else { (cols, rows) };
    let at = |v: usize, e: usize| if by_row { v * cols + e } else { e * cols + v };
    let mut out = g.clone();
    for (m, chunk) in out.chunks_mut((rows * cols).max(1)).enumerate() {
        let base = m * rows * cols;
        for v in 0..count {
            let dot: f64 = (0..len).map(|e| g[base + at(v, e)] * w[base + at(v, e)]).sum();
            if dot < 0.0 {
                (0..len).for_each(|e| chunk[at(v, e)] = -chunk[at(v, e)]);
            }
        }
    }
    Tensor::from_vec(s, out).ok_or("shape".to_string())?.cast(got.dtype()).map_err(|d| format!("cast to {d}"))
}

/// Per op: cases, how many pass in each backend, the ATen targets its graphs call (what
/// `xpu-workbench ops` attributes the counts to), and those of them that had no kernel and ran
/// through OpenCL expanded through their decomposition, in a case that passed (what `ops` calls
/// "via decomposition").
#[derive(Serialize, Deserialize, Default, Clone, Debug, PartialEq)]
struct Counts {
    cases: usize,
    interp: usize,
    opencl: usize,
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    targets: std::collections::BTreeSet<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    expanded: std::collections::BTreeSet<String>,
}

/// `assert_close`: shape, dtype, then elementwise closeness with NaN == NaN.
fn close(got: &Tensor, want: &Tensor, rtol: f64, atol: f64) -> Result<(), String> {
    if got.shape() != want.shape() {
        return Err(format!("shape {:?}, PyTorch {:?}", got.shape(), want.shape()));
    }
    if got.dtype() != want.dtype() {
        return Err(format!("dtype {}, PyTorch {}", got.dtype(), want.dtype()));
    }
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let ok = if a.is_nan() || b.is_nan() {
            a.is_nan() && b.is_nan()
        } else if a.is_infinite() || b.is_infinite() {
            a == b
        } else {
            (a - b).abs() <= atol + rtol * b.abs()
        };
        if !ok {
            return Err(format!("element {i}: {a}, PyTorch {b} (rtol {rtol:e}, atol {atol:e})"));
        }
    }
    Ok(())
}

/// Median and interquartile range of the finite values.
fn median_iqr(v: &[f64]) -> (f64, f64) {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    let q = |p: f64| s.get(((s.len() - 1) as f64 * p).round() as usize).copied().unwrap_or(0.0);
    (q(0.5), q(0.75) - q(0.25))
}

/// The `check` rule: shape and dtype always; for random values the support, finiteness, and on
/// samples large enough for it a loose comparison of medians with PyTorch's own sample.
fn by_rule(check: &Check, got: &Tensor, want: &Tensor) -> Result<(), String> {
    if got.shape() != want.shape() || got.dtype() != want.dtype() {
        return Err(format!("{} {:?}, PyTorch {} {:?}", got.dtype(), got.shape(), want.dtype(), want.shape()));
    }
    let Check::Random { support, open_hi, integral } = check else { return Ok(()) };
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    if let Some((lo, hi)) = support {
        let inside = |x: f64| x >= *lo && hi.is_none_or(|h| if *open_hi { x < h } else { x <= h });
        if let Some(x) = g.iter().find(|&&x| !inside(x) || (*integral && x.fract() != 0.0)) {
            return Err(format!("value {x} outside the support [{lo}, {hi:?}{}", if *open_hi { ")" } else { "]" }));
        }
    }
    // A sampler yields finite values, and ops the draws pass through keep finite inputs finite:
    // even where the support is the real line, a NaN or an infinity PyTorch never gave is wrong.
    if w.iter().all(|x| x.is_finite()) {
        if let Some(x) = g.iter().find(|x| !x.is_finite()) {
            return Err(format!("value {x}, where PyTorch's sample is finite"));
        }
    }
    // Medians within half an interquartile range on 100 values or more, one range on 20 or
    // more (a small sample's median is noisier); a tighter bound would fail correct samplers.
    let tolerance = match g.len() {
        n if n >= 100 => Some(0.5),
        n if n >= 20 => Some(1.0),
        _ => None,
    };
    if let Some(t) = tolerance {
        let ((mg, _), (mw, iqr)) = (median_iqr(&g), median_iqr(&w));
        if (mg - mw).abs() > t * iqr + 1e-6 {
            return Err(format!("median {mg}, PyTorch's sample {mw} (interquartile range {iqr})"));
        }
    }
    Ok(())
}

/// The random rule looks at the values: what falls outside the support, a NaN or infinity
/// where PyTorch's sample is finite, or a shifted median fails; a sample of the same
/// distribution passes.
#[test]
fn random_values_are_checked_by_rule() {
    let real_line = Check::Random { support: None, open_hi: false, integral: false };
    let unit = Check::Random { support: Some((0.0, Some(1.0))), open_hi: true, integral: false };
    let t = |v: Vec<f32>| Tensor::from_vec(&[v.len()], v).expect("tensor");
    let ramp = |n: usize, at: f32| t((0..n).map(|i| at + i as f32 / n as f32).collect());
    assert!(by_rule(&unit, &ramp(30, 0.0), &ramp(30, 0.0)).is_ok());
    assert!(by_rule(&unit, &ramp(30, 0.5), &ramp(30, 0.0)).is_err(), "outside [0, 1)");
    let mut nan = ramp(5, 0.0).to_f64_vec();
    nan[2] = f64::NAN;
    let nan = t(nan.iter().map(|&x| x as f32).collect());
    assert!(by_rule(&real_line, &nan, &ramp(5, 0.0)).is_err(), "NaN where PyTorch's sample is finite");
    assert!(by_rule(&real_line, &ramp(20, 0.0), &ramp(20, 0.1)).is_ok(), "one sample, shifted within its spread");
    assert!(by_rule(&real_line, &ramp(20, 3.0), &ramp(20, 0.0)).is_err(), "20 values: the median is compared");
    assert!(by_rule(&real_line, &ramp(200, 0.6), &ramp(200, 0.0)).is_err(), "200 values: within half a range");
}

/// How far PyTorch's eager answer may be from the float64 reference, beyond which ours may not
/// be: test_decomp's default (`op_assert_ref`); we keep none of its per-op loosenings.
const REFERENCE_ATOL: f64 = 1e-7;

/// PyTorch's own rule for a low-precision result computed in another order (test_decomp's
/// `op_assert_ref`, which judges every decomposition this way in float16 and bfloat16): with
/// the sample upcast to float64 as the reference, the largest distance of ours from it may not
/// exceed eager's largest distance plus `atol`. Eager kernels round at steps of their own
/// choosing (a half column product before col2im, per-thread partial sums), so a kernel that
/// rounds once can sit a unit in the last place from eager while being closer to the answer.
/// Positions where eager or the reference is not finite must equal eager's exactly.
fn closer_to_reference(got: &Tensor, want: &Tensor, reference: &Tensor, atol: f64) -> Result<(), String> {
    if got.shape() != want.shape() || reference.shape() != want.shape() {
        return Err(format!("shape {:?}, PyTorch {:?}, reference {:?}", got.shape(), want.shape(), reference.shape()));
    }
    let (g, w, r) = (got.to_f64_vec(), want.to_f64_vec(), reference.to_f64_vec());
    let (mut ours, mut eager) = (0.0f64, 0.0f64);
    for (i, ((a, b), x)) in g.iter().zip(&w).zip(&r).enumerate() {
        if !b.is_finite() || !x.is_finite() {
            if !(a == b || a.is_nan() && b.is_nan()) {
                return Err(format!("element {i}: {a}, PyTorch {b}"));
            }
            continue;
        }
        if !a.is_finite() {
            return Err(format!("element {i}: {a}, PyTorch {b}"));
        }
        ours = ours.max((a - x).abs());
        eager = eager.max((b - x).abs());
    }
    if ours > eager + atol {
        return Err(format!("farther from the float64 reference than PyTorch: {ours:e}, PyTorch {eager:e}"));
    }
    Ok(())
}

/// The reference rule passes an answer no farther from float64 than eager's and fails one
/// farther away, whatever its distance to eager.
#[test]
fn low_precision_answers_are_judged_against_the_float64_reference() {
    let t = |v: Vec<f64>| Tensor::from_vec(&[v.len()], v).expect("tensor");
    let reference = t(vec![1.0, 2.0, 3.0]);
    let eager = t(vec![1.002, 2.0, 3.0]);
    assert!(closer_to_reference(&t(vec![1.0, 2.001, 3.0]), &eager, &reference, REFERENCE_ATOL).is_ok());
    assert!(closer_to_reference(&t(vec![1.0, 2.003, 3.0]), &eager, &reference, REFERENCE_ATOL).is_err());
    assert!(closer_to_reference(&t(vec![f64::NAN, 2.0, 3.0]), &eager, &reference, REFERENCE_ATOL).is_err());
    let inf = t(vec![f64::INFINITY, 2.0, 3.0]);
    assert!(closer_to_reference(&inf, &inf, &reference, REFERENCE_ATOL).is_ok(), "non-finite where eager is: equal");
}

/// Ok(true) when an output passed only by the float64 reference rule.
fn compare(case: &Case, got: &[Tensor], want: &[Tensor], refs: &BTreeMap<usize, Tensor>) -> Result<bool, String> {
    if got.len() != want.len() {
        return Err(format!("{} outputs, PyTorch {}", got.len(), want.len()));
    }
    let mut by_reference = false;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        match &case.check {
            Some(Check::UpToSign { outputs, rows }) if outputs.contains(&i) || rows.contains(&i) => {
                align_columns(g, w, rows.contains(&i)).and_then(|g| close(&g, w, case.rtol[i], case.atol[i]))
            }
            Some(Check::MetadataShape { outputs }) if outputs.iter().any(|(o, _)| *o == i) => {
                let sizes = outputs.iter().find(|(o, _)| *o == i).map(|(_, s)| s.as_slice());
                if Some(g.shape()) == sizes && g.dtype() == w.dtype() {
                    Ok(())
                } else {
                    Err(format!("{} {:?}, the graph's metadata {:?} (eager {} {:?})", g.dtype(), g.shape(), sizes, w.dtype(), w.shape()))
                }
            }
            Some(Check::UpToSign { .. } | Check::MetadataShape { .. }) | None => close(g, w, case.rtol[i], case.atol[i]).or_else(|e| match refs.get(&i) {
                Some(r) => closer_to_reference(g, w, r, REFERENCE_ATOL).map(|()| by_reference = true).map_err(|e2| format!("{e}; {e2}")),
                None => Err(e),
            }),
            Some(c) => by_rule(c, g, w),
        }
        .map_err(|e| format!("output {i}: {e}"))?;
    }
    Ok(by_reference)
}

/// Ok(true): passed, some output only by the float64 reference rule.
type Outcome = Result<bool, String>;

fn panicked(p: Box<dyn std::any::Any + Send>) -> String {
    let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
    format!("PANIC: {msg}")
}

/// Both backends' outcomes, whether the OpenCL plan ran a host step, and the targets it
/// expanded for lowering.
type Outcomes = (Outcome, Outcome, bool, Vec<String>);

/// Runs one case through the interpreter and, lowered in `mode`, through OpenCL.
fn run_case(case: &Case, files: &BTreeMap<String, Vec<u8>>, dev: Option<&mut xpu_workbench::runtime::opencl::OpenClDevice>, mode: Mode) -> Result<Outcomes, String> {
    let k = case.case;
    let pt2 = files.get(&format!("{k}.pt2")).ok_or("no .pt2 in the archive")?;
    let name = format!("{}#{k}", case.file);
    let model = import::pt2::load_bytes(&name, pt2).map_err(|e| format!("import: {e}"))?;
    let inputs = common::opinfo::inputs(case, files)?;
    let want = case
        .outputs
        .iter()
        .enumerate()
        .map(|(i, (dt, _))| tensor(&format!("{k}.out{i}.npy"), files.get(&format!("{k}.out{i}.npy")).ok_or("missing output")?, dt))
        .collect::<Result<Vec<_>, _>>()?;
    let refs = case
        .refs
        .iter()
        .map(|&i| {
            let name = format!("{k}.ref{i}.npy");
            Ok((i, tensor(&name, files.get(&name).ok_or("missing reference")?, "float64")?))
        })
        .collect::<Result<BTreeMap<_, _>, String>>()?;
    let graph = model.graphs.first().ok_or("no graph")?;
    let interp = catch_unwind(AssertUnwindSafe(|| {
        exec::run(&model, graph, &inputs).map_err(|e| e.to_string()).and_then(|got| compare(case, &got, &want, &refs))
    }))
    .unwrap_or_else(|p| Err(panicked(p)));
    let mut host_step = false;
    let mut expanded = Vec::new();
    let opencl = match dev {
        None => Err("no OpenCL device".to_string()),
        Some(dev) => catch_unwind(AssertUnwindSafe(|| -> Outcome {
            let plan = lower::lower(&model, graph, mode, &Marks::default()).map_err(|e| e.to_string())?;
            host_step = plan.host_steps() > 0;
            expanded = plan.expanded.iter().map(|x| x.target.clone()).collect();
            let modules = compile_plan(&plan).map_err(|e| e.to_string())?;
            // Every module the case produced must validate, whatever the driver accepts.
            for m in modules.iter().flatten() {
                if let Some(Err(e)) = common::spirv_val(m) {
                    return Err(format!("spirv-val rejects `{}`: {}", m.name, e.lines().next().unwrap_or("")));
                }
            }
            let b = exec::infer_bindings(&model, &plan.graph, &inputs).map_err(|e| e.to_string())?;
            let r = run_on_device(dev, &plan, &modules, &model, &inputs, &b).map_err(|e| e.to_string())?;
            compare(case, &r.outputs, &want, &refs)
        }))
        .unwrap_or_else(|p| Err(panicked(p))),
    };
    Ok((interp, opencl, host_step, expanded))
}

/// The first words of an error, to group failures by cause in the summary.
fn cause(e: &str) -> String {
    let e = e.split(": ").skip_while(|p| p.starts_with("node `")).collect::<Vec<_>>().join(": ");
    e.chars().take(90).collect()
}

#[test]
fn opinfo_samples_match_pytorch() {
    let index = common::opinfo::index();
    let only: Option<Vec<String>> = std::env::var("OPINFO_ONLY").ok().map(|s| s.split(',').map(str::to_string).collect());
    let mut dev = xpu_workbench::runtime::opencl::OpenClDevice::open().map_or_else(|e| common::skip_opencl(e.to_string()), Some);
    // Keep the test's output readable: a failing case's panic is reported in the summary.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut counts: BTreeMap<String, Counts> = BTreeMap::new();
    let mut by_dtype: BTreeMap<String, Counts> = BTreeMap::new();
    let mut causes: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut panics = Vec::new();
    let mut archive: Option<(String, Result<Members, String>)> = None;
    // Cases compared by their `check` rule instead of PyTorch's values.
    let mut by_rule_counts = Counts::default();
    // OpenCL passes whose plan ran an eager-only op on the host (no generated kernel).
    let mut host_step_passes = 0;
    // Passes where some output met the float64 reference rule, not eager's tolerance.
    let mut by_reference = Counts::default();
    for case in &index.cases {
        if only.as_ref().is_some_and(|o| !o.contains(&case.op)) {
            continue;
        }
        if archive.as_ref().is_none_or(|(f, _)| *f != case.file) {
            archive = Some((case.file.clone(), read_archive(&case.file)));
        }
        let files = &archive.as_ref().expect("archive").1;
        let (interp, opencl, host_step, expanded) = match files.as_ref().map_err(String::clone).and_then(|files| run_case(case, files, dev.as_mut(), Mode::None)) {
            Ok(r) => r,
            Err(e) => (Err(e.clone()), Err(e), false, Vec::new()),
        };
        host_step_passes += usize::from(host_step && opencl.is_ok());
        by_reference.interp += usize::from(interp == Ok(true));
        by_reference.opencl += usize::from(opencl == Ok(true));
        if matches!(case.check, Some(Check::Random { .. } | Check::Uninitialized | Check::MetadataShape { .. })) {
            by_rule_counts.cases += 1;
            by_rule_counts.interp += usize::from(interp.is_ok());
            by_rule_counts.opencl += usize::from(opencl.is_ok());
        }
        let c = counts.entry(case.op.clone()).or_default();
        let d = by_dtype.entry(case.dtype.clone()).or_default();
        c.cases += 1;
        c.targets.extend(case.targets.iter().filter(|t| !t.starts_with("_operator.") && !t.contains("_assert_")).cloned());
        if opencl.is_ok() {
            c.expanded.extend(expanded);
        }
        d.cases += 1;
        for (backend, r) in [("interp", &interp), ("opencl", &opencl)] {
            match r {
                Ok(_) => {
                    if backend == "interp" {
                        c.interp += 1;
                        d.interp += 1;
                    } else {
                        c.opencl += 1;
                        d.opencl += 1;
                    }
                }
                Err(e) => {
                    if e.starts_with("PANIC") {
                        panics.push(format!("{} #{} ({}) {backend}: {e}", case.op, case.case, case.dtype));
                    }
                    *causes.entry((backend.to_string(), cause(e))).or_default() += 1;
                }
            }
        }
        if std::env::var("OPINFO_VERBOSE").is_ok() {
            let host = if host_step { " (host step)" } else { "" };
            let (interp, opencl) = (interp.as_ref().map(|r| if *r { "passed by float64 reference" } else { "passed" }), opencl.as_ref().map(|r| if *r { "passed by float64 reference" } else { "passed" }));
            println!("{} #{} {} {:?} interp {:?} opencl{host} {:?}", case.op, case.case, case.dtype, case.targets, interp, opencl);
        }
    }
    std::panic::set_hook(hook);

    let total = counts.values().fold(Counts::default(), |a, c| Counts {
        cases: a.cases + c.cases,
        interp: a.interp + c.interp,
        opencl: a.opencl + c.opencl,
        ..Default::default()
    });
    let pct = |n: usize| 100.0 * n as f64 / total.cases.max(1) as f64;
    println!("OpInfo cases from torch {} ({} ops, {} skipped at export):", index.torch, counts.len(), index.skipped.len());
    println!(
        "  interpreter {}/{} ({:.1} %), OpenCL {}/{} ({:.1} %; {} of these ran a host fallback step, an eager-only op through the interpreter)",
        total.interp,
        total.cases,
        pct(total.interp),
        total.opencl,
        total.cases,
        pct(total.opencl),
        host_step_passes
    );
    for (dt, c) in &by_dtype {
        println!("  {dt:>9}: interpreter {:>5}/{:<5} OpenCL {:>5}/{}", c.interp, c.cases, c.opencl, c.cases);
    }
    println!(
        "  of these, {} cases (random ops, uninitialised tensors, outputs whose eager shape contradicts the graph's metadata) are checked by rule, not by value: interpreter {}, OpenCL {}",
        by_rule_counts.cases, by_rule_counts.interp, by_rule_counts.opencl
    );
    println!(
        "  {} interpreter and {} OpenCL passes met PyTorch's tolerance only against the float64 reference (no farther from it than eager; test_decomp's rule)",
        by_reference.interp, by_reference.opencl
    );
    let mut top: Vec<_> = causes.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1));
    println!("most common failures:");
    for ((backend, e), n) in top.iter().take(40) {
        println!("  {n:>5} {backend}: {e}");
    }
    let results = serde_json::json!({
        "torch": index.torch,
        "total": total,
        "by_dtype": by_dtype,
        "ops": counts,
    });
    let floor_path = data_dir().join("opinfo_floor.json");
    let committed = std::env::var_os("OPINFO_DIR").is_none();
    if committed && only.is_none() && std::env::var("OPINFO_WRITE_FLOOR").is_ok_and(|v| v == "1") {
        std::fs::write(&floor_path, serde_json::to_string_pretty(&results).expect("json") + "\n").expect("write floor");
        println!("wrote {}", floor_path.display());
    }
    assert!(panics.is_empty(), "{} cases panicked:\n{}", panics.len(), panics.join("\n"));
    if !committed {
        return;
    }
    let floor: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&floor_path).unwrap_or_else(|_| "{}".into())).expect("floor JSON");
    let mut regressions = Vec::new();
    if let Some(ops) = floor.get("ops").and_then(|o| o.as_object()) {
        for (op, f) in ops {
            let Some(c) = counts.get(op) else { continue };
            let f: Counts = serde_json::from_value(f.clone()).expect("floor entry");
            if c.interp < f.interp {
                regressions.push(format!("{op}: interpreter passes {} of {}, the floor is {}", c.interp, c.cases, f.interp));
            }
            if dev.is_some() && c.opencl < f.opencl {
                regressions.push(format!("{op}: OpenCL passes {} of {}, the floor is {}", c.opencl, c.cases, f.opencl));
            }
        }
    }
    assert!(regressions.is_empty(), "coverage fell below tests/data/opinfo_floor.json:\n{}", regressions.join("\n"));
}

/// Reductions of a 0-dim tensor (and the ops that reduce inside: norms, normalize) in the modes
/// that fuse: full and lite mode asked how many elements each output folds and indexed the
/// sizes of a rank-0 input by its dim 0 (`lower::reduction_size`), a panic; core and full
/// decomposed a 0-dim `transpose` by swapping two entries of an empty permutation. Every
/// committed case of those ops, every dtype and shape (the 0-dim samples and the others), must
/// match PyTorch's outputs through OpenCL in each mode, as it does in mode `none`.
#[test]
fn zero_dim_reductions_match_pytorch_in_every_mode() {
    let ops = ["logsumexp", "norm", "nn.functional.normalize", "masked.normalize", "transpose", "sum", "amax", "mean", "var", "softmax"];
    let index = common::opinfo::index();
    let Some(mut dev) = xpu_workbench::runtime::opencl::OpenClDevice::open().map_or_else(|e| common::skip_opencl(e.to_string()), Some) else { return };
    let (mut failures, mut zero_dim, mut checked) = (Vec::new(), 0, 0);
    let mut archive: Option<(String, Members)> = None;
    for case in index.cases.iter().filter(|c| ops.contains(&c.op.as_str())) {
        if archive.as_ref().is_none_or(|(f, _)| *f != case.file) {
            archive = Some((case.file.clone(), read_archive(&case.file).expect("archive")));
        }
        let files = &archive.as_ref().expect("archive").1;
        zero_dim += usize::from(case.inputs.iter().any(|(_, s)| s.is_empty()));
        for mode in [Mode::Core, Mode::Lite, Mode::Full] {
            checked += 1;
            match run_case(case, files, Some(&mut dev), mode) {
                Ok((_, Ok(_), _, _)) => {}
                Ok((_, Err(e), _, _)) | Err(e) => failures.push(format!("{} #{} {} ({}): {e}", case.op, case.case, case.dtype, mode.name())),
            }
        }
    }
    assert!(zero_dim >= 12, "the committed set has {zero_dim} 0-dim cases of these ops");
    assert!(failures.is_empty(), "{} of {checked} runs differ from PyTorch:\n{}", failures.len(), failures.join("\n"));
}
