//! Which backends have a kernel of their own for each ATen op, per torch version, and what a
//! torch-level call becomes in ATen ops when traced with no decomposition table.
//!
//! This is what decides lite mode's fate on a backend: an op with a CompositeImplicitAutograd body
//! and no kernel for the backend (`_fused_rms_norm` on CPU, and on XPU before torch 2.12) is
//! expanded while tracing, before lite mode can keep it. The tables are data computed by
//! `scripts/gen_backend_tables.py` from the torch wheel's `native_functions.yaml` (XPU: the
//! torch-xpu-ops release branch's yaml up to torch 2.13) and PyTorch's OpInfo samples, committed
//! gzipped in `assets/ops/` and embedded; `xpu-workbench backends --refresh` writes one from the
//! user's own torch through its dispatcher.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;

/// A device family with its own dispatch key (dense tensors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Backend {
    Cpu,
    Cuda,
    Xpu,
    Mps,
}

impl Backend {
    pub const ALL: [Backend; 4] = [Backend::Cpu, Backend::Cuda, Backend::Xpu, Backend::Mps];

    /// The dispatch key's name (`CPU`, `CUDA`, ...), as the tables spell it.
    pub fn key(self) -> &'static str {
        match self {
            Backend::Cpu => "CPU",
            Backend::Cuda => "CUDA",
            Backend::Xpu => "XPU",
            Backend::Mps => "MPS",
        }
    }

    /// `cpu`, `cuda`, `xpu`, `mps`, or a device string from a graph (`cuda:0`, `xpu:1`).
    pub fn parse(s: &str) -> Option<Backend> {
        let kind = s.trim().split(':').next()?.to_ascii_lowercase();
        Backend::ALL.into_iter().find(|b| b.key().eq_ignore_ascii_case(&kind))
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// What the dispatcher knows about one overload.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct OpFacts {
    /// Backends with a kernel of their own (CompositeExplicitAutograd counts as every backend).
    #[serde(default)]
    pub kernels: Vec<String>,
    /// Has a CompositeImplicitAutograd body: traced into other ops where no kernel exists.
    #[serde(default)]
    pub composite: bool,
    /// In the Core ATen opset.
    #[serde(default)]
    pub core: bool,
    /// Returns an alias of its input: shape plumbing, never a decomposition.
    #[serde(default)]
    pub view: bool,
    /// In Inductor's default decomposition table.
    #[serde(default)]
    pub inductor: bool,
}

impl OpFacts {
    pub fn has_kernel(&self, b: Backend) -> bool {
        self.kernels.iter().any(|k| k == b.key())
    }

    /// A kernel on some backend: the op exists as a whole somewhere.
    pub fn has_any_kernel(&self) -> bool {
        !self.kernels.is_empty()
    }

    /// The backends Inductor targets (CPU, CUDA, XPU) that keep it whole. An op none of them has a
    /// kernel for (`linear`, `conv2d`: MPS kernels aside) is composite wherever Inductor runs, and
    /// expanding it is expected; one that some have and others lack is the backend-dependent case.
    pub fn inductor_backends(&self) -> Vec<Backend> {
        [Backend::Cpu, Backend::Cuda, Backend::Xpu].into_iter().filter(|b| self.has_kernel(*b)).collect()
    }
}

/// Expansions of one torch-level call: per traced device, the alternative ATen op sets.
pub type Expansion = BTreeMap<String, Vec<Vec<String>>>;

#[derive(Debug, Deserialize)]
pub struct BackendTable {
    /// Where it was loaded from: `embedded` or the file refreshed from the user's torch.
    #[serde(skip)]
    pub origin: String,
    /// `2.11.0`.
    pub torch: String,
    /// Where each part came from (yaml, torch-xpu-ops commit, dispatcher, traced devices).
    #[serde(default)]
    pub sources: BTreeMap<String, serde_json::Value>,
    /// Keyed `name` (default overload) or `name.overload`.
    pub ops: HashMap<String, OpFacts>,
    /// Keyed by the spelling dynamo writes (`torch.nn.functional.layer_norm`, `Tensor.softmax`).
    #[serde(default)]
    pub expansions: HashMap<String, Expansion>,
}

#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("{file}: cannot read: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: not a backend table: {source}")]
    Json { file: String, source: serde_json::Error },
}

/// The tables shipped in the binary: (file name, gzipped JSON). 2.11 and 2.15 were made with torch
/// installed (dispatcher cross-check, Inductor's table, traced expansions); the others from their
/// wheels' yaml alone (kernels; Inductor's flags borrowed from the nearest of the two).
const EMBEDDED: &[(&str, &[u8])] = &[
    ("torch-2.9.json.gz", include_bytes!("../../assets/ops/torch-2.9.json.gz")),
    ("torch-2.10.json.gz", include_bytes!("../../assets/ops/torch-2.10.json.gz")),
    ("torch-2.11.json.gz", include_bytes!("../../assets/ops/torch-2.11.json.gz")),
    ("torch-2.12.json.gz", include_bytes!("../../assets/ops/torch-2.12.json.gz")),
    ("torch-2.13.json.gz", include_bytes!("../../assets/ops/torch-2.13.json.gz")),
    ("torch-2.14.json.gz", include_bytes!("../../assets/ops/torch-2.14.json.gz")),
    ("torch-2.15.json.gz", include_bytes!("../../assets/ops/torch-2.15.json.gz")),
];

impl BackendTable {
    /// Reads a table (plain or gzipped JSON, told apart by content).
    pub fn from_bytes(file: &str, bytes: &[u8]) -> Result<BackendTable, TableError> {
        let text = BackendTable::json_of(bytes).map_err(|source| TableError::Io { file: file.to_string(), source })?;
        serde_json::from_slice(&text).map_err(|source| TableError::Json { file: file.to_string(), source })
    }

    /// The JSON text of plain or gzipped bytes (told apart by content), as every asset of
    /// `assets/ops/` is stored.
    pub fn json_of(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(bytes).read_to_end(&mut out)?;
            Ok(out)
        } else {
            Ok(bytes.to_vec())
        }
    }

    pub fn load(path: &Path) -> Result<BackendTable, TableError> {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| TableError::Io { file: file.clone(), source })?;
        BackendTable::from_bytes(&file, &bytes)
    }

    /// Facts for a graph target in any ATen spelling: `aten._fused_rms_norm.default`,
    /// `torch.ops.aten.add.Tensor`, `add_.Tensor`, `_fused_rms_norm`. `None` for non-ATen ops.
    pub fn op(&self, target: &str) -> Option<&OpFacts> {
        let (name, overload) = aten_name(target)?;
        let key = match overload {
            Some(o) if o != "default" => format!("{name}.{o}"),
            _ => name.to_string(),
        };
        self.ops.get(&key).or_else(|| self.ops.get(name))
    }

    /// Facts for an op named without overload (`mean`, as expansions name ops): the default
    /// overload, else the overloads merged (a kernel in any, composite only if all are).
    pub fn op_by_name(&self, name: &str) -> Option<OpFacts> {
        if let Some(f) = self.ops.get(name) {
            return Some(f.clone());
        }
        let prefix = format!("{name}.");
        let mut merged: Option<OpFacts> = None;
        for (k, f) in &self.ops {
            if !k.starts_with(&prefix) {
                continue;
            }
            let m = merged.get_or_insert_with(|| OpFacts { composite: true, view: true, ..OpFacts::default() });
            for b in &f.kernels {
                if !m.kernels.contains(b) {
                    m.kernels.push(b.clone());
                }
            }
            m.composite &= f.composite;
            m.view &= f.view;
            m.core |= f.core;
            m.inductor |= f.inductor;
        }
        merged
    }

    /// Whether the traced expansions include a real trace on `device` (not fake tensors).
    pub fn traced_on(&self, device: &str) -> bool {
        self.sources
            .get("expansions")
            .and_then(|v| v.as_str())
            .is_some_and(|s| s.split([',', ' ']).any(|w| w == device))
    }
}

/// `aten.add.Tensor` → (`add`, Some(`Tensor`)); `torch.ops.aten._fused_rms_norm` → (`_fused_rms_norm`,
/// None); `aten::relu` → (`relu`, None). In-place names keep their `_`.
pub fn aten_name(target: &str) -> Option<(&str, Option<&str>)> {
    let t = target.strip_prefix("torch.ops.").unwrap_or(target);
    let rest = t.strip_prefix("aten.").or_else(|| t.strip_prefix("aten::"))?;
    let mut parts = rest.splitn(2, '.');
    let name = parts.next().filter(|n| !n.is_empty())?;
    Some((name, parts.next()))
}

/// An op's name with the in-place `_` and the overload folded away (`add_.Tensor` → `add`):
/// functionalization turns in-place ops into their functional form, so both count as one.
pub fn functional_name(name: &str) -> &str {
    let base = name.split('.').next().unwrap_or(name);
    match base.strip_suffix('_') {
        Some(b) if !base.ends_with("__") && !b.is_empty() => b,
        _ => base,
    }
}

static TABLES: OnceLock<(Vec<BackendTable>, Vec<String>)> = OnceLock::new();

/// Where tables refreshed from the user's torch live: `$XPU_WORKBENCH_OPS_DIR`, else `ops/` in the
/// workbench's config folder.
pub fn user_dir() -> Option<PathBuf> {
    std::env::var_os("XPU_WORKBENCH_OPS_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::config::config_dir().map(|d| d.join("ops")))
}

/// Every table, oldest torch first, a user's refreshed table after the embedded one of the same
/// version (so it wins). An embedded table that does not parse is a build defect, caught by the
/// unit test below; at run time it and unreadable user tables are left out, with a warning
/// ([`table_warnings`]).
pub fn embedded() -> &'static [BackendTable] {
    &TABLES.get_or_init(load_all).0
}

/// Why a user table was left out.
pub fn table_warnings() -> &'static [String] {
    &TABLES.get_or_init(load_all).1
}

fn load_all() -> (Vec<BackendTable>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut v: Vec<(bool, BackendTable)> = Vec::new();
    for (name, bytes) in EMBEDDED {
        match BackendTable::from_bytes(name, bytes) {
            Ok(mut t) => {
                t.origin = "embedded".into();
                v.push((false, t));
            }
            Err(e) => warnings.push(e.to_string()),
        }
    }
    if let Some(dir) = user_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            match BackendTable::load(&f) {
                Ok(mut t) => {
                    t.origin = f.display().to_string();
                    v.push((true, t));
                }
                Err(e) => warnings.push(format!("left out: {e}")),
            }
        }
    }
    v.sort_by_key(|(user, t)| (version_key(&t.torch), *user));
    (v.into_iter().map(|(_, t)| t).collect(), warnings)
}

/// `table` first, then every other table: traced expansions are looked up in all of them, since a
/// table made from a wheel's yaml alone (or refreshed from a dispatcher) has none of its own.
pub fn this_then_others(table: &BackendTable) -> impl Iterator<Item = &BackendTable> {
    std::iter::once(table).chain(embedded().iter().filter(move |t| !std::ptr::eq(*t, table)))
}

/// The table for a torch version: the newest embedded one of a release not newer than `version`'s
/// (kernels only ever get added), the oldest one for an older torch, the newest when the version is
/// unknown. Releases are compared without the patch level: the 2.12 table was made from 2.12.1's
/// wheel, and `--torch 2.12` or a 2.12.0 log means that release, not 2.11.
pub fn table_for(version: Option<&str>) -> Option<&'static BackendTable> {
    let tables = embedded();
    let Some(v) = version else { return tables.last() };
    let want = release_key(v);
    tables.iter().rev().find(|t| release_key(&t.torch) <= want).or_else(|| tables.first())
}

/// `2.12.1+xpu` → (2, 12): the release a version belongs to.
pub fn release_key(v: &str) -> (u32, u32) {
    let (major, minor, _) = version_key(v);
    (major, minor)
}

/// `2.11.0+cu130` → (2, 11, 0).
pub fn version_key(v: &str) -> (u32, u32, u32) {
    let core = v.split(['+', 'a', 'b', 'r', 'd']).next().unwrap_or(v);
    let mut it = core.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (it.next().unwrap_or(0), it.next().unwrap_or(0), it.next().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_table_parses() {
        assert!(table_warnings().is_empty(), "{:?}", table_warnings());
        for (name, bytes) in EMBEDDED {
            let t = BackendTable::from_bytes(name, bytes).unwrap_or_else(|e| panic!("{e}"));
            assert!(t.ops.len() > 2000, "{name}: only {} ops", t.ops.len());
            if t.sources.contains_key("expansions") {
                assert!(t.expansions.len() > 500, "{name}: only {} expansions", t.expansions.len());
            }
        }
        assert!(embedded().len() >= EMBEDDED.len());
    }

    /// What the dispatcher of each torch said (recorded by scripts/gen_lite_cases.py).
    #[test]
    fn fused_rms_norm_has_cuda_kernel_and_xpu_only_from_2_12() {
        let t211 = table_for(Some("2.11.0+cu130")).unwrap();
        assert_eq!(t211.torch, "2.11.0");
        let f = t211.op("aten._fused_rms_norm.default").unwrap();
        assert!(f.composite && f.has_kernel(Backend::Cuda));
        assert!(!f.has_kernel(Backend::Cpu) && !f.has_kernel(Backend::Xpu));
        // torch-xpu-ops added the XPU kernel in release 2.12.
        for (v, xpu) in [("2.9.1", false), ("2.10.0", false), ("2.12.0", true), ("2.12", true), ("2.12.1", true), ("2.13.0", true), ("2.14.0", true)] {
            let f = table_for(Some(v)).unwrap().op("aten._fused_rms_norm.default").unwrap();
            assert_eq!(f.has_kernel(Backend::Xpu), xpu, "torch {v}");
            assert!(f.has_kernel(Backend::Cuda) && !f.has_kernel(Backend::Cpu), "torch {v}");
        }
        let t215 = table_for(Some("2.15.0")).unwrap();
        let f = t215.op("torch.ops.aten._fused_rms_norm").unwrap();
        assert!(f.has_kernel(Backend::Xpu) && !f.has_kernel(Backend::Cpu));
        // Structured ufunc kernels count for CPU and CUDA.
        assert!(t211.op("aten.add.Tensor").unwrap().has_kernel(Backend::Cpu));
        assert!(t211.op("aten.view.default").unwrap().view);
    }

    #[test]
    fn names_in_every_spelling() {
        assert_eq!(aten_name("aten.add.Tensor"), Some(("add", Some("Tensor"))));
        assert_eq!(aten_name("torch.ops.aten._fused_rms_norm"), Some(("_fused_rms_norm", None)));
        assert_eq!(aten_name("aten::relu"), Some(("relu", None)));
        assert_eq!(aten_name("torch.nn.functional.relu"), None);
        assert_eq!(functional_name("add_.Tensor"), "add");
        assert_eq!(functional_name("__and__"), "__and__");
        assert_eq!(functional_name("_fused_rms_norm"), "_fused_rms_norm");
        assert_eq!(version_key("2.11.0+cu130"), (2, 11, 0));
        assert_eq!(version_key("2.15.0a0+git123"), (2, 15, 0));
        assert_eq!(Backend::parse("cuda:0"), Some(Backend::Cuda));
        assert_eq!(Backend::parse("XPU"), Some(Backend::Xpu));
        assert_eq!(table_for(Some("2.8.0")).unwrap().torch, "2.9.1");
        assert_eq!(table_for(Some("2.13.1")).unwrap().torch, "2.13.0");
        assert_eq!(table_for(Some("2.16.0")).unwrap().torch, "2.15.0");
    }
}
