//! Calls traced with the user's own torch (`check-lite LOG --python PATH`): what a torch-level call
//! the embedded tables have no trace of becomes in ATen ops, at the example values a log records.
//!
//! The embedded tables trace PyTorch's OpInfo samples, which leave out calls like `torch.tensor`
//! and `Tensor.type_as`, and trace CPU and CUDA only at OpInfo's arguments (`F.batch_norm` in eval
//! mode on CPU is not among them). Rather than listing such calls by hand, the user's torch traces
//! each missing call at the log's own shapes, dtypes and device (`scripts/trace_calls.py`, embedded
//! here), and the answers are cached per torch version beside the refreshed backend tables
//! (`<ops dir>/traced/torch-<version>.json`), so a call is traced once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::backend::Expansion;

/// The tracer the workbench runs with the user's Python (also a script of its own in `scripts/`).
pub const TRACER: &str = include_str!("../../scripts/trace_calls.py");

/// One call to trace: as `scripts/trace_calls.py` reads it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallSpec {
    /// What the call is, with its argument types and sizes: traced once per key.
    pub key: String,
    /// The call as dynamo writes it (`Tensor.type_as`, `torch.nn.functional.batch_norm`).
    pub target: String,
    /// `cpu`, `cuda`, `xpu`: the device of its tensors in the log.
    pub device: String,
    pub args: Vec<serde_json::Value>,
    pub kwargs: BTreeMap<String, serde_json::Value>,
    /// The file the call was made from (`.../transformers/integrations/moe.py`): importing its module
    /// registers the custom ops it calls (`torch.ops.transformers.grouped_mm_fallback`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl CallSpec {
    /// The key a call is cached under: target, device and arguments, so the same call at other
    /// shapes or flags (`batch_norm` training or not) is traced again.
    pub fn keyed(target: &str, device: &str, args: Vec<serde_json::Value>, kwargs: BTreeMap<String, serde_json::Value>) -> CallSpec {
        let key = format!("{target}@{device}({})", serde_json::json!([args, kwargs]));
        CallSpec { key, target: target.to_string(), device: device.to_string(), args, kwargs, source: None }
    }
}

#[derive(Debug, Deserialize)]
struct Response {
    torch: String,
    results: Vec<Answer>,
}

#[derive(Debug, Deserialize)]
struct Answer {
    key: String,
    ops: Option<Vec<String>>,
    error: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{python}: cannot run: {source}")]
    Spawn { python: String, source: std::io::Error },
    #[error("{python} scripts/trace_calls.py exited with {status}: {stderr}")]
    Failed { python: String, status: String, stderr: String },
    #[error("{python} scripts/trace_calls.py: its answer is not the expected JSON: {source}")]
    Answer { python: String, source: serde_json::Error },
    #[error("{file}: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: not a traced-calls cache: {source}")]
    Cache { file: String, source: serde_json::Error },
}

/// Traced calls of one torch version, as cached on disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TracedCalls {
    /// The version of the torch that traced them (`2.15.0`).
    pub torch: String,
    /// Keyed like the embedded tables' expansions (`Tensor.type_as`): per device, the alternatives.
    pub expansions: BTreeMap<String, Expansion>,
    /// Every call key traced, and why those that failed did (`None`: traced).
    pub traced: BTreeMap<String, Option<String>>,
}

impl TracedCalls {
    /// The cache file of a torch version under an ops folder ([`super::backend::user_dir`]).
    pub fn path(dir: &Path, torch: &str) -> PathBuf {
        dir.join("traced").join(format!("torch-{}.json", release(torch)))
    }

    /// The cache of `torch` under `dir`; empty when there is none yet.
    pub fn load(dir: &Path, torch: &str) -> Result<TracedCalls, TraceError> {
        let path = TracedCalls::path(dir, torch);
        let file = path.display().to_string();
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|source| TraceError::Cache { file, source }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TracedCalls { torch: release(torch), ..TracedCalls::default() }),
            Err(source) => Err(TraceError::Io { file, source }),
        }
    }

    /// The cache of `torch` under `dir`: empty when either is unknown or there is no file yet, and an
    /// unreadable file is left out with the reason (a warning, never a failed check).
    pub fn for_version(dir: Option<&Path>, torch: Option<&str>) -> (TracedCalls, Option<String>) {
        let (Some(dir), Some(torch)) = (dir, torch) else { return (TracedCalls::default(), None) };
        match TracedCalls::load(dir, torch) {
            Ok(t) => (t, None),
            Err(e) => (TracedCalls::default(), Some(format!("left out: {e}"))),
        }
    }

    /// The user's cache ([`super::backend::user_dir`]) for a log's torch version.
    pub fn user(torch: Option<&str>) -> (TracedCalls, Option<String>) {
        TracedCalls::for_version(super::backend::user_dir().as_deref(), torch)
    }

    pub fn save(&self, dir: &Path) -> Result<PathBuf, TraceError> {
        let path = TracedCalls::path(dir, &self.torch);
        let io = |source| TraceError::Io { file: path.display().to_string(), source };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        std::fs::write(&path, text).map_err(io)?;
        Ok(path)
    }

    pub fn get(&self, target: &str) -> Option<&Expansion> {
        self.expansions.get(target)
    }

    /// Whether a call at these arguments was traced already. A failed trace is tried again: what
    /// failed may be the environment (a package not installed then), and the error is kept till then.
    pub fn has(&self, key: &str) -> bool {
        matches!(self.traced.get(key), Some(None))
    }

    /// Takes every expansion and traced key of `other` (a later trace of the same call wins).
    pub fn merge(&mut self, other: &TracedCalls) {
        for (target, per_device) in &other.expansions {
            let mine = self.expansions.entry(target.clone()).or_default();
            for (dev, alts) in per_device {
                let slot = mine.entry(dev.clone()).or_default();
                for a in alts {
                    if !slot.contains(a) {
                        slot.push(a.clone());
                    }
                }
                slot.sort();
            }
        }
        self.traced.extend(other.traced.iter().map(|(k, v)| (k.clone(), v.clone())));
        if self.torch.is_empty() {
            self.torch = other.torch.clone();
        }
    }

    /// Records one answer: the ops join the call's alternatives on its device.
    fn record(&mut self, spec: &CallSpec, ops: Result<Vec<String>, String>) {
        match ops {
            Ok(ops) => {
                let alts = self.expansions.entry(spec.target.clone()).or_default().entry(device_kind(&spec.device)).or_default();
                if !alts.contains(&ops) {
                    alts.push(ops);
                    alts.sort();
                }
                self.traced.insert(spec.key.clone(), None);
            }
            Err(e) => {
                self.traced.insert(spec.key.clone(), Some(e));
            }
        }
    }
}

/// What one run of the tracer did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceRun {
    /// The version of the torch that traced (`2.15.0`).
    pub torch: String,
    /// Call key → its ops, or why it could not be traced.
    pub answers: BTreeMap<String, Result<Vec<String>, String>>,
}

/// Traces `calls` with `python` (which must import torch) and records the answers in `cache`.
/// Calls the cache has already seen are not traced again. The cache's torch is set from the
/// tracer's answer: a cache belongs to the torch that filled it.
pub fn trace_calls(python: &Path, calls: &[CallSpec], cache: &mut TracedCalls) -> Result<TraceRun, TraceError> {
    let todo: Vec<&CallSpec> = {
        let mut seen = BTreeSet::new();
        calls.iter().filter(|c| !cache.has(&c.key) && seen.insert(c.key.clone())).collect()
    };
    let mut run = TraceRun { torch: cache.torch.clone(), answers: BTreeMap::new() };
    if todo.is_empty() {
        return Ok(run);
    }
    let response = run_tracer(python, &todo)?;
    run.torch = release(&response.torch);
    if cache.torch.is_empty() {
        cache.torch = run.torch.clone();
    }
    let by_key: BTreeMap<&str, &CallSpec> = todo.iter().map(|c| (c.key.as_str(), *c)).collect();
    for a in response.results {
        let Some(spec) = by_key.get(a.key.as_str()) else { continue };
        let ops = match (a.ops, a.error) {
            (Some(ops), _) => Ok(ops),
            (None, e) => Err(e.unwrap_or_else(|| "the tracer gave neither ops nor an error".into())),
        };
        cache.record(spec, ops.clone());
        run.answers.insert(a.key, ops);
    }
    for c in todo {
        if !run.answers.contains_key(&c.key) {
            run.answers.insert(c.key.clone(), Err("the tracer did not answer for this call".into()));
        }
    }
    Ok(run)
}

/// What [`trace_and_cache`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSummary {
    /// The version of the torch that traced.
    pub torch: String,
    pub answered: usize,
    pub failed: usize,
    /// Where the answers were cached, or why they were not.
    pub cached: Result<PathBuf, String>,
}

/// Traces the calls `known` has not seen with `python`, adds the answers to `known` and to the
/// user's cache of the tracing torch's version ([`super::backend::user_dir`]).
pub fn trace_and_cache(python: &Path, calls: &[CallSpec], known: &mut TracedCalls) -> Result<TraceSummary, TraceError> {
    let todo: Vec<CallSpec> = calls.iter().filter(|c| !known.has(&c.key)).cloned().collect();
    let mut fresh = TracedCalls::default();
    let run = trace_calls(python, &todo, &mut fresh)?;
    let failed = run.answers.values().filter(|a| a.is_err()).count();
    let cached = if run.answers.is_empty() {
        Err("nothing new to cache".to_string())
    } else {
        match super::backend::user_dir() {
            Some(dir) => TracedCalls::load(&dir, &fresh.torch)
                .and_then(|mut c| {
                    c.merge(&fresh);
                    c.save(&dir)
                })
                .map_err(|e| e.to_string()),
            None => Err("no config folder".to_string()),
        }
    };
    known.merge(&fresh);
    Ok(TraceSummary { torch: run.torch, answered: run.answers.len() - failed, failed, cached })
}

/// The version of the torch `python` imports, by running the tracer with no calls.
pub fn python_torch(python: &Path) -> Result<String, TraceError> {
    run_tracer(python, &[]).map(|r| release(&r.torch))
}

fn run_tracer(python: &Path, calls: &[&CallSpec]) -> Result<Response, TraceError> {
    let py = python.display().to_string();
    let dir = std::env::temp_dir().join(format!("xpu-workbench-trace-{}", std::process::id()));
    let io = |source| TraceError::Io { file: dir.display().to_string(), source };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let script = dir.join("trace_calls.py");
    let request = dir.join("request.json");
    std::fs::write(&script, TRACER).map_err(io)?;
    std::fs::write(&request, serde_json::json!({ "calls": calls }).to_string()).map_err(io)?;
    let out = Command::new(python).arg(&script).arg(&request).output();
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.map_err(|source| TraceError::Spawn { python: py.clone(), source })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
        return Err(TraceError::Failed {
            python: py,
            status: out.status.to_string(),
            stderr: tail.into_iter().rev().collect::<Vec<_>>().join(" | "),
        });
    }
    serde_json::from_slice(&out.stdout).map_err(|source| TraceError::Answer { python: py, source })
}

/// `2.15.0+cu132` → `2.15.0`.
fn release(torch: &str) -> String {
    torch.split('+').next().unwrap_or(torch).to_string()
}

/// `cuda:0` → `cuda`: the tables key expansions by device kind.
fn device_kind(device: &str) -> String {
    device.split(':').next().unwrap_or(device).to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(target: &str, device: &str) -> CallSpec {
        CallSpec::keyed(target, device, vec![serde_json::json!({"int": 1})], BTreeMap::new())
    }

    #[test]
    fn answers_join_the_calls_alternatives_per_device_kind_and_round_trip() {
        let mut c = TracedCalls { torch: "2.15.0".into(), ..TracedCalls::default() };
        let a = spec("Tensor.type_as", "cuda:0");
        c.record(&a, Ok(vec!["_to_copy".into()]));
        c.record(&spec("Tensor.type_as", "cpu"), Ok(vec!["_to_copy".into()]));
        c.record(&spec("torch.tensor", "cpu"), Err("ValueError: no".into()));
        assert!(c.has(&a.key));
        assert!(!c.has(&spec("torch.tensor", "cpu").key), "a failed trace is tried again");
        assert_eq!(c.get("Tensor.type_as").unwrap()["cuda"], vec![vec!["_to_copy".to_string()]]);
        assert!(c.get("torch.tensor").is_none());
        let dir = std::env::temp_dir().join(format!("xpuwb-traced-test-{}", std::process::id()));
        let path = c.save(&dir).unwrap();
        assert!(path.ends_with("traced/torch-2.15.0.json"));
        assert_eq!(TracedCalls::load(&dir, "2.15.0+cpu").unwrap(), c);
        assert_eq!(TracedCalls::load(&dir, "2.11.0").unwrap().expansions.len(), 0);
        std::fs::write(&path, "{not json").unwrap();
        let (empty, warning) = TracedCalls::for_version(Some(&dir), Some("2.15.0"));
        assert!(empty.expansions.is_empty() && warning.unwrap().contains("not a traced-calls cache"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn keys_tell_arguments_and_devices_apart() {
        let a = CallSpec::keyed("torch.nn.functional.batch_norm", "cpu", vec![], BTreeMap::from([("training".into(), serde_json::json!({"bool": false}))]));
        let b = CallSpec::keyed("torch.nn.functional.batch_norm", "cpu", vec![], BTreeMap::from([("training".into(), serde_json::json!({"bool": true}))]));
        assert_ne!(a.key, b.key);
        assert_ne!(spec("x", "cpu").key, spec("x", "cuda").key);
    }

    #[test]
    fn a_python_that_cannot_run_is_a_typed_error() {
        let mut c = TracedCalls::default();
        let e = trace_calls(Path::new("/nonexistent/python3"), &[spec("torch.tensor", "cpu")], &mut c).unwrap_err();
        assert!(matches!(e, TraceError::Spawn { .. }), "{e}");
        assert!(e.to_string().contains("/nonexistent/python3"));
    }
}
