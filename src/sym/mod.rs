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
