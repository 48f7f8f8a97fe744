//! The op registry: what the workbench knows about each ATen op, in one place. Today it holds the
//! per-backend kernel tables and the traced expansions of torch-level calls ([`backend`]); the
//! schema, meta, decomposition, interpreter and lowering entries join it here.

pub mod backend;
pub mod cephes;

pub use backend::{aten_name, functional_name, table_for, Backend, BackendTable, OpFacts};
