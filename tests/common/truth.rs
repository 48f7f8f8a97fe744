//! check-lite's verdicts against torch's own graphs (`scripts/corpus_truth.py`'s truth.json of the
//! same log): the corpus tier's `check-lite truth` column (`tests/corpus.rs`) and the logs kept in
//! `samples/corpus/logs/` (`tests/corpus_slice.rs`).

use std::collections::BTreeMap;

use xpu_workbench::decomp::lite_trace::{LogCheck, Verdict};
use xpu_workbench::ops::backend::functional_name;

/// check-lite's verdicts against torch's own AOT graph, op by op (torch's counts, read by
/// `scripts/corpus_truth.py` from the same log with another parser): every call found kept needs
/// its op in torch's graph, so kept ≤ torch's count; and where calls of an op are found
/// decomposed, torch's graph must hold fewer of it than there were calls, kept + decomposed > count.
/// `None` when check-lite claimed nothing this can hold against torch: no cell, rather than a pass;
/// else what disagrees.
pub fn truth_cell(check: &LogCheck, truth: &serde_json::Value) -> Option<Result<(), String>> {
    let counts = truth_counts(truth, "aot", &["forward", "inference"]);
    // Torch counts the last attempt of each compile (`0/0_1` restarts `0/0`); so do the claims.
    let attempt = |id: &str| -> (String, u32) {
        match id.rsplit_once('_') {
            Some((base, a)) if a.chars().all(|c| c.is_ascii_digit()) => (base.to_string(), a.parse().unwrap_or(0)),
            _ => (id.to_string(), 0),
        }
    };
    let mut last: BTreeMap<String, u32> = BTreeMap::new();
    for f in &check.findings {
        let (base, a) = attempt(&f.compile_id);
        let e = last.entry(base).or_insert(a);
        *e = (*e).max(a);
    }
    let mut claims: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    // Per (op, source line): calls claiming the op kept or decomposed there, where torch's truth
    // holds its ops by line (`aot_at`).
    let at = located_counts(truth, &["forward", "inference"]);
    let mut by_line: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    let line_of = |f: &xpu_workbench::decomp::lite_trace::Finding| f.location.as_ref().map(|l| format!("{}:{}", l.file, l.line)).unwrap_or_default();
    for f in check.findings.iter().filter(|f| {
        let (base, a) = attempt(&f.compile_id);
        last.get(&base) == Some(&a)
    }) {
        // The call's own op, as check-lite names it: `aten.cat.default` and `torch.cat` are `cat`.
        let own = xpu_workbench::ops::aten_name(&f.target).map(|(n, _)| n).unwrap_or_else(|| f.target.rsplit('.').next().unwrap_or(""));
        let own = functional_name(own).to_string();
        let (op, kept) = match &f.verdict {
            Verdict::Kept if counts.contains_key(&own) || !own.is_empty() && f.became.contains_key(&own) => (own, true),
            // A call that always becomes one op (`linear` → `addmm`) claims that op present.
            Verdict::Composite { into } if into.len() == 1 => (functional_name(&into[0]).to_string(), true),
            Verdict::Decomposed { op, .. } | Verdict::NoKernel { op, .. } => (functional_name(op).to_string(), false),
            _ => continue,
        };
        let (c, l) = (claims.entry(op.clone()).or_default(), by_line.entry((op, line_of(f))).or_default());
        if kept {
            c.0 += 1;
            l.0 += 1;
        } else {
            c.1 += 1;
            l.1 += 1;
        }
    }
    let mut wrong = Vec::new();
    for (op, (kept, decomposed)) in &claims {
        let t = counts.get(op).copied().unwrap_or(0);
        if *kept > t {
            wrong.push(format!("{kept} `{op}` call(s) kept, torch's graph has {t}"));
        }
        // Without lines, every `op` of torch's graph counts against the claim (a `stack` elsewhere
        // that became a `cat` too: a false alarm the lines below avoid).
        if *decomposed > 0 && at.is_none() && kept + decomposed <= t {
            wrong.push(format!("{decomposed} `{op}` call(s) decomposed, yet torch's graph has {t} for {} call(s)", kept + decomposed));
        }
    }
    // With lines: on each line where calls of `op` were found decomposed, torch's graph must hold
    // fewer `op`s than there were calls of it.
    if let Some(at) = &at {
        for ((op, line), (kept, decomposed)) in &by_line {
            let t = at.get(&(op.clone(), line.clone())).copied().unwrap_or(0);
            if *decomposed > 0 && kept + decomposed <= t {
                wrong.push(format!("{decomposed} `{op}` call(s) decomposed at {line}, yet torch's graph has {t} there for {} call(s)", kept + decomposed));
            }
        }
    }
    if claims.is_empty() {
        return None;
    }
    Some(if wrong.is_empty() { Ok(()) } else { Err(wrong.join("; ")) })
}

/// Torch's op counts by (functional name, `FILE:LINE`) from a truth's `aot_at` (graph kinds
/// summed); `None` for a truth written before it had lines.
pub fn located_counts(truth: &serde_json::Value, kinds: &[&str]) -> Option<BTreeMap<(String, String), usize>> {
    let at = truth.get("aot_at")?;
    let mut out = BTreeMap::new();
    for k in kinds {
        for (op, locs) in at[*k].as_object().into_iter().flatten() {
            let op = op.trim_start_matches("torch.ops.");
            let Some(bare) = op.strip_prefix("aten.") else { continue };
            let name = functional_name(bare.split('.').next().unwrap_or(bare)).to_string();
            for (loc, n) in locs.as_object().into_iter().flatten() {
                *out.entry((name.clone(), loc.clone())).or_default() += n.as_u64().unwrap_or(0) as usize;
            }
        }
    }
    Some(out)
}

/// Torch's op counts of a truth's section (`aot` with its graph kinds), by functional name.
pub fn truth_counts(truth: &serde_json::Value, section: &str, kinds: &[&str]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for k in kinds {
        for (op, n) in truth[section][*k].as_object().into_iter().flatten() {
            let op = op.trim_start_matches("torch.ops.");
            let Some(bare) = op.strip_prefix("aten.") else { continue };
            *out.entry(functional_name(bare.split('.').next().unwrap_or(bare)).to_string()).or_default() += n.as_u64().unwrap_or(0) as usize;
        }
    }
    out
}
