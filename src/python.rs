//! Runs a Python script embedded in the binary under the user's interpreter (the one that holds
//! torch) and reads the JSON it prints: what `bench ops` and `bench models --against-torch` time
//! torch with. The script is written to a temporary file of its own and removed after the run; its
//! stderr (torch's warnings) is dropped.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

use serde::de::DeserializeOwned;

/// Runs `script` (its file named after `name`) with `python` and `args`, and parses its stdout.
/// The error is a sentence for the caller's typed error, which names `python`.
pub fn run_json<T: DeserializeOwned>(python: &Path, name: &str, script: &str, args: &[OsString]) -> Result<T, String> {
    let path = std::env::temp_dir().join(format!("xpu_workbench_{name}_{}.py", std::process::id()));
    std::fs::write(&path, script).map_err(|e| format!("{}: {e}", path.display()))?;
    let out = Command::new(python).arg(&path).args(args).stderr(Stdio::null()).output();
    let _ = std::fs::remove_file(&path);
    let out = out.map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("the torch timing script failed ({})", out.status));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("the torch timing script printed no timings: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_interpreter_and_a_script_printing_no_json_are_errors() {
        let err = run_json::<serde_json::Value>(Path::new("/nonexistent/python3"), "t", "print(1)", &[]).unwrap_err();
        assert!(!err.is_empty());
        if Path::new("/bin/sh").exists() {
            // `sh` runs the file as a shell script: it prints nothing JSON can read.
            let err = run_json::<serde_json::Value>(Path::new("/bin/sh"), "t", "echo not-json", &[]).unwrap_err();
            assert!(err.contains("printed no timings"), "{err}");
            let v: serde_json::Value = run_json(Path::new("/bin/sh"), "t", "echo '{\"a\": 1}'", &[]).unwrap();
            assert_eq!(v["a"], 1);
        }
    }
}
