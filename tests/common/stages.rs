//! The stages a real exported model goes through, each against what PyTorch recorded for it
//! (`NAME.expect.json`, inputs and outputs at two bindings, as `scripts/corpus_expect.py` writes
//! them): import, shapes and guards, `core`/`full` against torch's decompositions, the interpreter
//! and OpenCL in every mode, `spirv-val`. The zoo (`tests/zoo.rs`) and the generated corpus
//! (`tests/corpus.rs`) run the same stages.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use xpu_workbench::decomp::{decompose, Decomposition, Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::Model;
use xpu_workbench::shapes::{evaluate_graph, evaluate_guards, resolve_bindings};
use xpu_workbench::{import, lower, npy};

use crate::common;

/// Relative error (infinity norm over the reference's largest magnitude) accepted against
/// PyTorch's eager outputs: float32 through a different summation order.
pub const TOL: f64 = 1e-4;

pub struct Case {
    pub torch: String,
    pub name: String,
    pub dir: PathBuf,
    pub exp: serde_json::Value,
}

impl Case {
    pub fn file(&self, f: &str) -> PathBuf {
        self.dir.join(f)
    }
    pub fn load(&self) -> Result<Model, String> {
        import::load(&self.file(&format!("{}.pt2", self.name))).map_err(|e| e.to_string())
    }
    pub fn npys(&self, b: usize, kind: &str) -> Vec<Tensor> {
        (0..)
            .map(|i| self.file(&format!("{}.b{b}.{kind}{i}.npy", self.name)))
            .take_while(|p| p.exists())
            .map(|p| load_npy(&p))
            .collect()
    }
    pub fn binding(&self, b: usize) -> Vec<(String, i64)> {
        self.exp["bindings"][b]["bindings"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_i64().unwrap())).collect()
    }
    pub fn key(&self) -> (String, String) {
        (self.torch.clone(), self.name.clone())
    }
}

pub fn load_npy(path: &Path) -> Tensor {
    let a = npy::read(path).unwrap();
    Tensor::from_le_bytes(a.dtype, &a.shape, &a.data).unwrap()
}

pub fn rel_err(got: &Tensor, want: &Tensor) -> f64 {
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    let scale = w.iter().fold(1e-6f64, |m, x| m.max(x.abs()));
    g.iter().zip(&w).map(|(a, b)| if a == b { 0.0 } else { (a - b).abs() }).fold(0.0, f64::max) / scale
}

/// A stage's result: `Ok` or a short cell text naming what blocks it, plus the long story.
pub type Outcome = Result<(), (String, String)>;

/// The first op overload a message names (`aten.embedding.default`), else its first words.
pub fn blocker(msg: &str) -> String {
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
pub fn why(msg: impl ToString) -> (String, String) {
    let msg = msg.to_string();
    (format!("✗ {}", blocker(&msg)), msg)
}

pub fn fail(msg: impl ToString) -> Outcome {
    Err(why(msg))
}

/// The outputs' count, shapes and dtypes against torch's.
pub fn same_layout(what: &str, got: &[Tensor], want: &[Tensor]) -> Outcome {
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
    }
    Ok(())
}

pub fn compare_outputs(what: &str, got: &[Tensor], want: &[Tensor]) -> Outcome {
    same_layout(what, got, want)?;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let e = rel_err(g, w);
        if e.is_nan() || e >= TOL {
            return Err((format!("✗ rel err {e:.0e}"), format!("{what}: out{i}: relative error {e:.3e} ≥ {TOL:e}")));
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ the stages

pub fn stage_import(c: &Case) -> Outcome {
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

pub fn stage_shapes(c: &Case, model: &Model) -> Outcome {
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

pub fn stage_guards(c: &Case, model: &Model) -> Outcome {
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

pub fn hist_diff(got: &BTreeMap<String, usize>, want: &BTreeMap<String, usize>) -> String {
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
pub fn decomp_cell(got: &BTreeMap<String, usize>, want: &BTreeMap<String, usize>) -> String {
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
pub fn node_diff(model: &Model, d: &Decomposition, torch_nodes: &[serde_json::Value]) -> String {
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

pub fn stage_decomp(c: &Case, model: &Model, mode: Mode, key: &str) -> Outcome {
    let Some(want) = c.exp["ops"].get(key) else {
        let why = c.exp[format!("{key}_error")].as_str().unwrap_or("no expectation recorded");
        return Err(("— torch failed".into(), format!("torch's own {key} decomposition raised: {why}")));
    };
    // torch 2.15's re-trace can give an input dim another input's symbol (CLIP-likes' image
    // batch read as the text batch): its graph is then of a narrower program, whose size nodes
    // the archive's cannot share, so its multiset is no truth for ours.
    if let Some(merged) = c.exp[format!("{key}_merged_symbols")].as_array().filter(|m| !m.is_empty()) {
        let merged: Vec<&str> = merged.iter().filter_map(|m| m.as_str()).collect();
        return Err(("— torch failed".into(), format!("torch's own {key} decomposition changed input symbols: {}", merged.join(", "))));
    }
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
pub fn lite_marks(model: &Model) -> Marks {
    let g = &model.graphs[0];
    match decompose(g, Mode::Full, &Marks::default()).ok().and_then(|d| d.decomposed.first().map(|x| x.node)) {
        Some(n) => Marks::parse(std::slice::from_ref(&g.node(n).name)).unwrap(),
        None => Marks::default(),
    }
}

pub fn marks_for(model: &Model, mode: Mode) -> Marks {
    if mode == Mode::Lite {
        lite_marks(model)
    } else {
        Marks::default()
    }
}

/// The cell of an eval stage whose outputs depend on random numbers the graph draws: torch's
/// generator (mt19937 on the CPU) is not what the interpreter draws with (Philox streams), so the
/// outputs torch recorded cannot be compared value for value (ViT-MAE's `torch.rand` noise for its
/// random masking). A graph whose draws do not change its outputs is compared as any other
/// (wav2vec2's SpecAugment `rand` in eval: its mask probability is 0).
pub const NOT_COMPARABLE: &str = "— not comparable";

/// The first node that draws random numbers and whose values flow into an output of `g`.
fn random_reaching_an_output(g: &xpu_workbench::ir::Graph) -> Option<&xpu_workbench::ir::Node> {
    let mut tainted_by: Vec<Option<usize>> = vec![None; g.values.len()];
    for (i, n) in g.nodes.iter().enumerate() {
        let from = if xpu_workbench::ops::rng::draws(n) { Some(i) } else { n.inputs().find_map(|v| tainted_by[v.index()]) };
        if from.is_some() {
            for &o in &n.outputs {
                tainted_by[o.index()] = from;
            }
        }
    }
    g.outputs.iter().flat_map(|o| o.values()).find_map(|v| tainted_by[v.index()]).map(|i| &g.nodes[i])
}

pub fn stage_eval(c: &Case, model: &Model, mode: Mode) -> Outcome {
    let d = decompose(&model.graphs[0], mode, &marks_for(model, mode)).map_err(why)?;
    let random = random_reaching_an_output(&d.graph);
    let export_differs = c.exp.get("export_differs").and_then(|v| v.as_str());
    let mut drawn_values_differ = false;
    for b in 0..2 {
        let got = exec::run(model, &d.graph, &c.npys(b, "in")).map_err(why)?;
        let what = format!("binding {b}");
        // A graph whose outputs depend on its draws is still run and compared; values that differ
        // only there leave its outputs' layout checked. Where torch's exported program does not
        // reproduce eager (scripts/corpus_expect.py: `export_differs`), the interpreter is
        // checked against the exported program's outputs (`epout`).
        let graph_outs = c.npys(b, "epout");
        if random.is_some() {
            if compare_outputs(&what, &got, &c.npys(b, "out")).is_err() {
                same_layout(&what, &got, &c.npys(b, "out"))?;
                drawn_values_differ = true;
            }
        } else if export_differs.is_some() && !graph_outs.is_empty() {
            compare_outputs(&format!("{what} (against torch's exported program)"), &got, &graph_outs)?;
        } else {
            compare_outputs(&what, &got, &c.npys(b, "out"))?;
        }
    }
    match (random.filter(|_| drawn_values_differ), export_differs) {
        (Some(n), _) => Err((
            NOT_COMPARABLE.into(),
            format!("node `{}` ({}) draws random numbers, which the interpreter does not draw as torch does: values not compared (output count, shapes and dtypes match)", n.name, n.target),
        )),
        (None, Some(why)) => Err((
            "— torch failed".into(),
            format!("torch's exported program does not reproduce eager ({why}); the interpreter matches the exported program"),
        )),
        (None, None) => Ok(()),
    }
}

/// What one mode gives on OpenCL: the run at both bindings (`None` without a device: a printed
/// skip), and `spirv-val` over the modules it emitted (`None` without the validator).
pub struct OpenClResult {
    pub run: Option<Outcome>,
    pub val: Option<Outcome>,
    pub modules: usize,
}

/// Lowers under `mode`, validates every module with `spirv-val`, and runs on OpenCL at both
/// bindings.
pub fn stage_opencl(c: &Case, model: &Model, mode: Mode) -> OpenClResult {
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

