//! The problems panel: everything that went wrong or could not be done, where the user looks —
//! decomposition errors, lite violations, what the lite target backend has no kernel for, what it
//! sends to the CPU or cannot run, ops with no rule, guards that cannot be evaluated,
//! the importer's warnings and a failed profile (lowering) — each with a link to its node.
//! A TORCH_TRACE log lists what torch did first: check-lite's verdict on the log and the graphs
//! skipped at import; what our own re-decomposition finds only once the user asked for it.

use egui::{Color32, RichText};

use crate::ir::NodeId;
use crate::ui::command::Command;
use crate::ui::state::{short_op, AppState, NodeClass, View};

const ERROR: Color32 = Color32::from_rgb(230, 90, 80);
const WARN: Color32 = Color32::from_rgb(220, 170, 60);

/// One line of the panel.
pub struct Problem {
    pub error: bool,
    pub text: String,
    /// The original node it is about.
    pub node: Option<NodeId>,
    /// Or a node of another view (a lowering error names a node of the decomposed graph).
    pub view_node: Option<(View, NodeId)>,
}

/// Every problem of the open model: a log's torch-side findings first, then the rest, errors first.
pub fn collect(state: &AppState) -> Vec<Problem> {
    let Some(doc) = &state.doc else { return Vec::new() };
    let log = doc.model.format == crate::ir::Format::TorchTrace;
    let torch = if log { torch_side(state) } else { Vec::new() };
    ordered(torch, ours(state, !log))
}

/// A log's torch-side lines in their own order (the verdict, what lite decomposed that it should
/// have kept, what could not be verified, the `--python` hint, what the import skipped), then
/// everything else with its errors first.
fn ordered(torch: Vec<Problem>, mut rest: Vec<Problem>) -> Vec<Problem> {
    rest.sort_by_key(|p| !p.error);
    torch.into_iter().chain(rest).collect()
}

/// check-lite's verdict on the open log, each line linked to its dynamo node where that compile's
/// stages are shown; then the importer's warnings (graphs it skipped, and why).
fn torch_side(state: &AppState) -> Vec<Problem> {
    let mut out = Vec::new();
    if let Some(v) = &state.log_verdict {
        if v.failed() || v.unverified > 0 {
            out.push(Problem { error: v.failed(), text: format!("check-lite: {}", v.summary), node: None, view_node: None });
        }
        let shown = state.stages.as_ref().map(|s| s.compile_id.as_str());
        let dynamo = state.pane(View::Dynamo).graph.as_deref();
        for l in v.lines_for(shown) {
            let at = l.at.as_ref().filter(|(id, n)| Some(id.as_str()) == shown && dynamo.is_some_and(|g| n.index() < g.nodes.len()));
            out.push(Problem { error: l.error, text: l.text.clone(), node: None, view_node: at.map(|(_, n)| (View::Dynamo, *n)) });
        }
    }
    if let Some(doc) = &state.doc {
        out.extend(doc.model.warnings.iter().map(|w| Problem { error: false, text: format!("import: {w}"), node: None, view_node: None }));
    }
    out
}

/// What our side finds: our decompositions and lowering (computed only once asked for on a log),
/// a failed profile, guards; with `import_warnings`, the importer's warnings too (a log lists
/// them with torch's findings).
fn ours(state: &AppState, import_warnings: bool) -> Vec<Problem> {
    let mut out = Vec::new();
    let Some(doc) = &state.doc else { return out };
    let original = &doc.model.graphs[doc.graph];
    let by_name = |name: &str| original.node_ids().find(|id| original.node(*id).name == name);
    for v in [View::Lite, View::Full] {
        let pane = state.pane(v);
        if let Some(e) = &pane.error {
            out.push(Problem { error: true, text: format!("{} decomposition failed: {e}", v.name()), node: pane.error_node.as_deref().and_then(by_name), view_node: None });
        }
    }
    for v in [View::Lite, View::Full] {
        let pane = state.pane(v);
        if let (Some((e, node)), Some(g)) = (&pane.lower_error, pane.graph.as_deref()) {
            let at = node.as_deref().and_then(|n| g.node_ids().find(|id| g.node(*id).name == n)).map(|id| (v, id));
            out.push(Problem { error: true, text: format!("{} does not lower to kernels: {e}", v.name()), node: None, view_node: at });
        }
    }
    if let Some(e) = &state.profile.error {
        out.push(Problem { error: true, text: format!("lowering / profile: {e}"), node: None, view_node: None });
    }
    // The original graph's colours predict our lite mode on the target: not asked for yet on a log.
    let empty = Vec::new();
    let classes = if state.redecompose { &state.pane(View::Original).classes } else { &empty };
    let mut lite_no_rule: Vec<NodeId> = Vec::new();
    let mut not_ready: Vec<NodeId> = Vec::new();
    for id in original.node_ids() {
        let n = original.node(id);
        match classes.get(id.index()) {
            Some(NodeClass::Violation) => out.push(Problem {
                error: true,
                text: format!("lite decomposed `{}` ({}), which is not marked", n.name, short_op(&n.target)),
                node: Some(id),
                view_node: None,
            }),
            Some(NodeClass::NoRule) => lite_no_rule.push(id),
            Some(NodeClass::CpuFallback | NodeClass::NotImplemented) => not_ready.push(id),
            Some(NodeClass::BackendExpanded) => out.push(Problem {
                error: false,
                text: state.backend_reason(id).unwrap_or_else(|| format!("the lite target expands `{}`", n.name)),
                node: Some(id),
                view_node: None,
            }),
            _ => {}
        }
    }
    readiness_lines(&mut out, state, original, &not_ready);
    no_rule_lines(&mut out, original, "lite", &lite_no_rule);
    if let Some(full) = &state.pane(View::Full).decomp {
        no_rule_lines(&mut out, original, "full", &full.no_rule);
    }
    for g in &state.guards {
        if let Err(e) = &g.now {
            out.push(Problem { error: false, text: format!("guard `{}` is not evaluated: {}", g.text, e.trim_start_matches("not evaluated: ")), node: None, view_node: None });
        }
    }
    if import_warnings {
        out.extend(doc.model.warnings.iter().map(|w| Problem { error: false, text: format!("import: {w}"), node: None, view_node: None }));
    }
    out
}

/// One line per op the mode has no rule for (a dynamo graph of torch-level calls has dozens of
/// such nodes): how many nodes, linking to the first.
fn no_rule_lines(out: &mut Vec<Problem>, original: &crate::ir::Graph, mode: &str, nodes: &[NodeId]) {
    let mut by_op: std::collections::BTreeMap<&str, Vec<NodeId>> = Default::default();
    for &id in nodes {
        by_op.entry(original.node(id).target.as_str()).or_default().push(id);
    }
    for (op, ids) in by_op {
        let first = &original.node(ids[0]).name;
        let text = match ids.len() {
            1 => format!("{mode}: no decomposition rule for `{first}` ({}): kept whole", short_op(op)),
            n => format!("{mode}: no decomposition rule for {} ({n} nodes, first `{first}`): kept whole", short_op(op)),
        };
        out.push(Problem { error: false, text, node: Some(ids[0]), view_node: None });
    }
}

/// One line per op the lite target sends to the CPU or has nothing for (the reason the inspector
/// gives), with how many nodes call it, linking to the first.
fn readiness_lines(out: &mut Vec<Problem>, state: &AppState, original: &crate::ir::Graph, nodes: &[NodeId]) {
    let mut by_op: std::collections::BTreeMap<&str, Vec<NodeId>> = Default::default();
    for &id in nodes {
        by_op.entry(original.node(id).target.as_str()).or_default().push(id);
    }
    let target = state.readiness.backend.map_or_else(|| "the lite target".to_string(), |b| format!("lite on {b}"));
    for ids in by_op.into_values() {
        let Some(reason) = state.readiness.reason(ids[0]) else { continue };
        let count = if ids.len() > 1 { format!(" ({} nodes)", ids.len()) } else { String::new() };
        out.push(Problem { error: false, text: format!("{target}{count}: {reason}"), node: Some(ids[0]), view_node: None });
    }
}

/// Shown while there are problems, unless the user closed it (the status bar reopens it).
pub fn show(ctx: &egui::Context, state: &AppState, problems: &[Problem], cmds: &mut Vec<Command>) {
    if !state.show_problems.unwrap_or(!problems.is_empty()) {
        return;
    }
    egui::TopBottomPanel::bottom("problems").resizable(true).default_height(120.0).show(ctx, |ui| {
        ui.horizontal(|ui| {
            ui.label(RichText::new(format!("Problems ({})", problems.len())).strong());
            if ui.small_button("hide").clicked() {
                cmds.push(Command::ShowProblems(false));
            }
        });
        if problems.is_empty() {
            ui.label(RichText::new("none").weak());
        }
        egui::ScrollArea::vertical().auto_shrink([false, true]).show(ui, |ui| {
            let Some(original) = state.original() else { return };
            for p in problems {
                ui.horizontal_wrapped(|ui| {
                    let (mark, color) = if p.error { ("✖", ERROR) } else { ("⚠", WARN) };
                    ui.label(RichText::new(mark).color(color));
                    ui.label(&p.text);
                    let target = p.node.map(|id| (View::Original, id)).or(p.view_node);
                    if let Some((view, id)) = target {
                        let graph = if view == View::Original { Some(original) } else { state.pane(view).graph.as_deref() };
                        if let Some(g) = graph.filter(|g| id.index() < g.nodes.len()) {
                            let name = &g.node(id).name;
                            let link = ui.link(format!("→ {name}"));
                            let heard = format!("problem: go to {name}");
                            link.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Link, true, heard.clone()));
                            if link.clicked() {
                                cmds.push(Command::JumpTo(view, id));
                            }
                        }
                    }
                });
            }
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(error: bool, text: &str) -> Problem {
        Problem { error, text: text.into(), node: None, view_node: None }
    }

    /// On a log, torch's side leads in its own order, warnings included; our side follows, its
    /// errors first.
    #[test]
    fn torch_side_findings_come_first_in_their_own_order() {
        let torch = vec![p(true, "check-lite: FAIL"), p(true, "violation"), p(false, "unverified"), p(false, "import: skipped")];
        let ours = vec![p(false, "guard"), p(true, "profile failed")];
        let texts: Vec<String> = ordered(torch, ours).into_iter().map(|p| p.text).collect();
        assert_eq!(texts, ["check-lite: FAIL", "violation", "unverified", "import: skipped", "profile failed", "guard"]);
    }
}
