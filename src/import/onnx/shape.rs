//! Symbolic shape inference for common ONNX ops, so every tensor of a model with `dim_param`s
//! has a shape the `shapes` command and the sliders can evaluate.
//!
//! Besides shapes, small integer tensors are tracked by value (`Known`): initializers, `Shape`
//! outputs and what `Gather`/`Slice`/`Concat`/`Unsqueeze`/arithmetic make of them. That is how a
//! `Reshape` whose target shape is computed from `Shape(x)` gets a symbolic result.

use std::collections::HashMap;

use super::proto::{attr_type, AttributeProto};
use crate::ir::DType;
use crate::sym::Expr;

/// A tensor's dtype and (known) symbolic shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Info {
    pub dtype: Option<DType>,
    pub shape: Vec<Expr>,
}

/// Values of small 1-D (or scalar) integer tensors, by tensor name.
pub type Known = HashMap<String, Vec<Expr>>;

/// Each output's shape and, for small integer tensors, its value.
pub type Outputs = Vec<(Info, Option<Vec<Expr>>)>;

/// Largest integer tensor tracked by value.
pub const MAX_KNOWN: usize = 64;

/// A node's attributes by name.
pub struct Attrs<'a>(pub &'a [AttributeProto]);

impl Attrs<'_> {
    fn get(&self, name: &str) -> Option<&AttributeProto> {
        self.0.iter().find(|a| a.name.as_deref() == Some(name))
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(|a| a.i)
    }

    pub fn ints(&self, name: &str) -> Option<Vec<i64>> {
        self.get(name).filter(|a| a.r#type == Some(attr_type::INTS) || !a.ints.is_empty()).map(|a| a.ints.clone())
    }

    pub fn string(&self, name: &str) -> Option<String> {
        self.get(name).and_then(|a| a.s.as_ref()).map(|s| String::from_utf8_lossy(s).into_owned())
    }
}

/// One node's inputs as inference sees them.
pub struct Inputs<'a> {
    pub infos: Vec<Option<&'a Info>>,
    pub known: Vec<Option<&'a Vec<Expr>>>,
}

impl<'a> Inputs<'a> {
    fn info(&self, i: usize) -> Result<&'a Info, String> {
        self.infos.get(i).copied().flatten().ok_or_else(|| format!("input {i} has no known shape"))
    }

    fn shape(&self, i: usize) -> Result<&'a [Expr], String> {
        Ok(&self.info(i)?.shape)
    }

    fn known(&self, i: usize) -> Option<&'a Vec<Expr>> {
        self.known.get(i).copied().flatten()
    }

    fn known_ints(&self, i: usize) -> Option<Vec<i64>> {
        self.known(i)?.iter().map(Expr::as_int).collect()
    }
}

/// Output shapes (and tracked values) of one node; `Err` says why inference does not apply.
pub fn infer(op: &str, a: &Attrs, ins: &Inputs, n_out: usize) -> Result<Outputs, String> {
    let same = |i: usize| -> Result<Info, String> { Ok(ins.info(i)?.clone()) };
    let with = |dtype: Option<DType>, shape: Vec<Expr>| Info { dtype, shape };
    let dt0 = ins.infos.first().copied().flatten().and_then(|i| i.dtype);
    let one = |info: Info| Ok(vec![(info, None)]);
    match op {
        "Relu" | "Sigmoid" | "Tanh" | "Erf" | "Exp" | "Log" | "Sqrt" | "Reciprocal" | "Neg" | "Abs" | "Gelu" | "Softplus"
        | "Softsign" | "HardSigmoid" | "HardSwish" | "LeakyRelu" | "Elu" | "Selu" | "Celu" | "Mish" | "Clip" | "Sin"
        | "Cos" | "Floor" | "Ceil" | "Round" | "Sign" | "Softmax" | "LogSoftmax" | "Identity" | "BatchNormalization"
        | "InstanceNormalization" | "LpNormalization" | "PRelu" | "ThresholdedRelu" | "Trilu" | "CumSum" => {
            let info = same(0)?;
            let known = if op == "Identity" || op == "Neg" { ins.known(0).cloned() } else { None };
            let known = match (op, known) {
                ("Neg", Some(k)) => Some(k.into_iter().map(Expr::neg).collect()),
                (_, k) => k,
            };
            let mut out = vec![(info.clone(), known)];
            // Dropout/BatchNormalization training outputs are not modelled beyond the first.
            out.truncate(n_out.max(1));
            Ok(out)
        }
        "Dropout" => {
            let info = same(0)?;
            let mask = with(Some(DType::Bool), info.shape.clone());
            Ok(vec![(info, None), (mask, None)].into_iter().take(n_out.max(1)).collect())
        }
        "Not" | "IsNaN" | "IsInf" => one(with(Some(DType::Bool), ins.shape(0)?.to_vec())),
        "Cast" | "CastLike" => {
            let to = if op == "Cast" {
                a.int("to").and_then(|c| super::data::dtype(c as i32))
            } else {
                ins.info(1)?.dtype
            };
            Ok(vec![(with(to, ins.shape(0)?.to_vec()), ins.known(0).cloned())])
        }
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Max" | "Min" | "Mod" | "Sum" | "Mean" | "BitShift" => {
            let mut shape = ins.shape(0)?.to_vec();
            for i in 1..ins.infos.len() {
                shape = broadcast(&shape, ins.shape(i)?)?;
            }
            let known = match (ins.known(0), ins.known(1)) {
                (Some(x), Some(y)) if ins.infos.len() == 2 => elementwise_known(op, x, y),
                _ => None,
            };
            Ok(vec![(with(dt0, shape), known)])
        }
        "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" | "Xor" => {
            one(with(Some(DType::Bool), broadcast(ins.shape(0)?, ins.shape(1)?)?))
        }
        "Where" => {
            let s = broadcast(&broadcast(ins.shape(0)?, ins.shape(1)?)?, ins.shape(2)?)?;
            one(with(ins.info(1)?.dtype, s))
        }
        "Expand" => {
            let target = ins.known(1).ok_or("Expand's shape is not a known constant")?;
            one(with(dt0, broadcast(ins.shape(0)?, target)?))
        }
        "MatMul" => one(with(dt0, matmul(ins.shape(0)?, ins.shape(1)?)?)),
        "Gemm" => {
            let (x, w) = (ins.shape(0)?, ins.shape(1)?);
            if x.len() != 2 || w.len() != 2 {
                return Err("Gemm takes 2-D inputs".into());
            }
            let m = if a.int("transA").unwrap_or(0) != 0 { &x[1] } else { &x[0] };
            let n = if a.int("transB").unwrap_or(0) != 0 { &w[0] } else { &w[1] };
            one(with(dt0, vec![m.clone(), n.clone()]))
        }
        "Conv" | "MaxPool" | "AveragePool" | "LpPool" => one(with(dt0, window(op, a, ins)?)),
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => {
            let s = ins.shape(0)?;
            let mut out = s[..2.min(s.len())].to_vec();
            out.extend(std::iter::repeat_n(Expr::int(1), s.len().saturating_sub(2)));
            one(with(dt0, out))
        }
        "Reshape" => {
            let target = ins.known(1).ok_or("Reshape's shape is not a known constant")?;
            one(with(dt0, reshape(ins.shape(0)?, target, a.int("allowzero").unwrap_or(0) != 0)?))
        }
        "Flatten" => {
            let s = ins.shape(0)?;
            let axis = norm_axis(a.int("axis").unwrap_or(1), s.len() + 1)?;
            one(with(dt0, vec![product(&s[..axis]), product(&s[axis..])]))
        }
        "Transpose" => {
            let s = ins.shape(0)?;
            let perm = a.ints("perm").unwrap_or_else(|| (0..s.len() as i64).rev().collect());
            let out = perm
                .iter()
                .map(|&p| s.get(usize::try_from(p).map_err(|_| "negative perm")?).cloned().ok_or("perm out of range"))
                .collect::<Result<Vec<_>, _>>()?;
            one(with(dt0, out))
        }
        "Concat" => {
            let first = ins.shape(0)?;
            let axis = norm_axis(a.int("axis").ok_or("Concat without axis")?, first.len())?;
            let mut out = first.to_vec();
            for i in 1..ins.infos.len() {
                let s = ins.shape(i)?;
                if s.len() != out.len() {
                    return Err("Concat inputs differ in rank".into());
                }
                out[axis] = Expr::add(out[axis].clone(), s[axis].clone());
            }
            let known: Option<Vec<Expr>> = if first.len() <= 1 {
                (0..ins.infos.len()).map(|i| ins.known(i).cloned()).collect::<Option<Vec<_>>>().map(|v| v.concat())
            } else {
                None
            };
            Ok(vec![(with(dt0, out), known)])
        }
        "Split" => {
            let s = ins.shape(0)?;
            let axis = norm_axis(a.int("axis").unwrap_or(0), s.len())?;
            let parts: Vec<Expr> = match (ins.known(1), a.ints("split")) {
                (Some(k), _) => k.clone(),
                (None, Some(v)) => v.into_iter().map(Expr::int).collect(),
                (None, None) => {
                    let n = a.int("num_outputs").unwrap_or(n_out as i64).max(1);
                    let d = &s[axis];
                    let chunk = Expr::floordiv(Expr::add(d.clone(), Expr::int(n - 1)), Expr::int(n));
                    let mut v = vec![chunk.clone(); n as usize];
                    if let Some(last) = v.last_mut() {
                        *last = Expr::sub(d.clone(), Expr::mul(chunk, Expr::int(n - 1)));
                    }
                    v
                }
            };
            Ok(parts
                .into_iter()
                .map(|p| {
                    let mut sh = s.to_vec();
                    sh[axis] = p;
                    (with(dt0, sh), None)
                })
                .collect())
        }
        "LayerNormalization" => {
            let s = ins.shape(0)?;
            let axis = norm_axis(a.int("axis").unwrap_or(-1), s.len())?;
            let mut stat = s.to_vec();
            stat[axis..].iter_mut().for_each(|d| *d = Expr::int(1));
            let stat_dt = Some(DType::F32);
            let outs = vec![(with(dt0, s.to_vec()), None), (with(stat_dt, stat.clone()), None), (with(stat_dt, stat), None)];
            Ok(outs.into_iter().take(n_out.max(1)).collect())
        }
        "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL2" | "ReduceL1"
        | "ReduceLogSumExp" | "ReduceSumSquare" | "ArgMax" | "ArgMin" => {
            let s = ins.shape(0)?;
            let axes = if op.starts_with("Arg") {
                Some(vec![a.int("axis").unwrap_or(0)])
            } else {
                match ins.known_ints(1) {
                    Some(v) => Some(v),
                    None if ins.infos.len() > 1 && ins.infos[1].is_some() => return Err("reduction axes are not constant".into()),
                    None => a.ints("axes"),
                }
            };
            let keep = a.int("keepdims").unwrap_or(1) != 0;
            let axes: Vec<usize> = match axes {
                Some(v) if !v.is_empty() => v.iter().map(|&x| norm_axis(x, s.len())).collect::<Result<_, _>>()?,
                _ if a.int("noop_with_empty_axes").unwrap_or(0) != 0 => return one(with(dt0, s.to_vec())),
                _ => (0..s.len()).collect(),
            };
            let mut out = Vec::new();
            for (i, d) in s.iter().enumerate() {
                if axes.contains(&i) {
                    if keep {
                        out.push(Expr::int(1));
                    }
                } else {
                    out.push(d.clone());
                }
            }
            let dt = if op.starts_with("Arg") { Some(DType::I64) } else { dt0 };
            one(with(dt, out))
        }
        "Shape" => {
            let s = ins.shape(0)?;
            let r = s.len() as i64;
            let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
            let start = clamp(a.int("start").unwrap_or(0));
            let end = clamp(a.int("end").unwrap_or(r));
            let dims = s[start..end.max(start)].to_vec();
            Ok(vec![(with(Some(DType::I64), vec![Expr::int(dims.len() as i64)]), Some(dims))])
        }
        "Size" => Ok(vec![(with(Some(DType::I64), vec![]), Some(vec![product(ins.shape(0)?)]))]),
        "Gather" => {
            let (data, idx) = (ins.shape(0)?, ins.shape(1)?);
            let axis = norm_axis(a.int("axis").unwrap_or(0), data.len())?;
            let mut out = data[..axis].to_vec();
            out.extend_from_slice(idx);
            out.extend_from_slice(&data[axis + 1..]);
            let known = match (ins.known(0), ins.known_ints(1)) {
                (Some(vals), Some(ix)) if data.len() == 1 => ix
                    .iter()
                    .map(|&i| {
                        let i = if i < 0 { i + vals.len() as i64 } else { i };
                        usize::try_from(i).ok().and_then(|i| vals.get(i).cloned())
                    })
                    .collect(),
                _ => None,
            };
            Ok(vec![(with(dt0, out), known)])
        }
        "Unsqueeze" | "Squeeze" => {
            let s = ins.shape(0)?;
            let axes = ins.known_ints(1).or_else(|| a.ints("axes"));
            let out = if op == "Unsqueeze" {
                let axes = axes.ok_or("Unsqueeze axes are not constant")?;
                let rank = s.len() + axes.len();
                let mut axes: Vec<usize> = axes.iter().map(|&x| norm_axis(x, rank)).collect::<Result<_, _>>()?;
                axes.sort_unstable();
                let mut it = s.iter();
                (0..rank)
                    .map(|i| if axes.contains(&i) { Some(Expr::int(1)) } else { it.next().cloned() })
                    .collect::<Option<Vec<_>>>()
                    .ok_or("Unsqueeze axes repeat")?
            } else {
                match axes {
                    Some(axes) => {
                        let axes: Vec<usize> = axes.iter().map(|&x| norm_axis(x, s.len())).collect::<Result<_, _>>()?;
                        s.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, d)| d.clone()).collect()
                    }
                    None => s.iter().filter(|d| d.as_int() != Some(1)).cloned().collect(),
                }
            };
            Ok(vec![(with(dt0, out), ins.known(0).cloned())])
        }
        "Slice" => slice(ins, dt0),
        "ConstantOfShape" => {
            let shape = ins.known(0).ok_or("ConstantOfShape's shape is not a known constant")?.clone();
            one(with(None, shape))
        }
        "Range" => {
            let (s, l, d) = (ins.known(0), ins.known(1), ins.known(2));
            let len = match (s.and_then(|v| v.first()), l.and_then(|v| v.first()), d.and_then(|v| v.first())) {
                (Some(s), Some(l), Some(d)) => match d.as_int() {
                    Some(1) => Expr::max(Expr::sub(l.clone(), s.clone()), Expr::int(0)),
                    _ => return Err("Range with a step other than 1".into()),
                },
                _ => return Err("Range bounds are not constant".into()),
            };
            one(with(dt0, vec![len]))
        }
        _ => Err(format!("no shape rule for `{op}`")),
    }
}

fn window(op: &str, a: &Attrs, ins: &Inputs) -> Result<Vec<Expr>, String> {
    let x = ins.shape(0)?;
    if x.len() < 3 {
        return Err(format!("{op} needs an N×C×spatial input"));
    }
    let nsp = x.len() - 2;
    let kernel: Vec<Expr> = match a.ints("kernel_shape") {
        Some(k) => k.into_iter().map(Expr::int).collect(),
        None if op == "Conv" => ins.shape(1)?.get(2..).ok_or("Conv weight rank")?.to_vec(),
        None => return Err(format!("{op} without kernel_shape")),
    };
    if kernel.len() != nsp {
        return Err("kernel rank does not match the input".into());
    }
    let strides = a.ints("strides").unwrap_or_else(|| vec![1; nsp]);
    let dil = a.ints("dilations").unwrap_or_else(|| vec![1; nsp]);
    let pads = a.ints("pads").unwrap_or_else(|| vec![0; 2 * nsp]);
    if strides.len() != nsp || dil.len() != nsp || pads.len() != 2 * nsp || strides.iter().any(|&s| s <= 0) {
        return Err("strides/dilations/pads do not match the input rank".into());
    }
    let auto = a.string("auto_pad").unwrap_or_default();
    let ceil = a.int("ceil_mode").unwrap_or(0) != 0;
    let channels = if op == "Conv" { ins.shape(1)?.first().cloned().ok_or("Conv weight rank")? } else { x[1].clone() };
    let mut out = vec![x[0].clone(), channels];
    for i in 0..nsp {
        let d = &x[i + 2];
        let s = Expr::int(strides[i]);
        let eff = Expr::add(Expr::mul(Expr::int(dil[i]), Expr::sub(kernel[i].clone(), Expr::int(1))), Expr::int(1));
        let o = match auto.as_str() {
            "SAME_UPPER" | "SAME_LOWER" => ceil_div(d.clone(), s),
            "VALID" => Expr::add(Expr::floordiv(Expr::sub(d.clone(), eff), s), Expr::int(1)),
            _ => {
                let padded = Expr::sub(Expr::add(d.clone(), Expr::int(pads[i] + pads[i + nsp])), eff);
                let q = if ceil { ceil_div(padded, s) } else { Expr::floordiv(padded, s) };
                Expr::add(q, Expr::int(1))
            }
        };
        out.push(o);
    }
    Ok(out)
}

fn ceil_div(a: Expr, b: Expr) -> Expr {
    Expr::floordiv(Expr::sub(Expr::add(a, b.clone()), Expr::int(1)), b)
}

fn slice(ins: &Inputs, dt0: Option<DType>) -> Result<Outputs, String> {
    let s = ins.shape(0)?;
    let starts = ins.known_ints(1).ok_or("Slice starts are not constant")?;
    let ends = ins.known_ints(2).ok_or("Slice ends are not constant")?;
    let axes = match ins.known_ints(3) {
        Some(a) => a,
        None => (0..starts.len() as i64).collect(),
    };
    let steps = ins.known_ints(4).unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err("Slice starts/ends/axes/steps differ in length".into());
    }
    let mut out = s.to_vec();
    let mut known = ins.known(0).cloned();
    for k in 0..starts.len() {
        let axis = norm_axis(axes[k], s.len())?;
        let (st, en, step) = (starts[k], ends[k], steps[k]);
        if step == 0 {
            return Err("Slice step 0".into());
        }
        match s[axis].as_int() {
            Some(dim) => {
                let (lo, hi) = slice_bounds(st, en, step, dim);
                let n = if step > 0 { (hi - lo + step - 1).max(0) / step } else { (lo - hi - step - 1).max(0) / -step };
                out[axis] = Expr::int(n);
                known = match known.take() {
                    Some(vals) if axis == 0 && vals.len() as i64 == dim => {
                        (0..n).map(|j| usize::try_from(lo + j * step).ok().and_then(|i| vals.get(i).cloned())).collect()
                    }
                    _ => None,
                };
            }
            None if step == 1 => {
                // Symbolic length: the common forms only (`x[a:]`, `x[a:-b]`, `x[:b]` with a, b ≥ 0).
                let d = s[axis].clone();
                let hi = if en >= i64::MAX / 2 { d.clone() } else if en < 0 { Expr::add(d.clone(), Expr::int(en)) } else { Expr::int(en) };
                let lo = if st >= 0 { Expr::int(st) } else { return Err("negative Slice start on a symbolic dim".into()) };
                out[axis] = Expr::max(Expr::sub(hi, lo), Expr::int(0));
                known = None;
            }
            None => return Err("Slice with a step on a symbolic dim".into()),
        }
    }
    Ok(vec![(Info { dtype: dt0, shape: out }, known)])
}

/// ONNX/numpy slice clamping on a dim of known length: the first index and the exclusive end.
fn slice_bounds(st: i64, en: i64, step: i64, dim: i64) -> (i64, i64) {
    let norm = |v: i64| if v < 0 { v.saturating_add(dim) } else { v };
    if step > 0 {
        (norm(st).clamp(0, dim), norm(en).clamp(0, dim))
    } else {
        (norm(st).clamp(-1, dim - 1), norm(en).clamp(-1, dim - 1))
    }
}

fn elementwise_known(op: &str, x: &[Expr], y: &[Expr]) -> Option<Vec<Expr>> {
    let n = x.len().max(y.len());
    if !(x.len() == n || x.len() == 1) || !(y.len() == n || y.len() == 1) {
        return None;
    }
    (0..n)
        .map(|i| {
            let (a, b) = (x[if x.len() == 1 { 0 } else { i }].clone(), y[if y.len() == 1 { 0 } else { i }].clone());
            Some(match op {
                "Add" => Expr::add(a, b),
                "Sub" => Expr::sub(a, b),
                "Mul" => Expr::mul(a, b),
                "Div" => Expr::floordiv(a, b),
                _ => return None,
            })
        })
        .collect()
}

/// Numpy broadcasting of two shapes.
pub fn broadcast(a: &[Expr], b: &[Expr]) -> Result<Vec<Expr>, String> {
    let n = a.len().max(b.len());
    let one = Expr::int(1);
    (0..n)
        .map(|i| {
            let x = if i + a.len() >= n { &a[i + a.len() - n] } else { &one };
            let y = if i + b.len() >= n { &b[i + b.len() - n] } else { &one };
            match (x.as_int(), y.as_int()) {
                (Some(1), _) => Ok(y.clone()),
                (_, Some(1)) => Ok(x.clone()),
                _ if x == y => Ok(x.clone()),
                (Some(p), Some(q)) => Err(format!("cannot broadcast {p} with {q}")),
                (Some(_), None) => Ok(x.clone()),
                (None, Some(_)) => Ok(y.clone()),
                (None, None) => Ok(Expr::max(x.clone(), y.clone())),
            }
        })
        .collect()
}

fn matmul(a: &[Expr], b: &[Expr]) -> Result<Vec<Expr>, String> {
    if a.is_empty() || b.is_empty() {
        return Err("MatMul of a scalar".into());
    }
    let (a2, squeeze_a) = if a.len() == 1 { (vec![Expr::int(1), a[0].clone()], true) } else { (a.to_vec(), false) };
    let (b2, squeeze_b) = if b.len() == 1 { (vec![b[0].clone(), Expr::int(1)], true) } else { (b.to_vec(), false) };
    let batch = broadcast(&a2[..a2.len() - 2], &b2[..b2.len() - 2])?;
    let mut out = batch;
    if !squeeze_a {
        out.push(a2[a2.len() - 2].clone());
    }
    if !squeeze_b {
        out.push(b2[b2.len() - 1].clone());
    }
    Ok(out)
}

fn reshape(input: &[Expr], target: &[Expr], allowzero: bool) -> Result<Vec<Expr>, String> {
    let mut out: Vec<Expr> = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (i, t) in target.iter().enumerate() {
        match t.as_int() {
            Some(-1) => {
                if infer_at.replace(i).is_some() {
                    return Err("Reshape with two -1 dims".into());
                }
                out.push(Expr::int(1));
            }
            Some(0) if !allowzero => out.push(input.get(i).cloned().ok_or("Reshape copies a dim the input lacks")?),
            _ => out.push(t.clone()),
        }
    }
    if let Some(i) = infer_at {
        let rest = product(&out);
        out[i] = exact_div(product(input), rest);
    }
    Ok(out)
}

/// `a / b` when it divides exactly as a monomial (`32*s0*s1 / (8*s1)` → `4*s0`), else `a // b`.
fn exact_div(a: Expr, b: Expr) -> Expr {
    let q = Expr::truediv(a.clone(), b.clone());
    if is_polynomial(&q) {
        q
    } else {
        Expr::floordiv(a, b)
    }
}

fn is_polynomial(e: &Expr) -> bool {
    match e {
        Expr::Int(_) | Expr::Symbol(_) => true,
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().all(is_polynomial),
        Expr::Pow(p) => matches!(p.1, Expr::Int(k) if k >= 0) && is_polynomial(&p.0),
        Expr::Call(_, xs) => xs.iter().all(is_polynomial),
        _ => false,
    }
}

fn product(dims: &[Expr]) -> Expr {
    dims.iter().fold(Expr::int(1), |acc, d| Expr::mul(acc, d.clone()))
}

fn norm_axis(axis: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r.max(1)).contains(&a) {
        Ok(a as usize)
    } else {
        Err(format!("axis {axis} is out of range for rank {rank}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(names: &[&str]) -> Vec<Expr> {
        names.iter().map(|n| n.parse::<i64>().map(Expr::int).unwrap_or_else(|_| Expr::symbol(n))).collect()
    }

    fn show(v: &[Expr]) -> Vec<String> {
        v.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn broadcast_matmul_and_reshape_follow_numpy() {
        assert_eq!(show(&broadcast(&s(&["b", "1", "8"]), &s(&["4", "8"])).unwrap()), ["b", "4", "8"]);
        assert!(broadcast(&s(&["3"]), &s(&["4"])).is_err());
        assert_eq!(show(&matmul(&s(&["b", "4", "q", "8"]), &s(&["b", "4", "8", "q"])).unwrap()), ["b", "4", "q", "q"]);
        assert_eq!(show(&matmul(&s(&["8"]), &s(&["8", "3"])).unwrap()), ["3"]);
        let r = reshape(&s(&["b", "4", "q", "8"]), &s(&["-1", "q", "8"]), false).unwrap();
        assert_eq!(show(&r), ["4*b", "q", "8"]);
        let r = reshape(&s(&["b", "q", "32"]), &s(&["0", "0", "4", "8"]), false).unwrap();
        assert_eq!(show(&r), ["b", "q", "4", "8"]);
    }

    #[test]
    fn conv_and_pool_sizes() {
        let x = Info { dtype: Some(DType::F32), shape: s(&["b", "3", "16", "16"]) };
        let w = Info { dtype: Some(DType::F32), shape: s(&["8", "3", "3", "3"]) };
        let ins = Inputs { infos: vec![Some(&x), Some(&w)], known: vec![None, None] };
        let attrs = [
            AttributeProto { name: Some("pads".into()), r#type: Some(attr_type::INTS), ints: vec![1, 1, 1, 1], ..Default::default() },
            AttributeProto { name: Some("strides".into()), r#type: Some(attr_type::INTS), ints: vec![2, 2], ..Default::default() },
        ];
        let out = infer("Conv", &Attrs(&attrs), &ins, 1).unwrap();
        assert_eq!(show(&out[0].0.shape), ["b", "8", "8", "8"]);
    }
}
