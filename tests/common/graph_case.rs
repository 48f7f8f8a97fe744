//! A small graph written by hand for a kernel test: inputs with the tensors fed to them, nodes
//! with their output metadata, then the model, its plan and the plan's SPIR-V (validated).

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::exec::Tensor;
use xpu_workbench::ir::{Arg, DType, Format, Graph, InputKind, Model, NamedArg, NodeMeta, TensorMeta, ValueId, ValueKind};
use xpu_workbench::lower::{self, Plan};
use xpu_workbench::runtime::plan::compile_plan;
use xpu_workbench::codegen::spirv::SpirvModule;
use xpu_workbench::sym::Expr;

/// A contiguous tensor of static `shape`.
pub fn kind(dtype: DType, shape: &[usize]) -> ValueKind {
    sym_kind(dtype, shape.iter().map(|&s| Expr::int(s as i64)).collect())
}

/// A contiguous tensor of symbolic `sizes`.
pub fn sym_kind(dtype: DType, sizes: Vec<Expr>) -> ValueKind {
    ValueKind::Tensor(TensorMeta::contiguous(dtype, sizes))
}

/// A graph under construction and the tensors fed to its inputs.
pub struct GraphCase {
    pub g: Graph,
    pub inputs: Vec<Tensor>,
}

impl GraphCase {
    pub fn new(name: &str) -> GraphCase {
        GraphCase { g: Graph::new(name), inputs: Vec::new() }
    }

    /// An input of `t`'s static shape, fed `t`.
    pub fn input(&mut self, t: Tensor) -> ValueId {
        let k = kind(t.dtype(), t.shape());
        self.input_of(t, k)
    }

    /// An input whose sizes are `sizes` (symbols bound from the tensor fed to it at run time).
    pub fn sym_input(&mut self, t: Tensor, sizes: Vec<Expr>) -> ValueId {
        let k = sym_kind(t.dtype(), sizes);
        self.input_of(t, k)
    }

    fn input_of(&mut self, t: Tensor, k: ValueKind) -> ValueId {
        let name = format!("in{}", self.inputs.len());
        let v = self.g.add_input(&name, k, InputKind::UserInput).expect("input");
        self.inputs.push(t);
        v
    }

    /// A node with one output per `outs` entry (dtype, static shape).
    pub fn node(&mut self, target: &str, args: Vec<(&str, Arg)>, outs: &[(DType, &[usize])]) -> Vec<ValueId> {
        self.node_of(target, args, outs.iter().map(|(d, s)| kind(*d, s)).collect())
    }

    /// A node with one output of symbolic `sizes`.
    pub fn sym_node(&mut self, target: &str, args: Vec<(&str, Arg)>, dtype: DType, sizes: Vec<Expr>) -> ValueId {
        self.node_of(target, args, vec![sym_kind(dtype, sizes)])[0]
    }

    fn node_of(&mut self, target: &str, args: Vec<(&str, Arg)>, outs: Vec<ValueKind>) -> Vec<ValueId> {
        let name = format!("n{}", self.g.nodes.len());
        let args = args.into_iter().map(|(n, a)| NamedArg { name: n.into(), arg: a, kwarg: false }).collect();
        let outs = outs.into_iter().enumerate().map(|(i, k)| (format!("{name}_{i}"), k)).collect();
        let id = self.g.add_node(&name, target, args, outs, NodeMeta::default()).expect("node");
        self.g.node(id).outputs.clone()
    }

    /// The model whose graph returns `outs`, and the tensors to feed it.
    pub fn model(mut self, outs: &[ValueId]) -> (Model, Vec<Tensor>) {
        self.g.outputs = outs.iter().map(|v| Arg::Tensor(*v)).collect();
        let mut model = Model::new(Format::Pt2, self.g.name.clone());
        model.graphs.push(self.g);
        (model, self.inputs)
    }
}

/// The model's plan in `mode` and its compiled kernels, every module checked by spirv-val.
pub fn lowered(model: &Model, mode: Mode) -> (Plan, Vec<Option<SpirvModule>>) {
    let plan = lower::lower(model, &model.graphs[0], mode, &Marks::default()).expect("lowers");
    let modules = compile_plan(&plan).expect("compiles");
    for m in modules.iter().flatten() {
        if let Some(Err(e)) = super::spirv_val(m) {
            panic!("spirv-val rejects `{}`: {e}", m.name);
        }
    }
    (plan, modules)
}
