//! Parser of Python/sympy infix text (`str()` of sympy expressions, FX graph annotations,
//! guards in torch logs), with Python's precedence and chained comparisons.

use super::error::{excerpt, parse_error};
use super::lex::{int_value, tokenize, Tok, Token};
use super::{Expr, Func, SymError};

/// Deepest nesting the parsers accept; deeper input is hostile, not a shape expression.
pub(crate) const MAX_DEPTH: usize = 256;

pub fn parse_infix(text: &str) -> Result<Expr, SymError> {
    parse_infix_with(text, &mut |_| None)
}

/// Like [`parse_infix`], but names and guard sources (`L['x'].size()[0]`, `L['self'].fc.weight`)
/// go to `resolve` as their full text. A source it does not know is an error; a plain name it
/// does not know is a symbol.
pub fn parse_infix_with(text: &str, resolve: &mut dyn FnMut(&str) -> Option<Expr>) -> Result<Expr, SymError> {
    let toks = tokenize(text)?;
    let mut p = Parser { text, toks, i: 0, depth: 0, resolve };
    let e = p.expr()?;
    match p.peek() {
        Tok::End => Ok(e),
        _ => Err(p.error("an operator or the end of the expression")),
    }
}

struct Parser<'a, 'r> {
    text: &'a str,
    toks: Vec<Token<'a>>,
    i: usize,
    depth: usize,
    resolve: &'r mut dyn FnMut(&str) -> Option<Expr>,
}

type R = Result<Expr, SymError>;

// Python's binding strengths, loosest first.
const OR: u8 = 1;
const AND: u8 = 2;
const NOT: u8 = 3;
const CMP: u8 = 4;
const BIT_OR: u8 = 5;
const BIT_AND: u8 = 6;
const SUM: u8 = 7;
const PRODUCT: u8 = 8;

#[derive(Clone, Copy)]
enum Op {
    Or,
    And,
    Cmp(Func),
    Add,
    Sub,
    Mul,
    FloorDiv,
    Div,
    Mod,
}

impl<'a> Parser<'a, '_> {
    fn peek(&self) -> Tok<'a> {
        self.toks[self.i].tok
    }

    fn peek_at(&self, k: usize) -> Tok<'a> {
        self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }

    fn bump(&mut self) -> Token<'a> {
        let t = self.toks[self.i];
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }

    fn error(&self, expected: &str) -> SymError {
        parse_error(self.text, self.toks[self.i].start, expected)
    }

    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Tok::Punct(q) | Tok::Ident(q) if q == p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), SymError> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.error(&format!("`{p}`")))
        }
    }

    /// Runs one level of recursion, refusing input nested deeper than [`MAX_DEPTH`].
    fn nested(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        if self.depth >= MAX_DEPTH {
            return Err(SymError::TooDeep { depth: MAX_DEPTH });
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn expr(&mut self) -> R {
        self.nested(|p| p.climb(OR))
    }

    /// The binary operator at the cursor and how tightly it binds.
    fn operator(&self) -> Option<(u8, Op)> {
        Some(match self.peek() {
            Tok::Ident("or") => (OR, Op::Or),
            Tok::Ident("and") => (AND, Op::And),
            Tok::Punct("<") => (CMP, Op::Cmp(Func::Lt)),
            Tok::Punct("<=") => (CMP, Op::Cmp(Func::Le)),
            Tok::Punct(">") => (CMP, Op::Cmp(Func::Gt)),
            Tok::Punct(">=") => (CMP, Op::Cmp(Func::Ge)),
            Tok::Punct("==") => (CMP, Op::Cmp(Func::Eq)),
            Tok::Punct("!=") => (CMP, Op::Cmp(Func::Ne)),
            Tok::Punct("|") => (BIT_OR, Op::Or),
            Tok::Punct("&") => (BIT_AND, Op::And),
            Tok::Punct("+") => (SUM, Op::Add),
            Tok::Punct("-") => (SUM, Op::Sub),
            Tok::Punct("*") => (PRODUCT, Op::Mul),
            Tok::Punct("//") => (PRODUCT, Op::FloorDiv),
            Tok::Punct("/") => (PRODUCT, Op::Div),
            Tok::Punct("%") => (PRODUCT, Op::Mod),
            _ => return None,
        })
    }

    /// Precedence climbing over Python's binary operators (one loop instead of one function
    /// per level keeps the stack shallow). `not` sits between `and` and the comparisons.
    fn climb(&mut self, min: u8) -> R {
        let mut left = if min <= NOT && self.eat("not") {
            Expr::not(self.nested(|p| p.climb(NOT))?)
        } else {
            self.factor()?
        };
        // `//` and `%` do not flatten, so a chain of them deepens the tree as nesting does.
        let mut chain = 0;
        while let Some((prec, op)) = self.operator() {
            if prec < min {
                break;
            }
            if matches!(op, Op::FloorDiv | Op::Mod) {
                chain += 1;
                if self.depth + chain > MAX_DEPTH {
                    return Err(SymError::TooDeep { depth: MAX_DEPTH });
                }
            }
            self.bump();
            left = match op {
                // `a < b <= c` is `a < b and b <= c`, as in Python.
                Op::Cmp(mut f) => {
                    let mut parts = Vec::new();
                    loop {
                        let right = self.climb(CMP + 1)?;
                        parts.push(Expr::call(f, vec![left, right.clone()]));
                        left = right;
                        match self.operator() {
                            Some((CMP, Op::Cmp(g))) => {
                                self.bump();
                                f = g;
                            }
                            _ => break,
                        }
                    }
                    if parts.len() == 1 {
                        parts.remove(0)
                    } else {
                        Expr::and(parts)
                    }
                }
                _ => {
                    let right = self.climb(prec + 1)?;
                    match op {
                        Op::Or => Expr::or(vec![left, right]),
                        Op::And => Expr::and(vec![left, right]),
                        Op::Add => Expr::add(left, right),
                        Op::Sub => Expr::sub(left, right),
                        Op::Mul => Expr::mul(left, right),
                        Op::FloorDiv => Expr::floordiv(left, right),
                        Op::Div => Expr::truediv(left, right),
                        Op::Mod => Expr::modulo(left, right),
                        Op::Cmp(f) => Expr::call(f, vec![left, right]),
                    }
                }
            };
        }
        Ok(left)
    }

    fn factor(&mut self) -> R {
        if self.peek() == Tok::Punct("-") {
            // -9223372036854775808 is a literal only with its sign (and not as a power base).
            if let (Tok::Int(d), false) = (self.peek_at(1), self.peek_at(2) == Tok::Punct("**")) {
                if let Some(v) = int_value(d, true).filter(|v| *v == i64::MIN) {
                    self.bump();
                    self.bump();
                    return Ok(Expr::Int(v));
                }
            }
            self.bump();
            return Ok(Expr::neg(self.nested(|p| p.factor())?));
        }
        if self.eat("+") {
            return self.nested(|p| p.factor());
        }
        if self.eat("~") {
            return Ok(Expr::not(self.nested(|p| p.factor())?));
        }
        self.power()
    }

    fn power(&mut self) -> R {
        let base = self.atom()?;
        if self.eat("**") {
            let exp = self.nested(|p| p.factor())?;
            return Ok(Expr::pow(base, exp));
        }
        Ok(base)
    }

    fn atom(&mut self) -> R {
        let t = self.toks[self.i];
        match t.tok {
            Tok::Int(d) => {
                let v = int_value(d, false).ok_or_else(|| self.error("an integer literal that fits in 64 bits"))?;
                self.bump();
                Ok(Expr::Int(v))
            }
            Tok::Float(f) => {
                self.bump();
                Ok(Expr::float(f))
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Ident(name) => self.name(name, t.start),
            _ => Err(self.error("a number, a name or `(`")),
        }
    }

    fn name(&mut self, name: &'a str, start: usize) -> R {
        match name {
            "True" => return self.literal(Expr::Bool(true)),
            "False" => return self.literal(Expr::Bool(false)),
            "oo" | "zoo" | "nan" => return Err(SymError::Infinite(name.to_string())),
            "and" | "or" | "not" | "None" | "lambda" | "if" | "else" | "in" | "is" => {
                return Err(self.error("an operand"));
            }
            _ => {}
        }
        let next = self.peek_at(1);
        // guards_code writes the Python functions a size went through by module path:
        // `torch.sym_min(a, b)` / `torch.sym_max` (a `min()` of sizes), `torch.sym_float(s)` and
        // `math.ceil(x)` / `math.floor` (XLNet's `arange` with a float step).
        if matches!(name, "torch" | "math") && next == Tok::Punct(".") && self.peek_at(3) == Tok::Punct("(") {
            let func = match (name, self.peek_at(2)) {
                ("torch", Tok::Ident("sym_min")) => Some("min"),
                ("torch", Tok::Ident("sym_max")) => Some("max"),
                ("torch", Tok::Ident("sym_float")) => Some("ToFloat"),
                ("math", Tok::Ident("ceil")) => Some("ceiling"),
                ("math", Tok::Ident("floor")) => Some("floor"),
                _ => None,
            };
            if let Some(f) = func {
                self.bump();
                self.bump();
                return self.call(f);
            }
        }
        let empty_call = next == Tok::Punct("(") && self.peek_at(2) == Tok::Punct(")");
        if next == Tok::Punct("(") && !empty_call {
            return self.call(name);
        }
        if next == Tok::Punct("[") || next == Tok::Punct(".") || empty_call {
            return self.source(start);
        }
        self.bump();
        Ok((self.resolve)(name).unwrap_or_else(|| Expr::symbol(name)))
    }

    fn literal(&mut self, e: Expr) -> R {
        self.bump();
        Ok(e)
    }

    fn call(&mut self, name: &str) -> R {
        let Some(f) = Func::from_name(name) else {
            return Err(SymError::UnknownFunction { name: name.to_string(), text: excerpt(self.text) });
        };
        self.bump();
        self.expect("(")?;
        let mut args = Vec::new();
        while self.peek() != Tok::Punct(")") {
            args.push(self.expr()?);
            if !self.eat(",") {
                break;
            }
        }
        self.expect(")")?;
        if !f.accepts(args.len()) {
            return Err(SymError::Arity { func: f.name(), expected: f.arity_text(), got: args.len() });
        }
        Ok(Expr::call(f, args))
    }

    /// A guard source: a name and a chain of `['key']`, `[0]`, `.attr` and `()`.
    fn source(&mut self, start: usize) -> R {
        let mut end = self.bump().end;
        loop {
            match self.peek() {
                Tok::Punct("[") => {
                    self.bump();
                    match self.peek() {
                        Tok::Str(_) | Tok::Int(_) => {
                            self.bump();
                        }
                        _ => return Err(self.error("a string or an integer index")),
                    }
                    if self.peek() != Tok::Punct("]") {
                        return Err(self.error("`]`"));
                    }
                    end = self.bump().end;
                }
                Tok::Punct(".") => {
                    self.bump();
                    if !matches!(self.peek(), Tok::Ident(_)) {
                        return Err(self.error("an attribute name"));
                    }
                    end = self.bump().end;
                }
                Tok::Punct("(") => {
                    self.bump();
                    if self.peek() != Tok::Punct(")") {
                        return Err(self.error("`()`"));
                    }
                    end = self.bump().end;
                }
                _ => break,
            }
        }
        let text = &self.text[start..end];
        (self.resolve)(text).ok_or_else(|| SymError::UnknownSource(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Expr {
        parse_infix(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn sym(n: &str) -> Expr {
        Expr::symbol(n)
    }

    #[test]
    fn python_precedence() {
        assert_eq!(p("-s0**2"), Expr::neg(Expr::pow(sym("s0"), Expr::int(2))));
        assert_eq!(p("2**3**2"), Expr::int(512));
        assert_eq!(p("7 - 2 - 1"), Expr::int(4));
        assert_eq!(p("7 // 2 * 2"), Expr::int(6));
        assert_eq!(p("-7 // 2"), Expr::int(-4));
        assert_eq!(p("-7 % 3"), Expr::int(2));
        assert_eq!(p("2**-1"), Expr::rational(1, 2));
        assert_eq!(p("(s0 - 1)//2 + 1").to_string(), "(s0 - 1)//2 + 1");
        assert_eq!(p("4*s27**2").to_string(), "4*s27**2");
        assert_eq!(p("s0 + s0"), p("2*s0"));
    }

    #[test]
    fn relations_and_logic() {
        assert_eq!(p("2 <= s0"), Expr::le(Expr::int(2), sym("s0")));
        assert_eq!(p("1 <= s0 <= 64"), Expr::and(vec![p("1 <= s0"), p("s0 <= 64")]));
        assert_eq!(p("s0 == s1"), Expr::eq(sym("s0"), sym("s1")));
        assert_eq!(p("Ne(s0, 1)"), p("s0 != 1"));
        assert_eq!(p("(s0 < 8) & (s1 > 2)"), p("s0 < 8 and s1 > 2"));
        assert_eq!(p("not True or False"), Expr::bool(false));
        assert_eq!(p("~(s0 < 1)"), p("s0 >= 1"));
        assert_eq!(p("Eq(3, 3)"), Expr::bool(true));
    }

    #[test]
    fn sources_go_to_the_resolver() {
        let mut seen = Vec::new();
        let e = parse_infix_with("L['y'].size()[0] == L['x'].size()[0]", &mut |s| {
            seen.push(s.to_string());
            Some(Expr::symbol(if s.contains("'x'") { "s0" } else { "s1" }))
        })
        .unwrap();
        assert_eq!(seen, ["L['y'].size()[0]", "L['x'].size()[0]"]);
        assert_eq!(e, Expr::eq(sym("s1"), sym("s0")));
        let w = parse_infix_with("L['self'].fc.weight.size()[0] * 2", &mut |s| {
            (s == "L['self'].fc.weight.size()[0]").then(|| Expr::int(8))
        });
        assert_eq!(w, Ok(Expr::int(16)));
        assert_eq!(parse_infix("L['x'].stride()[1]"), Err(SymError::UnknownSource("L['x'].stride()[1]".into())));
        // torch.sym_min / sym_max as export's guards_code writes them (LongT5's block counts).
        let m = parse_infix_with("torch.sym_min(5, L['x'].size()[1]) + torch.sym_max(1, L['x'].size()[1])", &mut |s| {
            (s == "L['x'].size()[1]").then(|| Expr::symbol("s1"))
        })
        .unwrap();
        let at = |v: i64| m.substitute(&|n| (n == "s1").then(|| Expr::int(v))).simplify().as_int();
        assert_eq!((at(3), at(7)), (Some(6), Some(12)));
        // XLNet's: `math.ceil` of a `torch.sym_float` quotient.
        let c = parse_infix_with("math.ceil((torch.sym_float(L['x'].size()[1]) + 1) / (2.0)) * 3", &mut |s| {
            (s == "L['x'].size()[1]").then(|| Expr::symbol("s1"))
        })
        .unwrap();
        let at = |v: i64| c.substitute(&|n| (n == "s1").then(|| Expr::int(v))).simplify().as_int();
        assert_eq!((at(4), at(5)), (Some(9), Some(9)));
        assert_eq!(parse_infix_with("u0 + 1", &mut |_| None), Ok(Expr::add(sym("u0"), Expr::int(1))));
    }

    #[test]
    fn errors_name_what_was_expected() {
        assert!(matches!(parse_infix("Foo(1, 2)"), Err(SymError::UnknownFunction { name, .. }) if name == "Foo"));
        assert!(matches!(parse_infix("s0 +"), Err(SymError::Parse { pos: 4, .. })));
        assert!(matches!(parse_infix("99999999999999999999"), Err(SymError::Parse { .. })));
        assert!(matches!(parse_infix("FloorDiv(1)"), Err(SymError::Arity { .. })));
        assert!(matches!(parse_infix("s0 s1"), Err(SymError::Parse { .. })));
        assert_eq!(parse_infix("-9223372036854775808"), Ok(Expr::int(i64::MIN)));
    }

    #[test]
    fn deep_nesting_is_refused_without_overflowing_the_stack() {
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        // Every precedence level open at every nesting level: the stack's worst case.
        let stair = format!("{}1{}", "(a or b and not c < d | e & f + g * -h ** ".repeat(300), ")".repeat(300));
        assert!(parse_infix(&stair).is_err());
        assert_eq!(parse_infix(&format!("x{}", "//y".repeat(10_000))), Err(SymError::TooDeep { depth: MAX_DEPTH }));
        assert_eq!(parse_infix(&deep), Err(SymError::TooDeep { depth: MAX_DEPTH }));
        assert!(parse_infix(&"-".repeat(10_000)).is_err());
        assert!(parse_infix(&"not ".repeat(10_000)).is_err());
        assert!(parse_infix(&"2**".repeat(10_000)).is_err());
        assert!(parse_infix(&format!("{}1{}", "Max(".repeat(5000), ")".repeat(5000))).is_err());
        let ok = format!("{}1{}", "(".repeat(50), ")".repeat(50));
        assert_eq!(parse_infix(&ok), Ok(Expr::int(1)));
    }
}
