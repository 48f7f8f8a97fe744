//! A dynamo-graph call as the tracer of the user's torch takes it ([`crate::ops::traced`]): its
//! target, device and arguments at the example values the log records (each size symbol at the hint
//! torch traced with).

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use super::LogCheck;
use crate::import::trace::{Stage, TraceLog};
use crate::ir::{Arg, Graph, NodeId, SymbolInfo, SymIntArg, ValueId, ValueKind};
use crate::ops::traced::CallSpec;
use crate::sym::Bindings;

/// The call of dynamo node `n`, or why it cannot be rebuilt for tracing (an argument kept as Python
/// structure, a size with no hint).
pub fn call_spec(g: &Graph, n: NodeId, symbols: &[SymbolInfo], float_symbols: &[(String, String)]) -> Result<CallSpec, String> {
    let mut hints = Bindings::new();
    for s in symbols {
        if let Some(h) = s.hint {
            hints.set(&s.name, h);
        }
    }
    let floats: BTreeMap<&str, f64> = float_symbols.iter().filter_map(|(n, v)| v.parse().ok().map(|f| (n.as_str(), f))).collect();
    let cx = Cx { g, hints: &hints, floats: &floats };
    let node = g.node(n);
    let (mut args, mut kwargs) = (Vec::new(), BTreeMap::new());
    for a in &node.args {
        // `<name>.values` lists the values a structured argument reads: graph edges, not arguments.
        if a.name.ends_with(".values") {
            continue;
        }
        let v = cx.arg(&a.arg).map_err(|e| format!("argument `{}`: {e}", a.name))?;
        if a.kwarg {
            kwargs.insert(a.name.clone(), v);
        } else {
            args.push(v);
        }
    }
    let device = node
        .outputs
        .iter()
        .copied()
        .chain(node.inputs())
        .find_map(|v| g.value(v).tensor().map(|t| t.device.clone()))
        .or_else(|| g.inputs.iter().find_map(|(v, _)| g.value(*v).tensor().map(|t| t.device.clone())))
        .ok_or("no tensor of the node or graph names a device")?;
    let mut spec = CallSpec::keyed(&node.target, &device, args, kwargs);
    spec.source = crate::import::trace::node_location(g, n).map(|l| l.file);
    Ok(spec)
}

/// The calls of a check's unverified nodes that a trace can settle, each with the index of its
/// [`super::Unverified`] in `check`: rebuilt from the log's dynamo graph, or why it cannot be.
pub fn untraced_calls(log: &TraceLog, check: &LogCheck) -> Vec<(usize, Result<CallSpec, String>)> {
    check
        .unverified
        .iter()
        .enumerate()
        .filter_map(|(i, u)| {
            let n = u.untraced?;
            let rec = log.compiles.iter().find(|c| c.id.to_string() == u.compile_id)?;
            let spec = match rec.graph(Stage::DynamoOutput) {
                Some(g) => call_spec(g, n, &rec.symbols, &rec.float_symbols),
                None => Err("the compile has no dynamo graph".to_string()),
            };
            Some((i, spec))
        })
        .collect()
}

/// Adds to each unverified call what tracing it said, or (`traced`: the user's torch was asked to
/// trace them) that it could not be rebuilt for tracing. `check-lite` and the app explain alike.
pub fn explain_untraced(log: &TraceLog, check: &mut LogCheck, known: &crate::ops::traced::TracedCalls, traced: bool) {
    for (i, spec) in untraced_calls(log, check) {
        let extra = match spec {
            Err(why) if traced => format!("; it cannot be traced: {why}"),
            Err(_) => continue,
            Ok(c) => match known.traced.get(&c.key) {
                Some(Some(err)) => format!("; tracing it with torch {} failed: {err}", known.torch),
                Some(None) => format!("; traced with torch {}, what it became is not in the AOT graph either", known.torch),
                None => continue,
            },
        };
        if let Some(u) = check.unverified.get_mut(i) {
            u.reason.push_str(&extra);
        }
    }
}

struct Cx<'a> {
    g: &'a Graph,
    hints: &'a Bindings,
    floats: &'a BTreeMap<&'a str, f64>,
}

impl Cx<'_> {
    fn int(&self, e: &crate::sym::Expr) -> Result<i64, String> {
        e.eval_int(self.hints).map_err(|err| format!("size `{e}` has no hint in the log ({err})"))
    }

    fn value(&self, v: ValueId) -> Result<Json, String> {
        let val = self.g.value(v);
        Ok(match &val.kind {
            ValueKind::Tensor(t) => {
                let sizes: Vec<i64> = t.sizes.iter().map(|s| self.int(s)).collect::<Result<_, _>>()?;
                let strides: Vec<i64> = t.strides.iter().map(|s| self.int(s)).collect::<Result<_, _>>()?;
                json!({ "tensor": { "dtype": t.dtype.name(), "sizes": sizes, "strides": strides } })
            }
            ValueKind::SymInt(e) => json!({ "int": self.int(e)? }),
            ValueKind::SymBool(e) => json!({ "bool": e.eval_bool(self.hints).map_err(|err| format!("`{e}`: {err}"))? }),
            // A constant (`0.1`, a layer's momentum) or a float symbol the log gives the value of.
            ValueKind::SymFloat(e) => match e.eval(self.hints) {
                Ok(crate::sym::Value::Float(f)) => json!({ "float": f }),
                Ok(crate::sym::Value::Int(i)) => json!({ "float": i as f64 }),
                Ok(crate::sym::Value::Rational(p, q)) => json!({ "float": p as f64 / q as f64 }),
                _ => {
                    let name = e.to_string();
                    let f = self.floats.get(name.as_str()).copied().ok_or_else(|| format!("float `{name}` has no value in the log"))?;
                    json!({ "float": f })
                }
            },
            ValueKind::Other(text) => return Err(format!("`{}` is `{text}`, not a tensor or number the tracer can make", val.name)),
        })
    }

    fn arg(&self, a: &Arg) -> Result<Json, String> {
        let list = |items: Vec<Json>| json!({ "list": items });
        Ok(match a {
            Arg::None => json!({ "none": null }),
            Arg::Tensor(v) | Arg::SymBool(v) | Arg::SymFloat(v) => self.value(*v)?,
            Arg::Tensors(vs) => list(vs.iter().map(|v| self.value(*v)).collect::<Result<_, _>>()?),
            Arg::OptionalTensors(vs) => list(
                vs.iter().map(|v| v.map_or(Ok(json!({ "none": null })), |v| self.value(v))).collect::<Result<_, _>>()?,
            ),
            Arg::Int(i) => json!({ "int": i }),
            Arg::Ints(is) => list(is.iter().map(|i| json!({ "int": i })).collect()),
            Arg::Float(f) if f.is_finite() => json!({ "float": f }),
            Arg::Float(f) => return Err(format!("{f} has no JSON spelling")),
            Arg::Floats(fs) => list(fs.iter().map(|f| json!({ "float": f })).collect()),
            Arg::Bool(b) => json!({ "bool": b }),
            Arg::Bools(bs) => list(bs.iter().map(|b| json!({ "bool": b })).collect()),
            Arg::String(s) => json!({ "str": s }),
            Arg::Strings(ss) => list(ss.iter().map(|s| json!({ "str": s })).collect()),
            Arg::SymInt(SymIntArg::Int(i)) => json!({ "int": i }),
            Arg::SymInt(SymIntArg::Value(v)) => self.value(*v)?,
            Arg::SymInts(items) => list(
                items
                    .iter()
                    .map(|s| match s {
                        SymIntArg::Int(i) => Ok(json!({ "int": i })),
                        SymIntArg::Value(v) => self.value(*v),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Arg::ScalarType(d) => json!({ "dtype": d.name() }),
            Arg::MemoryFormat(m) => json!({ "memory_format": m }),
            Arg::Layout(l) => json!({ "layout": l }),
            Arg::Device(d) => json!({ "device": d }),
            Arg::Opaque { kind, .. } => return Err(format!("a `{kind}` argument, which the tracer does not rebuild")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::trace::parse_graph;
    use crate::sym::Range;

    #[test]
    fn rebuilds_a_method_call_at_the_hints() {
        let text = r#"class GraphModule(torch.nn.Module):
    def forward(self, s0: "Sym(s0)", L_x_: "f32[s0, 16][16, 1]cpu", L_y_: "f64[s0, 16][16, 1]cpu"):
        l_x_ = L_x_
        l_y_ = L_y_
        type_as: "f64[s0, 16][16, 1]cpu" = l_x_.type_as(l_y_);  l_x_ = l_y_ = None
        t: "f32[2][1]cpu" = torch.tensor([0.5, 2.0], dtype = torch.float32)
        return (type_as, t)
"#;
        let (g, _) = parse_graph("0/0:dynamo", text).unwrap();
        let syms = [SymbolInfo { name: "s0".into(), range: Range { min: 2, max: None }, hint: Some(4) }];
        let n = g.node_ids().find(|&n| g.node(n).target == "Tensor.type_as").unwrap();
        let c = call_spec(&g, n, &syms, &[]).unwrap();
        assert_eq!(c.target, "Tensor.type_as");
        assert_eq!(c.device, "cpu");
        assert_eq!(c.args[0], json!({"tensor": {"dtype": "float32", "sizes": [4, 16], "strides": [16, 1]}}));
        assert_eq!(c.args[1]["tensor"]["dtype"], "float64");
        let t = g.node_ids().find(|&n| g.node(n).target == "torch.tensor").unwrap();
        let c = call_spec(&g, t, &syms, &[]).unwrap();
        assert_eq!(c.args[0], json!({"list": [{"float": 0.5}, {"float": 2.0}]}));
        assert_eq!(c.kwargs["dtype"], json!({"dtype": "float32"}));
        // Without the hint the size cannot be made: said, not guessed.
        let e = call_spec(&g, n, &[], &[]).unwrap_err();
        assert!(e.contains("no hint"), "{e}");
    }
}
