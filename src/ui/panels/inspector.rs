//! The inspector: everything about the selected node, with links to what it became or came from.

use egui::RichText;

use crate::ir::{Arg, Graph, NodeId, SymIntArg, ValueKind};
use crate::shapes::ConcreteTensor;
use crate::ui::canvas::class_name;
use crate::ui::command::Command;
use crate::ui::state::{format_dims, short_op, AppState, NodeClass, View};

pub fn show(ctx: &egui::Context, state: &AppState, cmds: &mut Vec<Command>) {
    egui::SidePanel::right("inspector").default_width(340.0).resizable(true).show(ctx, |ui| {
        ui.heading("Inspector");
        let Some(sel) = state.selection else {
            ui.label("click a node to inspect it; right-click to mark it for lite decomposition");
            return;
        };
        let Some(graph) = state.pane(sel.view).graph.clone() else { return };
        if sel.node.index() >= graph.nodes.len() {
            return;
        }
        egui::ScrollArea::vertical().show(ui, |ui| body(ui, state, &graph, sel.view, sel.node, cmds));
    });
}

fn body(ui: &mut egui::Ui, state: &AppState, graph: &Graph, view: View, id: crate::ir::NodeId, cmds: &mut Vec<Command>) {
    let node = graph.node(id);
    let class = state.pane(view).classes.get(id.index()).copied().unwrap_or(NodeClass::Plain);
    ui.horizontal(|ui| {
        ui.label(RichText::new(&node.name).strong().monospace());
        if ui.small_button("copy name").clicked() {
            cmds.push(Command::Copy(node.name.clone()));
        }
    });
    grid_row(ui, "view", view.name());
    grid_row(ui, "op", &node.target);
    if View::DIFF.contains(&view) {
        super::diff::inspector_rows(ui, state, view, id, cmds);
    } else {
        grid_row(ui, "class", class_name(class));
    }
    if view == View::Dynamo {
        if let Some(f) = state.stage_findings.get(&id) {
            grid_row(ui, "check-lite", f.verdict.class());
            ui.label(RichText::new(f.to_string()).small());
        }
    }
    if let Some(orig) = state.origin(view, id) {
        grid_row(ui, "marked", if state.is_marked(orig) { "yes" } else { "no" });
        if let Some(reason) = state.backend_reason(orig) {
            ui.label(RichText::new(format!("Expanded by the lite target: {reason}")).small())
                .on_hover_text("the op registry's kernel table: `xpu-workbench backends --op NAME`");
        }
        readiness_rows(ui, state, view, orig, class);
    }
    if let Some(write) = crate::decomp::functionalize::describe_write(graph, node) {
        ui.label(RichText::new(format!("Writes in place: {write}")).small())
            .on_hover_text("torch.export keeps in-place ops; Inductor functionalizes them before anything else, and so do every mode's interpreter and kernels here");
    }
    let module = node.meta.module_path();
    grid_row(ui, "module", if module.is_empty() { "(top level)" } else { module });

    ui.separator();
    ui.label(RichText::new("Arguments").strong());
    for a in &node.args {
        ui.label(RichText::new(format!("{}{} = {}", a.name, if a.kwarg { " (kw)" } else { "" }, format_arg(graph, &a.arg))).monospace().small());
    }

    ui.separator();
    ui.label(RichText::new("Outputs").strong());
    for &v in &node.outputs {
        let value = graph.value(v);
        match &value.kind {
            ValueKind::Tensor(t) => {
                let concrete = state.pane(view).shapes.get(v.index()).and_then(|r| r.as_ref());
                ui.label(RichText::new(format!("{}: {}", value.name, t.dtype)).monospace());
                grid_row(ui, "shape", &format_dims(&t.sizes));
                grid_row(ui, "strides", &format_dims(&t.strides));
                match concrete {
                    Some(Ok(c)) => concrete_rows(ui, c, cmds),
                    Some(Err(e)) => grid_row(ui, "concrete", &format!("does not evaluate: {e}")),
                    None => {}
                }
            }
            ValueKind::SymInt(e) | ValueKind::SymBool(e) | ValueKind::SymFloat(e) => {
                let now = e.eval(&state.bindings).map(|v| v.to_string()).unwrap_or_else(|err| err.to_string());
                grid_row(ui, &value.name, &format!("{e} = {now}"));
            }
            ValueKind::Other(k) => grid_row(ui, &value.name, k),
        }
    }

    ui.separator();
    ui.label(RichText::new("Provenance").strong());
    if let Some(orig) = state.origin(view, id) {
        if view != View::Original {
            if let Some(g) = state.original() {
                let o = g.node(orig);
                ui.horizontal(|ui| {
                    ui.label("came from");
                    if ui.link(format!("{} ({})", o.name, short_op(&o.target))).clicked() {
                        cmds.push(Command::JumpTo(View::Original, orig));
                    }
                });
            }
        }
        for other in [View::Lite, View::Full] {
            if other == view {
                continue;
            }
            let products = state.products(other, orig);
            let Some(og) = state.pane(other).graph.clone() else { continue };
            node_links(ui, &format!("in {}:", other.name()), &og, other, &products, cmds);
        }
    }
    if view.is_stage() {
        stage_links(ui, state, view, cmds);
    }
    if !node.meta.from_node.is_empty() {
        ui.label(RichText::new("recorded history (from_node)").weak());
        for o in &node.meta.from_node {
            ui.label(RichText::new(format!("  {} ({})", o.name, o.target)).monospace().small());
        }
    }

    if let Some(trace) = &node.meta.stack_trace {
        ui.separator();
        egui::CollapsingHeader::new("Stack trace").default_open(false).show(ui, |ui| {
            ui.label(RichText::new(trace).monospace().small());
        });
    }
}

/// What the lite target's ATen does with the op (any node that came from one), and why where it
/// is not the target's own kernel: the same statuses and sources as `xpu-workbench readiness`.
fn readiness_rows(ui: &mut egui::Ui, state: &AppState, view: View, orig: NodeId, class: NodeClass) {
    let r = &state.readiness;
    let (Some(backend), Some(line)) = (r.backend, r.line(orig)) else { return };
    // A decomposed node's own op is Inductor's to lower: what the target does with the original
    // op says nothing about it.
    if view != View::Original && !matches!(class, NodeClass::Fallback | NodeClass::CpuFallback | NodeClass::NotImplemented) {
        return;
    }
    grid_row(ui, &format!("on {backend}"), &line);
    if let Some(reason) = r.reason(orig).filter(|_| matches!(class, NodeClass::CpuFallback | NodeClass::NotImplemented)) {
        let what = if class == NodeClass::CpuFallback { "Falls back to the CPU" } else { "Not implemented on the lite target" };
        ui.label(RichText::new(format!("{what}: {reason}")).small())
            .on_hover_text("`xpu-workbench readiness FILE` lists every op of the model this way");
    }
}

fn concrete_rows(ui: &mut egui::Ui, c: &ConcreteTensor, cmds: &mut Vec<Command>) {
    let shape = format_dims(&c.shape);
    ui.horizontal(|ui| {
        ui.label(RichText::new(format!("concrete shape {shape}")).monospace());
        if ui.small_button("copy shape").clicked() {
            cmds.push(Command::Copy(shape.clone()));
        }
    });
    grid_row(ui, "concrete strides", &format_dims(&c.strides));
    grid_row(ui, "bytes", &c.bytes.map_or("overflows u64".into(), |b| b.to_string()));
}

fn grid_row(ui: &mut egui::Ui, key: &str, value: &str) {
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(key).weak());
        ui.label(RichText::new(value).monospace());
    });
}

/// An argument as a person reads it: values by name, lists in brackets.
pub fn format_arg(graph: &Graph, arg: &Arg) -> String {
    let name = |v: &crate::ir::ValueId| graph.values.get(v.index()).map_or("?".to_string(), |x| x.name.clone());
    let sym = |s: &SymIntArg| match s {
        SymIntArg::Int(i) => i.to_string(),
        SymIntArg::Value(v) => name(v),
    };
    match arg {
        Arg::None => "None".into(),
        Arg::Tensor(v) | Arg::SymBool(v) | Arg::SymFloat(v) => name(v),
        Arg::Tensors(vs) => format_dims(&vs.iter().map(name).collect::<Vec<_>>()),
        Arg::OptionalTensors(vs) => format_dims(&vs.iter().map(|v| v.as_ref().map_or("None".into(), name)).collect::<Vec<_>>()),
        Arg::Int(i) => i.to_string(),
        Arg::Ints(xs) => format_dims(xs),
        Arg::Float(x) => x.to_string(),
        Arg::Floats(xs) => format_dims(xs),
        Arg::Bool(b) => b.to_string(),
        Arg::Bools(bs) => format_dims(bs),
        Arg::String(s) => format!("{s:?}"),
        Arg::Strings(ss) => format_dims(ss),
        Arg::SymInt(s) => sym(s),
        Arg::SymInts(ss) => format_dims(&ss.iter().map(sym).collect::<Vec<_>>()),
        Arg::ScalarType(d) => d.to_string(),
        Arg::MemoryFormat(s) | Arg::Layout(s) | Arg::Device(s) => s.clone(),
        Arg::Opaque { kind, .. } => format!("<{kind}>"),
    }
}

/// For a node of a TORCH_TRACE stage: the nodes of the other stages with its source location.
fn stage_links(ui: &mut egui::Ui, state: &AppState, view: View, cmds: &mut Vec<Command>) {
    for other in View::STAGES {
        if other == view {
            continue;
        }
        let Some(og) = state.pane(other).graph.clone() else { continue };
        let related = state.related(other);
        node_links(ui, &format!("same source line in {}:", other.name()), &og, other, &related, cmds);
    }
}

/// A labelled, wrapped row of links to `nodes` of `view` (the first 40, then a count).
fn node_links(ui: &mut egui::Ui, label: &str, graph: &Graph, view: View, nodes: &[NodeId], cmds: &mut Vec<Command>) {
    const SHOWN: usize = 40;
    ui.horizontal_wrapped(|ui| {
        ui.label(label);
        if nodes.is_empty() {
            ui.label(RichText::new("nothing").weak());
        }
        for p in nodes.iter().take(SHOWN) {
            let n = graph.node(*p);
            let text = format!("{} ({})", n.name, short_op(&n.target));
            // A screen reader hears which view the link leads to, not just the node.
            let heard = format!("in {}: {text}", view.name());
            let link = ui.link(text);
            link.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Link, true, heard.clone()));
            if link.clicked() {
                cmds.push(Command::JumpTo(view, *p));
            }
        }
        if nodes.len() > SHOWN {
            ui.label(format!("… {} more", nodes.len() - SHOWN));
        }
    });
}
