//! Real torch.profiler traces against the TORCH_TRACE logs of the same runs: torch 2.11 on an
//! H100 (`samples/inductor/cuda211_*`, made by `scripts/gen_inductor_logs.py --profile` on the lent
//! GPU machine), and the XPU flavour of the Llama trace (`scripts/make_xpu_profile.py`).

mod common;

use std::io::Read;
use std::path::PathBuf;
use std::process::Command;

use common::sample;
use xpu_workbench::import::trace::{self, KernelKind, KernelSource, Limits};
use xpu_workbench::profile::attribute::{attribute, CompiledKernels};
use xpu_workbench::profile::kernel_time::kernel_times;
use xpu_workbench::profile::kineto::{self, Flavour};

const RUNS: &[&str] = &["llama_default", "llama_lite", "gpt2_default", "gpt2_lite", "resnet_default"];

fn log(run: &str) -> PathBuf {
    sample(&format!("inductor/cuda211_{run}.log.gz"))
}

fn profile(run: &str) -> PathBuf {
    sample(&format!("inductor/cuda211_{run}.profile.json.gz"))
}

fn kernels_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_xpu-workbench")).args(args).output().expect("run binary");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn kernel<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["compiles"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["output_code"].as_array().unwrap())
        .flat_map(|t| t["kernels"].as_array().unwrap())
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no kernel {name}"))
}

#[test]
fn every_compiled_kernel_of_every_run_is_attributed() {
    for run in RUNS {
        let doc = kernels_json(&["kernels", log(run).to_str().unwrap(), "--profile", profile(run).to_str().unwrap(), "--json"]);
        assert_eq!(doc["flavour"], "cuda");
        let share = doc["attributed_share"].as_f64().unwrap();
        assert!(share >= 0.95, "{run}: {share} attributed; unattributed: {}", doc["unattributed"]);
        assert!(doc["attributed_us"].as_f64().unwrap() > 100.0, "{run}");
        let node_share: f64 = doc["nodes"].as_array().unwrap().iter().map(|n| n["share"].as_f64().unwrap()).sum();
        assert!((node_share - 1.0).abs() < 1e-6, "{run}: node shares add up to {node_share}");
    }
}

#[test]
fn gpu_logs_import_whole_with_triton_sources() {
    for run in RUNS {
        let l = trace::load_log(&log(run)).unwrap();
        assert!(l.warnings.is_empty(), "{run}: {:?}", l.warnings);
        let c = l.compiles.iter().find(|c| !c.output_code.is_empty()).unwrap();
        let t = &trace::kernels(c, &l.file_access())[0];
        assert!(t.provenance && t.notes.is_empty(), "{run}: {:?}", t.notes);
        if run.ends_with("_default") {
            let triton: Vec<_> = t.kernels.iter().filter(|k| k.kind == KernelKind::Triton).collect();
            assert!(!triton.is_empty(), "{run}");
            for k in triton {
                assert!(matches!(&k.source, KernelSource::Code { language, text } if language == "triton" && text.contains("@triton.jit")));
                assert!(k.compile_time_us.is_some(), "{run} {}: triton_kernel_info", k.name);
                assert!(!k.nodes.is_empty() && !k.post_grad_nodes.is_empty(), "{run} {}", k.name);
            }
        } else {
            assert!(t.kernels.iter().all(|k| k.kind == KernelKind::Fallback), "{run}");
        }
    }
}

/// Numbers checked by hand (a separate Python reading of the JSON): the Llama trace holds 250
/// device kernels, 677.5 µs, all launched from 5 runs of the compiled graph; the first GEMM of
/// `call()` (`extern_kernels.mm:2`, the q projection `linear`) ran a CUTLASS GEMM and a split-K
/// reduction for 26.75 µs over the 5 runs; the embedding + RMSNorm Triton kernel 6.88 µs.
#[test]
fn cuda_and_xpu_flavours_give_the_same_hand_checked_numbers() {
    let cuda = profile("llama_default");
    let xpu = sample("inductor/xpu_llama_default.profile.json.gz");
    assert_eq!(kineto::load(&xpu).unwrap().flavour, Flavour::Xpu);
    assert_eq!(kineto::load(&cuda).unwrap().flavour, Flavour::Cuda);
    let l = log("llama_default");
    let mut docs = Vec::new();
    for p in [&cuda, &xpu] {
        let doc = kernels_json(&["kernels", l.to_str().unwrap(), "--profile", p.to_str().unwrap(), "--json"]);
        assert!((doc["attributed_us"].as_f64().unwrap() - 677.5).abs() < 0.05, "{}", doc["attributed_us"]);
        assert_eq!(doc["unattributed_us"].as_f64(), Some(0.0));
        let mm = kernel(&doc, "extern_kernels.mm:2");
        assert_eq!(mm["nodes"], serde_json::json!(["linear"]));
        assert_eq!(mm["calls"], 5);
        assert!((mm["device_us"].as_f64().unwrap() - 26.75).abs() < 0.01, "{mm}");
        let emb = kernel(&doc, "triton_per_fused_embedding_mean_mul_pow_rsqrt_0");
        assert!((emb["device_us"].as_f64().unwrap() - 6.88).abs() < 0.01, "{emb}");
        docs.push(doc);
    }
    assert_eq!(docs[1]["flavour"], "xpu");
    assert_eq!(kernel(&docs[1], "extern_kernels.mm:2")["device_kernels"], serde_json::json!(["gemm_kernel", "gemm_kernel_reduce"]));
}

/// The default config writes no provenance mappings: kernels and attribution then rest on the
/// comments Inductor always writes.
#[test]
fn attribution_holds_without_provenance_artifacts() {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(log("llama_default")).unwrap()).read_to_string(&mut text).unwrap();
    let mut kept = String::new();
    let mut skipping = false;
    for line in text.lines() {
        if !line.starts_with('\t') {
            skipping = line.contains("inductor_provenance_tracking");
        }
        if skipping || line.contains("[Provenance debug handles]") {
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    let l = trace::load_bytes("no_provenance.log", kept.as_bytes(), Limits::default()).unwrap();
    let ids: Vec<String> = l.compiles.iter().filter(|c| !c.output_code.is_empty()).map(|c| c.id.to_string()).collect();
    let tables: Vec<_> = l.compiles.iter().filter(|c| !c.output_code.is_empty()).map(|c| trace::kernels(c, &l.file_access())).collect();
    assert!(tables.iter().flatten().all(|t| !t.provenance));
    let compiled: Vec<CompiledKernels<'_>> = ids.iter().zip(&tables).map(|(id, t)| CompiledKernels { compile: id, tables: t }).collect();
    let p = kineto::load(&profile("llama_default")).unwrap();
    let times = kernel_times(&p, &compiled, &attribute(&p, &compiled));
    assert!(times.attributed_share >= 0.95, "{}", times.attributed_share);
    let t = &tables[0][0];
    let mm = t.kernels.iter().find(|k| k.name == "extern_kernels.mm#1").unwrap();
    assert_eq!(mm.nodes, ["linear"]);
    assert!(t.kernels.iter().filter(|k| k.kind == KernelKind::Triton).all(|k| !k.post_grad_nodes.is_empty()));
}

/// Real runs with the default config (`--provenance=0`): torch 2.11 then logs no provenance
/// artifacts and no debug handles; kernels and attribution rest on comments and the post-grad graph.
#[test]
fn default_config_runs_are_attributed_too() {
    for run in ["noprov_llama_default", "noprov_llama_lite"] {
        let l = trace::load_log(&log(run)).unwrap();
        assert!(l.warnings.is_empty(), "{run}: {:?}", l.warnings);
        let c = l.compiles.iter().find(|c| !c.output_code.is_empty()).unwrap();
        assert!(c.provenance.is_none() && c.kernel_stack_traces.is_empty(), "{run}");
        let doc = kernels_json(&["kernels", log(run).to_str().unwrap(), "--profile", profile(run).to_str().unwrap(), "--json"]);
        let share = doc["attributed_share"].as_f64().unwrap();
        assert!(share >= 0.95, "{run}: {share}");
        let kernels: Vec<&serde_json::Value> =
            doc["compiles"][0]["output_code"][0]["kernels"].as_array().unwrap().iter().collect();
        assert!(kernels.iter().all(|k| !k["post_grad_nodes"].as_array().unwrap().is_empty()), "{run}");
    }
}

#[test]
fn lite_against_default_compares_kernels_and_time() {
    let doc = kernels_json(&[
        "kernels",
        log("llama_default").to_str().unwrap(),
        "--profile",
        profile("llama_default").to_str().unwrap(),
        "--against",
        log("llama_lite").to_str().unwrap(),
        "--against-profile",
        profile("llama_lite").to_str().unwrap(),
        "--json",
    ]);
    let c = &doc["comparison"];
    assert!(c["a"]["generated"].as_u64().unwrap() > 0);
    assert_eq!(c["b"]["generated"], 0);
    assert!(c["b"]["fallback"].as_u64().unwrap() > c["a"]["fallback"].as_u64().unwrap());
    // Lite mode keeps every node as its own ATen kernel: more device time than the fused graph.
    assert!(c["b"]["device_us"].as_f64().unwrap() > c["a"]["device_us"].as_f64().unwrap());
    let silu = c["nodes"].as_array().unwrap().iter().find(|n| n["node"] == "silu").unwrap();
    assert_eq!((silu["a"].as_str(), silu["b"].as_str()), (Some("fused"), Some("fallback")));
}

#[test]
fn chrome_export_names_device_kernels_by_graph_nodes() {
    let out = std::env::temp_dir().join(format!("xpu-wb-{}-kernels-chrome.json", std::process::id()));
    let (l, p) = (log("llama_default"), profile("llama_default"));
    kernels_json(&["kernels", l.to_str().unwrap(), "--profile", p.to_str().unwrap(), "--chrome", out.to_str().unwrap(), "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let device: Vec<&str> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == xpu_workbench::profile::DEVICE_PID)
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(device.len(), 250);
    assert_eq!(device.iter().filter(|n| **n == "linear").count(), 10, "5 calls × GEMM + split-K reduction");
    let _ = std::fs::remove_file(out);
}

#[test]
fn a_broken_profile_is_a_usage_error() {
    let p = std::env::temp_dir().join(format!("xpu-wb-{}-broken.json", std::process::id()));
    std::fs::write(&p, b"{\"traceEvents\": [").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xpu-workbench"))
        .args(["kernels", log("llama_default").to_str().unwrap(), "--profile", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a Chrome trace"));
    let _ = std::fs::remove_file(p);
}
