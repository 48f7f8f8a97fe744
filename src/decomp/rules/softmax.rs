//! Softmax family. Inductor's numerically safe form: subtract the row max (`amax`), `exp`,
//! `sum`, then `div` (softmax) or `log` and `sub` (log-softmax).

use super::{dim, Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, DType, ValueId};

fn primitive_args(rw: &Rw) -> Result<Vec<(&'static str, A)>, RuleError> {
    Ok(vec![("self", A::T(rw.t("self")?)), ("dim", A::I(rw.int("dim", None)?)), ("half_to_float", A::B(false))])
}

/// `softmax.int` → `_softmax` (core ATen).
pub fn softmax(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let args = primitive_args(rw)?;
    Ok(vec![rw.op("aten._softmax.default", args)?])
}

/// `log_softmax.int` → `_log_softmax` (core ATen).
pub fn log_softmax(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let args = primitive_args(rw)?;
    Ok(vec![rw.op("aten._log_softmax.default", args)?])
}

/// `x - amax(x, dim)` and `exp` of it, shared by both forms. torch/_decomp's `_softmax` and
/// `_log_softmax` first call `x.contiguous()` (eager softmax returns a contiguous tensor, and so
/// must the decomposition): a `clone` of a permuted or otherwise non-row-major input (CoaT's
/// attention over a transposed key), none of a row-major one.
fn shifted_exp(rw: &mut Rw) -> Result<(ValueId, ValueId), RuleError> {
    if rw.bool("half_to_float", false)? {
        return Err(RuleError::Unsupported("half_to_float=True".into()));
    }
    let x = rw.t("self")?;
    let x = super::layout::contiguous(rw, x)?;
    let rank = rw.rank(x)?;
    let d = rw.int("dim", None)?;
    dim(d, rank.max(1), "dim")?;
    let max = rw.op("aten.amax.default", vec![("self", A::T(x)), ("dim", A::Is(vec![d])), ("keepdim", A::B(true))])?;
    let shifted = rw.op("aten.sub.Tensor", vec![("self", A::T(x)), ("other", A::T(max))])?;
    let e = rw.op("aten.exp.default", vec![("self", A::T(shifted))])?;
    Ok((shifted, e))
}

fn row_sum(rw: &mut Rw, e: ValueId) -> Result<ValueId, RuleError> {
    let d = rw.int("dim", None)?;
    rw.op("aten.sum.dim_IntList", vec![("self", A::T(e)), ("dim", A::Is(vec![d])), ("keepdim", A::B(true))])
}

pub fn softmax_primitive(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (_, e) = shifted_exp(rw)?;
    let s = row_sum(rw, e)?;
    Ok(vec![rw.op("aten.div.Tensor", vec![("self", A::T(e)), ("other", A::T(s))])?])
}

pub fn log_softmax_primitive(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (shifted, e) = shifted_exp(rw)?;
    let s = row_sum(rw, e)?;
    let l = rw.op("aten.log.default", vec![("self", A::T(s))])?;
    Ok(vec![rw.op("aten.sub.Tensor", vec![("self", A::T(shifted)), ("other", A::T(l))])?])
}

/// `logsumexp(x, dim, keepdim)` as `torch._refs.logsumexp`: the max over `dim` (kept), set to 0
/// where infinite (`masked_fill`), `log(sum(exp(x - max))) + max`, the max squeezed unless
/// `keepdim`; a statically empty `x` is `log(sum(exp(x)))`. Inkling's router kept it whole in
/// both tables.
pub fn logsumexp(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let dtype = rw.meta(x)?.dtype;
    if dtype.is_complex() {
        return Err(RuleError::Unsupported(format!("logsumexp of a {dtype} tensor")));
    }
    // The ref's INT_TO_FLOAT promotion: an integer or bool input is computed (and returned) in
    // the default float dtype.
    let x = if dtype.is_floating() {
        x
    } else {
        rw.op("prims.convert_element_type.default", vec![("a", A::T(x)), ("dtype", A::Raw(Arg::ScalarType(DType::F32)))])?
    };
    let dims = rw.ints("dim")?.unwrap_or_default();
    let keepdim = rw.bool("keepdim", false)?;
    let sum_exp = |rw: &mut Rw, v: ValueId| -> Result<ValueId, RuleError> {
        let e = rw.op("aten.exp.default", vec![("self", A::T(v))])?;
        let s = rw.op("aten.sum.dim_IntList", vec![("self", A::T(e)), ("dim", A::Is(dims.clone())), ("keepdim", A::B(keepdim))])?;
        rw.op("aten.log.default", vec![("self", A::T(s))])
    };
    if rw.static_sizes(x).is_some_and(|s| s.contains(&0)) {
        return Ok(vec![sum_exp(rw, x)?]);
    }
    let m = rw.op("aten.amax.default", vec![("self", A::T(x)), ("dim", A::Is(dims.clone())), ("keepdim", A::B(true))])?;
    let a = rw.op("aten.abs.default", vec![("self", A::T(m))])?;
    let inf = rw.op("aten.eq.Scalar", vec![("self", A::T(a)), ("other", A::F(f64::INFINITY))])?;
    let m = rw.op("aten.masked_fill.Scalar", vec![("self", A::T(m)), ("mask", A::T(inf)), ("value", A::I(0))])?;
    let squeezed = if keepdim { m } else { rw.op("aten.squeeze.dims", vec![("self", A::T(m)), ("dim", A::Is(dims.clone()))])? };
    let d = rw.op("aten.sub.Tensor", vec![("self", A::T(x)), ("other", A::T(m))])?;
    let l = sum_exp(rw, d)?;
    Ok(vec![rw.op("aten.add.Tensor", vec![("self", A::T(l)), ("other", A::T(squeezed))])?])
}

#[cfg(test)]
mod tests {
    use crate::decomp::{decompose, Marks, Mode};
    use crate::ir::{Arg, DType, Graph, InputKind, NamedArg, NodeMeta, TensorMeta, ValueKind};
    use crate::sym::Expr;

    /// Inductor's `_softmax` and `_log_softmax` of a transposed input copy it first (CoaT's
    /// factorised attention takes the softmax of a permuted key); of a row-major one they do not.
    #[test]
    fn softmax_copies_a_non_row_major_input() {
        let arg = |name: &str, arg: Arg| NamedArg { name: name.into(), arg, kwarg: false };
        for target in ["aten._softmax.default", "aten._log_softmax.default"] {
            for transpose in [false, true] {
                let mut g = Graph::new("g");
                let sizes = vec![Expr::symbol("s0"), Expr::int(3), Expr::int(4)];
                let x = g.add_input("x", ValueKind::Tensor(TensorMeta::contiguous(DType::F32, sizes)), InputKind::UserInput).unwrap();
                let add = |g: &mut Graph, name: &str, target: &str, args: Vec<NamedArg>| {
                    let kinds = crate::infer::infer(target, &args, g).unwrap();
                    let outs = kinds.into_iter().map(|k| (name.to_string(), k)).collect();
                    let id = g.add_node(name, target, args, outs, NodeMeta::default()).unwrap();
                    g.node(id).outputs[0]
                };
                let y = if transpose {
                    add(&mut g, "t", "aten.transpose.int", vec![arg("self", Arg::Tensor(x)), arg("dim0", Arg::Int(1)), arg("dim1", Arg::Int(2))])
                } else {
                    x
                };
                let args = vec![arg("self", Arg::Tensor(y)), arg("dim", Arg::Int(1)), arg("half_to_float", Arg::Bool(false))];
                let out = add(&mut g, "s", target, args);
                g.outputs.push(Arg::Tensor(out));
                let ops = decompose(&g, Mode::Full, &Marks::default()).unwrap().graph.op_histogram();
                let clones = ops.get("aten.clone.default").copied().unwrap_or(0);
                assert_eq!(clones, usize::from(transpose), "{target}, transposed: {transpose}: {ops:?}");
            }
        }
    }
}
