//! Level Zero FFI for xpu-workbench: the part of `ze_api.h` its backend calls, and a
//! [`Loader`] that opens `libze_loader` at run time instead of linking it.
//!
//! The declarations are written by hand from `ze_api.h` of the Level Zero loader 1.8
//! (Debian `libze-dev`), a subset small enough to read; `tests/layout.rs` compiles a C program
//! against the installed header and checks every size, alignment, field offset and constant.
//! Names are the header's so the C documentation applies unchanged.

#![allow(non_camel_case_types, non_snake_case)]

mod loader;
mod result;
mod types;

pub use loader::{LoadError, Loader, LOADER_NAMES};
pub use result::*;
pub use types::*;
