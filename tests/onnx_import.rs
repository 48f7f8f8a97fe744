//! ONNX samples exported by torch 2.11 (`torch.onnx.export(dynamo=True)`, dynamic dims): loading,
//! external data, inferred symbolic shapes checked against ONNX Runtime (samples/onnx_shapes.json,
//! made by scripts/gen_onnx_shapes.py), and malformed files.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::sample;
use xpu_workbench::import::{self, onnx};
use xpu_workbench::ir::{Format, InputKind, ValueKind, WeightData};
use xpu_workbench::shapes::{evaluate_graph, resolve_bindings};

const SAMPLES: &[&str] = &["mlp", "mlp_ext", "cnn", "transformer_block"];

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xpu-wb-onnx-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn every_sample_loads_with_weights_and_symbols() {
    for name in SAMPLES {
        let model = import::load(&sample(&format!("{name}.onnx"))).unwrap();
        assert_eq!(model.format, Format::Onnx);
        assert!(model.warnings.is_empty(), "{name}: {:?}", model.warnings);
        let g = &model.graphs[0];
        let params = g.inputs.iter().filter(|(_, k)| matches!(k, InputKind::Parameter { .. })).count();
        assert_eq!(params, model.weights.len(), "{name}");
        for w in model.weights.values() {
            let WeightData::Bytes(b) = &w.data else { panic!("{name}: {} unavailable", w.fqn) };
            let numel: i64 = w.meta.sizes.iter().map(|e| e.as_int().unwrap()).product();
            assert_eq!(b.len() as i64, numel * w.meta.dtype.size_bytes() as i64, "{name}: {}", w.fqn);
        }
        let batch = model.symbol("batch").expect("batch symbol");
        assert_eq!((batch.range.min, batch.range.max, batch.hint), (1, None, Some(1)));
        for v in &g.values {
            assert!(matches!(v.kind, ValueKind::Tensor(_)), "{name}: `{}` has no shape", v.name);
        }
        assert!(g.nodes.iter().all(|n| n.target.starts_with("onnx.")));
    }
}

#[test]
fn external_data_matches_the_declared_sizes_and_the_exporter_stack_traces_are_kept() {
    let model = import::load(&sample("mlp_ext.onnx")).unwrap();
    let w = &model.weights["fc1.weight"];
    let WeightData::Bytes(b) = &w.data else { panic!("external weight not loaded") };
    assert_eq!(b.len(), 64 * 32 * 4);
    assert!(b.iter().any(|&x| x != 0));
    let gemm = &model.graphs[0].nodes[0];
    assert_eq!(gemm.target, "onnx.Gemm");
    assert!(gemm.meta.stack_trace.as_deref().unwrap_or("").contains("gen_samples.py"));
}

#[test]
fn inferred_shapes_agree_with_onnx_runtime_at_several_bindings() {
    let text = std::fs::read_to_string(sample("onnx_shapes.json")).unwrap();
    let expect: serde_json::Value = serde_json::from_str(&text).unwrap();
    for name in SAMPLES {
        let model = import::load(&sample(&format!("{name}.onnx"))).unwrap();
        let g = &model.graphs[0];
        for case in expect[*name].as_array().unwrap() {
            let binds: Vec<(String, i64)> = case["bindings"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
                .collect();
            let b = resolve_bindings(&model, &binds).unwrap();
            let shapes = evaluate_graph(g, &b);
            let mut checked = 0;
            for (value, want) in case["shapes"].as_object().unwrap() {
                let id = g.value_id(value).unwrap_or_else(|| panic!("{name}: no value `{value}`"));
                let got = shapes[id.index()].as_ref().unwrap().as_ref().unwrap();
                let want: Vec<i64> = want.as_array().unwrap().iter().map(|d| d.as_i64().unwrap()).collect();
                assert_eq!(got.shape, want, "{name} {value} at {binds:?}");
                checked += 1;
            }
            assert!(checked >= 5, "{name}: only {checked} values compared");
        }
    }
}

#[test]
fn mlp_output_is_batch_by_10_in_inspect_json() {
    let p = sample("mlp.onnx");
    let out = Command::new(env!("CARGO_BIN_EXE_xpu-workbench")).args(["inspect", p.to_str().unwrap(), "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "onnx");
    assert_eq!(v["graphs"][0]["outputs"][0]["shape"], serde_json::json!(["batch", "10"]));
    assert_eq!(v["graphs"][0]["ops"]["onnx.Gemm"], 3);
    let out = Command::new(env!("CARGO_BIN_EXE_xpu-workbench"))
        .args(["shapes", p.to_str().unwrap(), "--bind", "batch=7", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn err_of(bytes: &[u8]) -> String {
    match onnx::load_bytes("bad.onnx", bytes, None) {
        Ok(_) => String::new(),
        Err(e) => {
            let s = e.to_string();
            assert!(s.starts_with("bad.onnx"), "error does not name the file: {s}");
            s
        }
    }
}

#[test]
fn truncated_random_and_mistyped_files_are_errors_not_panics() {
    let bytes = std::fs::read(sample("transformer_block.onnx")).unwrap();
    let mut errors = 0;
    for i in 1..60 {
        let cut = bytes.len() * i / 60;
        if !err_of(&bytes[..cut]).is_empty() {
            errors += 1;
        }
    }
    assert!(errors > 50, "only {errors} of 59 truncations were rejected");
    assert!(err_of(&bytes[..bytes.len() / 2]).contains("not a readable ONNX model"));
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for len in [0usize, 1, 7, 100, 10_000] {
        let junk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let _ = err_of(&junk);
    }
    for _ in 0..300 {
        let mut b = bytes.clone();
        for _ in 0..4 {
            let i = (next() as usize) % b.len();
            b[i] = next() as u8;
        }
        let _ = err_of(&b);
    }
    // Field 7 (graph) as a varint instead of a message.
    assert!(err_of(&[0x08, 0x0a, 0x38, 0x01]).contains("not a readable ONNX model"));
    // Field 1 (ir_version) as a string.
    assert!(err_of(&[0x0a, 0x02, b'h', b'i']).contains("not a readable ONNX model"));
    assert!(err_of(&[0x08, 0x0a]).contains("no graph"));
    assert!(err_of(b"").contains("neither ir_version nor graph"));
}

fn copy_ext(dir: &Path, model: &[u8], data: &[u8]) -> PathBuf {
    std::fs::write(dir.join("mlp_ext.onnx"), model).unwrap();
    std::fs::write(dir.join("mlp_ext.onnx.data"), data).unwrap();
    dir.join("mlp_ext.onnx")
}

#[test]
fn external_data_is_bounded_and_confined_to_the_model_folder() {
    let model = std::fs::read(sample("mlp_ext.onnx")).unwrap();
    let data = std::fs::read(sample("mlp_ext.onnx.data")).unwrap();
    let dir = temp_dir("ext");
    let p = copy_ext(&dir, &model, &data[..data.len() / 2]);
    let e = import::load(&p).unwrap_err().to_string();
    assert!(e.contains("beyond its end") && e.contains("tensor `"), "{e}");
    // Same-length rename of the location so it points one folder up.
    let needle = b"mlp_ext.onnx.data";
    let mut escaped = model.clone();
    let mut n = 0;
    for i in 0..escaped.len().saturating_sub(needle.len()) {
        if &escaped[i..i + needle.len()] == needle {
            escaped[i..i + needle.len()].copy_from_slice(b"../_ext.onnx.data");
            n += 1;
        }
    }
    assert!(n > 0);
    let p = copy_ext(&dir, &escaped, &data);
    let e = import::load(&p).unwrap_err().to_string();
    assert!(e.contains("leaves the model's folder"), "{e}");
    std::fs::remove_file(dir.join("mlp_ext.onnx.data")).unwrap();
    let p = copy_ext(&dir, &model, &data);
    std::fs::remove_file(dir.join("mlp_ext.onnx.data")).unwrap();
    let e = import::load(&p).unwrap_err().to_string();
    assert!(e.contains("mlp_ext.onnx.data"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
    // Loaded from memory, external data has nowhere to come from: a clear error.
    let e = onnx::load_bytes("mem.onnx", &model, None).unwrap_err().to_string();
    assert!(e.contains("not loaded from a file"), "{e}");
}

#[test]
fn onnx_is_detected_by_extension_then_content() {
    assert_eq!(import::detect(&sample("cnn.onnx")).unwrap(), Format::Onnx);
    let dir = temp_dir("detect");
    let renamed = dir.join("model.bin");
    std::fs::copy(sample("cnn.onnx"), &renamed).unwrap();
    assert_eq!(import::detect(&renamed).unwrap(), Format::Onnx);
    let junk = dir.join("junk.onnx");
    std::fs::write(&junk, b"not protobuf at all").unwrap();
    let e = import::load(&junk).unwrap_err().to_string();
    assert!(e.contains("junk.onnx") && e.contains("ONNX"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
