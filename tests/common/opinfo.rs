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
