use std::collections::BTreeMap;

/// One frame of `nn_module_stack`: the module path (`layers.0.attn`) and its class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleFrame {
    pub key: String,
    pub path: String,
    pub class: String,
}

/// One step of a node's history: the node (and its op) it was created from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub name: String,
    /// The op target without `torch.ops.` (`aten.layer_norm.default`).
    pub target: String,
}

/// What a node carries besides its computation: where it came from in the user's code.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeMeta {
    pub stack_trace: Option<String>,
    /// Outermost module first.
    pub nn_module_stack: Vec<ModuleFrame>,
    /// `fx_traceback.annotate(...)` entries, e.g. `compile_with_inductor`, as JSON text values.
    pub custom: BTreeMap<String, serde_json::Value>,
    pub torch_fn: Option<String>,
    /// The nodes this one was created from, most recent pass first and the original node last,
    /// when the file records `from_node` (decomposed archives do).
    pub from_node: Vec<Origin>,
}

impl NodeMeta {
    /// The innermost module path (`fc1`, `layers.0.attn`), empty at the top level.
    pub fn module_path(&self) -> &str {
        self.nn_module_stack.last().map(|f| f.path.as_str()).unwrap_or("")
    }

    /// Whether the user marked this node for Inductor with `fx_traceback.annotate`.
    pub fn compile_with_inductor(&self) -> bool {
        self.custom.contains_key("compile_with_inductor")
    }
}
