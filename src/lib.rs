//! xpu-workbench: load PyTorch models, decompose them as Inductor does (lite and full),
//! explore dynamic dimensions, compile kernels to SPIR-V and profile them on an XPU.
//!
//! The module tree is the data flow of `DESIGN.md`: `import` → `ir` → `decomp` → `lower`
//! → `codegen` → `runtime` → `profile`, with `sym` for symbolic shapes throughout.

pub mod runtime;
pub mod cli;
pub mod exec;
pub mod import;
pub mod ir;
pub mod npy;
pub mod shapes;
pub mod sym;
