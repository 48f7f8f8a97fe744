//! The real-model zoo (`samples/zoo/torch-*/`, written by `scripts/gen_zoo.py` with torch)
//! through every stage the workbench has: import, shapes and guards at two bindings, `core` and
//! `full` decomposition against PyTorch's own, the reference interpreter and OpenCL in none, lite
//! and full mode against PyTorch's outputs, and `spirv-val` on every emitted module.
//!
//! The status table in `docs/MODELS.md` is this test's expectation, cell by cell: a stage marked
//! ✓ must pass, and a known gap must still fail the way the table says (naming the op that blocks
//! it), so the table cannot drift from what the code does. When a change fixes or breaks a stage,
//! `ZOO_BLESS=1 cargo test --test zoo` rewrites the cells, and the diff shows what changed.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use common::stages::*;
use xpu_workbench::decomp::Mode;

/// One set of archives: `samples/zoo/torch-<version>/`.
struct Set {
    torch: String,
    dir: PathBuf,
    models: Vec<String>,
}

fn sets() -> Vec<Set> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/zoo");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&root).expect("samples/zoo") {
        let dir = entry.unwrap().path();
        let Some(torch) = dir.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_prefix("torch-")) else { continue };
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("versions.json")).unwrap()).unwrap();
        let models = v["models"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
        out.push(Set { torch: torch.to_string(), dir, models });
    }
    out.sort_by(|a, b| b.torch.cmp(&a.torch));
    assert!(!out.is_empty(), "no samples/zoo/torch-*/ sets");
    out
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for set in sets() {
        for name in &set.models {
            let text = std::fs::read_to_string(set.dir.join(format!("{name}.expect.json"))).unwrap();
            out.push(Case { torch: set.torch.clone(), name: name.clone(), dir: set.dir.clone(), exp: serde_json::from_str(&text).unwrap() });
        }
    }
    out
}

// ------------------------------------------------------------------ the status table

const DOC: &str = "docs/MODELS.md";
const BEGIN: &str = "<!-- zoo-status: rewritten by ZOO_BLESS=1 cargo test --test zoo -->";
const END: &str = "<!-- /zoo-status -->";
const COLUMNS: &[&str] = &[
    "torch", "model", "source", "nodes", "import", "shapes", "guards", "core", "full", "eval none", "eval lite", "eval full",
    "opencl none", "opencl lite", "opencl full", "spirv-val",
];

static DOC_LOCK: Mutex<()> = Mutex::new(());

type Table = BTreeMap<(String, String), BTreeMap<String, String>>;

fn read_table(text: &str) -> (Vec<(String, String)>, Table) {
    let mut order = Vec::new();
    let mut table = Table::new();
    let Some(start) = text.find(BEGIN) else { return (order, table) };
    let body = &text[start + BEGIN.len()..text.find(END).unwrap_or(text.len())];
    let mut header: Vec<String> = Vec::new();
    for line in body.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<String> = line.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect();
        if header.is_empty() {
            header = cells;
            continue;
        }
        if cells.iter().all(|c| c.chars().all(|ch| ch == '-' || ch == ':')) {
            continue;
        }
        let row: BTreeMap<String, String> = header.iter().cloned().zip(cells).collect();
        let key = (row.get("torch").cloned().unwrap_or_default(), row.get("model").cloned().unwrap_or_default());
        order.push(key.clone());
        table.insert(key, row);
    }
    (order, table)
}

fn write_table(text: &str, order: &[(String, String)], table: &Table) -> String {
    let mut out = format!("{BEGIN}\n| {} |\n|{}\n", COLUMNS.join(" | "), " --- |".repeat(COLUMNS.len()));
    for key in order {
        let row = &table[key];
        let cells: Vec<&str> = COLUMNS.iter().map(|c| row.get(*c).map_or("", String::as_str)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.push_str(END);
    match (text.find(BEGIN), text.find(END)) {
        (Some(a), Some(b)) => format!("{}{}{}", &text[..a], out, &text[b + END.len()..]),
        _ => format!("{text}\n{out}\n"),
    }
}

/// Checks the cells of `results` against docs/MODELS.md (or rewrites them under ZOO_BLESS=1),
/// printing every failing stage's whole story. Panics listing each cell that differs.
fn check_cells(results: Vec<(&Case, &str, Outcome)>) {
    let _lock = DOC_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DOC);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let (mut order, mut table) = read_table(&text);
    let bless = std::env::var("ZOO_BLESS").is_ok_and(|v| v == "1");
    let mut wrong = Vec::new();
    for (c, column, outcome) in results {
        let cell = match &outcome {
            Ok(()) => "✓".to_string(),
            Err((cell, long)) => {
                println!("torch {} {} {column}: {long}\n", c.torch, c.name);
                cell.clone()
            }
        };
        if !table.contains_key(&c.key()) {
            order.push(c.key());
        }
        let row = table.entry(c.key()).or_default();
        row.insert("torch".into(), c.torch.clone());
        row.insert("model".into(), c.name.clone());
        row.insert("source".into(), c.exp["source"].as_str().unwrap_or("").to_string());
        let nodes: u64 = c.exp["ops"]["none"].as_object().unwrap().values().filter_map(|v| v.as_u64()).sum();
        row.insert("nodes".into(), nodes.to_string());
        let recorded = row.get(column).cloned().unwrap_or_default();
        if recorded != cell {
            wrong.push(format!("torch {} {} {column}: {DOC} says `{recorded}`, the stage gives `{cell}`", c.torch, c.name));
            row.insert(column.to_string(), cell);
        }
    }
    if bless {
        std::fs::write(&path, write_table(&text, &order, &table)).unwrap();
    } else {
        assert!(wrong.is_empty(), "{} cells differ (ZOO_BLESS=1 rewrites them):\n{}", wrong.len(), wrong.join("\n"));
    }
}

// ------------------------------------------------------------------ the tests

#[test]
fn the_zoo_has_at_least_twelve_models_with_two_bindings_each() {
    let sets = sets();
    assert!(sets.iter().any(|s| s.models.len() >= 12), "{:?}", sets.iter().map(|s| s.models.len()).collect::<Vec<_>>());
    for c in cases() {
        assert_eq!(c.exp["bindings"].as_array().unwrap().len(), 2, "{}", c.name);
        assert_ne!(c.binding(0), c.binding(1), "{}: two different bindings", c.name);
        for b in 0..2 {
            assert!(!c.npys(b, "in").is_empty() && !c.npys(b, "out").is_empty(), "{} binding {b}: npy files", c.name);
        }
    }
}

#[test]
fn import_and_inspect() {
    let cases = cases();
    check_cells(cases.iter().map(|c| (c, "import", stage_import(c))).collect());
}

#[test]
fn shapes_and_guards_at_both_bindings() {
    let cases = cases();
    let mut results = Vec::new();
    for c in &cases {
        match c.load() {
            Ok(m) => {
                results.push((c, "shapes", stage_shapes(c, &m)));
                results.push((c, "guards", stage_guards(c, &m)));
            }
            Err(e) => {
                results.push((c, "shapes", fail(e.clone())));
                results.push((c, "guards", fail(e)));
            }
        }
    }
    check_cells(results);
}

#[test]
fn core_and_full_against_pytorchs_decompositions() {
    let cases = cases();
    let mut results = Vec::new();
    for c in &cases {
        let Ok(m) = c.load() else { continue };
        results.push((c, "core", stage_decomp(c, &m, Mode::Core, "core")));
        results.push((c, "full", stage_decomp(c, &m, Mode::Full, "inductor")));
    }
    check_cells(results);
}

#[test]
fn the_interpreter_against_pytorchs_outputs_in_every_mode() {
    let cases = cases();
    let mut results = Vec::new();
    for c in &cases {
        let Ok(m) = c.load() else { continue };
        for (mode, column) in [(Mode::None, "eval none"), (Mode::Lite, "eval lite"), (Mode::Full, "eval full")] {
            results.push((c, column, stage_eval(c, &m, mode)));
        }
    }
    check_cells(results);
}

#[test]
fn opencl_against_pytorchs_outputs_and_spirv_val_in_every_mode() {
    let cases = cases();
    let mut results = Vec::new();
    for c in &cases {
        let Ok(m) = c.load() else { continue };
        let (mut val, mut modules): (Option<Outcome>, usize) = (Some(Ok(())), 0);
        for (mode, column) in [(Mode::None, "opencl none"), (Mode::Lite, "opencl lite"), (Mode::Full, "opencl full")] {
            let r = stage_opencl(c, &m, mode);
            if let Some(run) = r.run {
                results.push((c, column, run));
            }
            modules += r.modules;
            val = match (val, r.val) {
                (Some(Ok(())), v) => v,
                (prev, _) => prev,
            };
        }
        match val {
            Some(Ok(())) if modules == 0 => results.push((c, "spirv-val", Err(("— none lowered".into(), "no mode lowered".into())))),
            Some(v) => results.push((c, "spirv-val", v)),
            None => {}
        }
    }
    check_cells(results);
}

/// `decompose --against-torch`: where python3 can import torch, our `core` of the ViT made by that
/// torch version equals what it makes of the archive (exit 0; another version's archive must at
/// least be compared: 0 or 1); without torch, exit 2. A Python that does not exist is always 2.
#[test]
fn decompose_against_the_users_torch() {
    let bin = env!("CARGO_BIN_EXE_xpu-workbench");
    let version = std::process::Command::new("python3")
        .args(["-c", "import torch; print('.'.join(torch.__version__.split('.')[:2]))"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let sets = sets();
    let same = sets.iter().find(|s| Some(&s.torch) == version.as_ref());
    let file = same.unwrap_or(&sets[0]).dir.join("vit.pt2");
    let run = |extra: &[&str]| {
        let mut args = vec!["decompose", file.to_str().unwrap(), "--mode", "core", "--against-torch"];
        args.extend_from_slice(extra);
        std::process::Command::new(bin).args(&args).output().unwrap()
    };
    let missing = run(&["--python", "/nonexistent/python3"]);
    assert_eq!(missing.status.code(), Some(2), "{}", String::from_utf8_lossy(&missing.stderr));
    let out = run(&[]);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if same.is_some() {
        assert_eq!(out.status.code(), Some(0), "{text}");
        assert!(text.contains("op multisets are equal"), "{text}");
    } else if version.is_some() {
        println!("python3 has torch {version:?}, no zoo set of that version: checking that it compared");
        assert!(matches!(out.status.code(), Some(0 | 1)), "{text}");
    } else {
        println!("python3 has no torch here: checking the exit status only");
        assert_eq!(out.status.code(), Some(2), "{text}");
    }
}
