//! Checked arithmetic on [`Value`]s with Python semantics, shared by evaluation and by the
//! constant folding in `simplify`, so a folded constant is always what `eval` would have given.
//!
//! Rationals are exact: intermediates are `i128` (products of two `i64` fit), results must fit
//! back in `i64`. Floats follow IEEE and are never folded into exact values.

use std::cmp::Ordering;

use super::eval::Value;

/// What went wrong in one operation; the caller adds the expression text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArithError {
    Overflow,
    DivisionByZero,
    /// A boolean used as a number.
    NotNumber,
    /// A division that torch declares exact (`CleanDiv`) was not.
    NotExact,
    /// An infinite or NaN float converted to an integer.
    NotFinite,
}

use ArithError::*;

pub(crate) type ArithResult = Result<Value, ArithError>;

/// A number seen as an exact fraction or a float, for the slow paths.
enum Num {
    Q(i128, i128),
    F(f64),
}

fn num(v: Value) -> Result<Num, ArithError> {
    match v {
        Value::Int(i) => Ok(Num::Q(i as i128, 1)),
        Value::Rational(p, q) => Ok(Num::Q(p as i128, q as i128)),
        Value::Float(f) => Ok(Num::F(f)),
        Value::Bool(_) => Err(NotNumber),
    }
}

pub(crate) fn to_f64(v: Value) -> Result<f64, ArithError> {
    match num(v)? {
        Num::Q(p, q) => Ok(p as f64 / q as f64),
        Num::F(f) => Ok(f),
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `n/d` in lowest terms; `Int` when the denominator is one.
pub(crate) fn rational(n: i128, d: i128) -> ArithResult {
    if d == 0 {
        return Err(DivisionByZero);
    }
    let g = gcd(n.unsigned_abs(), d.unsigned_abs());
    let g = i128::try_from(g).map_err(|_| Overflow)?;
    let (mut n, mut d) = (n / g, d / g);
    if d < 0 {
        n = n.checked_neg().ok_or(Overflow)?;
        d = d.checked_neg().ok_or(Overflow)?;
    }
    let n = i64::try_from(n).map_err(|_| Overflow)?;
    if d == 1 {
        Ok(Value::Int(n))
    } else {
        Ok(Value::Rational(n, i64::try_from(d).map_err(|_| Overflow)?))
    }
}

/// Python `//` on integers.
fn floor_div_i128(n: i128, m: i128) -> Result<i128, ArithError> {
    if m == 0 {
        return Err(DivisionByZero);
    }
    let q = n.checked_div(m).ok_or(Overflow)?;
    if n % m != 0 && ((n < 0) != (m < 0)) {
        Ok(q - 1)
    } else {
        Ok(q)
    }
}

fn to_i64(x: i128) -> ArithResult {
    i64::try_from(x).map(Value::Int).map_err(|_| Overflow)
}

pub(crate) fn add(a: Value, b: Value) -> ArithResult {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return x.checked_add(y).map(Value::Int).ok_or(Overflow);
    }
    match (num(a)?, num(b)?) {
        (Num::Q(p, q), Num::Q(r, s)) => rational(p * s + r * q, q * s),
        _ => Ok(Value::Float(to_f64(a)? + to_f64(b)?)),
    }
}

pub(crate) fn mul(a: Value, b: Value) -> ArithResult {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return x.checked_mul(y).map(Value::Int).ok_or(Overflow);
    }
    match (num(a)?, num(b)?) {
        (Num::Q(p, q), Num::Q(r, s)) => rational(p * r, q * s),
        _ => Ok(Value::Float(to_f64(a)? * to_f64(b)?)),
    }
}

fn checked_pow(base: i64, exp: u64) -> Result<i64, ArithError> {
    match base {
        0 if exp > 0 => Ok(0),
        1 => Ok(1),
        -1 => Ok(if exp.is_multiple_of(2) { 1 } else { -1 }),
        _ => {
            let e = u32::try_from(exp).map_err(|_| Overflow)?;
            base.checked_pow(e).ok_or(Overflow)
        }
    }
}

/// `a ** b`: exact for an integer exponent, a float otherwise (sympy would keep a surd symbolic,
/// but `eval` needs a number).
pub(crate) fn pow(a: Value, b: Value) -> ArithResult {
    match (num(a)?, b) {
        (Num::Q(p, q), Value::Int(e)) => {
            let (p, q) = (p as i64, q as i64);
            let n = checked_pow(p, e.unsigned_abs())?;
            let d = checked_pow(q, e.unsigned_abs())?;
            if e >= 0 {
                rational(n as i128, d as i128)
            } else {
                rational(d as i128, n as i128)
            }
        }
        _ => Ok(Value::Float(to_f64(a)?.powf(to_f64(b)?))),
    }
}

/// Python `//`: floor of the quotient, also for rationals; floats stay floats.
pub(crate) fn floordiv(a: Value, b: Value) -> ArithResult {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return floor_div_i128(x as i128, y as i128).and_then(to_i64);
    }
    match (num(a)?, num(b)?) {
        (Num::Q(p, q), Num::Q(r, s)) => floor_div_i128(p * s, q * r).and_then(to_i64),
        _ => {
            let (x, y) = (to_f64(a)?, to_f64(b)?);
            if y == 0.0 {
                return Err(DivisionByZero);
            }
            Ok(Value::Float((x / y).floor()))
        }
    }
}

/// Python `%`: the result has the sign of the divisor.
pub(crate) fn modulo(a: Value, b: Value) -> ArithResult {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        if y == 0 {
            return Err(DivisionByZero);
        }
        // i64::MIN % -1 is 0 in Python; Rust reports it as overflow.
        let r = x.checked_rem(y).unwrap_or(0);
        return Ok(Value::Int(if r != 0 && ((r < 0) != (y < 0)) { r + y } else { r }));
    }
    match (num(a)?, num(b)?) {
        (Num::Q(p, q), Num::Q(r, s)) => {
            let k = floor_div_i128(p * s, q * r)?;
            // p/q - k*r/s = (p*s - k*r*q) / (q*s)
            let kr = k.checked_mul(r).and_then(|x| x.checked_mul(q)).ok_or(Overflow)?;
            let n = (p * s).checked_sub(kr).ok_or(Overflow)?;
            rational(n, q * s)
        }
        _ => {
            let (x, y) = (to_f64(a)?, to_f64(b)?);
            if y == 0.0 {
                return Err(DivisionByZero);
            }
            Ok(Value::Float(x - y * (x / y).floor()))
        }
    }
}

/// `a / b` that torch promises is exact (`CleanDiv`).
pub(crate) fn exact_div(a: Value, b: Value) -> ArithResult {
    match (num(a)?, num(b)?) {
        (Num::Q(p, q), Num::Q(r, s)) => match rational(p * s, q * r)? {
            v @ Value::Int(_) => Ok(v),
            _ => Err(NotExact),
        },
        _ => Err(NotExact),
    }
}

/// `a / b` as a float (`IntTrueDiv`, `FloatTrueDiv`).
pub(crate) fn float_div(a: Value, b: Value) -> ArithResult {
    let (x, y) = (to_f64(a)?, to_f64(b)?);
    if y == 0.0 {
        return Err(DivisionByZero);
    }
    Ok(Value::Float(x / y))
}

/// Numeric order; `None` for NaN. Booleans are not numbers.
pub(crate) fn cmp(a: Value, b: Value) -> Result<Option<Ordering>, ArithError> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return Ok(Some(x.cmp(&y)));
    }
    match (num(a)?, num(b)?) {
        // Denominators are positive, so cross-multiplying keeps the order.
        (Num::Q(p, q), Num::Q(r, s)) => Ok(Some((p * s).cmp(&(r * q)))),
        _ => Ok(to_f64(a)?.partial_cmp(&to_f64(b)?)),
    }
}

/// How a value is rounded to an integer.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Rounding {
    Floor,
    Ceil,
    Trunc,
    /// Python `round`: halves go to the even neighbour.
    HalfEven,
}

pub(crate) fn round(a: Value, mode: Rounding) -> ArithResult {
    match num(a)? {
        Num::Q(p, q) => {
            let fl = floor_div_i128(p, q)?;
            let exact = fl * q == p;
            let r = match mode {
                Rounding::Floor => fl,
                Rounding::Ceil if exact => fl,
                Rounding::Ceil => fl + 1,
                Rounding::Trunc if exact || p >= 0 => fl,
                Rounding::Trunc => fl + 1,
                Rounding::HalfEven => {
                    let twice_rem = 2 * (p - fl * q);
                    match twice_rem.cmp(&q) {
                        Ordering::Less => fl,
                        Ordering::Greater => fl + 1,
                        Ordering::Equal if fl % 2 == 0 => fl,
                        Ordering::Equal => fl + 1,
                    }
                }
            };
            to_i64(r)
        }
        Num::F(f) => {
            if !f.is_finite() {
                return Err(NotFinite);
            }
            let r = match mode {
                Rounding::Floor => f.floor(),
                Rounding::Ceil => f.ceil(),
                Rounding::Trunc => f.trunc(),
                Rounding::HalfEven => f.round_ties_even(),
            };
            // 2^63 is exactly representable; anything at or beyond it does not fit.
            if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
                Ok(Value::Int(r as i64))
            } else {
                Err(Overflow)
            }
        }
    }
}

pub(crate) fn abs(a: Value) -> ArithResult {
    match a {
        Value::Int(x) => x.checked_abs().map(Value::Int).ok_or(Overflow),
        Value::Rational(p, q) => p.checked_abs().map(|p| Value::Rational(p, q)).ok_or(Overflow),
        Value::Float(f) => Ok(Value::Float(f.abs())),
        Value::Bool(_) => Err(NotNumber),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Value::{Float, Int, Rational};

    #[test]
    fn floor_division_and_modulo_follow_python() {
        for (a, b, q, r) in [(7, 2, 3, 1), (-7, 2, -4, 1), (7, -2, -4, -1), (-7, -2, 3, -1), (6, 3, 2, 0)] {
            assert_eq!(floordiv(Int(a), Int(b)), Ok(Int(q)), "{a} // {b}");
            assert_eq!(modulo(Int(a), Int(b)), Ok(Int(r)), "{a} % {b}");
        }
        assert_eq!(floordiv(Int(i64::MIN), Int(-1)), Err(Overflow));
        assert_eq!(modulo(Int(i64::MIN), Int(-1)), Ok(Int(0)));
        assert_eq!(floordiv(Int(1), Int(0)), Err(DivisionByZero));
        assert_eq!(modulo(Rational(7, 2), Int(2)), Ok(Rational(3, 2)));
        assert_eq!(modulo(Rational(-1, 2), Int(3)), Ok(Rational(5, 2)));
    }

    #[test]
    fn rationals_are_exact_and_reduced() {
        assert_eq!(add(Rational(1, 2), Rational(1, 2)), Ok(Int(1)));
        assert_eq!(mul(Int(3), Rational(1, 6)), Ok(Rational(1, 2)));
        assert_eq!(rational(2, -4), Ok(Rational(-1, 2)));
        assert_eq!(pow(Int(2), Int(-2)), Ok(Rational(1, 4)));
        assert_eq!(pow(Rational(-2, 3), Int(3)), Ok(Rational(-8, 27)));
        assert_eq!(pow(Int(0), Int(-1)), Err(DivisionByZero));
    }

    #[test]
    fn overflow_is_reported_not_wrapped() {
        assert_eq!(add(Int(i64::MAX), Int(1)), Err(Overflow));
        assert_eq!(mul(Int(1 << 40), Int(1 << 40)), Err(Overflow));
        assert_eq!(pow(Int(2), Int(64)), Err(Overflow));
        assert_eq!(pow(Int(-1), Int(i64::MAX)), Ok(Int(-1)));
    }

    #[test]
    fn rounding_modes() {
        let r = |v, m| round(v, m).unwrap();
        assert_eq!(r(Rational(-7, 2), Rounding::Floor), Int(-4));
        assert_eq!(r(Rational(-7, 2), Rounding::Ceil), Int(-3));
        assert_eq!(r(Rational(-7, 2), Rounding::Trunc), Int(-3));
        assert_eq!(r(Rational(5, 2), Rounding::HalfEven), Int(2));
        assert_eq!(r(Rational(7, 2), Rounding::HalfEven), Int(4));
        assert_eq!(r(Float(-2.5), Rounding::HalfEven), Int(-2));
        assert_eq!(round(Float(f64::NAN), Rounding::Floor), Err(NotFinite));
        assert_eq!(round(Float(1e30), Rounding::Floor), Err(Overflow));
    }

    #[test]
    fn mixed_comparisons() {
        assert_eq!(cmp(Rational(1, 3), Rational(1, 2)), Ok(Some(Ordering::Less)));
        assert_eq!(cmp(Int(1), Float(0.5)), Ok(Some(Ordering::Greater)));
        assert_eq!(cmp(Value::Bool(true), Int(1)), Err(NotNumber));
        assert_eq!(exact_div(Int(6), Int(3)), Ok(Int(2)));
        assert_eq!(exact_div(Int(7), Int(3)), Err(NotExact));
    }
}
