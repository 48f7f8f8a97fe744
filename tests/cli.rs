//! The CLI as users call it: the `inspect` and `shapes` JSON contracts and exit statuses.

mod common;


use common::{archive_histogram, expectations, sample, MODELS};

use common::run_cli as run;

#[test]
fn inspect_json_follows_the_contract() {
    for m in MODELS {
        let path = sample(&format!("{m}.pt2"));
        let (code, out, err) = run(&["inspect", path.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["format"], "pt2");
        let g = &v["graphs"][0];
        assert_eq!(g["name"], "model");
        let exp = expectations(m);
        let want = archive_histogram(&exp["ops"]["none"]);
        let ops: std::collections::BTreeMap<String, usize> = serde_json::from_value(g["ops"].clone()).unwrap();
        assert_eq!(ops, want, "{m}");
        assert_eq!(g["nodes"].as_u64().unwrap() as usize, want.values().sum::<usize>());
        for io in ["inputs", "outputs"] {
            for t in g[io].as_array().unwrap() {
                assert!(t["name"].is_string() && t["dtype"].is_string() && t["shape"].is_array(), "{t}");
            }
        }
        for s in v["symbols"].as_array().unwrap() {
            let w = &exp["symbols"][s["name"].as_str().unwrap()];
            assert_eq!(s["min"], w["min"]);
            assert_eq!(s["max"], w["max"]);
            assert!(s["hint"].is_i64());
        }
    }
}

#[test]
fn inspect_prints_symbolic_shapes_as_infix() {
    let path = sample("transformer_block.pt2");
    let (_, out, _) = run(&["inspect", path.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let x = v["graphs"][0]["inputs"].as_array().unwrap().iter().find(|i| i["name"] == "x").unwrap().clone();
    assert_eq!(x["shape"], serde_json::json!(["s77", "s27", "32"]));
    assert_eq!(x["kind"], "user_input");
}

#[test]
fn shapes_binds_symbols_and_checks_ranges() {
    let path = sample("transformer_block.pt2");
    let p = path.to_str().unwrap();
    let (code, out, err) = run(&["shapes", p, "--bind", "s77=3", "--bind", "s27=11", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["bindings"], serde_json::json!({"s27": 11, "s77": 3}));
    assert_eq!(v["values"]["x"]["shape"], serde_json::json!([3, 11, 32]));
    assert_eq!(v["values"]["x"]["strides"], serde_json::json!([352, 32, 1]));
    assert!(v["guards"].is_array());

    let (code, _, err) = run(&["shapes", p, "--bind", "s27=1", "--json"]);
    assert_eq!(code, 2);
    assert!(err.contains("s27") && err.contains("[2, 512]"), "{err}");
    let (code, _, err) = run(&["shapes", p, "--bind", "nope=4"]);
    assert_eq!(code, 2);
    assert!(err.contains("nope") && err.contains("s77"), "{err}");
}

#[test]
fn unbound_symbols_take_their_hint() {
    let path = sample("mlp.pt2");
    let (code, out, _) = run(&["shapes", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["bindings"]["s77"], 4, "mlp was traced with batch 4");
}

#[test]
fn a_missing_or_foreign_file_is_a_usage_error_naming_it() {
    let (code, _, err) = run(&["inspect", "/nonexistent/model.pt2"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/model.pt2"), "{err}");
    let readme = sample("mlp.expect.json");
    let (code, _, err) = run(&["inspect", readme.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("mlp.expect.json"), "{err}");
}

#[test]
fn decompose_json_follows_the_contract() {
    let path = sample("transformer_block.pt2");
    let (code, out, err) = run(&["decompose", path.to_str().unwrap(), "--mode", "full", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["mode"], "full");
    let ops: std::collections::BTreeMap<String, usize> = serde_json::from_value(v["ops"].clone()).unwrap();
    assert_eq!(v["nodes"].as_u64().unwrap() as usize, ops.values().sum::<usize>());
    let first = &v["decomposed"][0];
    assert!(first["node"].is_string() && first["op"].is_string() && first["into"].is_object(), "{first}");
    assert!(v["kept"].is_u64());
    let (code, _, err) = run(&["decompose", path.to_str().unwrap(), "--mode", "lite", "--mark", "no_such_node"]);
    assert_eq!(code, 2);
    assert!(err.contains("no_such_node"), "{err}");
}

#[test]
fn check_lite_exit_status() {
    let ok = sample("annotated.pt2");
    let (code, out, _) = run(&["check-lite", ok.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let bad = sample("annotated.inductor.pt2");
    let (code, out, _) = run(&["check-lite", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    for name in ["gelu", "softmax", "linear"] {
        assert!(out.contains(&format!("`{name}`")), "{out}");
    }
}

#[test]
fn eval_writes_outputs_that_match_pytorch() {
    let dir = std::env::temp_dir().join(format!("xpu-eval-{}", std::process::id()));
    let model = sample("mlp.pt2");
    let input = sample("mlp.in0.npy");
    let (code, out, err) = run(&[
        "eval",
        model.to_str().unwrap(),
        "--mode",
        "full",
        "--inputs",
        input.to_str().unwrap(),
        "--save-outputs",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let batch = xpu_workbench::npy::read(&input).unwrap().shape[0] as i64;
    assert!(v["bindings"].as_object().unwrap().values().any(|b| b.as_i64() == Some(batch)), "{v}");
    let ours = xpu_workbench::npy::read(&dir.join("out0.npy")).unwrap();
    let want = xpu_workbench::npy::read(&sample("mlp.out0.npy")).unwrap();
    assert_eq!((ours.dtype, &ours.shape), (want.dtype, &want.shape));
    assert_eq!(v["outputs"][0]["shape"], serde_json::json!(want.shape));
    let f = |b: &[u8]| b.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64).collect::<Vec<_>>();
    let (a, r) = (f(&ours.data), f(&want.data));
    let scale = r.iter().fold(1e-6f64, |m, x| m.max(x.abs()));
    let e = a.iter().zip(&r).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max) / scale;
    assert!(e < 1e-5, "relative error {e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn eval_rejects_unknown_modes_and_wrong_inputs() {
    let model = sample("mlp.pt2");
    let input = sample("mlp.in0.npy");
    let (code, _, err) = run(&["eval", model.to_str().unwrap(), "--mode", "max", "--inputs", input.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown --mode `max`"), "{err}");
    let other = sample("cnn.in0.npy");
    let (code, _, err) = run(&["eval", model.to_str().unwrap(), "--inputs", other.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("input `"), "{err}");
}

#[test]
fn run_json_follows_the_contract_on_the_reference_device() {
    let model = sample("cnn.pt2");
    let input = sample("cnn.in0.npy");
    let dir = std::env::temp_dir().join(format!("xpu-run-{}", std::process::id()));
    let (code, out, err) = run(&[
        "run", model.to_str().unwrap(), "--mode", "full", "--device", "reference", "--inputs", input.to_str().unwrap(),
        "--save-outputs", dir.to_str().unwrap(), "--check", "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["device"].as_str().unwrap().contains("reference"));
    assert_eq!(v["mode"], "full");
    assert!(v["bindings"].is_object());
    let steps = v["steps"].as_array().unwrap();
    assert!(!steps.is_empty());
    for s in steps {
        assert!(s["kind"] == "fused" || s["kind"] == "fallback", "{s}");
        assert!(s["name"].is_string() && s["nodes"].is_array() && s["device_ns"].is_u64(), "{s}");
    }
    assert!(v["total_device_ns"].is_u64() && v["wall_ns"].is_u64());
    assert_eq!(v["check"]["ok"], true, "{v}");
    assert!(v["check"]["max_abs_err"].is_number() && v["check"]["max_rel_err"].is_number());
    assert!(dir.join("out0.npy").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_generates_seeded_inputs_from_bindings_and_xpu_says_why_it_is_missing() {
    let model = sample("mlp.pt2");
    let (code, out, err) = run(&["run", model.to_str().unwrap(), "--mode", "lite", "--device", "reference", "--bind", "s77=3", "--check", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["bindings"].as_object().unwrap().values().any(|b| b == 3), "{v}");
    assert!(v["steps"].as_array().unwrap().iter().all(|s| s["kind"] == "fallback"));
    let (code, _, err) = run(&["run", model.to_str().unwrap(), "--device", "xpu"]);
    if code != 0 {
        assert!(err.contains("level_zero"), "{err}");
    }
    let (code, _, err) = run(&["run", model.to_str().unwrap(), "--device", "tpu"]);
    assert_ne!(code, 0);
    assert!(err.contains("--device"), "{err}");
}

#[test]
fn compile_emits_spirv_assembly_and_a_plan() {
    let model = sample("transformer_block.pt2");
    let dir = std::env::temp_dir().join(format!("xpu-compile-{}", std::process::id()));
    let (code, _, err) = run(&["compile", model.to_str().unwrap(), "--mode", "full", "--bind", "s27=5", "--emit", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("plan.json")).unwrap()).unwrap();
    let steps = plan["steps"].as_array().unwrap();
    assert_eq!(steps.len() as u64, plan["kernels"].as_u64().unwrap());
    for s in steps {
        let name = s["name"].as_str().unwrap();
        let spv = std::fs::read(dir.join(format!("{name}.spv"))).unwrap();
        assert_eq!(&spv[..4], &0x0723_0203u32.to_le_bytes());
        let asm = std::fs::read_to_string(dir.join(format!("{name}.spvasm"))).unwrap();
        assert!(asm.contains("OpEntryPoint Kernel") && asm.contains(name), "{name}");
    }
    assert_eq!(plan["bindings"]["s27"], 5);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `.pt2` of OpInfo case `case` of `op` (`tests/data/opinfo/<op>.zip.gz`), written to `dir`.
fn opinfo_pt2(op: &str, case: usize, dir: &std::path::Path) -> std::path::PathBuf {
    use std::io::Read;
    let gz = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/opinfo/{op}.zip.gz"))).unwrap();
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut raw).unwrap();
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(raw)).unwrap();
    let mut pt2 = Vec::new();
    z.by_name(&format!("{case}.pt2")).unwrap().read_to_end(&mut pt2).unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("{op}.{case}.pt2"));
    std::fs::write(&path, pt2).unwrap();
    path
}

#[test]
fn compile_says_which_nodes_it_expanded_for_lowering() {
    // `huber_loss` has no kernel: in mode none the lowering runs it as its decomposition,
    // attributed to the node.
    let dir = std::env::temp_dir().join(format!("xpu-compile-expanded-{}", std::process::id()));
    let model = opinfo_pt2("nn.functional.huber_loss", 0, &dir);
    let (code, out, err) = run(&["compile", model.to_str().unwrap(), "--mode", "none", "--emit", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("expanded for lowering (no direct kernel)"), "{out}");
    let plan: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("plan.json")).unwrap()).unwrap();
    let expanded = plan["expanded"].as_array().unwrap();
    assert_eq!(expanded.len(), 1, "{plan}");
    for x in expanded {
        assert_eq!(x["target"], "aten.huber_loss.default");
        assert_eq!(x["note"], "expanded for lowering (no direct kernel)");
        let node = x["node"].as_str().unwrap();
        // Its kernels name it, and say which of its products they compute.
        let steps: Vec<&serde_json::Value> = plan["steps"].as_array().unwrap().iter().filter(|s| s["nodes"].as_array().unwrap().iter().any(|n| n == node)).collect();
        assert!(!steps.is_empty(), "{node}");
        let computes = |s: &serde_json::Value| {
            s["expanded"].as_array().unwrap().iter().any(|e| e["node"] == node && !e["computes"].as_array().unwrap().is_empty())
        };
        assert!(steps.iter().all(|s| computes(s)), "{node}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// NaN where both sides have NaN (a NaN input row runs through the MLP on both) agrees, and the
/// errors stay numbers: before, one NaN made both errors `null` and the check fail without a word.
#[test]
fn run_check_agrees_on_nan_both_sides_compute_and_prints_numbers() {
    use xpu_workbench::npy;
    let model = sample("mlp.pt2");
    let input = npy::read(&sample("mlp.in0.npy")).unwrap();
    let mut data = input.data.clone();
    data[..4].copy_from_slice(&f32::NAN.to_le_bytes());
    let dir = std::env::temp_dir().join(format!("xpu-nan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("in0.npy");
    npy::write(&path, &npy::NpyArray { dtype: input.dtype, shape: input.shape.clone(), data }).unwrap();
    let (code, out, err) = run(&["run", model.to_str().unwrap(), "--mode", "full", "--device", "reference", "--inputs", path.to_str().unwrap(), "--check", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["check"]["ok"], true, "{v}");
    assert!(v["check"]["max_abs_err"].is_number() && v["check"]["max_rel_err"].is_number(), "{v}");
    assert_eq!(v["check"]["problems"], serde_json::json!([]));
    let _ = std::fs::remove_dir_all(&dir);
}
