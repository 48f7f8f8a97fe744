//! PyTorch's OpInfo-style cases as `scripts/gen_opinfo.py` exports them (`tests/data/opinfo`;
//! `scripts/gen_sort_cases.py` writes the same layout): `index.json` listing every case, and
//! per op a gzipped stored zip holding case `K`'s graph (`K.pt2`), inputs (`K.inI.npy`),
//! PyTorch's eager outputs (`K.outI.npy`) and float64 references (`K.refI.npy`).
//!
//! One loader for everything that reads them: `tests/opinfo.rs` (values against PyTorch's),
//! `tests/opinfo_no_panic.rs`, and `bench ops` ([`bench`]: time against torch eager).

pub mod bench;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::exec::Tensor;
use crate::ir::DType;
use crate::npy;

/// What went wrong reading a case set, naming the file (and member).
#[derive(Debug, thiserror::Error)]
pub enum OpinfoError {
    #[error("{file}: {message}")]
    File { file: String, message: String },
    #[error("{file}: member `{member}`: {message}")]
    Member { file: String, member: String, message: String },
}

/// The committed case set: `tests/data/opinfo` of this source tree.
pub fn committed_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/opinfo")
}

#[derive(Deserialize, Clone, Debug)]
pub struct Index {
    pub torch: String,
    pub cases: Vec<Case>,
    #[serde(default)]
    pub skipped: Vec<serde_json::Value>,
}

#[derive(Deserialize, Clone, Debug)]
pub struct Case {
    pub op: String,
    pub dtype: String,
    pub file: String,
    pub case: usize,
    pub targets: Vec<String>,
    pub inputs: Vec<(String, Vec<usize>)>,
    pub outputs: Vec<(String, Vec<usize>)>,
    pub rtol: Vec<f64>,
    pub atol: Vec<f64>,
    #[serde(default)]
    pub check: Option<Check>,
    /// Outputs with a float64 reference in the archive (`K.refI.npy`).
    #[serde(default)]
    pub refs: Vec<usize>,
}

impl Case {
    /// `file#case`: how benchmarks and committed timings name a case.
    pub fn key(&self) -> String {
        format!("{}#{}", self.file, self.case)
    }
}

/// How a case whose values cannot equal PyTorch's is compared (see `tests/opinfo.rs`).
#[derive(Deserialize, Clone, Debug)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Check {
    Random {
        /// `[lo, hi]`; `hi` is null when unbounded; the whole support is null on the real line
        /// or when the random values pass through other ops before the output.
        support: Option<(f64, Option<f64>)>,
        open_hi: bool,
        integral: bool,
    },
    Uninitialized,
    /// Outputs holding one vector per column, each unique only up to sign (eigenvectors):
    /// compared after aligning each column's sign with PyTorch's; other outputs by value.
    #[serde(rename = "up_to_sign")]
    UpToSign {
        outputs: Vec<usize>,
        /// Outputs whose rows are the vectors (`linalg_svd`'s `Vh`): aligned row by row.
        #[serde(default)]
        rows: Vec<usize>,
    },
    /// Outputs whose eager shape contradicts the exported graph's own metadata (`[index,
    /// sizes]`): checked against the metadata's sizes and eager's dtype. Other outputs by value.
    #[serde(rename = "metadata_shape")]
    MetadataShape { outputs: Vec<(usize, Vec<usize>)> },
}

/// An archive's members by name.
pub type Members = BTreeMap<String, Vec<u8>>;

/// The index of the case set in `dir`.
pub fn read_index(dir: &Path) -> Result<Index, OpinfoError> {
    let path = dir.join("index.json");
    let file = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| OpinfoError::File { file: file.clone(), message: e.to_string() })?;
    serde_json::from_str(&text).map_err(|e| OpinfoError::File { file, message: format!("not a case index: {e}") })
}

/// The members of archive `file` of the case set in `dir`.
pub fn read_archive(dir: &Path, file: &str) -> Result<Members, OpinfoError> {
    let bad = |message: String| OpinfoError::File { file: file.to_string(), message };
    let gz = std::fs::read(dir.join(file)).map_err(|e| bad(e.to_string()))?;
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut raw).map_err(|e| bad(format!("gzip: {e}")))?;
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(raw)).map_err(|e| bad(format!("zip: {e}")))?;
    let mut out = BTreeMap::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).map_err(|e| bad(format!("zip entry {i}: {e}")))?;
        let mut data = Vec::new();
        f.read_to_end(&mut data).map_err(|e| bad(format!("zip entry {i}: {e}")))?;
        out.insert(f.name().to_string(), data);
    }
    Ok(out)
}

/// A tensor from `.npy` bytes; `dtype` is the manifest's name (bfloat16 arrives as u16 bits).
pub fn tensor(name: &str, bytes: &[u8], dtype: &str) -> Result<Tensor, String> {
    let a = npy::parse(name, bytes).map_err(|e| e.to_string())?;
    let want = DType::from_name(dtype).ok_or_else(|| format!("{name}: unknown dtype {dtype}"))?;
    let dt = if want == DType::BF16 && a.dtype == DType::U16 { DType::BF16 } else { a.dtype };
    if dt != want {
        return Err(format!("{name}: .npy holds {}, the manifest says {dtype}", a.dtype));
    }
    Tensor::from_le_bytes(dt, &a.shape, &a.data)
}

fn member<'m>(case: &Case, files: &'m Members, name: &str) -> Result<&'m [u8], OpinfoError> {
    files.get(name).map(Vec::as_slice).ok_or_else(|| OpinfoError::Member { file: case.file.clone(), member: name.into(), message: "missing".into() })
}

fn tensors(case: &Case, files: &Members, kind: &str, dtypes: &[(String, Vec<usize>)]) -> Result<Vec<Tensor>, OpinfoError> {
    let k = case.case;
    dtypes
        .iter()
        .enumerate()
        .map(|(i, (dt, _))| {
            let name = format!("{k}.{kind}{i}.npy");
            tensor(&name, member(case, files, &name)?, dt).map_err(|message| OpinfoError::Member { file: case.file.clone(), member: name, message })
        })
        .collect()
}

/// Case `case`'s inputs from its archive's members.
pub fn inputs(case: &Case, files: &Members) -> Result<Vec<Tensor>, OpinfoError> {
    tensors(case, files, "in", &case.inputs)
}

/// PyTorch's eager outputs of case `case`.
pub fn outputs(case: &Case, files: &Members) -> Result<Vec<Tensor>, OpinfoError> {
    tensors(case, files, "out", &case.outputs)
}

/// Case `case`'s exported graph (`K.pt2`), imported.
pub fn model(case: &Case, files: &Members) -> Result<crate::ir::Model, OpinfoError> {
    let name = format!("{}.pt2", case.case);
    let pt2 = member(case, files, &name)?;
    crate::import::pt2::load_bytes(&format!("{}#{}", case.file, case.case), pt2)
        .map_err(|e| OpinfoError::Member { file: case.file.clone(), member: name, message: format!("import: {e}") })
}
