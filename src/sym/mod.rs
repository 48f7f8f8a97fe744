//! Symbolic integer expressions: the sizes, strides and guards of graphs with dynamic dimensions.
//!
//! Archives carry sympy `srepr` strings (`Mul(Integer(64), Symbol('s27', positive=True, integer=True))`),
//! FX graph dumps and guards carry infix text (`64*s27`, `L['x'].size()[0] == 2`). Both parse into one
//! [`Expr`] tree, which prints as compact infix, simplifies, and evaluates under [`Bindings`].

mod arith;
mod build;
mod error;
mod eval;
mod expr;
mod func;
mod infix;
mod lex;
mod multiple;
mod print;
mod range;
mod simplify;
mod srepr;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod oracle_tests;
#[cfg(test)]
mod tests;

pub use error::SymError;
pub use eval::{Bindings, Value};
pub use expr::{Expr, Func};
pub use infix::{parse_infix, parse_infix_with};
pub use range::Range;
pub use srepr::parse_srepr;

/// Whether `name` is one of torch's unbacked symbols: `u<N>` (an int) or `zuf<N>` (a float), as
/// `torch.utils._sympy.symbol` prefixes them. Their values come from tensor data at run time
/// (a plan's sync steps compute them); backed symbols (`s0`, ONNX dim names) come from the
/// inputs' shapes.
pub fn is_unbacked(name: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    name.strip_prefix("zuf").or_else(|| name.strip_prefix('u')).is_some_and(digits)
}
