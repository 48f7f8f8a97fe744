//! Tests of the builders' canonical form and of evaluation, through the public API.

use super::*;

fn s(n: &str) -> Expr {
    Expr::symbol(n)
}

fn i(v: i64) -> Expr {
    Expr::int(v)
}

fn bind(pairs: &[(&str, i64)]) -> Bindings {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn builders_fold_and_combine() {
    assert_eq!(Expr::mul(i(2), i(3)), i(6));
    assert_eq!(Expr::add(s("s"), s("s")), Expr::mul(i(2), s("s")));
    assert_eq!(Expr::mul(Expr::mul(i(2), s("s")), s("s")), Expr::mul(i(2), Expr::pow(s("s"), i(2))));
    assert_eq!(Expr::mul(s("x"), i(1)), s("x"));
    assert_eq!(Expr::add(s("x"), i(0)), s("x"));
    assert_eq!(Expr::mul(s("x"), i(0)), i(0));
    assert_eq!(Expr::sub(s("x"), s("x")), i(0));
    assert_eq!(Expr::floordiv(s("x"), i(1)), s("x"));
    assert_eq!(Expr::floordiv(i(-7), i(2)), i(-4));
    assert_eq!(Expr::modulo(i(-7), i(2)), i(1));
    assert_eq!(Expr::max(i(3), i(5)), i(5));
    assert_eq!(Expr::min(s("a"), s("a")), s("a"));
    assert_eq!(Expr::lt(i(1), i(2)), Expr::bool(true));
    assert_eq!(Expr::and(vec![Expr::bool(true), s("b")]), s("b"));
    assert_eq!(Expr::or(vec![Expr::bool(true), s("b")]), Expr::bool(true));
    assert_eq!(Expr::not(Expr::bool(false)), Expr::bool(true));
    assert_eq!(Expr::add(Expr::rational(1, 2), Expr::rational(1, 2)), i(1));
    assert_eq!(Expr::floordiv(Expr::floordiv(s("x"), i(2)), i(3)), Expr::floordiv(s("x"), i(6)));
}

#[test]
fn canonical_order_makes_equal_things_equal() {
    let a = Expr::add(Expr::mul(s("b"), s("a")), Expr::add(i(1), s("c")));
    let b = Expr::add(s("c"), Expr::add(i(1), Expr::mul(s("a"), s("b"))));
    assert_eq!(a, b);
    assert_eq!(Expr::mul(i(2), Expr::add(s("x"), i(1))), Expr::add(Expr::mul(i(2), s("x")), i(2)));
    assert_eq!(Expr::pow(Expr::mul(i(2), s("x")), i(2)), Expr::mul(i(4), Expr::pow(s("x"), i(2))));
    assert_eq!(Expr::mul(s("x"), Expr::pow(s("x"), i(-1))), i(1));
    assert_eq!(Expr::max(s("a"), Expr::max(i(1), Expr::max(s("a"), i(3)))), Expr::max(i(3), s("a")));
    assert_eq!(a.simplify(), a);
}

#[test]
fn overflowing_folds_stay_unevaluated_and_eval_reports_them() {
    let e = Expr::add(i(i64::MAX), i(1));
    assert!(!matches!(e, Expr::Int(_)));
    assert!(matches!(e.eval(&Bindings::new()), Err(SymError::Overflow(_))));
    let big = Expr::mul(s("x"), s("x"));
    assert!(matches!(big.eval_int(&bind(&[("x", 1 << 40)])), Err(SymError::Overflow(_))));
    let div = Expr::floordiv(s("x"), s("y"));
    assert!(matches!(div.eval_int(&bind(&[("x", 1), ("y", 0)])), Err(SymError::DivisionByZero(_))));
    assert_eq!(div.eval_int(&bind(&[("x", 1)])), Err(SymError::Unbound("y".into())));
}

#[test]
fn eval_semantics_follow_torch() {
    let b = bind(&[("x", -7), ("y", 2)]);
    let ev = |e: Expr| e.eval(&b).unwrap();
    assert_eq!(ev(Expr::floordiv(s("x"), s("y"))), Value::Int(-4));
    assert_eq!(ev(Expr::call(Func::Mod, vec![s("x"), s("y")])), Value::Int(1));
    assert_eq!(ev(Expr::call(Func::TruncToInt, vec![Expr::truediv(s("x"), s("y"))])), Value::Int(-3));
    assert_eq!(ev(Expr::call(Func::CeilToInt, vec![Expr::truediv(s("x"), s("y"))])), Value::Int(-3));
    assert_eq!(ev(Expr::call(Func::FloorToInt, vec![Expr::truediv(s("x"), s("y"))])), Value::Int(-4));
    assert_eq!(ev(Expr::call(Func::IntTrueDiv, vec![s("x"), s("y")])), Value::Float(-3.5));
    assert_eq!(ev(Expr::call(Func::ToFloat, vec![s("y")])), Value::Float(2.0));
    assert_eq!(ev(Expr::pow(s("y"), i(-2))), Value::Rational(1, 4));
    assert_eq!(ev(Expr::call(Func::ModularIndexing, vec![s("y"), i(1), i(2)])), Value::Int(0));
    assert_eq!(ev(Expr::call(Func::Abs, vec![s("x")])), Value::Int(7));
    assert!(matches!(Expr::call(Func::CleanDiv, vec![s("x"), s("y")]).eval(&b), Err(SymError::NotInteger(_))));
    assert_eq!(Expr::call(Func::CleanDiv, vec![s("y"), s("y")]).eval_int(&b), Ok(1));
    assert!(matches!(Expr::truediv(s("x"), s("y")).eval_int(&b), Err(SymError::NotInteger(_))));
    assert!(matches!(s("x").eval_bool(&b), Err(SymError::NotBool(_))));
    assert_eq!(Expr::lt(s("x"), s("y")).eval_bool(&b), Ok(true));
    assert!(matches!(Expr::call(Func::FloorDiv, vec![s("x")]).eval(&b), Err(SymError::Arity { .. })));
}

#[test]
fn guards_short_circuit() {
    let guard = Expr::and(vec![Expr::ne(s("d"), i(0)), Expr::eq(Expr::floordiv(s("n"), s("d")), i(2))]);
    assert_eq!(guard.eval_bool(&bind(&[("d", 0), ("n", 4)])), Ok(false));
    assert_eq!(guard.eval_bool(&bind(&[("d", 2), ("n", 4)])), Ok(true));
}

#[test]
fn substitution_resimplifies() {
    let e = Expr::add(Expr::mul(i(64), s("s27")), s("s77"));
    let r = e.substitute(&|n| (n == "s77").then(|| Expr::mul(i(2), s("s27"))));
    assert_eq!(r, Expr::mul(i(66), s("s27")));
    assert_eq!(r.free_symbols().into_iter().collect::<Vec<_>>(), vec![std::sync::Arc::from("s27")]);
    assert!(!r.is_constant());
    assert_eq!(r.substitute(&|_| Some(i(2))).as_int(), Some(132));
}

#[test]
fn bindings_are_sorted_and_serialize_as_an_object() {
    let mut b = Bindings::new();
    b.set("s77", 3);
    b.set("s27", 5);
    b.set("s77", 4);
    assert_eq!(b.iter().collect::<Vec<_>>(), vec![("s27", 5), ("s77", 4)]);
    assert_eq!(b.get("s77"), Some(4));
    assert_eq!(serde_json::to_string(&b).unwrap(), r#"{"s27":5,"s77":4}"#);
    assert_eq!(b.clone(), b);
}

#[test]
fn deep_built_trees_are_refused_by_eval() {
    let mut e = s("x");
    for _ in 0..300 {
        e = Expr::call(Func::Abs, vec![Expr::call(Func::FloorDiv, vec![e, s("y")])]);
    }
    eprintln!("built"); assert!(matches!(e.eval(&bind(&[("x", 1), ("y", 1)])), Err(SymError::TooDeep { .. }))); eprintln!("evaluated");
}

#[test]
fn grouping_does_not_change_the_canonical_form() {
    let sum = || Expr::add(s("s0"), i(9));
    let f = Expr::call(Func::FloorToInt, vec![Expr::truediv(s("s0"), i(7))]);
    let left = Expr::mul(Expr::mul(i(-4), sum()), f.clone());
    let right = Expr::mul(i(-4), Expr::mul(sum(), f));
    assert_eq!(left, right);
    assert_eq!(left.to_string(), "-4*(s0 + 9)*FloorToInt(1/7*s0)");
    let twice = Expr::add(Expr::mul(i(2), s("x")), i(2));
    assert_eq!(Expr::mul(twice.clone(), twice.clone()), Expr::pow(twice, i(2)));
}

#[test]
fn python_builtins_in_guard_text_evaluate() {
    // torch 2.11 writes this guard for Llama with a dynamic sequence length.
    let g = super::parse_infix("min(8*s0, 16*s0) == (8*s0)").unwrap();
    assert!(g.eval_bool(&bind(&[("s0", 7)])).unwrap());
    let m = super::parse_infix("max(s0, 3) + abs(s1 - s0)").unwrap();
    assert_eq!(m.eval_int(&bind(&[("s0", 2), ("s1", 5)])).unwrap(), 6);
}

#[test]
fn floordiv_by_a_factor_is_the_exact_quotient() {
    let (s0, s1) = (Expr::symbol("s0"), Expr::symbol("s1"));
    let num = Expr::mul(Expr::mul(Expr::int(32), s0.clone()), s1.clone());
    assert_eq!(Expr::floordiv(num.clone(), Expr::mul(Expr::int(32), s0.clone())), s1);
    assert_eq!(Expr::floordiv(num, s1.clone()), Expr::mul(Expr::int(32), s0.clone()));
    // Not a factor: stays a floor division.
    let half = Expr::floordiv(Expr::mul(Expr::int(2), s0.clone()), Expr::int(4));
    assert!(matches!(half, Expr::Call(..)), "{half}");
    let sum = Expr::floordiv(Expr::add(s0.clone(), s1.clone()), s0.clone());
    assert!(matches!(sum, Expr::Call(..)), "{sum}");
}

/// `(k*q + c) // k` is `q + c // k` (sympy's answer for ATen's `chunk` piece size
/// `(3*s + 2) // 3`); a term `k` does not divide keeps the floor division.
#[test]
fn floor_division_of_a_sum_splits_off_multiples_of_the_divisor() {
    let three_s = Expr::mul(i(3), s("s"));
    assert_eq!(Expr::floordiv(Expr::add(three_s.clone(), i(2)), i(3)), s("s"));
    assert_eq!(Expr::floordiv(Expr::add(three_s.clone(), i(-1)), i(3)), Expr::add(s("s"), i(-1)));
    assert_eq!(Expr::floordiv(Expr::add(Expr::mul(i(6), s("s")), i(7)), i(3)), Expr::add(Expr::mul(i(2), s("s")), i(2)));
    let kept = Expr::floordiv(Expr::add(three_s, s("t")), i(3));
    assert!(matches!(kept, Expr::Call(..)), "{kept:?}");
    let ev = |e: &Expr, sv: i64| e.eval(&bind(&[("s", sv), ("t", 0)])).ok();
    for sv in 1..6 {
        let e = Expr::floordiv(Expr::add(Expr::mul(i(3), s("s")), i(2)), i(3));
        assert_eq!(ev(&e, sv), Some(Value::Int(sv)));
    }
}
