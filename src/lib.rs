//! xpu-workbench: load PyTorch models, decompose them as Inductor does (lite and full),
//! explore dynamic dimensions, compile kernels to SPIR-V and profile them on an XPU.
//!
//! The module tree is the data flow of `DESIGN.md`: `import` → `ir` → `decomp` → `lower`
//! → `codegen` → `runtime` → `profile`, with `sym` for symbolic shapes throughout.

pub mod cli;
pub mod codegen;
pub mod coverage;
pub mod config;
pub mod decomp;
pub mod diff;
pub mod exec;
pub mod hierarchy;
pub mod import;
pub mod infer;
pub mod ir;
pub mod profile;
pub mod python;
pub mod report;
pub mod lower;
pub mod npy;
pub mod opinfo;
pub mod ops;
pub mod pipeline;
pub mod runtime;
pub mod shapes;
pub mod sweep;
pub mod sym;
pub mod ui;
