//! The op registry: what the workbench knows about each ATen op, in one place — per op its
//! interpreter implementation, kernel lowering, meta function and decompositions
//! ([`registry`], entries in `table/`), and the per-torch-version facts of PyTorch itself:
//! which backends have a kernel for it, whether it is Core ATen, composite or a view
//! ([`backend`]), with what the user's own torch traced of calls the tables lack ([`traced`]), the ATen graphs torch traces composite ops into ([`composite_traces`]) and what each op does on XPU — native, expanded, CPU fallback or not implemented ([`readiness`]); and the generator random ops draw from in both backends ([`rng`], [`philox`], [`sample`]).

pub mod backend;
pub mod cephes;
pub mod composite_traces;
pub mod philox;
pub mod readiness;
pub mod registry;
pub mod resample;
pub mod rng;
pub mod sample;
mod table;
pub mod traced;

pub use backend::{aten_name, functional_name, table_for, Backend, BackendTable, OpFacts};
pub use registry::{all, complex_fn, get, host_fallback, lowering, node_on_host, op, run_fn, stages, OpDef, Random};
