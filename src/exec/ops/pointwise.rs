//! Elementwise ops with broadcasting and PyTorch's type promotion.
//!
//! Float results are computed in `f64` and rounded once to the result dtype: for `+ - * /` and
//! `sqrt` that is exactly IEEE single-precision arithmetic; for transcendental functions it is
//! the correctly rounded value, within an ulp of PyTorch's vectorised kernels.
//!
//! The unary float functions, activations and clamps live in `pointwise_unary`, re-exported here.

use ndarray::{ArrayD, IxDyn, Zip};

use super::{dtype_ok, one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::{Data, Element, Tensor, BF16, F16};
use crate::exec::value::RtValue;
use crate::ir::DType;

pub use super::pointwise_unary::{
    abs, clamp, clamp_max, clamp_min, erf, exp, gelu, hardsigmoid, hardswish, hardtanh, log, neg, reciprocal, relu,
    relu6, rsqrt, sigmoid, silu, sqrt, tanh,
};
pub(crate) use super::pointwise_unary::sigmoid_f;

/// A Python number argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
            Scalar::Bool(b) => b as u8 as f64,
        }
    }

    fn to_tensor(self, dtype: DType) -> OpResult<Tensor> {
        match (self, dtype) {
            (Scalar::Int(i), DType::I64) => Ok(Tensor::scalar(i)),
            // An integer scalar wraps into a narrower integer dtype (two's complement), as
            // PyTorch converts one: `uint8 + (-3)` adds 253.
            (Scalar::Int(i), d @ (DType::I32 | DType::I16 | DType::I8 | DType::U8)) => dtype_ok(Tensor::scalar(i).cast(d)),
            (s, d) => dtype_ok(Tensor::full(d, &[], s.to_f64())),
        }
    }
}

/// An elementwise operand: a tensor, or a number that PyTorch wraps into a tensor.
#[derive(Clone, Copy, Debug)]
pub enum Operand<'a> {
    Tensor(&'a Tensor),
    Scalar(Scalar),
}

impl Operand<'_> {
    /// The operand as a tensor of `dtype`.
    pub(crate) fn cast(&self, dtype: DType) -> OpResult<Tensor> {
        match self {
            Operand::Tensor(t) if t.dtype() == dtype => Ok((*t).clone()),
            Operand::Tensor(t) => dtype_ok(t.cast(dtype)),
            Operand::Scalar(s) => s.to_tensor(dtype),
        }
    }
}

/// [`DType::promote_types`] over the dtypes the interpreter holds.
pub(crate) fn promote_types(a: DType, b: DType) -> OpResult<DType> {
    for d in [a, b] {
        if !crate::exec::tensor::DTYPES.contains(&d) {
            return Err(OpError::DType(d));
        }
    }
    DType::promote_types(a, b).ok_or_else(|| OpError::Unsupported(format!("no promotion of {a} and {b}")))
}

fn promote(a: Option<DType>, b: DType) -> OpResult<DType> {
    match a {
        Some(a) => promote_types(a, b),
        None => promote_types(b, b),
    }
}

/// Combines the results of two priority tiers: the lower tier only matters when it is of a
/// higher category (bool < integer < float) than the higher tier.
fn combine(higher: Option<DType>, lower: Option<DType>) -> OpResult<Option<DType>> {
    Ok(match (higher, lower) {
        (None, l) => l,
        (h, None) => h,
        (Some(h), Some(l)) => {
            if h.is_floating() {
                Some(h)
            } else if h == DType::Bool || l.is_floating() {
                Some(promote(Some(h), l)?)
            } else {
                Some(h)
            }
        }
    })
}

/// `torch.result_type` over operands: tensors with dimensions outrank zero-dim tensors, which
/// outrank Python numbers; a Python float counts as the default dtype (float32).
pub fn result_type(operands: &[Operand]) -> OpResult<DType> {
    let kinds: Vec<(DType, Rank)> = operands
        .iter()
        .map(|o| match o {
            Operand::Tensor(t) if t.ndim() > 0 => (t.dtype(), Rank::Dim),
            Operand::Tensor(t) => (t.dtype(), Rank::ZeroDim),
            Operand::Scalar(Scalar::Int(_)) => (DType::I64, Rank::Number),
            Operand::Scalar(Scalar::Float(_)) => (DType::F32, Rank::Number),
            Operand::Scalar(Scalar::Bool(_)) => (DType::Bool, Rank::Number),
        })
        .collect();
    result_dtype(&kinds)
}

/// What an operand is to type promotion: a tensor with dimensions, a zero-dim tensor, or a
/// Python number (which counts as int64, float32 or bool).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rank {
    Dim,
    ZeroDim,
    Number,
}

/// [`result_type`] over operands known by dtype and [`Rank`] only (what shape inference has).
pub(crate) fn result_dtype(operands: &[(DType, Rank)]) -> OpResult<DType> {
    let (mut dim, mut zero, mut wrapped) = (None, None, None);
    for &(d, rank) in operands {
        let tier = match rank {
            Rank::Dim => &mut dim,
            Rank::ZeroDim => &mut zero,
            Rank::Number => &mut wrapped,
        };
        *tier = Some(promote(*tier, d)?);
    }
    combine(dim, combine(zero, wrapped)?)?.ok_or_else(|| OpError::Shape("no operands".into()))
}

/// NumPy-style broadcast of several shapes.
pub(crate) fn broadcast_shapes(shapes: &[&[usize]]) -> OpResult<Vec<usize>> {
    let n = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; n];
    for s in shapes {
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[n - s.len() + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return shape_err(format!("shapes {shapes:?} do not broadcast"));
            }
        }
    }
    Ok(out)
}

fn view<'a, T: Element>(t: &'a Tensor, shape: &[usize]) -> OpResult<ndarray::ArrayViewD<'a, T>> {
    let a = t.array::<T>().ok_or(OpError::DType(t.dtype()))?;
    a.broadcast(IxDyn(shape)).ok_or_else(|| OpError::Shape(format!("{:?} does not broadcast to {shape:?}", t.shape())))
}

/// Elementwise `f` over two same-dtype tensors, broadcast.
pub(crate) fn zip2<T: Element, U: Element>(a: &Tensor, b: &Tensor, f: impl Fn(T, T) -> U) -> OpResult<Tensor> {
    let shape = broadcast_shapes(&[a.shape(), b.shape()])?;
    let out: ArrayD<U> = Zip::from(view::<T>(a, &shape)?).and(view::<T>(b, &shape)?).map_collect(|&x, &y| f(x, y));
    Ok(Tensor::from_array(out))
}

/// An arithmetic op: its float form, and its integer form (`None` = the op fails, e.g. an
/// integer division by zero).
pub(crate) struct Arith {
    pub float: fn(f64, f64) -> f64,
    pub int: fn(i64, i64) -> Option<i64>,
}

pub(crate) fn arith(a: Operand, b: Operand, out: DType, op: &Arith) -> OpResult<Tensor> {
    let (x, y) = (a.cast(out)?, b.cast(out)?);
    let int_err = || OpError::Unsupported("integer division by zero".into());
    match out {
        DType::F32 => zip2::<f32, f32>(&x, &y, |p, q| (op.float)(p as f64, q as f64) as f32),
        DType::F64 => zip2::<f64, f64>(&x, &y, op.float),
        DType::F16 | DType::BF16 => {
            let (xf, yf) = (dtype_ok(x.cast(DType::F64))?, dtype_ok(y.cast(DType::F64))?);
            dtype_ok(zip2::<f64, f64>(&xf, &yf, op.float)?.cast(out))
        }
        DType::I64 | DType::I32 | DType::I16 | DType::I8 | DType::U8 | DType::Bool => {
            let (xi, yi) = (x.cast(DType::I64).map_err(OpError::DType)?, y.cast(DType::I64).map_err(OpError::DType)?);
            let failed = std::cell::Cell::new(false);
            let r = zip2::<i64, i64>(&xi, &yi, |p, q| {
                (op.int)(p, q).unwrap_or_else(|| {
                    failed.set(true);
                    0
                })
            })?;
            if failed.get() {
                return Err(int_err());
            }
            dtype_ok(r.cast(out))
        }
        d => Err(OpError::DType(d)),
    }
}

fn binary(cx: &OpCx, op: &Arith) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.operand("self")?, cx.operand("other")?);
    one(arith(a, b, result_type(&[a, b])?, op)?)
}

/// `self + alpha * other` (and `-` for sub), with `alpha` applied in the result dtype.
fn add_like(cx: &OpCx, sign: f64, reverse: bool) -> OpResult<Vec<RtValue>> {
    let (mut a, mut b) = (cx.operand("self")?, cx.operand("other")?);
    if reverse {
        std::mem::swap(&mut a, &mut b);
    }
    let out = result_type(&[a, b])?;
    let alpha = cx.scalar_or("alpha", Scalar::Int(1))?;
    if out == DType::Bool && sign < 0.0 {
        return Err(OpError::Unsupported("subtraction of bool tensors (PyTorch rejects it too)".into()));
    }
    let scaled = match alpha {
        Scalar::Int(1) => b.cast(out)?,
        _ => arith(b, Operand::Scalar(alpha), out, &MUL)?,
    };
    let op = if sign > 0.0 { &ADD } else { &SUB };
    one(arith(a, Operand::Tensor(&scaled), out, op)?)
}

pub(crate) const ADD: Arith = Arith { float: |a, b| a + b, int: |a, b| Some(a.wrapping_add(b)) };
pub(crate) const SUB: Arith = Arith { float: |a, b| a - b, int: |a, b| Some(a.wrapping_sub(b)) };
pub(crate) const MUL: Arith = Arith { float: |a, b| a * b, int: |a, b| Some(a.wrapping_mul(b)) };

pub fn add(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    add_like(cx, 1.0, false)
}

pub fn sub(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    add_like(cx, -1.0, false)
}

/// `other - alpha * self`.
pub fn rsub(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    add_like(cx, -1.0, true)
}

pub fn mul(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    binary(cx, &MUL)
}

/// True division promotes integers to float32; `rounding_mode` trunc/floor keeps the dtype.
pub fn div(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.operand("self")?, cx.operand("other")?);
    let promoted = result_type(&[a, b])?;
    match cx.str_or("rounding_mode", "")? {
        "" => {
            let out = if promoted.is_floating() { promoted } else { DType::F32 };
            one(arith(a, b, out, &Arith { float: |x, y| x / y, int: |_, _| None })?)
        }
        "trunc" => one(arith(
            a,
            b,
            promoted,
            &Arith { float: |x, y| (x / y).trunc(), int: |x, y| x.checked_div(y) },
        )?),
        "floor" => one(arith(
            a,
            b,
            promoted,
            &Arith { float: |x, y| (x / y).floor(), int: |x, y| (y != 0).then(|| x.div_euclid(y) - i64::from(x.rem_euclid(y) != 0 && y < 0)) },
        )?),
        m => Err(OpError::Arg { arg: "rounding_mode".into(), message: format!("unknown mode `{m}`") }),
    }
}

pub fn pow(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.operand("self")?, cx.operand("exponent")?);
    one(arith(
        a,
        b,
        result_type(&[a, b])?,
        &Arith { float: f64::powf, int: |x, y| Some(int_pow(x, y)) },
    )?)
}

/// Integer powers as PyTorch computes them: wrapping, and for a negative exponent 1 (base 1),
/// ±1 (base −1) or 0.
pub(crate) fn int_pow(x: i64, y: i64) -> i64 {
    if y < 0 {
        return match x {
            1 => 1,
            -1 if y % 2 != 0 => -1,
            -1 => 1,
            _ => 0,
        };
    }
    let (mut acc, mut base, mut e) = (1i64, x, y);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        e >>= 1;
    }
    acc
}

pub(crate) fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

pub(crate) fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

pub fn maximum(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    binary(cx, &Arith { float: nan_max, int: |a, b| Some(a.max(b)) })
}

pub fn minimum(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    binary(cx, &Arith { float: nan_min, int: |a, b| Some(a.min(b)) })
}

/// Applies `f` to a float tensor in its dtype; integer and bool inputs become float32 first,
/// as PyTorch's float-only unary ops do.
pub(crate) fn map_float(t: &Tensor, f: impl Fn(f64) -> f64) -> OpResult<Tensor> {
    Ok(match t.data() {
        Data::F32(a) => Tensor::from_array(a.mapv(|x| f(x as f64) as f32)),
        Data::F64(a) => Tensor::from_array(a.mapv(f)),
        Data::F16(a) => Tensor::from_array(a.mapv(|x| F16::from_f64(f(x.to_f64())))),
        Data::BF16(a) => Tensor::from_array(a.mapv(|x| BF16::from_f64(f(x.to_f64())))),
        _ => return map_float(&dtype_ok(t.cast(DType::F32))?, f),
    })
}

/// Applies `f` in the tensor's own dtype (integers through `i64`).
pub(crate) fn map_keep(t: &Tensor, f: impl Fn(f64) -> f64, i: impl Fn(i64) -> i64) -> OpResult<Tensor> {
    Ok(match t.data() {
        Data::F32(a) => Tensor::from_array(a.mapv(|x| f(x as f64) as f32)),
        Data::F64(a) => Tensor::from_array(a.mapv(f)),
        Data::I64(a) => Tensor::from_array(a.mapv(i)),
        Data::I32(a) => Tensor::from_array(a.mapv(|x| i(x as i64) as i32)),
        Data::I16(a) => Tensor::from_array(a.mapv(|x| i(x as i64) as i16)),
        Data::I8(a) => Tensor::from_array(a.mapv(|x| i(x as i64) as i8)),
        Data::U8(a) => Tensor::from_array(a.mapv(|x| i(x as i64) as u8)),
        Data::U64(a) => Tensor::from_array(a.mapv(|x| i(x as i64) as u64)),
        Data::F16(a) => Tensor::from_array(a.mapv(|x| F16::from_f64(f(x.to_f64())))),
        Data::BF16(a) => Tensor::from_array(a.mapv(|x| BF16::from_f64(f(x.to_f64())))),
        Data::Bool(_) => return Err(OpError::DType(DType::Bool)),
    })
}

/// `self + value * tensor1 * tensor2`.
pub fn addcmul(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (s, t1, t2) = (cx.tensor("self")?, cx.tensor("tensor1")?, cx.tensor("tensor2")?);
    let value = cx.scalar_or("value", Scalar::Int(1))?;
    let out = result_type(&[Operand::Tensor(s), Operand::Tensor(t1), Operand::Tensor(t2)])?;
    // Floats compute in f64 and round once (PyTorch keeps half intermediates in float32);
    // integers stay exact in their own type.
    let wide = if out.is_floating() { DType::F64 } else { out };
    let prod = arith(Operand::Tensor(t1), Operand::Tensor(t2), wide, &MUL)?;
    let scaled = arith(Operand::Scalar(value), Operand::Tensor(&prod), wide, &MUL)?;
    one(dtype_ok(arith(Operand::Tensor(s), Operand::Tensor(&scaled), wide, &ADD)?.cast(out))?)
}

pub fn where_self(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let cond = dtype_ok(cx.tensor("condition")?.cast(DType::Bool))?;
    let (a, b) = (cx.operand("self")?, cx.operand("other")?);
    let out = result_type(&[a, b])?;
    one(select3(&cond, &a.cast(out)?, &b.cast(out)?)?)
}

/// `cond ? a : b` elementwise, broadcast; `a` and `b` share a dtype.
pub(crate) fn select3(cond: &Tensor, a: &Tensor, b: &Tensor) -> OpResult<Tensor> {
    fn go<T: Element>(c: &Tensor, a: &Tensor, b: &Tensor) -> OpResult<Tensor> {
        let shape = broadcast_shapes(&[c.shape(), a.shape(), b.shape()])?;
        let out: ArrayD<T> = Zip::from(view::<bool>(c, &shape)?)
            .and(view::<T>(a, &shape)?)
            .and(view::<T>(b, &shape)?)
            .map_collect(|&c, &x, &y| if c { x } else { y });
        Ok(Tensor::from_array(out))
    }
    match a.dtype() {
        DType::F32 => go::<f32>(cond, a, b),
        DType::F64 => go::<f64>(cond, a, b),
        DType::I64 => go::<i64>(cond, a, b),
        DType::I32 => go::<i32>(cond, a, b),
        DType::I16 => go::<i16>(cond, a, b),
        DType::I8 => go::<i8>(cond, a, b),
        DType::U8 => go::<u8>(cond, a, b),
        DType::F16 => go::<F16>(cond, a, b),
        DType::BF16 => go::<BF16>(cond, a, b),
        DType::Bool => go::<bool>(cond, a, b),
        d => Err(OpError::DType(d)),
    }
}

/// `masked_fill(self, mask, value)`: keeps `self`'s dtype.
pub fn masked_fill(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let mask = dtype_ok(cx.tensor("mask")?.cast(DType::Bool))?;
    let v = cx.operand("value")?.cast(t.dtype())?;
    // The out-of-place op broadcasts `self` with the mask too (a [5] self under a [5, 5] mask
    // gives [5, 5]); only the in-place `masked_fill_` must keep `self`'s shape.
    one(select3(&mask, &v, t)?)
}

pub(crate) fn compare(cx: &OpCx, f: fn(f64, f64) -> bool, i: fn(i64, i64) -> bool) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.operand("self")?, cx.operand("other")?);
    let common = result_type(&[a, b])?;
    let (x, y) = (a.cast(common)?, b.cast(common)?);
    one(if common.is_floating() {
        let (x, y) = (dtype_ok(x.cast(DType::F64))?, dtype_ok(y.cast(DType::F64))?);
        zip2::<f64, bool>(&x, &y, f)?
    } else {
        let (x, y) = (dtype_ok(x.cast(DType::I64))?, dtype_ok(y.cast(DType::I64))?);
        zip2::<i64, bool>(&x, &y, i)?
    })
}

pub fn eq(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    compare(cx, |a, b| a == b, |a, b| a == b)
}

pub fn ne(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    compare(cx, |a, b| a != b, |a, b| a != b)
}

pub fn lt(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    compare(cx, |a, b| a < b, |a, b| a < b)
}

pub fn le(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    compare(cx, |a, b| a <= b, |a, b| a <= b)
}

pub fn gt(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    compare(cx, |a, b| a > b, |a, b| a > b)
}

pub fn ge(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    compare(cx, |a, b| a >= b, |a, b| a >= b)
}

pub fn logical_not(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = dtype_ok(cx.tensor("self")?.cast(DType::Bool))?;
    let a = t.array::<bool>().ok_or(OpError::DType(t.dtype()))?;
    one(Tensor::from_array(a.mapv(|x| !x)))
}

#[cfg(test)]
mod int_pow_tests {
    use super::int_pow;

    #[test]
    fn integer_powers_wrap_and_follow_the_negative_exponent_rule() {
        assert_eq!(int_pow(3, 4), 81);
        assert_eq!(int_pow(-2, 3), -8);
        assert_eq!(int_pow(2, 64), 0);
        assert_eq!(int_pow(7, 0), 1);
        assert_eq!(int_pow(1, -5), 1);
        assert_eq!(int_pow(-1, -3), -1);
        assert_eq!(int_pow(-1, -4), 1);
        assert_eq!(int_pow(5, -1), 0);
    }
}
