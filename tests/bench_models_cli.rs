//! `bench models` as a user runs it on a corpus: a seeded sample of the committed zoo exports,
//! torch's side read from a saved document (tests/data/bench_models/torch_fake.json: made-up
//! times, one model per outcome, since CI never installs torch), and the summary and markdown
//! that judge issue 28's bar.

mod common;

use common::run_cli;
use serde_json::Value;

const FAKE: &str = "tests/data/bench_models/torch_fake.json";
const ONLY: &str = "bert,llama,t5_encoder,whisper_encoder";

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

// What the fake document makes of each model: t5_encoder's torch times are 1,000 s (ours is
// ahead; its eager runs spread 2 ×), llama's 1 ns (ours is behind); torch could not load whisper_encoder, and
// torch.compile failed on bert where its eager ran.

#[test]
fn a_seeded_sample_is_measured_against_saved_torch_times_and_summarised() {
    if xpu_workbench::runtime::opencl::OpenClDevice::open().is_err() {
        common::skip_opencl::<()>("no OpenCL device: bench models times device kernels".into());
        return;
    }
    let md = std::env::temp_dir().join(format!("xpuwb-bench-models-{}.md", std::process::id()));
    let md_arg = md.display().to_string();
    let args = ["bench", "models", "--dir", "samples/zoo/torch-2.15", "--only", ONLY, "--sample", "2", "--seed", "1", "--warmup", "0", "--repeat", "1", "--torch-json", FAKE, "--markdown", &md_arg];
    let (code, out, err) = run_cli(&args);
    assert_eq!(code, 0, "{err}");
    let doc = json(&out);

    // The draw is pinned: the same seed must give the same models on every machine.
    let sample = &doc["sample"];
    assert_eq!((sample["sampled"].as_u64(), sample["of"].as_u64(), sample["seed"].as_u64()), (Some(2), Some(4), Some(1)), "{sample}");
    let drawn: Vec<&str> = doc["models"].as_array().expect("models").iter().filter_map(|r| r["model"].as_str()).collect();
    assert_eq!(drawn, ["t5_encoder", "whisper_encoder"], "seed 1's sample of the four");
    assert_eq!(sample["models"], serde_json::json!(["samples/zoo/torch-2.15/t5_encoder.pt2", "samples/zoo/torch-2.15/whisper_encoder.pt2"]));

    // One line per model on stderr as it finishes, after the line listing the sample.
    let lines: Vec<Value> = err.lines().filter(|l| l.starts_with('{')).map(json).collect();
    assert!(lines.first().is_some_and(|l| l["sample"] == 2), "{err}");
    let streamed: Vec<&str> = lines.iter().filter_map(|l| l["model"].as_str()).collect();
    assert_eq!(streamed, ["t5_encoder", "whisper_encoder"], "{err}");

    // whisper_encoder ran on our side but not torch's: not a win, listed with torch's reason.
    let s = &doc["summary"];
    assert_eq!(s["models"], 2, "{s}");
    for side in ["against_compiled", "against_eager"] {
        assert_eq!((s[side]["measured"].as_u64(), s[side]["ahead"].as_u64()), (Some(1), Some(1)), "{side}: {s}");
        assert_eq!(s[side]["ahead_pct_of_models"].as_f64(), Some(50.0), "{side}: {s}");
        assert_eq!(s[side]["ahead_pct_of_measured"].as_f64(), Some(100.0), "{side}: {s}");
    }
    let t5 = doc["models"][0]["full"]["median_wall_ms"].as_f64().expect("t5_encoder's wall time");
    let ratio = s["against_compiled"]["median_ratio"].as_f64().expect("a median ratio");
    assert!((ratio - t5 / 1e6).abs() <= 1e-9 * ratio, "{ratio} vs {t5} ms / 1,000 s");
    let not = s["not_measured"].as_array().expect("a list");
    assert_eq!(not.len(), 1, "{s}");
    assert_eq!(not[0]["model"], "whisper_encoder", "{s}");
    assert!(not[0]["ours"].is_null(), "ours ran: {s}");
    assert!(not[0]["torch_compiled"].as_str().is_some_and(|r| r.contains("grouped_mm_fallback")), "{s}");
    assert!(doc["models"][1]["full"]["median_wall_ms"].as_f64().is_some(), "{}", doc["models"][1]);
    // t5_encoder's eager runs spread 2 × (one timed run each on our side: no spread there).
    assert_eq!(doc["models"][0]["torch_eager_spread"], 2.0, "{}", doc["models"][0]);
    assert_eq!(s["unsteady"], serde_json::json!([{"model": "t5_encoder", "dir": "samples/zoo/torch-2.15", "spread": 2.0}]), "{s}");

    let machine = &doc["machine"];
    assert!(machine["cores"].as_u64().is_some_and(|c| c > 0), "{machine}");
    assert_eq!(machine["build"]["debug_assertions"], cfg!(debug_assertions), "{machine}");
    assert!(machine["load_average_before"].is_array() && machine["load_average_after"].is_array(), "{machine}");
    assert_eq!(doc["torch"]["threads"], 2, "read from the saved document");

    let table = std::fs::read_to_string(&md).expect("the markdown was written");
    let _ = std::fs::remove_file(&md);
    assert!(table.contains("`--sample 2 --seed 1`"), "{table}");
    assert!(table.contains("| t5_encoder | "), "{table}");
    assert!(table.contains("| torch.compile | 2 | 1 | 1 | 50.0 | 100.0 |"), "{table}");
    assert!(table.contains("- whisper_encoder (samples/zoo/torch-2.15): torch: RuntimeError"), "{table}");
}

#[test]
fn a_sample_larger_than_the_set_takes_all_and_a_compile_failure_keeps_eager() {
    if xpu_workbench::runtime::opencl::OpenClDevice::open().is_err() {
        common::skip_opencl::<()>("no OpenCL device: bench models times device kernels".into());
        return;
    }
    let args = ["bench", "models", "--dir", "samples/zoo/torch-2.15", "--only", "bert,llama", "--sample", "10", "--seed", "1", "--warmup", "0", "--repeat", "1", "--torch-json", FAKE];
    let (code, out, err) = run_cli(&args);
    assert_eq!(code, 0, "{err}");
    let doc = json(&out);
    assert_eq!(doc["sample"]["sampled"], 2, "{}", doc["sample"]);
    let s = &doc["summary"];
    // llama: measured on both sides and behind (torch's 1 ns); bert: torch.compile failed.
    assert_eq!((s["against_compiled"]["measured"].as_u64(), s["against_compiled"]["ahead"].as_u64()), (Some(1), Some(0)), "{s}");
    assert_eq!((s["against_eager"]["measured"].as_u64(), s["against_eager"]["ahead"].as_u64()), (Some(2), Some(1)), "{s}");
    let not = s["not_measured"].as_array().expect("a list");
    assert_eq!(not.len(), 1, "{s}");
    assert_eq!((not[0]["model"].as_str(), not[0]["torch_compiled"].as_str()), (Some("bert"), Some("InductorError: made up")), "{s}");
    assert!(not[0]["torch_eager"].is_null(), "{s}");
}

#[test]
fn an_unreadable_torch_document_is_a_usage_error_naming_it() {
    if xpu_workbench::runtime::opencl::OpenClDevice::open().is_err() {
        common::skip_opencl::<()>("no OpenCL device: bench models checks for one first".into());
        return;
    }
    let (code, _, err) = run_cli(&["bench", "models", "--dir", "samples/zoo/torch-2.15", "--only", "bert", "--torch-json", "tests/data/bench_models/missing.json"]);
    assert_ne!(code, 0);
    assert!(err.contains("missing.json"), "{err}");
}

#[test]
fn a_resumed_run_reruns_neither_torch_nor_our_finished_models() {
    if xpu_workbench::runtime::opencl::OpenClDevice::open().is_err() {
        common::skip_opencl::<()>("no OpenCL device: bench models times device kernels".into());
        return;
    }
    // The log of a run stopped after torch's side and our first model: with every torch row
    // there, the Python given (which does not exist) is never started; t5_encoder's row is
    // taken as it was (a wall time no run here would give), whisper_encoder's is measured now.
    let log = std::env::temp_dir().join(format!("xpuwb-bench-models-resume-{}.log", std::process::id()));
    let text = [
        r#"{"sample": 2, "of": 4, "seed": 1, "models": []}"#,
        r#"{"torch": {"torch": "2.15.0", "threads": 2, "repeat": 1, "custom_ops": {}}}"#,
        r#"{"torch": {"model": "t5_encoder", "dir": "samples/zoo/torch-2.15", "eager_ms": 500.0, "compiled_ms": 100.0}}"#,
        r#"{"torch": {"model": "whisper_encoder", "dir": "samples/zoo/torch-2.15", "eager_ms": 1000000.0, "compiled_ms": 1000000.0}}"#,
        r#"{"full": {"median_wall_ms": 123.0}, "torch_eager_ms": 1.0, "model": "t5_encoder", "dir": "samples/zoo/torch-2.15"}"#,
        r#"{"bindings": {"s6": 3}, "lite": {"kern"#,
    ]
    .join("\n");
    std::fs::write(&log, text).expect("the log");
    let log_arg = log.display().to_string();
    let args = ["bench", "models", "--dir", "samples/zoo/torch-2.15", "--only", ONLY, "--sample", "2", "--seed", "1", "--warmup", "0", "--repeat", "1", "--against-torch", "/nonexistent/python3", "--resume", &log_arg];
    let (code, out, err) = run_cli(&args);
    let _ = std::fs::remove_file(&log);
    assert_eq!(code, 0, "{err}");
    let doc = json(&out);
    let rows = doc["models"].as_array().expect("models");
    assert_eq!(rows[0]["full"]["median_wall_ms"], 123.0, "{}", rows[0]);
    assert_eq!(rows[0]["torch_eager_ms"], 500.0, "joined from torch's resumed row, not the stale one: {}", rows[0]);
    assert!(rows[1]["full"]["median_wall_ms"].as_f64().is_some_and(|w| w > 0.0), "{}", rows[1]);
    assert_eq!(doc["torch"]["torch"], "2.15.0", "{}", doc["torch"]);
    let s = &doc["summary"]["against_compiled"];
    assert_eq!((s["measured"].as_u64(), s["ahead"].as_u64()), (Some(2), Some(1)), "123 ms against 100 ms behind, ours against 1,000 s ahead: {s}");
    let streamed: Vec<String> = err.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).filter_map(|l| l["model"].as_str().map(String::from)).collect();
    assert_eq!(streamed, ["t5_encoder", "whisper_encoder"], "the resumed row is printed again: {err}");
    // So are torch's settings and rows: this run's log resumes in turn.
    let torch_lines: Vec<Value> = err.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).filter_map(|l| l.get("torch").cloned()).collect();
    assert_eq!(torch_lines.len(), 3, "{err}");
    assert_eq!((torch_lines[0]["torch"].as_str(), torch_lines[1]["model"].as_str()), (Some("2.15.0"), Some("t5_encoder")), "{err}");
}
