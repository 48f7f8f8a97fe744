//! The reference CPU interpreter: runs an [`ir::Graph`](crate::ir::Graph) on concrete tensors.
//! It is the numerics oracle every decomposition and generated kernel is compared against, so it
//! prefers exactness over speed (`f64` accumulation, materialised views) and refuses anything it
//! cannot compute exactly as PyTorch defines it, naming the node, rather than guessing.
//!
//! Besides computing, every node's outputs are checked against the graph's own metadata: dtype,
//! and sizes evaluated under the bindings inferred from the user inputs. A mismatch is an error,
//! so a wrong shape or type promotion cannot slip through silently.

pub mod complex;
pub mod coverage;
mod half;
pub mod ops;
mod random;
pub mod tensor;
pub mod value;

use crate::ir::{Arg, Graph, InputKind, Model, Node, TensorMeta, ValueId, ValueKind, WeightData};
use crate::sym::{Bindings, Expr, SymError};

pub use crate::ops::rng::{Generator, NodeStream};

pub use ops::OpError;
pub use random::random_inputs;
pub use tensor::{Data, Element, Tensor};
pub use value::{RtValue, Values};

/// Why a run failed; every variant names where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExecError {
    #[error("node `{node}`: the reference interpreter has no implementation of `{target}`")]
    UnsupportedOp { node: String, target: String },
    #[error("the reference interpreter has no implementation of {} ops the graph needs: {}", .0.len(), coverage::describe(.0))]
    UnsupportedOps(Vec<coverage::MissingOp>),
    #[error("node `{node}` ({target}): dtype {dtype} is not supported here (the interpreter computes in {})", tensor::SUPPORTED)]
    UnsupportedDType { node: String, target: String, dtype: String },
    #[error("node `{node}` ({target}): argument `{arg}`: {message}")]
    BadArg { node: String, target: String, arg: String, message: String },
    #[error("node `{node}` ({target}): shape error: {message}")]
    Shape { node: String, target: String, message: String },
    #[error("node `{node}` ({target}): {message}")]
    Unsupported { node: String, target: String, message: String },
    #[error("node `{node}` ({target}): produced {got} outputs, the graph declares {expected}")]
    OutputCount { node: String, target: String, expected: usize, got: usize },
    #[error("value `{value}` (from {origin}): expected {expected} by the graph's metadata, computed {actual}")]
    MetaMismatch { value: String, origin: String, expected: String, actual: String },
    #[error("the graph takes {expected} user inputs ({names}), got {got}")]
    InputCount { expected: usize, got: usize, names: String },
    #[error("input `{input}`: {message}")]
    Input { input: String, message: String },
    #[error("input `{input}` dim {dim}: expected {expected}, got {actual}")]
    InputDim { input: String, dim: usize, expected: String, actual: i64 },
    #[error("weight `{fqn}` (input `{input}`): {message}")]
    Weight { input: String, fqn: String, message: String },
    #[error("the inputs bind {symbol} = {value}, outside its range {range}")]
    OutOfRange { symbol: String, value: i64, range: String },
    #[error("{what}: {source}")]
    Symbolic { what: String, source: SymError },
    #[error("graph output {index}: {message}")]
    Output { index: usize, message: String },
    #[error("functionalizing the graph to run it: {0}")]
    Functionalize(#[from] crate::decomp::DecompError),
}

/// Runs `graph` on the user inputs (in graph order) and returns its outputs. Parameters, buffers
/// and constants come from `model.weights`. Symbolic outputs come back as 0-dim tensors
/// ([`scalar_tensor`]).
pub fn run(model: &Model, graph: &Graph, inputs: &[Tensor]) -> Result<Vec<Tensor>, ExecError> {
    run_seeded(model, graph, inputs, &Generator::default())
}

/// [`run`], random ops drawing from `gen` (`--seed`; [`run`] draws from seed 0).
pub fn run_seeded(model: &Model, graph: &Graph, inputs: &[Tensor], gen: &Generator) -> Result<Vec<Tensor>, ExecError> {
    let bindings = infer_bindings(model, graph, inputs)?;
    let values = run_with_generator(model, graph, inputs, &bindings, gen)?;
    outputs(graph, &values)
}

/// Like [`run`], returning every value computed, indexed by [`ValueId`] (for per-node comparison).
pub fn run_all(model: &Model, graph: &Graph, inputs: &[Tensor]) -> Result<Values, ExecError> {
    let bindings = infer_bindings(model, graph, inputs)?;
    run_with(model, graph, inputs, &bindings)
}

/// The graph's user inputs, in order.
pub fn user_inputs(graph: &Graph) -> Vec<ValueId> {
    graph.inputs.iter().filter(|(_, k)| *k == InputKind::UserInput).map(|(v, _)| *v).collect()
}

fn check_input_count(graph: &Graph, inputs: &[Tensor]) -> Result<Vec<ValueId>, ExecError> {
    let users = user_inputs(graph);
    if users.len() != inputs.len() {
        let names = users.iter().map(|v| graph.value(*v).name.as_str()).collect::<Vec<_>>().join(", ");
        return Err(ExecError::InputCount { expected: users.len(), got: inputs.len(), names });
    }
    Ok(users)
}

/// Binds each symbol that is a whole dim of a user input to the real size, then checks that
/// every user input dim (whatever its expression) evaluates to the real size, and every bound
/// symbol lies in its declared range.
pub fn infer_bindings(model: &Model, graph: &Graph, inputs: &[Tensor]) -> Result<Bindings, ExecError> {
    let users = check_input_count(graph, inputs)?;
    let mut b = Bindings::new();
    let mut metas = Vec::with_capacity(users.len());
    for (v, t) in users.iter().zip(inputs) {
        let value = graph.value(*v);
        let input = value.name.clone();
        let dims: Vec<Expr> = match &value.kind {
            ValueKind::Tensor(meta) => {
                if meta.dtype != t.dtype() {
                    return Err(ExecError::Input {
                        input,
                        message: format!("expected dtype {}, got {}", meta.dtype, t.dtype()),
                    });
                }
                if meta.sizes.len() != t.ndim() {
                    return Err(ExecError::Input {
                        input,
                        message: format!("expected {} dims ({}), got shape {:?}", meta.sizes.len(), join(&meta.sizes), t.shape()),
                    });
                }
                meta.sizes.clone()
            }
            // A symbolic-int input arrives as a 0-dim integer tensor holding its value.
            ValueKind::SymInt(e) => {
                if t.ndim() != 0 || t.dtype().is_floating() {
                    return Err(ExecError::Input { input, message: "expected a 0-dim integer tensor for a symbolic int".into() });
                }
                vec![e.clone()]
            }
            other => return Err(ExecError::Input { input, message: format!("inputs of kind {other:?} are not supported") }),
        };
        let actual: Vec<i64> = match &value.kind {
            ValueKind::SymInt(_) => t.to_i64_vec(),
            _ => t.shape().iter().map(|&d| d as i64).collect(),
        };
        for (dim, (e, &a)) in dims.iter().zip(&actual).enumerate() {
            if let Expr::Symbol(name) = e {
                match b.get(name) {
                    Some(prev) if prev != a => {
                        return Err(ExecError::InputDim {
                            input: input.clone(),
                            dim,
                            expected: format!("{name} = {prev} (bound by an earlier input)"),
                            actual: a,
                        })
                    }
                    _ => b.set(name, a),
                }
            }
        }
        metas.push((input, dims, actual));
    }
    for (input, dims, actual) in &metas {
        for (dim, (e, &a)) in dims.iter().zip(actual).enumerate() {
            let want = e.eval_int(&b).map_err(|source| ExecError::Symbolic {
                what: format!("input `{input}` dim {dim} (`{e}`) is not determined by the inputs' plain symbolic dims"),
                source,
            })?;
            if want != a {
                return Err(ExecError::InputDim { input: input.clone(), dim, expected: format!("{e} = {want}"), actual: a });
            }
        }
    }
    for s in &model.symbols {
        if let Some(v) = b.get(&s.name) {
            if !s.range.contains(v) {
                return Err(ExecError::OutOfRange { symbol: s.name.clone(), value: v, range: s.range.to_string() });
            }
        }
    }
    Ok(b)
}

fn join(v: &[Expr]) -> String {
    v.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ")
}

/// Runs with explicit bindings (already checked against the inputs).
///
/// A graph that writes tensors in place (`relu_`, `fill_` through a view) runs functionalized,
/// as Inductor runs it; the values come back under the graph's own ids, a graph output holding
/// its final value.
pub fn run_with(model: &Model, graph: &Graph, inputs: &[Tensor], bindings: &Bindings) -> Result<Values, ExecError> {
    run_with_generator(model, graph, inputs, bindings, &Generator::default())
}

/// [`run_with`], random ops drawing from `gen`: each drawing node of the graph that runs (the
/// functionalized one, when the graph writes in place) gets its stream as `crate::ops::rng`
/// numbers them, as a plan lowered from the same graph numbers its kernels' draws.
pub fn run_with_generator(model: &Model, graph: &Graph, inputs: &[Tensor], bindings: &Bindings, gen: &Generator) -> Result<Values, ExecError> {
    if !crate::decomp::functionalize::changes(graph) {
        return run_functional(model, graph, inputs, bindings, gen);
    }
    let f = crate::decomp::functionalize(graph)?;
    let ran = run_functional(model, &f.graph, inputs, bindings, gen)?;
    let mut values = Values::new(graph);
    for (v, value) in graph.values.iter().enumerate() {
        if let Some(x) = f.graph.value_id(&value.name).and_then(|id| ran.get(id)) {
            values.set(ValueId(v as u32), x.clone());
        }
    }
    for (mine, theirs) in graph.outputs.iter().zip(&f.graph.outputs) {
        for (m, t) in mine.values().into_iter().zip(theirs.values()) {
            if let Some(x) = ran.get(t) {
                values.set(m, x.clone());
            }
        }
    }
    Ok(values)
}

fn run_functional(model: &Model, graph: &Graph, inputs: &[Tensor], bindings: &Bindings, gen: &Generator) -> Result<Values, ExecError> {
    let users = check_input_count(graph, inputs)?;
    // Every missing op at once, before computing anything.
    let mut missing = coverage::missing_in_interpreter(graph);
    match missing.len() {
        0 => {}
        1 if missing[0].nodes.len() == 1 => {
            let m = missing.remove(0);
            return Err(ExecError::UnsupportedOp { node: m.nodes[0].clone(), target: m.target });
        }
        _ => return Err(ExecError::UnsupportedOps(missing)),
    }
    let mut values = Values::new(graph);
    for (v, t) in users.iter().zip(inputs) {
        let rt = match graph.value(*v).kind {
            ValueKind::SymInt(_) => RtValue::Int(t.to_i64_vec().first().copied().unwrap_or(0)),
            _ => RtValue::Tensor(t.clone()),
        };
        values.set(*v, rt);
    }
    for (v, kind) in &graph.inputs {
        if *kind == InputKind::UserInput {
            continue;
        }
        let t = load_weight(model, graph, *v, kind)?;
        check_meta(graph, *v, &RtValue::Tensor(t.clone()), bindings, "weights")?;
        values.set(*v, RtValue::Tensor(t));
    }
    let streams = crate::ops::rng::streams(graph);
    for (node, stream) in graph.nodes.iter().zip(streams) {
        let rng = gen.stream(stream);
        let results = run_node(graph, node, &values, bindings, rng)?;
        for (v, r) in node.outputs.iter().zip(results) {
            check_meta(graph, *v, &r, bindings, &format!("node `{}` ({})", node.name, node.target))?;
            values.set(*v, r);
        }
    }
    Ok(values)
}

/// Runs one node on computed values (the interpreter's implementation from the op registry),
/// checking it returns as many values as the node declares; a random op draws from `rng`.
pub fn run_node(graph: &Graph, node: &Node, values: &Values, bindings: &Bindings, rng: NodeStream) -> Result<Vec<RtValue>, ExecError> {
    let (n, t) = (node.name.clone(), node.target.clone());
    // A node reading a complex value runs the op's complex implementation where it has one.
    let complex = node.inputs().any(|v| matches!(values.get(v), Some(RtValue::Complex(_))));
    let op = complex
        .then(|| crate::ops::complex_fn(&node.target))
        .flatten()
        .or_else(|| crate::ops::run_fn(&node.target))
        .ok_or_else(|| ExecError::UnsupportedOp { node: n.clone(), target: t.clone() })?;
    let cx = ops::OpCx { node, values, bindings, rng, graph: Some(graph) };
    let results = op(&cx).map_err(|e| match e {
        OpError::DType(d) => ExecError::UnsupportedDType { node: n.clone(), target: t.clone(), dtype: d.name().into() },
        OpError::Arg { arg, message } => ExecError::BadArg { node: n.clone(), target: t.clone(), arg, message },
        OpError::Shape(message) => ExecError::Shape { node: n.clone(), target: t.clone(), message },
        OpError::Unsupported(message) => ExecError::Unsupported { node: n.clone(), target: t.clone(), message },
    })?;
    if results.len() != node.outputs.len() {
        return Err(ExecError::OutputCount { node: n, target: t, expected: node.outputs.len(), got: results.len() });
    }
    Ok(results)
}

fn load_weight(model: &Model, graph: &Graph, v: ValueId, kind: &InputKind) -> Result<Tensor, ExecError> {
    let input = graph.value(v).name.clone();
    let fqn = kind.fqn().ok_or_else(|| ExecError::Input {
        input: input.clone(),
        message: format!("graph inputs of kind {} are not supported", kind.name()),
    })?;
    let werr = |message: String| ExecError::Weight { input: input.clone(), fqn: fqn.to_string(), message };
    let w = model.weights.get(fqn).ok_or_else(|| werr("not in the model's weights".into()))?;
    let bytes = match &w.data {
        WeightData::Bytes(b) => b,
        WeightData::Unavailable(why) => return Err(werr(format!("unavailable: {why}"))),
    };
    let ints = |es: &[Expr]| -> Option<Vec<usize>> {
        es.iter().map(|e| e.as_int().and_then(|i| usize::try_from(i).ok())).collect()
    };
    let (Some(sizes), Some(strides), Some(offset)) =
        (ints(&w.meta.sizes), ints(&w.meta.strides), w.meta.storage_offset.as_int().and_then(|o| usize::try_from(o).ok()))
    else {
        return Err(werr("sizes, strides and offset must be non-negative integers".into()));
    };
    Tensor::from_le_strided(w.meta.dtype, &sizes, &strides, offset, bytes).map_err(werr)
}

/// Checks a computed value against the graph's metadata for it. Sizes whose expressions involve
/// symbols no input binds (data-dependent sizes) are not checked.
fn check_meta(graph: &Graph, v: ValueId, r: &RtValue, b: &Bindings, origin: &str) -> Result<(), ExecError> {
    let value = graph.value(v);
    let mismatch = |expected: String, actual: String| ExecError::MetaMismatch {
        value: value.name.clone(),
        origin: origin.to_string(),
        expected,
        actual,
    };
    let eval = |e: &Expr| -> Result<Option<i64>, ExecError> {
        match e.eval_int(b) {
            Ok(i) => Ok(Some(i)),
            Err(SymError::Unbound(_)) => Ok(None),
            Err(source) => Err(ExecError::Symbolic { what: format!("value `{}`: size `{e}`", value.name), source }),
        }
    };
    match (&value.kind, r) {
        (ValueKind::Tensor(meta), RtValue::Tensor(t)) => check_tensor(meta, t, &eval, &mismatch),
        (ValueKind::Tensor(meta), RtValue::Complex(c)) => {
            let sizes: Vec<Option<i64>> = meta.sizes.iter().map(&eval).collect::<Result<_, _>>()?;
            let fits = meta.dtype == c.dtype && sizes.len() == c.shape.len() && sizes.iter().zip(&c.shape).all(|(w, &d)| w.is_none_or(|w| w == d as i64));
            if fits {
                Ok(())
            } else {
                Err(mismatch(format!("{} [{}]", meta.dtype, join(&meta.sizes)), format!("{} {:?}", c.dtype, c.shape)))
            }
        }
        (ValueKind::SymInt(e), RtValue::Int(i)) => match eval(e)? {
            Some(want) if want != *i => Err(mismatch(format!("{e} = {want}"), i.to_string())),
            _ => Ok(()),
        },
        (ValueKind::Tensor(_), other) => Err(mismatch("a tensor".into(), format!("a {}", other.kind()))),
        (ValueKind::SymInt(_), other) => Err(mismatch("an int".into(), format!("a {}", other.kind()))),
        _ => Ok(()),
    }
}

fn check_tensor(
    meta: &TensorMeta,
    t: &Tensor,
    eval: &dyn Fn(&Expr) -> Result<Option<i64>, ExecError>,
    mismatch: &dyn Fn(String, String) -> ExecError,
) -> Result<(), ExecError> {
    let shape = || format!("{} {:?}", t.dtype(), t.shape());
    let want = || format!("{} [{}]", meta.dtype, join(&meta.sizes));
    if meta.dtype != t.dtype() || meta.sizes.len() != t.ndim() {
        return Err(mismatch(want(), shape()));
    }
    for (e, &d) in meta.sizes.iter().zip(t.shape()) {
        if let Some(w) = eval(e)? {
            if w != d as i64 {
                return Err(mismatch(want(), shape()));
            }
        }
    }
    Ok(())
}

/// A symbolic scalar as a 0-dim tensor, as `torch.tensor(x)` makes one of a Python number: an
/// int as int64, a float as float32 (torch's default dtype), a bool as bool. A complex tensor
/// has no such form: it is an error naming why.
pub fn scalar_tensor(v: &RtValue) -> Result<Tensor, String> {
    match v {
        RtValue::Tensor(t) => Ok(t.clone()),
        RtValue::Complex(c) => Err(format!(
            "is a {} tensor: complex values can only stay inside the graph (read back as real by view_as_real, abs, _fft_c2r)",
            c.dtype
        )),
        RtValue::Int(i) => Ok(Tensor::scalar(*i)),
        RtValue::Float(f) => Ok(Tensor::scalar(*f as f32)),
        RtValue::Bool(x) => Ok(Tensor::scalar(*x)),
    }
}

/// The graph's outputs from a finished run; symbolic scalars as [`scalar_tensor`] makes them.
pub fn outputs(graph: &Graph, values: &Values) -> Result<Vec<Tensor>, ExecError> {
    graph
        .outputs
        .iter()
        .enumerate()
        .map(|(index, a)| {
            let missing = || ExecError::Output { index, message: "was not computed".into() };
            match a {
                Arg::Tensor(v) | Arg::SymInt(crate::ir::SymIntArg::Value(v)) | Arg::SymFloat(v) | Arg::SymBool(v) => {
                    scalar_tensor(values.get(*v).ok_or_else(missing)?).map_err(|message| ExecError::Output { index, message })
                }
                Arg::Int(i) | Arg::SymInt(crate::ir::SymIntArg::Int(i)) => Ok(Tensor::scalar(*i)),
                Arg::Float(f) => Ok(Tensor::scalar(*f as f32)),
                Arg::Bool(x) => Ok(Tensor::scalar(*x)),
                other => Err(ExecError::Output { index, message: format!("outputs of the form {other:?} are not supported") }),
            }
        })
        .collect()
}
