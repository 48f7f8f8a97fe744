//! No OpInfo case may panic, at any stage. Every case `scripts/gen_opinfo.py` exported (the
//! committed set, or `OPINFO_DIR`) goes through every stage a user's graph can reach — import,
//! the reference interpreter, and in each decomposition mode (none, core, lite, full) the
//! decomposition, the lowering, SPIR-V code generation and a run on OpenCL — each stage under
//! its own `catch_unwind`, so a panic in one stage or one op cannot hide a panic in another.
//! Errors are fine here (`tests/opinfo.rs` counts them); the test fails listing every panic,
//! grouped by stage and op.
//!
//! `OPINFO_ONLY=name,name` restricts the sweep to some ops; `OPINFO_SWEEP_MODES=none,full`
//! to some modes; `OPINFO_SWEEP_RUN=0` skips the OpenCL runs (lowering and codegen still run).

mod common;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use common::opinfo::{read_archive, Case, Members};
use xpu_workbench::decomp::{self, Marks, Mode};
use xpu_workbench::exec;
use xpu_workbench::runtime::opencl::OpenClDevice;
use xpu_workbench::runtime::plan::{compile_plan, run_on_device};
use xpu_workbench::{import, lower};

thread_local! {
    /// Where the last panic on this thread happened (set by the test's panic hook).
    static PANIC_AT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Runs `f`, turning a panic into `Err("message at file:line")`; an `Err` it returns itself is
/// `Ok(None)`.
fn stage<T>(f: impl FnOnce() -> Result<T, String>) -> Result<Option<T>, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Ok(r.ok()),
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Err(format!("{} at {}", msg.lines().next().unwrap_or(""), PANIC_AT.with(|a| a.borrow().clone())))
        }
    }
}

/// The stage's result; a panic is noted in `panics` under `what`.
fn record<T>(panics: &mut Vec<(String, String)>, what: &str, r: Result<Option<T>, String>) -> Option<T> {
    r.unwrap_or_else(|msg| {
        panics.push((what.to_string(), msg));
        None
    })
}

/// Every panic of one case: (stage, message).
fn sweep_case(case: &Case, files: &Members, modes: &[Mode], mut dev: Option<&mut OpenClDevice>) -> Vec<(String, String)> {
    let mut panics = Vec::new();
    let k = case.case;
    let Some(pt2) = files.get(&format!("{k}.pt2")) else { return panics };
    let Ok(inputs) = common::opinfo::inputs(case, files) else { return panics };
    let name = format!("{}#{k}", case.file);
    let Some(model) = record(&mut panics, "import", stage(|| import::pt2::load_bytes(&name, pt2).map_err(|e| e.to_string()))) else { return panics };
    let Some(graph) = model.graphs.first() else { return panics };
    record(&mut panics, "interpreter", stage(|| exec::run(&model, graph, &inputs).map_err(|e| e.to_string())));
    for &mode in modes {
        let m = mode.name();
        let Some(d) = record(&mut panics, &format!("decompose ({m})"), stage(|| decomp::decompose(graph, mode, &Marks::default()).map_err(|e| e.to_string()))) else {
            continue;
        };
        let Some(plan) = record(&mut panics, &format!("lower ({m})"), stage(|| lower::lower_decomposed(&model, &d).map_err(|e| e.to_string()))) else { continue };
        let Some(modules) = record(&mut panics, &format!("codegen ({m})"), stage(|| compile_plan(&plan).map_err(|e| e.to_string()))) else { continue };
        if let Some(dev) = dev.as_deref_mut() {
            record(
                &mut panics,
                &format!("run on OpenCL ({m})"),
                stage(|| {
                    let b = exec::infer_bindings(&model, &plan.graph, &inputs).map_err(|e| e.to_string())?;
                    run_on_device(dev, &plan, &modules, &model, &inputs, &b).map(|_| ()).map_err(|e| e.to_string())
                }),
            );
        }
    }
    panics
}

#[test]
fn no_opinfo_case_panics_at_any_stage() {
    let index = common::opinfo::index();
    let only: Option<Vec<String>> = std::env::var("OPINFO_ONLY").ok().map(|s| s.split(',').map(str::to_string).collect());
    let modes: Vec<Mode> = match std::env::var("OPINFO_SWEEP_MODES") {
        Ok(s) => s
            .split(',')
            .map(|m| match m {
                "none" => Mode::None,
                "core" => Mode::Core,
                "lite" => Mode::Lite,
                "full" => Mode::Full,
                other => panic!("OPINFO_SWEEP_MODES: unknown mode `{other}` (none, core, lite, full)"),
            })
            .collect(),
        Err(_) => vec![Mode::None, Mode::Core, Mode::Lite, Mode::Full],
    };
    let mut dev = match std::env::var("OPINFO_SWEEP_RUN").as_deref() {
        Ok("0") => None,
        _ => OpenClDevice::open().map_or_else(|e| common::skip_opencl(e.to_string()), Some),
    };
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| PANIC_AT.with(|a| *a.borrow_mut() = info.location().map_or_else(String::new, |l| l.to_string()))));
    // (stage, op) -> the cases that panicked there, with the first message.
    let mut panics: BTreeMap<(String, String), (Vec<String>, String)> = BTreeMap::new();
    let mut archive: Option<(String, Result<Members, String>)> = None;
    let mut swept = 0;
    for case in &index.cases {
        if only.as_ref().is_some_and(|o| !o.contains(&case.op)) {
            continue;
        }
        if archive.as_ref().is_none_or(|(f, _)| *f != case.file) {
            archive = Some((case.file.clone(), read_archive(&case.file)));
        }
        let Some((_, Ok(files))) = &archive else { continue };
        swept += 1;
        for (what, msg) in sweep_case(case, files, &modes, dev.as_mut()) {
            let entry = panics.entry((what, case.op.clone())).or_insert_with(|| (Vec::new(), msg));
            entry.0.push(format!("#{} {}", case.case, case.dtype));
        }
    }
    std::panic::set_hook(hook);
    let report: Vec<String> = panics.iter().map(|((what, op), (cases, msg))| format!("{what}: {op} [{}]: {msg}", cases.join(", "))).collect();
    let ops: std::collections::BTreeSet<&str> = panics.keys().map(|(_, op)| op.as_str()).collect();
    println!("swept {swept} cases from torch {} through {} modes: {} panicking (stage, op) pairs in {} ops", index.torch, modes.len(), report.len(), ops.len());
    assert!(report.is_empty(), "{} ops panic at some stage:\n{}", ops.len(), report.join("\n"));
}

/// Beyond the OpInfo samples (torch.export traces `movedim` into `permute`, so no exported case
/// calls it): a graph that keeps `movedim` (a dynamo graph of a TORCH_TRACE log) on a 0-dim
/// tensor, whose dims 0 and -1 PyTorch accepts, returns the tensor unchanged
/// (`torch.movedim(torch.tensor(2.5), 0, -1)` is `tensor(2.5)`) in the interpreter and through
/// OpenCL in every mode; both indexed an empty permutation with the wrapped dim 0.
#[test]
fn a_zero_dim_movedim_is_the_identity() {
    use common::graph_case::{lowered, GraphCase};
    use xpu_workbench::exec::Tensor;
    use xpu_workbench::ir::{Arg, DType};
    let mut g = GraphCase::new("movedim0");
    let x = g.input(Tensor::from_vec(&[], vec![2.5f32]).expect("tensor"));
    let args = vec![("self", Arg::Tensor(x)), ("source", Arg::Ints(vec![0])), ("destination", Arg::Ints(vec![-1]))];
    let out = g.node("aten.movedim.intlist", args, &[(DType::F32, &[])])[0];
    let (model, inputs) = g.model(&[out]);
    let got = exec::run(&model, &model.graphs[0], &inputs).expect("interpreter");
    assert_eq!(got[0].to_f64_vec(), vec![2.5]);
    let mut dev = common::opencl_device();
    for mode in [Mode::None, Mode::Core, Mode::Lite, Mode::Full] {
        let (plan, modules) = lowered(&model, mode);
        let Some(dev) = dev.as_mut() else { continue };
        let b = exec::infer_bindings(&model, &plan.graph, &inputs).expect("bindings");
        let r = run_on_device(dev, &plan, &modules, &model, &inputs, &b).expect("runs");
        assert_eq!(r.outputs[0].to_f64_vec(), vec![2.5], "{}", mode.name());
    }
}
