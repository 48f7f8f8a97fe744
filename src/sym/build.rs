//! Constructors of [`Expr`]. Each returns the canonical form (see `simplify`), so callers can
//! compare results with `==` and never see `2*3` or `s + s`.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::arith;
use super::simplify::{self, literal};
use super::{Expr, Func};

// The names `add`, `neg`, `not`, ... are the interface other modules are written against;
// they take two operands by value and simplify, which the std::ops traits do not express.
#[allow(clippy::should_implement_trait)]
impl Expr {
    pub fn int(v: i64) -> Expr {
        Expr::Int(v)
    }

    /// The exact rational `p/q`; `q == 0` stays an unevaluated division that `eval` reports.
    pub fn rational(p: i64, q: i64) -> Expr {
        match arith::rational(p as i128, q as i128) {
            Ok(v) => literal(v),
            Err(_) => Expr::truediv(Expr::Int(p), Expr::Int(q)),
        }
    }

    pub fn float(v: f64) -> Expr {
        Expr::Float(v.to_bits())
    }

    pub fn bool(v: bool) -> Expr {
        Expr::Bool(v)
    }

    pub fn symbol(name: &str) -> Expr {
        Expr::Symbol(Arc::from(name))
    }

    pub fn add(a: Expr, b: Expr) -> Expr {
        simplify::add([a, b])
    }

    pub fn sub(a: Expr, b: Expr) -> Expr {
        simplify::add([a, Expr::neg(b)])
    }

    pub fn mul(a: Expr, b: Expr) -> Expr {
        simplify::mul([a, b])
    }

    pub fn neg(a: Expr) -> Expr {
        simplify::mul([Expr::Int(-1), a])
    }

    /// Python `/` on sympy integers: an exact rational, `a * b**-1`.
    pub fn truediv(a: Expr, b: Expr) -> Expr {
        simplify::mul([a, simplify::pow(b, Expr::Int(-1))])
    }

    pub fn pow(base: Expr, exp: Expr) -> Expr {
        simplify::pow(base, exp)
    }

    /// Python `//` (torch `FloorDiv`).
    pub fn floordiv(a: Expr, b: Expr) -> Expr {
        simplify::call(Func::FloorDiv, vec![a, b])
    }

    /// Python `%` (torch `PythonMod`): the result has the sign of the divisor.
    pub fn modulo(a: Expr, b: Expr) -> Expr {
        simplify::call(Func::PythonMod, vec![a, b])
    }

    pub fn max(a: Expr, b: Expr) -> Expr {
        simplify::call(Func::Max, vec![a, b])
    }

    pub fn min(a: Expr, b: Expr) -> Expr {
        simplify::call(Func::Min, vec![a, b])
    }

    /// Any function; a wrong number of arguments is kept as written and reported by `eval`.
    pub fn call(f: Func, args: Vec<Expr>) -> Expr {
        simplify::call(f, args)
    }

    pub fn eq(a: Expr, b: Expr) -> Expr {
        simplify::call(Func::Eq, vec![a, b])
    }

    pub fn ne(a: Expr, b: Expr) -> Expr {
        simplify::call(Func::Ne, vec![a, b])
    }

    pub fn lt(a: Expr, b: Expr) -> Expr {
        simplify::call(Func::Lt, vec![a, b])
    }

    pub fn le(a: Expr, b: Expr) -> Expr {
        simplify::call(Func::Le, vec![a, b])
    }

    pub fn gt(a: Expr, b: Expr) -> Expr {
        simplify::call(Func::Gt, vec![a, b])
    }

    pub fn ge(a: Expr, b: Expr) -> Expr {
        simplify::call(Func::Ge, vec![a, b])
    }

    pub fn and(args: Vec<Expr>) -> Expr {
        simplify::call(Func::And, args)
    }

    pub fn or(args: Vec<Expr>) -> Expr {
        simplify::call(Func::Or, args)
    }

    pub fn not(a: Expr) -> Expr {
        simplify::call(Func::Not, vec![a])
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Expr::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// Whether the expression has no symbols, so it evaluates without bindings.
    pub fn is_constant(&self) -> bool {
        match self {
            Expr::Symbol(_) => false,
            Expr::Int(_) | Expr::Rational(..) | Expr::Float(_) | Expr::Bool(_) => true,
            Expr::Add(a) | Expr::Mul(a) | Expr::Call(_, a) => a.iter().all(Expr::is_constant),
            Expr::Pow(p) => p.0.is_constant() && p.1.is_constant(),
        }
    }

    pub fn free_symbols(&self) -> BTreeSet<Arc<str>> {
        let mut out = BTreeSet::new();
        self.collect_symbols(&mut out);
        out
    }

    fn collect_symbols(&self, out: &mut BTreeSet<Arc<str>>) {
        match self {
            Expr::Symbol(s) => {
                out.insert(s.clone());
            }
            Expr::Add(a) | Expr::Mul(a) | Expr::Call(_, a) => a.iter().for_each(|x| x.collect_symbols(out)),
            Expr::Pow(p) => {
                p.0.collect_symbols(out);
                p.1.collect_symbols(out);
            }
            _ => {}
        }
    }

    /// Replaces the symbols `f` knows and rebuilds, so the result is canonical again.
    pub fn substitute(&self, f: &dyn Fn(&str) -> Option<Expr>) -> Expr {
        self.rebuild(&|e| match e {
            Expr::Symbol(s) => f(s),
            _ => None,
        })
    }

    /// The canonical form of an expression built without the constructors (or deserialized).
    pub fn simplify(&self) -> Expr {
        self.rebuild(&|e| match e {
            Expr::Rational(p, q) => Some(Expr::rational(*p, *q)),
            _ => None,
        })
    }

    /// Bottom-up reconstruction through the canonicalizing builders; `leaf` may replace atoms.
    fn rebuild(&self, leaf: &dyn Fn(&Expr) -> Option<Expr>) -> Expr {
        let all = |a: &Arc<[Expr]>| a.iter().map(|x| x.rebuild(leaf)).collect::<Vec<_>>();
        match self {
            Expr::Add(a) => simplify::add(all(a)),
            Expr::Mul(a) => simplify::mul(all(a)),
            Expr::Pow(p) => simplify::pow(p.0.rebuild(leaf), p.1.rebuild(leaf)),
            Expr::Call(f, a) => simplify::call(*f, all(a)),
            atom => leaf(atom).unwrap_or_else(|| atom.clone()),
        }
    }
}
