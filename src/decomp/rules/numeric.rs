//! Numerical integration and differentiation as ATen composes them
//! (aten/src/ATen/native/Integration.cpp, ReduceOps.cpp, LinearAlgebra.cpp): `trapezoid` /
//! `trapz` / `cumulative_trapezoid` from slices, sums and cumulative sums, `gradient` from
//! slices and a `cat` of the edges around the centre, and `linalg_vander` from a `cumprod`.
//! Integer inputs take PyTorch's promotions along the way (`sum` to int64, `/ 2.` to float32).

use super::build::{self, binary, slice};
use super::{dim, Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, DType, SymIntArg, ValueId};

/// "To the end" for `slice`'s `end`, as traced graphs spell it.
const END: i64 = i64::MAX;

fn arg_err(name: &str, message: impl Into<String>) -> RuleError {
    RuleError::Arg { name: name.into(), message: message.into() }
}

fn no_bool(rw: &Rw, v: ValueId, name: &str) -> Result<(), RuleError> {
    if rw.meta(v)?.dtype == DType::Bool {
        return Err(arg_err(name, "a bool input is not supported"));
    }
    Ok(())
}

/// `zeros` shaped like `y` without `dim`, in `y`'s dtype: the integral over no samples.
fn zeros_like_except(rw: &mut Rw, y: ValueId, d: usize) -> Result<ValueId, RuleError> {
    let mut sizes = build::sizes(rw, y)?;
    sizes.remove(d);
    let dtype = rw.meta(y)?.dtype;
    rw.op("aten.zeros.default", vec![("size", A::Sizes(sizes)), ("dtype", A::Raw(Arg::ScalarType(dtype)))])
}

/// `x` viewed so that its differences broadcast against `y`'s along `dim`: a 1-D `x` runs along
/// `dim`; a lower-rank `x` gets leading 1s.
fn x_viewed(rw: &mut Rw, y: ValueId, x: ValueId, d: usize) -> Result<ValueId, RuleError> {
    let (ry, rx) = (rw.rank(y)?, rw.rank(x)?);
    if rx == 1 {
        let (n, m) = (rw.meta(x)?.sizes[0].clone(), rw.meta(y)?.sizes[d].clone());
        if let (Some(p), Some(q)) = (n.as_int(), m.as_int()) {
            if p != q {
                return Err(arg_err("x", format!("there must be one `x` value for each sample point: {p} vs {q}")));
            }
        }
        let mut sizes = vec![SymIntArg::Int(1); ry];
        sizes[d] = rw.size(x, 0)?;
        return build::view(rw, x, sizes);
    }
    if rx < ry {
        let mut sizes = vec![SymIntArg::Int(1); ry - rx];
        sizes.extend(build::sizes(rw, x)?);
        return build::view(rw, x, sizes);
    }
    Ok(x)
}

/// `x[1:] - x[:-1]` along `dim` of the viewed `x`.
fn spacing(rw: &mut Rw, y: ValueId, x: ValueId, d: usize) -> Result<ValueId, RuleError> {
    let xv = x_viewed(rw, y, x, d)?;
    let left = slice(rw, xv, d, 0, -1)?;
    let right = slice(rw, xv, d, 1, END)?;
    binary(rw, "aten.sub.Tensor", right, A::T(left))
}

/// `y[:-1] + y[1:]` along `dim`.
fn pair_sums(rw: &mut Rw, y: ValueId, d: usize) -> Result<ValueId, RuleError> {
    let left = slice(rw, y, d, 0, -1)?;
    let right = slice(rw, y, d, 1, END)?;
    binary(rw, "aten.add.Tensor", left, A::T(right))
}

fn y_and_dim(rw: &Rw) -> Result<(ValueId, usize), RuleError> {
    let y = rw.t("y")?;
    let d = dim(rw.int("dim", Some(-1))?, rw.rank(y)?, "dim")?;
    Ok((y, d))
}

/// `trapezoid.x` / `trapz.x`: `((y[:-1] + y[1:]) * dx).sum(dim) / 2` with `dx` the differences of `x`.
pub fn trapezoid_x(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (y, d) = y_and_dim(rw)?;
    let x = rw.t("x")?;
    if rw.meta(y)?.sizes[d].as_int() == Some(0) {
        return Ok(vec![zeros_like_except(rw, y, d)?]);
    }
    no_bool(rw, y, "y")?;
    no_bool(rw, x, "x")?;
    let dx = spacing(rw, y, x, d)?;
    let s = pair_sums(rw, y, d)?;
    let p = binary(rw, "aten.mul.Tensor", s, A::T(dx))?;
    let total = build::sum(rw, p, &[d], false)?;
    Ok(vec![binary(rw, "aten.div.Tensor", total, A::F(2.0))?])
}

/// `trapezoid.dx` / `trapz.dx` with a constant spacing: `(y.sum(dim) - (y[0] + y[-1]) * 0.5) * dx`.
pub fn trapezoid_dx(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (y, d) = y_and_dim(rw)?;
    if rw.meta(y)?.sizes[d].as_int() == Some(0) {
        return Ok(vec![zeros_like_except(rw, y, d)?]);
    }
    no_bool(rw, y, "y")?;
    let dx = rw.float("dx", Some(1.0))?;
    let total = build::sum(rw, y, &[d], false)?;
    let first = build::select(rw, y, d, 0)?;
    let last = build::select(rw, y, d, -1)?;
    let ends = binary(rw, "aten.add.Tensor", first, A::T(last))?;
    let half = binary(rw, "aten.mul.Tensor", ends, A::F(0.5))?;
    let inner = binary(rw, "aten.sub.Tensor", total, A::T(half))?;
    Ok(vec![binary(rw, "aten.mul.Tensor", inner, A::F(dx))?])
}

fn cumsum(rw: &mut Rw, x: ValueId, d: usize) -> Result<ValueId, RuleError> {
    rw.op("aten.cumsum.default", vec![("self", A::T(x)), ("dim", A::I(d as i64))])
}

/// `cumulative_trapezoid.x`: `((y[:-1] + y[1:]) * dx).cumsum(dim) / 2`.
pub fn cumulative_trapezoid_x(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (y, d) = y_and_dim(rw)?;
    let x = rw.t("x")?;
    no_bool(rw, y, "y")?;
    no_bool(rw, x, "x")?;
    let dx = spacing(rw, y, x, d)?;
    let s = pair_sums(rw, y, d)?;
    let p = binary(rw, "aten.mul.Tensor", s, A::T(dx))?;
    let c = cumsum(rw, p, d)?;
    Ok(vec![binary(rw, "aten.div.Tensor", c, A::F(2.0))?])
}

/// `cumulative_trapezoid.dx`: `(dx / 2 * (y[:-1] + y[1:])).cumsum(dim)`.
pub fn cumulative_trapezoid_dx(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (y, d) = y_and_dim(rw)?;
    no_bool(rw, y, "y")?;
    let dx = rw.float("dx", Some(1.0))?;
    let s = pair_sums(rw, y, d)?;
    let p = binary(rw, "aten.mul.Tensor", s, A::F(dx / 2.0))?;
    Ok(vec![cumsum(rw, p, d)?])
}

/// `linalg_vander(x, N)`: columns `x^0 … x^(N-1)` as `cat([ones, cumprod(x expanded N - 1 times)])`.
pub fn linalg_vander(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("x")?;
    let dtype = rw.meta(x)?.dtype;
    if dtype == DType::Bool || !(dtype.is_floating() || matches!(dtype, DType::U8 | DType::I8 | DType::I16 | DType::I32 | DType::I64)) {
        return Err(arg_err("x", format!("linalg.vander supports floating point and integer tensors, got {dtype}")));
    }
    let x = if rw.rank(x)? == 0 { build::unsqueeze(rw, x, -1)? } else { x };
    let mut shape = build::sizes(rw, x)?;
    let n = match rw.passthrough("N")? {
        None | Some(Arg::None) => shape.last().cloned().ok_or_else(|| arg_err("x", "no dims"))?,
        Some(Arg::Int(i)) => SymIntArg::Int(i),
        Some(Arg::SymInt(s)) => s,
        Some(a) => return Err(arg_err("N", format!("expected an int, found {a:?}"))),
    };
    if matches!(n, SymIntArg::Int(i) if i <= 1) {
        return Err(arg_err("N", "N must be greater than 1"));
    }
    shape.push(rw.sym_arith("sub", n, 1)?);
    let u = build::unsqueeze(rw, x, -1)?;
    let e = build::expand(rw, u, shape.clone())?;
    let powers = rw.op("aten.cumprod.default", vec![("self", A::T(e)), ("dim", A::I(-1))])?;
    if let Some(last) = shape.last_mut() {
        *last = SymIntArg::Int(1);
    }
    let ones = rw.op("aten.new_ones.default", vec![("self", A::T(powers)), ("size", A::Sizes(shape))])?;
    Ok(vec![build::cat(rw, vec![ones, powers], -1)?])
}
