//! `arange` in both tables: core ATen spells every arange in full (`arange.start_step`), and
//! Inductor's table builds it from `prims.iota` as torch/_refs' `arange` does, with the length's
//! size arithmetic (integer or, with a float step, SymFloat) traced as torch traces it.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, SymIntArg, ValueId};
use crate::sym::{Expr, Func};

/// `arange(end)` and `arange(start, end)` → `arange.start_step(start or 0, end, 1)` (core ATen
/// spells every arange in full).
pub fn arange(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let end = rw.passthrough("end")?.ok_or_else(|| RuleError::Arg { name: "end".into(), message: "missing".into() })?;
    let start = match rw.passthrough("start")? {
        None | Some(Arg::None) => A::I(0),
        Some(a) => A::Raw(a),
    };
    let mut args = vec![("start", start), ("end", A::Raw(end)), ("step", A::I(1))];
    if let Some(d) = rw.passthrough("dtype")? {
        args.push(("dtype", A::Raw(d)));
    }
    Ok(vec![rw.op("aten.arange.start_step", args)?])
}

/// An `arange` bound or step: a literal int, a SymInt, or a Python float.
enum Bound {
    Int(SymIntArg),
    Float(f64),
}

fn bound(rw: &Rw, name: &str, default: i64) -> Result<Bound, RuleError> {
    Ok(match rw.passthrough(name)? {
        None | Some(Arg::None) => Bound::Int(SymIntArg::Int(default)),
        Some(Arg::Int(i)) => Bound::Int(SymIntArg::Int(i)),
        Some(Arg::SymInt(s)) => Bound::Int(s),
        Some(Arg::Float(f)) => Bound::Float(f),
        Some(a) => return Err(RuleError::Arg { name: name.into(), message: format!("expected a number, found {a:?}") }),
    })
}

/// Inductor: `arange(start, end, step)` as torch._refs.arange builds it. With integer bounds and
/// step: `length = (end - start + step - sgn(step)) // step` (sizes, symbolic where the bounds
/// are), then one `iota(length, start, step)` for an integer dtype, else `iota(length) * step +
/// start` converted to the dtype. With a float among them: `length = ceil((end - start) / step)`
/// ([`float_length`]); an integer dtype takes `int(start) + int(step) * iota(length)`, a
/// float one computes `start + step * iota(length)` in the CPU accumulation dtype (float64 for
/// float32 and below) before converting.
pub fn arange_iota(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (start, end, step) = (bound(rw, "start", 0)?, bound(rw, "end", 0)?, bound(rw, "step", 1)?);
    let dtype = match rw.passthrough("dtype")? {
        Some(Arg::ScalarType(d)) => Some(d),
        _ => None,
    };
    let int64 = crate::ir::DType::I64;
    let iota = |rw: &mut Rw, length: SymIntArg, start: A, step: A, dtype| {
        let args = vec![("length", A::Raw(Arg::SymInt(length))), ("start", start), ("step", step), ("dtype", A::Raw(Arg::ScalarType(dtype)))];
        rw.op("prims.iota.default", args)
    };
    if let (Bound::Int(start), Bound::Int(end), Bound::Int(SymIntArg::Int(step))) = (&start, &end, &step) {
        let (step, sgn) = (*step, step.signum());
        if step == 0 {
            return Err(RuleError::Arg { name: "step".into(), message: "must be nonzero".into() });
        }
        // torch/_refs' `(end - start + step - sgn) // step`, each step a node where the expression is new.
        let l = rw.sym_arith2("sub", end.clone(), start.clone())?;
        let l = rw.sym_arith("add", l, step)?;
        let l = rw.sym_arith("sub", l, sgn)?;
        let length = match rw.sym_arith("floordiv", l, step)? {
            SymIntArg::Int(n) => SymIntArg::Int(n.max(0)),
            s => s,
        };
        // An integer arange is one iota of its dtype that starts and steps itself (torch/_refs'
        // `is_integer and integer_args`; `eye`'s aranges are int8 to int32 for small sizes).
        if let Some(d) = dtype.or(Some(int64)).filter(|d| d.is_integer()) {
            let first = match start {
                SymIntArg::Int(i) => A::I(*i),
                s => A::Raw(Arg::SymInt(s.clone())),
            };
            return Ok(vec![iota(rw, length, first, A::I(step), d)?]);
        }
        let index = iota(rw, length, A::I(0), A::I(1), int64)?;
        // A floating arange: emitted even when trivial (step 1, start 0), as Inductor's table does.
        let scaled = rw.op("aten.mul.Tensor", vec![("self", A::T(index)), ("other", A::I(step))])?;
        let first = match start {
            SymIntArg::Int(i) => A::I(*i),
            s => A::Raw(Arg::SymInt(s.clone())),
        };
        let mut y = rw.op("aten.add.Tensor", vec![("self", A::T(scaled)), ("other", first)])?;
        if let Some(d) = dtype {
            y = rw.op("prims.convert_element_type.default", vec![("a", A::T(y)), ("dtype", A::Raw(Arg::ScalarType(d)))])?;
        }
        return Ok(vec![y]);
    }
    let length = float_length(rw, &start, &end, &step)?;
    let dtype = dtype.unwrap_or(crate::ir::DType::F32);
    let index = iota(rw, length, A::I(0), A::I(1), int64)?;
    if !dtype.is_floating() {
        // `sym_int` of each: Python's int() truncates a float toward zero; a SymInt stays itself.
        let int = |b: &Bound| match b {
            Bound::Float(f) => A::I(f.trunc() as i64),
            Bound::Int(SymIntArg::Int(i)) => A::I(*i),
            Bound::Int(s) => A::Raw(Arg::SymInt(s.clone())),
        };
        let scaled = rw.op("aten.mul.Tensor", vec![("self", A::T(index)), ("other", int(&step))])?;
        return Ok(vec![rw.op("aten.add.Tensor", vec![("self", A::T(scaled)), ("other", int(&start))])?]);
    }
    let device = rw.passthrough("device")?;
    let on_cpu = !matches!(&device, Some(Arg::Device(d)) if !d.starts_with("cpu"));
    let acc = if on_cpu && matches!(dtype, crate::ir::DType::F32 | crate::ir::DType::F16 | crate::ir::DType::BF16) {
        crate::ir::DType::F64
    } else {
        dtype.opmath()
    };
    let index = rw.op("prims.convert_element_type.default", vec![("a", A::T(index)), ("dtype", A::Raw(Arg::ScalarType(acc)))])?;
    let number = |b: &Bound| match b {
        Bound::Float(f) => A::F(*f),
        Bound::Int(SymIntArg::Int(i)) => A::I(*i),
        Bound::Int(SymIntArg::Value(v)) => A::Raw(Arg::SymInt(SymIntArg::Value(*v))),
    };
    let scaled = rw.op("aten.mul.Tensor", vec![("self", A::T(index)), ("other", number(&step))])?;
    let mut y = rw.op("aten.add.Tensor", vec![("self", A::T(scaled)), ("other", number(&start))])?;
    if acc != dtype {
        y = rw.op("prims.convert_element_type.default", vec![("a", A::T(y)), ("dtype", A::Raw(Arg::ScalarType(dtype)))])?;
    }
    Ok(vec![y])
}

/// The length of an `arange` with a float among its bounds and step: torch/_refs'
/// `math.ceil((end - start) / step)`. With static numbers, that number; with a symbolic bound
/// and a float step (XLNet's `arange(klen, -qlen, -1.0)`), the SymFloat arithmetic torch traces:
/// `end - start` as a size (`_operator.sub` where new), `torch.sym_float` of it, `/ step`
/// (`_operator.truediv`) and `math.ceil`. A float bound beside a symbolic one, or a symbolic
/// step, is refused: torch promotes those differently, and no graph here shows how.
fn float_length(rw: &mut Rw, start: &Bound, end: &Bound, step: &Bound) -> Result<SymIntArg, RuleError> {
    let number = |b: &Bound| match b {
        Bound::Int(SymIntArg::Int(i)) => Some(*i as f64),
        Bound::Float(f) => Some(*f),
        Bound::Int(SymIntArg::Value(_)) => None,
    };
    let length = |s: f64, e: f64, st: f64| {
        if st == 0.0 || !(s.is_finite() && e.is_finite() && st.is_finite()) {
            return Err(RuleError::Arg { name: "step".into(), message: format!("arange({s}, {e}, {st})") });
        }
        Ok(SymIntArg::Int(((e - s) / st).ceil().max(0.0) as i64))
    };
    if let (Some(s), Some(e), Some(st)) = (number(start), number(end), number(step)) {
        return length(s, e, st);
    }
    let (Bound::Int(s), Bound::Int(e), Bound::Float(st)) = (start, end, step) else {
        return Err(RuleError::Unsupported("arange with a float bound beside a symbolic one, or a symbolic step with a float bound".into()));
    };
    let diff = rw.sym_arith2("sub", e.clone(), s.clone())?;
    if let SymIntArg::Int(d) = diff {
        return length(0.0, d as f64, *st);
    }
    if *st == 0.0 || !st.is_finite() {
        return Err(RuleError::Arg { name: "step".into(), message: format!("must be finite and nonzero, found {st}") });
    }
    let fe = Expr::call(Func::ToFloat, vec![rw.sym_expr(&diff)?]);
    let qe = Expr::call(Func::FloatTrueDiv, vec![fe.clone(), Expr::float(*st)]);
    let ce = Expr::call(Func::CeilToInt, vec![qe.clone()]);
    let f = rw.sym_call("torch.sym_float", &fe, vec![("a", A::Raw(Arg::SymInt(diff)))])?;
    let q = rw.sym_call("_operator.truediv", &qe, vec![("a", A::Raw(Arg::SymFloat(f))), ("b", A::F(*st))])?;
    Ok(SymIntArg::Value(rw.sym_call("math.ceil", &ce, vec![("a", A::Raw(Arg::SymFloat(q)))])?))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::decomp::{decompose, Marks, Mode};
    use super::super::test_graph::{arg, node};
    use crate::ir::{Arg, DType, Graph, InputKind, NodeMeta, SymIntArg, TensorMeta, ValueKind};
    use crate::sym::Expr;

    /// XLNet's `arange(s, -s, -1.0, dtype)` `copies` times over `x: [s]` (the arange's metadata
    /// as the archive records it), decomposed by Inductor's table.
    fn float_step(copies: usize, dtype: DType) -> BTreeMap<String, usize> {
        let mut g = Graph::new("g");
        let x = g.add_input("x", ValueKind::Tensor(TensorMeta::contiguous(DType::F32, vec![Expr::symbol("s0")])), InputKind::UserInput).unwrap();
        let s = node(&mut g, "sym_size_int", "aten.sym_size.int", vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Int(0))]);
        let n = g.add_node("neg", "_operator.neg", vec![arg("a", Arg::SymInt(SymIntArg::Value(s)))], vec![("neg".into(), ValueKind::SymInt(Expr::neg(Expr::symbol("s0"))))], NodeMeta::default()).unwrap();
        let neg = g.node(n).outputs[0];
        for i in 0..copies {
            let sizes = vec![Expr::mul(Expr::int(2), Expr::symbol("s0"))];
            let meta = TensorMeta::contiguous(dtype, sizes);
            let args = vec![
                arg("start", Arg::SymInt(SymIntArg::Value(s))),
                arg("end", Arg::SymInt(SymIntArg::Value(neg))),
                arg("step", Arg::Float(-1.0)),
                arg("dtype", Arg::ScalarType(dtype)),
            ];
            let name = format!("arange_{i}");
            let id = g.add_node(&name, "aten.arange.start_step", args, vec![(name.clone(), ValueKind::Tensor(meta))], NodeMeta::default()).unwrap();
            g.outputs.push(Arg::Tensor(g.node(id).outputs[0]));
        }
        decompose(&g, Mode::Full, &Marks::default()).unwrap().graph.op_histogram()
    }

    /// The length is `math.ceil(sym_float(-s - s) / -1.0)`, each step a node; an integer dtype
    /// then takes `iota * -1 + s`.
    #[test]
    fn a_float_step_between_sizes_traces_symfloat_arithmetic() {
        let ops = float_step(1, DType::I64);
        for op in ["_operator.sub", "torch.sym_float", "_operator.truediv", "math.ceil", "prims.iota.default", "aten.mul.Tensor", "aten.add.Tensor"] {
            assert_eq!(ops.get(op), Some(&1), "{op}: {ops:?}");
        }
        assert_eq!(ops.get("aten.arange.start_step"), None, "{ops:?}");
    }

    /// A second arange of the same bounds finds every length expression with a value: torch's
    /// graph keeps one node per expression, SymFloats too.
    #[test]
    fn a_repeated_float_length_records_nothing_new() {
        let ops = float_step(2, DType::I64);
        for op in ["_operator.sub", "torch.sym_float", "_operator.truediv", "math.ceil"] {
            assert_eq!(ops.get(op), Some(&1), "{op}: {ops:?}");
        }
        assert_eq!(ops.get("prims.iota.default"), Some(&2), "{ops:?}");
    }

    /// XLNet again, with the archive's own length expression (`ceil((ToFloat(-s) - ToFloat(s)) / -1)`,
    /// not the rule's `ceil(ToFloat(-2*s) / -1)`) and a later `size(0) - 1` of the arange: torch's
    /// re-trace reads that size as the `math.ceil` it just traced, so no second `sym_size`, and the
    /// `sub` reads the `ceil` (Inductor's graph of hf_xlnet_causal_lm: 2 `sym_size`, not 4).
    #[test]
    fn a_later_size_of_the_arange_is_its_traced_length() {
        use crate::sym::Func;
        let mut g = Graph::new("g");
        let s0 = Expr::symbol("s0");
        let x = g.add_input("x", ValueKind::Tensor(TensorMeta::contiguous(DType::F32, vec![s0.clone()])), InputKind::UserInput).unwrap();
        let s = node(&mut g, "sym_size_int", "aten.sym_size.int", vec![arg("self", Arg::Tensor(x)), arg("dim", Arg::Int(0))]);
        let n = g.add_node("neg", "_operator.neg", vec![arg("a", Arg::SymInt(SymIntArg::Value(s)))], vec![("neg".into(), ValueKind::SymInt(Expr::neg(s0.clone())))], NodeMeta::default()).unwrap();
        let neg = g.node(n).outputs[0];
        let float = |e: Expr| Expr::call(Func::ToFloat, vec![e]);
        let len = Expr::call(Func::CeilToInt, vec![Expr::call(Func::FloatTrueDiv, vec![Expr::sub(float(Expr::neg(s0.clone())), float(s0.clone())), Expr::float(-1.0)])]);
        let args = vec![arg("start", Arg::SymInt(SymIntArg::Value(s))), arg("end", Arg::SymInt(SymIntArg::Value(neg))), arg("step", Arg::Float(-1.0)), arg("dtype", Arg::ScalarType(DType::I64))];
        let a = g.add_node("arange", "aten.arange.start_step", args, vec![("arange".into(), ValueKind::Tensor(TensorMeta::contiguous(DType::I64, vec![len.clone()])))], NodeMeta::default()).unwrap();
        let a = g.node(a).outputs[0];
        let k = g.add_node("sym_size_int_1", "aten.sym_size.int", vec![arg("self", Arg::Tensor(a)), arg("dim", Arg::Int(0))], vec![("sym_size_int_1".into(), ValueKind::SymInt(len.clone()))], NodeMeta::default()).unwrap();
        let k = g.node(k).outputs[0];
        let sub = vec![arg("a", Arg::SymInt(SymIntArg::Value(k))), arg("b", Arg::Int(1))];
        let d = g.add_node("sub", "_operator.sub", sub, vec![("sub".into(), ValueKind::SymInt(Expr::sub(len, Expr::int(1))))], NodeMeta::default()).unwrap();
        g.outputs.push(Arg::Tensor(a));
        g.outputs.push(Arg::SymInt(SymIntArg::Value(g.node(d).outputs[0])));
        let out = decompose(&g, Mode::Full, &Marks::default()).unwrap().graph;
        let ops = out.op_histogram();
        assert_eq!(ops.get("aten.sym_size.int"), Some(&1), "{ops:?}");
        assert_eq!(ops.get("math.ceil"), Some(&1), "{ops:?}");
        let sub = out.nodes.iter().find(|n| n.name == "sub").unwrap();
        let ceil = out.nodes.iter().find(|n| n.target == "math.ceil").unwrap();
        assert_eq!(sub.inputs().collect::<Vec<_>>(), ceil.outputs, "the sub reads the traced length");
    }

    /// torch/_refs makes any integer dtype's arange one `iota` of that dtype (`eye` of a small
    /// size ranges over int8): no int64 index scaled and converted, as for a float dtype.
    #[test]
    fn an_integer_dtype_is_one_iota_of_it() {
        for (dtype, one) in [(DType::I32, true), (DType::I8, true), (DType::F32, false)] {
            let mut g = Graph::new("g");
            let args = vec![arg("start", Arg::Int(0)), arg("end", Arg::Int(5)), arg("step", Arg::Int(1)), arg("dtype", Arg::ScalarType(dtype))];
            let y = node(&mut g, "arange", "aten.arange.start_step", args);
            g.outputs.push(Arg::Tensor(y));
            let d = decompose(&g, Mode::Full, &Marks::default()).unwrap();
            let ops = d.graph.op_histogram();
            assert_eq!(ops.get("prims.iota.default"), Some(&1), "{dtype:?}: {ops:?}");
            assert_eq!(ops.get("prims.convert_element_type.default").is_none(), one, "{dtype:?}: {ops:?}");
            if one {
                let out = d.graph.outputs.first().and_then(|a| match a { Arg::Tensor(v) => d.graph.value(*v).tensor(), _ => None }).unwrap();
                assert_eq!(out.dtype, dtype);
            }
        }
    }
}
