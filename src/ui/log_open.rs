//! What the app shows when a TORCH_TRACE log opens: torch's own stages (dynamo → AOT → post-grad →
//! kernels) of the log's most relevant compile, check-lite's verdict on the whole log, and how
//! much each stage differs from the one before. A dynamo graph is not ours to lower, so our own
//! lite/full re-decomposition of it waits until the user asks (exports are decomposed on open, as
//! before). Each decision is a plain function here, tested beside it; `App` only calls them.

use std::path::Path;

use crate::decomp::lite_trace;
use crate::diff::Counts;
use crate::import::{self, trace};
use crate::ir::{Format, Model, NodeId};
use crate::ops::traced::TracedCalls;

use super::stages::StageSet;
use super::state::View;

/// One line check-lite has to say about the log, for the problems panel.
#[derive(Clone, Debug, PartialEq)]
pub struct TorchLine {
    pub error: bool,
    pub text: String,
    /// The compile and dynamo node it is about (a link where that compile's stages are shown).
    pub at: Option<(String, NodeId)>,
}

/// check-lite's verdict on a whole log, as `xpu-workbench check-lite LOG` prints it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogVerdict {
    /// The verdict line (`FAIL: …`, `UNVERIFIED: …`, `ok: …`).
    pub summary: String,
    pub violations: usize,
    pub unverified: usize,
    /// In order: what lite decomposed that it should have kept, what could not be checked, the
    /// `--python` hint.
    pub lines: Vec<TorchLine>,
}

impl LogVerdict {
    /// What a check of `log` says, with the traces the user's own torch already made
    /// (`check-lite --python` caches them), explained as the CLI explains them.
    pub fn of(log: &trace::TraceLog) -> LogVerdict {
        let (known, _) = TracedCalls::user(lite_trace::log_torch(log).as_deref());
        let mut check = lite_trace::check_log_with(log, &known);
        lite_trace::explain_untraced(log, &mut check, &known, false);
        LogVerdict::from_check(&check)
    }

    pub fn from_check(check: &lite_trace::LogCheck) -> LogVerdict {
        let mut lines: Vec<TorchLine> = check
            .violations()
            .map(|f| TorchLine { error: true, text: format!("check-lite: {}: {f}", f.compile_id), at: Some((f.compile_id.clone(), f.node_id)) })
            .collect();
        lines.extend(check.unverified.iter().map(|u| TorchLine {
            error: false,
            text: format!("check-lite could not verify {u}"),
            at: u.untraced.map(|n| (u.compile_id.clone(), n)),
        }));
        if let Some(hint) = check.untraced_hint() {
            lines.push(TorchLine { error: false, text: format!("check-lite: {hint} (xpu-workbench check-lite LOG --python PATH)"), at: None });
        }
        LogVerdict { summary: check.summary(), violations: check.violations().count(), unverified: check.unverified.len(), lines }
    }

    /// The lines in the order the problems panel lists them: errors first, and within each kind
    /// the lines of the compile `shown` (those link to its dynamo node) before the others'.
    pub fn lines_for(&self, shown: Option<&str>) -> Vec<&TorchLine> {
        let mut lines: Vec<&TorchLine> = self.lines.iter().collect();
        let here = |l: &TorchLine| shown.is_some() && l.at.as_ref().map(|(id, _)| id.as_str()) == shown;
        lines.sort_by_key(|l| (!l.error, !here(l)));
        lines
    }

    /// Whether the verdict is a failure (violations) rather than a note.
    pub fn failed(&self) -> bool {
        self.violations > 0
    }
}

/// Reads a file as the app opens it. A log is read once for both its graphs and check-lite's
/// verdict on it; other files have no verdict.
pub fn load(path: &Path) -> Result<(Model, Option<LogVerdict>), String> {
    if import::detect(path).map_err(|e| e.to_string())? != Format::TorchTrace {
        return import::load(path).map(|m| (m, None)).map_err(|e| e.to_string());
    }
    let log = trace::load_log(path).map_err(|e| e.to_string())?;
    let verdict = LogVerdict::of(&log);
    Ok((log.into_model(), Some(verdict)))
}

/// Whether our lite/full re-decomposition runs as soon as the file is open: for an export it is
/// what the app is for; for a log, whose graphs torch already decomposed and lowered, only on
/// request — unless it has no compile to open on (`opening`), when it opens as an export does
/// rather than on empty panes.
pub fn decomposes_on_open(model: &Model, opening: Option<&str>) -> bool {
    model.format != Format::TorchTrace || opening.is_none()
}

/// The compile a log opens on: the one with the most of torch's stages (a compile torch restarted
/// has a dynamo and an AOT graph but no post-grad one), the last of those in log order (the one
/// that ran).
pub fn opening_compile(model: &Model) -> Option<String> {
    if model.format != Format::TorchTrace {
        return None;
    }
    let ids = super::stages::compile_ids(model);
    let stages = |id: &String| StageSet::of(model, id).graphs.iter().filter(|g| g.is_some()).count();
    let best = ids.iter().map(stages).max().filter(|n| *n > 0)?;
    ids.iter().rev().find(|id| stages(id) == best).cloned()
}

/// The graph shown as the original (what our re-decomposition works on, what the status bar
/// names): the opening compile's dynamo graph, so that it is the compile whose stages are shown;
/// else the first graph.
pub fn original_index(model: &Model, compile: Option<&str>) -> usize {
    compile.and_then(|id| StageSet::of(model, id).graph_of(View::Dynamo)).unwrap_or(0)
}

/// How much one stage differs from the one before it, by the graph diff's counts.
#[derive(Clone, Debug, PartialEq)]
pub struct StageDiff {
    pub from: View,
    pub to: View,
    pub counts: Counts,
}

impl StageDiff {
    /// `dynamo → aot: 34 same · 1 changed · 182 only in dynamo · 264 only in aot`
    pub fn describe(&self) -> String {
        let c = &self.counts;
        let (a, b) = (self.from.name(), self.to.name());
        format!("{a} → {b}: {} same · {} changed · {} only in {a} · {} only in {b}", c.same, c.changed, c.only_a, c.only_b)
    }
}

/// The diff of each pair of adjacent graph stages the compile has (dynamo → AOT, AOT → post-grad),
/// by the graph diff library (`xpu-workbench diff LOG LOG --stage dynamo,aot` pairs the same
/// graphs). Runs on a worker: a few hundred nodes a graph take a fraction of a second.
pub fn stage_diffs(model: &Model, set: &StageSet) -> Vec<StageDiff> {
    let graph = |v: View| set.graph_of(v).and_then(|i| model.graphs.get(i));
    [(View::Dynamo, View::Aot), (View::Aot, View::PostGrad)]
        .into_iter()
        .filter_map(|(from, to)| {
            let (a, b) = (graph(from)?, graph(to)?);
            Some(StageDiff { from, to, counts: crate::diff::diff(a, b).counts })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Graph;

    fn log_model(names: &[&str]) -> Model {
        let mut m = Model::new(Format::TorchTrace, "x.log");
        for n in names {
            m.graphs.push(Graph::new(*n));
        }
        m
    }

    #[test]
    fn a_log_opens_on_the_last_compile_with_the_most_stages() {
        // 0/0 was restarted (no post-grad graph); 0/0_1 ran; 1/0 is a later, partial compile.
        let m = log_model(&[
            "0/0:dynamo_output_graph",
            "0/0:aot_inference_graph",
            "0/0_1:dynamo_output_graph",
            "0/0_1:aot_inference_graph",
            "0/0_1:inductor_post_grad_graph",
            "1/0:dynamo_output_graph",
        ]);
        assert_eq!(opening_compile(&m).as_deref(), Some("0/0_1"));
        assert_eq!(original_index(&m, Some("0/0_1")), 2, "its dynamo graph is the original");
        assert_eq!(original_index(&m, None), 0);
        let tie = log_model(&["0/0:dynamo_output_graph", "0/1:dynamo_output_graph"]);
        assert_eq!(opening_compile(&tie).as_deref(), Some("0/1"), "the last of equals");
    }

    #[test]
    fn exports_and_logs_without_stage_graphs_open_as_before() {
        let mut export = log_model(&["0/0:dynamo_output_graph"]);
        export.format = Format::Pt2;
        assert_eq!(opening_compile(&export), None);
        assert!(decomposes_on_open(&export, None));
        let unstaged = log_model(&["not a stage"]);
        assert_eq!(opening_compile(&unstaged), None);
        assert!(decomposes_on_open(&unstaged, None), "nothing of torch's to show: as before");
        assert!(!decomposes_on_open(&log_model(&["0/0:dynamo_output_graph"]), Some("0/0")));
    }

    #[test]
    fn the_verdict_lists_violations_then_unverified_calls_then_the_hint() {
        use lite_trace::{Finding, LogCheck, Unverified, Verdict};
        let finding = |node: &str, verdict: Verdict| Finding {
            compile_id: "0/0".into(),
            graph: "0/0:aot_inference_graph".into(),
            node: node.into(),
            node_id: NodeId(3),
            target: "torch.nn.functional.silu".into(),
            location: None,
            backend: None,
            verdict,
            became: Default::default(),
            marked: false,
        };
        let check = LogCheck {
            findings: vec![finding("kept", Verdict::Kept), finding("silu", Verdict::Decomposed { op: "silu".into(), inductor_table: true })],
            unverified: vec![Unverified { compile_id: "0/0".into(), what: "as_tensor".into(), reason: "no trace".into(), untraced: Some(NodeId(5)) }],
            table_torch: "2.15.0".into(),
            compared: 1,
            ..LogCheck::default()
        };
        let v = LogVerdict::from_check(&check);
        assert!(v.failed() && v.summary.starts_with("FAIL: 1 unmarked op(s) decomposed: torch.nn.functional.silu"), "{}", v.summary);
        let errors: Vec<bool> = v.lines.iter().map(|l| l.error).collect();
        assert_eq!(errors, [true, false, false]);
        assert!(v.lines[0].text.contains("node `silu`") && v.lines[0].at == Some(("0/0".into(), NodeId(3))));
        assert!(v.lines[1].text.starts_with("check-lite could not verify 0/0: as_tensor: no trace"));
        assert!(v.lines[2].text.contains("--python PATH") && v.lines[2].at.is_none());
    }

    #[test]
    fn the_shown_compiles_lines_lead_their_kind_and_the_hint_stays_last() {
        let line = |error: bool, compile: Option<&str>, text: &str| TorchLine { error, text: text.into(), at: compile.map(|c| (c.to_string(), NodeId(0))) };
        let v = LogVerdict {
            lines: vec![
                line(true, Some("0/0"), "a"),
                line(true, Some("0/0_1"), "b"),
                line(false, Some("0/0"), "c"),
                line(false, Some("0/0_1"), "d"),
                line(false, None, "hint"),
            ],
            ..LogVerdict::default()
        };
        let order = |shown| v.lines_for(shown).iter().map(|l| l.text.as_str()).collect::<Vec<_>>();
        assert_eq!(order(Some("0/0_1")), ["b", "a", "d", "c", "hint"]);
        assert_eq!(order(None), ["a", "b", "c", "d", "hint"]);
    }

    #[test]
    fn a_stage_diff_reads_as_counts_per_side() {
        let d = StageDiff { from: View::Dynamo, to: View::Aot, counts: Counts { same: 34, changed: 1, only_a: 182, only_b: 264 } };
        assert_eq!(d.describe(), "dynamo → aot: 34 same · 1 changed · 182 only in dynamo · 264 only in aot");
    }
}
