use std::fmt;
use std::sync::Arc;

/// A symbolic expression over integer symbols (and the booleans built from them).
///
/// Children are behind `Arc` so graphs with thousands of tensors share sub-expressions cheaply.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Expr {
    Int(i64),
    /// Exact rational `p/q`, `q > 1`, in lowest terms (sympy `Rational`).
    Rational(i64, i64),
    /// A float literal, kept as its bit pattern so `Expr` stays `Eq + Hash`.
    Float(u64),
    Bool(bool),
    Symbol(Arc<str>),
    Add(Arc<[Expr]>),
    Mul(Arc<[Expr]>),
    Pow(Arc<(Expr, Expr)>),
    /// Any named function of sympy / torch.utils._sympy: FloorDiv, Mod, Max, Eq, And, ...
    Call(Func, Arc<[Expr]>),
}

/// The functions an expression may apply. Unknown names are a parse error, never a guess.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Func {
    FloorDiv,
    CleanDiv,
    Mod,
    PythonMod,
    ModularIndexing,
    Max,
    Min,
    Abs,
    CeilToInt,
    FloorToInt,
    TruncToInt,
    RoundToInt,
    IntTrueDiv,
    FloatTrueDiv,
    ToFloat,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Not,
    /// `OpaqueUnaryFn_sqrt` (and `_exp`, `_log`): torch's wrappers of `math` functions on float
    /// symbols, as GPT-2's attention scale `sqrt(head_dim)` leaves in a dynamic graph.
    Sqrt,
    Exp,
    Log,
}

impl Func {
    /// The sympy / torch name, as it appears in `srepr` text.
    pub fn name(self) -> &'static str {
        match self {
            Func::FloorDiv => "FloorDiv",
            Func::CleanDiv => "CleanDiv",
            Func::Mod => "Mod",
            Func::PythonMod => "PythonMod",
            Func::ModularIndexing => "ModularIndexing",
            Func::Max => "Max",
            Func::Min => "Min",
            Func::Abs => "Abs",
            Func::CeilToInt => "CeilToInt",
            Func::FloorToInt => "FloorToInt",
            Func::TruncToInt => "TruncToInt",
            Func::RoundToInt => "RoundToInt",
            Func::IntTrueDiv => "IntTrueDiv",
            Func::FloatTrueDiv => "FloatTrueDiv",
            Func::ToFloat => "ToFloat",
            Func::Eq => "Eq",
            Func::Ne => "Ne",
            Func::Lt => "Lt",
            Func::Le => "Le",
            Func::Gt => "Gt",
            Func::Ge => "Ge",
            Func::And => "And",
            Func::Or => "Or",
            Func::Not => "Not",
            Func::Sqrt => "OpaqueUnaryFn_sqrt",
            Func::Exp => "OpaqueUnaryFn_exp",
            Func::Log => "OpaqueUnaryFn_log",
        }
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
