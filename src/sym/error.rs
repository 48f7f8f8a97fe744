use thiserror::Error;

/// Why a symbolic expression could not be parsed or evaluated.
///
/// Texts in parse errors are the input (cut to a readable length), so a message points at the
/// archive field or log line that held it; evaluation errors carry the printed sub-expression.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SymError {
    #[error("cannot parse `{text}` at byte {pos}: expected {expected}")]
    Parse { text: String, pos: usize, expected: String },
    #[error("unknown function `{name}` in `{text}`: expected a sympy or torch.utils._sympy function")]
    UnknownFunction { name: String, text: String },
    #[error("unknown source `{0}`: expected a guard source such as L['x'].size()[0] that names an input")]
    UnknownSource(String),
    #[error("symbol `{0}` has no value: expected a binding for it")]
    Unbound(String),
    #[error("`{0}` overflows 64-bit integer arithmetic")]
    Overflow(String),
    #[error("`{0}` divides by zero")]
    DivisionByZero(String),
    #[error("`{0}` is not an integer: expected an integer value")]
    NotInteger(String),
    #[error("`{0}` is not a boolean: expected a relation or True/False")]
    NotBool(String),
    #[error("expression nests deeper than {depth} levels")]
    TooDeep { depth: usize },
    #[error("`{func}` takes {expected} argument(s), got {got}")]
    Arity { func: &'static str, expected: &'static str, got: usize },
    #[error("`{0}` is infinite: infinity appears only in ranges, not in expressions")]
    Infinite(String),
}

/// Longest input text kept in an error: hostile inputs can be megabytes long.
const MAX_TEXT: usize = 200;

/// The input as an error shows it, cut at a character boundary.
pub(crate) fn excerpt(text: &str) -> String {
    if text.len() <= MAX_TEXT {
        return text.to_string();
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

pub(crate) fn parse_error(text: &str, pos: usize, expected: impl Into<String>) -> SymError {
    SymError::Parse { text: excerpt(text), pos, expected: expected.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_cut_at_char_boundaries() {
        let s = "é".repeat(300);
        let e = excerpt(&s);
        assert!(e.len() <= MAX_TEXT + "…".len());
        assert!(e.ends_with('…'));
    }

    #[test]
    fn messages_say_what_was_expected() {
        let e = parse_error("1 +", 3, "an operand");
        assert_eq!(e.to_string(), "cannot parse `1 +` at byte 3: expected an operand");
    }
}
