//! Schema types → `ir`: resolves names to typed ids, parses symbolic expressions, checks that
//! every reference points at something defined earlier.

use std::collections::HashMap;
use std::io::{Read, Seek};

use super::archive::{Archive, MAX_JSON_BYTES};
use super::schema::{self, Argument, InputSpec};
use super::{weights, Layout, Pt2Error, SUPPORTED_SCHEMA_MAJOR};
use crate::ir::{
    Arg, DType, Format, Graph, Guard, InputKind, Model, ModuleFrame, NamedArg, NodeMeta, Origin, SymIntArg, SymbolInfo, Weight, WeightData,
    TensorMeta, UnreadGuard, ValueId, ValueKind,
};
use crate::sym::{parse_infix_with, parse_srepr, Expr, Range};

pub(super) fn load_archive<R: Read + Seek>(
    file: &str,
    archive: &mut Archive<R>,
    layout: &Layout,
) -> Result<Model, Pt2Error> {
    let mut model = Model::new(Format::Pt2, file);
    for (model_name, entry) in &layout.models {
        let bytes = archive.read(entry, MAX_JSON_BYTES)?;
        let mut ep = parse_program(file, entry, &bytes)?;
        super::inline::inline_wrappers(&mut ep.graph_module.graph);
        if model.torch_version.is_none() {
            model.torch_version = ep.torch_version.clone();
        }
        let mut cx = Cx { file, entry, exprs: HashMap::new(), hints: HashMap::new() };
        let graph = cx.graph(model_name, &ep)?;
        cx.symbols(&ep, &mut model.symbols)?;
        cx.guards(&ep, &graph, &mut model);
        model.graphs.push(graph);
        if layout.legacy {
            let reason = "the pre-2.7 archive layout keeps weights pickled (serialized_state_dict.pt), and the \
                          workbench never unpickles: graphs and shapes load, weight values do not";
            model.warnings.push(format!("{file}: {reason}"));
            let g = model.graphs.last().expect("pushed above");
            for (v, kind) in &g.inputs {
                if let (Some(fqn), Some(meta)) = (kind.fqn(), g.value(*v).tensor()) {
                    let data = WeightData::Unavailable(reason.to_string());
                    model.weights.insert(fqn.to_string(), Weight { fqn: fqn.to_string(), meta: meta.clone(), data });
                }
            }
        } else {
            weights::load(file, archive, layout, model_name, &mut cx, &mut model)?;
        }
    }
    Ok(model)
}

fn parse_program(file: &str, entry: &str, bytes: &[u8]) -> Result<schema::ExportedProgram, Pt2Error> {
    // Fast path first; the path-tracking parser (slower) runs only to explain a failure.
    if let Ok(ep) = serde_json::from_slice::<schema::ExportedProgram>(bytes) {
        check_version(file, entry, ep.schema_version)?;
        return Ok(ep);
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    match serde_path_to_error::deserialize::<_, schema::ExportedProgram>(&mut de) {
        Ok(ep) => {
            check_version(file, entry, ep.schema_version)?;
            Ok(ep)
        }
        Err(err) => {
            // A structural error in a file of another schema version is best reported as that.
            if let Ok(v) = serde_json::from_slice::<schema::VersionOnly>(bytes) {
                check_version(file, entry, v.schema_version)?;
            }
            Err(Pt2Error::Json {
                file: file.to_string(),
                entry: entry.to_string(),
                path: err.path().to_string(),
                detail: err.into_inner().to_string(),
            })
        }
    }
}

fn check_version(file: &str, entry: &str, v: Option<schema::SchemaVersion>) -> Result<(), Pt2Error> {
    match v {
        Some(v) if SUPPORTED_SCHEMA_MAJOR.contains(&v.major) => Ok(()),
        Some(v) => Err(Pt2Error::SchemaVersion {
            file: file.to_string(),
            entry: entry.to_string(),
            major: v.major,
            minor: v.minor,
        }),
        None => Err(Pt2Error::At {
            file: file.to_string(),
            entry: entry.to_string(),
            path: "schema_version".into(),
            message: "missing; every torch.export archive records its schema version".into(),
        }),
    }
}

/// Conversion context: where we are (for messages) and the expression cache.
pub(super) struct Cx<'a> {
    file: &'a str,
    entry: &'a str,
    /// Archives repeat the same few expression strings thousands of times: parse each once.
    exprs: HashMap<String, Expr>,
    hints: HashMap<String, i64>,
}

impl Cx<'_> {
    fn err(&self, path: impl Into<String>, message: impl Into<String>) -> Pt2Error {
        Pt2Error::At {
            file: self.file.to_string(),
            entry: self.entry.to_string(),
            path: path.into(),
            message: message.into(),
        }
    }

    fn expr(&mut self, text: &str, path: &dyn Fn() -> String) -> Result<Expr, Pt2Error> {
        if let Some(e) = self.exprs.get(text) {
            return Ok(e.clone());
        }
        let e = parse_srepr(text).map_err(|e| self.err(path(), format!("expression `{text}`: {e}")))?;
        self.exprs.insert(text.to_string(), e.clone());
        Ok(e)
    }

    fn sym_int(&mut self, s: &schema::SymInt, path: &dyn Fn() -> String) -> Result<Expr, Pt2Error> {
        match s {
            schema::SymInt::AsInt(i) => Ok(Expr::int(*i)),
            schema::SymInt::AsExpr(e) => {
                let expr = self.expr(&e.expr_str, path)?;
                if let (Expr::Symbol(name), Some(schema::Hint::AsInt(h))) = (&expr, &e.hint) {
                    self.hints.entry(name.to_string()).or_insert(*h);
                }
                Ok(expr)
            }
        }
    }

    pub(super) fn tensor_meta(&mut self, t: &schema::TensorMeta, path: &str) -> Result<TensorMeta, Pt2Error> {
        let dtype = DType::from_schema_code(t.dtype)
            .ok_or_else(|| self.err(format!("{path}.dtype"), format!("unknown scalar type code {}", t.dtype)))?;
        let mut sizes = Vec::with_capacity(t.sizes.len());
        for (i, s) in t.sizes.iter().enumerate() {
            sizes.push(self.sym_int(s, &|| format!("{path}.sizes[{i}]"))?);
        }
        let mut strides = Vec::with_capacity(t.strides.len());
        for (i, s) in t.strides.iter().enumerate() {
            strides.push(self.sym_int(s, &|| format!("{path}.strides[{i}]"))?);
        }
        if strides.len() != sizes.len() {
            return Err(self.err(
                format!("{path}.strides"),
                format!("{} strides for {} sizes", strides.len(), sizes.len()),
            ));
        }
        let storage_offset = self.sym_int(&t.storage_offset, &|| format!("{path}.storage_offset"))?;
        Ok(TensorMeta {
            dtype,
            sizes,
            strides,
            storage_offset,
            device: t.device.to_string(),
            requires_grad: t.requires_grad,
        })
    }

    fn graph(&mut self, name: &str, ep: &schema::ExportedProgram) -> Result<Graph, Pt2Error> {
        let g = &ep.graph_module.graph;
        let mut graph = Graph::new(name);
        graph.torch_version = ep.torch_version.clone();
        let specs = input_kinds(&ep.graph_module.signature.input_specs);
        for (i, input) in g.inputs.iter().enumerate() {
            let path = format!("graph_module.graph.inputs[{i}]");
            let Some((value_name, kind)) = self.output_value(g, input, &path)? else { continue };
            let spec = specs.get(value_name.as_str()).cloned().unwrap_or(InputKind::UserInput);
            graph.add_input(&value_name, kind, spec).map_err(|e| self.err(&path, e.to_string()))?;
        }
        for (i, node) in g.nodes.iter().enumerate() {
            let path = format!("graph_module.graph.nodes[{i}]");
            let target = node.target.strip_prefix("torch.ops.").unwrap_or(&node.target);
            let mut args = Vec::with_capacity(node.inputs.len());
            for (j, a) in node.inputs.iter().enumerate() {
                let arg = self.arg(&graph, &a.arg, &format!("{path}.inputs[{j}].arg"))?;
                args.push(NamedArg { name: a.name.clone(), arg, kwarg: a.kind == Some(2) });
            }
            let mut outputs = Vec::new();
            for (j, o) in node.outputs.iter().enumerate() {
                let opath = format!("{path}.outputs[{j}]");
                if let Argument::Tensors(names) = o {
                    for (k, n) in names.iter().enumerate() {
                        let meta = self.tensor_value(g, n, &format!("{opath}.as_tensors[{k}]"))?;
                        outputs.push((n.clone(), ValueKind::Tensor(meta)));
                    }
                } else if let Argument::OptionalTensors(names) = o {
                    for (k, n) in names.iter().enumerate() {
                        if let Some(n) = n {
                            let meta = self.tensor_value(g, n, &format!("{opath}.as_optional_tensors[{k}]"))?;
                            outputs.push((n.clone(), ValueKind::Tensor(meta)));
                        }
                    }
                } else if let Some(out) = self.output_value(g, o, &opath)? {
                    outputs.push(out);
                }
            }
            let node_name = node
                .name
                .clone()
                .or_else(|| outputs.first().map(|(n, _)| n.clone()))
                .unwrap_or_else(|| format!("node_{i}"));
            let meta = node_meta(&node.metadata);
            graph
                .add_node(&node_name, target, args, outputs, meta)
                .map_err(|e| self.err(&path, e.to_string()))?;
        }
        for (i, o) in g.outputs.iter().enumerate() {
            let arg = self.arg(&graph, o, &format!("graph_module.graph.outputs[{i}]"))?;
            graph.outputs.push(arg);
        }
        Ok(graph)
    }

    fn tensor_value(&mut self, g: &schema::Graph, name: &str, path: &str) -> Result<TensorMeta, Pt2Error> {
        let t = g.tensor_values.get(name).ok_or_else(|| {
            self.err(path, format!("tensor `{name}` has no entry in graph_module.graph.tensor_values"))
        })?;
        self.tensor_meta(t, &format!("graph_module.graph.tensor_values.{name}"))
    }

    /// The value an input/output argument defines, or `None` for constants that define nothing.
    fn output_value(
        &mut self,
        g: &schema::Graph,
        a: &Argument,
        path: &str,
    ) -> Result<Option<(String, ValueKind)>, Pt2Error> {
        Ok(match a {
            Argument::Tensor(n) => Some((n.clone(), ValueKind::Tensor(self.tensor_value(g, n, path)?))),
            Argument::SymInt(schema::SymIntArgument::AsName(n)) => {
                let v = g.sym_int_values.get(n).ok_or_else(|| {
                    self.err(path, format!("sym int `{n}` has no entry in graph_module.graph.sym_int_values"))
                })?;
                let e = self.sym_int(v, &|| format!("graph_module.graph.sym_int_values.{n}"))?;
                Some((n.clone(), ValueKind::SymInt(e)))
            }
            Argument::SymBool(schema::SymBoolArgument::AsName(n)) => {
                let e = match g.sym_bool_values.get(n) {
                    Some(schema::SymBool::AsBool(b)) => Expr::Bool(*b),
                    Some(schema::SymBool::AsExpr(e)) => {
                        self.expr(&e.expr_str, &|| format!("graph_module.graph.sym_bool_values.{n}"))?
                    }
                    None => {
                        return Err(self.err(path, format!("sym bool `{n}` has no entry in sym_bool_values")));
                    }
                };
                Some((n.clone(), ValueKind::SymBool(e)))
            }
            Argument::SymFloat(schema::SymFloatArgument::AsName(n)) => {
                let e = match g.sym_float_values.get(n) {
                    Some(schema::SymFloat::AsFloat(f)) => Expr::Float(f.0.to_bits()),
                    Some(schema::SymFloat::AsExpr(e)) => {
                        self.expr(&e.expr_str, &|| format!("graph_module.graph.sym_float_values.{n}"))?
                    }
                    None => {
                        return Err(self.err(path, format!("sym float `{n}` has no entry in sym_float_values")));
                    }
                };
                Some((n.clone(), ValueKind::SymFloat(e)))
            }
            Argument::Other { kind, .. } if kind == "as_custom_obj" => None,
            _ => None,
        })
    }

    fn lookup(&self, graph: &Graph, name: &str, path: &str) -> Result<ValueId, Pt2Error> {
        graph.value_id(name).ok_or_else(|| {
            self.err(path, format!("refers to `{name}`, which no graph input or earlier node defines (dangling reference)"))
        })
    }

    fn arg(&mut self, graph: &Graph, a: &Argument, path: &str) -> Result<Arg, Pt2Error> {
        let sym_int = |cx: &Self, s: &schema::SymIntArgument, p: &str| -> Result<SymIntArg, Pt2Error> {
            Ok(match s {
                schema::SymIntArgument::AsInt(i) => SymIntArg::Int(*i),
                schema::SymIntArgument::AsName(n) => SymIntArg::Value(cx.lookup(graph, n, p)?),
            })
        };
        Ok(match a {
            Argument::None => Arg::None,
            Argument::Tensor(n) => Arg::Tensor(self.lookup(graph, n, &format!("{path}.as_tensor"))?),
            Argument::Tensors(ns) => Arg::Tensors(
                ns.iter()
                    .enumerate()
                    .map(|(i, n)| self.lookup(graph, n, &format!("{path}.as_tensors[{i}]")))
                    .collect::<Result<_, _>>()?,
            ),
            Argument::OptionalTensors(ns) => Arg::OptionalTensors(
                ns.iter()
                    .enumerate()
                    .map(|(i, n)| match n {
                        Some(n) => self.lookup(graph, n, &format!("{path}.as_optional_tensors[{i}]")).map(Some),
                        None => Ok(None),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Argument::Int(i) => Arg::Int(*i),
            Argument::Ints(v) => Arg::Ints(v.clone()),
            Argument::Float(f) => Arg::Float(*f),
            Argument::Floats(v) => Arg::Floats(v.clone()),
            Argument::String(s) => Arg::String(s.clone()),
            Argument::Strings(v) => Arg::Strings(v.clone()),
            Argument::Bool(b) => Arg::Bool(*b),
            Argument::Bools(v) => Arg::Bools(v.clone()),
            Argument::SymInt(s) => Arg::SymInt(sym_int(self, s, &format!("{path}.as_sym_int"))?),
            Argument::SymInts(v) => Arg::SymInts(
                v.iter()
                    .enumerate()
                    .map(|(i, s)| sym_int(self, s, &format!("{path}.as_sym_ints[{i}]")))
                    .collect::<Result<_, _>>()?,
            ),
            Argument::SymBool(schema::SymBoolArgument::AsName(n)) => {
                Arg::SymBool(self.lookup(graph, n, &format!("{path}.as_sym_bool"))?)
            }
            Argument::SymBool(schema::SymBoolArgument::AsBool(b)) => Arg::Bool(*b),
            Argument::SymFloat(schema::SymFloatArgument::AsName(n)) => {
                Arg::SymFloat(self.lookup(graph, n, &format!("{path}.as_sym_float"))?)
            }
            Argument::SymFloat(schema::SymFloatArgument::AsFloat(f)) => Arg::Float(f.0),
            Argument::ScalarType(c) => Arg::ScalarType(
                DType::from_schema_code(*c)
                    .ok_or_else(|| self.err(format!("{path}.as_scalar_type"), format!("unknown scalar type code {c}")))?,
            ),
            Argument::MemoryFormat(c) => Arg::MemoryFormat(memory_format_name(*c).to_string()),
            Argument::Layout(c) => Arg::Layout(layout_name(*c).to_string()),
            Argument::Device(d) => Arg::Device(d.to_string()),
            Argument::Other { kind, json } => Arg::Opaque { kind: kind.clone(), json: json.clone() },
        })
    }

    fn symbols(&mut self, ep: &schema::ExportedProgram, out: &mut Vec<SymbolInfo>) -> Result<(), Pt2Error> {
        let mut names: Vec<&String> = ep.range_constraints.keys().collect();
        names.sort();
        for name in names {
            let rc = &ep.range_constraints[name];
            let path = format!("range_constraints.{name}");
            let min = match &rc.min_val {
                Some(n) => number_to_i128(n).ok_or_else(|| self.err(&path, format!("min_val {n} is not an integer")))?,
                None => 0,
            };
            let max = match &rc.max_val {
                Some(n) => Some(number_to_i128(n).ok_or_else(|| self.err(&path, format!("max_val {n} is not an integer")))?),
                None => None,
            };
            if let Some(max) = max {
                if max < min {
                    return Err(self.err(&path, format!("empty range [{min}, {max}]")));
                }
            }
            if out.iter().any(|s| &s.name == name) {
                continue;
            }
            out.push(SymbolInfo { name: name.clone(), range: Range { min, max }, hint: self.hints.get(name).copied() });
        }
        Ok(())
    }

    /// `guards_code` holds Python conditions over the inputs (`L['y'].size()[0] == L['x'].size()[0]`).
    fn guards(&mut self, ep: &schema::ExportedProgram, graph: &Graph, model: &mut Model) {
        let forward_names: Vec<String> = ep
            .graph_module
            .module_call_graph
            .iter()
            .find(|m| m.fqn.is_empty())
            .and_then(|m| m.signature.as_ref())
            .and_then(|s| s.forward_arg_names.clone())
            .unwrap_or_default();
        let user_inputs: Vec<ValueId> =
            graph.inputs.iter().filter(|(_, k)| *k == InputKind::UserInput).map(|(v, _)| *v).collect();
        for (i, code) in ep.guards_code.iter().enumerate() {
            let mut resolve = |atom: &str| source_atom(atom, graph, &forward_names, &user_inputs);
            match parse_infix_with(code, &mut resolve) {
                Ok(expr) => model.guards.push(Guard { expr, source: code.clone() }),
                Err(e) => {
                    model.unread_guards.push(UnreadGuard { source: code.clone(), reason: e.to_string() });
                    model.warnings.push(format!(
                        "{}: {}: guards_code[{i}] `{code}` is shown but not evaluated: {e}",
                        self.file, self.entry
                    ))
                }
            }
        }
    }
}

/// Resolves `L['x'].size()[0]` (and `.stride()[i]`, `.storage_offset()`) to the input's expression.
fn source_atom(atom: &str, graph: &Graph, forward_names: &[String], user_inputs: &[ValueId]) -> Option<Expr> {
    let rest = atom.strip_prefix("L['")?;
    let (name, rest) = rest.split_once("']")?;
    let value = graph
        .value_id(name)
        .filter(|v| user_inputs.contains(v))
        .or_else(|| forward_names.iter().position(|n| n == name).and_then(|i| user_inputs.get(i).copied()))?;
    let meta = graph.value(value).tensor()?;
    let index = |s: &str, method: &str| -> Option<usize> {
        s.strip_prefix(method)?.strip_prefix("()[")?.strip_suffix(']')?.parse().ok()
    };
    if let Some(i) = index(rest, ".size") {
        return meta.sizes.get(i).cloned();
    }
    if let Some(i) = index(rest, ".stride") {
        return meta.strides.get(i).cloned();
    }
    if rest == ".storage_offset()" {
        return Some(meta.storage_offset.clone());
    }
    None
}

fn number_to_i128(n: &serde_json::Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i as i128);
    }
    if let Some(u) = n.as_u64() {
        return Some(u as i128);
    }
    // Beyond 64 bits serde_json yields a float; keep it only if it is integral and representable.
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 1.0e38).then_some(f as i128)
}

fn input_kinds(specs: &[InputSpec]) -> HashMap<&str, InputKind> {
    let mut m = HashMap::new();
    for s in specs {
        match s {
            InputSpec::Parameter { arg, parameter_name } => {
                m.insert(arg.name.as_str(), InputKind::Parameter { fqn: parameter_name.clone() });
            }
            InputSpec::Buffer { arg, buffer_name, persistent } => {
                m.insert(arg.name.as_str(), InputKind::Buffer { fqn: buffer_name.clone(), persistent: *persistent });
            }
            InputSpec::TensorConstant { arg, tensor_constant_name } => {
                m.insert(arg.name.as_str(), InputKind::TensorConstant { fqn: tensor_constant_name.clone() });
            }
            InputSpec::CustomObj { arg, custom_obj_name } => {
                m.insert(arg.name.as_str(), InputKind::CustomObject { fqn: custom_obj_name.clone() });
            }
            InputSpec::Token(_) | InputSpec::UserInput(_) | InputSpec::ConstantInput(_) => {}
        }
    }
    m
}

fn memory_format_name(code: i64) -> &'static str {
    match code {
        1 => "contiguous_format",
        2 => "channels_last",
        3 => "channels_last_3d",
        4 => "preserve_format",
        _ => "unknown",
    }
}

fn layout_name(code: i64) -> &'static str {
    match code {
        1 => "sparse_coo",
        2 => "sparse_csr",
        3 => "sparse_csc",
        4 => "sparse_bsr",
        5 => "sparse_bsc",
        6 => "_mkldnn",
        7 => "strided",
        _ => "unknown",
    }
}

/// Node metadata is a map of strings; `custom` and `from_node` are JSON inside those strings.
fn node_meta(md: &HashMap<String, String>) -> NodeMeta {
    let mut meta = NodeMeta {
        stack_trace: md.get("stack_trace").cloned(),
        torch_fn: md.get("torch_fn").cloned(),
        ..NodeMeta::default()
    };
    if let Some(stack) = md.get("nn_module_stack") {
        meta.nn_module_stack = parse_module_stack(stack);
    }
    if let Some(custom) = md.get("custom") {
        if let Ok(serde_json::Value::Object(obj)) = serde_json::from_str::<serde_json::Value>(custom) {
            meta.custom = obj.into_iter().collect();
        }
    }
    if let Some(from) = md.get("from_node") {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(from) {
            let mut cur = v.as_array().and_then(|a| a.first()).cloned();
            // Most recent pass first; follow the first chain back to the original node.
            while let Some(entry) = cur {
                if let Some(n) = entry.get("name").and_then(|n| n.as_str()) {
                    let target = entry.get("target").and_then(|t| t.as_str()).unwrap_or("");
                    let target = target.strip_prefix("torch.ops.").unwrap_or(target);
                    meta.from_node.push(Origin { name: n.to_string(), target: target.to_string() });
                }
                cur = entry.get("from_node").and_then(|f| f.as_array()).and_then(|a| a.first()).cloned();
            }
        }
    }
    meta
}

/// `key,path,class;key,path,class` where only the path may itself contain commas.
fn parse_module_stack(text: &str) -> Vec<ModuleFrame> {
    text.split(';')
        .filter(|s| !s.is_empty())
        .filter_map(|entry| {
            let (key, rest) = entry.split_once(',')?;
            let (path, class) = rest.rsplit_once(',')?;
            Some(ModuleFrame { key: key.to_string(), path: path.to_string(), class: class.to_string() })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_stack_keeps_commas_inside_paths() {
        let s = parse_module_stack("L__self__,,__main__.MLP;L__self___l,getattr(L['self'].layers, '0'),torch.nn.Linear");
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].path, "");
        assert_eq!(s[1].path, "getattr(L['self'].layers, '0')");
        assert_eq!(s[1].class, "torch.nn.Linear");
    }

    #[test]
    fn from_node_follows_the_first_chain() {
        let mut md = HashMap::new();
        md.insert(
            "from_node".to_string(),
            r#"[{"name": "linear", "target": "aten.linear.default", "from_node": [{"name": "linear0", "target": "aten.linear.default", "from_node": []}]}]"#.to_string(),
        );
        let names: Vec<String> = node_meta(&md).from_node.into_iter().map(|o| o.name).collect();
        assert_eq!(names, vec!["linear", "linear0"]);
    }
}
