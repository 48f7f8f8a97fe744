//! `bench ops` as users call it, on the committed long-line cases: timings next to torch's
//! committed ones, and a per-case limit that stops a case instead of waiting for it.

mod common;

use common::run_cli;

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[test]
fn bench_ops_times_the_cases_next_to_torch_eager() {
    let (code, out, err) = run_cli(&["bench", "ops", "--dir", "tests/data/long_lines", "--only", "argsort", "--repeat", "2", "--max-seconds", "120", "--json"]);
    assert_eq!(code, 0, "{err}");
    let doc = json(&out);
    assert_eq!(doc["cases"], 4, "{doc}");
    assert_eq!(doc["torch"]["torch"], "2.15.0+cu132", "the committed timings of tests/data/long_lines/torch_times.json");
    let rows = doc["rows"].as_array().expect("rows");
    for r in rows {
        assert!(r["torch_ms"].as_f64().is_some_and(|t| t > 0.0), "{r}");
        assert!(r["interp_ms"].as_f64().is_some(), "{r}");
        assert_eq!(r["timed_out"], false, "{r}");
    }
    if xpu_workbench::runtime::opencl::OpenClDevice::open().is_err() {
        common::skip_opencl::<()>("no OpenCL device: device times not checked".into());
        return;
    }
    let big = rows.iter().find(|r| r["key"] == "argsort.zip.gz#0").expect("the 8,000-value argsort");
    assert_eq!(big["kernels"], 13, "{big}");
    // Milliseconds, where the stable-rank lowering took minutes.
    assert!(big["device_ms"].as_f64().is_some_and(|d| d > 0.0 && d < 1000.0), "{big}");
}

#[test]
fn a_case_past_the_limit_is_stopped_and_listed_slow() {
    let t0 = std::time::Instant::now();
    let (code, out, err) = run_cli(&["bench", "ops", "--dir", "tests/data/long_lines", "--only", "msort,topk", "--max-seconds", "0.001", "--json"]);
    assert_eq!(code, 0, "{err}");
    let doc = json(&out);
    assert_eq!(doc["cases"], 3, "{doc}");
    assert_eq!(doc["timed_out"], 3, "{doc}");
    assert_eq!(doc["slow"].as_array().map(Vec::len), Some(3), "{doc}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(60), "the run waited for its workers");
}
