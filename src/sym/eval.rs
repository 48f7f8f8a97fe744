//! Evaluation of an [`Expr`] under integer [`Bindings`].
//!
//! This is the hot path of the dynamic-shape sliders (tens of thousands of expressions per
//! move): it walks the shared tree with `Copy` values and allocates nothing unless it fails.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::arith::{self, ArithError, ArithResult, Rounding};
use super::{Expr, Func, SymError};

/// The value of an expression: sympy's Integer, Rational, Float or BooleanAtom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    /// `p/q` in lowest terms with `q > 1`.
    Rational(i64, i64),
    Float(f64),
    Bool(bool),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Rational(p, q) => write!(f, "{p}/{q}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Bool(true) => f.write_str("True"),
            Value::Bool(false) => f.write_str("False"),
        }
    }
}

/// Integer values of symbols, kept sorted by name (serialized as a JSON object `{name: int}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bindings {
    values: BTreeMap<String, i64>,
}

impl Bindings {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name`; re-setting a known name allocates nothing (sliders do it on every move).
    pub fn set(&mut self, name: &str, v: i64) {
        match self.values.get_mut(name) {
            Some(slot) => *slot = v,
            None => {
                self.values.insert(name.to_string(), v);
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<i64> {
        self.values.get(name).copied()
    }

    /// The bindings in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i64)> + '_ {
        self.values.iter().map(|(k, v)| (k.as_str(), *v))
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl FromIterator<(String, i64)> for Bindings {
    fn from_iter<I: IntoIterator<Item = (String, i64)>>(iter: I) -> Self {
        Bindings { values: iter.into_iter().collect() }
    }
}

/// Deepest tree `eval` walks (about 1 MiB of stack in an unoptimized build). Parsed trees are
/// shallower, since the parsers cap nesting; this
/// guards trees built programmatically from blowing the stack of a UI worker thread.
const MAX_EVAL_DEPTH: usize = 512;

impl Expr {
    pub fn eval(&self, b: &Bindings) -> Result<Value, SymError> {
        eval(self, b, 0)
    }

    /// The value as an integer; rationals, floats and booleans are [`SymError::NotInteger`].
    pub fn eval_int(&self, b: &Bindings) -> Result<i64, SymError> {
        match self.eval(b)? {
            Value::Int(i) => Ok(i),
            _ => Err(SymError::NotInteger(self.to_string())),
        }
    }

    pub fn eval_bool(&self, b: &Bindings) -> Result<bool, SymError> {
        match self.eval(b)? {
            Value::Bool(v) => Ok(v),
            _ => Err(SymError::NotBool(self.to_string())),
        }
    }
}

/// Turns an arithmetic failure into an error naming the sub-expression that failed.
#[cold]
#[inline(never)]
fn fail(e: ArithError, at: &Expr) -> SymError {
    let text = at.to_string();
    match e {
        ArithError::Overflow => SymError::Overflow(text),
        ArithError::DivisionByZero => SymError::DivisionByZero(text),
        ArithError::NotNumber | ArithError::NotExact | ArithError::NotFinite => SymError::NotInteger(text),
    }
}

#[cold]
#[inline(never)]
fn not_bool(at: &Expr) -> SymError {
    SymError::NotBool(at.to_string())
}

/// The recursive walk. Only child evaluation recurses; applying a function happens in
/// `apply`, outside the recursion, and each kind of node has its own small function, so the
/// frames on the recursive path stay small even in unoptimized builds.
fn eval(e: &Expr, b: &Bindings, depth: usize) -> Result<Value, SymError> {
    if depth > MAX_EVAL_DEPTH {
        return Err(SymError::TooDeep { depth: MAX_EVAL_DEPTH });
    }
    match e {
        Expr::Int(i) => Ok(Value::Int(*i)),
        Expr::Rational(p, q) => Ok(Value::Rational(*p, *q)),
        Expr::Float(bits) => Ok(Value::Float(f64::from_bits(*bits))),
        Expr::Bool(v) => Ok(Value::Bool(*v)),
        Expr::Symbol(name) => match b.get(name) {
            Some(v) => Ok(Value::Int(v)),
            None => Err(unbound(name)),
        },
        Expr::Add(args) => fold(args, arith::add, Value::Int(0), e, b, depth + 1),
        Expr::Mul(args) => fold(args, arith::mul, Value::Int(1), e, b, depth + 1),
        Expr::Pow(pair) => power(pair, e, b, depth + 1),
        Expr::Call(f, args) => call(*f, args, e, b, depth + 1),
    }
}

#[cold]
#[inline(never)]
fn unbound(name: &str) -> SymError {
    SymError::Unbound(name.to_string())
}

#[inline(never)]
fn fold(args: &[Expr], op: fn(Value, Value) -> ArithResult, mut acc: Value, e: &Expr, b: &Bindings, depth: usize) -> Result<Value, SymError> {
    for x in args {
        let v = eval(x, b, depth)?;
        acc = match op(acc, v) {
            Ok(r) => r,
            Err(err) => return Err(fail(err, e)),
        };
    }
    Ok(acc)
}

#[inline(never)]
fn power(pair: &(Expr, Expr), e: &Expr, b: &Bindings, depth: usize) -> Result<Value, SymError> {
    let base = eval(&pair.0, b, depth)?;
    let exp = eval(&pair.1, b, depth)?;
    arith::pow(base, exp).map_err(|err| fail(err, e))
}

#[inline(never)]
fn call(f: Func, args: &[Expr], e: &Expr, b: &Bindings, depth: usize) -> Result<Value, SymError> {
    if !f.accepts(args.len()) {
        return Err(SymError::Arity { func: f.name(), expected: f.arity_text(), got: args.len() });
    }
    match f {
        // Canonical order is not the written order, so "short-circuit" is order-free: one
        // deciding argument wins even if another fails, which keeps `Ne(d, 0) & Eq(n // d, 2)`
        // safe at d = 0. An error counts only when nothing decides.
        Func::And | Func::Or => {
            let stop = f == Func::Or;
            let mut first_error = None;
            for a in args {
                match eval(a, b, depth) {
                    Ok(Value::Bool(t)) if t == stop => return Ok(Value::Bool(stop)),
                    Ok(Value::Bool(_)) => {}
                    Ok(_) => return Err(not_bool(a)),
                    Err(err) => {
                        first_error.get_or_insert(err);
                    }
                }
            }
            match first_error {
                Some(err) => Err(err),
                None => Ok(Value::Bool(!stop)),
            }
        }
        Func::Max | Func::Min => {
            let mut best = eval(&args[0], b, depth)?;
            for a in &args[1..] {
                let v = eval(a, b, depth)?;
                best = apply(f, &[best, v], e)?;
            }
            Ok(best)
        }
        _ => {
            // Every other function takes at most three arguments (checked above).
            let mut vals = [Value::Int(0); 3];
            for (slot, a) in vals.iter_mut().zip(args) {
                *slot = eval(a, b, depth)?;
            }
            apply(f, &vals[..args.len()], e)
        }
    }
}

/// One function on evaluated arguments (Max/Min two at a time).
#[inline(never)]
fn apply(f: Func, v: &[Value], e: &Expr) -> Result<Value, SymError> {
    let lift = |r: Result<Value, ArithError>| r.map_err(|err| fail(err, e));
    let order = || arith::cmp(v[0], v[1]).map_err(|err| fail(err, e));
    let compare = |ok: fn(Ordering) -> bool| Ok(Value::Bool(order()?.is_some_and(ok)));
    match f {
        Func::FloorDiv => lift(arith::floordiv(v[0], v[1])),
        Func::CleanDiv => match arith::exact_div(v[0], v[1]) {
            Err(ArithError::NotExact) => Err(SymError::NotInteger(e.to_string())),
            r => lift(r),
        },
        Func::Mod | Func::PythonMod => lift(arith::modulo(v[0], v[1])),
        Func::ModularIndexing => lift(arith::floordiv(v[0], v[1]).and_then(|q| arith::modulo(q, v[2]))),
        Func::Max => Ok(if order()? == Some(Ordering::Less) { v[1] } else { v[0] }),
        Func::Min => Ok(if order()? == Some(Ordering::Greater) { v[1] } else { v[0] }),
        Func::Abs => lift(arith::abs(v[0])),
        Func::CeilToInt => lift(arith::round(v[0], Rounding::Ceil)),
        Func::FloorToInt => lift(arith::round(v[0], Rounding::Floor)),
        Func::TruncToInt => lift(arith::round(v[0], Rounding::Trunc)),
        Func::RoundToInt => lift(arith::round(v[0], Rounding::HalfEven)),
        Func::IntTrueDiv | Func::FloatTrueDiv => lift(arith::float_div(v[0], v[1])),
        Func::ToFloat => lift(arith::to_f64(v[0]).map(Value::Float)),
        Func::Eq | Func::Ne => {
            let equal = match (v[0], v[1]) {
                (Value::Bool(p), Value::Bool(q)) => p == q,
                // sympy: a boolean never equals a number.
                (Value::Bool(_), _) | (_, Value::Bool(_)) => false,
                _ => order()? == Some(Ordering::Equal),
            };
            Ok(Value::Bool(equal == (f == Func::Eq)))
        }
        Func::Lt => compare(Ordering::is_lt),
        Func::Le => compare(Ordering::is_le),
        Func::Gt => compare(Ordering::is_gt),
        Func::Ge => compare(Ordering::is_ge),
        Func::Sqrt => lift(arith::to_f64(v[0]).map(|x| Value::Float(x.sqrt()))),
        Func::Exp => lift(arith::to_f64(v[0]).map(|x| Value::Float(x.exp()))),
        Func::Log => lift(arith::to_f64(v[0]).map(|x| Value::Float(x.ln()))),
        Func::Not => match v[0] {
            Value::Bool(t) => Ok(Value::Bool(!t)),
            _ => Err(not_bool(e)),
        },
        // Evaluated with short-circuit in `eval`; here only for completeness of the match.
        Func::And => Ok(Value::Bool(v.iter().all(|x| *x == Value::Bool(true)))),
        Func::Or => Ok(Value::Bool(v.contains(&Value::Bool(true)))),
    }
}
