//! `backends`: the op registry's kernel tables — which torch versions they cover, what one op has
//! on each backend, and a refresh from the user's own torch through its dispatcher.

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use serde_json::json;

use super::{fail, EXIT_FAILED, EXIT_USAGE};
use crate::ops::backend::{self, Backend};
use crate::ops::readiness;

/// The generator, shipped in the binary: `--refresh` runs it with the user's python.
const GENERATOR: &str = include_str!("../../scripts/gen_backend_tables.py");

pub struct Args<'a> {
    pub op: Option<&'a str>,
    pub torch: Option<&'a str>,
    pub refresh: bool,
    pub python: &'a str,
    pub json: bool,
}

pub fn run(a: Args) -> ExitCode {
    if a.refresh {
        return refresh(a.python);
    }
    for w in backend::table_warnings() {
        eprintln!("warning: {w}");
    }
    if let Some(op) = a.op {
        return show_op(op, a.torch, a.json);
    }
    let tables = backend::embedded();
    if a.json {
        super::print_json(&json!(tables
            .iter()
            .map(|t| {
                let ctx = readiness::Context::new(t, Backend::Xpu);
                let counts: serde_json::Map<String, serde_json::Value> =
                    readiness::counts(&ctx).iter().map(|(s, n)| (s.key().to_string(), json!(n))).collect();
                json!({"torch": t.torch, "origin": t.origin, "ops": t.ops.len(), "expansions": t.expansions.len(), "sources": t.sources,
                       "xpu_readiness": counts, "xpu_cpu_fallback_source": ctx.fallback_source()})
            })
            .collect::<Vec<_>>()));
        return ExitCode::SUCCESS;
    }
    for t in tables {
        let kernels = t.sources.get("kernels").and_then(|v| v.as_str()).unwrap_or("?");
        println!("torch {:<8} {:>5} ops {:>5} traced calls  {} ({kernels})", t.torch, t.ops.len(), t.expansions.len(), t.origin);
        if let Some(x) = t.sources.get("xpu").and_then(|v| v.as_str()) {
            println!("{:14} XPU: {x}", "");
        }
        let ctx = readiness::Context::new(t, Backend::Xpu);
        let counts = readiness::counts(&ctx);
        let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
        println!("{:14} XPU readiness: {}; CPU fallbacks from {}", "", counts.join(", "), ctx.fallback_source().unwrap_or_default());
    }
    if let Some(dir) = backend::user_dir() {
        println!("refreshed tables are read from {}", dir.display());
    }
    ExitCode::SUCCESS
}

fn show_op(op: &str, torch: Option<&str>, as_json: bool) -> ExitCode {
    let Some(table) = backend::table_for(torch) else {
        return fail(EXIT_FAILED, &"no op table is embedded in this build");
    };
    let spelled = if op.contains('.') || op.starts_with("aten") { op.to_string() } else { format!("aten.{op}") };
    let facts = table.op(&spelled).cloned().or_else(|| table.op_by_name(op.trim_start_matches("aten.")));
    let Some(f) = facts else {
        return fail(EXIT_USAGE, &format!("{op}: not an ATen op in the table of torch {}", table.torch));
    };
    let xpu = readiness::Context::new(table, Backend::Xpu).op(&spelled).and_then(Result::ok).map(|s| s.status.key());
    if as_json {
        super::print_json(&json!({
            "op": op, "torch": table.torch, "kernels": f.kernels, "composite": f.composite,
            "inductor_decomposes": f.inductor, "core": f.core, "view": f.view, "xpu_readiness": xpu,
        }));
        return ExitCode::SUCCESS;
    }
    println!("aten.{} in torch {} ({}):", op.trim_start_matches("aten."), table.torch, table.origin);
    for b in Backend::ALL {
        let how = if f.has_kernel(b) {
            "kernel"
        } else if f.composite {
            "no kernel: expanded (CompositeImplicitAutograd)"
        } else {
            "no kernel, no composite body"
        };
        println!("  {:<4} {how}", b.key());
    }
    if let Some(s) = xpu {
        println!("  XPU readiness: {s}");
    }
    println!("  Inductor's default table decomposes it: {}", if f.inductor { "yes" } else { "no" });
    println!("  Core ATen: {}   view: {}", if f.core { "yes" } else { "no" }, if f.view { "yes" } else { "no" });
    ExitCode::SUCCESS
}

/// Runs the shipped generator with `python` (`--from-dispatcher --no-expansions`): the user's
/// own torch build says which kernels it registered — the only way to see an XPU build's.
fn refresh(python: &str) -> ExitCode {
    let Some(dir) = backend::user_dir() else {
        return fail(EXIT_USAGE, &"no config folder is known (set XDG_CONFIG_HOME or XPU_WORKBENCH_OPS_DIR)");
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return fail(EXIT_FAILED, &format!("{}: cannot create: {e}", dir.display()));
    }
    let probe = Command::new(python).args(["-c", "import torch; print(torch.__version__)"]).output();
    let version = match probe {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            return fail(EXIT_USAGE, &format!("{python}: cannot import torch: {}", err.lines().last().unwrap_or("")));
        }
        Err(e) => return fail(EXIT_USAGE, &format!("{python}: cannot run: {e}")),
    };
    let tag = version.split('+').next().unwrap_or(&version).to_string();
    let out = dir.join(format!("torch-{tag}-dispatcher.json"));
    if let Err(code) = run_generator(python, &out) {
        return code;
    }
    match backend::BackendTable::load(&out) {
        Ok(t) => {
            println!("wrote {} ({} ops, torch {version}, from this build's dispatcher)", out.display(), t.ops.len());
            ExitCode::SUCCESS
        }
        Err(e) => fail(EXIT_FAILED, &e),
    }
}

fn run_generator(python: &str, out: &Path) -> Result<(), ExitCode> {
    use std::io::Write;
    let mut child = Command::new(python)
        .args(["-", out.to_str().unwrap_or_default(), "--from-dispatcher", "--no-expansions"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(EXIT_USAGE, &format!("{python}: cannot run: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(GENERATOR.as_bytes()).map_err(|e| fail(EXIT_FAILED, &format!("{python}: {e}")))?;
    }
    let o = child.wait_with_output().map_err(|e| fail(EXIT_FAILED, &format!("{python}: {e}")))?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        return Err(fail(EXIT_FAILED, &format!("the table generator failed under {python}: {}", err.lines().last().unwrap_or(""))));
    }
    Ok(())
}
