//! `ModelProto` → [`Model`]: initializers become parameters (and weights), graph inputs become
//! user inputs whose `dim_param`s are symbols, nodes become `onnx.<OpType>` nodes whose outputs
//! get inferred symbolic shapes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use super::data::{self, int_values, tensor_bytes};
use super::proto::{attr_type, AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, ValueInfoProto};
use super::shape::{self, Attrs, Info, Inputs, Known, Outputs, MAX_KNOWN};
use super::{OnnxError, MAX_EXTERNAL_BYTES};
use crate::ir::{
    Arg, Format, Graph, InputKind, Model, NamedArg, NodeMeta, SymbolInfo, TensorMeta, ValueKind, Weight, WeightData,
};
use crate::sym::{parse_infix, Expr, Range};

pub(super) fn convert(file: &str, model: &ModelProto, dir: Option<&Path>) -> Result<Model, OnnxError> {
    let g = model.graph.as_ref().ok_or_else(|| OnnxError::NoGraph { file: file.to_string() })?;
    let mut cx = Cx {
        file,
        dir,
        budget: MAX_EXTERNAL_BYTES,
        graph: Graph::new(g.name.as_deref().filter(|n| !n.is_empty()).unwrap_or("main_graph")),
        infos: HashMap::new(),
        known: Known::new(),
        symbols: BTreeSet::new(),
        warnings: Vec::new(),
        unsupported: BTreeMap::new(),
    };
    let mut out = Model::new(Format::Onnx, file);
    let declared = cx.declared(g);
    cx.initializers(g, &mut out.weights)?;
    for vi in &g.input {
        let name = vi.name.clone().unwrap_or_default();
        if cx.graph.value_id(&name).is_some() {
            continue; // an initializer also listed as input (IR < 4)
        }
        let info = declared.get(&name).cloned().flatten();
        let kind = cx.kind(&name, info.as_ref());
        cx.graph.add_input(&name, kind, InputKind::UserInput).map_err(|e| cx.node_err(&name, e.to_string()))?;
        if let Some(i) = info {
            cx.infos.insert(name, i);
        }
    }
    for (i, node) in g.node.iter().enumerate() {
        cx.node(i, node, &declared)?;
    }
    for vi in &g.output {
        let name = vi.name.clone().unwrap_or_default();
        let v = cx.graph.value_id(&name).ok_or_else(|| cx.node_err("graph output", format!("`{name}` is produced by no node or input")))?;
        cx.graph.outputs.push(Arg::Tensor(v));
    }
    for (op, (node, why)) in &cx.unsupported {
        cx.warnings.push(format!("{file}: node {node}: no shape inference for {op} ({why}); its outputs use the file's value_info or are unknown"));
    }
    out.symbols = cx
        .symbols
        .iter()
        .map(|name| SymbolInfo { name: name.clone(), range: Range { min: 1, max: None }, hint: Some(1) })
        .collect();
    out.warnings = cx.warnings;
    out.graphs.push(cx.graph);
    Ok(out)
}

struct Cx<'a> {
    file: &'a str,
    dir: Option<&'a Path>,
    budget: u64,
    graph: Graph,
    infos: HashMap<String, Info>,
    known: Known,
    symbols: BTreeSet<String>,
    warnings: Vec<String>,
    /// Op type → (first node, why) for ops whose shapes were not inferred.
    unsupported: BTreeMap<String, (String, String)>,
}

impl Cx<'_> {
    fn node_err(&self, node: &str, message: String) -> OnnxError {
        OnnxError::Node { file: self.file.to_string(), node: node.to_string(), message }
    }

    /// Shapes the file declares (`input`, `output`, `value_info`); `None` for a declared value
    /// without a usable shape.
    fn declared(&mut self, g: &GraphProto) -> HashMap<String, Option<Info>> {
        let mut out = HashMap::new();
        for vi in g.input.iter().chain(&g.output).chain(&g.value_info) {
            let name = vi.name.clone().unwrap_or_default();
            let info = self.value_info(vi);
            out.insert(name, info);
        }
        out
    }

    fn value_info(&mut self, vi: &ValueInfoProto) -> Option<Info> {
        let t = vi.r#type.as_ref()?.tensor_type.as_ref()?;
        let dtype = t.elem_type.and_then(data::dtype);
        let dims = &t.shape.as_ref()?.dim;
        let mut shape = Vec::with_capacity(dims.len());
        for d in dims {
            match (d.dim_value, d.dim_param.as_deref()) {
                (Some(v), _) if v >= 0 => shape.push(Expr::int(v)),
                (_, Some(p)) if !p.is_empty() => {
                    let e = parse_infix(p).unwrap_or_else(|_| Expr::symbol(&sanitize(p)));
                    for s in e.free_symbols() {
                        self.symbols.insert(s.to_string());
                    }
                    shape.push(e);
                }
                _ => return None,
            }
        }
        Some(Info { dtype, shape })
    }

    fn kind(&mut self, name: &str, info: Option<&Info>) -> ValueKind {
        match info {
            Some(Info { dtype: Some(dtype), shape }) => ValueKind::Tensor(TensorMeta {
                dtype: *dtype,
                sizes: shape.clone(),
                strides: TensorMeta::contiguous_strides(shape),
                storage_offset: Expr::int(0),
                device: "cpu".into(),
                requires_grad: false,
            }),
            Some(Info { dtype: None, .. }) => ValueKind::Other(format!("tensor `{name}` of an element type this build does not name")),
            None => ValueKind::Other("unknown shape".into()),
        }
    }

    fn initializers(&mut self, g: &GraphProto, weights: &mut BTreeMap<String, Weight>) -> Result<(), OnnxError> {
        for t in &g.initializer {
            let name = t.name.clone().unwrap_or_default();
            let terr = |message: String| OnnxError::Tensor { file: self.file.to_string(), tensor: name.clone(), message };
            let code = t.data_type.unwrap_or(0);
            let dtype = data::dtype(code).ok_or_else(|| terr(format!("element type {code} is not supported")))?;
            if t.dims.iter().any(|&d| d < 0) {
                return Err(terr(format!("negative dims {:?}", t.dims)));
            }
            let shape: Vec<Expr> = t.dims.iter().map(|&d| Expr::int(d)).collect();
            let info = Info { dtype: Some(dtype), shape: shape.clone() };
            let bytes = tensor_bytes(t, dtype, self.dir, &mut self.budget);
            let data = match bytes {
                Ok(b) => {
                    if let Some(vals) = int_values(&b, dtype).filter(|v| v.len() <= MAX_KNOWN && t.dims.len() <= 1) {
                        self.known.insert(name.clone(), vals.into_iter().map(Expr::int).collect());
                    }
                    WeightData::Bytes(Arc::new(b))
                }
                // Data this importer cannot place (bad external file, size mismatch) is an error:
                // a silently zeroed weight would mislead every numeric comparison.
                Err(m) => return Err(terr(m)),
            };
            let kind = self.kind(&name, Some(&info));
            let meta = match &kind {
                ValueKind::Tensor(m) => m.clone(),
                _ => return Err(terr("not a tensor".into())),
            };
            self.graph
                .add_input(&name, kind, InputKind::Parameter { fqn: name.clone() })
                .map_err(|e| terr(e.to_string()))?;
            self.infos.insert(name.clone(), info);
            weights.insert(name.clone(), Weight { fqn: name.clone(), meta, data });
        }
        Ok(())
    }

    fn node(&mut self, index: usize, node: &NodeProto, declared: &HashMap<String, Option<Info>>) -> Result<(), OnnxError> {
        let op = node.op_type.clone().unwrap_or_default();
        let name = node.name.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| format!("{op}_{index}"));
        let domain = node.domain.as_deref().filter(|d| !d.is_empty() && *d != "ai.onnx").unwrap_or("onnx");
        let target = format!("{domain}.{op}");
        let mut args = Vec::new();
        for (i, input) in node.input.iter().enumerate() {
            let arg = if input.is_empty() {
                Arg::None
            } else {
                let v = self
                    .graph
                    .value_id(input)
                    .ok_or_else(|| self.node_err(&name, format!("input `{input}` is produced by no earlier node, input or initializer")))?;
                Arg::Tensor(v)
            };
            args.push(NamedArg { name: format!("input{i}"), arg, kwarg: false });
        }
        for a in &node.attribute {
            args.push(NamedArg { name: a.name.clone().unwrap_or_default(), arg: self.attribute(&name, a), kwarg: true });
        }

        let inferred = self.infer(&op, node);
        let mut outputs = Vec::new();
        for (i, out) in node.output.iter().enumerate() {
            let out_name = if out.is_empty() { format!("{name}:unused{i}") } else { out.clone() };
            let info = match &inferred {
                Ok(v) => v.get(i).map(|(info, _)| info.clone()),
                Err(_) => None,
            }
            .or_else(|| declared.get(out).cloned().flatten());
            if let Ok(v) = &inferred {
                if let Some((_, Some(k))) = v.get(i) {
                    if k.len() <= MAX_KNOWN {
                        self.known.insert(out_name.clone(), k.clone());
                    }
                }
            }
            // A dtype the rule could not tell (ConstantOfShape, Constant) comes from the file.
            let info = info.map(|mut inf| {
                if inf.dtype.is_none() {
                    inf.dtype = declared.get(out).cloned().flatten().and_then(|d| d.dtype);
                }
                inf
            });
            let kind = self.kind(&out_name, info.as_ref());
            if let Some(inf) = info {
                self.infos.insert(out_name.clone(), inf);
            }
            outputs.push((out_name, kind));
        }
        if let Err(why) = inferred {
            self.unsupported.entry(op.clone()).or_insert((name.clone(), why));
        }
        let meta = node_meta(node);
        self.graph.add_node(&name, &target, args, outputs, meta).map_err(|e| self.node_err(&name, e.to_string()))?;
        Ok(())
    }

    fn infer(&mut self, op: &str, node: &NodeProto) -> Result<Outputs, String> {
        if op == "Constant" {
            return self.constant(node);
        }
        let infos: Vec<Option<&Info>> =
            node.input.iter().map(|n| if n.is_empty() { None } else { self.infos.get(n) }).collect();
        let known: Vec<Option<&Vec<Expr>>> = node.input.iter().map(|n| self.known.get(n)).collect();
        let mut r = shape::infer(op, &Attrs(&node.attribute), &Inputs { infos, known }, node.output.len())?;
        if op == "ConstantOfShape" {
            let dt = node
                .attribute
                .iter()
                .find(|a| a.name.as_deref() == Some("value"))
                .and_then(|a| a.t.as_ref())
                .and_then(|t| t.data_type)
                .and_then(data::dtype)
                .or(Some(crate::ir::DType::F32));
            r.iter_mut().for_each(|(i, _)| i.dtype = dt);
        }
        Ok(r)
    }

    fn constant(&mut self, node: &NodeProto) -> Result<Outputs, String> {
        let a = node.attribute.first().ok_or("Constant without a value attribute")?;
        let ints = |v: Vec<i64>, scalar: bool| {
            let shape = if scalar { vec![] } else { vec![Expr::int(v.len() as i64)] };
            let known = (v.len() <= MAX_KNOWN).then(|| v.into_iter().map(Expr::int).collect());
            Ok(vec![(Info { dtype: Some(crate::ir::DType::I64), shape }, known)])
        };
        match a.name.as_deref() {
            Some("value") => {
                let t: &TensorProto = a.t.as_ref().ok_or("Constant `value` is not a tensor")?;
                let dtype = t.data_type.and_then(data::dtype).ok_or("Constant of an unsupported element type")?;
                let shape = t.dims.iter().map(|&d| Expr::int(d)).collect();
                let known = tensor_bytes(t, dtype, self.dir, &mut self.budget)
                    .ok()
                    .and_then(|b| int_values(&b, dtype))
                    .filter(|v| v.len() <= MAX_KNOWN && t.dims.len() <= 1)
                    .map(|v| v.into_iter().map(Expr::int).collect());
                Ok(vec![(Info { dtype: Some(dtype), shape }, known)])
            }
            Some("value_int") => ints(vec![a.i.unwrap_or(0)], true),
            Some("value_ints") => ints(a.ints.clone(), false),
            Some("value_float") => Ok(vec![(Info { dtype: Some(crate::ir::DType::F32), shape: vec![] }, None)]),
            Some("value_floats") => {
                Ok(vec![(Info { dtype: Some(crate::ir::DType::F32), shape: vec![Expr::int(a.floats.len() as i64)] }, None)])
            }
            other => Err(format!("Constant attribute {other:?} is not supported")),
        }
    }

    fn attribute(&mut self, node: &str, a: &AttributeProto) -> Arg {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match a.r#type.unwrap_or(0) {
            attr_type::FLOAT => Arg::Float(a.f.unwrap_or(0.0) as f64),
            attr_type::INT => Arg::Int(a.i.unwrap_or(0)),
            attr_type::STRING => Arg::String(text(a.s.as_deref().unwrap_or_default())),
            attr_type::FLOATS => Arg::Floats(a.floats.iter().map(|&f| f as f64).collect()),
            attr_type::INTS => Arg::Ints(a.ints.clone()),
            attr_type::STRINGS => Arg::Strings(a.strings.iter().map(|s| text(s)).collect()),
            attr_type::TENSOR => {
                let t = a.t.clone().unwrap_or_default();
                let json = serde_json::json!({"dims": t.dims, "data_type": t.data_type}).to_string();
                Arg::Opaque { kind: "onnx.tensor".into(), json }
            }
            attr_type::GRAPH => {
                self.warnings.push(format!(
                    "{}: node {node}: subgraph attribute `{}` is not imported",
                    self.file,
                    a.name.as_deref().unwrap_or("")
                ));
                Arg::Opaque { kind: "onnx.graph".into(), json: "{}".into() }
            }
            other => Arg::Opaque { kind: format!("onnx.attribute.{other}"), json: "null".into() },
        }
    }
}

/// The exporter's provenance, as `torch.onnx` (dynamo) records it in node metadata.
fn node_meta(node: &NodeProto) -> NodeMeta {
    let mut meta = NodeMeta::default();
    for p in &node.metadata_props {
        let (Some(k), Some(v)) = (p.key.as_deref(), p.value.as_deref()) else { continue };
        match k {
            "pkg.torch.onnx.stack_trace" => meta.stack_trace = Some(v.to_string()),
            _ if k.starts_with("pkg.torch.onnx.") => {
                meta.custom.insert(k.to_string(), serde_json::Value::String(v.to_string()));
            }
            _ => {}
        }
    }
    meta
}

/// A `dim_param` that is not an expression (`batch size`, `unk__3`) as a symbol name.
fn sanitize(p: &str) -> String {
    p.chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::super::proto::{Dimension, TensorShapeProto, TypeProto, TypeProtoTensor};
    use super::*;

    fn vi(name: &str, dims: &[&str]) -> ValueInfoProto {
        let dim = dims
            .iter()
            .map(|d| match d.parse::<i64>() {
                Ok(v) => Dimension { dim_value: Some(v), dim_param: None },
                Err(_) => Dimension { dim_value: None, dim_param: Some(d.to_string()) },
            })
            .collect();
        ValueInfoProto {
            name: Some(name.into()),
            r#type: Some(TypeProto {
                tensor_type: Some(TypeProtoTensor { elem_type: Some(1), shape: Some(TensorShapeProto { dim }) }),
            }),
        }
    }

    fn node(op: &str, input: &str, output: &str) -> NodeProto {
        NodeProto {
            input: vec![input.into()],
            output: vec![output.into()],
            op_type: Some(op.into()),
            ..NodeProto::default()
        }
    }

    #[test]
    fn ops_without_a_rule_use_value_info_or_are_unknown_with_a_warning() {
        let graph = GraphProto {
            node: vec![node("Relu", "x", "r"), node("FancyOp", "r", "f"), node("FancyOp", "f", "g")],
            input: vec![vi("x", &["n", "4"])],
            output: vec![vi("g", &[])],
            value_info: vec![vi("f", &["n", "2"])],
            ..GraphProto::default()
        };
        let mut g = graph.clone();
        g.output[0].r#type = None;
        let model = ModelProto { ir_version: Some(10), graph: Some(g), ..ModelProto::default() };
        let m = convert("t.onnx", &model, None).unwrap();
        let gr = &m.graphs[0];
        let shape = |n: &str| match &gr.value(gr.value_id(n).unwrap()).kind {
            ValueKind::Tensor(t) => t.sizes.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(","),
            ValueKind::Other(w) => w.clone(),
            other => format!("{other:?}"),
        };
        assert_eq!(shape("r"), "n,4");
        assert_eq!(shape("f"), "n,2");
        assert_eq!(shape("g"), "unknown shape");
        assert_eq!(gr.nodes[1].target, "onnx.FancyOp");
        assert!(m.warnings.iter().any(|w| w.contains("FancyOp")), "{:?}", m.warnings);
        let bad = ModelProto {
            ir_version: Some(10),
            graph: Some(GraphProto { node: vec![node("Relu", "nope", "r")], ..graph }),
            ..ModelProto::default()
        };
        let e = convert("t.onnx", &bad, None).unwrap_err().to_string();
        assert!(e.contains("t.onnx: node Relu_0: input `nope`"), "{e}");
    }
}
