//! How each view's nodes are drawn ([`NodeClass`]): from the decompositions and the marks, what
//! the target backend forces (its kernel table's fates and readiness), and check-lite's verdicts
//! on a log's stage graphs.

use std::collections::{HashMap, HashSet};

use super::{AppState, NodeClass, View};
use crate::decomp::{check_decomposed, check_lite, is_symbolic_size_op, Marks};
use crate::ir::NodeId;

impl AppState {
    /// Which nodes the target backend cannot keep, from the op registry's table of the model's
    /// torch version.
    pub fn refresh_backend_fates(&mut self) {
        self.backend_fates.clear();
        self.backend_table = None;
        self.readiness = Default::default();
        let (Some(original), Some(backend)) = (self.original().cloned(), self.target_backend) else { return };
        let version = self.doc.as_ref().and_then(|d| d.model.torch_version.clone());
        let Some(table) = crate::ops::table_for(version.as_deref()) else { return };
        let (_, forced) = crate::decomp::predict::lite_marks_on(&original, backend, table, &self.marks);
        // Only what tracing expands: an op with neither a kernel nor a composite body is kept
        // whole, and what the target then does with it (the CPU, or NotImplementedError) is its
        // readiness, which knows torch-xpu-ops' fallback list.
        let expanded = forced.into_iter().filter(|f| matches!(f.fate, crate::decomp::predict::Fate::Expanded { .. }));
        self.backend_fates = expanded.map(|f| (f.node, f)).collect();
        self.backend_table = Some(table.torch.clone());
        self.readiness = crate::ui::readiness::Readiness::of(&original, table, backend);
    }

    /// The marks lite mode works with on the target backend: the user's, plus what the backend
    /// forces.
    pub fn lite_marks(&self) -> Marks {
        crate::decomp::predict::with_forced(&self.marks, self.backend_fates.values())
    }

    /// Why the target backend expands original node `id`, if it does.
    pub fn backend_reason(&self, id: NodeId) -> Option<String> {
        let (f, backend) = (self.backend_fates.get(&id)?, self.target_backend?);
        Some(f.describe(backend, self.backend_table.as_deref().unwrap_or("?")))
    }

    /// Runs check-lite on the shown compile's dynamo and AOT graphs and colours both: what
    /// lite mode should not have decomposed red, what the backend forced teal, marked ones blue.
    pub fn classify_stages(&mut self) {
        use crate::decomp::lite_trace::{check_graphs, Verdict};
        self.stage_findings.clear();
        self.stage_unverified.clear();
        let (Some(dynamo), Some(aot)) = (self.pane(View::Dynamo).graph.clone(), self.pane(View::Aot).graph.clone()) else {
            return;
        };
        let id = self.stages.as_ref().map(|s| s.compile_id.clone()).unwrap_or_default();
        let version = self.doc.as_ref().and_then(|d| d.model.torch_version.clone());
        let Some(table) = crate::ops::table_for(version.as_deref()) else { return };
        // What `check-lite --python` traced with the user's torch for this version counts here too.
        let (traced, _) = crate::ops::traced::TracedCalls::user(version.as_deref());
        let (findings, unverified) = check_graphs(&id, &dynamo, &aot, table, &traced);
        let class_of = |v: &Verdict| match v {
            Verdict::Decomposed { .. } => NodeClass::Violation,
            Verdict::NoKernel { .. } => NodeClass::BackendExpanded,
            Verdict::Marked => NodeClass::Decomposed,
            Verdict::Kept | Verdict::Composite { .. } | Verdict::Elided | Verdict::InBackward { .. } | Verdict::Merged { .. } => NodeClass::Plain,
        };
        let mut dyn_classes = vec![NodeClass::Plain; dynamo.nodes.len()];
        let mut bad_locations: HashMap<(String, u32), NodeClass> = HashMap::new();
        for f in &findings {
            let c = class_of(&f.verdict);
            dyn_classes[f.node_id.index()] = c;
            if let (Some(l), true) = (&f.location, f.verdict.is_violation()) {
                bad_locations.insert((l.file.clone(), l.line), c);
            }
        }
        let located = findings.iter().any(|f| f.location.is_some());
        let whole = findings.iter().find(|f| f.verdict.is_violation()).map(|f| class_of(&f.verdict));
        let aot_classes = aot
            .node_ids()
            .map(|n| {
                let loc = crate::import::trace::node_location(&aot, n);
                match (located, loc) {
                    (true, Some(l)) => bad_locations.get(&(l.file, l.line)).copied().unwrap_or(NodeClass::Plain),
                    (false, _) if crate::ops::aten_name(&aot.node(n).target).is_some() => whole.unwrap_or(NodeClass::Plain),
                    _ => NodeClass::Plain,
                }
            })
            .collect();
        self.pane_mut(View::Dynamo).classes = dyn_classes;
        self.pane_mut(View::Aot).classes = aot_classes;
        self.stage_unverified = unverified.iter().map(|u| u.to_string()).collect();
        self.stage_findings = findings.into_iter().map(|f| (f.node_id, f)).collect();
    }

    /// Recomputes how each view's nodes are drawn from the decompositions and the marks.
    pub fn classify(&mut self) {
        let Some(original) = self.original().cloned() else { return };
        let lite = self.pane(View::Lite).decomp.clone();
        let lite_marks = self.lite_marks();
        let mut violating: HashSet<NodeId> = HashSet::new();
        let by_name: HashMap<&str, NodeId> = original.node_ids().map(|id| (original.node(id).name.as_str(), id)).collect();
        if let Some(lite) = &lite {
            for v in check_lite(&original, lite, &lite_marks) {
                if let Some(&id) = by_name.get(v.node.as_str()) {
                    violating.insert(id);
                }
            }
        }
        // A file that is already decomposed records where its nodes came from: check it as it is.
        let recorded: HashSet<String> = check_decomposed(&original, &self.marks).into_iter().map(|v| v.node).collect();

        let mut orig_classes = vec![NodeClass::Plain; original.nodes.len()];
        if let Some(lite) = &lite {
            for d in &lite.decomposed {
                orig_classes[d.node.index()] = NodeClass::Decomposed;
            }
            for &k in &lite.no_rule {
                orig_classes[k.index()] = NodeClass::NoRule;
            }
        }
        for id in original.node_ids() {
            let n = original.node(id);
            let recorded_violation = n.meta.from_node.last().is_some_and(|o| recorded.contains(&o.name));
            if violating.contains(&id) || recorded_violation {
                orig_classes[id.index()] = NodeClass::Violation;
            } else if self.backend_fates.contains_key(&id) {
                orig_classes[id.index()] = NodeClass::BackendExpanded;
            } else if orig_classes[id.index()] == NodeClass::Plain && !self.is_marked(id) {
                // What lite mode will keep whole: drawn as the target runs it where that is not
                // its own kernel (plain otherwise, as before).
                let c = self.readiness.kept_class(id);
                if c != NodeClass::Fallback {
                    orig_classes[id.index()] = c;
                }
            }
        }
        self.pane_mut(View::Original).classes = orig_classes.clone();

        for view in [View::Lite, View::Full] {
            let Some(d) = self.pane(view).decomp.clone() else {
                self.pane_mut(view).classes.clear();
                self.pane_mut(view).decomposed_origin.clear();
                continue;
            };
            let decomposed: HashSet<NodeId> = d.decomposed.iter().map(|x| x.node).collect();
            let mut by_origin = vec![false; original.nodes.len()];
            for x in &d.decomposed {
                if let Some(b) = by_origin.get_mut(x.node.index()) {
                    *b = true;
                }
            }
            self.pane_mut(view).decomposed_origin = by_origin;
            let kept: HashSet<NodeId> = d.kept.iter().copied().collect();
            let no_rule: HashSet<NodeId> = d.no_rule.iter().copied().collect();
            let classes = d
                .provenance
                .origin
                .iter()
                .map(|o| {
                    if view == View::Lite && violating.contains(o) {
                        NodeClass::Violation
                    } else if view == View::Lite && self.backend_fates.contains_key(o) {
                        NodeClass::BackendExpanded
                    } else if no_rule.contains(o) {
                        NodeClass::NoRule
                    } else if decomposed.contains(o) {
                        NodeClass::Decomposed
                    } else if view == View::Lite && kept.contains(o) && !is_symbolic_size_op(&original.node(*o).target) {
                        self.readiness.kept_class(*o)
                    } else {
                        NodeClass::Plain
                    }
                })
                .collect();
            self.pane_mut(view).classes = classes;
        }
    }
}
