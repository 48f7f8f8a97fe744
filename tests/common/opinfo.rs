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
