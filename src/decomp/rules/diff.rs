//! `diff(x, n, dim, prepend, append)` as ATen's composite body (`ReduceOps.cpp`: `diff` →
//! `prepend_append_on_dim` → `diff_helper`): `prepend`/`append` joined on by `cat`, then `n`
//! times `narrow(1, len) - narrow(0, len)` (`logical_xor` for booleans), `len` shrinking by one.
//! Both tables trace it so (Voxtral-Realtime's encoder, a prepended frame).

use super::{dim, Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, ValueId};

pub fn diff(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let n = rw.int("n", Some(1))?;
    let d_arg = rw.int("dim", Some(-1))?;
    let d = dim(d_arg, rw.rank(x)?, "dim")?;
    if n < 0 {
        return Err(RuleError::Arg { name: "n".into(), message: format!("must be non-negative, got {n}") });
    }
    let (pre, app) = (rw.opt_t("prepend")?, rw.opt_t("append")?);
    let joined = n > 0 && (pre.is_some() || app.is_some());
    let parts: Vec<ValueId> = if joined { pre.into_iter().chain([x]).chain(app).collect() } else { vec![x] };
    // Slices of a symbolic length are not spelled here (torch's `narrow_symint` sizes): such a
    // node stays whole, as before this rule (TinyLlama's `diff` of positions), and runs as is.
    let mut size = 0;
    for &t in &parts {
        match rw.meta(t)?.sizes.get(d).and_then(|e| e.as_int()) {
            Some(s) => size += s,
            None => return Err(RuleError::Declined),
        }
    }
    let mut y = x;
    if joined {
        y = rw.op("aten.cat.default", vec![("tensors", A::Raw(Arg::Tensors(parts))), ("dim", A::I(d_arg))])?;
    }
    let boolean = rw.meta(y)?.dtype == crate::ir::DType::Bool;
    // ATen caps `n` at the dim's size (an empty result after that many steps).
    let mut len = size - 1;
    for _ in 0..n.min(size) {
        let narrow = |rw: &mut Rw, start: i64| {
            rw.op("aten.slice.Tensor", vec![("self", A::T(y)), ("dim", A::I(d_arg)), ("start", A::I(start)), ("end", A::I(start + len))])
        };
        let (hi, lo) = (narrow(rw, 1)?, narrow(rw, 0)?);
        y = if boolean {
            rw.op("aten.logical_xor.default", vec![("self", A::T(hi)), ("other", A::T(lo))])?
        } else {
            rw.op("aten.sub.Tensor", vec![("self", A::T(hi)), ("other", A::T(lo))])?
        };
        len -= 1;
    }
    Ok(vec![y])
}
