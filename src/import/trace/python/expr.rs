//! Python expressions as torch prints them (the right of an FX node's `=`, a call in Inductor's
//! output code): calls with positional and keyword arguments, attribute chains, subscripts (with
//! `a:b:c` slices and `...`), literals, lists, tuples, dicts and arithmetic. Nothing is evaluated;
//! depth and length are bounded.

use std::fmt;

use super::lex::{tokenize, PyError, Tok, Token};

/// Deepest nesting accepted; FX never nests more than a few levels.
const MAX_DEPTH: usize = 64;

/// A parsed Python expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Py {
    Name(String),
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    None,
    /// `...` or `Ellipsis` (dynamo writes `x[(Ellipsis, slice(None, 8, None))]`).
    Ellipsis,
    /// `start:stop:step` inside a subscript; a missing part is [`Py::None`]. FX itself prints
    /// `slice(None, 8, None)`, a call, which `fx` reads as the same thing.
    Slice(Box<[Py; 3]>),
    Attr(Box<Py>, String),
    Call { func: Box<Py>, args: Vec<Py>, kwargs: Vec<(String, Py)> },
    Subscript(Box<Py>, Box<Py>),
    List(Vec<Py>),
    Tuple(Vec<Py>),
    Dict(Vec<(Py, Py)>),
    /// A binary operator by its `operator` module name (`add`, `floordiv`, `lt`).
    BinOp(Box<Py>, &'static str, Box<Py>),
    /// A unary operator by its `operator` module name (`neg`, `pos`, `invert`, `not_`).
    Unary(&'static str, Box<Py>),
    /// `*x` among a call's arguments (Inductor launches `kernel.run(*args, ...)`); `**x` is a
    /// keyword argument named `**`.
    Starred(Box<Py>),
}

impl Py {
    /// `torch.ops.aten.add.Tensor` as one dotted string, when the expression is a name chain.
    pub fn dotted(&self) -> Option<String> {
        match self {
            Py::Name(n) => Some(n.clone()),
            Py::Attr(base, attr) => Some(format!("{}.{attr}", base.dotted()?)),
            _ => None,
        }
    }
}

/// Python source for the expression, as torch would print it (for messages).
impl fmt::Display for Py {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, xs: &[Py]| {
            xs.iter().enumerate().try_for_each(|(i, x)| write!(f, "{}{x}", if i > 0 { ", " } else { "" }))
        };
        match self {
            Py::Name(n) => write!(f, "{n}"),
            Py::Int(v) => write!(f, "{v}"),
            Py::Float(v) => write!(f, "{v:?}"),
            Py::Str(s) => write!(f, "{s:?}"),
            Py::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Py::None => write!(f, "None"),
            Py::Ellipsis => write!(f, "..."),
            Py::Slice(p) => {
                let part = |x: &Py| if *x == Py::None { String::new() } else { x.to_string() };
                write!(f, "{}:{}", part(&p[0]), part(&p[1]))?;
                if p[2] != Py::None {
                    write!(f, ":{}", p[2])?;
                }
                Ok(())
            }
            Py::Attr(b, a) => write!(f, "{b}.{a}"),
            Py::Call { func, args, kwargs } => {
                write!(f, "{func}(")?;
                list(f, args)?;
                for (i, (k, v)) in kwargs.iter().enumerate() {
                    let sep = if i > 0 || !args.is_empty() { ", " } else { "" };
                    if k == "**" {
                        write!(f, "{sep}**{v}")?;
                    } else {
                        write!(f, "{sep}{k} = {v}")?;
                    }
                }
                write!(f, ")")
            }
            Py::Subscript(b, i) => match i.as_ref() {
                Py::Tuple(xs) if !xs.is_empty() => {
                    write!(f, "{b}[")?;
                    list(f, xs)?;
                    write!(f, "]")
                }
                i => write!(f, "{b}[{i}]"),
            },
            Py::List(xs) => {
                write!(f, "[")?;
                list(f, xs)?;
                write!(f, "]")
            }
            Py::Tuple(xs) => {
                write!(f, "(")?;
                list(f, xs)?;
                write!(f, "{})", if xs.len() == 1 { "," } else { "" })
            }
            Py::Dict(kv) => {
                write!(f, "{{")?;
                for (i, (k, v)) in kv.iter().enumerate() {
                    write!(f, "{}{k}: {v}", if i > 0 { ", " } else { "" })?;
                }
                write!(f, "}}")
            }
            Py::BinOp(a, op, b) => write!(f, "{op}({a}, {b})"),
            Py::Unary(op, a) => write!(f, "{op}({a})"),
            Py::Starred(a) => write!(f, "*{a}"),
        }
    }
}

/// Parses one Python expression.
pub fn parse(text: &str) -> Result<Py, PyError> {
    let mut p = Parser::new(text)?;
    let e = p.expr()?;
    p.end("the end of the expression")?;
    Ok(e)
}

/// A recursive-descent parser over one text's tokens; [`super::stmt`] reads statements with it.
pub(super) struct Parser {
    toks: Vec<Token>,
    i: usize,
    depth: usize,
}

/// Positional and keyword arguments of a call.
type CallArgs = (Vec<Py>, Vec<(String, Py)>);

const BINARY: &[(&[&str], &[&str])] = &[
    (&["==", "!=", "<", "<=", ">", ">="], &["eq", "ne", "lt", "le", "gt", "ge"]),
    (&["|"], &["or_"]),
    (&["^"], &["xor"]),
    (&["&"], &["and_"]),
    (&["<<", ">>"], &["lshift", "rshift"]),
    (&["+", "-"], &["add", "sub"]),
    (&["*", "/", "//", "%", "@"], &["mul", "truediv", "floordiv", "mod", "matmul"]),
];

impl Parser {
    pub(super) fn new(text: &str) -> Result<Parser, PyError> {
        let toks = tokenize(text)?;
        Ok(Parser { toks, i: 0, depth: 0 })
    }

    pub(super) fn peek(&self) -> &Tok {
        self.peek_at(0)
    }

    /// The token `k` places ahead ([`Tok::End`] past the end).
    pub(super) fn peek_at(&self, k: usize) -> &Tok {
        self.toks.get(self.i + k).or(self.toks.last()).map_or(&Tok::End, |t| &t.tok)
    }

    pub(super) fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }

    /// The byte offset of the next token.
    pub(super) fn pos(&self) -> usize {
        self.toks.get(self.i).map_or(0, |t| t.start)
    }

    pub(super) fn error(&self, expected: &str) -> PyError {
        PyError::new(self.pos(), expected)
    }

    /// Fails unless every token was read.
    pub(super) fn end(&self, expected: &str) -> Result<(), PyError> {
        if self.peek() == &Tok::End {
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    pub(super) fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Tok::Op(o) if *o == op) {
            self.next();
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, op: &str) -> Result<(), PyError> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(self.error(&format!("`{op}`")))
        }
    }

    /// `a, b, c` (a tuple without parentheses, as on either side of `=` or after `return`), or
    /// one expression when no comma follows it.
    pub(super) fn expr_list(&mut self) -> Result<Py, PyError> {
        let first = self.expr()?;
        if !matches!(self.peek(), Tok::Op(",")) {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat(",") {
            if matches!(self.peek(), Tok::End | Tok::Op(";" | "=" | ":")) || self.peek_aug().is_some() {
                break;
            }
            items.push(self.expr()?);
        }
        Ok(Py::Tuple(items))
    }

    /// The `operator` module name of an augmented assignment's operator (`+=` → `add`) next.
    pub(super) fn peek_aug(&self) -> Option<&'static str> {
        let Tok::Op(op) = self.peek() else { return None };
        let bin = op.strip_suffix('=').filter(|b| !b.is_empty() && !matches!(*b, "=" | "<" | ">" | "!"))?;
        if bin == "**" {
            return Some("pow");
        }
        BINARY.iter().find_map(|(ops, names)| ops.iter().position(|o| *o == bin).map(|k| names[k]))
    }

    pub(super) fn expr(&mut self) -> Result<Py, PyError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(&format!("at most {MAX_DEPTH} levels of nesting")));
        }
        let r = if matches!(self.peek(), Tok::Name(n) if n == "not") {
            self.next();
            self.expr().map(|e| Py::Unary("not_", Box::new(e)))
        } else {
            self.binary(0)
        };
        self.depth -= 1;
        r
    }

    fn binary(&mut self, level: usize) -> Result<Py, PyError> {
        if level == BINARY.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            let (ops, names) = BINARY[level];
            let found = match self.peek() {
                Tok::Op(o) => ops.iter().position(|x| x == o),
                _ => None,
            };
            let Some(k) = found else { return Ok(lhs) };
            self.next();
            let rhs = self.binary(level + 1)?;
            lhs = Py::BinOp(Box::new(lhs), names[k], Box::new(rhs));
        }
    }

    fn unary(&mut self) -> Result<Py, PyError> {
        let op = match self.peek() {
            Tok::Op("-") => "neg",
            Tok::Op("+") => "pos",
            Tok::Op("~") => "invert",
            _ => return self.power(),
        };
        self.next();
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(&format!("at most {MAX_DEPTH} levels of nesting")));
        }
        let e = self.unary()?;
        self.depth -= 1;
        Ok(match (op, e) {
            ("neg", Py::Int(v)) => Py::Int(v.wrapping_neg()),
            ("neg", Py::Float(v)) => Py::Float(-v),
            (op, e) => Py::Unary(op, Box::new(e)),
        })
    }

    fn power(&mut self) -> Result<Py, PyError> {
        let base = self.postfix()?;
        if self.eat("**") {
            let exp = self.unary()?;
            return Ok(Py::BinOp(Box::new(base), "pow", Box::new(exp)));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<Py, PyError> {
        let mut e = self.atom()?;
        loop {
            if self.eat(".") {
                match self.next() {
                    Tok::Name(n) => e = Py::Attr(Box::new(e), n),
                    _ => return Err(self.error("an attribute name")),
                }
            } else if self.eat("(") {
                let (args, kwargs) = self.call_args()?;
                e = Py::Call { func: Box::new(e), args, kwargs };
            } else if self.eat("[") {
                let idx = self.subscript_items()?;
                let idx = match idx {
                    (mut items, false) if items.len() == 1 => items.remove(0),
                    (items, _) => Py::Tuple(items),
                };
                e = Py::Subscript(Box::new(e), Box::new(idx));
            } else {
                return Ok(e);
            }
        }
    }

    fn call_args(&mut self) -> Result<CallArgs, PyError> {
        let mut args = Vec::new();
        let mut kwargs = Vec::new();
        loop {
            if self.eat(")") {
                return Ok((args, kwargs));
            }
            let is_kw = matches!(self.peek(), Tok::Name(_)) && matches!(self.peek_at(1), Tok::Op("="));
            if self.eat("**") {
                kwargs.push(("**".to_string(), self.expr()?));
            } else if self.eat("*") {
                args.push(Py::Starred(Box::new(self.expr()?)));
            } else if is_kw {
                let Tok::Name(name) = self.next() else { return Err(self.error("a keyword argument's name")) };
                self.next();
                kwargs.push((name, self.expr()?));
            } else {
                args.push(self.expr()?);
            }
            if !self.eat(",") {
                self.expect(")")?;
                return Ok((args, kwargs));
            }
        }
    }

    /// The items of `x[...]` up to `]`, where each may be a slice `a:b:c`; the flag says whether
    /// a comma made it a tuple.
    fn subscript_items(&mut self) -> Result<(Vec<Py>, bool), PyError> {
        let mut items = Vec::new();
        let mut comma = false;
        loop {
            if self.eat("]") {
                return Ok((items, comma));
            }
            items.push(self.slice_item()?);
            comma = self.eat(",");
            if !comma {
                self.expect("]")?;
                return Ok((items, false));
            }
        }
    }

    /// One subscript item: an expression, or a slice with any of its three parts left out.
    fn slice_item(&mut self) -> Result<Py, PyError> {
        let ends = |t: &Tok| matches!(t, Tok::Op(":" | "," | "]"));
        let mut parts = [Py::None, Py::None, Py::None];
        let mut k = 0;
        if !ends(self.peek()) {
            parts[0] = self.expr()?;
        }
        while self.eat(":") {
            k += 1;
            if k > 2 {
                return Err(self.error("at most two `:` in a slice"));
            }
            if !ends(self.peek()) {
                parts[k] = self.expr()?;
            }
        }
        if k == 0 {
            let [first, _, _] = parts;
            return Ok(first);
        }
        Ok(Py::Slice(Box::new(parts)))
    }

    /// Items up to `close`; the flag says whether a trailing comma made it a tuple.
    fn sequence(&mut self, close: &str) -> Result<(Vec<Py>, bool), PyError> {
        let mut items = Vec::new();
        let mut comma = false;
        loop {
            if self.eat(close) {
                return Ok((items, comma));
            }
            items.push(self.expr()?);
            comma = self.eat(",");
            if !comma {
                self.expect(close)?;
                return Ok((items, false));
            }
        }
    }

    fn atom(&mut self) -> Result<Py, PyError> {
        let at = self.pos();
        match self.next() {
            Tok::Int(v) => Ok(Py::Int(v)),
            Tok::Float(v) => Ok(Py::Float(v)),
            Tok::Str(s) => {
                let mut s = s;
                while let Tok::Str(more) = self.peek().clone() {
                    self.next();
                    s.push_str(&more);
                }
                Ok(Py::Str(s))
            }
            Tok::Name(n) => Ok(match n.as_str() {
                "None" => Py::None,
                "Ellipsis" => Py::Ellipsis,
                "True" => Py::Bool(true),
                "False" => Py::Bool(false),
                _ => Py::Name(n),
            }),
            Tok::Op("...") => Ok(Py::Ellipsis),
            Tok::Op("(") => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(self.error(&format!("at most {MAX_DEPTH} levels of nesting")));
                }
                let (mut items, comma) = self.sequence(")")?;
                self.depth -= 1;
                Ok(if items.len() == 1 && !comma { items.remove(0) } else { Py::Tuple(items) })
            }
            Tok::Op("[") => {
                self.depth += 1;
                let (items, _) = self.sequence("]")?;
                self.depth -= 1;
                Ok(Py::List(items))
            }
            Tok::Op("{") => {
                let mut entries = Vec::new();
                loop {
                    if self.eat("}") {
                        return Ok(Py::Dict(entries));
                    }
                    let k = self.expr()?;
                    self.expect(":")?;
                    let v = self.expr()?;
                    entries.push((k, v));
                    if !self.eat(",") {
                        self.expect("}")?;
                        return Ok(Py::Dict(entries));
                    }
                }
            }
            _ => Err(PyError::new(at, "a name, literal or `(`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Py {
        Py::Name(n.into())
    }

    #[test]
    fn parses_fx_call_lines() {
        let e = parse("torch.ops.aten.var_mean.correction(arg2_1, [2], correction = 0, keepdim = True)").unwrap();
        let Py::Call { func, args, kwargs } = e else { panic!("not a call") };
        assert_eq!(func.dotted().as_deref(), Some("torch.ops.aten.var_mean.correction"));
        assert_eq!(args, vec![name("arg2_1"), Py::List(vec![Py::Int(2)])]);
        assert_eq!(kwargs, vec![("correction".into(), Py::Int(0)), ("keepdim".into(), Py::Bool(true))]);
        assert_eq!(parse("var_mean[1]").unwrap(), Py::Subscript(Box::new(name("var_mean")), Box::new(Py::Int(1))));
        assert_eq!(
            parse("getitem_2 // 4").unwrap(),
            Py::BinOp(Box::new(name("getitem_2")), "floordiv", Box::new(Py::Int(4)))
        );
        assert_eq!(parse("(32,)").unwrap(), Py::Tuple(vec![Py::Int(32)]));
        assert_eq!(parse("-1e-05").unwrap(), Py::Float(-1e-05));
        assert_eq!(
            parse("{'compile_with_inductor': 0}").unwrap(),
            Py::Dict(vec![(Py::Str("compile_with_inductor".into()), Py::Int(0))])
        );
        assert!(matches!(parse("x.chunk(3, dim = -1)").unwrap(), Py::Call { .. }));
        let Py::Call { args, kwargs, .. } = parse("k.run(*args, **kw, stream=s0)").unwrap() else { panic!("not a call") };
        assert_eq!((args, kwargs.len()), (vec![Py::Starred(Box::new(name("args")))], 2));
    }

    #[test]
    fn rejects_broken_and_hostile_text() {
        assert!(parse("f(a, ").is_err());
        assert!(parse("'open").is_err());
        assert!(parse("a b").is_err());
        assert!(parse("$").is_err());
        assert!(parse(&"(".repeat(10_000)).is_err());
        assert!(parse(&"-".repeat(10_000)).is_err());
        assert!(parse("[[[[1]]]]").is_ok());
        assert!(parse("x[1:2:3:4]").is_err());
        assert!(parse("x[:").is_err());
        assert!(parse("x += 1").is_err(), "a statement is no expression");
    }

    #[test]
    fn prints_back_as_python() {
        for text in ["primals_2[0]", "torch.ops.aten.add.Tensor(x, 1, alpha = 2)", "x[1:, ::2]", "(a,)", "{'k': [1, None]}", "f(*a, **b)"] {
            assert_eq!(parse(text).unwrap().to_string().replace('"', "'"), text);
        }
    }

    #[test]
    fn parses_ellipsis_and_slices() {
        let slice = |a: Py, b: Py, c: Py| Py::Slice(Box::new([a, b, c]));
        let sub = |idx: Py| Py::Subscript(Box::new(name("x")), Box::new(idx));
        assert_eq!(parse("x[..., None]").unwrap(), sub(Py::Tuple(vec![Py::Ellipsis, Py::None])));
        assert_eq!(parse("x[(Ellipsis, None)]").unwrap(), sub(Py::Tuple(vec![Py::Ellipsis, Py::None])));
        assert_eq!(
            parse("x[:, 1:, ::2, :n]").unwrap(),
            sub(Py::Tuple(vec![
                slice(Py::None, Py::None, Py::None),
                slice(Py::Int(1), Py::None, Py::None),
                slice(Py::None, Py::None, Py::Int(2)),
                slice(Py::None, name("n"), Py::None),
            ]))
        );
        assert_eq!(parse("x[-1]").unwrap(), sub(Py::Int(-1)));
        assert_eq!(parse("x[1:]").unwrap(), sub(slice(Py::Int(1), Py::None, Py::None)));
    }
}
