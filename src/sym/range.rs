use std::fmt;

use serde::Serialize;

/// The values a symbol may take, as an archive's `range_constraints` give them.
///
/// `i128` because torch writes bounds such as `int_oo - 1` and `sys.maxsize` that sit at the
/// edge of `i64`; `max: None` is unbounded above (`int_oo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Range {
    pub min: i128,
    pub max: Option<i128>,
}

impl Range {
    pub fn contains(&self, v: i64) -> bool {
        let v = v as i128;
        v >= self.min && self.max.is_none_or(|m| v <= m)
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.max {
            Some(m) => write!(f, "[{}, {}]", self.min, m),
            None => write!(f, "[{}, ∞)", self.min),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_inclusive_and_unbounded_above() {
        let r = Range { min: 1, max: Some(64) };
        assert!(r.contains(1) && r.contains(64));
        assert!(!r.contains(0) && !r.contains(65));
        assert_eq!(r.to_string(), "[1, 64]");
        let open = Range { min: 2, max: None };
        assert!(open.contains(i64::MAX) && !open.contains(1));
        assert_eq!(open.to_string(), "[2, ∞)");
        assert_eq!(serde_json::to_string(&open).unwrap(), r#"{"min":2,"max":null}"#);
    }
}
