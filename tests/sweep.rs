//! The `sweep` command as users call it, on real samples: the reference device always, OpenCL where
//! its runtime is installed.

mod common;

use std::path::PathBuf;

use serde_json::Value;

use common::run_cli as run;

fn json(args: &[&str]) -> Value {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn sample(name: &str) -> String {
    common::sample(name).display().to_string()
}

/// `samples/mlp.pt2` with a guard on its batch as torch writes guards (`guards_code`), saved to a
/// temporary file: the samples' own guards never flip.
fn mlp_with_guard(guard: &str) -> PathBuf {
    let guard = guard.to_string();
    let bytes = common::edit_model_json("mlp.pt2", move |v| {
        v["guards_code"] = serde_json::json!([guard.clone()]);
    });
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("xpu-wb-sweep-{}-{n}.pt2", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

fn values_of(v: &Value, mode: &str) -> Vec<i64> {
    v["points"].as_array().unwrap().iter().filter(|p| p["mode"] == mode).map(|p| p["value"].as_i64().unwrap()).collect()
}

#[test]
fn json_has_the_issues_shape_for_every_point_and_mode() {
    let v = json(&["sweep", &sample("mlp.pt2"), "--dim", "s77=1..64", "--points", "4", "--device", "reference", "--repeat", "2", "--json"]);
    assert_eq!(v["dim"], "s77");
    assert_eq!(v["backend"], "reference");
    assert_eq!(values_of(&v, "lite"), vec![1, 4, 16, 64]);
    assert_eq!(values_of(&v, "full"), vec![1, 4, 16, 64]);
    for p in v["points"].as_array().unwrap() {
        assert!(p["device_us"].as_f64().unwrap() > 0.0, "{p}");
        assert!(p["bytes"].as_u64().unwrap() > 0);
        assert_eq!(p["bytes"].as_u64(), Some(p["bytes_read"].as_u64().unwrap() + p["bytes_written"].as_u64().unwrap()));
        assert_eq!(p["recompiled"], false);
        assert_eq!(p["guards"].as_array().unwrap().len(), 0);
        let kernels = p["kernels"].as_array().unwrap();
        assert_eq!(kernels.len() as u64, p["kernels_launched"].as_u64().unwrap());
        assert!(kernels.iter().all(|k| k["name"].is_string() && k["median_us"].as_f64().is_some()));
    }
    assert_eq!(v["compiles"], serde_json::json!({"lite": 1, "full": 1}));
}

#[test]
fn a_guard_in_the_archive_flips_and_recompiles_where_it_says() {
    let file = mlp_with_guard("L['x'].size()[0] <= 16");
    let path = file.display().to_string();
    let v = json(&["sweep", &path, "--dim", "s77=1..100", "--points", "3", "--device", "reference", "--repeat", "1", "--json"]);
    // The ends, the log-spaced middle and both sides of the flip.
    assert_eq!(values_of(&v, "full"), vec![1, 10, 16, 17, 100]);
    assert_eq!(v["flips"], serde_json::json!([{"value": 17, "guard": "L['x'].size()[0] <= 16", "from": true, "to": false}]));
    assert_eq!(v["flip_search"]["method"], "exact");
    for p in v["points"].as_array().unwrap() {
        let value = p["value"].as_i64().unwrap();
        assert_eq!(p["recompiled"], value == 17, "{p}");
        assert_eq!(p["guards"][0]["value"], value <= 16);
    }
    assert_eq!(v["compiles"], serde_json::json!({"lite": 2, "full": 2}));
    let (code, out, err) = run(&["sweep", &path, "--dim", "s77=1..100", "--values", "8,40", "--mode", "full", "--device", "reference", "--repeat", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.contains("40") && l.contains("recompiled")), "{out}");
    assert!(out.contains("plans compiled: full 2"), "{out}");
    let _ = std::fs::remove_file(file);
}

#[test]
fn csv_has_a_row_per_value_and_mode() {
    let (code, out, err) = run(&["sweep", &sample("sym_views.pt2"), "--dim", "s77=1..32", "--bind", "s27=4", "--values", "1,32", "--device", "reference", "--repeat", "1", "--csv"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("s77,mode,device_us,bytes_read,bytes_written,gb_per_s,kernels_launched,repetitions,recompiled,host_us,kernel:"), "{}", lines[0]);
    assert_eq!(lines.len(), 1 + 2 * 2);
    assert!(lines[1].starts_with("1,lite,") && lines[4].starts_with("32,full,"), "{out}");
}

#[test]
fn errors_name_the_symbol_and_its_range() {
    let t = sample("transformer_block.pt2");
    let cases: &[(&[&str], &str)] = &[
        (&["--dim", "seq=1..8"], "--dim seq: not a symbol of this model; its symbols are: s27 ∈ [2, 512], s77 ∈ [1, 1024]"),
        (&["--dim", "s27=1..8"], "--dim s27=1..8: outside the symbol's legal range [2, 512]"),
        (&["--dim", "s27=8..2"], "empty range"),
        (&["--dim", "s27"], "`s27` is not of the form SYM=LO..HI"),
        (&["--dim", "s27=2..8", "--bind", "s77=0"], "s77 = 0 is outside its range [1, 1024]"),
        (&["--dim", "s27=2..8", "--values", "3,9"], "--values: s27 = 9 is outside the swept range 2..8"),
        (&["--dim", "s27=2..8", "--mode", "lite,fast"], "unknown --mode `fast`"),
    ];
    for (args, want) in cases {
        let mut all = vec!["sweep", t.as_str(), "--device", "reference"];
        all.extend_from_slice(args);
        let (code, _, err) = run(&all);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn transformer_on_opencl_lite_against_full() {
    if common::opencl_device().is_none() {
        return;
    }
    let v = json(&["sweep", &sample("transformer_block.pt2"), "--dim", "s27=2..64", "--points", "4", "--device", "opencl", "--json"]);
    assert_eq!(v["backend"], "opencl");
    for mode in ["lite", "full"] {
        let pts: Vec<&Value> = v["points"].as_array().unwrap().iter().filter(|p| p["mode"] == mode).collect();
        assert_eq!(pts.len(), 4);
        // Device timestamps, every kernel timed.
        assert!(pts.iter().all(|p| p["device_us"].as_f64().unwrap() > 0.0 && p["gb_per_s"].as_f64().unwrap() > 0.0));
        let bytes: Vec<u64> = pts.iter().map(|p| p["bytes"].as_u64().unwrap()).collect();
        assert!(bytes.windows(2).all(|w| w[0] < w[1]), "{mode}: {bytes:?}");
    }
    assert_eq!(v["compiles"], serde_json::json!({"lite": 1, "full": 1}));
}

/// `sweep-profiles` on the tiny Llama's torch.profiler traces at seven sequence lengths, default
/// and lite mode, recorded on an H100 with torch 2.11 (`scripts/gen_profile_sweep.py`).
#[test]
fn a_sweep_from_real_profiler_traces_has_every_size_of_both_modes() {
    let dir = sample("inductor/sweep");
    let v = json(&["sweep-profiles", "--dir", &dir, "--json"]);
    assert_eq!(v["backend"], "profile");
    let sizes = vec![16, 32, 64, 128, 256, 512, 1024];
    assert_eq!(values_of(&v, "lite"), sizes);
    assert_eq!(values_of(&v, "full"), sizes);
    for p in v["points"].as_array().unwrap() {
        let total = p["device_us"].as_f64().unwrap();
        let kernels = p["kernels"].as_array().unwrap();
        assert!(total > 0.0 && !kernels.is_empty(), "{p}");
        // One compile serves every size (dynamic=True): nothing recompiled.
        assert_eq!(p["recompiled"], false, "{p}");
        assert_eq!(p["repetitions"], 5, "{p}");
        // Every device op was attributed to a kernel, so the kernels' medians add up to about the
        // total (a sum of medians is not the median of sums: allow 10 %).
        let sum: f64 = kernels.iter().map(|k| k["median_us"].as_f64().unwrap()).sum();
        assert!((sum - total).abs() <= 0.1 * total, "{}: kernels {sum} vs total {total}", p["value"]);
    }
}

/// The same points from `--log`/`MODE@VALUE=TRACE` arguments as from the folder, and the device
/// time agrees with the `kernels` command's attribution of the same trace (5 invocations).
#[test]
fn sweep_profiles_arguments_agree_with_the_folder_and_with_kernels() {
    let d = |f: &str| sample(&format!("inductor/sweep/{f}"));
    let v = json(&[
        "sweep-profiles",
        "--log",
        &format!("default={}", d("llama_default.log.gz")),
        &format!("default@64={}", d("llama_default_s64.json.gz")),
        "--json",
    ]);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 1);
    let k = json(&["kernels", &d("llama_default.log.gz"), "--profile", &d("llama_default_s64.json.gz"), "--json"]);
    let k = if k.is_array() { k[0].clone() } else { k };
    let per_call = k["attributed_us"].as_f64().unwrap() / 5.0;
    let total = points[0]["device_us"].as_f64().unwrap();
    assert!((per_call - total).abs() <= 0.1 * per_call, "sweep {total} µs vs kernels {per_call} µs per call");
    let (code, _, err) = run(&["sweep-profiles", "--log", "nonsense", "lite@1=x.json"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("MODE=LOG"), "{err}");
}
