//! Code generation: kernel IR → SPIR-V modules (OpenCL flavour) that every runtime backend takes.

pub mod spirv;
