//! Python tokens, as Python's own tokenizer reads them, for the subset torch prints: names,
//! numbers, strings (quoted, triple-quoted, with `r`/`b`/`f`/`u` prefixes), operators and `#`
//! comments. Newlines are whitespace here; the line structure is [`super::lines`]' business.
//! Every position is a byte offset into the text, and every slice falls on a character boundary.

use std::fmt;

/// Why Python text could not be read: the byte offset and what was expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PyError {
    pub pos: usize,
    pub expected: String,
}

impl PyError {
    pub(crate) fn new(pos: usize, expected: impl Into<String>) -> PyError {
        PyError { pos, expected: expected.into() }
    }
}

impl fmt::Display for PyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: expected {}", self.pos, self.expected)
    }
}

impl std::error::Error for PyError {}

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Name(String),
    Int(i64),
    Float(f64),
    /// A string literal's value (escapes decoded unless raw); adjacent literals stay separate
    /// tokens, the parser joins them.
    Str(String),
    Op(&'static str),
    /// `# ...` up to the end of its line; the token's span holds the text.
    Comment,
    End,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// Longest first, so `**=` is read before `**` and `*`.
const OPS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "->", "**", "//", "<<", ">>", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "@=", "&=",
    "|=", "^=", "(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "=", "+", "-", "*", "/", "%", "@", "<", ">", "~", "&", "|", "^",
];

/// The tokens of `text`, one at a time; the first error ends the stream. Lazy, so a caller that
/// needs only the head of a line (`name = async_compile.triton(`) never reads the rest.
pub struct Lexer<'a> {
    text: &'a str,
    i: usize,
    done: bool,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Lexer<'a> {
        Lexer { text, i: 0, done: false }
    }

    fn token(&mut self) -> Result<Token, PyError> {
        let text = self.text;
        let b = text.as_bytes();
        while self.i < b.len() && (b[self.i].is_ascii_whitespace() || b[self.i] == b'\\') {
            // A backslash outside a string is a line continuation: whitespace for us.
            self.i += 1;
        }
        let start = self.i;
        let Some(&c) = b.get(start) else {
            self.done = true;
            return Ok(Token { tok: Tok::End, start: text.len(), end: text.len() });
        };
        let tok = if c == b'#' {
            self.i = text[start..].find('\n').map_or(text.len(), |n| start + n);
            Tok::Comment
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let mut j = start;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] >= 0x80) {
                j += 1;
            }
            let word = &text[start..j];
            if matches!(b.get(j), Some(b'\'' | b'"')) && is_string_prefix(word) {
                let raw = word.bytes().any(|p| p == b'r' || p == b'R');
                let (s, end) = string(text, j, raw)?;
                self.i = end;
                Tok::Str(s)
            } else {
                self.i = j;
                Tok::Name(word.to_string())
            }
        } else if c.is_ascii_digit() || (c == b'.' && b.get(start + 1).is_some_and(u8::is_ascii_digit)) {
            let (tok, end) = number(text, start)?;
            self.i = end;
            tok
        } else if c == b'\'' || c == b'"' {
            let (s, end) = string(text, start, false)?;
            self.i = end;
            Tok::Str(s)
        } else {
            let op = OPS
                .iter()
                .find(|op| b[start..].starts_with(op.as_bytes()))
                .ok_or_else(|| PyError::new(start, "an operator, name or literal"))?;
            self.i = start + op.len();
            Tok::Op(op)
        };
        Ok(Token { tok, start, end: self.i })
    }
}

impl Iterator for Lexer<'_> {
    type Item = Result<Token, PyError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let t = self.token();
        if t.is_err() {
            self.done = true;
        }
        Some(t)
    }
}

/// Every token of `text` but comments, ending with [`Tok::End`].
pub fn tokenize(text: &str) -> Result<Vec<Token>, PyError> {
    Lexer::new(text).filter(|t| !matches!(t, Ok(Token { tok: Tok::Comment, .. }))).collect()
}

/// How many brackets `text` leaves open (negative when it closes more than it opens).
pub fn open_brackets(text: &str) -> Result<i32, PyError> {
    let mut depth = 0;
    for t in Lexer::new(text) {
        match t?.tok {
            Tok::Op("(" | "[" | "{") => depth += 1,
            Tok::Op(")" | "]" | "}") => depth -= 1,
            _ => {}
        }
    }
    Ok(depth)
}

/// `{...} rest` → (`{...}`, ` rest`): the bracketed group `text` starts with (after whitespace)
/// and what follows it, which is not read. `None` when `text` starts with no bracket or the
/// group never closes.
pub fn leading_group(text: &str) -> Option<(&str, &str)> {
    let mut depth = 0;
    let mut start = None;
    for t in Lexer::new(text) {
        let t = t.ok()?;
        match t.tok {
            Tok::Op("(" | "[" | "{") => {
                start.get_or_insert(t.start);
                depth += 1;
            }
            Tok::Op(")" | "]" | "}") if start.is_some() => {
                depth -= 1;
                if depth == 0 {
                    return Some((&text[start?..t.end], &text[t.end..]));
                }
            }
            _ if start.is_none() => return None,
            _ => {}
        }
    }
    None
}

/// Splits `text` at the `sep` operators outside brackets; `None` when it does not tokenize.
pub fn split_top<'t>(text: &'t str, sep: &str) -> Result<Vec<&'t str>, PyError> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for t in Lexer::new(text) {
        let t = t?;
        match t.tok {
            Tok::Op("(" | "[" | "{") => depth += 1,
            Tok::Op(")" | "]" | "}") => depth -= 1,
            Tok::Op(op) if op == sep && depth == 0 => {
                out.push(&text[from..t.start]);
                from = t.end;
            }
            _ => {}
        }
    }
    out.push(&text[from..]);
    Ok(out)
}

fn is_string_prefix(word: &str) -> bool {
    word.len() <= 2 && word.bytes().all(|c| matches!(c.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f'))
}

/// The string literal whose quote is at `at`: its value and the byte after it.
fn string(text: &str, at: usize, raw: bool) -> Result<(String, usize), PyError> {
    let b = text.as_bytes();
    let q = b[at];
    let triple = b[at..].starts_with(&[q, q, q]);
    let mut i = at + if triple { 3 } else { 1 };
    let mut s = String::new();
    loop {
        let Some(&d) = b.get(i) else {
            return Err(PyError::new(at, "the closing quote of the string (it is unterminated)"));
        };
        if d == q && (!triple || b[i..].starts_with(&[q, q, q])) {
            return Ok((s, i + if triple { 3 } else { 1 }));
        }
        if d == b'\n' && !triple {
            return Err(PyError::new(at, "the closing quote of the string before the end of the line (it is unterminated)"));
        }
        if d == b'\\' && i + 1 < b.len() {
            let e = b[i + 1];
            if raw {
                // A raw string keeps its backslashes, but one still escapes the quote after it.
                s.push('\\');
                let ch = text[i + 1..].chars().next().unwrap_or('?');
                s.push(ch);
                i += 1 + ch.len_utf8();
                continue;
            }
            match e {
                b'n' => s.push('\n'),
                b't' => s.push('\t'),
                b'\n' => {}
                _ => {
                    let ch = text[i + 1..].chars().next().unwrap_or('?');
                    s.push(ch);
                    i += ch.len_utf8();
                    continue;
                }
            }
            i += 2;
            continue;
        }
        let ch = text[i..].chars().next().unwrap_or('?');
        s.push(ch);
        i += ch.len_utf8().max(1);
    }
}

/// A number literal at `start`: an int when it fits `i64`, else a float.
fn number(text: &str, start: usize) -> Result<(Tok, usize), PyError> {
    let b = text.as_bytes();
    let mut i = start;
    let mut float = false;
    while i < b.len() {
        match b[i] {
            b'0'..=b'9' | b'_' => i += 1,
            b'.' => {
                float = true;
                i += 1
            }
            b'e' | b'E' => {
                float = true;
                i += 1;
                if matches!(b.get(i), Some(b'+' | b'-')) {
                    i += 1;
                }
            }
            _ => break,
        }
    }
    let lit = text[start..i].replace('_', "");
    let err = || PyError::new(start, "a number");
    let tok = if float {
        Tok::Float(lit.parse().map_err(|_| err())?)
    } else {
        match lit.parse::<i64>() {
            Ok(v) => Tok::Int(v),
            Err(_) => Tok::Float(lit.parse().map_err(|_| err())?),
        }
    };
    Ok((tok, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        tokenize(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn tokens_of_statements_torch_prints() {
        assert_eq!(
            kinds(r#"x1 += x2;  y: "f32[3]" = r'a\n' # c"#),
            vec![
                Tok::Name("x1".into()),
                Tok::Op("+="),
                Tok::Name("x2".into()),
                Tok::Op(";"),
                Tok::Name("y".into()),
                Tok::Op(":"),
                Tok::Str("f32[3]".into()),
                Tok::Op("="),
                Tok::Str("a\\n".into()),
                Tok::End
            ]
        );
        assert_eq!(kinds("'''a\nb''' 1_000 2.5e-3")[..3], [Tok::Str("a\nb".into()), Tok::Int(1000), Tok::Float(2.5e-3)]);
        assert_eq!(kinds("99999999999999999999")[0], Tok::Float(1e20));
        assert_eq!(open_brackets("f(a, [b, # ]\n").unwrap(), 2);
        assert_eq!(leading_group("{'a': '}'} File: x").unwrap(), ("{'a': '}'}", " File: x"));
        assert_eq!(leading_group("x {}"), None);
        assert_eq!(split_top("a, f(b, c), 'd,e'", ",").unwrap(), vec!["a", " f(b, c)", " 'd,e'"]);
    }

    #[test]
    fn broken_text_is_an_error_not_a_panic() {
        for bad in ["'open", "\"a\nb\"", "'''never", "$", "1e", "'\\", "é'", "r'\\"] {
            let _ = tokenize(bad);
        }
        assert!(tokenize("'open").is_err());
        assert!(tokenize("'''never").is_err());
        assert!(tokenize("a $ b").is_err());
        assert!(open_brackets("f('a)").is_err());
    }
}
