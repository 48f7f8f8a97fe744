//! A right-hand side's node target and arguments: each Python argument typed as an [`Arg`] as
//! well as the dump allows, or kept as Python structure (tagged JSON) where no kind holds it.

use serde_json::Value as Json;

use super::{Cx, PY_KIND};
use crate::import::trace::python::Py;
use crate::ir::{Arg, DType, NamedArg, SymIntArg, ValueId, ValueKind};

impl Cx {
    /// The node's target and arguments for one right-hand side.
    pub(super) fn call(&self, py: &Py) -> Result<(String, Vec<NamedArg>), String> {
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

    /// Appends argument `name`. An argument kept as Python structure (an index tuple with slices,
    /// a nested list) is followed by `<name>.values`, the values it reads, so the graph's edges
    /// stay whole.
    pub(super) fn push_arg(&self, out: &mut Vec<NamedArg>, name: &str, py: &Py, kwarg: bool) -> Result<(), String> {
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
            Py::Attr(b, _) | Py::Unary(_, b) | Py::Starred(b) => self.values_in(b, out),
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
            Py::Starred(a) => serde_json::json!({ "starred": self.structure(a)? }),
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
    pub(super) fn arg(&self, py: &Py) -> Result<Arg, String> {
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
