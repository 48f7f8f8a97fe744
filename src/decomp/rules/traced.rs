//! The rule of every composite op the registry has no rule for: the graph torch traced it into
//! (`crate::ops::composite_traces`), substituted node for node.
//!
//! A trace holds for the dtypes and ranks of the tensors it was traced with and the values of
//! its other arguments; sizes are symbolic, so `sym_size` and size arithmetic are re-derived from
//! this node's tensors ([`Rw::size`], [`Rw::product`]), literals where the sizes are static.
//! When no trace matches the node's arguments the rule declines and the node stays whole, as with
//! any declining rule: never guessed.

use serde_json::Value;

use super::{Rw, Table, A};
use crate::decomp::RuleError;
use std::collections::HashMap;

use crate::ir::{Arg, DType, SymIntArg, TensorMeta, ValueId, ValueKind};
use crate::sym::parse_infix_with;
use crate::sym::Expr;
use crate::ops::composite_traces::{self, Guard, Kind, Variant};

/// What a traced value stands for in the output graph.
#[derive(Clone, Debug)]
enum Slot {
    Tensor(ValueId),
    Size(SymIntArg),
}

/// Whether a trace of `target` exists (for some arguments): composite bodies for every table,
/// and under [`Table::Core`] what torch.export's default table decomposes too.
pub(crate) fn has(table: Option<Table>, target: &str) -> bool {
    composite_traces::has(target, kind(table))
}

fn kind(table: Option<Table>) -> Kind {
    match table {
        Some(Table::Core) => Kind::Core,
        Some(Table::Inductor) => Kind::Inductor,
        _ => Kind::Composite,
    }
}

/// Whether `target` is known only by its trace: no interpreter implementation, kernel or rule in
/// the registry. Functionalization expands such a node in every mode, so the interpreter and the
/// lowering never meet it (torch's own tracing never keeps a composite op without a kernel).
pub(crate) fn only_traced(target: &str) -> bool {
    let known = crate::ops::get(target).is_some_and(|d| d.run.is_some() || d.lower.is_some() || d.has_rule());
    !known && has(None, target)
}

/// Rewrites the node through the trace that matches its arguments.
pub(crate) fn expand(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let target = rw.target().to_string();
    let variants = composite_traces::variants_in_order(&target, rw.torch_version(), kind(rw.table()));
    // A trace of these very dtypes first; else one whose dtypes rename to these (see `renaming`).
    let exact = variants.iter().find(|v| matches(rw, v, false)).map(|v| (v, DtypeMap::new()));
    let (v, dtypes) = exact
        .or_else(|| variants.iter().filter(|v| matches(rw, v, true)).find_map(|v| Some((v, renaming(rw, v)?))))
        .ok_or(RuleError::Declined)?;
    // A trace that calls the op itself (`sym_size` traces to `sym_size`) expands nothing.
    if v.nodes.iter().any(|n| n.target == target) {
        return Err(RuleError::Declined);
    }
    // An op the interpreter runs whole is expanded only into ops that run too (`linalg_svd`
    // traces to `_linalg_svd`, which nothing here implements): else the expansion would lose
    // what already works.
    let runs = |t: &str| {
        t.starts_with("_operator.")
            || crate::ops::get(t).is_some_and(|d| d.run.is_some() || d.has_rule())
            || composite_traces::has(t, Kind::Core)
    };
    if crate::ops::get(&target).is_some_and(|d| d.run.is_some()) && !v.nodes.iter().all(|n| runs(&n.target)) {
        return Err(RuleError::Declined);
    }
    // Decline before emitting anything where some node's outputs could not be described: no
    // meta function, no rule or trace to infer them through, and no metadata recorded.
    let describable = |n: &composite_traces::TracedNode| {
        n.meta.as_ref().is_some_and(|m| !m.is_empty() && m.iter().all(|x| !x.is_null()))
            || n.target.starts_with("_operator.")
            || crate::ops::get(&n.target).is_some_and(|d| d.meta.is_some() || d.has_rule())
            || composite_traces::has(&n.target, Kind::Core)
    };
    if !v.nodes.iter().all(describable) {
        return Err(RuleError::Declined);
    }
    let device = v.guard.iter().find_map(|(name, g)| match g {
        Guard::Tensor { .. } => rw.t(name).ok().and_then(|t| rw.meta(t).ok()).map(|m| m.device.clone()),
        _ => None,
    });
    let cx = Cx { device, dtypes };
    let mut slots: Vec<Vec<Slot>> = Vec::with_capacity(v.nodes.len());
    for n in &v.nodes {
        let arg = |i: usize| n.args.get(i).map(|(_, a)| a).unwrap_or(&Value::Null);
        let out = match n.target.as_str() {
            "aten.sym_size.int" => {
                let t = tensor(rw, &slots, arg(0))?;
                let d = arg(1).get("i").and_then(Value::as_i64).ok_or_else(|| bad("sym_size without a dim"))?;
                vec![Slot::Size(rw.size(t, super::dim(d, rw.rank(t)?, "dim")?)?)]
            }
            "_operator.mul" => {
                let (a, b) = (size(rw, &slots, arg(0))?, size(rw, &slots, arg(1))?);
                vec![Slot::Size(rw.product(vec![a, b])?)]
            }
            _ => {
                let mut args = Vec::with_capacity(n.args.len());
                for (name, a) in &n.args {
                    args.push((name.as_str(), A::Raw(to_arg(rw, v, &slots, a, &cx)?)));
                }
                let known = n.meta.as_ref().and_then(|m| recorded_kinds(rw, v, m, &cx));
                let outs = rw.op_n_with(&n.target, args, known)?;
                outs.into_iter()
                    .map(|o| match rw.kind(o) {
                        ValueKind::SymInt(_) => Slot::Size(SymIntArg::Value(o)),
                        _ => Slot::Tensor(o),
                    })
                    .collect()
            }
        };
        slots.push(out);
    }
    v.outputs.iter().map(|o| tensor(rw, &slots, o)).collect()
}

/// The outputs' metadata torch recorded for a traced node, its size symbols replaced by this
/// node's sizes (`None` where a symbol is not one of the inputs' sizes).
fn recorded_kinds(rw: &Rw, v: &Variant, meta: &[Value], cx: &Cx) -> Option<Vec<ValueKind>> {
    let mut symbols: HashMap<String, Expr> = HashMap::new();
    for (name, sizes) in &v.sizes {
        let t = rw.t(name).ok()?;
        let actual = &rw.meta(t).ok()?.sizes;
        for (s, e) in sizes.iter().zip(actual) {
            if s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !s.chars().all(|c| c.is_ascii_digit()) {
                symbols.insert(s.clone(), e.clone());
            }
        }
    }
    let parse = |text: &str| parse_infix_with(text, &mut |name: &str| symbols.get(name).cloned()).ok();
    meta.iter()
        .map(|m| {
            if let Some(s) = m.get("sym").and_then(Value::as_str) {
                return Some(ValueKind::SymInt(parse(s)?));
            }
            let dtype = cx.dtype(DType::from_name(m.get("dtype")?.as_str()?)?);
            let list = |k: &str| m.get(k)?.as_array()?.iter().map(|x| parse(x.as_str()?)).collect::<Option<Vec<Expr>>>();
            let (sizes, strides) = (list("sizes")?, list("strides")?);
            let mut t = TensorMeta::contiguous(dtype, sizes);
            t.strides = strides;
            if let Some(d) = &cx.device {
                t.device = d.clone();
            }
            Some(ValueKind::Tensor(t))
        })
        .collect()
}

/// What a trace's constants are translated with: the device of this node's tensors (samples
/// were on `cpu`) and the dtype renaming.
struct Cx {
    device: Option<String>,
    dtypes: DtypeMap,
}

impl Cx {
    fn dtype(&self, d: DType) -> DType {
        self.dtypes.get(&d).copied().unwrap_or(d)
    }
}

/// A float constant: JSON numbers, and `inf`, `-inf`, `nan` written as strings (JSON has none).
fn number(v: &Value) -> Option<f64> {
    v.as_f64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

fn bad(m: &str) -> RuleError {
    RuleError::Unsupported(format!("traced expansion: {m}"))
}

/// Recorded dtype → this node's dtype.
type DtypeMap = HashMap<DType, DType>;

/// How the dtypes `v` was traced with rename to this node's: one to one, floating to floating and
/// integer to integer (`type_as` traced float32 → float16 is the same graph as float64 →
/// bfloat16, with the dtype constant renamed). `None` when no such renaming exists.
fn renaming(rw: &Rw, v: &Variant) -> Option<DtypeMap> {
    let mut map = DtypeMap::new();
    for (name, g) in &v.guard {
        let Guard::Tensor { dtype, .. } = g else { continue };
        let from = DType::from_name(dtype)?;
        let to = rw.meta(rw.t(name).ok()?).ok()?.dtype;
        if from.is_floating() != to.is_floating() || from.is_complex() != to.is_complex() || from == DType::Bool || to == DType::Bool {
            return None;
        }
        if *map.entry(from).or_insert(to) != to {
            return None;
        }
    }
    let mut seen = std::collections::HashSet::new();
    map.values().all(|d| seen.insert(*d)).then_some(map)
}

/// Whether the node's arguments are the ones `v` was traced with (`any_dtype`: tensors of any
/// dtype, for [`renaming`] to decide).
fn matches(rw: &Rw, v: &Variant, any_dtype: bool) -> bool {
    v.guard.iter().all(|(name, g)| match g {
        Guard::Tensor { dtype, rank } => rw
            .t(name)
            .ok()
            .and_then(|t| rw.meta(t).ok())
            .is_some_and(|m| (any_dtype || m.dtype.name() == dtype) && m.sizes.len() == *rank),
        Guard::Value { value, default } => match rw.passthrough(name) {
            Ok(None) => *default,
            Ok(Some(a)) => same(&a, value),
            Err(_) => false,
        },
        Guard::Wired { wired, default, len, .. } => match rw.passthrough(name) {
            Ok(None) => *default,
            Ok(Some(a)) => match (wired.as_str(), &a) {
                ("i", Arg::Int(_) | Arg::SymInt(_)) | ("f", Arg::Float(_)) | ("dtype", Arg::ScalarType(_)) => true,
                // An int where a float was traced (`arange(0.5, 4)`: samples give both ends
                // one kind): the trace passes it through, so it holds; tried after exact kinds.
                ("f", Arg::Int(_)) => any_dtype,
                // A list read whole holds for any length; one read element by element for its own.
                ("list", Arg::Ints(xs)) => len.is_none_or(|l| l == xs.len()),
                ("list", Arg::SymInts(xs)) => len.is_none_or(|l| l == xs.len()),
                _ => false,
            },
            Err(_) => false,
        },
    })
}

/// The node's argument `name` as a trace reads it (`{"arg": NAME}`), or element `i` of it; the
/// variant's sample where the node leaves it out (the schema default, which the sample was).
fn wired_arg(rw: &Rw, v: &Variant, name: &str, i: Option<usize>, cx: &Cx) -> Result<Arg, RuleError> {
    let whole = match rw.passthrough(name)? {
        Some(a) => a,
        None => match v.guard.get(name) {
            Some(Guard::Wired { sample, .. }) => to_arg(rw, v, &[], sample, cx)?,
            _ => return Err(bad("a wired argument without a sample")),
        },
    };
    let Some(i) = i else { return Ok(whole) };
    match whole {
        Arg::Ints(xs) => xs.get(i).map(|x| Arg::Int(*x)),
        Arg::SymInts(xs) => xs.get(i).map(|x| match x {
            SymIntArg::Int(k) => Arg::Int(*k),
            s => Arg::SymInt(s.clone()),
        }),
        _ => None,
    }
    .ok_or_else(|| bad("an element past the end of a list argument"))
}

/// Whether a node's argument equals a recorded value.
fn same(a: &Arg, want: &Value) -> bool {
    let num = |w: &Value| w.get("i").and_then(Value::as_f64).or_else(|| w.get("f").and_then(number));
    match (a, want) {
        (Arg::None, Value::Null) => true,
        (Arg::Int(i) | Arg::SymInt(SymIntArg::Int(i)), w) => num(w) == Some(*i as f64),
        (Arg::Float(f), w) => num(w) == Some(*f),
        (Arg::Bool(b), w) => w.get("b").and_then(Value::as_bool) == Some(*b),
        (Arg::String(s), w) => w.get("s").and_then(Value::as_str) == Some(s),
        (Arg::ScalarType(d), w) => w.get("dtype").and_then(Value::as_str).and_then(DType::from_name) == Some(*d),
        (Arg::Layout(l), w) => w.get("layout").and_then(Value::as_str) == Some(l),
        (Arg::MemoryFormat(m), w) => w.get("mf").and_then(Value::as_str) == Some(m),
        (Arg::Device(d), w) => w.get("device").and_then(Value::as_str) == Some(d),
        (Arg::Ints(xs), Value::Array(ws)) => xs.len() == ws.len() && xs.iter().zip(ws).all(|(x, w)| num(w) == Some(*x as f64)),
        (Arg::SymInts(xs), Value::Array(ws)) => {
            xs.len() == ws.len() && xs.iter().zip(ws).all(|(x, w)| matches!(x, SymIntArg::Int(i) if num(w) == Some(*i as f64)))
        }
        (Arg::Floats(xs), Value::Array(ws)) => xs.len() == ws.len() && xs.iter().zip(ws).all(|(x, w)| num(w) == Some(*x)),
        (Arg::Bools(xs), Value::Array(ws)) => {
            xs.len() == ws.len() && xs.iter().zip(ws).all(|(x, w)| w.get("b").and_then(Value::as_bool) == Some(*x))
        }
        _ => false,
    }
}

/// A reference to a value: an argument of the op or an output of an earlier node.
fn slot(rw: &Rw, slots: &[Vec<Slot>], r: &Value) -> Result<Slot, RuleError> {
    if let Some(name) = r.get("in") {
        let name = name.as_str().ok_or_else(|| bad("an element of a tensor-list argument"))?;
        return Ok(Slot::Tensor(rw.t(name)?));
    }
    let node = r.get("node").and_then(Value::as_u64).ok_or_else(|| bad("not a reference"))? as usize;
    let out = r.get("out").and_then(Value::as_u64).unwrap_or(0) as usize;
    slots.get(node).and_then(|s| s.get(out)).cloned().ok_or_else(|| bad("a reference past its node"))
}

fn tensor(rw: &Rw, slots: &[Vec<Slot>], r: &Value) -> Result<ValueId, RuleError> {
    match slot(rw, slots, r)? {
        Slot::Tensor(v) | Slot::Size(SymIntArg::Value(v)) => Ok(v),
        Slot::Size(SymIntArg::Int(_)) => Err(bad("a static size where a value is returned")),
    }
}

fn size(rw: &Rw, slots: &[Vec<Slot>], r: &Value) -> Result<SymIntArg, RuleError> {
    if let Some(i) = r.get("i").and_then(Value::as_i64) {
        return Ok(SymIntArg::Int(i));
    }
    match slot(rw, slots, r)? {
        Slot::Size(s) => Ok(s),
        Slot::Tensor(_) => Err(bad("a tensor where a size is expected")),
    }
}

/// An argument of an emitted node. Device constants are the sample tensors' (`cpu`): they
/// become the device of this node's tensors.
fn to_arg(rw: &Rw, var: &Variant, slots: &[Vec<Slot>], a: &Value, cx: &Cx) -> Result<Arg, RuleError> {
    let device = cx.device.as_deref();
    let arg = match a {
        Value::Null => Arg::None,
        Value::Array(xs) => {
            let items = xs.iter().map(|x| to_arg(rw, var, slots, x, cx)).collect::<Result<Vec<_>, _>>()?;
            list(items)?
        }
        Value::Object(o) => {
            let (k, v) = o.iter().next().ok_or_else(|| bad("an empty value"))?;
            match k.as_str() {
                "arg" => match v {
                    Value::String(n) => wired_arg(rw, var, n, None, cx)?,
                    Value::Array(p) => {
                        let n = p.first().and_then(Value::as_str).ok_or_else(|| bad("an argument reference"))?;
                        let i = p.get(1).and_then(Value::as_u64).ok_or_else(|| bad("an argument reference"))?;
                        wired_arg(rw, var, n, Some(i as usize), cx)?
                    }
                    _ => return Err(bad("an argument reference")),
                },
                "in" | "node" => match slot(rw, slots, a)? {
                    Slot::Tensor(t) => Arg::Tensor(t),
                    Slot::Size(SymIntArg::Int(i)) => Arg::Int(i),
                    Slot::Size(s) => Arg::SymInt(s),
                },
                "i" => Arg::Int(v.as_i64().ok_or_else(|| bad("an int"))?),
                "f" => Arg::Float(number(v).ok_or_else(|| bad("a float"))?),
                "b" => Arg::Bool(v.as_bool().ok_or_else(|| bad("a bool"))?),
                "s" => Arg::String(v.as_str().unwrap_or_default().to_string()),
                "dtype" => Arg::ScalarType(cx.dtype(v.as_str().and_then(DType::from_name).ok_or_else(|| bad("a dtype this build lacks"))?)),
                "layout" => Arg::Layout(v.as_str().unwrap_or_default().to_string()),
                "mf" => Arg::MemoryFormat(v.as_str().unwrap_or_default().to_string()),
                "device" => Arg::Device(device.or(v.as_str()).unwrap_or_default().to_string()),
                other => return Err(bad(&format!("a value of kind `{other}`"))),
            }
        }
        _ => return Err(bad("a bare JSON value")),
    };
    Ok(arg)
}

/// A list argument, typed by its elements as torch.export's schema types them.
fn list(items: Vec<Arg>) -> Result<Arg, RuleError> {
    if items.iter().all(|x| matches!(x, Arg::Int(_))) {
        return Ok(Arg::Ints(items.iter().map(|x| if let Arg::Int(i) = x { *i } else { 0 }).collect()));
    }
    if items.iter().all(|x| matches!(x, Arg::Int(_) | Arg::SymInt(_))) {
        let s = items.into_iter().map(|x| match x {
            Arg::Int(i) => SymIntArg::Int(i),
            Arg::SymInt(s) => s,
            _ => SymIntArg::Int(0),
        });
        return Ok(Arg::SymInts(s.collect()));
    }
    if items.iter().all(|x| matches!(x, Arg::Tensor(_))) {
        return Ok(Arg::Tensors(items.iter().flat_map(Arg::values).collect()));
    }
    if items.iter().all(|x| matches!(x, Arg::Tensor(_) | Arg::None)) {
        return Ok(Arg::OptionalTensors(items.iter().map(|x| x.values().first().copied()).collect()));
    }
    if items.iter().all(|x| matches!(x, Arg::Float(_) | Arg::Int(_))) {
        let f = items.iter().map(|x| match x {
            Arg::Float(f) => *f,
            Arg::Int(i) => *i as f64,
            _ => 0.0,
        });
        return Ok(Arg::Floats(f.collect()));
    }
    if items.iter().all(|x| matches!(x, Arg::Bool(_))) {
        return Ok(Arg::Bools(items.iter().map(|x| matches!(x, Arg::Bool(true))).collect()));
    }
    Err(bad("a list of mixed values"))
}
