//! Which nodes answer to which across views: provenance between the original graph and its
//! decompositions, source locations between a log's stages, and the picked kernel's nodes.

use super::{AppState, View};
use crate::ir::NodeId;

impl AppState {
    /// The original node a node of `view` came from (stage views have none).
    pub fn origin(&self, view: View, node: NodeId) -> Option<NodeId> {
        match view {
            View::Original => Some(node),
            v if v.is_stage() => None,
            _ => self.pane(view).decomp.as_ref()?.provenance.origin.get(node.index()).copied(),
        }
    }

    /// The nodes of `view` that correspond to original node `orig`.
    pub fn products(&self, view: View, orig: NodeId) -> Vec<NodeId> {
        match view {
            View::Original => vec![orig],
            _ => self
                .pane(view)
                .decomp
                .as_ref()
                .and_then(|d| d.provenance.products.get(orig.index()).cloned())
                .unwrap_or_default(),
        }
    }

    /// What to highlight in `view` for the current selection: the selected node itself, or what it
    /// became / came from on the other side.
    pub fn related(&self, view: View) -> Vec<NodeId> {
        let mut out = self.selection_related(view);
        for n in self.kernel_nodes(view) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
        out
    }

    /// The nodes of `view` the picked kernel computes: post-grad nodes in the post-grad, AOT and
    /// kernels views (AOT nodes keep their names into the post-grad graph), original nodes in the
    /// dynamo view and in the original view when it shows the same compile's dynamo graph.
    pub fn kernel_nodes(&self, view: View) -> Vec<NodeId> {
        let Some(k) = self.kernels.selected_kernel() else { return Vec::new() };
        let compile = self.kernels.stage.as_ref().map(|s| s.compile_id.as_str()).unwrap_or_default();
        let names = match view {
            View::Kernels | View::PostGrad | View::Aot => &k.post_grad_nodes,
            View::Dynamo => &k.nodes,
            View::Original
                if self.original().is_some_and(|g| g.name == format!("{compile}:{}", crate::import::trace::Stage::DynamoOutput.name())) =>
            {
                &k.nodes
            }
            _ => return Vec::new(),
        };
        let Some(g) = self.pane(view).graph.as_deref() else { return Vec::new() };
        names.iter().filter_map(|n| g.node_by_name(n)).collect()
    }

    fn selection_related(&self, view: View) -> Vec<NodeId> {
        let Some(sel) = self.selection else { return Vec::new() };
        if sel.view == view {
            return vec![sel.node];
        }
        if View::DIFF.contains(&sel.view) || View::DIFF.contains(&view) {
            return crate::ui::diff_view::related(self, sel, view);
        }
        if sel.view.is_stage() || view.is_stage() {
            return self.stage_related(sel.view, sel.node, view);
        }
        match self.origin(sel.view, sel.node) {
            Some(orig) => self.products(view, orig),
            None => Vec::new(),
        }
    }

    /// The nodes of stage view `view` with the source location of `node` of stage view `from`.
    fn stage_related(&self, from: View, node: NodeId, view: View) -> Vec<NodeId> {
        let (Some(a), Some(b)) = (self.pane(from).graph.as_deref(), self.pane(view).graph.as_deref()) else { return Vec::new() };
        if !(from.is_stage() && view.is_stage()) || node.index() >= a.nodes.len() {
            return Vec::new();
        }
        crate::ui::stages::related_nodes(a, b, node, from < view)
    }

    /// Whether original node `orig` is marked (annotated in the file, or by the user).
    pub fn is_marked(&self, orig: NodeId) -> bool {
        self.original().is_some_and(|g| self.marks.marks(g.node(orig)))
    }
}
