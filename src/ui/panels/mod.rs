//! One file per panel. Each `show` reads the [`AppState`](super::AppState) and pushes
//! [`Command`](super::Command)s; none changes the state itself.

pub mod against_inductor;
pub mod compare;
pub mod diff;
pub mod dims;
pub mod graphs;
pub mod inspector;
pub mod kernels;
pub mod problems;
pub mod profile;
pub mod search;
pub mod status;
pub mod sweep;
pub mod timeline;
pub mod top;
