//! PyTorch's own lite-mode test case, `aten._fused_rms_norm(x + 1, [16], None, None)` compiled with
//! `mode="lite"` and `dynamic=True`, as real artifacts (samples/lite/, scripts/gen_lite_cases.py):
//! TORCH_TRACE logs from torch 2.11 on CUDA and CPU and torch 2.15 on CPU, lite and default, with
//! and without the op marked; the exported function from both torches. CUDA has a kernel for the
//! op, CPU has none (nor XPU before torch 2.12), so on CPU tracing expands it before lite mode
//! decides anything — what PyTorch's test caught on XPU.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::sample;
use serde_json::Value;

fn lite(name: &str) -> PathBuf {
    sample(&format!("lite/{name}"))
}

use common::run_cli as run;

fn check(file: &std::path::Path) -> (i32, String) {
    let (code, out, err) = run(&["check-lite", file.to_str().unwrap()]);
    (code, format!("{out}{err}"))
}

/// The recorded facts of each log (made by torch when the log was written).
fn recorded() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for v in ["2.11.0", "2.15.0"] {
        let text = std::fs::read_to_string(lite(&format!("rms_expect_{v}.json"))).expect("expectation file");
        let j: Value = serde_json::from_str(&text).expect("json");
        for (name, facts) in j["logs"].as_object().expect("logs") {
            out.push((name.clone(), facts.clone()));
        }
    }
    out
}

#[test]
fn cpu_lite_logs_fail_naming_the_op_and_the_missing_cpu_kernel() {
    for log in ["rms_cpu_lite_2.11.0.log.gz", "rms_cpu_lite_2.15.0.log.gz"] {
        let (code, out) = check(&lite(log));
        assert_eq!(code, 1, "{log}: {out}");
        assert!(out.contains("node `_fused_rms_norm` (aten._fused_rms_norm)"), "{log}: {out}");
        assert!(out.contains("CPU has no kernel for aten._fused_rms_norm"), "{log}: {out}");
        for op in ["pow", "mean", "rsqrt", "mul"] {
            assert!(out.contains(op), "{log}: what it became ({op}) is not shown: {out}");
        }
    }
}

#[test]
fn cuda_lite_log_passes_and_default_mode_fails_as_inductors_table_decomposed_it() {
    let (code, out) = check(&lite("rms_cuda_lite_2.11.0.log.gz"));
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("ok:") || out.contains("\nok:"), "{out}");
    let (code, out) = check(&lite("rms_cuda_default_2.11.0.log.gz"));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("aten._fused_rms_norm has a kernel here but was decomposed although not marked"), "{out}");
    assert!(out.contains("Inductor's default decomposition table"), "{out}");
}

#[test]
fn marked_op_may_be_decomposed_on_any_backend() {
    for log in ["rms_cpu_lite_marked_2.11.0.log.gz", "rms_cpu_lite_marked_2.15.0.log.gz", "rms_cuda_lite_marked_2.11.0.log.gz"] {
        let (code, out) = check(&lite(log));
        assert_eq!(code, 0, "{log}: {out}");
    }
    let (_, out) = check(&lite("rms_cpu_lite_marked_2.11.0.log.gz"));
    assert!(out.contains("is marked compile_with_inductor"), "{out}");
}

/// PyTorch's test asserts that the output code still calls the op; on every unmarked log our
/// verdict agrees with what torch's own output code did (recorded when the log was made).
#[test]
fn verdicts_agree_with_the_output_code_torch_generated() {
    let logs = recorded();
    assert_eq!(logs.len(), 9);
    for (name, facts) in logs {
        let (code, out) = check(&lite(&format!("{name}.log.gz")));
        let marked = facts["marked"].as_bool().unwrap();
        let kept = facts["output_code_calls_op"].as_bool().unwrap();
        if marked {
            assert_eq!(code, 0, "{name}: {out}");
        } else {
            assert_eq!(code == 0, kept, "{name}: torch's output code {} the op, check-lite exited {code}: {out}", if kept { "calls" } else { "does not call" });
        }
    }
}

#[test]
fn json_names_class_backend_and_tables() {
    let (code, out, _) = run(&["check-lite", lite("rms_cpu_lite_2.11.0.log.gz").to_str().unwrap(), "--json"]);
    assert_eq!(code, 1);
    let j: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(j["status"], "violations");
    assert_eq!(j["table_torch"], "2.11.0");
    assert_eq!(j["log_torch"], "2.11.0+cu130");
    let f = j["findings"].as_array().unwrap().iter().find(|f| f["node"] == "_fused_rms_norm").expect("finding");
    assert_eq!((f["class"].as_str(), f["backend"].as_str(), f["violation"].as_bool()), (Some("no_backend_kernel"), Some("CPU"), Some(true)));
    assert_eq!(f["became"]["rsqrt"], 1);
}

#[test]
fn prediction_on_the_exported_graph_per_backend() {
    let pt2 = lite("fused_rms_norm.pt2");
    let p = pt2.to_str().unwrap();
    for (backend, want) in [("cpu", 1), ("xpu", 1), ("cuda", 0)] {
        let (code, out, err) = run(&["check-lite", p, "--backend", backend]);
        assert_eq!(code, want, "{backend}: {out}{err}");
        if want == 1 {
            assert!(out.contains(&format!("{} has no kernel for aten._fused_rms_norm", backend.to_uppercase())), "{out}");
            assert!(out.contains("torch 2.11.0"), "the table's version is named: {out}");
        }
    }
    // XPU has the kernel from torch 2.12 on: the 2.15 export, or --torch, says so.
    let (code, out, _) = run(&["check-lite", lite("fused_rms_norm_2.15.pt2").to_str().unwrap(), "--backend", "xpu"]);
    assert_eq!(code, 0, "{out}");
    for (torch, want) in [("2.10.0", 1), ("2.12.1", 0), ("2.15.0", 0)] {
        let (code, out, _) = run(&["check-lite", p, "--backend", "xpu", "--torch", torch]);
        assert_eq!(code, want, "--torch {torch}: {out}");
    }
    let (code, _, _) = run(&["check-lite", lite("fused_rms_norm_2.15.pt2").to_str().unwrap(), "--backend", "cpu"]);
    assert_eq!(code, 1);
    // Marked: decomposing it is what the user asked for.
    let (code, out, _) = run(&["check-lite", lite("fused_rms_norm_marked.pt2").to_str().unwrap(), "--backend", "cpu"]);
    assert_eq!(code, 0, "{out}");
    let (code, _, err) = run(&["check-lite", p, "--backend", "tpu"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn composite_everywhere_is_expected_not_a_violation() {
    // linear, conv2d, batch_norm... have no kernel on CPU, CUDA or XPU: expanded everywhere.
    for model in ["mlp", "cnn", "transformer_block"] {
        for backend in ["cpu", "cuda", "xpu"] {
            let (code, out, _) = run(&["check-lite", sample(&format!("{model}.pt2")).to_str().unwrap(), "--backend", backend]);
            assert_eq!(code, 0, "{model} on {backend}: {out}");
        }
    }
}

/// A check that cannot see must say so (exit 3), never "ok".
#[test]
fn what_cannot_be_compared_is_unverified_not_ok() {
    let text = {
        use std::io::Read;
        let mut s = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(lite("rms_cuda_lite_2.11.0.log.gz")).unwrap()).read_to_string(&mut s).unwrap();
        s
    };
    let dir = std::env::temp_dir().join(format!("xpu-wb-lite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    // The AOT graphs gone (an envelope kind the reader does not know): nothing to compare with.
    let no_aot = dir.join("no_aot.log");
    std::fs::write(&no_aot, text.replace("{\"aot_inference_graph\"", "{\"aot_inference_graph_renamed\"")).unwrap();
    let (code, out) = check(&no_aot);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("no AOT graph") && out.contains("0/0"), "{out}");

    // An op no table knows: named, with why.
    let custom = dir.join("custom.log");
    std::fs::write(&custom, text.replace("torch.ops.aten._fused_rms_norm(add", "torch.ops.mylib.my_norm(add")).unwrap();
    let (code, out) = check(&custom);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("mylib.my_norm") && out.contains("unverified"), "{out}");

    // No dynamo graph at all: the AOT graph cannot be attributed.
    let no_dynamo = dir.join("no_dynamo.log");
    std::fs::write(&no_dynamo, text.replace("{\"dynamo_output_graph\"", "{\"dynamo_output_graph_renamed\"")).unwrap();
    let (code, out) = check(&no_dynamo);
    assert_eq!(code, 3, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn interpreter_and_opencl_run_fused_rms_norm_in_every_mode() {
    let p = lite("fused_rms_norm.pt2");
    let input = lite("fused_rms_norm.in0.npy");
    let dir = std::env::temp_dir().join(format!("xpu-wb-rms-{}", std::process::id()));
    let mut devices = vec!["reference"];
    if common::opencl_device().is_some() {
        devices.push("opencl");
    }
    for device in devices {
        for mode in ["none", "core", "lite", "full"] {
            let out_dir = dir.join(format!("{device}-{mode}"));
            let (code, out, err) = run(&[
                "run",
                p.to_str().unwrap(),
                "--mode",
                mode,
                "--device",
                device,
                "--inputs",
                input.to_str().unwrap(),
                "--save-outputs",
                out_dir.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{device} {mode}: {out}{err}");
            for k in 0..2 {
                let got = xpu_workbench::npy::read(&out_dir.join(format!("out{k}.npy"))).expect("output");
                let want = xpu_workbench::npy::read(&lite(&format!("fused_rms_norm.out{k}.npy"))).expect("torch output");
                assert_eq!(got.shape, want.shape, "{device} {mode} out{k}");
                let f32s = |a: &xpu_workbench::npy::NpyArray| -> Vec<f64> {
                    assert_eq!(a.dtype, xpu_workbench::ir::DType::F32);
                    a.data.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64).collect()
                };
                let (g, w) = (f32s(&got), f32s(&want));
                assert_eq!(g.len(), w.len());
                let err = g.iter().zip(&w).map(|(a, b)| (a - b).abs()).fold(0.0f64, f64::max);
                assert!(err <= 1e-5, "{device} {mode} out{k}: max |diff| {err}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn backends_lists_tables_and_answers_per_op() {
    let (code, out, _) = run(&["backends", "--json"]);
    assert_eq!(code, 0);
    let tables: Value = serde_json::from_str(&out).unwrap();
    let versions: Vec<&str> = tables.as_array().unwrap().iter().filter(|t| t["origin"] == "embedded").map(|t| t["torch"].as_str().unwrap()).collect();
    assert_eq!(versions, ["2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0"]);
    let (code, out, _) = run(&["backends", "--op", "_fused_rms_norm", "--torch", "2.11.0", "--json"]);
    assert_eq!(code, 0);
    let f: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(f["kernels"], serde_json::json!(["CUDA", "MPS"]));
    assert_eq!((f["composite"].as_bool(), f["inductor_decomposes"].as_bool()), (Some(true), Some(true)));
    let (code, _, err) = run(&["backends", "--op", "no_such_op_anywhere"]);
    assert_eq!(code, 2, "{err}");
}

/// The refresh runs the generator shipped in the binary with the user's python; without one that
/// imports torch it says so (exit 2). Where this machine's python3 has torch, the refresh is run
/// for real and its table read back.
#[test]
fn refresh_reads_the_users_torch_or_says_why_not() {
    let dir = std::env::temp_dir().join(format!("xpu-wb-ops-{}", std::process::id()));
    let run_in = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_xpu-workbench"))
            .args(args)
            .env("XPU_WORKBENCH_OPS_DIR", &dir)
            .output()
            .expect("run");
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, _, err) = run_in(&["backends", "--refresh", "--python", "/nonexistent/python3"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/python3"), "{err}");
    let has_torch = Command::new("python3").args(["-c", "import torch"]).output().is_ok_and(|o| o.status.success());
    if !has_torch {
        eprintln!("python3 here cannot import torch: the real refresh is not exercised on this machine");
        return;
    }
    let (code, out, err) = run_in(&["backends", "--refresh"]);
    assert_eq!(code, 0, "{out}{err}");
    let (_, listed, _) = run_in(&["backends"]);
    assert!(listed.contains("dispatcher of this torch build"), "{listed}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The dynamic-shape case with source locations: views on products of dynamic dims, silu, a layer
/// norm marked or not, softmax; torch 2.11 (CUDA, CPU) and 2.15 (CPU).
#[test]
fn symbolic_views_case_on_both_torches_and_backends() {
    let logs = ["cuda_{m}_2.11.0", "cpu_{m}_2.11.0", "cpu_{m}_2.15.0"];
    for l in logs {
        let name = |m: &str| lite(&format!("symviews_{}.log.gz", l.replace("{m}", m)));
        let (code, out) = check(&name("lite"));
        assert_eq!(code, 0, "{l} lite: {out}");
        let (code, out) = check(&name("default"));
        assert_eq!(code, 1, "{l} default: {out}");
        for (node, op) in [("h_1", "aten.silu"), ("h_2", "aten.native_layer_norm"), ("softmax", "aten._softmax")] {
            assert!(out.contains(&format!("node `{node}`")) && out.contains(&format!("{op} has a kernel here")), "{l}: {node} {op}: {out}");
        }
        // Located: the line of each op is named.
        assert!(out.contains("sym_views_case.py:19 `h = F.silu(self.fc(h))`"), "{out}");
        // Marked, yet torch kept the layer norm whole as a fallback: said, not hidden.
        let (code, out) = check(&name("lite_marked"));
        assert_eq!(code, 0, "{l} marked: {out}");
        assert!(out.contains("is marked compile_with_inductor, yet was kept whole as native_layer_norm"), "{out}");
    }
}

/// `F.rms_norm` as models write it: export keeps `aten.rms_norm`, composite everywhere, which
/// becomes `_fused_rms_norm` — so the backend question is asked of that.
#[test]
fn rms_norm_is_judged_by_what_it_becomes() {
    let p = lite("rms_norm_module_2.15.pt2");
    let p = p.to_str().unwrap();
    for (backend, torch, want) in [("cpu", None, 1), ("cuda", None, 0), ("xpu", None, 0), ("xpu", Some("2.11.0"), 1)] {
        let mut args = vec!["check-lite", p, "--backend", backend];
        if let Some(t) = torch {
            args.extend(["--torch", t]);
        }
        let (code, out, _) = run(&args);
        assert_eq!(code, want, "{backend} {torch:?}: {out}");
        if want == 1 {
            assert!(out.contains("becomes aten._fused_rms_norm"), "{out}");
        }
    }
    // And it runs: the interpreter in every mode against torch's output.
    let dir = std::env::temp_dir().join(format!("xpu-wb-rmsmod-{}", std::process::id()));
    for mode in ["none", "core", "lite", "full"] {
        let out_dir = dir.join(mode);
        let input = lite("fused_rms_norm.in0.npy");
        let (code, out, err) = run(&["eval", p, "--mode", mode, "--inputs", input.to_str().unwrap(), "--save-outputs", out_dir.to_str().unwrap()]);
        assert_eq!(code, 0, "{mode}: {out}{err}");
        let got = xpu_workbench::npy::read(&out_dir.join("out0.npy")).unwrap();
        let want = xpu_workbench::npy::read(&lite("rms_norm_module.out0.npy")).unwrap();
        let f = |a: &xpu_workbench::npy::NpyArray| -> Vec<f32> { a.data.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect() };
        let err = f(&got).iter().zip(f(&want)).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(err <= 1e-5, "{mode}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `F.rms_norm` compiled in lite mode on CPU: dynamo writes `torch.rms_norm`, whose CPU trace
/// (pow, mean, ...) is all there — yet it went through `_fused_rms_norm`, which CPU lacks.
#[test]
fn f_rms_norm_on_cpu_is_caught_through_what_it_becomes() {
    for log in ["rmsfn_cpu_lite_2.15.0.log.gz", "rmsfn_cpu_lite_2.11.0.log.gz"] {
        let (code, out) = check(&lite(log));
        assert_eq!(code, 1, "{log}: {out}");
        assert!(out.contains("node `rms_norm` (torch.rms_norm)") && out.contains("CPU has no kernel for aten._fused_rms_norm"), "{out}");
    }
    // CUDA has the kernel: the same function in lite mode keeps it.
    let (code, out) = check(&lite("rmsfn_cuda_lite_2.11.0.log.gz"));
    assert_eq!(code, 0, "{out}");
    let (_, out) = check(&lite("rmsfn_cpu_lite_2.15.0.log.gz"));
    // Located at the innermost frame torch records: F.rms_norm's own line in functional.py.
    assert!(out.contains("functional.py") && out.contains("torch.rms_norm(input"), "located: {out}");
}

/// Logs of real models nobody on the team wrote (transformers Llama, GPT-2, BERT; torchvision
/// ResNet) compiled by torch 2.15 on CPU and 2.11 on CUDA (samples/inductor/): every lite log
/// passes, every default log fails naming what Inductor's table decomposed, none is unverified.
#[test]
fn real_model_logs_lite_passes_default_fails() {
    let dir = sample("inductor");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("samples/inductor") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".log.gz") {
            continue;
        }
        let (code, out) = check(&path);
        let want = if name.contains("_lite") { 0 } else { 1 };
        assert_eq!(code, want, "{name}: {out}");
        if want == 1 {
            assert!(out.contains("in Inductor's default decomposition table"), "{name}: {out}");
        }
        seen += 1;
    }
    assert!(seen >= 12, "only {seen} logs");
}

/// Cut-off and garbled logs never panic the check, and never pass: what was cut is unverified.
#[test]
fn cut_logs_are_checked_as_far_as_they_go() {
    use std::io::Read;
    use xpu_workbench::import::trace::{self, Limits};
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(lite("symviews_cpu_lite_2.15.0.log.gz")).unwrap()).read_to_end(&mut text).unwrap();
    for i in 1..40 {
        let cut = text.len() * i / 40;
        let Ok(log) = trace::load_bytes("cut.log", &text[..cut], Limits::default()) else { continue };
        let check = xpu_workbench::decomp::lite_trace::check_log(&log);
        assert_eq!(check.violations().count(), 0, "cut at {cut}: a lite log has no violation");
        if check.unverified.is_empty() {
            // A clean answer needs every compile that has a dynamo graph with ops to have been compared.
            assert!(check.compared > 0, "cut at {cut}: ok without comparing anything");
        }
    }
    // Bytes flipped in the graph dumps: no panic, whatever the verdict.
    let mut garbled = text.clone();
    for k in (0..garbled.len()).step_by(997) {
        garbled[k] = b"()[]:,=\n"[k % 8];
    }
    if let Ok(log) = trace::load_bytes("garbled.log", &garbled, Limits::default()) {
        let _ = xpu_workbench::decomp::lite_trace::check_log(&log);
    }
}
