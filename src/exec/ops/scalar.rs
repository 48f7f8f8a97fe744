//! Symbolic-integer arithmetic made concrete: `sym_size` reads a real dim, and the `_operator`
//! builtins combine such ints the way Python does (floor division, sign-of-divisor modulo).

use super::{wrap_dim, OpCx, OpError, OpResult, Scalar};
use crate::exec::value::RtValue;

pub fn sym_size(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let d = wrap_dim(cx.int("dim")?, t.ndim())?;
    let size = t.shape().get(d).copied().unwrap_or(1);
    Ok(vec![RtValue::Int(size as i64)])
}

pub fn sym_numel(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    Ok(vec![RtValue::Int(cx.tensor("self")?.numel() as i64)])
}

/// Both operands of a builtin, which torch.export names `a` and `b`.
fn ints(cx: &OpCx) -> OpResult<(Scalar, Scalar)> {
    let get = |n: &str| {
        cx.opt_scalar(n)?.ok_or_else(|| OpError::Arg { arg: n.into(), message: "missing (a number is required)".into() })
    };
    Ok((get("a")?, get("b")?))
}

fn int_op(cx: &OpCx, i: fn(i64, i64) -> Option<i64>, f: fn(f64, f64) -> f64) -> OpResult<Vec<RtValue>> {
    match ints(cx)? {
        (Scalar::Int(a), Scalar::Int(b)) => i(a, b)
            .map(|v| vec![RtValue::Int(v)])
            .ok_or_else(|| OpError::Unsupported(format!("{} of {a} and {b} overflows or divides by zero", cx.node.target))),
        (a, b) => Ok(vec![RtValue::Float(f(a.to_f64(), b.to_f64()))]),
    }
}

pub fn mul(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    int_op(cx, i64::checked_mul, |a, b| a * b)
}

pub fn add(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    int_op(cx, i64::checked_add, |a, b| a + b)
}

/// `torch.sym_min(a, b)`: Python's `min` on two ints (or floats), as export records a
/// `min()` of sizes.
pub fn sym_min(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    int_op(cx, |a, b| Some(a.min(b)), f64::min)
}

/// `torch.sym_max(a, b)`: Python's `max` on two ints (or floats).
pub fn sym_max(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    int_op(cx, |a, b| Some(a.max(b)), f64::max)
}

pub fn sub(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    int_op(cx, i64::checked_sub, |a, b| a - b)
}

/// Python `//`: rounds toward negative infinity.
pub(crate) fn floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    Some(if (a % b != 0) && ((a < 0) != (b < 0)) { q - 1 } else { q })
}

/// Python `%`: the result takes the divisor's sign.
pub(crate) fn py_mod(a: i64, b: i64) -> Option<i64> {
    let r = a.checked_rem(b)?;
    Some(if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r })
}

pub fn floordiv(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    int_op(cx, floor_div, |a, b| (a / b).floor())
}

/// Python `/` on sizes (`_operator.truediv`): always a float, as export records a float step's
/// `arange` length (`(end - start) / step`, XLNet).
pub fn truediv(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = ints(cx)?;
    Ok(vec![RtValue::Float(a.to_f64() / b.to_f64())])
}

/// `torch.sym_float(a)`: a size as a Python float.
pub fn sym_float(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let a = cx.opt_scalar("a")?.ok_or_else(|| OpError::Arg { arg: "a".into(), message: "missing".into() })?;
    Ok(vec![RtValue::Float(a.to_f64())])
}

/// `math.ceil(a)`: the least int not below a float (an int is its own ceiling).
pub fn ceil(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    match cx.opt_scalar("a")? {
        Some(Scalar::Int(a)) => Ok(vec![RtValue::Int(a)]),
        Some(s) => {
            let c = s.to_f64().ceil();
            // An `as` cast would saturate a NaN or an out-of-range ceiling into some int.
            if !c.is_finite() || c.abs() >= 9.2e18 {
                return Err(OpError::Unsupported(format!("math.ceil of {c}: no int")));
            }
            Ok(vec![RtValue::Int(c as i64)])
        }
        None => Err(OpError::Arg { arg: "a".into(), message: "missing".into() }),
    }
}

pub fn modulo(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    int_op(cx, py_mod, |a, b| a - b * (a / b).floor())
}

pub fn neg(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    match cx.opt_scalar("a")? {
        Some(Scalar::Int(a)) => Ok(vec![RtValue::Int(a.checked_neg().ok_or_else(|| OpError::Unsupported("negation overflows".into()))?)]),
        Some(s) => Ok(vec![RtValue::Float(-s.to_f64())]),
        None => Err(OpError::Arg { arg: "a".into(), message: "missing".into() }),
    }
}

/// Python comparisons of symbolic numbers (`u0 >= 0` in a data-dependent graph).
fn cmp(cx: &OpCx, f: fn(f64, f64) -> bool, i: fn(i64, i64) -> bool) -> OpResult<Vec<RtValue>> {
    Ok(vec![RtValue::Bool(match ints(cx)? {
        (Scalar::Int(a), Scalar::Int(b)) => i(a, b),
        (a, b) => f(a.to_f64(), b.to_f64()),
    })])
}

pub fn ge(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    cmp(cx, |a, b| a >= b, |a, b| a >= b)
}

pub fn le(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    cmp(cx, |a, b| a <= b, |a, b| a <= b)
}

pub fn gt(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    cmp(cx, |a, b| a > b, |a, b| a > b)
}

pub fn lt(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    cmp(cx, |a, b| a < b, |a, b| a < b)
}

pub fn eq(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    cmp(cx, |a, b| a == b, |a, b| a == b)
}

pub fn ne(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    cmp(cx, |a, b| a != b, |a, b| a != b)
}

/// Metadata assertions export inserts (`_assert_tensor_metadata` before every `.to(dtype)`):
/// they compute nothing; the interpreter checks every value against the graph's metadata anyway.
pub fn no_op(_: &OpCx) -> OpResult<Vec<RtValue>> {
    Ok(vec![])
}

/// `sym_constrain_range(size, min=None, max=None)`: ATen's runtime check that
/// `min <= size <= max` (absent bounds: the int64 range).
pub fn constrain_range(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    check_range(cx, i64::MIN)
}

/// `sym_constrain_range_for_size`: the same check with `min` defaulting to 0; a `max` of 2 or
/// less is refused, as ATen refuses it.
pub fn constrain_range_for_size(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    if let Some(max) = cx.opt_int("max")?.filter(|m| *m <= 2) {
        return Err(OpError::Arg { arg: "max".into(), message: format!("{max}: constrain_range_for_size needs a max greater than 2") });
    }
    check_range(cx, 0)
}

fn check_range(cx: &OpCx, default_min: i64) -> OpResult<Vec<RtValue>> {
    let size = match cx.opt_scalar("size")? {
        Some(Scalar::Int(i)) => i,
        Some(other) => return Err(OpError::Arg { arg: "size".into(), message: format!("expected an int, got {other:?}") }),
        None => return Err(OpError::Arg { arg: "size".into(), message: "missing".into() }),
    };
    let (lo, hi) = (cx.opt_int("min")?.unwrap_or(default_min), cx.opt_int("max")?.unwrap_or(i64::MAX));
    if hi < lo {
        return Err(OpError::Unsupported(format!("runtime assertion failed: the range [{lo}, {hi}] is empty")));
    }
    if size < lo || size > hi {
        return Err(OpError::Unsupported(format!("runtime assertion failed: {size} lies outside [{lo}, {hi}]")));
    }
    Ok(vec![])
}

/// `_assert_scalar(cond, msg)`: a failed runtime assertion of the exported program.
pub fn assert_scalar(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    match cx.opt_scalar("self")? {
        Some(Scalar::Bool(false)) | Some(Scalar::Int(0)) => {
            let msg = cx.str_or("assert_msg", "")?;
            Err(OpError::Unsupported(format!("runtime assertion failed: {msg}")))
        }
        _ => Ok(vec![]),
    }
}

/// `_assert_async(self[, assert_msg])`: fails when the one element of `self` is zero (false),
/// with ATen's messages; a tensor of no or several elements is ambiguous, as in ATen.
pub fn assert_async(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    match t.numel() {
        0 => return Err(OpError::Shape("_assert_async: Boolean value of Tensor with no values is ambiguous".into())),
        1 => {}
        n => return Err(OpError::Shape(format!("_assert_async: Boolean value of Tensor with more than one value is ambiguous ({n} values)"))),
    }
    let nonzero = if t.dtype().is_floating() { t.to_f64_vec()[0] != 0.0 } else { t.to_i64_vec()[0] != 0 };
    if nonzero {
        return Ok(vec![]);
    }
    let msg = cx.str_or("assert_msg", "")?;
    let msg = if msg.is_empty() { "Expected Tensor with single nonzero value, but got zero" } else { msg };
    Err(OpError::Unsupported(format!("runtime assertion failed: {msg}")))
}

/// `item()`: the one element of a tensor as a Python number.
pub fn item(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.numel() != 1 {
        return Err(OpError::Shape(format!("item() of a tensor of {} elements", t.numel())));
    }
    Ok(vec![match t.dtype() {
        crate::ir::DType::Bool => RtValue::Bool(t.to_i64_vec()[0] != 0),
        d if d.is_floating() => RtValue::Float(t.to_f64_vec()[0]),
        _ => RtValue::Int(t.to_i64_vec()[0]),
    }])
}

/// Tensors are contiguous here: the stride of `dim` is the product of the later sizes.
pub fn sym_stride(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let d = wrap_dim(cx.int("dim")?, t.ndim())?;
    Ok(vec![RtValue::Int(t.shape().iter().skip(d + 1).product::<usize>() as i64)])
}

pub fn sym_is_contiguous(_: &OpCx) -> OpResult<Vec<RtValue>> {
    Ok(vec![RtValue::Bool(true)])
}

/// Tensors are contiguous copies here: the storage offset is always 0.
pub fn sym_storage_offset(_: &OpCx) -> OpResult<Vec<RtValue>> {
    Ok(vec![RtValue::Int(0)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_division_rounds_down_and_modulo_follows_the_divisor() {
        assert_eq!(floor_div(7, 2), Some(3));
        assert_eq!(floor_div(-7, 2), Some(-4));
        assert_eq!(floor_div(7, -2), Some(-4));
        assert_eq!(floor_div(-7, -2), Some(3));
        assert_eq!(floor_div(1, 0), None);
        assert_eq!(py_mod(7, 3), Some(1));
        assert_eq!(py_mod(-7, 3), Some(2));
        assert_eq!(py_mod(7, -3), Some(-2));
        assert_eq!(py_mod(1, 0), None);
    }
}
