//! Devices that run compiled kernels: one file per backend behind one [`Device`] trait
//! (tinygrad's `runtime/ops_*.py` pattern). Every backend takes OpenCL-flavoured SPIR-V.

mod device;
pub mod opencl;
pub mod level_zero;
pub mod plan;
pub mod reference;

pub use device::{BufferId, Device, DeviceInfo, EventId, KernelArg, KernelTiming, ProgramId, RuntimeError};
