//! TORCH_TRACE stage views: one compile id's dynamo graph, AOT graph and post-grad graph side by
//! side. The log names each graph `"<compile id>:<artifact>"`; nodes of two stages relate when
//! they carry the same source location (`import::trace::stage_provenance`).

use crate::import::trace::{stage_provenance, Stage};
use crate::ir::{Graph, Model, NodeId};

use super::state::View;

/// The stages shown for one compile id: index into `Model::graphs` per stage view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageSet {
    pub compile_id: String,
    /// For the first three of [`View::STAGES`] (the kernels stage is built from the log on a
    /// worker, not taken from the model), in order; `None` when the log has no such graph.
    pub graphs: [Option<usize>; 3],
}

/// `"0/1:aot_inference_graph"` → (`"0/1"`, the stage).
fn split(name: &str) -> Option<(&str, Stage)> {
    let (id, artifact) = name.rsplit_once(':')?;
    Some((id, Stage::from_name(artifact)?))
}

/// The compile ids of a log's graphs, in log order.
pub fn compile_ids(model: &Model) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for g in &model.graphs {
        if let Some((id, _)) = split(&g.name) {
            if !ids.iter().any(|x| x == id) {
                ids.push(id.to_string());
            }
        }
    }
    ids
}

impl StageSet {
    /// The stage graphs of `compile_id`: dynamo's output graph; the AOT inference graph, else the
    /// forward, else the joint one; Inductor's post-grad graph.
    pub fn of(model: &Model, compile_id: &str) -> StageSet {
        let find = |stages: &[Stage]| {
            stages.iter().find_map(|s| {
                model.graphs.iter().position(|g| split(&g.name).is_some_and(|(id, st)| id == compile_id && st == *s))
            })
        };
        StageSet {
            compile_id: compile_id.to_string(),
            graphs: [
                find(&[Stage::DynamoOutput]),
                find(&[Stage::AotInference, Stage::AotForward, Stage::AotJoint]),
                find(&[Stage::InductorPostGrad]),
            ],
        }
    }

    pub fn graph_of(&self, view: View) -> Option<usize> {
        let i = View::STAGES.iter().position(|v| *v == view)?;
        self.graphs.get(i).copied().flatten()
    }
}

/// The nodes of stage graph `to` that share a source location with node `node` of stage graph
/// `from` (`from_first`: whether `from` is the earlier stage of the two).
pub fn related_nodes(from: &Graph, to: &Graph, node: NodeId, from_first: bool) -> Vec<NodeId> {
    if from_first {
        stage_provenance(from, to).into_iter().filter(|(_, earlier)| earlier.contains(&node)).map(|(later, _)| later).collect()
    } else {
        stage_provenance(to, from).into_iter().find(|(later, _)| *later == node).map(|(_, earlier)| earlier).unwrap_or_default()
    }
}
