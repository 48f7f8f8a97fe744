//! PyTorch's own times for the zoo's models on this CPU, measured in the same run as ours:
//! `scripts/bench_torch_cpu.py` (embedded as [`SCRIPT`]) run with the user's Python, which
//! times each model's exported module eagerly and through `torch.compile` (Inductor's C++
//! backend) on the program's example inputs. `bench models --against-torch PY` joins its rows
//! to ours by model and folder.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The timing script, written to a temporary file and run by [`run`].
pub const SCRIPT: &str = include_str!("../../scripts/bench_torch_cpu.py");

#[derive(Debug, thiserror::Error)]
pub enum TorchCpuError {
    #[error("{python}: {message}")]
    Run { python: String, message: String },
}

/// One model as torch ran it.
#[derive(Deserialize, Clone, Debug)]
pub struct TorchModel {
    pub model: String,
    pub dir: String,
    pub eager_ms: Option<f64>,
    pub compiled_ms: Option<f64>,
    /// The first compiled call, compile included.
    pub compile_s: Option<f64>,
    pub error: Option<String>,
}

#[derive(Deserialize, Clone, Debug)]
pub struct TorchModels {
    pub torch: String,
    pub threads: u32,
    pub repeat: u32,
    pub models: Vec<TorchModel>,
}

impl TorchModels {
    /// The row of model `model` (file stem) in folder `dir`.
    pub fn find(&self, model: &str, dir: &Path) -> Option<&TorchModel> {
        self.models.iter().find(|m| m.model == model && Path::new(&m.dir) == dir)
    }
}

/// Runs [`SCRIPT`] with `python` over `dirs` (models whose stem contains one of `only`, all when
/// empty), `repeat` timed calls per mode.
pub fn run(python: &Path, dirs: &[PathBuf], only: &[String], repeat: u32) -> Result<TorchModels, TorchCpuError> {
    let bad = |message: String| TorchCpuError::Run { python: python.display().to_string(), message };
    let mut args: Vec<std::ffi::OsString> = dirs.iter().map(|d| d.clone().into_os_string()).collect();
    args.extend(["--repeat".into(), repeat.max(1).to_string().into()]);
    if !only.is_empty() {
        args.extend(["--only".into(), only.join(",").into()]);
    }
    crate::python::run_json(python, "bench_torch_cpu", SCRIPT, &args).map_err(bad)
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
}
