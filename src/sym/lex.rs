//! Tokens shared by the `srepr` and infix parsers. Only ASCII outside string literals, so
//! every slice taken here falls on a character boundary.
//!
//! Why not trace import's Python tokenizer (`import::trace::python::lex`, issue 29): what is read
//! here is SymPy's printed expressions (`Symbol('s0', integer=True)`, `FloorDiv(s0, 2)`), whose
//! tokens are a subset of Python's, but the contract differs where it matters to `sym`: tokens
//! borrow the text (symbol names become [`super::Expr`] symbols), an integer stays digits until the
//! parser knows its sign (`-9223372036854775808` is read whole), a float must be finite, anything
//! outside ASCII is an error, and errors are [`SymError`]s with SymPy's position. The Python reader
//! has to do the opposite on each point (decode escapes, turn an overlong integer into a float as
//! Python would, accept any identifier, read comments, multi-line strings and statements). `sym`
//! also sits below `import`, which uses it for the sizes inside annotations; sharing would move
//! trace import's reader down into `sym`.

use super::error::parse_error;
use super::SymError;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Tok<'a> {
    /// Decimal digits; the parser converts them so `-9223372036854775808` can be read whole.
    Int(&'a str),
    Float(f64),
    Ident(&'a str),
    /// The text between the quotes of `'...'` or `"..."`.
    Str(&'a str),
    Punct(&'static str),
    End,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub start: usize,
    pub end: usize,
}

const PUNCT2: [&str; 6] = ["//", "**", "<=", ">=", "==", "!="];
const PUNCT1: [&str; 17] = ["(", ")", "[", "]", ",", ".", "=", "+", "-", "*", "/", "%", "<", ">", "&", "|", "~"];

pub(crate) fn tokenize(text: &str) -> Result<Vec<Token<'_>>, SymError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let tok = if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            i = number_end(bytes, i);
            let s = &text[start..i];
            if s.bytes().all(|b| b.is_ascii_digit()) {
                Tok::Int(s)
            } else {
                match s.parse::<f64>() {
                    Ok(f) if f.is_finite() => Tok::Float(f),
                    _ => return Err(parse_error(text, start, "a finite float literal")),
                }
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            Tok::Ident(&text[start..i])
        } else if c == b'\'' || c == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != c {
                // A backslash escapes the next byte; quotes are ASCII, so this never splits one.
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            if i >= bytes.len() {
                return Err(parse_error(text, start, "a closing quote"));
            }
            i += 1;
            Tok::Str(&text[start + 1..i - 1])
        } else if let Some(p) = PUNCT2.iter().find(|p| bytes[i..].starts_with(p.as_bytes())) {
            i += 2;
            Tok::Punct(p)
        } else if let Some(p) = PUNCT1.iter().find(|p| p.as_bytes()[0] == c) {
            i += 1;
            Tok::Punct(p)
        } else {
            return Err(parse_error(text, start, "a number, a name, a string or an operator"));
        };
        out.push(Token { tok, start, end: i });
    }
    out.push(Token { tok: Tok::End, start: text.len(), end: text.len() });
    Ok(out)
}

/// End of a Python number literal: digits, an optional fraction, an optional exponent.
fn number_end(b: &[u8], mut i: usize) -> usize {
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    i = digits(i);
    if i < b.len() && b[i] == b'.' && b.get(i + 1).is_none_or(|c| !c.is_ascii_alphabetic() || *c == b'e') {
        i = digits(i + 1);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            i = digits(j);
        }
    }
    i
}

/// An integer literal's value with its sign, if it fits in `i64`.
pub(crate) fn int_value(digits: &str, negative: bool) -> Option<i64> {
    let magnitude: i128 = if digits.len() > 20 { return None } else { digits.parse().ok()? };
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok<'_>> {
        tokenize(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn python_tokens() {
        assert_eq!(
            kinds("s0**2 // 3 <= 1.5e3"),
            vec![
                Tok::Ident("s0"),
                Tok::Punct("**"),
                Tok::Int("2"),
                Tok::Punct("//"),
                Tok::Int("3"),
                Tok::Punct("<="),
                Tok::Float(1500.0),
                Tok::End
            ]
        );
        assert_eq!(kinds("L['x']")[2], Tok::Str("x"));
        assert_eq!(kinds(".5")[0], Tok::Float(0.5));
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(tokenize("'open").is_err());
        assert!(tokenize("s0 $ 1").is_err());
        assert!(tokenize("1e999").is_err());
        assert!(tokenize("'\\").is_err());
        assert!(tokenize("é").is_err());
    }

    #[test]
    fn int_values() {
        assert_eq!(int_value("9223372036854775808", true), Some(i64::MIN));
        assert_eq!(int_value("9223372036854775808", false), None);
        assert_eq!(int_value(&"9".repeat(100), false), None);
    }
}
