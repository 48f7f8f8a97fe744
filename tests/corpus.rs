//! The corpus tier: every architecture `scripts/gen_corpus.py` generated (transformers,
//! torchvision, timm; tiny configs; torch's own exports, compile logs and truths), through every
//! stage the workbench has. Runs where a corpus is present, not in CI:
//!
//! ```sh
//! XPU_WORKBENCH_CORPUS=/path/to/corpus-out cargo test --release --test corpus -- --nocapture
//! ```
//!
//! Stages per architecture (the zoo's, `tests/common/stages.rs`): import, shapes, guards, core and
//! full against torch's decompositions, the interpreter in none/lite/full mode and OpenCL in lite and
//! full mode against PyTorch's outputs at two bindings. Per compile log: it imports with no graph
//! skipped (`log import`), check-lite gives a verdict (`check-lite verdict`: exit 0 or 1, not 3) and
//! its verdicts agree with torch's own AOT graph op by op (`check-lite truth`, see [`truth_cell`]).
//! What torch itself failed to do (an export, `run_decompositions()`, a compile) is recorded as such
//! and counted apart. Every stage runs under `catch_unwind`: a panic is a failure of its own.
//!
//! `CORPUS_ONLY=ID,ID` limits the model stages (the slow half) to those architectures, every log is
//! still checked; `CORPUS_STAGES=models|logs` runs one half.
//! The test prints the per-family table and writes it, with every failure, to
//! `<corpus>/corpus-report.md`; `CORPUS_BLESS=1` also rewrites the table in `docs/MODELS.md`. It fails
//! when fewer than `CORPUS_MIN_PASS` (default 0.98) of the stages that ran pass.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use common::stages::*;
use xpu_workbench::decomp::lite_trace;
use xpu_workbench::decomp::Mode;
use xpu_workbench::import::trace::{self, Stage};

const COLUMNS: &[&str] = &[
    "import", "shapes", "guards", "core", "full", "eval none", "eval lite", "eval full", "opencl lite", "opencl full", "log import",
    "check-lite verdict", "check-lite truth",
];

/// One stage's result for one architecture: passed, failed (with why), or torch failed first.
#[derive(Clone, Debug)]
enum Cell {
    Pass,
    Fail(String),
    TorchFailed(String),
    /// Ran, but torch's recorded values cannot be compared (`stages::NOT_COMPARABLE`): neither a
    /// pass nor a failure.
    NotComparable(String),
}

struct Arch {
    torch: String,
    id: String,
    family: String,
    source: String,
    cells: BTreeMap<String, Vec<Cell>>,
}

/// `CORPUS_STAGES=models` or `logs` runs one half (default: both).
fn wanted(half: &str) -> bool {
    std::env::var("CORPUS_STAGES").map_or(true, |v| v.split(',').any(|h| h == half))
}

fn corpus_root() -> Option<PathBuf> {
    std::env::var_os("XPU_WORKBENCH_CORPUS").map(PathBuf::from)
}

fn json_file(p: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
}

/// Runs `f`, turning a panic into a failure that says so.
fn guarded(f: impl FnOnce() -> Outcome) -> Cell {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => Cell::Pass,
        Ok(Err((cell, long))) if cell.starts_with("— torch failed") => Cell::TorchFailed(long),
        Ok(Err((cell, long))) if cell == NOT_COMPARABLE => Cell::NotComparable(long),
        Ok(Err((cell, long))) => Cell::Fail(format!("{cell}: {}", long.lines().next().unwrap_or(""))),
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Cell::Fail(format!("PANIC: {msg}"))
        }
    }
}

fn model_stages(c: &Case, a: &mut Arch) {
    let mut put = |col: &str, cell: Cell| a.cells.entry(col.to_string()).or_default().push(cell);
    put("import", guarded(|| stage_import(c)));
    let model = match catch_unwind(AssertUnwindSafe(|| c.load())) {
        Ok(Ok(m)) => m,
        Ok(Err(e)) => {
            for col in &COLUMNS[1..10] {
                put(col, Cell::Fail(format!("does not load: {e}")));
            }
            return;
        }
        Err(_) => {
            put("shapes", Cell::Fail("PANIC while loading".into()));
            return;
        }
    };
    put("shapes", guarded(|| stage_shapes(c, &model)));
    put("guards", guarded(|| stage_guards(c, &model)));
    put("core", guarded(|| stage_decomp(c, &model, Mode::Core, "core")));
    put("full", guarded(|| stage_decomp(c, &model, Mode::Full, "inductor")));
    for (mode, col) in [(Mode::None, "eval none"), (Mode::Lite, "eval lite"), (Mode::Full, "eval full")] {
        put(col, guarded(|| stage_eval(c, &model, mode)));
    }
    if common::opencl_device().is_some() {
        for (mode, col) in [(Mode::Lite, "opencl lite"), (Mode::Full, "opencl full")] {
            let cell = match catch_unwind(AssertUnwindSafe(|| stage_opencl(c, &model, mode).run)) {
                Ok(Some(run)) => guarded(|| run),
                Ok(None) => continue,
                Err(_) => Cell::Fail("PANIC in lowering or OpenCL".into()),
            };
            put(col, cell);
        }
    }
}

/// One compile log: import, a verdict, and the verdicts against torch's truth.
fn log_stages(log_path: &Path, truth_path: &Path, a: &mut Arch) {
    let mut put = |col: &str, cell: Cell| a.cells.entry(col.to_string()).or_default().push(cell);
    let name = log_path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
    let log = match catch_unwind(AssertUnwindSafe(|| trace::load_log(log_path))) {
        Ok(Ok(l)) => l,
        Ok(Err(e)) => return put("log import", Cell::Fail(format!("{name}: {e}"))),
        Err(_) => return put("log import", Cell::Fail(format!("{name}: PANIC"))),
    };
    let skipped: Vec<&String> = log.warnings.iter().filter(|w| w.contains("skipped")).collect();
    put("log import", if skipped.is_empty() { Cell::Pass } else { Cell::Fail(format!("{name}: {}", skipped[0])) });
    let check = match catch_unwind(AssertUnwindSafe(|| lite_trace::check_log(&log))) {
        Ok(c) => c,
        Err(_) => return put("check-lite verdict", Cell::Fail(format!("{name}: PANIC"))),
    };
    if check.compared == 0 && log.compiles.iter().all(|c| c.graph(Stage::DynamoOutput).is_none()) {
        return; // no graph at all: torch compiled nothing (recorded by the generator)
    }
    put(
        "check-lite verdict",
        match check.unverified.first() {
            None => Cell::Pass,
            Some(u) => Cell::Fail(format!("{name}: exit 3: {u}")),
        },
    );
    let Some(truth) = json_file(truth_path) else { return };
    match common::truth::truth_cell(&check, &truth) {
        Some(Ok(())) => put("check-lite truth", Cell::Pass),
        Some(Err(wrong)) => put("check-lite truth", Cell::Fail(format!("{name}: {wrong}"))),
        None => {}
    }
}

fn archs_of(set: &Path) -> Vec<Arch> {
    let Some(manifest) = json_file(&set.join("manifest.json")) else { return Vec::new() };
    let torch = manifest["torch"].as_str().unwrap_or("?").to_string();
    let mut out = Vec::new();
    let Some(archs) = manifest["architectures"].as_object() else { return out };
    let only: Option<BTreeSet<String>> = std::env::var("CORPUS_ONLY").ok().map(|s| s.split(',').map(str::to_string).collect());
    for (id, m) in archs {
        let mut a = Arch {
            torch: torch.clone(),
            id: id.clone(),
            family: m["family"].as_str().unwrap_or("?").to_string(),
            source: m["source"].as_str().unwrap_or("").to_string(),
            cells: BTreeMap::new(),
        };
        let started = std::time::Instant::now();
        let export = m["stages"]["export"]["status"].as_str();
        let expect = json_file(&set.join(format!("{id}.expect.json")));
        match (export, expect) {
            (Some("ok"), Some(exp)) if wanted("models") && only.as_ref().is_none_or(|o| o.contains(id)) => {
                let c = Case { torch: torch.clone(), name: id.clone(), dir: set.to_path_buf(), exp };
                model_stages(&c, &mut a);
            }
            // torch.export raised or hung on a model that builds and runs eagerly: torch's failure.
            (Some("torch_failed" | "timeout" | "crashed"), _) if wanted("models") && only.as_ref().is_none_or(|o| o.contains(id)) => {
                let why = m["stages"]["export"]["error"].as_str().unwrap_or("not exported").to_string();
                a.cells.entry("import".into()).or_default().push(Cell::TorchFailed(format!("torch.export: {why}")));
            }
            _ => {} // not exported in this corpus (a compile-only run), or not asked for
        }
        let artifacts: Vec<String> = m["artifacts"].as_array().into_iter().flatten().filter_map(|x| x.as_str().map(str::to_string)).collect();
        for f in artifacts.iter().filter(|f| f.ends_with(".log.gz") && wanted("logs")) {
            let stem = f.trim_end_matches(".log.gz");
            // A slimmed corpus (scripts/slim_trace_log.py) keeps its logs uncompressed.
            let path = [set.join(f), set.join(format!("{stem}.log"))].into_iter().find(|p| p.exists());
            if let Some(path) = path {
                log_stages(&path, &set.join(format!("{stem}.truth.json")), &mut a);
            }
        }
        let failed = a.cells.values().flatten().filter(|c| matches!(c, Cell::Fail(_))).count();
        eprintln!("{} {id}: {} stage(s), {failed} failed, {:.1} s", a.torch, a.cells.values().map(Vec::len).sum::<usize>(), started.elapsed().as_secs_f64());
        out.push(a);
    }
    out
}

fn report(archs: &[Arch]) -> (String, usize, usize) {
    let mut fam: BTreeMap<(String, String), BTreeMap<&str, (usize, usize, usize)>> = BTreeMap::new();
    let mut count: BTreeMap<(String, String), usize> = BTreeMap::new();
    let (mut pass, mut ran) = (0, 0);
    let (mut failures, mut torch_failed, mut not_comparable) = (Vec::new(), Vec::new(), Vec::new());
    for a in archs {
        let key = (a.torch.clone(), a.family.clone());
        *count.entry(key.clone()).or_default() += 1;
        for col in COLUMNS {
            let e = fam.entry(key.clone()).or_default().entry(col).or_default();
            for cell in a.cells.get(*col).into_iter().flatten() {
                match cell {
                    Cell::Pass => {
                        e.0 += 1;
                        pass += 1;
                        ran += 1;
                    }
                    Cell::Fail(why) => {
                        e.1 += 1;
                        ran += 1;
                        failures.push(format!("- torch {} `{}` ({}) {col}: {}", a.torch, a.id, a.source, why.replace('\n', " ")));
                    }
                    Cell::TorchFailed(why) => {
                        e.2 += 1;
                        torch_failed.push(format!("- torch {} `{}` {col}: {}", a.torch, a.id, why.lines().next().unwrap_or("")));
                    }
                    Cell::NotComparable(why) => not_comparable.push(format!("- torch {} `{}` {col}: {why}", a.torch, a.id)),
                }
            }
        }
    }
    let mut md = format!("| torch | family | architectures | {} |\n|{}\n", COLUMNS.join(" | "), " --- |".repeat(COLUMNS.len() + 3));
    for ((torch, family), cols) in &fam {
        let cells: Vec<String> = COLUMNS
            .iter()
            .map(|c| match cols.get(c) {
                Some((p, f, t)) if p + f + t > 0 => format!("{p}/{}{}", p + f, if *t > 0 { format!(" (+{t} torch failed)") } else { String::new() }),
                _ => "—".into(),
            })
            .collect();
        md.push_str(&format!("| {torch} | {family} | {} | {} |\n", count[&(torch.clone(), family.clone())], cells.join(" | ")));
    }
    md.push_str(&format!("\n{pass} of {ran} stages pass ({:.1} %).\n", 100.0 * pass as f64 / ran.max(1) as f64));
    if !failures.is_empty() {
        md.push_str(&format!("\n### Failures ({})\n\n{}\n", failures.len(), failures.join("\n")));
    }
    if !torch_failed.is_empty() {
        md.push_str(&format!("\n### Torch failed first ({})\n\n{}\n", torch_failed.len(), torch_failed.join("\n")));
    }
    if !not_comparable.is_empty() {
        md.push_str(&format!("\n### Not comparable ({}: counted neither way)\n\n{}\n", not_comparable.len(), not_comparable.join("\n")));
    }
    (md, pass, ran)
}

const BEGIN: &str = "<!-- corpus-status: rewritten by CORPUS_BLESS=1 cargo test --test corpus -->";
const END: &str = "<!-- /corpus-status -->";

#[test]
fn the_corpus_through_every_stage() {
    let Some(root) = corpus_root() else {
        eprintln!("skipped: XPU_WORKBENCH_CORPUS names no corpus (scripts/gen_corpus.py OUT makes one)");
        return;
    };
    let mut sets: Vec<PathBuf> = std::fs::read_dir(&root).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.join("manifest.json").exists()).collect();
    if root.join("manifest.json").exists() {
        sets.push(root.clone());
    }
    sets.sort();
    assert!(!sets.is_empty(), "{}: no torch-*/manifest.json", root.display());
    let mut archs = Vec::new();
    for set in &sets {
        archs.extend(archs_of(set));
    }
    let (md, pass, ran) = report(&archs);
    println!("{md}");
    let _ = std::fs::write(root.join("corpus-report.md"), &md);
    if std::env::var("CORPUS_BLESS").is_ok_and(|v| v == "1") {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/MODELS.md");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let table = md.split("\n### Failures").next().unwrap_or(&md).trim_end();
        let block = format!("{BEGIN}\n{table}\n{END}");
        let new = match (text.find(BEGIN), text.find(END)) {
            (Some(a), Some(b)) => format!("{}{}{}", &text[..a], block, &text[b + END.len()..]),
            _ => format!("{text}\n{block}\n"),
        };
        std::fs::write(&path, new).unwrap();
    }
    let min: f64 = std::env::var("CORPUS_MIN_PASS").ok().and_then(|v| v.parse().ok()).unwrap_or(0.98);
    assert!(ran > 0, "no stage ran");
    assert!(pass as f64 >= min * ran as f64, "{pass} of {ran} stages pass, under {min}");
}
