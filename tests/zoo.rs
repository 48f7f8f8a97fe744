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
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use xpu_workbench::decomp::{decompose, Decomposition, Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::Model;
use xpu_workbench::shapes::{evaluate_graph, evaluate_guards, resolve_bindings};
use xpu_workbench::{import, lower, npy};

/// Relative error (infinity norm over the reference's largest magnitude) accepted against
/// PyTorch's eager outputs: float32 through a different summation order.
const TOL: f64 = 1e-4;

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

struct Case {
    torch: String,
    name: String,
    dir: PathBuf,
    exp: serde_json::Value,
}

impl Case {
    fn file(&self, f: &str) -> PathBuf {
        self.dir.join(f)
    }
    fn load(&self) -> Result<Model, String> {
        import::load(&self.file(&format!("{}.pt2", self.name))).map_err(|e| e.to_string())
    }
    fn npys(&self, b: usize, kind: &str) -> Vec<Tensor> {
        (0..)
            .map(|i| self.file(&format!("{}.b{b}.{kind}{i}.npy", self.name)))
            .take_while(|p| p.exists())
            .map(|p| load_npy(&p))
            .collect()
    }
    fn binding(&self, b: usize) -> Vec<(String, i64)> {
        self.exp["bindings"][b]["bindings"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_i64().unwrap())).collect()
    }
    fn key(&self) -> (String, String) {
        (self.torch.clone(), self.name.clone())
    }
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

fn load_npy(path: &Path) -> Tensor {
    let a = npy::read(path).unwrap();
    Tensor::from_le_bytes(a.dtype, &a.shape, &a.data).unwrap()
}

fn rel_err(got: &Tensor, want: &Tensor) -> f64 {
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    let scale = w.iter().fold(1e-6f64, |m, x| m.max(x.abs()));
    g.iter().zip(&w).map(|(a, b)| if a == b { 0.0 } else { (a - b).abs() }).fold(0.0, f64::max) / scale
}

/// A stage's result: `Ok` or a short cell text naming what blocks it, plus the long story.
type Outcome = Result<(), (String, String)>;

/// The first op overload a message names (`aten.embedding.default`), else its first words.
fn blocker(msg: &str) -> String {
    for prefix in ["aten.", "prims.", "_operator."] {
        if let Some(at) = msg.find(prefix) {
            let op: String = msg[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.').collect();
            return format!("`{}`", op.trim_end_matches('.'));
        }
    }
    let short: String = msg.chars().take(48).collect();
    short.replace('|', "/").replace('\n', " ")
}

/// A failure's cell (`✗` and the op that blocks it) and its whole message.
fn why(msg: impl ToString) -> (String, String) {
    let msg = msg.to_string();
    (format!("✗ {}", blocker(&msg)), msg)
}

fn fail(msg: impl ToString) -> Outcome {
    Err(why(msg))
}

fn compare_outputs(what: &str, got: &[Tensor], want: &[Tensor]) -> Outcome {
    if got.len() != want.len() {
        return Err(("✗ output count".into(), format!("{what}: {} outputs, torch {}", got.len(), want.len())));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.shape() != w.shape() || g.dtype() != w.dtype() {
            return Err((
                "✗ output shape".into(),
                format!("{what}: out{i} {:?} {:?}, torch {:?} {:?}", g.shape(), g.dtype(), w.shape(), w.dtype()),
            ));
        }
        let e = rel_err(g, w);
        if e.is_nan() || e >= TOL {
            return Err((format!("✗ rel err {e:.0e}"), format!("{what}: out{i}: relative error {e:.3e} ≥ {TOL:e}")));
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ the stages

fn stage_import(c: &Case) -> Outcome {
    let model = c.load().map_err(why)?;
    let want = common::archive_histogram(&c.exp["ops"]["none"]);
    let got = model.graphs[0].op_histogram();
    if got != want {
        return fail(format!("op histogram differs from torch's:\n{}", hist_diff(&got, &want)));
    }
    if let Some(w) = model.warnings.first() {
        return Err(("✗ import warning".into(), format!("import warning: {w}")));
    }
    Ok(())
}

fn stage_shapes(c: &Case, model: &Model) -> Outcome {
    let g = &model.graphs[0];
    for b in 0..2 {
        let binds = c.binding(b);
        let bindings = resolve_bindings(model, &binds).map_err(|e| ("✗ binding".to_string(), e.to_string()))?;
        let row = &c.exp["bindings"][b]["values"];
        for (v, conc) in g.values.iter().zip(evaluate_graph(g, &bindings)) {
            let Some(conc) = conc else { continue };
            let conc = conc.map_err(|e| (format!("✗ `{}`", v.name), format!("{} at {binds:?}: {e}", v.name)))?;
            let want = &row[&v.name];
            if !want.is_object() {
                continue; // a value torch's graph does not hold as one tensor (multi-output nodes)
            }
            let ints = |j: &serde_json::Value| j.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect::<Vec<_>>();
            if conc.shape != ints(&want["shape"]) || conc.strides != ints(&want["strides"]) {
                return Err((
                    format!("✗ `{}`", v.name),
                    format!("{} at {binds:?}: {:?}/{:?}, torch {}/{}", v.name, conc.shape, conc.strides, want["shape"], want["strides"]),
                ));
            }
        }
    }
    Ok(())
}

fn stage_guards(c: &Case, model: &Model) -> Outcome {
    let code = c.exp["guards_code"].as_array().unwrap();
    if model.guards.len() != code.len() {
        let unevaluated: Vec<&String> = model.warnings.iter().filter(|w| w.contains("guards_code")).collect();
        return Err((
            format!("✗ {} of {} unevaluated", code.len() - model.guards.len(), code.len()),
            format!("{} guards evaluated of {}: {unevaluated:?}", model.guards.len(), code.len()),
        ));
    }
    for b in 0..2 {
        let bindings = resolve_bindings(model, &c.binding(b)).map_err(|e| ("✗ binding".to_string(), e.to_string()))?;
        let want = c.exp["bindings"][b]["guards"].as_array().unwrap();
        for ((g, got), w) in model.guards.iter().zip(evaluate_guards(model, &bindings)).zip(want) {
            let got = got.map_err(|e| ("✗ guard error".to_string(), format!("`{}`: {e}", g.source)))?;
            if Some(got) != w.as_bool() {
                return Err(("✗ guard value".into(), format!("`{}` at binding {b}: {got}, torch {w}", g.source)));
            }
        }
    }
    Ok(())
}

fn hist_diff(got: &BTreeMap<String, usize>, want: &BTreeMap<String, usize>) -> String {
    let mut lines = Vec::new();
    for op in got.keys().chain(want.keys()).collect::<std::collections::BTreeSet<_>>() {
        let (g, w) = (got.get(op).copied().unwrap_or(0), want.get(op).copied().unwrap_or(0));
        if g != w {
            lines.push(format!("  {op}: ours {g}, torch {w}"));
        }
    }
    lines.join("\n")
}

/// The cell of a decomposition that differs: the ops whose counts differ, most different first.
fn decomp_cell(got: &BTreeMap<String, usize>, want: &BTreeMap<String, usize>) -> String {
    let mut ops: Vec<(i64, String)> = got
        .keys()
        .chain(want.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter_map(|op| {
            let d = got.get(op).copied().unwrap_or(0) as i64 - want.get(op).copied().unwrap_or(0) as i64;
            (d != 0).then(|| (d, op.trim_start_matches("aten.").to_string()))
        })
        .collect();
    ops.sort_by(|a, b| b.0.abs().cmp(&a.0.abs()).then(a.1.cmp(&b.1)));
    let shown: Vec<String> = ops.iter().take(3).map(|(d, op)| format!("{op} {d:+}")).collect();
    format!("✗ {}{}", shown.join(", "), if ops.len() > 3 { format!(" (+{} ops)", ops.len() - 3) } else { String::new() })
}

/// Per original node, what torch made of it against what we made of it (node-level diff).
fn node_diff(model: &Model, d: &Decomposition, torch_nodes: &[serde_json::Value]) -> String {
    let g = &model.graphs[0];
    let mut ours: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for (i, n) in d.graph.nodes.iter().enumerate() {
        let origin = g.node(d.provenance.origin[i]).name.clone();
        *ours.entry(origin).or_default().entry(n.target.clone()).or_default() += 1;
    }
    let mut theirs: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for t in torch_nodes {
        let target = common::archive_histogram(&serde_json::json!({ t[0].as_str().unwrap(): 1 }));
        let Some(target) = target.keys().next().cloned() else { continue }; // getitem
        let origin = t[2].as_str().or(t[1].as_str()).unwrap().to_string();
        *theirs.entry(origin).or_default().entry(target).or_default() += 1;
    }
    let mut lines = Vec::new();
    for origin in ours.keys().chain(theirs.keys()).collect::<std::collections::BTreeSet<_>>() {
        let (o, t) = (ours.get(origin).cloned().unwrap_or_default(), theirs.get(origin).cloned().unwrap_or_default());
        if o != t {
            lines.push(format!("node `{origin}`:\n{}", hist_diff(&o, &t)));
        }
    }
    lines.join("\n")
}

fn stage_decomp(c: &Case, model: &Model, mode: Mode, key: &str) -> Outcome {
    let Some(want) = c.exp["ops"].get(key) else {
        let why = c.exp[format!("{key}_error")].as_str().unwrap_or("no expectation recorded");
        return Err(("— torch failed".into(), format!("torch's own {key} decomposition raised: {why}")));
    };
    let d = decompose(&model.graphs[0], mode, &Marks::default()).map_err(why)?;
    let want = common::archive_histogram(want);
    let got = d.graph.op_histogram();
    if got != want {
        let nodes = c.exp["nodes"][key].as_array().unwrap();
        return Err((decomp_cell(&got, &want), format!("{}\n{}", hist_diff(&got, &want), node_diff(model, &d, nodes))));
    }
    if !d.no_rule.is_empty() {
        let g = &model.graphs[0];
        return fail(format!("no rule for {:?}", d.no_rule.iter().map(|n| &g.node(*n).target).collect::<Vec<_>>()));
    }
    Ok(())
}

/// Lite mode marks the first node that full mode decomposes, so lite really mixes a decomposed
/// node with eager fallbacks.
fn lite_marks(model: &Model) -> Marks {
    let g = &model.graphs[0];
    match decompose(g, Mode::Full, &Marks::default()).ok().and_then(|d| d.decomposed.first().map(|x| x.node)) {
        Some(n) => Marks::parse(std::slice::from_ref(&g.node(n).name)).unwrap(),
        None => Marks::default(),
    }
}

fn marks_for(model: &Model, mode: Mode) -> Marks {
    if mode == Mode::Lite {
        lite_marks(model)
    } else {
        Marks::default()
    }
}

fn stage_eval(c: &Case, model: &Model, mode: Mode) -> Outcome {
    let d = decompose(&model.graphs[0], mode, &marks_for(model, mode)).map_err(why)?;
    for b in 0..2 {
        let got = exec::run(model, &d.graph, &c.npys(b, "in")).map_err(why)?;
        compare_outputs(&format!("binding {b}"), &got, &c.npys(b, "out"))?;
    }
    Ok(())
}

/// What one mode gives on OpenCL: the run at both bindings (`None` without a device: a printed
/// skip), and `spirv-val` over the modules it emitted (`None` without the validator).
struct OpenClResult {
    run: Option<Outcome>,
    val: Option<Outcome>,
    modules: usize,
}

/// Lowers under `mode`, validates every module with `spirv-val`, and runs on OpenCL at both
/// bindings.
fn stage_opencl(c: &Case, model: &Model, mode: Mode) -> OpenClResult {
    use xpu_workbench::runtime::plan::{compile_plan, run_on_device};
    let lowered = lower::lower(model, &model.graphs[0], mode, &marks_for(model, mode))
        .map_err(why)
        .and_then(|plan| compile_plan(&plan).map(|m| (plan, m)).map_err(why));
    let (plan, modules) = match lowered {
        Ok(x) => x,
        Err(e) => return OpenClResult { run: Some(Err(e)), val: Some(Ok(())), modules: 0 },
    };
    let mut val = Some(Ok(()));
    for m in modules.iter().flatten() {
        match common::spirv_val(m) {
            None => {
                val = None;
                break;
            }
            Some(Err(e)) => {
                val = Some(Err((format!("✗ `{}`", m.name), format!("{}: {e}", m.name))));
                break;
            }
            Some(Ok(())) => {}
        }
    }
    let n = modules.iter().flatten().count();
    let Some(mut dev) = common::opencl_device() else { return OpenClResult { run: None, val, modules: n } };
    let run = (|| {
        for b in 0..2 {
            let inputs = c.npys(b, "in");
            let bindings = exec::infer_bindings(model, &model.graphs[0], &inputs).map_err(why)?;
            let r = run_on_device(&mut dev, &plan, &modules, model, &inputs, &bindings).map_err(why)?;
            compare_outputs(&format!("binding {b}"), &r.outputs, &c.npys(b, "out"))?;
        }
        Ok(())
    })();
    OpenClResult { run: Some(run), val, modules: n }
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
