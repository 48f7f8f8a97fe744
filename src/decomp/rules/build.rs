//! One-line emitters of the ATen ops that composite rules are built from (`permute`, `sum`,
//! `slice`, ...), spelled as PyTorch's traced graphs spell them, so the rules read like the
//! C++ / Python bodies they follow.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{SymIntArg, ValueId};

type R = Result<ValueId, RuleError>;

pub(super) fn permute(rw: &mut Rw, x: ValueId, dims: &[usize]) -> R {
    let dims = dims.iter().map(|&d| d as i64).collect();
    rw.op("aten.permute.default", vec![("self", A::T(x)), ("dims", A::Is(dims))])
}

pub(super) fn unsqueeze(rw: &mut Rw, x: ValueId, dim: i64) -> R {
    rw.op("aten.unsqueeze.default", vec![("self", A::T(x)), ("dim", A::I(dim))])
}

/// `x.sum(dims, keepdim)` (`sum.dim_IntList`).
pub(super) fn sum(rw: &mut Rw, x: ValueId, dims: &[usize], keepdim: bool) -> R {
    let dims = dims.iter().map(|&d| d as i64).collect();
    rw.op("aten.sum.dim_IntList", vec![("self", A::T(x)), ("dim", A::Is(dims)), ("keepdim", A::B(keepdim))])
}

/// `target(self, other)` for a binary elementwise op, `other` a tensor or a number.
pub(super) fn binary(rw: &mut Rw, target: &str, x: ValueId, other: A) -> R {
    rw.op(target, vec![("self", A::T(x)), ("other", other)])
}

/// `x[start:end]` along `dim` (`slice.Tensor`); `end` past the size means "to the end".
pub(super) fn slice(rw: &mut Rw, x: ValueId, dim: usize, start: i64, end: i64) -> R {
    rw.op(
        "aten.slice.Tensor",
        vec![("self", A::T(x)), ("dim", A::I(dim as i64)), ("start", A::I(start)), ("end", A::I(end)), ("step", A::I(1))],
    )
}

pub(super) fn select(rw: &mut Rw, x: ValueId, dim: usize, index: i64) -> R {
    rw.op("aten.select.int", vec![("self", A::T(x)), ("dim", A::I(dim as i64)), ("index", A::I(index))])
}

pub(super) fn view(rw: &mut Rw, x: ValueId, sizes: Vec<SymIntArg>) -> R {
    rw.op("aten.view.default", vec![("self", A::T(x)), ("size", A::Sizes(sizes))])
}

pub(super) fn expand(rw: &mut Rw, x: ValueId, sizes: Vec<SymIntArg>) -> R {
    rw.op("aten.expand.default", vec![("self", A::T(x)), ("size", A::Sizes(sizes))])
}

pub(super) fn cat(rw: &mut Rw, xs: Vec<ValueId>, dim: i64) -> R {
    rw.op("aten.cat.default", vec![("tensors", A::Raw(crate::ir::Arg::Tensors(xs))), ("dim", A::I(dim))])
}

pub(super) fn mm(rw: &mut Rw, a: ValueId, b: ValueId) -> R {
    rw.op("aten.mm.default", vec![("self", A::T(a)), ("mat2", A::T(b))])
}

/// Every size of `x` as SymInt arguments.
pub(super) fn sizes(rw: &mut Rw, x: ValueId) -> Result<Vec<SymIntArg>, RuleError> {
    (0..rw.rank(x)?).map(|d| rw.size(x, d)).collect()
}

/// Whether dim `d` of `x` may be other than 1: symbolic sizes count as not 1, as export
/// specialises sizes 0 and 1 and every size-1 test on a dynamic dim guards it.
pub(super) fn not_one(rw: &Rw, x: ValueId, d: usize) -> Result<bool, RuleError> {
    Ok(rw.meta(x)?.sizes.get(d).and_then(|s| s.as_int()) != Some(1))
}

/// A size as a scalar argument: a literal when static, else the SymInt value.
pub(super) fn size_arg(s: SymIntArg) -> A {
    match s {
        SymIntArg::Int(i) => A::I(i),
        v => A::Raw(crate::ir::Arg::SymInt(v)),
    }
}

/// `x[:, ..., :]` over the first `n` dims, before an advanced index (`x[:, :, rows, cols]`):
/// ATen's indexing skips a `:` it can tell spans a static dim, and records the `:`s over dynamic
/// dims as whole-dim `slice`s up to the first static one, after which none is recorded (torch
/// 2.15's graphs: `[s0, s1, ..][:, :, i]` slices dims 0 and 1, `[s0, 4, s2, ..][:, :, :, i]`
/// dim 0 only, `[s0, 4, ..][:, :, i]` dim 0).
pub(super) fn leading_full_slices(rw: &mut Rw, x: ValueId, n: usize) -> R {
    let mut out = x;
    for d in 0..n {
        if rw.meta(out)?.sizes.get(d).is_none_or(|s| s.as_int().is_some()) {
            break;
        }
        out = rw.op("aten.slice.Tensor", vec![("self", A::T(out)), ("dim", A::I(d as i64)), ("start", A::I(0)), ("end", A::I(i64::MAX))])?;
    }
    Ok(out)
}
