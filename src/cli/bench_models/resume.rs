//! `bench models --resume LOG`: carry on a run that stopped part-way (a corpus run against
//! torch.compile takes hours on a small CPU) from what it printed on stderr, one JSON line each:
//! torch's settings and per-model rows (`{"torch": …}`, echoed by `profile::torch_cpu::run`) and
//! our per-model rows. Models found there are not run again; their rows are printed again, so the
//! new run's log is complete by itself and can be resumed in turn.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::profile::torch_cpu::{TorchModel, TorchModels};

/// What an earlier run's log holds.
#[derive(Default, Debug)]
pub struct Resumed {
    /// torch's settings line (`torch`, `threads`, `repeat`, …) with no rows, if torch ran.
    pub torch: Option<TorchModels>,
    pub torch_rows: Vec<TorchModel>,
    /// Our rows by (folder, model).
    pub ours: HashMap<(PathBuf, String), Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("{file}: {e}")]
    Read { file: String, e: std::io::Error },
    #[error("{file}, line {line}: {message}")]
    Line { file: String, line: usize, message: String },
}

/// Reads the log `file`. Lines that are not JSON objects (warnings, a line cut off when the run
/// was killed) are skipped: they carry no measurement.
pub fn read(file: &Path) -> Result<Resumed, ResumeError> {
    let text = std::fs::read_to_string(file).map_err(|e| ResumeError::Read { file: file.display().to_string(), e })?;
    parse(&text).map_err(|(line, message)| ResumeError::Line { file: file.display().to_string(), line, message })
}

/// As [`read`], on the log's text; an error is (1-based line, what was wrong).
pub fn parse(text: &str) -> Result<Resumed, (usize, String)> {
    let mut r = Resumed::default();
    for (i, line) in text.lines().enumerate() {
        let Ok(Value::Object(mut o)) = serde_json::from_str::<Value>(line) else { continue };
        let bad = |e: serde_json::Error| (i + 1, e.to_string());
        match o.remove("torch") {
            Some(Value::Object(t)) if t.contains_key("model") => {
                r.torch_rows.push(serde_json::from_value(Value::Object(t)).map_err(bad)?);
            }
            Some(Value::Object(mut t)) => {
                t.insert("models".into(), Value::Array(Vec::new()));
                let meta: TorchModels = serde_json::from_value(Value::Object(t)).map_err(bad)?;
                if let Some(prev) = &r.torch {
                    if prev.torch != meta.torch || prev.threads != meta.threads {
                        return Err((i + 1, format!("torch {} ({} threads) after torch {} ({} threads): two runs in one log", meta.torch, meta.threads, prev.torch, prev.threads)));
                    }
                }
                r.torch = Some(meta);
            }
            Some(_) => return Err((i + 1, "\"torch\" is neither a settings line nor a model's row".into())),
            None => {
                let (Some(Value::String(model)), Some(Value::String(dir))) = (o.get("model"), o.get("dir")) else { continue };
                let key = (PathBuf::from(dir), model.clone());
                r.ours.insert(key, Value::Object(o));
            }
        }
    }
    Ok(r)
}

impl Resumed {
    pub fn torch_row(&self, stem: &str, dir: &Path) -> Option<&TorchModel> {
        self.torch_rows.iter().rev().find(|m| m.model == stem && Path::new(&m.dir) == dir)
    }

    /// Our earlier row of a model, without what was joined from torch (joined again now).
    pub fn our_row(&self, stem: &str, dir: &Path) -> Option<Value> {
        let mut row = self.ours.get(&(dir.to_path_buf(), stem.to_string()))?.clone();
        if let Value::Object(o) = &mut row {
            o.retain(|k, _| !k.starts_with("torch_") && !k.starts_with("full_wall_over_torch"));
        }
        Some(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"sample": 3, "of": 238, "seed": 1, "models": []}
{"torch": {"torch": "2.15.0", "threads": 2, "cpu_count": 2, "repeat": 5, "custom_ops": {}}}
{"torch": {"model": "a", "dir": "corpus", "eager_ms": 2.0, "compiled_ms": 1.0, "compile_s": 30.0}}
W1128 torch/_inductor: a warning line
{"torch": {"model": "b", "dir": "corpus", "error": "RuntimeError: x"}}
{"bindings": {}, "full": {"median_wall_ms": 0.5}, "torch_eager_ms": 2.0, "full_wall_over_torch_eager": 0.25, "model": "a", "dir": "corpus"}
{"error": "could not load the model", "model": "b", "dir": "corpus"}
{"bindings": {}, "lite": {"kern"#;

    #[test]
    fn torch_settings_rows_and_ours_are_read_back_and_a_cut_line_skipped() {
        let r = parse(LOG).unwrap();
        let t = r.torch.as_ref().expect("the settings line");
        assert_eq!((t.torch.as_str(), t.threads, t.repeat), ("2.15.0", 2, 5));
        assert_eq!(r.torch_rows.len(), 2);
        assert_eq!(r.torch_row("a", Path::new("corpus")).and_then(|m| m.compiled_ms), Some(1.0));
        assert!(r.torch_row("b", Path::new("corpus")).is_some_and(|m| m.error.is_some()));
        assert!(r.torch_row("c", Path::new("corpus")).is_none());
        assert_eq!(r.ours.len(), 2);
        let a = r.our_row("a", Path::new("corpus")).expect("our row of a");
        assert_eq!(a["full"]["median_wall_ms"], 0.5);
        assert!(a.get("torch_eager_ms").is_none() && a.get("full_wall_over_torch_eager").is_none(), "{a}");
        assert!(r.our_row("a", Path::new("other")).is_none());
    }

    #[test]
    fn two_torch_versions_in_one_log_are_refused_with_the_line() {
        let log = "{\"torch\": {\"torch\": \"2.15.0\", \"threads\": 2, \"repeat\": 5}}\n{\"torch\": {\"torch\": \"2.11.0\", \"threads\": 2, \"repeat\": 5}}\n";
        let (line, message) = parse(log).unwrap_err();
        assert_eq!(line, 2);
        assert!(message.contains("2.11.0") && message.contains("2.15.0"), "{message}");
        let (line, _) = parse("{\"torch\": {\"model\": \"a\", \"dir\": 3}}").unwrap_err();
        assert_eq!(line, 1);
    }

    #[test]
    fn an_empty_or_foreign_log_resumes_nothing() {
        let r = parse("").unwrap();
        assert!(r.torch.is_none() && r.torch_rows.is_empty() && r.ours.is_empty());
        let r = parse("not json\n[1, 2]\n{\"unrelated\": true}\n").unwrap();
        assert!(r.torch.is_none() && r.ours.is_empty());
        assert!(read(Path::new("/nonexistent/run.log")).unwrap_err().to_string().contains("/nonexistent/run.log"));
    }
}
