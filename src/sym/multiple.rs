//! Rounding to a multiple, written with `Mod`, recognised as a product with the multiple.
//!
//! Code that pads a length to a multiple of `k` (chunked attention, blocked linear layers) makes
//! torch record `a + Mod(k - Mod(a, k), k)` — `a` rounded up — or `a - Mod(a, k)` — `a` rounded
//! down. As sums these say nothing about divisibility, so the sizes derived from them stay opaque:
//! Bailing's hybrid attention views its padded length `n` as `n // (n // 64)` blocks of 64, and
//! `64` cannot be matched against `n // (n // 64)` while `n` is a sum. Written as `k*q` with
//! `q = ceil(a / k)` (or `a // k`), the floor-division builder divides exactly: `n // 64` is `q`
//! and `n // q` is `64`, for every integer `a`, as the sizes are.
//!
//! The identities, for integer `a` and `k > 0`, with `Mod` taking the divisor's sign (sympy,
//! Python and torch's `Mod`/`PythonMod` on these arguments):
//! - `Mod(a, k)` is in `[0, k)`, so `Mod(k - Mod(a, k), k)` is `Mod(-a, k)`;
//! - `a + Mod(-a, k)` is `k*ceil(a/k)`, which is `k*((a + k - 1) // k)`;
//! - `a - Mod(a, k)` is `k*(a // k)`.

use super::simplify::{add, call, is_integer_valued, mul};
use super::{Expr, Func};

/// `sum`'s terms (canonical, as `add` produced them) with one rounding pattern replaced, or
/// `None` when there is none. A pattern counts only when every term of `a` is a term of the sum
/// besides the `Mod`, so `64 - Mod(s, 64)` (the inside of the round-up form) is left alone.
pub(crate) fn rounded(terms: &[Expr]) -> Option<Expr> {
    for (j, term) in terms.iter().enumerate() {
        let Some((a, k, up)) = rounding_term(term) else { continue };
        if !is_integer_valued(&a) {
            continue;
        }
        let rest: Vec<Expr> = terms.iter().enumerate().filter(|(i, _)| *i != j).map(|(_, t)| t.clone()).collect();
        let Some(others) = without(&rest, &a) else { continue };
        let q = if up {
            call(Func::FloorDiv, vec![add([a, Expr::Int(k - 1)]), Expr::Int(k)])
        } else {
            call(Func::FloorDiv, vec![a, Expr::Int(k)])
        };
        let mut out = others;
        out.push(mul([Expr::Int(k), q]));
        return Some(add(out));
    }
    None
}

/// `(a, k, rounds up)` for a term `Mod(-a, k)` or `Mod(k - Mod(a, k), k)` (up) or
/// `-Mod(a, k)` (down), with `k` a positive literal.
fn rounding_term(term: &Expr) -> Option<(Expr, i64, bool)> {
    if let Expr::Mul(f) = term {
        if let [Expr::Int(-1), m] = &f[..] {
            let (a, k) = modulo(m)?;
            return Some((a, k, false));
        }
        return None;
    }
    let (inner, k) = modulo(term)?;
    // k - Mod(a, k): canonically `Add[-1*Mod(a, k), k]`.
    if let Expr::Add(t) = &inner {
        if let [Expr::Mul(f), Expr::Int(c)] = &t[..] {
            if let ([Expr::Int(-1), m], true) = (&f[..], *c == k) {
                if let Some((a, k2)) = modulo(m) {
                    if k2 == k {
                        return Some((a, k, true));
                    }
                }
            }
        }
    }
    Some((mul([Expr::Int(-1), inner]), k, true))
}

fn modulo(e: &Expr) -> Option<(Expr, i64)> {
    match e {
        Expr::Call(Func::Mod | Func::PythonMod, args) => match &args[..] {
            [a, Expr::Int(k)] if *k > 1 => Some((a.clone(), *k)),
            _ => None,
        },
        _ => None,
    }
}

/// `terms` less every term of `a` (one each), or `None` if one is missing.
fn without(terms: &[Expr], a: &Expr) -> Option<Vec<Expr>> {
    let wanted: Vec<Expr> = match a {
        Expr::Add(t) => t.to_vec(),
        other => vec![other.clone()],
    };
    let mut left = terms.to_vec();
    for w in wanted {
        let p = left.iter().position(|t| *t == w)?;
        left.remove(p);
    }
    Some(left)
}

#[cfg(test)]
mod tests {
    use crate::sym::{parse_srepr, Bindings, Expr};

    fn s(n: &str) -> Expr {
        Expr::symbol(n)
    }

    fn has_mod(e: &Expr) -> bool {
        match e {
            Expr::Call(crate::sym::Func::Mod | crate::sym::Func::PythonMod, _) => true,
            Expr::Add(a) | Expr::Mul(a) | Expr::Call(_, a) => a.iter().any(has_mod),
            Expr::Pow(p) => has_mod(&p.0) || has_mod(&p.1),
            _ => false,
        }
    }

    /// The padded length of hf_bailing_hybrid_causal_lm's export (`sym_int_values`, as written).
    const PADDED: &str = "Add(Symbol('s53', positive=True, integer=True), Mod(Add(Integer(64), Mul(Integer(-1), \
                          Mod(Symbol('s53', positive=True, integer=True), Integer(64)))), Integer(64)))";

    #[test]
    fn bailings_padded_length_is_a_multiple_of_64() {
        let n = parse_srepr(PADDED).unwrap();
        let q = Expr::floordiv(Expr::add(s("s53"), Expr::int(63)), Expr::int(64));
        assert_eq!(n, Expr::mul(Expr::int(64), q.clone()));
        assert_eq!(Expr::floordiv(n.clone(), Expr::int(64)), q);
        // The size the `masked_fill` broadcast compared with 64: `n // (n // 64)`.
        let block = Expr::floordiv(n.clone(), Expr::floordiv(n.clone(), Expr::int(64)));
        assert_eq!(block, Expr::int(64));
        for v in [1, 2, 12, 63, 64, 65, 127, 128, 1000] {
            let b: Bindings = [("s53".to_string(), v)].into_iter().collect();
            let padded = v + (64 - v % 64) % 64;
            assert_eq!(n.eval_int(&b), Ok(padded), "s53 = {v}");
        }
    }

    #[test]
    fn round_up_and_down_agree_with_python_for_negative_and_positive_values() {
        let a = Expr::add(Expr::mul(Expr::int(3), s("x")), Expr::int(-5));
        let up = Expr::add(a.clone(), Expr::modulo(Expr::neg(a.clone()), Expr::int(8)));
        let down = Expr::sub(a.clone(), Expr::modulo(a.clone(), Expr::int(8)));
        assert!(!has_mod(&up) && !has_mod(&down), "{up} / {down}");
        for x in -20..20 {
            let b: Bindings = [("x".to_string(), x)].into_iter().collect();
            let v = 3 * x - 5;
            assert_eq!(up.eval_int(&b), Ok(v + (-v).rem_euclid(8)), "x = {x}");
            assert_eq!(down.eval_int(&b), Ok(v - v.rem_euclid(8)), "x = {x}");
        }
    }

    #[test]
    fn other_terms_stay_and_partial_matches_are_left_alone() {
        // s0 + s1 + Mod(-s1, 4): s0 stays beside the multiple.
        let e = Expr::add(Expr::add(s("s0"), s("s1")), Expr::modulo(Expr::neg(s("s1")), Expr::int(4)));
        let q = Expr::floordiv(Expr::add(s("s1"), Expr::int(3)), Expr::int(4));
        assert_eq!(e, Expr::add(s("s0"), Expr::mul(Expr::int(4), q)));
        // 64 - Mod(s, 64) is not `s` rounded: no `s` term.
        let inner = Expr::sub(Expr::int(64), Expr::modulo(s("s"), Expr::int(64)));
        assert!(has_mod(&inner), "{inner}");
        // s + Mod(s, 4) is no rounding either.
        let plus = Expr::add(s("s"), Expr::modulo(s("s"), Expr::int(4)));
        assert!(has_mod(&plus), "{plus}");
        // A float-valued `a` is not rounded.
        let f = Expr::add(Expr::truediv(s("s"), Expr::int(2)), Expr::modulo(Expr::neg(Expr::truediv(s("s"), Expr::int(2))), Expr::int(4)));
        assert!(has_mod(&f), "{f}");
    }
}
