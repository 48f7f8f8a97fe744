//! The focused view: the selected node with its producers and consumers in egui_node_graph2's
//! node-editor look (ports, wires, draggable boxes). It draws every node it holds each frame, which
//! is why it only ever holds a neighbourhood (docs/PERFORMANCE.md, "GUI").

use std::borrow::Cow;
use std::collections::HashMap;

use egui::{pos2, Color32};
use egui_node_graph2 as eng;

use super::canvas::class_fill;
use super::command::Command;
use super::state::{format_dims, short_op, AppState, NodeClass, View};
use crate::ir::{Graph, NodeId};

/// How many producers and consumers are shown on each side.
const SIDE_MAX: usize = 8;

/// What one editor node stands for.
#[derive(Clone, Debug)]
pub struct NodeData {
    pub node: NodeId,
    pub class: NodeClass,
    pub shape: String,
    pub concrete: String,
}

/// Every port carries a tensor: one data type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tensor;

/// Ports hold no editable constants.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoValue;

/// The node finder is not used (the graph is read-only), but the editor wants a template type.
#[derive(Clone, Copy, Debug)]
pub struct NoTemplate;

#[derive(Clone, Debug)]
pub enum Response {
    Select(NodeId),
}

#[derive(Default)]
pub struct UserState {
    pub dark: bool,
}

pub type Editor = eng::GraphEditorState<NodeData, Tensor, NoValue, NoTemplate, UserState>;

impl eng::UserResponseTrait for Response {}

impl eng::DataTypeTrait<UserState> for Tensor {
    fn data_type_color(&self, _user_state: &mut UserState) -> Color32 {
        Color32::from_rgb(110, 170, 230)
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("tensor")
    }
}

impl eng::WidgetValueTrait for NoValue {
    type Response = Response;
    type UserState = UserState;
    type NodeData = NodeData;

    fn value_widget(
        &mut self,
        param_name: &str,
        _node_id: eng::NodeId,
        ui: &mut egui::Ui,
        _user_state: &mut UserState,
        _node_data: &NodeData,
    ) -> Vec<Response> {
        ui.label(param_name);
        Vec::new()
    }
}

impl eng::NodeTemplateTrait for NoTemplate {
    type NodeData = NodeData;
    type DataType = Tensor;
    type ValueType = NoValue;
    type UserState = UserState;
    type CategoryType = ();

    fn node_finder_label(&self, _user_state: &mut UserState) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn node_graph_label(&self, _user_state: &mut UserState) -> String {
        String::new()
    }

    fn user_data(&self, _user_state: &mut UserState) -> NodeData {
        NodeData { node: NodeId(0), class: NodeClass::Plain, shape: String::new(), concrete: String::new() }
    }

    fn build_node(&self, _graph: &mut eng::Graph<NodeData, Tensor, NoValue>, _user_state: &mut UserState, _node_id: eng::NodeId) {}
}

/// No templates: the editor's node finder stays empty.
pub struct NoTemplates;

impl eng::NodeTemplateIter for NoTemplates {
    type Item = NoTemplate;

    fn all_kinds(&self) -> Vec<NoTemplate> {
        Vec::new()
    }
}

impl eng::NodeDataTrait for NodeData {
    type Response = Response;
    type UserState = UserState;
    type DataType = Tensor;
    type ValueType = NoValue;

    fn bottom_ui(
        &self,
        ui: &mut egui::Ui,
        _node_id: eng::NodeId,
        _graph: &eng::Graph<NodeData, Tensor, NoValue>,
        _user_state: &mut UserState,
    ) -> Vec<eng::NodeResponse<Response, NodeData>> {
        ui.label(egui::RichText::new(&self.shape).monospace().small());
        ui.label(egui::RichText::new(&self.concrete).monospace().small());
        if ui.small_button("select").clicked() {
            return vec![eng::NodeResponse::User(Response::Select(self.node))];
        }
        Vec::new()
    }

    fn titlebar_color(
        &self,
        _ui: &egui::Ui,
        _node_id: eng::NodeId,
        _graph: &eng::Graph<NodeData, Tensor, NoValue>,
        user_state: &mut UserState,
    ) -> Option<Color32> {
        Some(class_fill(self.class, user_state.dark))
    }

    fn can_delete(&self, _node_id: eng::NodeId, _graph: &eng::Graph<NodeData, Tensor, NoValue>, _user_state: &mut UserState) -> bool {
        false
    }
}

/// Builds an editor holding `nodes` of `graph` at `positions`, wired as the graph is.
pub fn build_editor(
    graph: &Graph,
    nodes: &[(NodeId, egui::Pos2)],
    describe: &dyn Fn(NodeId) -> NodeData,
) -> (Editor, HashMap<eng::NodeId, NodeId>) {
    let mut ed = Editor::new(1.0);
    let mut ours: HashMap<NodeId, eng::NodeId> = HashMap::new();
    let mut back: HashMap<eng::NodeId, NodeId> = HashMap::new();
    let mut outputs: HashMap<crate::ir::ValueId, eng::OutputId> = HashMap::new();
    for &(id, pos) in nodes {
        let n = graph.node(id);
        let label = format!("{} · {}", short_op(&n.target), n.name);
        let e = ed.graph.add_node(label, describe(id), |_, _| {});
        for a in &n.args {
            for (k, _) in a.arg.values().iter().enumerate() {
                let name = if k == 0 { a.name.clone() } else { format!("{}[{k}]", a.name) };
                ed.graph.add_input_param(e, name, Tensor, NoValue, eng::InputParamKind::ConnectionOnly, true);
            }
        }
        for &v in &n.outputs {
            let o = ed.graph.add_output_param(e, graph.value(v).name.clone(), Tensor);
            outputs.insert(v, o);
        }
        ed.node_positions.insert(e, pos);
        ed.node_order.push(e);
        ours.insert(id, e);
        back.insert(e, id);
    }
    for &(id, _) in nodes {
        let e = ours[&id];
        let inputs: Vec<eng::InputId> = ed.graph.nodes[e].inputs.iter().map(|(_, i)| *i).collect();
        let reads: Vec<crate::ir::ValueId> = graph.node(id).args.iter().flat_map(|a| a.arg.values()).collect();
        for (input, v) in inputs.into_iter().zip(reads) {
            if let Some(&o) = outputs.get(&v) {
                ed.graph.add_connection(o, input, 0);
            }
        }
    }
    (ed, back)
}

/// The neighbourhood panel and the editor it keeps between frames.
#[derive(Default)]
pub struct Neighbourhood {
    editor: Option<Editor>,
    back: HashMap<eng::NodeId, NodeId>,
    key: Option<(View, NodeId, u64)>,
}

impl Neighbourhood {
    pub fn show(&mut self, ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
        egui::TopBottomPanel::bottom("neighbourhood").resizable(true).min_height(200.0).default_height(260.0).show(ctx, |ui| {
            let Some(sel) = state.selection else {
                ui.label("Neighbourhood: select a node to see its producers and consumers here.");
                return;
            };
            let pane = state.pane(sel.view);
            let Some(graph) = pane.graph.clone() else { return };
            let key = (sel.view, sel.node, pane.generation ^ (state.shape_version << 32));
            if self.key != Some(key) {
                self.rebuild(state, sel.view, sel.node, &graph);
                self.key = Some(key);
            }
            let Some(ed) = self.editor.as_mut() else { return };
            let mut user = UserState { dark: ui.visuals().dark_mode };
            let resp = ed.draw_graph_editor(ui, NoTemplates, &mut user, Vec::new());
            for r in resp.node_responses {
                match r {
                    eng::NodeResponse::User(Response::Select(id)) => cmds.push(Command::Select(sel.view, id)),
                    eng::NodeResponse::SelectNode(e) => {
                        if let Some(&id) = self.back.get(&e) {
                            if id != sel.node {
                                cmds.push(Command::Select(sel.view, id));
                            }
                        }
                    }
                    _ => {}
                }
            }
        });
    }

    fn rebuild(&mut self, state: &AppState, view: View, center: NodeId, graph: &Graph) {
        let users = graph.users();
        let producers: Vec<NodeId> = {
            let mut v: Vec<NodeId> = graph.node(center).inputs().filter_map(|x| graph.value(x).producer).collect();
            v.dedup();
            v.truncate(SIDE_MAX);
            v
        };
        let consumers: Vec<NodeId> = {
            let mut v: Vec<NodeId> = graph.node(center).outputs.iter().flat_map(|o| users[o.index()].iter().copied()).collect();
            v.sort();
            v.dedup();
            v.truncate(SIDE_MAX);
            v
        };
        let row = |ids: &[NodeId], x0: f32| -> Vec<(NodeId, egui::Pos2)> {
            ids.iter().enumerate().map(|(k, id)| (*id, pos2(x0, 10.0 + k as f32 * 150.0))).collect()
        };
        let mut nodes = row(&producers, 10.0);
        nodes.push((center, pos2(330.0, 10.0)));
        nodes.extend(row(&consumers, 650.0));
        let pane = state.pane(view);
        let describe = |id: NodeId| {
            let n = graph.node(id);
            let out = n.outputs.first().copied();
            let shape = out.and_then(|v| graph.value(v).tensor()).map(|t| format_dims(&t.sizes)).unwrap_or_default();
            let concrete = out
                .and_then(|v| pane.shapes.get(v.index())?.as_ref()?.as_ref().ok())
                .map(|t| format!("= {}", format_dims(&t.shape)))
                .unwrap_or_default();
            NodeData { node: id, class: pane.classes.get(id.index()).copied().unwrap_or(NodeClass::Plain), shape, concrete }
        };
        let (mut ed, back) = build_editor(graph, &nodes, &describe);
        if let Some((&e, _)) = back.iter().find(|(_, id)| **id == center) {
            ed.selected_nodes = vec![e];
        }
        self.editor = Some(ed);
        self.back = back;
    }
}
