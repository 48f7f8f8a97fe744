//! The kernels stage of a TORCH_TRACE compile: Inductor's post-grad graph with each node boxed in
//! the kernel that computes it (`import::trace::kernels`: generated Triton/C++ kernels, library
//! calls, ATen fallbacks), each kernel in its own colour. The kernel list beside it shows a
//! kernel's source; a picked kernel's nodes are highlighted in every stage.
//!
//! The grouping reuses the module machinery: the stage's graph is a copy of the post-grad graph
//! whose nodes carry one module frame, their kernel, so the layout folds and frames kernels as it
//! does modules. Built on a worker ([`build`]); the UI only reads [`KernelStage`].

use std::collections::HashMap;
use std::path::Path;

use egui::Color32;

use crate::import::trace::{self, Kernel, KernelKind, Stage};
use crate::ir::{Graph, ModuleFrame};

/// One compile's kernels and its post-grad graph grouped by them.
#[derive(Clone, Debug)]
pub struct KernelStage {
    pub compile_id: String,
    /// Every kernel of every output code of the compile (most compiles log one).
    pub kernels: Vec<Kernel>,
    /// The post-grad graph, each node's module stack replaced by its kernel ([`group_path`]).
    pub graph: Graph,
    /// Post-grad node name → the kernel computing it (the first, where several recompute it).
    pub kernel_of: HashMap<String, usize>,
    /// What the log could not tell (a missing output code, nodes no kernel names).
    pub notes: Vec<String>,
}

impl KernelStage {
    /// The kernel a group of the stage's layout stands for.
    pub fn kernel_of_group(&self, path: &str) -> Option<usize> {
        self.kernels.iter().position(|k| group_path(k) == path)
    }
}

/// The module path a kernel's group gets: its name, unique within a compile.
pub fn group_path(k: &Kernel) -> String {
    k.name.clone()
}

/// What a kernel's group box says it is.
pub fn kind_name(kind: KernelKind) -> &'static str {
    match kind {
        KernelKind::Triton => "Triton kernel",
        KernelKind::Cpp => "C++ kernel",
        KernelKind::Generated => "generated kernel",
        KernelKind::Extern => "library call",
        KernelKind::Fallback => "ATen fallback",
    }
}

/// Reads `log` and builds compile `compile_id`'s kernel stage (on a worker: it re-reads the log,
/// which the app keeps only as graphs).
pub fn build(log: &Path, compile_id: &str) -> Result<KernelStage, String> {
    let log = trace::load_log(log).map_err(|e| e.to_string())?;
    let rec = log
        .compiles
        .iter()
        .find(|c| c.id.to_string() == compile_id)
        .ok_or_else(|| format!("{}: no compile `{compile_id}`", log.file))?;
    let post_grad = rec
        .graph(Stage::InductorPostGrad)
        .ok_or_else(|| format!("{}: compile {compile_id} has no inductor_post_grad_graph to group by kernel", log.file))?;
    if rec.output_code.is_empty() {
        return Err(format!("{}: compile {compile_id} logged no inductor_output_code: no kernels to show", log.file));
    }
    let mut kernels = Vec::new();
    let mut notes = Vec::new();
    for table in trace::kernels(rec, &log.file_access()) {
        notes.extend(table.notes);
        kernels.extend(table.kernels);
    }
    let (graph, kernel_of) = grouped(post_grad, &kernels);
    let unnamed: Vec<&str> = kernels.iter().filter(|k| k.post_grad_nodes.is_empty()).map(|k| k.name.as_str()).collect();
    if !unnamed.is_empty() {
        notes.push(format!("{} kernel(s) name no post-grad node: {}", unnamed.len(), unnamed.join(", ")));
    }
    Ok(KernelStage { compile_id: compile_id.to_string(), kernels, graph, kernel_of, notes })
}

/// A copy of `post_grad` whose nodes sit in one frame each: the kernel computing them. Nodes no
/// kernel computes (inputs' size reads, views Inductor folded into an index expression) keep no
/// frame and are drawn loose.
pub fn grouped(post_grad: &Graph, kernels: &[Kernel]) -> (Graph, HashMap<String, usize>) {
    let mut kernel_of: HashMap<String, usize> = HashMap::new();
    for (i, k) in kernels.iter().enumerate() {
        for n in &k.post_grad_nodes {
            kernel_of.entry(n.clone()).or_insert(i);
        }
    }
    let mut g = post_grad.clone();
    for n in &mut g.nodes {
        n.meta.nn_module_stack = match kernel_of.get(&n.name) {
            Some(&i) => {
                let k = &kernels[i];
                vec![ModuleFrame { key: k.name.clone(), path: group_path(k), class: kind_name(k.kind).to_string() }]
            }
            None => Vec::new(),
        };
    }
    (g, kernel_of)
}

/// A kernel's colour: hues spread by the golden angle so neighbours differ; library calls and
/// fallbacks darker and less saturated than generated kernels.
pub fn kernel_color(index: usize, kind: KernelKind, dark: bool) -> Color32 {
    let hue = (index as f32 * 0.618_034).fract();
    let generated = matches!(kind, KernelKind::Triton | KernelKind::Cpp | KernelKind::Generated);
    let (s, v) = match (generated, dark) {
        (true, true) => (0.55, 0.62),
        (true, false) => (0.40, 0.95),
        (false, true) => (0.30, 0.42),
        (false, false) => (0.22, 0.80),
    };
    let c = egui::ecolor::Hsva::new(hue, s, v, 1.0);
    Color32::from(c)
}

/// What the app knows about the kernels stage of the shown compile.
#[derive(Default)]
pub struct KernelsState {
    pub stage: Option<std::sync::Arc<KernelStage>>,
    /// The picked kernel (index into `stage.kernels`): its source shows, its nodes light up.
    pub selected: Option<usize>,
    /// What the worker is doing, while it builds the stage.
    pub busy: Option<String>,
    pub error: Option<String>,
    /// Bumped per request, so a late result for another compile is dropped.
    pub generation: u64,
}

impl KernelsState {
    pub fn selected_kernel(&self) -> Option<&Kernel> {
        self.stage.as_ref()?.kernels.get(self.selected?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::trace::KernelSource;
    use crate::ir::{Graph, Node};

    fn kernel(name: &str, kind: KernelKind, post: &[&str]) -> Kernel {
        Kernel {
            name: name.into(),
            callee: name.into(),
            kind,
            source: KernelSource::Library,
            nodes: Vec::new(),
            post_grad_nodes: post.iter().map(|s| s.to_string()).collect(),
            call_sites: 1,
            stack_traces: Vec::new(),
            compile_time_us: None,
            num_configs: None,
        }
    }

    #[test]
    fn nodes_sit_in_the_frame_of_their_kernel_and_the_rest_stay_loose() {
        let mut g = Graph::default();
        for name in ["mm", "add", "relu", "sym_size_int"] {
            g.nodes.push(Node {
                name: name.into(),
                target: format!("aten.{name}.default"),
                args: Vec::new(),
                outputs: Vec::new(),
                meta: Default::default(),
            });
        }
        let ks = [kernel("extern_kernels.mm:1", KernelKind::Extern, &["mm"]), kernel("cpp_fused_add_relu_0", KernelKind::Cpp, &["add", "relu"])];
        let (out, kernel_of) = grouped(&g, &ks);
        let frames: Vec<Vec<String>> = out.nodes.iter().map(|n| n.meta.nn_module_stack.iter().map(|f| f.path.clone()).collect()).collect();
        assert_eq!(frames, [vec!["extern_kernels.mm:1"], vec!["cpp_fused_add_relu_0"], vec!["cpp_fused_add_relu_0"], vec![]]);
        assert_eq!(out.nodes[1].meta.nn_module_stack[0].class, "C++ kernel");
        assert_eq!(kernel_of.get("relu"), Some(&1));
        assert_eq!(kernel_of.get("sym_size_int"), None);
        let h = crate::ui::hierarchy::Hierarchy::of(&out);
        assert!(!h.by_source, "grouped by the kernel frames");
        assert_eq!(h.groups.len(), 2);
    }

    #[test]
    fn neighbouring_kernels_get_different_colours() {
        let a = kernel_color(0, KernelKind::Triton, true);
        let b = kernel_color(1, KernelKind::Triton, true);
        assert_ne!(a, b);
        assert_ne!(kernel_color(0, KernelKind::Fallback, true), a, "a fallback is told apart from a generated kernel");
    }
}
