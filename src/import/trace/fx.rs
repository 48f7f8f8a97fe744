//! Readable FX graph dumps (`GraphModule.print_readable()`, as dynamo, AOT autograd and Inductor log
//! them) → [`Graph`]. Each line of the `forward` body is one node:
//!
//! ```text
//! # File: /m.py:67 in forward, code: h = self.ln1(x)
//! add: "f32[s77, 64][64, 1]cuda:0" = torch.ops.aten.add.Tensor(x, y);  x = y = None
//! ```
//!
//! The annotation gives the output's dtype, sizes, strides and device; the `# File:` comment above a
//! group of nodes gives their source location, kept in [`NodeMeta::stack_trace`] in Python's
//! traceback form so every importer's nodes read the same; `# Annotation: {...}` gives
//! `fx_traceback.annotate` marks, kept in [`NodeMeta::custom`].

use std::collections::HashMap;

use serde_json::Value as Json;

use super::pyexpr::{self, Py};
use super::pytree;
use crate::ir::{Arg, DType, Graph, InputKind, NamedArg, NodeMeta, SymIntArg, TensorMeta, ValueId, ValueKind};
use crate::sym::{parse_infix, Expr, Func};

/// The [`Arg::Opaque`] kind of an argument kept as Python structure (see `Cx::structure`).
pub const PY_KIND: &str = "python";

/// A graph dump that cannot be read: the payload line (1-based) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FxError {
    pub line: usize,
    pub message: String,
}

/// Where a node came from in the user's code.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceLoc {
    pub file: String,
    pub line: u32,
    pub function: String,
    pub code: String,
}

impl SourceLoc {
    /// Python traceback form, as torch's `node.meta["stack_trace"]` holds it.
    pub fn to_stack_trace(&self) -> String {
        format!("  File \"{}\", line {}, in {}\n    {}\n", self.file, self.line, self.function, self.code)
    }

    /// The innermost frame of a Python traceback (`File "f.py", line 3, in g\n    code`).
    pub fn from_stack_trace(trace: &str) -> Option<SourceLoc> {
        let at = trace.rfind("File \"")?;
        let rest = &trace[at + 6..];
        let (file, rest) = rest.split_once("\", line ")?;
        let (line, rest) = rest.split_once(", in ")?;
        let (function, rest) = rest.split_once('\n').unwrap_or((rest, ""));
        let code = rest.lines().next().unwrap_or("").trim();
        Some(SourceLoc {
            file: file.to_string(),
            line: line.trim().parse().ok()?,
            function: function.trim().to_string(),
            code: code.to_string(),
        })
    }

    /// Parses the comment FX prints: `File: /m.py:67 in forward, code: h = self.ln1(x)`.
    fn from_comment(text: &str) -> Option<SourceLoc> {
        let rest = text.trim().strip_prefix("File:")?.trim_start();
        let (head, code) = rest.split_once(", code: ").unwrap_or((rest, ""));
        let (place, function) = head.rsplit_once(" in ")?;
        let (file, line) = place.rsplit_once(':')?;
        Some(SourceLoc {
            file: file.to_string(),
            line: line.trim().parse().ok()?,
            function: function.trim().to_string(),
            code: code.trim().to_string(),
        })
    }
}

impl std::fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{} `{}`", self.file, self.line, self.code)
    }
}

/// Parses the first `forward` of a readable graph dump. Annotations that cannot be read become
/// warnings (the value is then of unknown kind); structural problems are errors.
pub fn parse_graph(name: &str, text: &str) -> Result<(Graph, Vec<String>), FxError> {
    let lines: Vec<&str> = text.lines().collect();
    let err = |line: usize, message: String| FxError { line: line + 1, message };
    let def = lines
        .iter()
        .position(|l| l.trim_start().starts_with("def forward("))
        .ok_or_else(|| FxError { line: 1, message: "no `def forward(` in the graph dump".into() })?;
    let def_indent = indent(lines[def]);
    let mut cx = Cx {
        graph: Graph::new(name),
        names: HashMap::new(),
        warnings: Vec::new(),
        containers: Vec::new(),
        declared: HashMap::new(),
    };

    // The signature may span lines, one parameter per line with `# PlainAOTInput(...)` comments.
    let mut header = String::new();
    let mut body_start = None;
    for (i, l) in lines.iter().enumerate().skip(def) {
        header.push_str(strip_comment(l));
        header.push(' ');
        if balanced(&header) {
            body_start = Some(i + 1);
            break;
        }
    }
    let body_start = body_start.ok_or_else(|| err(def, "the `def forward(` signature never closes (truncated?)".into()))?;
    let open = header.find('(').unwrap_or(0);
    let close = header.rfind(')').unwrap_or(header.len());
    // A joint graph's parameters are the lists its placeholders are unpacked from (see `pytree`).
    let pytree_inputs = pytree::flattens_inputs(&lines[body_start..], def_indent);
    for param in split_top(&header[open + 1..close.max(open + 1)], ',') {
        let param = param.trim();
        if param.is_empty() || param == "self" {
            continue;
        }
        let (pname, annot) = split_annotation(param).map_err(|m| err(def, m))?;
        if pytree_inputs && annot.is_none() {
            cx.containers.push(pname);
            continue;
        }
        let kind = cx.annotation_kind(annot.as_deref(), def);
        let id = cx
            .graph
            .add_input(&pname, kind, InputKind::UserInput)
            .map_err(|e| err(def, e.to_string()))?;
        cx.names.insert(pname, id);
    }

    let mut meta = NodeMeta::default();
    let mut returned = false;
    let mut i = body_start;
    while i < lines.len() {
        let raw = lines[i];
        let line = raw.trim();
        if line.is_empty() {
            i += 1;
            continue;
        }
        if indent(raw) <= def_indent {
            if line.starts_with("class ") || line.starts_with("def ") {
                cx.warnings.push(format!("{name}: line {}: nested graph `{line}` is not imported", i + 1));
            }
            break;
        }
        if let Some(comment) = line.strip_prefix('#') {
            if let Some(m) = comment_meta(comment) {
                meta = m;
            }
            i += 1;
            continue;
        }
        if let Some(rest) = line.strip_prefix("return") {
            let mut text = strip_comment(rest).to_string();
            while !balanced(&text) && i + 1 < lines.len() {
                i += 1;
                text.push(' ');
                text.push_str(strip_comment(lines[i]));
            }
            let py = pyexpr::parse(text.trim()).map_err(|e| err(i, format!("return value: {e}")))?;
            // The outputs are the leaves of the returned pytree, as FX flattens them.
            let mut items = Vec::new();
            flatten(pytree::returned_tree(py), &mut items);
            for item in &items {
                let a = cx.arg(item).map_err(|m| err(i, m))?;
                cx.graph.outputs.push(a);
            }
            returned = true;
            break;
        }
        let parts = split_top(line, ';');
        if let Some(decl) = pytree::declaration(strip_comment(parts[0])) {
            let (pname, annot) = decl.map_err(|m| err(i, m))?;
            cx.declared.insert(pname, annot);
            i += 1;
            continue;
        }
        match augmented(parts[0]) {
            Some((op, target, value)) => cx.augmented(op, target, value, parts.get(1).copied(), &meta),
            None if is_subscript_assign(parts[0]) => cx.setitem(parts[0], parts.get(1).copied(), &meta),
            None => cx.statement(parts[0], &meta),
        }
        .map_err(|m| err(i, m))?;
        i += 1;
    }
    let mut unused: Vec<&String> = cx.declared.keys().collect();
    unused.sort();
    if let Some(first) = unused.first() {
        cx.warnings.push(format!("{name}: {} annotated input(s) never unpacked from the parameters (`{first}` ...)", unused.len()));
    }
    if !returned {
        cx.warnings.push(format!("{name}: the graph dump ends before its `return` (truncated?); it has no outputs"));
    }
    Ok((cx.graph, cx.warnings))
}

struct Cx {
    graph: Graph,
    /// Names as the dump spells them, aliases (`l_x_ = L_x_`) included.
    names: HashMap<String, ValueId>,
    warnings: Vec<String>,
    /// A joint graph's parameters (`primals`, `tangents`): lists, not placeholders.
    containers: Vec<String>,
    /// Bare annotations (`primals_1: "f32[64][1]cpu"`) of placeholders not unpacked yet.
    declared: HashMap<String, String>,
}

impl Cx {
    fn statement(&mut self, stmt: &str, meta: &NodeMeta) -> Result<(), String> {
        let eq = find_assign(stmt).ok_or_else(|| format!("expected `name = expression`, found `{}`", cut(stmt)))?;
        let (lhs, rhs) = (stmt[..eq].trim(), stmt[eq + 1..].trim());
        if split_top(lhs, ',').len() > 1 {
            let py = pyexpr::parse(rhs).map_err(|e| format!("`{}`: {e}", cut(rhs)))?;
            let (names, from) = pytree::unpacking(lhs, &py).unwrap_or_else(|| Err("expected a tuple unpacking".into()))?;
            return self.unpack(names, &from);
        }
        let (name, annot) = split_annotation(lhs)?;
        if !is_identifier(&name) {
            return Err(format!("expected a node name on the left of `=`, found `{}`", cut(lhs)));
        }
        let py = pyexpr::parse(rhs).map_err(|e| format!("`{}`: {e}", cut(rhs)))?;
        if let Py::Name(src) = &py {
            let v = *self.names.get(src).ok_or_else(|| format!("`{src}` is not defined before this line"))?;
            self.names.insert(name, v);
            return Ok(());
        }
        let (target, args) = self.call(&py)?;
        let kind = self.annotation_kind(annot.as_deref(), 0);
        let id = self
            .graph
            .add_node(&name, &target, args, vec![(name.clone(), kind)], meta.clone())
            .map_err(|e| e.to_string())?;
        let out = self.graph.node(id).outputs[0];
        self.names.insert(name, out);
        Ok(())
    }

    /// The placeholders a joint graph unpacks from its parameter lists, typed by their declarations.
    fn unpack(&mut self, names: Vec<String>, from: &[String]) -> Result<(), String> {
        if let Some(c) = from.iter().find(|c| !self.containers.contains(c)) {
            return Err(format!("expected the inputs to be unpacked from the parameters of `forward`, but `{c}` is none of them"));
        }
        for pname in names {
            let annot = self.declared.remove(&pname);
            if annot.is_none() {
                self.warnings.push(format!("{}: input `{pname}` is unpacked without an annotation line before it", self.graph.name));
            }
            let kind = self.annotation_kind(annot.as_deref(), 0);
            let id = self.graph.add_input(&pname, kind, InputKind::UserInput).map_err(|e| e.to_string())?;
            self.names.insert(pname, id);
        }
        Ok(())
    }

    /// `a += b;  c: "annot" = a`: FX's print of an in-place operator node `c = operator.iadd(a, b)`.
    fn augmented(&mut self, op: &str, target: &str, value: &str, result: Option<&str>, meta: &NodeMeta) -> Result<(), String> {
        let result = result.ok_or_else(|| format!("expected `; name = {target}` after `{target} {op}= ...`"))?;
        let eq = find_assign(result).ok_or_else(|| format!("expected `name = {target}`, found `{}`", cut(result)))?;
        let (name, annot) = split_annotation(&result[..eq])?;
        if !is_identifier(&name) || result[eq + 1..].trim() != target {
            return Err(format!("expected `name = {target}` after `{target} {op}= ...`, found `{}`", cut(result)));
        }
        let py = pyexpr::parse(&format!("{target} {op} ({value})")).map_err(|e| format!("`{}`: {e}", cut(value)))?;
        let Py::BinOp(a, bin, b) = py else {
            return Err(format!("`{op}=` is not an in-place operator"));
        };
        let mut args = Vec::new();
        self.push_arg(&mut args, "arg0", &a, false)?;
        self.push_arg(&mut args, "arg1", &b, false)?;
        let kind = self.annotation_kind(annot.as_deref(), 0);
        let id = self
            .graph
            .add_node(&name, &format!("_operator.i{bin}"), args, vec![(name.clone(), kind)], meta.clone())
            .map_err(|e| e.to_string())?;
        let out = self.graph.node(id).outputs[0];
        self.names.insert(name, out);
        Ok(())
    }

    /// `x[idx] = v;  setitem = x;  setitem = None`: FX's print of an `operator.setitem` node
    /// (dynamo keeps in-place writes into a tensor, torchvision's Swin builds its attention mask
    /// so). The node is named by the alias that follows; it writes into `x` and returns nothing,
    /// so later reads of `x` stay edges from `x`.
    fn setitem(&mut self, stmt: &str, result: Option<&str>, meta: &NodeMeta) -> Result<(), String> {
        let eq = find_assign(stmt).ok_or_else(|| format!("expected `x[index] = value`, found `{}`", cut(stmt)))?;
        let (lhs, rhs) = (stmt[..eq].trim(), stmt[eq + 1..].trim());
        let target = pyexpr::parse(lhs).map_err(|e| format!("`{}`: {e}", cut(lhs)))?;
        let Py::Subscript(base, idx) = target else {
            return Err(format!("expected `x[index]` on the left of `=`, found `{}`", cut(lhs)));
        };
        let value = pyexpr::parse(rhs).map_err(|e| format!("`{}`: {e}", cut(rhs)))?;
        let name = result
            .and_then(|r| find_assign(r).map(|e| r[..e].trim().to_string()))
            .filter(|n| is_identifier(n))
            .ok_or_else(|| format!("expected `; name = ...` naming the setitem node after `{}`", cut(stmt)))?;
        let mut args = Vec::new();
        self.push_arg(&mut args, "arg0", &base, false)?;
        self.push_arg(&mut args, "arg1", &idx, false)?;
        self.push_arg(&mut args, "arg2", &value, false)?;
        let id = self
            .graph
            .add_node(&name, "_operator.setitem", args, vec![(name.clone(), ValueKind::Other("None".into()))], meta.clone())
            .map_err(|e| e.to_string())?;
        let out = self.graph.node(id).outputs[0];
        self.names.insert(name, out);
        Ok(())
    }

    /// The node's target and arguments for one right-hand side.
    fn call(&self, py: &Py) -> Result<(String, Vec<NamedArg>), String> {
        let mut out = Vec::new();
        let target = match py {
            Py::Call { func, args, kwargs } => {
                let target = match func.as_ref() {
                    Py::Attr(recv, method) if self.is_value(recv) => {
                        self.push_arg(&mut out, "self", recv, false)?;
                        format!("Tensor.{method}")
                    }
                    f => {
                        let dotted = f.dotted().ok_or_else(|| "expected a function name before `(`".to_string())?;
                        dotted.strip_prefix("torch.ops.").map(str::to_string).unwrap_or(dotted)
                    }
                };
                for (i, a) in args.iter().enumerate() {
                    self.push_arg(&mut out, &format!("arg{i}"), a, false)?;
                }
                for (k, a) in kwargs {
                    self.push_arg(&mut out, k, a, true)?;
                }
                target
            }
            Py::Subscript(base, idx) => {
                self.push_arg(&mut out, "arg0", base, false)?;
                self.push_arg(&mut out, "arg1", idx, false)?;
                "_operator.getitem".into()
            }
            Py::BinOp(a, op, b) => {
                self.push_arg(&mut out, "arg0", a, false)?;
                self.push_arg(&mut out, "arg1", b, false)?;
                format!("_operator.{op}")
            }
            Py::Unary(op, a) => {
                self.push_arg(&mut out, "arg0", a, false)?;
                format!("_operator.{op}")
            }
            Py::Attr(base, attr) if matches!(base.as_ref(), Py::Name(n) if n == "self") => {
                out.push(NamedArg { name: "target".into(), arg: Arg::String(attr.clone()), kwarg: false });
                "get_attr".into()
            }
            // `x.shape`, `x.dtype`: FX prints a `getattr` call on a value as attribute access.
            Py::Attr(base, attr) if self.is_value(base) => {
                self.push_arg(&mut out, "arg0", base, false)?;
                out.push(NamedArg { name: "arg1".into(), arg: Arg::String(attr.clone()), kwarg: false });
                "builtins.getattr".into()
            }
            other => return Err(format!("unsupported right-hand side {other:?}")),
        };
        Ok((target, out))
    }

    fn is_value(&self, py: &Py) -> bool {
        matches!(py, Py::Name(n) if self.names.contains_key(n))
    }

    /// Appends argument `name`. An argument kept as Python structure (an index tuple with slices,
    /// a nested list) is followed by `<name>.values`, the values it reads, so the graph's edges
    /// stay whole.
    fn push_arg(&self, out: &mut Vec<NamedArg>, name: &str, py: &Py, kwarg: bool) -> Result<(), String> {
        let arg = self.arg(py)?;
        let structured = matches!(&arg, Arg::Opaque { kind, .. } if kind == PY_KIND);
        out.push(NamedArg { name: name.to_string(), arg, kwarg });
        if structured {
            let mut reads = Vec::new();
            self.values_in(py, &mut reads);
            if !reads.is_empty() {
                let arg = Arg::OptionalTensors(reads.into_iter().map(Some).collect());
                out.push(NamedArg { name: format!("{name}.values"), arg, kwarg });
            }
        }
        Ok(())
    }

    /// Every value named anywhere in `py`, in order, each once.
    fn values_in(&self, py: &Py, out: &mut Vec<ValueId>) {
        match py {
            Py::Name(n) => {
                if let Some(&v) = self.names.get(n) {
                    if !out.contains(&v) {
                        out.push(v);
                    }
                }
            }
            Py::Attr(b, _) | Py::Unary(_, b) => self.values_in(b, out),
            Py::Subscript(a, b) | Py::BinOp(a, _, b) => {
                self.values_in(a, out);
                self.values_in(b, out);
            }
            Py::Call { func, args, kwargs } => {
                self.values_in(func, out);
                args.iter().chain(kwargs.iter().map(|(_, v)| v)).for_each(|a| self.values_in(a, out));
            }
            Py::List(xs) | Py::Tuple(xs) => xs.iter().for_each(|x| self.values_in(x, out)),
            Py::Slice(parts) => parts.iter().for_each(|x| self.values_in(x, out)),
            Py::Dict(kv) => kv.iter().for_each(|(k, v)| {
                self.values_in(k, out);
                self.values_in(v, out);
            }),
            Py::Int(_) | Py::Float(_) | Py::Str(_) | Py::Bool(_) | Py::None | Py::Ellipsis => {}
        }
    }

    /// `py` as tagged JSON, for arguments no [`Arg`] kind holds: values are `{"value": name}`,
    /// `...` is `{"ellipsis": null}`, `a:b:c` is `{"slice": [a, b, c]}`, a tuple `{"tuple": [...]}`,
    /// a call `{"call": f, "args": [...], "kwargs": {...}}`. A name that is neither a value nor a
    /// known constant is an error, as in any other argument.
    fn structure(&self, py: &Py) -> Result<Json, String> {
        let all = |xs: &[Py]| xs.iter().map(|x| self.structure(x)).collect::<Result<Vec<_>, _>>();
        Ok(match py {
            Py::None => Json::Null,
            Py::Bool(b) => Json::Bool(*b),
            Py::Int(v) => Json::from(*v),
            Py::Float(v) => serde_json::Number::from_f64(*v).map_or_else(|| Json::String(v.to_string()), Json::Number),
            Py::Str(s) => Json::String(s.clone()),
            Py::Ellipsis => serde_json::json!({ "ellipsis": null }),
            Py::Name(n) if self.names.contains_key(n) => serde_json::json!({ "value": n }),
            Py::Name(n) if matches!(n.as_str(), "inf" | "nan") => Json::String(n.clone()),
            Py::Name(n) => return Err(format!("`{n}` is not defined before this line")),
            Py::Slice(parts) => serde_json::json!({ "slice": all(&parts[..])? }),
            Py::Call { func, args, .. } if is_slice_call(func, args) && !self.names.contains_key("slice") => serde_json::json!({ "slice": slice_parts(args)
                .iter()
                .map(|p| self.structure(p))
                .collect::<Result<Vec<_>, _>>()? }),
            Py::List(xs) => Json::Array(all(xs)?),
            Py::Tuple(xs) => serde_json::json!({ "tuple": all(xs)? }),
            Py::Dict(kv) => {
                let mut entries = Vec::new();
                for (k, v) in kv {
                    entries.push(Json::Array(vec![self.structure(k)?, self.structure(v)?]));
                }
                serde_json::json!({ "dict": entries })
            }
            Py::Attr(..) if py.dotted().is_some() && !self.values_in_any(py) => {
                serde_json::json!({ "attr": py.dotted() })
            }
            Py::Attr(b, a) => serde_json::json!({ "getattr": [self.structure(b)?, a] }),
            Py::Call { func, args, kwargs } => {
                let mut kw = serde_json::Map::new();
                for (k, v) in kwargs {
                    kw.insert(k.clone(), self.structure(v)?);
                }
                let f = func.dotted().map_or_else(|| self.structure(func), |d| Ok(Json::String(d)))?;
                serde_json::json!({ "call": f, "args": all(args)?, "kwargs": kw })
            }
            Py::Subscript(a, b) => serde_json::json!({ "getitem": [self.structure(a)?, self.structure(b)?] }),
            Py::BinOp(a, op, b) => serde_json::json!({ "op": op, "args": [self.structure(a)?, self.structure(b)?] }),
            Py::Unary(op, a) => serde_json::json!({ "op": op, "args": [self.structure(a)?] }),
        })
    }

    fn values_in_any(&self, py: &Py) -> bool {
        let mut v = Vec::new();
        self.values_in(py, &mut v);
        !v.is_empty()
    }

    fn structured(&self, py: &Py) -> Result<Arg, String> {
        Ok(Arg::Opaque { kind: PY_KIND.into(), json: self.structure(py)?.to_string() })
    }

    /// One argument, typed as well as the dump allows.
    fn arg(&self, py: &Py) -> Result<Arg, String> {
        Ok(match py {
            Py::None => Arg::None,
            Py::Bool(b) => Arg::Bool(*b),
            Py::Int(v) => Arg::Int(*v),
            Py::Float(v) => Arg::Float(*v),
            Py::Str(s) => Arg::String(s.clone()),
            Py::Name(n) => match self.names.get(n) {
                Some(&v) => self.value_arg(v),
                None => match n.as_str() {
                    "inf" => Arg::Float(f64::INFINITY),
                    "nan" => Arg::Float(f64::NAN),
                    _ => return Err(format!("`{n}` is not defined before this line")),
                },
            },
            Py::Unary("neg", inner) if float_constant(inner).is_some() => Arg::Float(-float_constant(inner).unwrap_or(0.0)),
            Py::Attr(..) if float_constant(py).is_some() => Arg::Float(float_constant(py).unwrap_or(0.0)),
            Py::Attr(..) if self.values_in_any(py) => self.structured(py)?,
            Py::Attr(..) => {
                let dotted = py.dotted().unwrap_or_default();
                let last = dotted.rsplit('.').next().unwrap_or("");
                if let Some(d) = DType::from_name(&dotted).filter(|_| dotted.starts_with("torch.")) {
                    Arg::ScalarType(d)
                } else if last.ends_with("_format") || last == "channels_last" || last == "channels_last_3d" {
                    Arg::MemoryFormat(last.to_string())
                } else if matches!(last, "strided" | "sparse_coo" | "sparse_csr" | "_mkldnn" | "jagged") {
                    Arg::Layout(last.to_string())
                } else {
                    Arg::Opaque { kind: PY_KIND.into(), json: serde_json::json!({ "attr": dotted }).to_string() }
                }
            }
            // `torch.Size([s0, 3])` is its list of sizes.
            Py::Call { func, args, kwargs }
                if func.dotted().is_some_and(|f| f == "torch.Size") && args.len() == 1 && kwargs.is_empty() =>
            {
                self.arg(&args[0])?
            }
            Py::Call { func, args, kwargs } if func.dotted().is_some_and(|f| f == "device" || f == "torch.device") => {
                let mut ty = String::new();
                let mut index = None;
                for (i, a) in args.iter().enumerate() {
                    match (i, a) {
                        (0, Py::Str(s)) => ty = s.clone(),
                        (1, Py::Int(v)) => index = Some(*v),
                        _ => {}
                    }
                }
                for (k, a) in kwargs {
                    match (k.as_str(), a) {
                        ("type", Py::Str(s)) => ty = s.clone(),
                        ("index", Py::Int(v)) => index = Some(*v),
                        _ => {}
                    }
                }
                Arg::Device(match index {
                    Some(i) if !ty.contains(':') => format!("{ty}:{i}"),
                    _ => ty,
                })
            }
            Py::List(items) | Py::Tuple(items) => self.list_arg(py, items)?,
            other => self.structured(other)?,
        })
    }

    fn value_arg(&self, v: ValueId) -> Arg {
        match &self.graph.value(v).kind {
            ValueKind::SymInt(_) => Arg::SymInt(SymIntArg::Value(v)),
            ValueKind::SymBool(_) => Arg::SymBool(v),
            ValueKind::SymFloat(_) => Arg::SymFloat(v),
            ValueKind::Tensor(_) | ValueKind::Other(_) => Arg::Tensor(v),
        }
    }

    fn list_arg(&self, py: &Py, items: &[Py]) -> Result<Arg, String> {
        let args: Vec<Arg> = items.iter().map(|i| self.arg(i)).collect::<Result<_, _>>()?;
        let all = |f: fn(&Arg) -> bool| args.iter().all(f);
        if all(|a| matches!(a, Arg::Int(_))) {
            return Ok(Arg::Ints(args.iter().filter_map(|a| if let Arg::Int(v) = a { Some(*v) } else { None }).collect()));
        }
        // An unannotated value among ints (dynamo's `getitem = size[2]`) is a size too.
        let unknown = |a: &Arg| matches!(a, Arg::Tensor(v) if matches!(self.graph.value(*v).kind, ValueKind::Other(_)));
        let int_like = |a: &Arg| matches!(a, Arg::Int(_) | Arg::SymInt(_)) || unknown(a);
        if args.iter().all(int_like) && !args.iter().all(unknown) {
            return Ok(Arg::SymInts(
                args.into_iter()
                    .filter_map(|a| match a {
                        Arg::Int(v) => Some(SymIntArg::Int(v)),
                        Arg::SymInt(s) => Some(s),
                        Arg::Tensor(v) => Some(SymIntArg::Value(v)),
                        _ => None,
                    })
                    .collect(),
            ));
        }
        if all(|a| matches!(a, Arg::Int(_) | Arg::Float(_))) {
            let f = |a: &Arg| match a {
                Arg::Int(v) => *v as f64,
                Arg::Float(v) => *v,
                _ => 0.0,
            };
            return Ok(Arg::Floats(args.iter().map(f).collect()));
        }
        if all(|a| matches!(a, Arg::Bool(_))) {
            return Ok(Arg::Bools(args.iter().map(|a| matches!(a, Arg::Bool(true))).collect()));
        }
        if all(|a| matches!(a, Arg::Tensor(_))) {
            return Ok(Arg::Tensors(args.iter().filter_map(Arg::as_tensor).collect()));
        }
        if all(|a| matches!(a, Arg::Tensor(_) | Arg::None)) {
            return Ok(Arg::OptionalTensors(args.iter().map(Arg::as_tensor).collect()));
        }
        if all(|a| matches!(a, Arg::String(_))) {
            return Ok(Arg::Strings(
                args.into_iter().filter_map(|a| if let Arg::String(s) = a { Some(s) } else { None }).collect(),
            ));
        }
        // Anything else (slices, nested lists, mixed kinds) keeps its Python structure.
        self.structured(py)
    }

    fn annotation_kind(&mut self, annot: Option<&str>, line: usize) -> ValueKind {
        let Some(text) = annot else {
            return ValueKind::Other("unannotated".into());
        };
        match parse_annotation(text) {
            Ok(kind) => kind,
            Err(why) => {
                let at = if line > 0 { format!(" (line {})", line + 1) } else { String::new() };
                self.warnings.push(format!("{}: annotation `{}`{at}: {why}", self.graph.name, cut(text)));
                ValueKind::Other(text.to_string())
            }
        }
    }
}

/// `"f32[s77, 64][64, 1]cuda:0"` → a tensor; `"Sym(s77)"` → a symbolic int (float, bool).
pub fn parse_annotation(text: &str) -> Result<ValueKind, String> {
    if let Some(inner) = text.strip_prefix("Sym(").and_then(|s| s.strip_suffix(')')) {
        let e = parse_infix(inner).map_err(|e| e.to_string())?;
        return Ok(if is_bool(&e) {
            ValueKind::SymBool(e)
        } else if is_float(&e) {
            ValueKind::SymFloat(e)
        } else {
            ValueKind::SymInt(e)
        });
    }
    let open = text.find('[').ok_or("expected `dtype[sizes][strides]device` or `Sym(expr)`")?;
    let dtype = DType::from_name(&text[..open]).ok_or_else(|| format!("unknown dtype `{}`", &text[..open]))?;
    let (sizes, rest) = bracket_list(&text[open..])?;
    let (strides, device) = if rest.starts_with('[') { bracket_list(rest)? } else { (Vec::new(), rest) };
    let sizes = sizes.iter().map(|s| parse_infix(s).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>()?;
    let strides = if strides.is_empty() && !sizes.is_empty() {
        TensorMeta::contiguous_strides(&sizes)
    } else {
        strides.iter().map(|s| parse_infix(s).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>()?
    };
    if strides.len() != sizes.len() {
        return Err(format!("{} sizes but {} strides", sizes.len(), strides.len()));
    }
    Ok(ValueKind::Tensor(TensorMeta {
        dtype,
        sizes,
        strides,
        storage_offset: Expr::int(0),
        device: device.trim().to_string(),
        requires_grad: false,
    }))
}

fn is_bool(e: &Expr) -> bool {
    match e {
        Expr::Bool(_) => true,
        Expr::Call(f, _) => f.is_relation() || matches!(f, Func::And | Func::Or | Func::Not),
        _ => false,
    }
}

fn is_float(e: &Expr) -> bool {
    match e {
        Expr::Float(_) => true,
        Expr::Symbol(s) => s.starts_with("zf"),
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().any(is_float),
        Expr::Call(Func::ToFloat | Func::FloatTrueDiv | Func::Sqrt | Func::Exp | Func::Log, _) => true,
        Expr::Call(_, xs) => xs.iter().any(is_float),
        Expr::Pow(p) => is_float(&p.0) || is_float(&p.1),
        _ => false,
    }
}

/// `[a, b][c]rest` → (`["a", "b"]`, `"[c]rest"`), splitting at top-level commas.
fn bracket_list(text: &str) -> Result<(Vec<String>, &str), String> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => {
                depth -= 1;
                if depth == 0 {
                    let inner = &text[1..i];
                    let items =
                        split_top(inner, ',').into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
                    return Ok((items, &text[i + 1..]));
                }
            }
            _ => {}
        }
    }
    Err("unclosed `[`".into())
}

/// `name: "annotation"` → the name and the annotation text.
fn split_annotation(text: &str) -> Result<(String, Option<String>), String> {
    let text = text.trim();
    let Some((name, rest)) = text.split_once(':') else {
        let name = text.split('=').next().unwrap_or(text).trim();
        return Ok((name.to_string(), None));
    };
    let rest = rest.trim();
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'').ok_or("expected a quoted annotation")?;
    let end = rest[1..].find(quote).ok_or("unterminated annotation string")?;
    Ok((name.trim().to_string(), Some(rest[1..1 + end].to_string())))
}

/// Metadata from a comment line: `File: ...`, `Annotation: {...} File: ...`, `No stacktrace found`.
fn comment_meta(comment: &str) -> Option<NodeMeta> {
    let c = comment.trim();
    if c.starts_with("No stacktrace found") {
        return Some(NodeMeta::default());
    }
    // A joint or backward graph's gradient nodes name the forward node they differentiate: its
    // location is theirs, which is how an op is followed across the two graphs.
    let c = c.strip_prefix("Backward of forward node:").map(str::trim_start).unwrap_or(c);
    let mut meta = NodeMeta::default();
    let mut rest = c;
    if let Some(a) = c.strip_prefix("Annotation:") {
        let a = a.trim_start();
        let end = matching_close(a)?;
        if let Ok(Py::Dict(entries)) = pyexpr::parse(&a[..=end]) {
            for (k, v) in entries {
                let key = match k {
                    Py::Str(s) => s,
                    other => format!("{other:?}"),
                };
                meta.custom.insert(key, py_json(&v));
            }
        }
        rest = a[end + 1..].trim_start();
    }
    let loc = SourceLoc::from_comment(rest);
    if loc.is_none() && meta.custom.is_empty() {
        return None;
    }
    meta.stack_trace = loc.map(|l| l.to_stack_trace());
    Some(meta)
}

fn py_json(py: &Py) -> serde_json::Value {
    use serde_json::Value as J;
    match py {
        Py::None => J::Null,
        Py::Bool(b) => J::Bool(*b),
        Py::Int(v) => J::from(*v),
        Py::Float(v) => serde_json::Number::from_f64(*v).map(J::Number).unwrap_or(J::Null),
        Py::Str(s) => J::String(s.clone()),
        Py::List(xs) | Py::Tuple(xs) => J::Array(xs.iter().map(py_json).collect()),
        Py::Dict(kv) => J::Object(
            kv.iter()
                .map(|(k, v)| (if let Py::Str(s) = k { s.clone() } else { format!("{k:?}") }, py_json(v)))
                .collect(),
        ),
        other => J::String(other.dotted().unwrap_or_else(|| format!("{other:?}"))),
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The characters of `text` outside quoted strings, each with its byte index and the bracket
/// depth after it: one scanner for every Python-source question below.
fn unquoted(text: &str) -> impl Iterator<Item = (usize, char, i32)> + '_ {
    let mut quote: Option<char> = None;
    let mut depth = 0i32;
    text.char_indices().filter_map(move |(i, c)| match (quote, c) {
        (Some(q), c) if c == q => {
            quote = None;
            None
        }
        (Some(_), _) => None,
        (None, '\'' | '"') => {
            quote = Some(c);
            None
        }
        (None, c) => {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
            Some((i, c, depth))
        }
    })
}

/// Index of the bracket closing the one `text` starts with, skipping quoted text.
fn matching_close(text: &str) -> Option<usize> {
    unquoted(text).find(|&(_, c, depth)| matches!(c, ')' | ']' | '}') && depth == 0).map(|(i, _, _)| i)
}

/// Whether every bracket opened in `text` (outside quotes) is closed, and at least one was opened
/// or none is pending.
fn balanced(text: &str) -> bool {
    let (mut depth, mut opened) = (0i32, false);
    for (_, c, d) in unquoted(text) {
        opened |= matches!(c, '(' | '[' | '{');
        depth = d;
    }
    depth <= 0 && (opened || !text.trim().is_empty())
}

/// The line without a trailing `# comment` (outside quotes).
fn strip_comment(line: &str) -> &str {
    match unquoted(line).find(|&(_, c, _)| c == '#') {
        Some((i, _, _)) => &line[..i],
        None => line,
    }
}

/// Splits at `sep` outside brackets and quotes.
fn split_top(text: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c, depth) in unquoted(text) {
        if c == sep && depth == 0 {
            out.push(&text[start..i]);
            start = i + c.len_utf8();
        }
    }
    out.push(&text[start..]);
    out
}

/// The `=` of an assignment: outside quotes and brackets, not part of `==`, `<=`, `>=`, `!=`.
fn find_assign(stmt: &str) -> Option<usize> {
    let b = stmt.as_bytes();
    unquoted(stmt)
        .find(|&(i, c, depth)| {
            let prev = i.checked_sub(1).map(|j| b[j]);
            let next = b.get(i + 1).copied();
            c == '=' && depth == 0 && next != Some(b'=') && !matches!(prev, Some(b'=' | b'<' | b'>' | b'!'))
        })
        .map(|(i, _, _)| i)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// `inf`, `nan` (FX's globals for `float("inf")`), `math.pi`, `torch.inf` and the like.
fn float_constant(py: &Py) -> Option<f64> {
    Some(match py.dotted()?.as_str() {
        "inf" | "math.inf" | "torch.inf" => f64::INFINITY,
        "nan" | "math.nan" | "torch.nan" => f64::NAN,
        "math.pi" | "torch.pi" => std::f64::consts::PI,
        "math.e" | "torch.e" => std::f64::consts::E,
        "math.tau" => std::f64::consts::TAU,
        _ => return None,
    })
}

fn flatten(py: Py, out: &mut Vec<Py>) {
    match py {
        Py::Tuple(items) | Py::List(items) => items.into_iter().for_each(|x| flatten(x, out)),
        other => out.push(other),
    }
}

/// `name OP= value` (`+=`, `//=`, `**=`, ...): the operator, the name and the value text.
fn augmented(stmt: &str) -> Option<(&str, &str, &str)> {
    const OPS: &[&str] = &["**", "//", "<<", ">>", "+", "-", "*", "/", "%", "@", "&", "|", "^"];
    let stmt = stmt.trim();
    let end = stmt.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    let (name, rest) = stmt.split_at(end);
    let rest = rest.trim_start();
    let op = OPS.iter().find(|op| rest.strip_prefix(**op).is_some_and(|r| r.starts_with('=') && !r.starts_with("==")))?;
    is_identifier(name).then(|| (*op, name, rest[op.len() + 1..].trim()))
}

/// `x[...] = value`: an assignment into a subscript, not to a name.
fn is_subscript_assign(stmt: &str) -> bool {
    find_assign(stmt).is_some_and(|eq| {
        let lhs = stmt[..eq].trim();
        lhs.ends_with(']') && lhs.find('[').is_some_and(|b| is_identifier(&lhs[..b]))
    })
}

/// `slice(a)`, `slice(a, b)`, `slice(a, b, c)`: the builtin, unless a value shadows it (FX
/// names nodes `slice_1`, ..., never `slice`).
fn is_slice_call(func: &Py, args: &[Py]) -> bool {
    matches!(func, Py::Name(n) if n == "slice") && (1..=3).contains(&args.len())
}

/// The `[start, stop, step]` of `slice(...)`'s arguments, as Python reads one, two or three.
fn slice_parts(args: &[Py]) -> [Py; 3] {
    match args {
        [stop] => [Py::None, stop.clone(), Py::None],
        [a, b] => [a.clone(), b.clone(), Py::None],
        [a, b, c, ..] => [a.clone(), b.clone(), c.clone()],
        [] => [Py::None, Py::None, Py::None],
    }
}

fn cut(s: &str) -> &str {
    let mut end = s.len().min(80);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    const AOT: &str = r#"class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "Sym(s77)",  # PlainAOTInput(idx=0)
        arg1_1: "f32[s77, 32][32, 1]cuda:0",  # PlainAOTInput(idx=1)
    ):
        # Annotation: {'compile_with_inductor': 0} File: /m.py:67 in forward, code: h = self.ln1(x)
        var_mean = torch.ops.aten.var_mean.correction(arg1_1, [1], correction = 0, keepdim = True)
        getitem: "f32[s77, 1][1, 1]cuda:0" = var_mean[0]
        getitem_1: "f32[s77, 1][1, 1]cuda:0" = var_mean[1];  var_mean = None

        # File: /m.py:68 in forward, code: y = h * 2
        mul: "Sym(2*s77)" = arg0_1 * 2
        view: "f32[2*s77, 16][16, 1]cuda:0" = torch.ops.aten.view.default(arg1_1, [mul, 16]);  arg1_1 = None
        to: "f16[2*s77, 16][16, 1]cuda:0" = torch.ops.aten._to_copy.default(view, dtype = torch.float16, device = device(type='cuda', index=0))
        return (
            getitem,  # PlainAOTOutput(idx=0)
            to,
        )
"#;

    #[test]
    fn reads_nodes_annotations_and_locations() {
        let (g, warnings) = parse_graph("g", AOT).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(g.inputs.len(), 2);
        let targets: Vec<&str> = g.nodes.iter().map(|n| n.target.as_str()).collect();
        assert_eq!(
            targets,
            [
                "aten.var_mean.correction",
                "_operator.getitem",
                "_operator.getitem",
                "_operator.mul",
                "aten.view.default",
                "aten._to_copy.default"
            ]
        );
        let vm = &g.nodes[0];
        assert!(vm.meta.compile_with_inductor());
        let loc = SourceLoc::from_stack_trace(vm.meta.stack_trace.as_deref().unwrap()).unwrap();
        assert_eq!((loc.file.as_str(), loc.line, loc.code.as_str()), ("/m.py", 67, "h = self.ln1(x)"));
        assert_eq!(vm.arg("correction"), Some(&Arg::Int(0)));
        assert_eq!(vm.arg("arg1"), Some(&Arg::Ints(vec![1])));
        let view = &g.nodes[4];
        assert!(matches!(view.arg("arg1"), Some(Arg::SymInts(v)) if v.len() == 2));
        assert!(!view.meta.compile_with_inductor());
        let to = &g.nodes[5];
        assert_eq!(to.arg("dtype"), Some(&Arg::ScalarType(DType::F16)));
        assert_eq!(to.arg("device"), Some(&Arg::Device("cuda:0".into())));
        assert_eq!(g.outputs.len(), 2);
        let t = g.value(g.nodes[4].outputs[0]).tensor().unwrap();
        assert_eq!(t.sizes[0].to_string(), "2*s77");
        assert!(matches!(g.value(g.nodes[3].outputs[0]).kind, ValueKind::SymInt(_)));
    }

    #[test]
    fn truncated_or_broken_dumps_do_not_panic() {
        for cut_at in (0..AOT.len()).step_by(7) {
            let mut end = cut_at;
            while !AOT.is_char_boundary(end) {
                end -= 1;
            }
            let _ = parse_graph("g", &AOT[..end]);
        }
        let e = parse_graph("g", "def forward(self, x):\n    y = torch.ops.aten.relu.default(z)\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("`z` is not defined"), "{}", e.message);
        assert!(parse_graph("g", "nothing").is_err());
    }

    /// The Python that dynamo writes for real models (lines from Llama, GPT-2 and resnet18 logs).
    const DYNAMO: &str = r#"class GraphModule(torch.nn.Module):
    def forward(self, s27: "Sym(s27)", L_x_: "f32[2, 4, s27, 16][64*s27, 16, 64, 1]cpu", L_p_: "i64[1, s27][s27, 1]cpu"):
        l_x_ = L_x_
        size = l_x_.size()
        getitem = size[2];  size = None
        x1: "f32[2, 4, s27, 8][64*s27, 16, 64, 1]cpu" = l_x_[(Ellipsis, slice(None, 8, None))]
        x2: "f32[2, 4, s27, 8][64*s27, 16, 64, 1]cpu" = l_x_[..., 8:]
        p: "i64[1, s27, 1][s27, 1, 1]cpu" = L_p_[(Ellipsis, None)]
        q: "i64[1, s27][s27, 1]cpu" = L_p_[(slice(None, None, None), slice(None, getitem, None))]
        r: "f32[2, 4, s27, 8][64*s27, 16, 64, 1]cpu" = x1[::-1, 1:3:2]
        shape = l_x_.shape
        v = x2.view(torch.Size([2, 4, getitem, 8]))
        x1 += x2;  x3: "f32[2, 4, s27, 8][64*s27, 16, 64, 1]cpu" = x1;  x1 = x2 = None
        t = torch.zeros(3, dtype = torch.float32, layout = torch.strided, memory_format = torch.contiguous_format)
        c = torch.clamp(x3, -torch.inf, math.pi)
        return (x3, (p, q), [r, None], v, t, shape)
"#;

    #[test]
    fn reads_dynamo_indexing_in_place_ops_and_nested_returns() {
        let (g, warnings) = parse_graph("g", DYNAMO).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let node = |n: &str| g.node(g.node_by_name(n).unwrap());
        let json = |n: &str, a: &str| match node(n).arg(a) {
            Some(Arg::Opaque { kind, json }) if kind == PY_KIND => serde_json::from_str::<Json>(json).unwrap(),
            other => panic!("{n}.{a}: {other:?}"),
        };
        let ell = serde_json::json!({ "ellipsis": null });
        let slice = |a: Json, b: Json, c: Json| serde_json::json!({ "slice": [a, b, c] });
        assert_eq!(node("x1").target, "_operator.getitem");
        assert_eq!(json("x1", "arg1"), serde_json::json!({ "tuple": [ell, slice(Json::Null, 8.into(), Json::Null)] }));
        assert_eq!(json("x2", "arg1"), serde_json::json!({ "tuple": [ell, slice(8.into(), Json::Null, Json::Null)] }));
        assert_eq!(json("p", "arg1"), serde_json::json!({ "tuple": [ell, null] }));
        assert_eq!(json("r", "arg1"), serde_json::json!({ "tuple": [slice(Json::Null, Json::Null, (-1).into()), slice(1.into(), 3.into(), 2.into())] }));
        // A value inside a slice stays an edge of the graph.
        let q = node("q");
        assert_eq!(json("q", "arg1")["tuple"][1]["slice"][1], serde_json::json!({ "value": "getitem" }));
        let getitem = g.value_id("getitem").unwrap();
        assert!(q.inputs().any(|v| v == getitem), "{:?}", q.args);
        assert_eq!(node("shape").target, "builtins.getattr");
        assert_eq!(node("shape").arg("arg1"), Some(&Arg::String("shape".into())));
        assert!(matches!(node("v").arg("arg0"), Some(Arg::SymInts(s)) if s.len() == 4));
        let x3 = node("x3");
        assert_eq!(x3.target, "_operator.iadd");
        assert!(matches!(g.value(x3.outputs[0]).kind, ValueKind::Tensor(_)));
        let t = node("t");
        assert_eq!(t.arg("layout"), Some(&Arg::Layout("strided".into())));
        assert_eq!(t.arg("memory_format"), Some(&Arg::MemoryFormat("contiguous_format".into())));
        let c = node("c");
        assert_eq!(c.args[1].arg, Arg::Float(f64::NEG_INFINITY));
        assert_eq!(c.args[2].arg, Arg::Float(std::f64::consts::PI));
        assert_eq!(g.outputs.len(), 8, "the returned pytree's leaves: {:?}", g.outputs);
        assert_eq!(g.outputs[4], Arg::None);
    }

    #[test]
    fn reads_setitem_into_a_tensor() {
        // torchvision's Swin builds its shifted-window mask so (torch 2.15 dynamo graph).
        let text = "def forward(self, L_x_: \"f32[8, 8][8, 1]cpu\", s0: \"Sym(s0)\"):\n    \
                    l_x_ = L_x_\n    \
                    attn_mask: \"f32[8, 8][8, 1]cpu\" = l_x_.new_zeros((8, 8));  l_x_ = None\n    \
                    attn_mask[(slice(0, -4, None), slice(-4, -2, None))] = 1;  setitem = attn_mask;  setitem = None\n    \
                    attn_mask[(slice(-2, None, None), Ellipsis)] = s0;  setitem_1 = attn_mask;  setitem_1 = None\n    \
                    return (attn_mask,)\n";
        let (g, warnings) = parse_graph("g", text).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let set = g.node(g.node_by_name("setitem").unwrap());
        assert_eq!(set.target, "_operator.setitem");
        let mask = g.value_id("attn_mask").unwrap();
        assert!(set.inputs().any(|v| v == mask), "writes into the mask: {:?}", set.args);
        assert_eq!(set.arg("arg2"), Some(&Arg::Int(1)));
        let set1 = g.node(g.node_by_name("setitem_1").unwrap());
        let s0 = g.value_id("s0").unwrap();
        assert!(set1.inputs().any(|v| v == s0), "the written value is an edge: {:?}", set1.args);
        // The graph returns the mask itself, not the setitem's None.
        assert!(matches!(&g.outputs[0], Arg::Tensor(v) if *v == mask), "{:?}", g.outputs);
        // Without the alias that names the node, the line is an error that says so.
        let bad = text.replace(";  setitem = attn_mask;  setitem = None", "");
        let e = parse_graph("g", &bad).unwrap_err();
        assert!(e.message.contains("naming the setitem node"), "{e:?}");
    }

    /// AOT autograd's joint graph as torch 2.15 prints it (trimmed from a CPU training log).
    const JOINT: &str = r#"class wrap_fn(torch.nn.Module):
    def forward(
        self,
        primals,
        tangents,
    ):
        primals_1: "f32[16, 8][8, 1]cpu"  # PlainAOTInput(idx=0)
        primals_2: "Sym(s77)"
        primals_3: "f32[s77, 8][8, 1]cpu"
        tangents_1: "f32[s77, 16][16, 1]cpu"
        primals_1, primals_2, primals_3, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
        # No stacktrace found for following nodes
        t: "f32[8, 16][1, 8]cpu" = torch.ops.aten.t.default(primals_1);  primals_1 = None
        mm: "f32[s77, 16][16, 1]cpu" = torch.ops.aten.mm.default(primals_3, t)
        gelu: "f32[s77, 16][16, 1]cpu" = torch.ops.aten.gelu.default(mm)
        # Backward of forward node: File: /m.py:9 in forward, code: return gelu(x @ w)
        gelu_backward: "f32[s77, 16][16, 1]cpu" = torch.ops.aten.gelu_backward.default(tangents_1, mm);  tangents_1 = mm = None
        t_1: "f32[16, s77][1, 16]cpu" = torch.ops.aten.t.default(gelu_backward)
        mm_1: "f32[16, 8][8, 1]cpu" = torch.ops.aten.mm.default(t_1, primals_3);  t_1 = primals_3 = None
        return pytree.tree_unflatten([gelu, mm_1, None, None], self._out_spec)
"#;

    #[test]
    fn reads_the_joint_graphs_pytree_inputs_and_outputs() {
        let (g, warnings) = parse_graph("0/0:aot_joint_graph", JOINT).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let inputs: Vec<&str> = g.inputs.iter().map(|(v, _)| g.value(*v).name.as_str()).collect();
        assert_eq!(inputs, ["primals_1", "primals_2", "primals_3", "tangents_1"], "the containers are no inputs");
        assert!(matches!(&g.value(g.inputs[1].0).kind, ValueKind::SymInt(e) if e.to_string() == "s77"));
        let tangent = g.value(g.inputs[3].0).tensor().unwrap();
        assert_eq!((tangent.sizes[0].to_string().as_str(), tangent.device.as_str()), ("s77", "cpu"));
        assert_eq!(g.nodes.len(), 6);
        assert_eq!(g.outputs.len(), 4);
        assert_eq!((&g.outputs[2], &g.outputs[3]), (&Arg::None, &Arg::None));
        let gb = g.node(g.node_by_name("gelu_backward").unwrap());
        let loc = SourceLoc::from_stack_trace(gb.meta.stack_trace.as_deref().unwrap()).unwrap();
        assert_eq!((loc.file.as_str(), loc.line), ("/m.py", 9), "a gradient node has its forward node's location");
    }

    #[test]
    fn hostile_joint_graph_lines_are_errors_that_say_what_was_expected() {
        for cut_at in (0..JOINT.len()).step_by(5) {
            let _ = parse_graph("g", &JOINT[..cut_at]);
        }
        let cases = [
            (r#"primals_1: "f32[16, 8][8, 1]cpu"#, 7, "unterminated annotation"),
            ("primals_1, primals_2, primals_3, tangents_1, = torch.ops.aten.foo(primals, tangents)", 11, "found a call of `torch.ops.aten.foo`"),
            ("primals_1, primals_2, primals_3, tangents_1, = fx_pytree.tree_flatten_spec([primals, grads], self._in_spec)", 11, "`grads` is none of them"),
            ("primals_1, primals_2[0], primals_3, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)", 11, "found `primals_2[0]`"),
            ("primals_1, primals_2, primals_3, tangents_1, = fx_pytree.tree_flatten_spec(7, self._in_spec)", 11, "a list of parameter names first"),
        ];
        for (bad, line, expected) in cases {
            let mut lines: Vec<&str> = JOINT.lines().collect();
            let replaced = format!("        {bad}");
            lines[line - 1] = &replaced;
            let e = parse_graph("g", &lines.join("\n")).unwrap_err();
            assert_eq!(e.line, line, "{bad}: {e:?}");
            assert!(e.message.contains(expected), "{bad}: {}", e.message);
        }
        // An input unpacked with no annotation line still imports, with a warning.
        let (g, warnings) = parse_graph("g", &JOINT.replace("        primals_2: \"Sym(s77)\"\n", "")).unwrap();
        assert_eq!(g.inputs.len(), 4);
        assert!(warnings.iter().any(|w| w.contains("`primals_2` is unpacked without an annotation")), "{warnings:?}");
    }

    #[test]
    fn annotations_cover_scalars_symbols_and_floats() {
        assert!(matches!(parse_annotation("f64[][]cpu").unwrap(), ValueKind::Tensor(t) if t.sizes.is_empty()));
        assert!(matches!(parse_annotation("Sym(0.0000100000000000000)").unwrap(), ValueKind::SymFloat(_)));
        // GPT-2's attention scale under dynamic shapes.
        let k = parse_annotation("Sym(OpaqueUnaryFn_sqrt(FloatTrueDiv(2.0, zf36)))").unwrap();
        assert!(matches!(&k, ValueKind::SymFloat(e) if e.to_string() == "OpaqueUnaryFn_sqrt(FloatTrueDiv(2.0, zf36))"), "{k:?}");
        assert!(matches!(parse_annotation("Sym(Eq(s0, 2))").unwrap(), ValueKind::SymBool(_)));
        assert!(matches!(parse_annotation("f32[s0, 3]").unwrap(), ValueKind::Tensor(t) if t.strides.len() == 2));
        assert!(parse_annotation("q99[3]").is_err());
        assert!(parse_annotation("f32[3][1, 1]").is_err());
    }
}
