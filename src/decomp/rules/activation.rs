//! Pointwise activations and small arithmetic helpers, in the forms Inductor's table emits
//! (e.g. `silu(x) = x / (1 + exp(-x))`, `gelu(x) = x/2 * (1 + erf(x/√2))`).

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::ValueId;

fn un(rw: &mut Rw, target: &str, x: ValueId) -> Result<ValueId, RuleError> {
    rw.op(target, vec![("self", A::T(x))])
}

fn bin(rw: &mut Rw, target: &str, x: ValueId, other: A) -> Result<ValueId, RuleError> {
    rw.op(target, vec![("self", A::T(x)), ("other", other)])
}

pub fn gelu(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let y = match rw.string("approximate", "none")?.as_str() {
        "none" => {
            let half = bin(rw, "aten.mul.Tensor", x, A::F(0.5))?;
            let scaled = bin(rw, "aten.mul.Tensor", x, A::F(std::f64::consts::FRAC_1_SQRT_2))?;
            let erf = un(rw, "aten.erf.default", scaled)?;
            let one_plus = bin(rw, "aten.add.Tensor", erf, A::I(1))?;
            bin(rw, "aten.mul.Tensor", half, A::T(one_plus))?
        }
        "tanh" => {
            // x/2 * (1 + tanh(√(2/π) * (x + 0.044715 x³)))
            let x2 = bin(rw, "aten.mul.Tensor", x, A::T(x))?;
            let x3 = bin(rw, "aten.mul.Tensor", x2, A::T(x))?;
            let c = bin(rw, "aten.mul.Tensor", x3, A::F(0.044715))?;
            let inner = bin(rw, "aten.add.Tensor", x, A::T(c))?;
            let k = (2.0 / std::f64::consts::PI).sqrt();
            let scaled = bin(rw, "aten.mul.Tensor", inner, A::F(k))?;
            let half = bin(rw, "aten.mul.Tensor", x, A::F(0.5))?;
            let t = un(rw, "aten.tanh.default", scaled)?;
            let one_plus = bin(rw, "aten.add.Tensor", t, A::I(1))?;
            bin(rw, "aten.mul.Tensor", half, A::T(one_plus))?
        }
        other => return Err(RuleError::Arg { name: "approximate".into(), message: format!("unknown `{other}`") }),
    };
    Ok(vec![y])
}

/// Core ATen: `x * sigmoid(x)`.
pub fn silu_core(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let s = un(rw, "aten.sigmoid.default", x)?;
    Ok(vec![bin(rw, "aten.mul.Tensor", x, A::T(s))?])
}

/// Inductor: `x / (1 + exp(-x))`.
pub fn silu(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let n = un(rw, "aten.neg.default", x)?;
    let e = un(rw, "aten.exp.default", n)?;
    let d = bin(rw, "aten.add.Tensor", e, A::I(1))?;
    Ok(vec![bin(rw, "aten.div.Tensor", x, A::T(d))?])
}

/// `clamp(x + 3, 0, 6)` with `clamp` (core) or `clamp_min`/`clamp_max` (Inductor).
fn relu6_of_shift(rw: &mut Rw, x: ValueId, split_clamp: bool) -> Result<ValueId, RuleError> {
    let shifted = bin(rw, "aten.add.Tensor", x, A::I(3))?;
    if split_clamp {
        let lo = rw.op("aten.clamp_min.default", vec![("self", A::T(shifted)), ("min", A::I(0))])?;
        rw.op("aten.clamp_max.default", vec![("self", A::T(lo)), ("max", A::I(6))])
    } else {
        let lo = rw.op("aten.clamp.default", vec![("self", A::T(shifted)), ("min", A::I(0))])?;
        rw.op("aten.clamp.default", vec![("self", A::T(lo)), ("max", A::I(6))])
    }
}

fn hardswish_with(rw: &mut Rw, split: bool) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let r = relu6_of_shift(rw, x, split)?;
    let m = bin(rw, "aten.mul.Tensor", x, A::T(r))?;
    Ok(vec![bin(rw, "aten.div.Tensor", m, A::I(6))?])
}

fn hardsigmoid_with(rw: &mut Rw, split: bool) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let r = relu6_of_shift(rw, x, split)?;
    Ok(vec![bin(rw, "aten.div.Tensor", r, A::I(6))?])
}

pub fn hardswish_core(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    hardswish_with(rw, false)
}

pub fn hardswish(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    hardswish_with(rw, true)
}

pub fn hardsigmoid_core(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    hardsigmoid_with(rw, false)
}

pub fn hardsigmoid(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    hardsigmoid_with(rw, true)
}

/// `relu6` → `hardtanh(x, 0, 6)` (which Inductor splits further).
pub fn relu6(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    Ok(vec![rw.op(
        "aten.hardtanh.default",
        vec![("self", A::T(x)), ("min_val", A::I(0)), ("max_val", A::I(6))],
    )?])
}

pub fn hardtanh(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let lo = rw.scalar("min_val").unwrap_or(A::I(-1));
    let hi = rw.scalar("max_val").unwrap_or(A::I(1));
    let a = rw.op("aten.clamp_min.default", vec![("self", A::T(x)), ("min", lo)])?;
    Ok(vec![rw.op("aten.clamp_max.default", vec![("self", A::T(a)), ("max", hi)])?])
}

/// `clamp(x, min, max)` → `clamp_min` then `clamp_max`, skipping a bound that is absent.
pub fn clamp(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let mut y = rw.t("self")?;
    let (lo, hi) = (rw.scalar("min"), rw.scalar("max"));
    if lo.is_none() && hi.is_none() {
        return Err(RuleError::Unsupported("clamp without a scalar min or max (tensor bounds)".into()));
    }
    if let Some(lo) = lo {
        y = rw.op("aten.clamp_min.default", vec![("self", A::T(y)), ("min", lo)])?;
    }
    if let Some(hi) = hi {
        y = rw.op("aten.clamp_max.default", vec![("self", A::T(y)), ("max", hi)])?;
    }
    Ok(vec![y])
}

/// Dropout in an inference graph (`train=False`) is the identity, as PyTorch emits it: a `clone`
/// up to torch 2.11, the input itself in 2.15.
pub fn dropout(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    if rw.bool("train", false)? {
        return Err(RuleError::Unsupported("dropout with train=True is random; inference graphs only".into()));
    }
    let x = rw.t("input")?;
    // torch 2.11's decomposition returns `input.clone()`; 2.15's returns `input` itself.
    if rw.torch_older_than(2, 12) {
        Ok(vec![un(rw, "aten.clone.default", x)?])
    } else {
        Ok(vec![x])
    }
}

/// In-place dropout in an inference graph: the input, unchanged (no `clone` in any version).
pub fn dropout_inplace(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    if rw.bool("train", false)? {
        return Err(RuleError::Unsupported("dropout with train=True is random; inference graphs only".into()));
    }
    Ok(vec![rw.t("self")?])
}

/// `addcmul(self, t1, t2, value)` → `self + (t1 * value) * t2`. Inductor's table leaves it out
/// from torch 2.13 on (its lowering keeps eager CUDA's fused multiply-add), as the graph's
/// torch's kernel table records: there it stays whole (CSATv2 under 2.15, 14 nodes).
pub fn addcmul(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    if rw.table() == Some(super::Table::Inductor) && !super::decomposes_in_torch(super::Table::Inductor, rw.target(), rw.torch_version()) {
        return Err(RuleError::Declined);
    }
    let x = rw.t("self")?;
    let t1 = rw.t("tensor1")?;
    let t2 = rw.t("tensor2")?;
    let value = rw.scalar("value").unwrap_or(A::I(1));
    let scaled = bin(rw, "aten.mul.Tensor", t1, value)?;
    let prod = bin(rw, "aten.mul.Tensor", scaled, A::T(t2))?;
    Ok(vec![bin(rw, "aten.add.Tensor", x, A::T(prod))?])
}

fn correction(rw: &Rw) -> Result<i64, RuleError> {
    Ok(if rw.bool("unbiased", true)? { 1 } else { 0 })
}

/// `var.dim(unbiased)` → `var.correction(correction = unbiased ? 1 : 0)`.
pub fn var_dim(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let c = correction(rw)?;
    let dims = rw.ints("dim")?;
    let keep = rw.bool("keepdim", false)?;
    Ok(vec![rw.op(
        "aten.var.correction",
        vec![("self", A::T(x)), ("dim", dims.map(A::Is).unwrap_or(A::Raw(crate::ir::Arg::None))), ("correction", A::I(c)), ("keepdim", A::B(keep))],
    )?])
}

/// `std.dim` → `sqrt(var.correction(...))`.
pub fn std_dim(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let v = var_dim(rw)?[0];
    Ok(vec![un(rw, "aten.sqrt.default", v)?])
}

/// `floor_divide(a, b)` → `div(a, b, rounding_mode="floor")` (torch/_decomp), in both tables.
/// `b` as exported: a tensor, or a number (the MoE routers' `index // 2`).
pub fn floor_divide(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let y = rw.passthrough("other")?.ok_or_else(|| RuleError::Arg { name: "other".into(), message: "missing".into() })?;
    let args = vec![("self", A::T(x)), ("other", A::Raw(y)), ("rounding_mode", A::S("floor".into()))];
    Ok(vec![rw.op("aten.div.Tensor_mode", args)?])
}
