//! What the parsers and the evaluator need to know about each [`Func`]: its names and arity.

use super::Func;

impl Func {
    /// The function a name denotes, in either `srepr` (`StrictLessThan`) or `str()` (`Lt`)
    /// spelling, plus sympy's own `floor`/`ceiling`, which torch turns into the `*ToInt` forms,
    /// and the Python builtins `min`/`max`/`abs` that export's `guards_code` writes
    /// (`min(8*L['x'].size()[1], 16*L['x'].size()[1]) == 8*L['x'].size()[1]`).
    pub fn from_name(name: &str) -> Option<Func> {
        Some(match name {
            "FloorDiv" => Func::FloorDiv,
            "CleanDiv" => Func::CleanDiv,
            "Mod" => Func::Mod,
            "PythonMod" => Func::PythonMod,
            "ModularIndexing" => Func::ModularIndexing,
            "Max" | "max" => Func::Max,
            "Min" | "min" => Func::Min,
            "Abs" | "abs" => Func::Abs,
            "CeilToInt" | "ceiling" => Func::CeilToInt,
            "FloorToInt" | "floor" => Func::FloorToInt,
            "TruncToInt" => Func::TruncToInt,
            "RoundToInt" => Func::RoundToInt,
            "IntTrueDiv" => Func::IntTrueDiv,
            "FloatTrueDiv" => Func::FloatTrueDiv,
            "ToFloat" => Func::ToFloat,
            "Eq" | "Equality" => Func::Eq,
            "Ne" | "Unequality" => Func::Ne,
            "Lt" | "StrictLessThan" => Func::Lt,
            "Le" | "LessThan" => Func::Le,
            "Gt" | "StrictGreaterThan" => Func::Gt,
            "Ge" | "GreaterThan" => Func::Ge,
            "And" => Func::And,
            "Or" => Func::Or,
            "Not" => Func::Not,
            "OpaqueUnaryFn_sqrt" | "sqrt" => Func::Sqrt,
            "OpaqueUnaryFn_exp" | "exp" => Func::Exp,
            "OpaqueUnaryFn_log" | "log" => Func::Log,
            _ => return None,
        })
    }

    /// Fewest and most arguments (`None`: any number).
    pub fn arity(self) -> (usize, Option<usize>) {
        match self {
            Func::Abs
            | Func::CeilToInt
            | Func::FloorToInt
            | Func::TruncToInt
            | Func::RoundToInt
            | Func::ToFloat
            | Func::Not
            | Func::Sqrt
            | Func::Exp
            | Func::Log => (1, Some(1)),
            Func::ModularIndexing => (3, Some(3)),
            // sympy's Max() of nothing is -oo, which no shape expression means.
            Func::Max | Func::Min => (1, None),
            Func::And | Func::Or => (0, None),
            _ => (2, Some(2)),
        }
    }

    pub(crate) fn arity_text(self) -> &'static str {
        match self.arity() {
            (1, Some(1)) => "1",
            (2, Some(2)) => "2",
            (3, Some(3)) => "3",
            (1, None) => "at least 1",
            _ => "any number of",
        }
    }

    pub(crate) fn accepts(self, n: usize) -> bool {
        let (min, max) = self.arity();
        n >= min && max.is_none_or(|m| n <= m)
    }

    /// Relations, whose value is a boolean.
    pub fn is_relation(self) -> bool {
        matches!(self, Func::Eq | Func::Ne | Func::Lt | Func::Le | Func::Gt | Func::Ge)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_name_the_same_function() {
        assert_eq!(Func::from_name("StrictLessThan"), Some(Func::Lt));
        assert_eq!(Func::from_name("Lt"), Some(Func::Lt));
        assert_eq!(Func::from_name("Sin"), None);
        for f in [Func::FloorDiv, Func::ModularIndexing, Func::Max, Func::Not, Func::Ge] {
            assert_eq!(Func::from_name(f.name()), Some(f));
        }
    }

    #[test]
    fn arity() {
        assert!(Func::FloorDiv.accepts(2) && !Func::FloorDiv.accepts(3));
        assert!(Func::Max.accepts(5) && !Func::Max.accepts(0));
        assert!(Func::And.accepts(0));
    }
}
