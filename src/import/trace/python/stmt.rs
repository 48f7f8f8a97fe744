//! Python statements as torch prints them, one logical line at a time: FX graph code
//! (`name: "annot" = call(...)`, `a, b, = f(...)`, `x += y;  z = x`, `return (...)`, `def forward(...):`)
//! and the lines of Inductor's output code that trace import reads.

use super::expr::{Parser, Py};
use super::lex::{Lexer, PyError, Tok};

/// One simple statement, or the header of a compound one.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `name: annotation` with no value (AOT autograd declares a joint graph's inputs so).
    Declare { target: Py, annotation: Py },
    /// `a = b = value`, `name: annotation = value`: the targets in source order.
    Assign { targets: Vec<Py>, annotation: Option<Py>, value: Py },
    /// `target op= value`: the operator by its `operator` module name (`+=` is `add`) and as written.
    AugAssign { target: Py, op: &'static str, symbol: &'static str, value: Py },
    Return(Option<Py>),
    /// `del a, b` (Inductor frees buffers so, often after a `;`).
    Del(Vec<Py>),
    Expr(Py),
    Pass,
    /// `def name(params) -> result:`; the body is on the lines that follow.
    Def { name: String, params: Vec<Param> },
    /// `class name(bases):`, the name as printed: FX prints `class <lambda>(torch.nn.Module):`,
    /// which is no Python, so the rest of the header is not read.
    Class { name: String },
}

/// A parameter of a `def`; `*args` and `**kwargs` keep their stars in the name.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub annotation: Option<Py>,
    pub default: Option<Py>,
}

/// The statements of one logical line (`;`-separated); comments are ignored.
pub fn parse_line(text: &str) -> Result<Vec<Stmt>, PyError> {
    let mut p = Parser::new(text).map_err(|e| unterminated_annotation(text, e))?;
    let mut out = Vec::new();
    loop {
        if p.peek() == &Tok::End {
            return Ok(out);
        }
        out.push(simple(&mut p)?);
        if !p.eat(";") {
            p.end("`;` or the end of the statement")?;
            return Ok(out);
        }
    }
}

/// A string left open right after `name:` is an annotation cut short (a truncated log line):
/// say so rather than only "unterminated string".
fn unterminated_annotation(text: &str, e: PyError) -> PyError {
    let head: Vec<Tok> = Lexer::new(text.get(..e.pos).unwrap_or("")).filter_map(Result::ok).map(|t| t.tok).collect();
    match head.as_slice() {
        [.., Tok::Name(_), Tok::Op(":"), Tok::End] => PyError::new(e.pos, "a closing quote: found an unterminated annotation string"),
        _ => e,
    }
}

fn simple(p: &mut Parser) -> Result<Stmt, PyError> {
    match p.peek() {
        Tok::Name(k) if k == "return" => {
            p.next();
            if matches!(p.peek(), Tok::End | Tok::Op(";")) {
                return Ok(Stmt::Return(None));
            }
            return Ok(Stmt::Return(Some(p.expr_list()?)));
        }
        Tok::Name(k) if k == "del" => {
            p.next();
            return Ok(Stmt::Del(match p.expr_list()? {
                Py::Tuple(items) => items,
                one => vec![one],
            }));
        }
        Tok::Name(k) if k == "pass" => {
            p.next();
            return Ok(Stmt::Pass);
        }
        Tok::Name(k) if k == "def" => return def(p),
        Tok::Name(k) if k == "class" => {
            p.next();
            let mut name = String::new();
            loop {
                match p.next() {
                    Tok::Name(n) => name.push_str(&n),
                    Tok::Op("(" | ":") | Tok::End => break,
                    Tok::Op(o) => name.push_str(o),
                    _ => return Err(p.error("a class name")),
                }
            }
            if name.is_empty() {
                return Err(p.error("a class name"));
            }
            while p.peek() != &Tok::End {
                p.next();
            }
            return Ok(Stmt::Class { name });
        }
        _ => {}
    }
    let first = p.expr_list()?;
    if p.eat(":") {
        let annotation = p.expr()?;
        if !p.eat("=") {
            return Ok(Stmt::Declare { target: first, annotation });
        }
        let value = p.expr_list()?;
        return Ok(Stmt::Assign { targets: vec![first], annotation: Some(annotation), value });
    }
    if let Some(op) = p.peek_aug() {
        let Tok::Op(symbol) = p.next() else { return Err(p.error("an augmented assignment")) };
        let value = p.expr_list()?;
        return Ok(Stmt::AugAssign { target: first, op, symbol, value });
    }
    if !p.eat("=") {
        return Ok(Stmt::Expr(first));
    }
    let mut targets = vec![first];
    loop {
        let v = p.expr_list()?;
        if !p.eat("=") {
            return Ok(Stmt::Assign { targets, annotation: None, value: v });
        }
        targets.push(v);
    }
}

/// `def name(a, b: "annot", *args, c=1, **kw) -> r:`.
fn def(p: &mut Parser) -> Result<Stmt, PyError> {
    p.next();
    let Tok::Name(name) = p.next() else { return Err(p.error("a function name after `def`")) };
    p.expect("(")?;
    let mut params = Vec::new();
    loop {
        if p.eat(")") {
            break;
        }
        let stars = if p.eat("**") {
            "**"
        } else if p.eat("*") {
            "*"
        } else {
            ""
        };
        let pname = match p.peek().clone() {
            Tok::Name(n) => {
                p.next();
                format!("{stars}{n}")
            }
            // A bare `*` (keyword-only marker) or `/` (positional-only marker).
            Tok::Op("," | ")") if !stars.is_empty() => stars.to_string(),
            Tok::Op("/") => {
                p.next();
                "/".to_string()
            }
            _ => return Err(p.error("a parameter name")),
        };
        let annotation = if p.eat(":") { Some(p.expr()?) } else { None };
        let default = if p.eat("=") { Some(p.expr()?) } else { None };
        params.push(Param { name: pname, annotation, default });
        if !p.eat(",") {
            p.expect(")")?;
            break;
        }
    }
    if p.eat("->") {
        p.expr()?;
    }
    p.expect(":")?;
    p.end("the end of the `def` line (a body on the same line is not read)")?;
    Ok(Stmt::Def { name, params })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::trace::python::parse;

    fn one(text: &str) -> Stmt {
        let mut s = parse_line(text).unwrap();
        assert_eq!(s.len(), 1, "{s:?}");
        s.remove(0)
    }

    fn n(x: &str) -> Py {
        Py::Name(x.into())
    }

    #[test]
    fn statements_fx_prints() {
        let s = one(r#"getitem_1: "f32[s77, 1][1, 1]cuda:0" = var_mean[1]"#);
        assert_eq!(
            s,
            Stmt::Assign {
                targets: vec![n("getitem_1")],
                annotation: Some(Py::Str("f32[s77, 1][1, 1]cuda:0".into())),
                value: parse("var_mean[1]").unwrap()
            }
        );
        assert_eq!(one(r#"primals_1: "f32[64][1]cuda:0"  # PlainAOTInput(idx=0)"#), Stmt::Declare {
            target: n("primals_1"),
            annotation: Py::Str("f32[64][1]cuda:0".into())
        });
        let s = parse_line("x1 += x2;  x3: \"f32[2]\" = x1;  x1 = x2 = None").unwrap();
        assert_eq!(s[0], Stmt::AugAssign { target: n("x1"), op: "add", symbol: "+=", value: n("x2") });
        assert_eq!(s[2], Stmt::Assign { targets: vec![n("x1"), n("x2")], annotation: None, value: Py::None });
        assert!(matches!(one("a, b, = f(x)"), Stmt::Assign { targets, .. } if targets == [Py::Tuple(vec![n("a"), n("b")])]));
        assert_eq!(one("return (x, )"), Stmt::Return(Some(Py::Tuple(vec![n("x")]))));
        assert_eq!(one("return x, y"), Stmt::Return(Some(Py::Tuple(vec![n("x"), n("y")]))));
        assert_eq!(one("y **= 2"), Stmt::AugAssign { target: n("y"), op: "pow", symbol: "**=", value: Py::Int(2) });
        let Stmt::Def { name, params } = one("def forward(\n self,\n arg0_1: \"Sym(s77)\",  # c\n *args, k=1, **kw\n) -> None:") else {
            panic!("not a def")
        };
        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!((name.as_str(), names), ("forward", vec!["self", "arg0_1", "*args", "k", "**kw"]));
        assert_eq!(params[1].annotation, Some(Py::Str("Sym(s77)".into())));
        assert_eq!(one("class <lambda>(torch.nn.Module):"), Stmt::Class { name: "<lambda>".into() });
        let s = parse_line("buf2 = reinterpret_tensor(buf1, (4, ), (1, ), 0); del buf1  # reuse").unwrap();
        assert_eq!(s[1], Stmt::Del(vec![n("buf1")]));
    }

    #[test]
    fn truncated_and_garbled_statements_are_errors() {
        let full = r#"to: "f16[2*s77, 16][16, 1]cuda:0" = torch.ops.aten._to_copy.default(view, dtype = torch.float16);  view = None"#;
        let open = full.find('"').unwrap() + 1;
        let quote = open..full[open..].find('"').unwrap() + open + 1;
        let call = (full.find("default(").unwrap() + 8)..full.find(')').unwrap();
        for end in 0..full.len() {
            let cut = &full[..end];
            let r = parse_line(cut);
            if quote.contains(&end) || call.contains(&end) {
                assert!(r.is_err(), "a statement cut inside a string or call is an error: `{cut}` gave {r:?}");
            }
        }
        for bad in [
            "x = ",
            "x: \"f32[3",
            "= y",
            "def forward(self, x",
            "def (x):",
            "a b = c",
            "x = f(a,, b)",
            "return )",
            "x +=",
            "x = y;; z = w",
            "class",
            "def f(self): return x",
        ] {
            assert!(parse_line(bad).is_err(), "{bad}");
        }
        let e = parse_line(r#"primals_1: "f32[16, 8][8, 1]cpu"#).unwrap_err();
        assert!(e.expected.contains("unterminated annotation"), "{e}");
        for garbage in ["\u{0}\u{1}", "((((((", "\"\\", "x[1:2:3:4] = 1", &"[".repeat(5000), "é = ü(ß)"] {
            let _ = parse_line(garbage);
        }
    }
}
