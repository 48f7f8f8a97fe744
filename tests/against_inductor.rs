//! `profile FILE --against-inductor LOG --inductor-trace TRACE` on real artifacts: the models of
//! `samples/inductor/compare/` (scripts/gen_inductor_compare.py, torch 2.15 on this CPU), each an
//! export, a TORCH_TRACE log of torch.compile of the same model and a torch.profiler trace of it.
//!
//! Which Inductor kernel computes which original node was read off the output code in the logs
//! (`# Topologically Sorted Source Nodes: [x, linear_1]` above `extern_kernels.addmm:3`, the
//! provenance mappings for the C++ kernels); our side runs on the reference interpreter, so
//! these tests need no OpenCL runtime and check the matching, not our speed.

mod common;

use std::io::Read;

use serde_json::Value;

use common::run_cli as run;

const DIR: &str = "samples/inductor/compare";

fn compare(model: &str, trace: Option<&str>) -> Value {
    let pt2 = format!("{DIR}/{model}.pt2");
    let log = format!("{DIR}/{model}.log.gz");
    let default_trace = format!("{DIR}/{model}.profile.json.gz");
    let trace = trace.unwrap_or(&default_trace);
    let args = ["profile", &pt2, "--device", "reference", "--warmup", "0", "--repeat", "1", "--json", "--against-inductor", &log, "--inductor-trace", trace];
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    v["against_inductor"].clone()
}

fn strings(v: &Value) -> Vec<String> {
    let mut s: Vec<String> = v.as_array().map_or(Vec::new(), |a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect());
    s.sort();
    s
}

/// The row whose our-side nodes are exactly `nodes`.
fn row<'a>(c: &'a Value, nodes: &[&str]) -> &'a Value {
    let mut want: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
    want.sort();
    let rows = c["comparison"]["rows"].as_array().expect("rows");
    rows.iter().find(|r| strings(&r["ours_nodes"]) == want).unwrap_or_else(|| panic!("no row with our nodes {nodes:?} in {rows:#?}"))
}

fn trace_events(path: &str) -> Vec<Value> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("trace")).read_to_string(&mut text).expect("gzip");
    let v: Value = serde_json::from_str(&text).expect("trace JSON");
    v["traceEvents"].as_array().cloned().unwrap_or_default()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    assert!(n > 0);
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// The MLP: we fuse each matmul with its activation, Inductor calls `addmm` and fuses the
/// activation alone (`cpp_fused_gelu_0` computes dynamo's `x`, the gelu). Inductor's times are
/// checked against the trace read here directly: per run, the record function of the C++ kernel
/// plus the run's k-th `aten::addmm`.
#[test]
fn mlp_regions_pair_our_fused_matmuls_with_inductors_library_call_and_cpp_kernel() {
    let c = compare("mlp", None);
    let rows = c["comparison"]["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 3, "{rows:#?}");
    let events = trace_events(&format!("{DIR}/mlp.profile.json.gz"));
    let durs = |name: &str| -> Vec<f64> {
        let mut e: Vec<(f64, f64)> = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["name"] == name)
            .filter_map(|e| Some((e["ts"].as_f64()?, e["dur"].as_f64()?)))
            .collect();
        e.sort_by(|a, b| a.0.total_cmp(&b.0));
        e.into_iter().map(|(_, d)| d).collect()
    };
    let addmm = durs("aten::addmm");
    let runs = durs("## Call CompiledFxGraph fmf6nqbz5c4kzetvvrfjmiqg7gppumvb6zbbx6nkkyyfxi5juxbu ##").len();
    assert_eq!((runs, addmm.len()), (10, 30), "three addmm calls in each of ten runs");
    let nth_addmm = |k: usize| -> Vec<f64> { (0..runs).map(|r| addmm[3 * r + k]).collect() };
    for (ours, theirs, their_nodes, cpp, k) in [
        (&["linear", "gelu"][..], ["cpp_fused_gelu_0 (c++)", "extern_kernels.addmm:1 (library)"], ["linear", "x"], Some("graph_0_cpp_fused_gelu_0"), 0),
        (&["linear_1", "relu"][..], ["cpp_fused_relu_1 (c++)", "extern_kernels.addmm:3 (library)"], ["linear_1", "x_1"], Some("graph_0_cpp_fused_relu_1"), 1),
        (&["linear_2"][..], ["extern_kernels.addmm:5 (library)", ""], ["linear_2", ""], None, 2),
    ] {
        let r = row(&c, ours);
        let want: Vec<String> = theirs.iter().filter(|s| !s.is_empty()).map(|s| s.to_string()).collect();
        assert_eq!(strings(&r["inductor"]), want, "{r}");
        let want: Vec<String> = their_nodes.iter().filter(|s| !s.is_empty()).map(|s| s.to_string()).collect();
        assert_eq!(strings(&r["inductor_nodes"]), want, "{r}");
        let expected = median(nth_addmm(k)) + cpp.map_or(0.0, |n| median(durs(n)));
        let got = r["inductor_us"].as_f64().expect("Inductor's time");
        assert!((got - expected).abs() < 1e-6, "{ours:?}: {got} µs, the trace says {expected} µs");
        let (o, ratio) = (r["ours_us"].as_f64().expect("our time"), r["ratio"].as_f64().expect("a ratio"));
        assert!(o > 0.0 && (ratio - o / got).abs() < 1e-9, "{r}");
    }
    let pairs = c["comparison"]["pairs"].as_array().expect("pairs");
    assert!(pairs.iter().any(|p| p["ours"] == "gelu" && p["inductor"] == "x" && p["by"] == "line_and_op"), "{pairs:#?}");
    assert_eq!(c["runs"], 10);
    assert!(c["notes"].as_array().is_some_and(Vec::is_empty), "{}", c["notes"]);
}

/// The transformer block: attention is a fallback call in Inductor's code
/// (`aten._scaled_dot_product_flash_attention_for_cpu`), the first layer norm is
/// `cpp_fused_native_layer_norm_0` (dynamo's `h`), and each side's every kernel lands in exactly
/// one row, so the rows add up to the totals.
#[test]
fn transformer_block_rows_cover_every_kernel_once() {
    let c = compare("transformer_block", None);
    let cmp = &c["comparison"];
    let rows = cmp["rows"].as_array().expect("rows");
    let attention = rows.iter().find(|r| strings(&r["ours_nodes"]).contains(&"scaled_dot_product_attention".to_string())).expect("an attention row");
    assert!(strings(&attention["inductor"]).iter().any(|k| k.starts_with("aten._scaled_dot_product_flash_attention_for_cpu.default") && k.ends_with("(fallback)")), "{attention}");
    let norm = row(&c, &["layer_norm"]);
    assert_eq!(strings(&norm["inductor"]), ["cpp_fused_native_layer_norm_0 (c++)"]);
    assert_eq!(strings(&norm["inductor_nodes"]), ["h"]);
    let sum = |key: &str| rows.iter().filter_map(|r| r[key].as_f64()).sum::<f64>();
    assert!((sum("ours_us") - cmp["ours_total_us"].as_f64().unwrap_or(-1.0)).abs() < 1e-6, "{cmp}");
    assert!((sum("inductor_us") - cmp["inductor_total_us"].as_f64().unwrap_or(-1.0)).abs() < 1e-6, "{cmp}");
    let kernels: usize = rows.iter().map(|r| r["inductor"].as_array().map_or(0, Vec::len)).sum();
    assert_eq!(kernels, 11, "the log's 11 kernels, each once");
    assert!(rows.iter().all(|r| !r["ours"].as_array().is_some_and(Vec::is_empty) && r["inductor_us"].as_f64().is_some()), "every region runs on both sides: {rows:#?}");
    // Export and compile ran the same source: every node a kernel computes found its partner by
    // line and op (views included: dynamo's `view` of `q` is the export's `view`).
    assert!(rows.iter().all(|r| strings(&r["unpaired_ours"]).is_empty() && strings(&r["unpaired_inductor"]).is_empty()), "{rows:#?}");
    let pairs = cmp["pairs"].as_array().expect("pairs");
    assert!(pairs.len() >= 20 && pairs.iter().all(|p| p["by"] == "line_and_op"), "{pairs:#?}");
}

/// The CNN: Inductor's C++ kernel after the first convolution also computes part of the second
/// (`conv2d_1` is among its nodes: it lays the activation out for the library convolution), so
/// both convolution blocks are one connected region on its side, and ours with them; the
/// classifier's matmul stays a region of its own.
#[test]
fn cnn_many_to_many_fusions_group_into_one_region() {
    let c = compare("cnn", None);
    let rows = c["comparison"]["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2, "{rows:#?}");
    let convs = rows.iter().find(|r| strings(&r["ours_nodes"]).contains(&"conv2d".to_string())).expect("the convolution region");
    let theirs = strings(&convs["inductor"]);
    assert_eq!(theirs.iter().filter(|k| k.starts_with("extern_kernels.convolution")).count(), 2, "{theirs:?}");
    assert_eq!(theirs.iter().filter(|k| k.ends_with("(c++)")).count(), 3, "{theirs:?}");
    assert!(strings(&convs["ours_nodes"]).contains(&"conv2d_1".to_string()));
    assert_eq!(strings(&row(&c, &["linear"])["inductor"]), ["extern_kernels.addmm:6 (library)"]);
}

/// The same MLP trace without the C++ kernels' record functions (what a run without
/// TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE=1 records): the library calls keep their times, the
/// C++ kernels have none, and the output says why rather than counting them as free.
#[test]
fn a_trace_without_cpp_kernel_records_says_so() {
    let events: Vec<Value> = trace_events(&format!("{DIR}/mlp.profile.json.gz"))
        .into_iter()
        .filter(|e| !e["name"].as_str().is_some_and(|n| n.starts_with("graph_0_cpp_fused")))
        .collect();
    let dir = std::env::temp_dir().join(format!("xpuwb-against-inductor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("no_cpp.json");
    std::fs::write(&path, serde_json::json!({ "traceEvents": events }).to_string()).expect("write");
    let c = compare("mlp", Some(path.to_str().expect("utf-8 path")));
    let notes = c["notes"].to_string();
    assert!(notes.contains("2 C++ kernel(s) have no call") && notes.contains("TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE=1"), "{notes}");
    let r = row(&c, &["linear", "gelu"]);
    let _ = std::fs::remove_dir_all(&dir);
    let addmm_only = r["inductor_us"].as_f64().expect("the library call's time");
    assert!(addmm_only > 0.0);
    let full = compare("mlp", None);
    assert!(addmm_only < row(&full, &["linear", "gelu"])["inductor_us"].as_f64().unwrap_or(0.0));
}

#[test]
fn bad_inputs_are_named() {
    let pt2 = format!("{DIR}/mlp.pt2");
    let (code, _, err) = run(&["profile", &pt2, "--device", "reference", "--against-inductor", "nowhere.log", "--inductor-trace", "nowhere.json"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nowhere.log"), "{err}");
    let log = format!("{DIR}/mlp.log.gz");
    let (code, _, err) = run(&["profile", &pt2, "--device", "reference", "--against-inductor", &log, "--inductor-trace", &pt2]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("mlp.pt2") && err.contains("not a Chrome trace"), "{err}");
    let (code, _, err) = run(&["profile", &pt2, "--against-inductor", &log]);
    assert_eq!(code, 2, "--against-inductor needs --inductor-trace: {err}");
}
