//! Parser of sympy `srepr` text, the form torch.export archives store shapes and guards in:
//! `Mul(Integer(64), Symbol('s27', positive=True, integer=True))`.

use super::error::{excerpt, parse_error};
use super::infix::MAX_DEPTH;
use super::lex::{int_value, tokenize, Tok, Token};
use super::simplify;
use super::{Expr, Func, SymError};

pub fn parse_srepr(text: &str) -> Result<Expr, SymError> {
    let toks = tokenize(text)?;
    let mut p = Parser { text, toks, i: 0, depth: 0 };
    let start = p.pos();
    let item = p.item()?;
    if p.peek() != Tok::End {
        return Err(p.error("the end of the expression"));
    }
    p.expr(item, start)
}

/// One argument of a constructor: `srepr` mixes expressions with raw strings and numbers.
enum Item<'a> {
    Expr(Expr),
    Str(&'a str),
    Int { digits: &'a str, negative: bool },
    Float(f64),
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<Token<'a>>,
    i: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Tok<'a> {
        self.toks[self.i].tok
    }

    fn pos(&self) -> usize {
        self.toks[self.i].start
    }

    fn bump(&mut self) -> Tok<'a> {
        let t = self.toks[self.i].tok;
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }

    fn error(&self, expected: &str) -> SymError {
        parse_error(self.text, self.pos(), expected)
    }

    fn expect(&mut self, p: &'static str) -> Result<(), SymError> {
        if self.peek() == Tok::Punct(p) {
            self.bump();
            Ok(())
        } else {
            Err(self.error(&format!("`{p}`")))
        }
    }

    fn item(&mut self) -> Result<Item<'a>, SymError> {
        if self.depth >= MAX_DEPTH {
            return Err(SymError::TooDeep { depth: MAX_DEPTH });
        }
        self.depth += 1;
        let r = self.item_inner();
        self.depth -= 1;
        r
    }

    fn item_inner(&mut self) -> Result<Item<'a>, SymError> {
        let negative = self.peek() == Tok::Punct("-");
        if negative {
            self.bump();
        }
        match (self.peek(), negative) {
            (Tok::Int(digits), _) => {
                self.bump();
                Ok(Item::Int { digits, negative })
            }
            (Tok::Float(f), _) => {
                self.bump();
                Ok(Item::Float(if negative { -f } else { f }))
            }
            (Tok::Str(s), false) => {
                self.bump();
                Ok(Item::Str(s))
            }
            (Tok::Ident("oo"), true) => Err(SymError::Infinite("-oo".into())),
            (Tok::Ident(name), false) => {
                let start = self.pos();
                self.bump();
                if self.peek() != Tok::Punct("(") {
                    return self.bare(name).map(Item::Expr);
                }
                self.bump();
                let args = self.args()?;
                self.construct(name, args, start).map(Item::Expr)
            }
            _ => Err(self.error("a sympy constructor, a string or a number")),
        }
    }

    /// Arguments up to the closing parenthesis; keyword arguments (`integer=True`,
    /// `precision=53`) are assumptions and printing hints, read and dropped.
    fn args(&mut self) -> Result<Vec<(Item<'a>, usize)>, SymError> {
        let mut args = Vec::new();
        while self.peek() != Tok::Punct(")") {
            let keyword = matches!(self.peek(), Tok::Ident(_)) && self.toks.get(self.i + 1).map(|t| t.tok) == Some(Tok::Punct("="));
            if keyword {
                self.bump();
                self.bump();
                self.item()?;
            } else {
                let at = self.pos();
                args.push((self.item()?, at));
            }
            if self.peek() != Tok::Punct(",") {
                break;
            }
            self.bump();
        }
        self.expect(")")?;
        Ok(args)
    }

    fn bare(&self, name: &str) -> Result<Expr, SymError> {
        match name {
            "true" | "True" => Ok(Expr::Bool(true)),
            "false" | "False" => Ok(Expr::Bool(false)),
            "oo" | "zoo" | "nan" => Err(SymError::Infinite(name.to_string())),
            _ => Err(SymError::UnknownFunction { name: name.to_string(), text: excerpt(self.text) }),
        }
    }

    fn expr(&self, item: Item<'a>, at: usize) -> Result<Expr, SymError> {
        match item {
            Item::Expr(e) => Ok(e),
            _ => Err(parse_error(self.text, at, "an expression such as Integer(2) or Symbol('s0')")),
        }
    }

    fn int(&self, item: &Item<'a>, at: usize) -> Result<i64, SymError> {
        match *item {
            Item::Int { digits, negative } => {
                int_value(digits, negative).ok_or_else(|| parse_error(self.text, at, "an integer that fits in 64 bits"))
            }
            _ => Err(parse_error(self.text, at, "an integer literal")),
        }
    }

    fn construct(&self, name: &str, args: Vec<(Item<'a>, usize)>, start: usize) -> Result<Expr, SymError> {
        let count = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(parse_error(self.text, start, format!("{n} argument(s) to {name}")))
            }
        };
        match name {
            "Symbol" => {
                count(1)?;
                match args[0].0 {
                    Item::Str(s) if !s.is_empty() => Ok(Expr::symbol(s)),
                    _ => Err(parse_error(self.text, args[0].1, "a symbol name in quotes")),
                }
            }
            "Integer" => {
                count(1)?;
                self.int(&args[0].0, args[0].1).map(Expr::Int)
            }
            "Rational" => {
                count(2)?;
                let (p, q) = (self.int(&args[0].0, args[0].1)?, self.int(&args[1].0, args[1].1)?);
                if q == 0 {
                    return Err(SymError::DivisionByZero(format!("Rational({p}, 0)")));
                }
                Ok(Expr::rational(p, q))
            }
            "Float" => {
                count(1)?;
                let (item, at) = &args[0];
                let v = match *item {
                    Item::Float(f) => Some(f),
                    Item::Int { digits, negative } => int_value(digits, negative).map(|i| i as f64),
                    Item::Str(s) => s.trim().parse::<f64>().ok(),
                    Item::Expr(_) => None,
                };
                match v {
                    Some(f) if f.is_finite() => Ok(Expr::float(f)),
                    Some(_) => Err(SymError::Infinite(excerpt(self.text))),
                    None => Err(parse_error(self.text, *at, "a float literal")),
                }
            }
            "Zero" | "One" | "NegativeOne" | "Half" | "BooleanTrue" | "BooleanFalse" => {
                count(0)?;
                Ok(match name {
                    "Zero" => Expr::Int(0),
                    "One" => Expr::Int(1),
                    "NegativeOne" => Expr::Int(-1),
                    "Half" => Expr::rational(1, 2),
                    "BooleanTrue" => Expr::Bool(true),
                    _ => Expr::Bool(false),
                })
            }
            "Infinity" | "NegativeInfinity" | "IntInfinity" | "NegativeIntInfinity" | "ComplexInfinity" | "NaN" => {
                Err(SymError::Infinite(format!("{name}()")))
            }
            "Add" | "Mul" | "Pow" => {
                let exprs = self.exprs(args)?;
                match name {
                    "Add" => Ok(simplify::add(exprs)),
                    "Mul" => Ok(simplify::mul(exprs)),
                    _ => match <[Expr; 2]>::try_from(exprs) {
                        Ok([b, e]) => Ok(Expr::pow(b, e)),
                        Err(_) => Err(parse_error(self.text, start, "2 arguments to Pow")),
                    },
                }
            }
            _ => match Func::from_name(name) {
                Some(f) => {
                    let exprs = self.exprs(args)?;
                    if !f.accepts(exprs.len()) {
                        return Err(SymError::Arity { func: f.name(), expected: f.arity_text(), got: exprs.len() });
                    }
                    Ok(Expr::call(f, exprs))
                }
                None => Err(SymError::UnknownFunction { name: name.to_string(), text: excerpt(self.text) }),
            },
        }
    }

    fn exprs(&self, args: Vec<(Item<'a>, usize)>) -> Result<Vec<Expr>, SymError> {
        args.into_iter().map(|(item, at)| self.expr(item, at)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Expr {
        parse_srepr(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn strings_from_real_archives_parse_and_print() {
        for (srepr, shown) in [
            ("Symbol('s77', positive=True, integer=True)", "s77"),
            ("Mul(Integer(64), Symbol('s27', positive=True, integer=True))", "64*s27"),
            ("Mul(Integer(4), Pow(Symbol('s27', positive=True, integer=True), Integer(2)))", "4*s27**2"),
            ("Mul(Symbol('s27', positive=True, integer=True), Symbol('s77', positive=True, integer=True))", "s27*s77"),
            ("Pow(Symbol('s27', positive=True, integer=True), Integer(2))", "s27**2"),
            ("Add(Integer(-1), Symbol('s0', integer=True))", "s0 - 1"),
        ] {
            let e = p(srepr);
            assert_eq!(e.to_string(), shown, "{srepr}");
            assert_eq!(super::super::parse_infix(shown), Ok(e));
        }
    }

    #[test]
    fn numbers_and_torch_functions() {
        assert_eq!(p("Rational(1, 2)"), Expr::rational(1, 2));
        assert_eq!(p("Rational(4, -2)"), Expr::int(-2));
        assert_eq!(p("Float('0.5', precision=53)"), Expr::float(0.5));
        assert_eq!(p("Integer(-9223372036854775808)"), Expr::int(i64::MIN));
        assert_eq!(p("FloorDiv(Integer(7), Integer(2))"), Expr::int(3));
        assert_eq!(p("ModularIndexing(Integer(23), Integer(4), Integer(3))"), Expr::int(2));
        assert_eq!(p("PythonMod(Integer(-7), Integer(3))"), Expr::int(2));
        assert_eq!(p("StrictLessThan(Integer(1), Integer(2))"), Expr::bool(true));
        assert_eq!(p("And(true, Not(false))"), Expr::bool(true));
        let s = Expr::symbol("s0");
        assert_eq!(p("GreaterThan(Symbol('s0'), Integer(2))"), Expr::ge(s.clone(), Expr::int(2)));
        assert_eq!(p("Unequality(Symbol('s0'), Integer(1))").to_string(), "Ne(s0, 1)");
        assert_eq!(p("CeilToInt(IntTrueDiv(Symbol('s0'), Integer(2)))").to_string(), "CeilToInt(IntTrueDiv(s0, 2))");
    }

    #[test]
    fn unknown_and_infinite_are_errors() {
        let e = parse_srepr("Mul(Integer(2), sin(Symbol('x')))");
        assert!(matches!(e, Err(SymError::UnknownFunction { ref name, .. }) if name == "sin"), "{e:?}");
        assert!(matches!(parse_srepr("IntInfinity()"), Err(SymError::Infinite(_))));
        assert!(matches!(parse_srepr("oo"), Err(SymError::Infinite(_))));
        assert!(matches!(parse_srepr("Integer(99999999999999999999)"), Err(SymError::Parse { .. })));
        assert!(matches!(parse_srepr("Symbol(1)"), Err(SymError::Parse { .. })));
        assert!(matches!(parse_srepr("Add(Integer(1)"), Err(SymError::Parse { .. })));
        assert!(matches!(parse_srepr("Integer(1) Integer(2)"), Err(SymError::Parse { .. })));
        assert!(matches!(parse_srepr("'s0'"), Err(SymError::Parse { .. })));
        let deep = format!("{}Integer(1){}", "Add(".repeat(10_000), ")".repeat(10_000));
        assert_eq!(parse_srepr(&deep), Err(SymError::TooDeep { depth: MAX_DEPTH }));
    }
}
