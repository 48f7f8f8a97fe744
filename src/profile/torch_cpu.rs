//! PyTorch's own times for the zoo's models on this CPU, measured in the same run as ours:
//! `scripts/bench_torch_cpu.py` (embedded as [`SCRIPT`]) run with the user's Python, which
//! times each model's exported module eagerly and through `torch.compile` (Inductor's C++
//! backend) on the program's example inputs. `bench models --against-torch PY` joins its rows
//! to ours by model and folder; `--torch-json FILE` reads a document the script printed before
//! (a run's torch side kept, or a fake one in tests) instead of running it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

/// The timing script, written to a temporary file and run by [`run`].
pub const SCRIPT: &str = include_str!("../../scripts/bench_torch_cpu.py");

#[derive(Debug, thiserror::Error)]
pub enum TorchCpuError {
    #[error("{python}: {message}")]
    Run { python: String, message: String },
    #[error("{file}: {message}")]
    Read { file: String, message: String },
}

/// One model as torch ran it.
#[derive(Deserialize, Serialize, Clone, Debug)]
pub struct TorchModel {
    pub model: String,
    pub dir: String,
    pub eager_ms: Option<f64>,
    pub compiled_ms: Option<f64>,
    /// Fastest and slowest timed call of each mode (older scripts recorded none).
    #[serde(default)]
    pub eager_min_ms: Option<f64>,
    #[serde(default)]
    pub eager_max_ms: Option<f64>,
    #[serde(default)]
    pub compiled_min_ms: Option<f64>,
    #[serde(default)]
    pub compiled_max_ms: Option<f64>,
    /// The first compiled call, compile included.
    pub compile_s: Option<f64>,
    /// Why the model could not be loaded or run at all.
    pub error: Option<String>,
    /// Why `torch.compile` failed where eager ran.
    #[serde(default)]
    pub compile_error: Option<String>,
}

#[derive(Deserialize, Serialize, Clone, Debug)]
pub struct TorchModels {
    pub torch: String,
    /// `torch.get_num_threads()` as the script ran (what it asked for in older scripts).
    pub threads: u32,
    pub repeat: u32,
    /// Modules imported for the custom ops exports call: namespace → module, or why not.
    #[serde(default)]
    pub custom_ops: serde_json::Map<String, serde_json::Value>,
    pub models: Vec<TorchModel>,
}

impl TorchModels {
    /// The row of model `model` (file stem) in folder `dir`.
    pub fn find(&self, model: &str, dir: &Path) -> Option<&TorchModel> {
        self.models.iter().find(|m| m.model == model && Path::new(&m.dir) == dir)
    }
}

/// Runs [`SCRIPT`] with `python` over `targets` (folders of `.pt2` files, or `.pt2` files;
/// models whose stem contains one of `only`, all when empty), `repeat` timed calls per mode, on
/// `threads` threads (the script's default, every core, when `None`).
/// Each model's row is echoed on stderr as `{"torch": ROW}` as the script prints it, so a long
/// run shows its progress; torch's other stderr (warnings) is dropped, its last lines kept to
/// say why when the script fails.
pub fn run(python: &Path, targets: &[PathBuf], only: &[String], repeat: u32, threads: Option<u32>) -> Result<TorchModels, TorchCpuError> {
    let bad = |message: String| TorchCpuError::Run { python: python.display().to_string(), message };
    let mut args: Vec<std::ffi::OsString> = targets.iter().map(|d| d.clone().into_os_string()).collect();
    args.extend(["--repeat".into(), repeat.max(1).to_string().into()]);
    if let Some(n) = threads {
        args.extend(["--threads".into(), n.max(1).to_string().into()]);
    }
    if !only.is_empty() {
        args.extend(["--only".into(), only.join(",").into()]);
    }
    let script = std::env::temp_dir().join(format!("xpu_workbench_bench_torch_cpu_{}.py", std::process::id()));
    std::fs::write(&script, SCRIPT).map_err(|e| bad(format!("{}: {e}", script.display())))?;
    let child = Command::new(python).arg(&script).args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_file(&script);
            return Err(bad(e.to_string()));
        }
    };
    let stderr = child.stderr.take().map(|err| std::thread::spawn(move || echo_rows(BufReader::new(err))));
    let mut stdout = Vec::new();
    let read = child.stdout.take().map(|mut out| std::io::Read::read_to_end(&mut out, &mut stdout));
    let status = child.wait();
    let _ = std::fs::remove_file(&script);
    let tail = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    let status = status.map_err(|e| bad(e.to_string()))?;
    if let Some(Err(e)) = read {
        return Err(bad(format!("reading the script's output: {e}")));
    }
    if !status.success() {
        return Err(bad(format!("the torch timing script failed ({status}): {}", tail.join(" / "))));
    }
    parse(&stdout).map_err(|e| bad(format!("the torch timing script printed no timings: {e}")))
}

/// Echoes the script's per-model JSON rows (`{"torch": ROW}`) and returns its last other lines.
fn echo_rows(err: impl BufRead) -> Vec<String> {
    let mut tail = std::collections::VecDeque::new();
    for line in err.lines().map_while(Result::ok) {
        if line.starts_with('{') && serde_json::from_str::<serde_json::Value>(&line).is_ok() {
            eprintln!("{{\"torch\": {line}}}");
        } else {
            if tail.len() == 5 {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
    tail.into()
}

fn parse(bytes: &[u8]) -> Result<TorchModels, String> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| e.to_string())
}

/// A document the script printed before (`bench models --torch-json FILE`).
pub fn read(file: &Path) -> Result<TorchModels, TorchCpuError> {
    let bad = |message: String| TorchCpuError::Read { file: file.display().to_string(), message };
    let bytes = std::fs::read(file).map_err(|e| bad(e.to_string()))?;
    parse(&bytes).map_err(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_found_by_model_and_folder() {
        let t: TorchModels = serde_json::from_str(
            r#"{"torch": "2.15.0", "threads": 2, "repeat": 3, "load_average": [1, 1, 1], "models": [
                {"model": "bert", "dir": "samples/zoo/torch-2.15", "eager_ms": 0.9, "compiled_ms": 0.3, "compile_s": 20.0, "input_shapes": []},
                {"model": "bert", "dir": "samples/zoo/torch-2.11", "error": "RuntimeError: x"}]}"#,
        )
        .unwrap();
        assert_eq!(t.find("bert", Path::new("samples/zoo/torch-2.15")).and_then(|m| m.compiled_ms), Some(0.3));
        assert!(t.find("bert", Path::new("samples/zoo/torch-2.11")).is_some_and(|m| m.error.is_some() && m.eager_ms.is_none()));
        assert!(t.find("gpt2", Path::new("samples/zoo/torch-2.15")).is_none());
    }

    #[test]
    fn a_saved_document_is_read_and_a_bad_one_names_the_file_and_field() {
        let dir = std::env::temp_dir().join(format!("xpuwb-torch-cpu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.json");
        std::fs::write(&good, r#"{"torch": "2.15.0", "threads": 2, "repeat": 1, "custom_ops": {"transformers": "transformers.integrations.moe"},
            "models": [{"model": "m", "dir": "d", "eager_ms": 1.0, "compile_error": "InductorError: x"}]}"#).unwrap();
        let t = read(&good).unwrap();
        assert_eq!(t.models[0].compile_error.as_deref(), Some("InductorError: x"));
        assert_eq!(t.custom_ops["transformers"], "transformers.integrations.moe");
        let bad = dir.join("bad.json");
        std::fs::write(&bad, r#"{"torch": "2.15.0", "threads": "two", "repeat": 1, "models": []}"#).unwrap();
        let e = read(&bad).unwrap_err().to_string();
        assert!(e.contains("bad.json") && e.contains("threads"), "{e}");
        assert!(read(&dir.join("missing.json")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_scripts_rows_are_echoed_and_its_other_lines_kept_for_errors() {
        let err = "UserWarning: x\n{\"model\": \"m\", \"eager_ms\": 1}\n".to_string() + &"w\n".repeat(7) + "Traceback: last";
        let tail = echo_rows(err.as_bytes());
        assert_eq!(tail, ["w", "w", "w", "w", "Traceback: last"]);
    }
}
