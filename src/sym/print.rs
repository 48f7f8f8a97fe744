//! Compact infix in the style of sympy's `str()`, which FX graphs and torch logs print and
//! `parse_infix` reads back: printing then parsing gives an equal expression.
//!
//! Parentheses follow Python precedence, so the text also means the same thing to Python.

use std::fmt::{self, Display, Formatter, Write};

use super::eval::Value;
use super::simplify::number;
use super::{Expr, Func};

// Python precedence, loosest first. Comparisons bind looser than `|` and `&`, which is why
// sympy prints `(s0 < 8) & (s1 > 2)`.
const CMP: u8 = 1;
const OR: u8 = 2;
const AND: u8 = 3;
const ADD: u8 = 4;
const MUL: u8 = 5;
const UNARY: u8 = 6;
const POW: u8 = 7;
const ATOM: u8 = 8;

/// How tightly the printed form of `e` binds.
fn precedence(e: &Expr) -> u8 {
    match e {
        Expr::Int(i) if *i < 0 => UNARY,
        Expr::Float(bits) if f64::from_bits(*bits).is_sign_negative() => UNARY,
        Expr::Rational(..) => MUL,
        Expr::Add(_) => ADD,
        Expr::Mul(_) => MUL,
        Expr::Pow(_) => POW,
        Expr::Call(f, args) if infix_arity(*f).is_some_and(|n| n == args.len() || (n == 0 && args.len() >= 2)) => {
            match f {
                Func::FloorDiv | Func::PythonMod => MUL,
                Func::Lt | Func::Le | Func::Gt | Func::Ge => CMP,
                Func::And => AND,
                Func::Or => OR,
                _ => UNARY,
            }
        }
        _ => ATOM,
    }
}

/// Functions printed as operators, with the argument count the operator form needs
/// (0: two or more). Others, and operators with other counts, print as calls.
fn infix_arity(f: Func) -> Option<usize> {
    match f {
        Func::FloorDiv | Func::PythonMod | Func::Lt | Func::Le | Func::Gt | Func::Ge => Some(2),
        Func::And | Func::Or => Some(0),
        Func::Not => Some(1),
        _ => None,
    }
}

struct Prec<'a>(&'a Expr, u8);

impl Display for Prec<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if precedence(self.0) < self.1 {
            write!(f, "({})", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

fn is_negative(v: Value) -> bool {
    match v {
        Value::Int(i) => i < 0,
        Value::Rational(p, _) => p < 0,
        Value::Float(x) => x.is_sign_negative(),
        Value::Bool(_) => false,
    }
}

/// Writes a number, negated when `flip` (in `i128`, so `-i64::MIN` prints too).
fn write_number(f: &mut Formatter<'_>, v: Value, flip: bool) -> fmt::Result {
    match v {
        Value::Int(i) => write!(f, "{}", if flip { -(i as i128) } else { i as i128 }),
        Value::Rational(p, q) => write!(f, "{}/{}", if flip { -(p as i128) } else { p as i128 }, q),
        Value::Float(x) => write!(f, "{:?}", if flip { -x } else { x }),
        Value::Bool(b) => write!(f, "{}", if b { "True" } else { "False" }),
    }
}

/// A product: coefficient first (`64*s27`, `-s0`), factors in canonical order.
fn write_mul(f: &mut Formatter<'_>, args: &[Expr], flip: bool) -> fmt::Result {
    let (coef, factors) = match args.first().and_then(number) {
        Some(c) => (c, &args[1..]),
        None => (Value::Int(1), args),
    };
    let negative = is_negative(coef) != flip;
    if factors.is_empty() {
        return write_number(f, coef, flip);
    }
    match coef {
        Value::Int(1) | Value::Int(-1) => {
            if negative {
                f.write_char('-')?;
            }
        }
        c => {
            write_number(f, c, flip)?;
            f.write_char('*')?;
        }
    }
    for (i, x) in factors.iter().enumerate() {
        if i > 0 {
            f.write_char('*')?;
        }
        write!(f, "{}", Prec(x, MUL + 1))?;
    }
    Ok(())
}

/// A sum: ` - ` for negative terms, so `2*s0 - 1` rather than `2*s0 + -1`.
fn write_add(f: &mut Formatter<'_>, args: &[Expr]) -> fmt::Result {
    for (i, t) in args.iter().enumerate() {
        let negative = match t {
            Expr::Mul(m) => m.first().and_then(number).is_some_and(is_negative),
            other => number(other).is_some_and(is_negative),
        };
        if i == 0 {
            write!(f, "{}", Prec(t, ADD))?;
            continue;
        }
        f.write_str(if negative { " - " } else { " + " })?;
        match (t, negative) {
            (Expr::Mul(m), true) => write_mul(f, m, true)?,
            (other, true) => match number(other) {
                Some(v) => write_number(f, v, true)?,
                None => write!(f, "{}", Prec(other, ADD + 1))?,
            },
            (other, false) => write!(f, "{}", Prec(other, ADD + 1))?,
        }
    }
    Ok(())
}

fn write_call(f: &mut Formatter<'_>, func: Func, args: &[Expr]) -> fmt::Result {
    let binary = |f: &mut Formatter<'_>, op: &str, prec: u8| {
        write!(f, "{}{op}{}", Prec(&args[0], prec), Prec(&args[1], prec + 1))
    };
    let infix = infix_arity(func).is_some_and(|n| n == args.len() || (n == 0 && args.len() >= 2));
    match func {
        Func::FloorDiv if infix => binary(f, "//", MUL),
        Func::PythonMod if infix => binary(f, " % ", MUL),
        // Comparisons do not chain here: `a < b < c` would mean `a < b and b < c` to Python.
        Func::Lt if infix => binary(f, " < ", CMP + 1),
        Func::Le if infix => binary(f, " <= ", CMP + 1),
        Func::Gt if infix => binary(f, " > ", CMP + 1),
        Func::Ge if infix => binary(f, " >= ", CMP + 1),
        Func::And | Func::Or if infix => {
            let (op, prec) = if func == Func::And { (" & ", AND) } else { (" | ", OR) };
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    f.write_str(op)?;
                }
                write!(f, "{}", Prec(a, prec + 1))?;
            }
            Ok(())
        }
        Func::Not if infix => write!(f, "~{}", Prec(&args[0], UNARY)),
        _ => {
            write!(f, "{}(", func.name())?;
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{a}")?;
            }
            f.write_char(')')
        }
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Int(_) | Expr::Rational(..) | Expr::Float(_) => match number(self) {
                Some(v) => write_number(f, v, false),
                None => Ok(()),
            },
            Expr::Bool(true) => f.write_str("True"),
            Expr::Bool(false) => f.write_str("False"),
            Expr::Symbol(s) => f.write_str(s),
            Expr::Add(args) => write_add(f, args),
            Expr::Mul(args) => write_mul(f, args, false),
            // The exponent is always atomic or parenthesized: `s0**(-1)`, `2**(s0 + 1)`.
            Expr::Pow(p) => write!(f, "{}**{}", Prec(&p.0, ATOM), Prec(&p.1, ATOM)),
            Expr::Call(func, args) => write_call(f, *func, args),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: &str) -> Expr {
        Expr::symbol(n)
    }

    #[test]
    fn sympy_str_style() {
        let i = Expr::int;
        assert_eq!(Expr::mul(i(64), s("s27")).to_string(), "64*s27");
        assert_eq!(Expr::mul(s("s77"), s("s27")).to_string(), "s27*s77");
        assert_eq!(Expr::mul(i(4), Expr::pow(s("s27"), i(2))).to_string(), "4*s27**2");
        assert_eq!(Expr::add(s("s0"), i(1)).to_string(), "s0 + 1");
        assert_eq!(Expr::sub(i(2), s("s0")).to_string(), "-s0 + 2");
        assert_eq!(Expr::sub(Expr::mul(i(2), s("s0")), i(1)).to_string(), "2*s0 - 1");
        let half = Expr::floordiv(Expr::add(s("s0"), i(1)), i(2));
        assert_eq!(half.to_string(), "(s0 + 1)//2");
        assert_eq!(Expr::mul(s("s1"), half.clone()).to_string(), "s1*((s0 + 1)//2)");
        assert_eq!(Expr::neg(half).to_string(), "-((s0 + 1)//2)");
        assert_eq!(Expr::max(s("s0"), i(1)).to_string(), "Max(1, s0)");
        assert_eq!(Expr::eq(s("s0"), i(2)).to_string(), "Eq(s0, 2)");
        assert_eq!(Expr::le(s("s0"), i(64)).to_string(), "s0 <= 64");
        let both = Expr::and(vec![Expr::lt(s("s0"), i(8)), Expr::gt(s("s1"), i(2))]);
        assert_eq!(both.to_string(), "(s0 < 8) & (s1 > 2)");
        assert_eq!(Expr::not(Expr::symbol("b")).to_string(), "~b");
        assert_eq!(Expr::bool(true).to_string(), "True");
        assert_eq!(Expr::modulo(s("s0"), i(2)).to_string(), "s0 % 2");
        assert_eq!(Expr::pow(s("s0"), i(-1)).to_string(), "s0**(-1)");
        assert_eq!(Expr::truediv(s("s0"), i(2)).to_string(), "1/2*s0");
        assert_eq!(Expr::pow(i(-2), s("s0")).to_string(), "(-2)**s0");
    }

    #[test]
    fn extreme_coefficients_print() {
        let e = Expr::sub(Expr::symbol("x"), Expr::mul(Expr::int(i64::MIN), Expr::symbol("y")));
        assert!(e.to_string().contains("9223372036854775808"), "{e}");
    }
}
