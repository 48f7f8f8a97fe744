//! Helpers shared by the end-to-end tests: sample paths and expectation files made by
//! `scripts/gen_samples.py` with torch and sympy.
#![allow(dead_code)]

use std::path::PathBuf;

pub mod graph_case;
pub mod opinfo;
pub mod stages;
pub mod trace_format;
pub mod truth;
pub mod ui;

pub const MODELS: &[&str] = &["mlp", "transformer_block", "cnn", "activations", "annotated", "sym_views"];

/// Runs the workbench binary as a user would: (exit code, stdout, stderr).
pub fn run_cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xpu-workbench")).args(args).output().expect("run the binary");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An empty ops folder (`XPU_WORKBENCH_OPS_DIR`) of a test's own, so no table or traced-calls cache
/// of the machine's user is read.
pub fn ops_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xpuwb-ops-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a temporary ops folder");
    d
}

/// [`run_cli`] with `XPU_WORKBENCH_OPS_DIR` set to `ops`.
pub fn run_cli_in(ops: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xpu-workbench"))
        .args(args)
        .env("XPU_WORKBENCH_OPS_DIR", ops)
        .output()
        .expect("run the binary");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
}

pub fn expectations(model: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(sample(&format!("{model}.expect.json"))).expect("expectation file");
    serde_json::from_str(&text).expect("expectation JSON")
}

/// The op histogram torch's FX graph recorded, in the archive's spelling: `getitem` nodes are
/// folded into multi-output nodes by the serializer, and builtins become `_operator.*`.
pub fn archive_histogram(fx_hist: &serde_json::Value) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for (k, v) in fx_hist.as_object().expect("histogram object") {
        if k == "<built-in function getitem>" {
            continue;
        }
        let key = match k.strip_prefix("<built-in function ").and_then(|s| s.strip_suffix('>')) {
            // `math.ceil` prints as a builtin too (a float step's `arange` length); export names
            // it by its module, as the workbench does.
            Some(f @ ("ceil" | "floor" | "trunc")) => format!("math.{f}"),
            Some(f) => format!("_operator.{f}"),
            None => python_function(k).unwrap_or_else(|| k.clone()),
        };
        out.insert(key, v.as_u64().expect("count") as usize);
    }
    out
}

/// A Python function as expectations written before `scripts/corpus_expect.py` named them by
/// module path recorded it, `<function sym_max at 0x7f735ab65a80>`: as the archive names it. The
/// only Python functions torch.export leaves in a graph are torch's own on SymInts
/// (`torch.sym_max`, `torch.sym_min`, ...), all in module `torch`.
fn python_function(k: &str) -> Option<String> {
    let name = k.strip_prefix("<function ")?.split_once(" at 0x")?.0;
    Some(format!("torch.{name}"))
}

/// Rewrites a sample archive: `edit` may change any entry's bytes (by name) or drop it (None).
pub fn rewrite_archive(src: &str, edit: impl Fn(&str, Vec<u8>) -> Option<Vec<u8>>) -> Vec<u8> {
    use std::io::{Read, Write};
    let bytes = std::fs::read(sample(src)).expect("sample");
    let mut zin = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..zin.len() {
        let mut f = zin.by_index(i).expect("entry");
        let name = f.name().to_string();
        let mut data = Vec::new();
        f.read_to_end(&mut data).expect("read");
        if let Some(data) = edit(&name, data) {
            let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
            out.start_file(name, opts).expect("start");
            out.write_all(&data).expect("write");
        }
    }
    out.finish().expect("finish").into_inner()
}

/// Edits `models/model.json` of a sample as JSON.
pub fn edit_model_json(src: &str, edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    rewrite_archive(src, |name, data| {
        if name.ends_with("models/model.json") {
            let mut v: serde_json::Value = serde_json::from_slice(&data).expect("model json");
            edit(&mut v);
            Some(serde_json::to_vec(&v).expect("json"))
        } else {
            Some(data)
        }
    })
}

/// Assembles `tests/data/<name>.spvasm` for OpenCL with `spirv-as` and validates it with
/// `spirv-val`. `Err` when the tools cannot be run; a module that does not assemble or validate
/// is a bug in the test data and panics.
pub fn assemble_spvasm(name: &str) -> Result<Vec<u32>, String> {
    use std::process::Command;
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(format!("{name}.spvasm"));
    // Tests of one binary run in parallel in one process: a counter keeps their files apart.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let binary = std::env::temp_dir().join(format!("xpu-workbench-{name}-{}-{n}.spv", std::process::id()));
    let run = |tool: &str, args: &[&std::ffi::OsStr]| -> Result<(), String> {
        let out = Command::new(tool).args(args).output().map_err(|e| format!("cannot run {tool}: {e}"))?;
        assert!(out.status.success(), "{tool} failed on {}: {}", source.display(), String::from_utf8_lossy(&out.stderr));
        Ok(())
    };
    let env = ["--target-env".as_ref(), "opencl1.2".as_ref()];
    run("spirv-as", &[env[0], env[1], source.as_os_str(), "-o".as_ref(), binary.as_os_str()])?;
    run("spirv-val", &[env[0], env[1], binary.as_os_str()])?;
    let bytes = std::fs::read(&binary).expect("spirv-as wrote its output");
    let _ = std::fs::remove_file(&binary);
    Ok(bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
}

/// Whether CI asked for the OpenCL runtime to be there (`XPU_WORKBENCH_REQUIRE_OPENCL`).
pub fn opencl_required() -> bool {
    std::env::var("XPU_WORKBENCH_REQUIRE_OPENCL").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Skips (returns `None`) with the reason printed, or fails when CI requires OpenCL.
pub fn skip_opencl<T>(reason: String) -> Option<T> {
    if opencl_required() {
        panic!("XPU_WORKBENCH_REQUIRE_OPENCL is set but: {reason}");
    }
    eprintln!("skipping: {reason} (source scripts/env.sh after scripts/install_opencl_cpu.sh)");
    None
}

/// The OpenCL device, or a skip (a failure where CI requires it).
pub fn opencl_device() -> Option<xpu_workbench::runtime::opencl::OpenClDevice> {
    xpu_workbench::runtime::opencl::OpenClDevice::open().map_or_else(|e| skip_opencl(e.to_string()), Some)
}

/// Runs `spirv-val --target-env opencl2.0` on a generated module: `None` when the tool is
/// missing (a skip), else whether it passed, with the validator's message.
pub fn spirv_val(m: &xpu_workbench::codegen::spirv::SpirvModule) -> Option<Result<(), String>> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let unique = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{}-{}-{unique}.spv", m.name, std::process::id()));
    std::fs::write(&path, m.to_bytes()).expect("write module");
    let out = std::process::Command::new("spirv-val").args(["--target-env", "opencl2.0"]).arg(&path).output();
    let _ = std::fs::remove_file(&path);
    match out {
        Err(e) => skip_opencl(format!("cannot run spirv-val: {e}")),
        Ok(o) if o.status.success() => Some(Ok(())),
        Ok(o) => Some(Err(String::from_utf8_lossy(&o.stderr).into_owned())),
    }
}
