//! The canonical form every builder returns, so that equal expressions compare equal.
//!
//! Canonical means: `Add`/`Mul` flat; numeric constants folded into one (an `Add`'s last term, a
//! `Mul`'s first factor); like terms and like powers combined; remaining args sorted by `Ord`;
//! a numeric coefficient distributed over a single sum (as sympy does: `2*(s + 1)` is `2*s + 2`).
//! Each builder assumes its arguments are already canonical, so building is one level deep.
//! Folding uses `arith`, the evaluator's own arithmetic; a fold that would overflow or divide by
//! zero is left unfolded, so `eval` reports it where it happens.

use std::cmp::Ordering;
use std::sync::Arc;

use super::arith::{self, ArithResult, Rounding};
use super::eval::Value;
use super::{Expr, Func};

/// The numeric value of a literal (booleans are not numbers).
pub(crate) fn number(e: &Expr) -> Option<Value> {
    match *e {
        Expr::Int(i) => Some(Value::Int(i)),
        Expr::Rational(p, q) => Some(Value::Rational(p, q)),
        Expr::Float(bits) => Some(Value::Float(f64::from_bits(bits))),
        _ => None,
    }
}

pub(crate) fn literal(v: Value) -> Expr {
    match v {
        Value::Int(i) => Expr::Int(i),
        Value::Rational(p, q) => Expr::Rational(p, q),
        Value::Float(f) => Expr::Float(f.to_bits()),
        Value::Bool(b) => Expr::Bool(b),
    }
}

/// A successful, finite fold; `None` leaves the expression unevaluated.
fn folded(r: ArithResult) -> Option<Value> {
    match r {
        Ok(Value::Float(f)) if !f.is_finite() => None,
        Ok(v) => Some(v),
        Err(_) => None,
    }
}

fn is_one(v: Value) -> bool {
    v == Value::Int(1)
}

/// Whether `e` always has an integer value: shape symbols are integers, and so is everything
/// torch builds from them with integer operations.
pub(crate) fn is_integer_valued(e: &Expr) -> bool {
    match e {
        Expr::Int(_) | Expr::Symbol(_) => true,
        Expr::Add(args) | Expr::Mul(args) => args.iter().all(is_integer_valued),
        Expr::Pow(p) => is_integer_valued(&p.0) && matches!(p.1, Expr::Int(e) if e >= 0),
        Expr::Call(f, args) => match f {
            Func::FloorDiv | Func::CleanDiv | Func::ModularIndexing => true,
            Func::CeilToInt | Func::FloorToInt | Func::TruncToInt | Func::RoundToInt => true,
            Func::Mod | Func::PythonMod | Func::Max | Func::Min | Func::Abs => {
                args.iter().all(is_integer_valued)
            }
            _ => false,
        },
        _ => false,
    }
}

/// Splits a term into its numeric coefficient and the rest (`3*x*y` → `3`, `x*y`).
fn split_coefficient(e: Expr) -> (Value, Expr) {
    if let Expr::Mul(args) = &e {
        if let Some(c) = args.first().and_then(number) {
            let rest = if args.len() == 2 { args[1].clone() } else { Expr::Mul(args[1..].into()) };
            return (c, rest);
        }
    }
    (Value::Int(1), e)
}

/// The numeric coefficient of a term (`3*x*y` → `3`, a number → itself).
fn coefficient(e: &Expr) -> Value {
    match e {
        Expr::Mul(args) => args.first().and_then(number).unwrap_or(Value::Int(1)),
        other => number(other).unwrap_or(Value::Int(1)),
    }
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

/// The content of a sum with exact coefficients: the `c`, signed like the first term, for
/// which `sum / c` has coprime integer coefficients (`-4*s0 - 36` → `-4`). `None` when it is
/// one or a coefficient is a float.
///
/// Products keep their Add factors primitive and the content in the coefficient, so that
/// `-4*(s0 + 9)*y` is one expression however it was grouped: `(-4*(s0 + 9))*y` first
/// distributes to `(-4*s0 - 36)*y`, which pulls the `-4` back out.
fn content(terms: &[Expr]) -> Option<Value> {
    let (mut g, mut l) = (0i128, 1i128);
    for t in terms {
        let (p, q) = match coefficient(t) {
            Value::Int(i) => (i as i128, 1),
            Value::Rational(p, q) => (p as i128, q as i128),
            _ => return None,
        };
        g = gcd(g, p);
        l = (l / gcd(l, q)).checked_mul(q).filter(|l| *l <= i64::MAX as i128)?;
    }
    if g == 0 {
        return None;
    }
    let sign = if is_negative(coefficient(terms.first()?)) { -1 } else { 1 };
    let c = arith::rational(sign * g, l).ok()?;
    (!is_one(c)).then_some(c)
}

fn is_negative(v: Value) -> bool {
    match v {
        Value::Int(i) => i < 0,
        Value::Rational(p, _) => p < 0,
        Value::Float(f) => f < 0.0,
        Value::Bool(_) => false,
    }
}

/// `sum` as `c * primitive`, when it has a content `c` that folds exactly.
fn primitive(sum: &Expr) -> Option<(Value, Expr)> {
    let Expr::Add(terms) = sum else { return None };
    let c = content(terms)?;
    let inverse = folded(arith::pow(c, Value::Int(-1)))?;
    Some((c, add(terms.iter().map(|t| mul([literal(inverse), t.clone()])))))
}

/// `c*base` for a canonical `base` that is not a number and not a sum.
fn with_coefficient(c: Value, base: Expr) -> Expr {
    if is_one(c) {
        return base;
    }
    let mut args = vec![literal(c)];
    match base {
        Expr::Mul(factors) => args.extend(factors.iter().cloned()),
        other => args.push(other),
    }
    Expr::Mul(args.into())
}

fn flatten(args: impl IntoIterator<Item = Expr>, nested: impl Fn(&Expr) -> Option<&Arc<[Expr]>>) -> Vec<Expr> {
    let mut out = Vec::new();
    for a in args {
        match nested(&a) {
            Some(inner) => out.extend(inner.iter().cloned()),
            None => out.push(a),
        }
    }
    out
}

/// Folds numeric literals into `acc` with `op`; literals that cannot fold are returned.
fn fold_numbers(acc: &mut Value, e: Expr, op: fn(Value, Value) -> ArithResult, stuck: &mut Vec<Expr>) -> Option<Expr> {
    match number(&e) {
        Some(v) => {
            match folded(op(*acc, v)) {
                Some(r) => *acc = r,
                None => stuck.push(e),
            }
            None
        }
        None => Some(e),
    }
}

pub(crate) fn add(args: impl IntoIterator<Item = Expr>) -> Expr {
    let flat = flatten(args, |e| if let Expr::Add(a) = e { Some(a) } else { None });
    let mut constant = Value::Int(0);
    let mut stuck = Vec::new();
    let mut terms: Vec<(Expr, Value)> = Vec::new();
    for e in flat {
        if let Some(e) = fold_numbers(&mut constant, e, arith::add, &mut stuck) {
            let (c, base) = split_coefficient(e);
            terms.push((base, c));
        }
    }
    terms.sort_by(|a, b| a.0.cmp(&b.0));
    let mut combined: Vec<(Expr, Value)> = Vec::with_capacity(terms.len());
    for (base, c) in terms {
        if let Some(last) = combined.last_mut() {
            if last.0 == base {
                if let Some(sum) = folded(arith::add(last.1, c)) {
                    last.1 = sum;
                    continue;
                }
            }
        }
        combined.push((base, c));
    }
    let mut out: Vec<Expr> = combined
        .into_iter()
        .filter(|(_, c)| *c != Value::Int(0))
        .map(|(base, c)| with_coefficient(c, base))
        .collect();
    out.extend(stuck);
    if constant != Value::Int(0) {
        out.push(literal(constant));
    }
    if let Some(multiple) = super::multiple::rounded(&out) {
        return multiple;
    }
    match out.len() {
        0 => Expr::Int(0),
        1 => out.pop().unwrap_or(Expr::Int(0)),
        _ => Expr::Add(out.into()),
    }
}

/// The base a factor contributes to a product (`x**2` → `x`), which orders factors.
fn split_power(e: &Expr) -> (&Expr, Expr) {
    match e {
        Expr::Pow(p) => (&p.0, p.1.clone()),
        other => (other, Expr::Int(1)),
    }
}

pub(crate) fn mul(args: impl IntoIterator<Item = Expr>) -> Expr {
    let flat = flatten(args, |e| if let Expr::Mul(a) = e { Some(a) } else { None });
    let mut coef = Value::Int(1);
    let mut stuck = Vec::new();
    let mut powers: Vec<(Expr, Expr)> = Vec::new();
    for e in flat {
        if let Some(e) = fold_numbers(&mut coef, e, arith::mul, &mut stuck) {
            let (base, exp) = split_power(&e);
            if let (Some((c, reduced)), Expr::Int(n)) = (primitive(base), &exp) {
                if let Some(scaled) = folded(arith::pow(c, Value::Int(*n))).and_then(|cn| folded(arith::mul(coef, cn))) {
                    coef = scaled;
                    powers.push((reduced, exp));
                    continue;
                }
            }
            powers.push((base.clone(), exp));
        }
    }
    if coef == Value::Int(0) && stuck.is_empty() {
        return Expr::Int(0);
    }
    powers.sort_by(|a, b| a.0.cmp(&b.0));
    let mut combined: Vec<(Expr, Expr)> = Vec::with_capacity(powers.len());
    for (base, exp) in powers {
        match combined.last_mut() {
            Some(last) if last.0 == base => last.1 = add([last.1.clone(), exp]),
            _ => combined.push((base, exp)),
        }
    }
    let mut factors = Vec::with_capacity(combined.len());
    let mut again = false;
    for (base, exp) in combined {
        let p = pow(base, exp);
        if let Some(p) = fold_numbers(&mut coef, p, arith::mul, &mut stuck) {
            // A power of a product distributed into a product: flatten it in a second pass.
            again |= matches!(p, Expr::Mul(_));
            factors.push(p);
        }
    }
    if again {
        let mut all = vec![literal(coef)];
        all.extend(stuck);
        all.extend(factors);
        return mul(all);
    }
    if coef == Value::Int(0) && stuck.is_empty() {
        return Expr::Int(0);
    }
    if !is_one(coef) && stuck.is_empty() && factors.len() == 1 {
        if let Expr::Add(terms) = &factors[0] {
            return add(terms.iter().map(|t| mul([literal(coef), t.clone()])));
        }
    }
    factors.sort_by(|a, b| split_power(a).0.cmp(split_power(b).0));
    let mut out = Vec::with_capacity(factors.len() + stuck.len() + 1);
    if !is_one(coef) || (factors.is_empty() && stuck.is_empty()) {
        out.push(literal(coef));
    }
    out.extend(stuck);
    out.extend(factors);
    match out.len() {
        1 => out.pop().unwrap_or(Expr::Int(1)),
        _ => Expr::Mul(out.into()),
    }
}

pub(crate) fn pow(base: Expr, exp: Expr) -> Expr {
    match (number(&base), number(&exp)) {
        (Some(b), Some(e)) => {
            // An exact base to a fractional power is a surd; sympy keeps it symbolic, so do we.
            let exact = matches!(e, Value::Int(_)) || matches!(b, Value::Float(_)) || matches!(e, Value::Float(_));
            if exact {
                if let Some(v) = folded(arith::pow(b, e)) {
                    return literal(v);
                }
            }
        }
        (_, Some(Value::Int(0))) => return Expr::Int(1),
        (_, Some(Value::Int(1))) => return base,
        (Some(Value::Int(1)), _) => return Expr::Int(1),
        _ => {}
    }
    if let Expr::Int(n) = exp {
        match &base {
            // (x**a)**n == x**(a*n) for integer a and n.
            Expr::Pow(p) => {
                if let Expr::Int(a) = p.1 {
                    if let Some(an) = a.checked_mul(n) {
                        return pow(p.0.clone(), Expr::Int(an));
                    }
                }
            }
            Expr::Mul(factors) => return mul(factors.iter().map(|f| pow(f.clone(), Expr::Int(n)))),
            // (2*x + 2)**2 == 4*(x + 1)**2, the form a product of the two sums takes.
            Expr::Add(_) => {
                if let Some((c, reduced)) = primitive(&base) {
                    if let Some(cn) = folded(arith::pow(c, Value::Int(n))) {
                        return mul([literal(cn), Expr::Pow(Arc::new((reduced, Expr::Int(n))))]);
                    }
                }
            }
            _ => {}
        }
    }
    Expr::Pow(Arc::new((base, exp)))
}

fn fold1(args: &[Expr], op: impl Fn(Value) -> ArithResult) -> Option<Expr> {
    folded(op(number(&args[0])?)).map(literal)
}

fn fold2(args: &[Expr], op: impl Fn(Value, Value) -> ArithResult) -> Option<Expr> {
    folded(op(number(&args[0])?, number(&args[1])?)).map(literal)
}

pub(crate) fn call(f: Func, args: Vec<Expr>) -> Expr {
    if !f.accepts(args.len()) {
        // Left as written: `eval` reports the arity with the function's name.
        return Expr::Call(f, args.into());
    }
    let simplified = match f {
        Func::FloorDiv => floordiv(&args),
        Func::CleanDiv => fold2(&args, arith::exact_div).or_else(|| (args[1] == Expr::Int(1)).then(|| args[0].clone())),
        Func::Mod | Func::PythonMod => fold2(&args, arith::modulo).or_else(|| {
            let unit = matches!(args[1], Expr::Int(1) | Expr::Int(-1));
            (unit && is_integer_valued(&args[0])).then_some(Expr::Int(0))
        }),
        Func::ModularIndexing => (|| {
            let q = folded(arith::floordiv(number(&args[0])?, number(&args[1])?))?;
            folded(arith::modulo(q, number(&args[2])?)).map(literal)
        })(),
        Func::Max | Func::Min => return extremum(f, args),
        Func::Abs => fold1(&args, arith::abs).or_else(|| matches!(&args[0], Expr::Call(Func::Abs, _)).then(|| args[0].clone())),
        Func::CeilToInt => to_int(&args, Rounding::Ceil),
        Func::FloorToInt => to_int(&args, Rounding::Floor),
        Func::TruncToInt => to_int(&args, Rounding::Trunc),
        Func::RoundToInt => to_int(&args, Rounding::HalfEven),
        Func::IntTrueDiv | Func::FloatTrueDiv => fold2(&args, arith::float_div),
        Func::ToFloat => fold1(&args, |v| arith::to_f64(v).map(Value::Float)),
        Func::Eq | Func::Ne | Func::Lt | Func::Le | Func::Gt | Func::Ge => relation(f, &args),
        Func::And | Func::Or => return connective(f, args),
        Func::Not => not(&args[0]),
        Func::Sqrt => fold1(&args, |v| arith::to_f64(v).map(|x| Value::Float(x.sqrt()))),
        Func::Exp => fold1(&args, |v| arith::to_f64(v).map(|x| Value::Float(x.exp()))),
        Func::Log => fold1(&args, |v| arith::to_f64(v).map(|x| Value::Float(x.ln()))),
    };
    simplified.unwrap_or_else(|| Expr::Call(f, args.into()))
}

fn floordiv(args: &[Expr]) -> Option<Expr> {
    if let Some(e) = fold2(args, arith::floordiv) {
        return Some(e);
    }
    if args[1] == Expr::Int(1) && is_integer_valued(&args[0]) {
        return Some(args[0].clone());
    }
    // A divisor that is a factor of the dividend divides it exactly: `(32*s0*s1) // (32*s0)` is
    // `s1` (BLOOM's ALiBi view records that size unsimplified, and `baddbmm`'s sum must broadcast
    // it against `s1`). Only a quotient with integer coefficients and no negative powers counts.
    if !matches!(args[1], Expr::Int(0)) && (matches!(args[0], Expr::Mul(_)) || matches!(args[1], Expr::Mul(_))) {
        let q = mul([args[0].clone(), pow(args[1].clone(), Expr::Int(-1))]);
        if is_integer_valued(&q) {
            return Some(q);
        }
    }
    // `(k*q + c) // k` is `q + c // k` for an integer-valued `q`: ATen's `chunk` sizes its pieces
    // `(n + chunks - 1) // chunks`, which for `n = 3*s` and 3 chunks is `s`, as sympy has it.
    if let (Expr::Add(terms), Expr::Int(k)) = (&args[0], &args[1]) {
        if *k > 0 {
            if let Some(e) = floordiv_sum(terms, *k) {
                return Some(e);
            }
        }
    }
    // (x // a) // b == x // (a*b) for positive integers a and b.
    if let (Expr::Call(Func::FloorDiv, inner), Expr::Int(b)) = (&args[0], &args[1]) {
        if let (Expr::Int(a), true) = (&inner[1], *b > 0) {
            if let (true, Some(ab)) = (*a > 0, a.checked_mul(*b)) {
                return Some(call(Func::FloorDiv, vec![inner[0].clone(), Expr::Int(ab)]));
            }
        }
    }
    None
}

/// `(t1 + t2 + .. + c) // k` where every non-constant term is `k` times an integer-valued
/// expression: the quotients plus `c // k`; `None` where a term does not divide.
fn floordiv_sum(terms: &[Expr], k: i64) -> Option<Expr> {
    let mut quotients = Vec::with_capacity(terms.len());
    let mut c: i64 = 0;
    for t in terms {
        match t {
            Expr::Int(i) => c = c.checked_add(*i)?,
            _ => {
                let q = mul([t.clone(), pow(Expr::Int(k), Expr::Int(-1))]);
                if !is_integer_valued(&q) {
                    return None;
                }
                quotients.push(q);
            }
        }
    }
    quotients.push(Expr::Int(c.div_euclid(k)));
    Some(add(quotients))
}

fn to_int(args: &[Expr], mode: Rounding) -> Option<Expr> {
    if matches!(args[0], Expr::Int(_)) || (is_integer_valued(&args[0]) && number(&args[0]).is_none()) {
        return Some(args[0].clone());
    }
    fold1(args, |v| arith::round(v, mode))
}

fn extremum(f: Func, args: Vec<Expr>) -> Expr {
    let flat = flatten(args, |e| match e {
        Expr::Call(g, a) if *g == f => Some(a),
        _ => None,
    });
    let want = if f == Func::Max { Ordering::Greater } else { Ordering::Less };
    let mut best: Option<Value> = None;
    let mut rest = Vec::new();
    for e in flat {
        match (number(&e), best) {
            (Some(v), None) => best = Some(v),
            (Some(v), Some(b)) => match arith::cmp(v, b) {
                Ok(Some(o)) => {
                    if o == want {
                        best = Some(v);
                    }
                }
                _ => rest.push(e),
            },
            (None, _) => rest.push(e),
        }
    }
    rest.extend(best.map(literal));
    rest.sort();
    rest.dedup();
    if rest.len() == 1 {
        return rest.pop().unwrap_or(Expr::Int(0));
    }
    Expr::Call(f, rest.into())
}

fn relation(f: Func, args: &[Expr]) -> Option<Expr> {
    let (a, b) = (&args[0], &args[1]);
    let holds = |o: Ordering| match f {
        Func::Eq => o.is_eq(),
        Func::Ne => o.is_ne(),
        Func::Lt => o.is_lt(),
        Func::Le => o.is_le(),
        Func::Gt => o.is_gt(),
        _ => o.is_ge(),
    };
    if let (Some(x), Some(y)) = (number(a), number(b)) {
        return match arith::cmp(x, y) {
            Ok(Some(o)) => Some(Expr::Bool(holds(o))),
            _ => None,
        };
    }
    if let (Expr::Bool(x), Expr::Bool(y), Func::Eq | Func::Ne) = (a, b, f) {
        return Some(Expr::Bool((x == y) == (f == Func::Eq)));
    }
    // x == x for anything without a float in it (a NaN is not equal to itself).
    if a == b && !contains_float(a) {
        return Some(Expr::Bool(holds(Ordering::Equal)));
    }
    None
}

fn contains_float(e: &Expr) -> bool {
    match e {
        Expr::Float(_) => true,
        Expr::Call(Func::ToFloat | Func::IntTrueDiv | Func::FloatTrueDiv | Func::Sqrt | Func::Exp | Func::Log, _) => true,
        Expr::Add(a) | Expr::Mul(a) | Expr::Call(_, a) => a.iter().any(contains_float),
        // A fractional power evaluates as a float, NaN for a negative base.
        Expr::Pow(p) => !matches!(p.1, Expr::Int(_)) || contains_float(&p.0) || contains_float(&p.1),
        _ => false,
    }
}

fn connective(f: Func, args: Vec<Expr>) -> Expr {
    // And: True is neutral and False absorbs; Or the other way round.
    let absorbing = f == Func::Or;
    let flat = flatten(args, |e| match e {
        Expr::Call(g, a) if *g == f => Some(a),
        _ => None,
    });
    let mut rest = Vec::with_capacity(flat.len());
    for e in flat {
        match e {
            Expr::Bool(v) if v == absorbing => return Expr::Bool(absorbing),
            Expr::Bool(_) => {}
            other => rest.push(other),
        }
    }
    rest.sort();
    rest.dedup();
    match rest.len() {
        0 => Expr::Bool(!absorbing),
        1 => rest.pop().unwrap_or(Expr::Bool(!absorbing)),
        _ => Expr::Call(f, rest.into()),
    }
}

fn not(a: &Expr) -> Option<Expr> {
    let inverse = |f| match f {
        Func::Eq => Some(Func::Ne),
        Func::Ne => Some(Func::Eq),
        Func::Lt => Some(Func::Ge),
        Func::Le => Some(Func::Gt),
        Func::Gt => Some(Func::Le),
        Func::Ge => Some(Func::Lt),
        _ => None,
    };
    match a {
        Expr::Bool(v) => Some(Expr::Bool(!v)),
        Expr::Call(Func::Not, inner) if inner.len() == 1 => Some(inner[0].clone()),
        // Only exact relations: with a NaN, not (x < y) is not x >= y.
        Expr::Call(f, args) if args.len() == 2 && !args.iter().any(contains_float) => {
            inverse(*f).map(|g| call(g, args.to_vec()))
        }
        _ => None,
    }
}
