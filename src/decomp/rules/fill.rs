//! Factories and fills: `new_zeros` → `full`, `fill` → `full_like` / `copy`, and Inductor's
//! `full_like` → `full` (what functionalized `x[...].fill_(v)` and masks built in place become).

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, SymIntArg, ValueId};

/// `new_zeros(self, size)` → `full(size, 0)` with `self`'s dtype and device unless given.
pub fn new_zeros(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    super::view::new_full(rw, 0)
}

/// `fill.Scalar(self, v)` → `full_like(self, v)` (torch/_decomp's `fill_scalar`).
pub fn fill_scalar(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let v = rw.scalar("value").ok_or_else(|| RuleError::Arg { name: "value".into(), message: "expected a number".into() })?;
    Ok(vec![rw.op("aten.full_like.default", vec![("self", A::T(x)), ("fill_value", v)])?])
}

/// `fill.Tensor(self, v)` → `copy(self, v)` of a 0-dim `v` (torch/_decomp's `fill_tensor`).
pub fn fill_tensor(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, v) = (rw.t("self")?, rw.t("value")?);
    if rw.rank(v)? != 0 {
        return Err(RuleError::Arg { name: "value".into(), message: "fill takes a 0-dim tensor".into() });
    }
    Ok(vec![rw.op("aten.copy.default", vec![("self", A::T(x)), ("src", A::T(v))])?])
}

/// `lift_fresh_copy(x)` → `clone(x)`.
pub fn lift_fresh_copy(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    Ok(vec![rw.op("aten.clone.default", vec![("self", A::T(x))])?])
}

/// Whether `m`'s dims are laid out outermost first (strides non-increasing over the dims of size
/// above 1): then Inductor's physical permutation of it is the identity and `full_like` is one
/// `full`. A slice of a row-major tensor is row-major too, contiguous or not.
fn row_major(m: &crate::ir::TensorMeta) -> bool {
    if super::view::is_contiguous(m) {
        return true;
    }
    let strides: Option<Vec<i64>> =
        m.sizes.iter().zip(&m.strides).filter(|(s, _)| s.as_int() != Some(1)).map(|(_, st)| st.as_int()).collect();
    strides.is_some_and(|s| s.windows(2).all(|w| w[0] >= w[1]))
}

/// Inductor's `full_like(self, v)` → `full(self.shape, v)` in `self`'s dtype and device, for a
/// row-major `self` with the default memory format. Inductor permutes a `full` of the
/// physical shape for other layouts; those are kept whole here.
pub fn full_like(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let meta = rw.meta(x)?.clone();
    let default_format = match rw.passthrough("memory_format")? {
        None | Some(Arg::None) => true,
        Some(Arg::MemoryFormat(f)) => f.contains("preserve"),
        Some(_) => false,
    };
    if !row_major(&meta) || !default_format {
        return Err(RuleError::Declined);
    }
    let v = rw.scalar("fill_value").ok_or_else(|| RuleError::Arg { name: "fill_value".into(), message: "expected a number".into() })?;
    let dtype = match rw.passthrough("dtype")? {
        Some(Arg::ScalarType(d)) => d,
        _ => meta.dtype,
    };
    let sizes: Vec<SymIntArg> = (0..meta.sizes.len()).map(|d| rw.size(x, d)).collect::<Result<_, _>>()?;
    let args = vec![
        ("size", A::Sizes(sizes)),
        ("fill_value", v),
        ("dtype", A::Raw(Arg::ScalarType(dtype))),
        ("device", A::Raw(Arg::Device(meta.device.clone()))),
        ("pin_memory", A::B(false)),
    ];
    Ok(vec![rw.op("aten.full.default", args)?])
}
