//! Inductor's `cat`: empty inputs dropped, one input left is a `clone`, and a tensor joined with
//! itself (RoPE's `cat((freqs, freqs), -1)`) is `unsqueeze` → `expand` → `flatten` → `clone`
//! instead of a concatenation. Anything else stays `cat`.

use super::{dim, Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, SymIntArg, ValueId};

/// `concat` and `concatenate`, names of `cat` (ATen's composite bodies call `at::cat`): the
/// `cat` they are, which the table then decomposes as any `cat` (Phi-MoE's `torch.concat`).
pub fn cat_alias(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let tensors = rw.passthrough("tensors")?.ok_or_else(|| RuleError::Arg { name: "tensors".into(), message: "missing".into() })?;
    let d = rw.int("dim", Some(0))?;
    rw.op_n("aten.cat.default", vec![("tensors", A::Raw(tensors)), ("dim", A::I(d))])
}

pub fn cat(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let tensors = match rw.passthrough("tensors")? {
        Some(Arg::Tensors(v)) if !v.is_empty() => v,
        _ => return Err(RuleError::Arg { name: "tensors".into(), message: "expected a non-empty tensor list".into() }),
    };
    let d = rw.int("dim", Some(0))?;
    // Statically empty inputs (`cat([x, zeros(0)])`) go, as Inductor's guard-free filter does.
    let mut kept = Vec::new();
    for &t in &tensors {
        let sizes = &rw.meta(t)?.sizes;
        let empty_1d = sizes.len() == 1 && sizes[0].as_int() == Some(0);
        let empty_dim = usize::try_from(if d < 0 { d + sizes.len() as i64 } else { d })
            .ok()
            .and_then(|i| sizes.get(i))
            .is_some_and(|s| s.as_int() == Some(0));
        if !(empty_1d || empty_dim) {
            kept.push(t);
        }
    }
    let dtypes: Vec<_> = tensors.iter().map(|t| rw.meta(*t).map(|m| m.dtype)).collect::<Result<_, _>>()?;
    if dtypes.iter().any(|d| *d != dtypes[0]) {
        return Err(RuleError::Declined);
    }
    match kept.as_slice() {
        [one] => Ok(vec![rw.op("aten.clone.default", vec![("self", A::T(*one))])?]),
        [first, rest @ ..] if !rest.is_empty() && rest.iter().all(|t| t == first) => {
            let x = *first;
            let rank = rw.rank(x)?;
            let d = dim(d, rank, "dim")?;
            let mut shape: Vec<SymIntArg> = (0..rank).map(|i| rw.size(x, i)).collect::<Result<_, _>>()?;
            shape.insert(d, SymIntArg::Int(kept.len() as i64));
            let u = rw.op("aten.unsqueeze.default", vec![("self", A::T(x)), ("dim", A::I(d as i64))])?;
            let e = rw.op("aten.expand.default", vec![("self", A::T(u)), ("size", A::Sizes(shape))])?;
            let f = rw.op(
                "aten.flatten.using_ints",
                vec![("self", A::T(e)), ("start_dim", A::I(d as i64)), ("end_dim", A::I(d as i64 + 1))],
            )?;
            Ok(vec![rw.op("aten.clone.default", vec![("self", A::T(f))])?])
        }
        _ if kept.len() < tensors.len() => {
            Ok(vec![rw.op("aten.cat.default", vec![("tensors", A::Raw(Arg::Tensors(kept))), ("dim", A::I(d))])?])
        }
        _ => Err(RuleError::Declined),
    }
}

/// `stack` as torch's reference (`torch._refs.stack`, the function both export's and Inductor's
/// tables hold): before the last dim, one `cat` along the new dim and a `view` that splits it
/// out; at the end, each input `unsqueeze`d and `cat` along `dim` as given.
pub fn stack(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let tensors = match rw.passthrough("tensors")? {
        Some(Arg::Tensors(v)) if !v.is_empty() => v,
        _ => return Err(RuleError::Arg { name: "tensors".into(), message: "expected a non-empty tensor list".into() }),
    };
    let given = rw.int("dim", Some(0))?;
    let first = tensors[0];
    let rank = rw.rank(first)?;
    let d = dim(given, rank + 1, "dim")?;
    if d < rank {
        let mut shape: Vec<SymIntArg> = (0..rank).map(|i| rw.size(first, i)).collect::<Result<_, _>>()?;
        shape.insert(d, SymIntArg::Int(tensors.len() as i64));
        let joined = rw.op("aten.cat.default", vec![("tensors", A::Raw(Arg::Tensors(tensors))), ("dim", A::I(d as i64))])?;
        return Ok(vec![rw.op("aten.view.default", vec![("self", A::T(joined)), ("size", A::Sizes(shape))])?]);
    }
    let mut parts = Vec::with_capacity(tensors.len());
    for t in tensors {
        parts.push(rw.op("aten.unsqueeze.default", vec![("self", A::T(t)), ("dim", A::I(d as i64))])?);
    }
    Ok(vec![rw.op("aten.cat.default", vec![("tensors", A::Raw(Arg::Tensors(parts))), ("dim", A::I(given))])?])
}
