//! Which ops of a graph the workbench cannot run, known before anything runs: every target
//! without an interpreter implementation or a kernel lowering, each with every node that calls
//! it — so a model's gaps are reported once, completely, instead of one failure at a time.
//!
//! One place to ask; each half lives with the stage that reports it while running
//! (`exec::coverage`, `lower::coverage`), so neither stage imports this module.

pub use crate::exec::coverage::{describe, missing_in_interpreter, MissingOp};
pub use crate::lower::coverage::{host_fallbacks, missing_after_expansion, missing_in_kernels};
