//! `decompose FILE --mode core|full --against-torch [--python PATH]`: the same archive decomposed
//! by the user's own torch (a small script shipped in the binary, run only when asked), imported
//! back, and compared with ours op by op and node by node. Exit 0 when the op multisets are equal,
//! 1 when they differ, 2 when there is no torch to ask.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, ExitCode};

use super::{fail, EXIT_FAILED, EXIT_USAGE};
use crate::decomp::{Decomposition, Mode};
use crate::ir::Graph;

const SCRIPT: &str = include_str!("against_torch.py");

type Hist = BTreeMap<String, usize>;

/// Runs torch on `file` under `mode` and compares its graph with `ours`.
pub fn compare(file: &Path, graph: &Graph, ours: &Decomposition, python: &str) -> ExitCode {
    let torch_mode = match ours.mode {
        Mode::Core => "core",
        Mode::Full => "full",
        m => return fail(EXIT_USAGE, &format!("--against-torch compares core or full mode, not {}", m.name())),
    };
    let dir = std::env::temp_dir().join(format!("xpu-workbench-against-torch-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(dir.join("against_torch.py"), SCRIPT)) {
        return fail(EXIT_USAGE, &format!("{}: cannot write the torch script: {e}", dir.display()));
    }
    let out = dir.join("torch.pt2");
    let run = Command::new(python).arg(dir.join("against_torch.py")).arg(file).arg(torch_mode).arg(&out).output();
    let result = match run {
        Err(e) => Err(fail(EXIT_USAGE, &format!("no torch to compare with: cannot run `{python}`: {e}"))),
        Ok(o) if o.status.code() == Some(3) => {
            Err(fail(EXIT_USAGE, &format!("no torch to compare with: {}", String::from_utf8_lossy(&o.stderr).trim())))
        }
        Ok(o) if !o.status.success() => {
            let err = String::from_utf8_lossy(&o.stderr);
            let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            Err(fail(EXIT_FAILED, &format!("torch's {torch_mode} decomposition of {} failed: {last}", file.display())))
        }
        Ok(o) => crate::import::load(&out)
            .map(|m| (m, String::from_utf8_lossy(&o.stdout).trim().to_string()))
            .map_err(|e| fail(EXIT_FAILED, &format!("reading torch's result: {e}"))),
    };
    let _ = std::fs::remove_dir_all(&dir);
    let (theirs, version) = match result {
        Ok(x) => x,
        Err(code) => return code,
    };
    let Some(tg) = theirs.graphs.first() else { return fail(EXIT_FAILED, &"torch's result holds no graph") };
    let (a, b) = (ours.graph.op_histogram(), tg.op_histogram());
    println!("torch {version} {torch_mode}: {} nodes, ours {}", tg.nodes.len(), ours.graph.nodes.len());
    if a == b {
        println!("op multisets are equal");
        return ExitCode::SUCCESS;
    }
    for line in hist_diff(&a, &b) {
        println!("{line}");
    }
    println!("by original node:");
    let mut by_ours: BTreeMap<String, Hist> = BTreeMap::new();
    for (i, n) in ours.graph.nodes.iter().enumerate() {
        let origin = graph.node(ours.provenance.origin[i]).name.clone();
        *by_ours.entry(origin).or_default().entry(n.target.clone()).or_default() += 1;
    }
    let mut by_torch: BTreeMap<String, Hist> = BTreeMap::new();
    for n in &tg.nodes {
        // The deepest `from_node` entry that names a node of the original graph.
        let origin = n.meta.from_node.iter().rev().map(|o| o.name.as_str()).find(|o| graph.node_by_name(o).is_some()).unwrap_or(&n.name);
        *by_torch.entry(origin.to_string()).or_default().entry(n.target.clone()).or_default() += 1;
    }
    for node in by_ours.keys().chain(by_torch.keys()).collect::<BTreeSet<_>>() {
        let (o, t) = (by_ours.get(node).cloned().unwrap_or_default(), by_torch.get(node).cloned().unwrap_or_default());
        if o != t {
            println!("  {node}:");
            for line in hist_diff(&o, &t) {
                println!("  {line}");
            }
        }
    }
    ExitCode::from(EXIT_FAILED)
}

fn hist_diff(ours: &Hist, torch: &Hist) -> Vec<String> {
    ours.keys()
        .chain(torch.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter_map(|op| {
            let (o, t) = (ours.get(op).copied().unwrap_or(0), torch.get(op).copied().unwrap_or(0));
            (o != t).then(|| format!("  {op}: ours {o}, torch {t}"))
        })
        .collect()
}
