//! The one Python reader of trace import: a tokenizer ([`lex`]), expressions ([`expr`]),
//! statements ([`stmt`]) and logical lines ([`Source`]), for the subset torch prints — FX graph
//! code and Inductor's output code.
//!
//! Why our own and not a maintained parser (weighed for issue 29, November 2026):
//! - What torch prints is not always Python: FX heads a graph with `class <lambda>(torch.nn.Module):`,
//!   and logs are cut off mid-line. A whole-module parser (`rustpython-parser` 0.4, `ruff_python_parser`)
//!   rejects such a file as a whole; we need one error per statement, naming its line, and the rest
//!   of the graph read.
//! - `ruff_python_parser` on crates.io calls itself "an internal component crate of Ruff" (0.0.x
//!   versions, no stable API, the newest Rust required); `rustpython-parser` 0.4 carries an
//!   LALRPOP-generated grammar and a bigint crate, minutes of build on a 2-core machine for the
//!   dozen forms read here; `tree-sitter-python` needs a C build and gives a concrete syntax tree we
//!   would convert anyway.
//! - The parts that carry meaning (`"f32[s77, 64][64, 1]cuda:0"`, `Sym(...)`) are torch's own
//!   grammars inside string literals, which no Python parser reads for us.

pub mod expr;
pub mod lex;
pub mod stmt;

pub use expr::{parse, Py};
pub use lex::PyError;
pub use stmt::{parse_line, Stmt};

use lex::{Lexer, Tok};

/// A text as physical lines, read a logical line at a time as Python's tokenizer does: a line
/// goes on while a bracket is open or a triple-quoted string runs on.
pub struct Source<'a> {
    text: &'a str,
    /// The byte offset of each physical line.
    starts: Vec<usize>,
}

impl<'a> Source<'a> {
    pub fn new(text: &'a str) -> Source<'a> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1).filter(|&i| i < text.len()));
        if text.is_empty() {
            starts.clear();
        }
        Source { text, starts }
    }

    /// How many physical lines.
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Physical line `i` (0-based) without its line break; empty past the end.
    pub fn line(&self, i: usize) -> &'a str {
        let Some(&from) = self.starts.get(i) else { return "" };
        let to = self.starts.get(i + 1).map_or(self.text.len(), |&n| n - 1);
        let line = &self.text[from..to.max(from)];
        let line = line.strip_suffix('\n').unwrap_or(line);
        line.strip_suffix('\r').unwrap_or(line)
    }

    /// The text from physical line `i` to the end; empty past the end.
    pub fn rest(&self, i: usize) -> &'a str {
        self.starts.get(i).map_or("", |&from| &self.text[from..])
    }

    /// The logical line that starts at physical line `i`, and the index of the physical line
    /// after it. A bracket never closed takes the rest of the text (the statement then fails to
    /// parse, at its first line); text that does not tokenize ends at its own physical line.
    pub fn logical(&self, i: usize) -> (&'a str, usize) {
        let Some(&from) = self.starts.get(i) else { return ("", i + 1) };
        let rest = &self.text[from..];
        let mut depth = 0i32;
        let mut end = None;
        for t in Lexer::new(rest) {
            let t = match t {
                Ok(t) => t,
                Err(e) => {
                    // Text that does not tokenize on a later line belongs to the next statement;
                    // on this one, the statement's parse reports it, its text running to the error.
                    let after = rest.get(end.unwrap_or(0)..e.pos).unwrap_or("");
                    if depth > 0 || !after.contains('\n') {
                        end = Some((e.pos + 1).min(rest.len()));
                    }
                    break;
                }
            };
            if t.tok == Tok::End {
                if depth > 0 {
                    end = Some(rest.len());
                }
                break;
            }
            if depth <= 0 && rest[end.unwrap_or(0)..t.start].contains('\n') {
                break;
            }
            match t.tok {
                Tok::Op("(" | "[" | "{") => depth += 1,
                Tok::Op(")" | "]" | "}") => depth -= 1,
                _ => {}
            }
            end = Some(t.end);
        }
        let end = match end {
            Some(e) if e > 0 => e,
            _ => self.line(i).len(),
        };
        // The physical line holding the logical line's last byte, at least line `i`.
        let last = self.starts.partition_point(|&s| s < from + end).saturating_sub(1).max(i);
        let line_end = self.line(last).len() + self.starts[last];
        (&self.text[from..line_end.max(from)], last + 1)
    }
}

/// Leading whitespace of a physical line.
pub fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Whether `s` is a Python identifier.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_lines_follow_brackets_and_strings() {
        let text = "a = f(\n  x,  # (\n  y)\nb = '''\n)''' \n\nc = (\n";
        let src = Source::new(text);
        assert_eq!(src.line_count(), 7);
        assert_eq!(src.logical(0), ("a = f(\n  x,  # (\n  y)", 3));
        assert_eq!(src.logical(3), ("b = '''\n)''' ", 5));
        assert_eq!(src.logical(5), ("", 6));
        assert_eq!(src.logical(6), ("c = (", 7), "an unclosed bracket runs to the end of the text");
        assert_eq!(src.logical(99), ("", 100));
        assert_eq!(Source::new("x = 'open\ny = 1").logical(0), ("x = 'open", 1));
        assert_eq!(Source::new("x = 1\n$").logical(0), ("x = 1", 1), "a bad next line is no part of this one");
        assert_eq!(Source::new("x = 1\r\ny = 2").line(0), "x = 1");
    }
}
