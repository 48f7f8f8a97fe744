//! The OpInfo cases `scripts/gen_opinfo.py` exported (`tests/data/opinfo`, or `OPINFO_DIR`),
//! read through the library's loader (`xpu_workbench::opinfo`, which `bench ops` uses too),
//! shared by `tests/opinfo.rs` (values against PyTorch's) and `tests/opinfo_no_panic.rs`
//! (every stage, no panic).

use std::path::PathBuf;

use xpu_workbench::exec::Tensor;
#[allow(unused_imports)] // each test crate uses its own part of it
pub use xpu_workbench::opinfo::{tensor, Case, Check, Index, Members};

pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Where the cases are: the committed set, or `OPINFO_DIR` (a set made with other samples or
/// another torch, e.g. `gen_opinfo.py DIR --pick=others --seed=1`), which is run and summarised
/// but not held to the committed floor.
pub fn cases_dir() -> PathBuf {
    std::env::var_os("OPINFO_DIR").map_or_else(|| data_dir().join("opinfo"), PathBuf::from)
}

/// The members of one op archive; an unreadable archive fails its cases (named), not the run.
pub fn read_archive(file: &str) -> Result<Members, String> {
    xpu_workbench::opinfo::read_archive(&cases_dir(), file).map_err(|e| e.to_string())
}

/// The index of the case set [`cases_dir`] names.
pub fn index() -> Index {
    xpu_workbench::opinfo::read_index(&cases_dir()).expect("tests/data/opinfo/index.json (scripts/gen_opinfo.py)")
}

/// Case `case`'s inputs from its archive's members.
pub fn inputs(case: &Case, files: &Members) -> Result<Vec<Tensor>, String> {
    xpu_workbench::opinfo::inputs(case, files).map_err(|e| e.to_string())
}

/// The case names of a block-test folder's `index.json` (`scripts/gen_*_blocks.py`), in the
/// order of its cases.
pub fn case_names(dir: &std::path::Path) -> Vec<String> {
    let path = dir.join("index.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    v["cases"].as_array().expect("a case list").iter().map(|c| c["name"].as_str().expect("every case is named").to_string()).collect()
}

/// `got` against PyTorch's `want` with the case's first tolerances (assert_close's rule).
pub fn close(what: &str, got: &Tensor, want: &Tensor, case: &Case) -> Result<(), String> {
    if got.shape() != want.shape() {
        return Err(format!("{what}: shape {:?}, PyTorch {:?}", got.shape(), want.shape()));
    }
    let (rtol, atol) = (case.rtol[0], case.atol[0]);
    let (a, b) = (got.to_f64_vec(), want.to_f64_vec());
    match a.iter().zip(&b).position(|(x, y)| !((x - y).abs() <= atol + rtol * y.abs())) {
        Some(i) => Err(format!("{what}: element {i}: {}, PyTorch {}", a[i], b[i])),
        None => Ok(()),
    }
}

/// A block test's plan compiled, every module held to `spirv-val`, and run on `dev` with
/// `inputs`: the run's outputs, or `None` with no device (a skip) or after pushing why the run
/// failed onto `failures` (each named by `what`).
pub fn compile_and_run(
    dev: &mut Option<xpu_workbench::runtime::opencl::OpenClDevice>,
    plan: &xpu_workbench::lower::Plan,
    model: &xpu_workbench::ir::Model,
    inputs: &[Tensor],
    what: &str,
    failures: &mut Vec<String>,
) -> Option<Vec<Tensor>> {
    let modules = xpu_workbench::runtime::plan::compile_plan(plan).expect("compiles");
    for m in modules.iter().flatten() {
        if let Some(Err(e)) = super::spirv_val(m) {
            failures.push(format!("{what}: spirv-val rejects `{}`: {}", m.name, e.lines().next().unwrap_or("")));
        }
    }
    let dev = dev.as_mut()?;
    let b = xpu_workbench::exec::infer_bindings(model, &plan.graph, inputs).expect("bindings");
    match xpu_workbench::runtime::plan::run_on_device(dev, plan, &modules, model, inputs, &b) {
        Ok(r) => Some(r.outputs),
        Err(e) => {
            failures.push(format!("{what}: {e}"));
            None
        }
    }
}

/// Divisions and remainders by a non-constant whose dividend moves with a fold's variable
/// (the output coordinates are variables `0..rank`; every other variable is a fold's).
pub fn divisions_in_folds(k: &xpu_workbench::lower::Kernel) -> usize {
    use xpu_workbench::lower::kernel::{BinOp, KExpr};
    let free = k.free_vars();
    let coords = (1u128 << k.domain.len()) - 1;
    k.exprs
        .iter()
        .enumerate()
        .filter(|(i, e)| match e {
            KExpr::Binary(BinOp::Div | BinOp::Rem, _, d) => !matches!(k.expr(*d), KExpr::I64(_)) && free[*i] & !coords != 0,
            _ => false,
        })
        .count()
}

/// The convolution block tests' loop (conv_blocks, tiny_maps, dwconv_blocks): every case of
/// the exported folder `dir` lowered in modes none and full, its convolution's kernel (the
/// one with a fold; mode none also has epilogue kernels) on the schedule `expected` names for
/// it and passing `check`, and its outputs on OpenCL close to PyTorch's. The failures, one
/// line each; a case `expected` does not name panics (the test must name every case).
pub fn conv_cases_on_opencl(
    dir: &std::path::Path,
    expected: fn(&str) -> Option<xpu_workbench::lower::schedule::Schedule>,
    check: impl Fn(&xpu_workbench::lower::Kernel) -> Result<(), String>,
) -> Vec<String> {
    use xpu_workbench::decomp::{Marks, Mode};
    use xpu_workbench::lower::kernel::KExpr;
    use xpu_workbench::lower::schedule::Schedule;
    let index = xpu_workbench::opinfo::read_index(dir).expect("index");
    let names = case_names(dir);
    assert_eq!(names.len(), index.cases.len());
    let mut dev = super::opencl_device();
    let mut failures = Vec::new();
    for (case, name) in index.cases.iter().zip(&names) {
        let want_schedule = expected(name).unwrap_or_else(|| panic!("case `{name}` has no expected schedule in this test"));
        let files = xpu_workbench::opinfo::read_archive(dir, &case.file).expect("archive");
        let model = xpu_workbench::opinfo::model(case, &files).expect("graph");
        let inputs = xpu_workbench::opinfo::inputs(case, &files).expect("inputs");
        let want = xpu_workbench::opinfo::outputs(case, &files).expect("PyTorch's outputs");
        for mode in [Mode::None, Mode::Full] {
            let what = format!("{name} ({mode:?})");
            let plan = xpu_workbench::lower::lower(&model, &model.graphs[0], mode, &Marks::default()).expect("lowers");
            let schedules: Vec<Schedule> = plan.kernels().map(|k| k.schedule).collect();
            let conv = plan.kernels().find(|k| k.exprs.iter().any(|e| matches!(e, KExpr::Reduce { .. })));
            match conv {
                Some(k) if k.schedule == want_schedule => {
                    if let Err(e) = check(k) {
                        failures.push(format!("{what}: {e}"));
                    }
                }
                _ => failures.push(format!("{what}: schedules {schedules:?}, expected the convolution on {want_schedule:?}")),
            }
            let Some(outputs) = compile_and_run(&mut dev, &plan, &model, &inputs, &what, &mut failures) else { continue };
            if let Err(e) = close(&what, &outputs[0], &want[0], case) {
                failures.push(e);
            }
        }
    }
    failures
}
