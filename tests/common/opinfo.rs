//! The OpInfo cases `scripts/gen_opinfo.py` exported (`tests/data/opinfo`, or `OPINFO_DIR`):
//! the index, the per-op archives and their `.npy` members, shared by `tests/opinfo.rs` (values
//! against PyTorch's) and `tests/opinfo_no_panic.rs` (every stage, no panic).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

use serde::Deserialize;
use xpu_workbench::exec::Tensor;
use xpu_workbench::ir::DType;
use xpu_workbench::npy;

pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Where the cases are: the committed set, or `OPINFO_DIR` (a set made with other samples or
/// another torch, e.g. `gen_opinfo.py DIR --pick=others --seed=1`), which is run and summarised
/// but not held to the committed floor.
pub fn cases_dir() -> PathBuf {
    std::env::var_os("OPINFO_DIR").map_or_else(|| data_dir().join("opinfo"), PathBuf::from)
}

#[derive(Deserialize)]
pub struct Index {
    pub torch: String,
    pub cases: Vec<Case>,
    #[serde(default)]
    pub skipped: Vec<serde_json::Value>,
}

#[derive(Deserialize, Clone)]
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
    /// Outputs with a float64 reference in the archive (`K.refI.npy`, see `closer_to_reference`).
    #[serde(default)]
    pub refs: Vec<usize>,
}

/// How a case whose values cannot equal PyTorch's is compared (see the module docs).
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
    /// sizes]`): compiled code follows the metadata, so these are checked against its sizes and
    /// eager's dtype; their values cannot be compared. Other outputs by value.
    #[serde(rename = "metadata_shape")]
    MetadataShape { outputs: Vec<(usize, Vec<usize>)> },
}


/// An archive's members by name.
pub type Members = BTreeMap<String, Vec<u8>>;

/// The members of one op archive; an unreadable archive fails its cases (named), not the run.
pub fn read_archive(file: &str) -> Result<Members, String> {
    let gz = std::fs::read(cases_dir().join(file)).map_err(|e| format!("{file}: {e}"))?;
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut raw).map_err(|e| format!("{file}: gzip: {e}"))?;
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(raw)).map_err(|e| format!("{file}: zip: {e}"))?;
    let mut out = BTreeMap::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).map_err(|e| format!("{file}: zip entry {i}: {e}"))?;
        let mut data = Vec::new();
        f.read_to_end(&mut data).map_err(|e| format!("{file}: zip entry {i}: {e}"))?;
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

/// The index of the case set [`cases_dir`] names.
pub fn index() -> Index {
    let text = std::fs::read_to_string(cases_dir().join("index.json")).expect("tests/data/opinfo/index.json (scripts/gen_opinfo.py)");
    serde_json::from_str(&text).expect("index JSON")
}

/// Case `case`'s inputs from its archive's members.
pub fn inputs(case: &Case, files: &Members) -> Result<Vec<Tensor>, String> {
    let k = case.case;
    case.inputs
        .iter()
        .enumerate()
        .map(|(i, (dt, _))| tensor(&format!("{k}.in{i}.npy"), files.get(&format!("{k}.in{i}.npy")).ok_or("missing input")?, dt))
        .collect()
}
