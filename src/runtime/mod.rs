//! Devices that run compiled kernels: one file per backend behind one [`Device`] trait
//! (tinygrad's `runtime/ops_*.py` pattern). Every backend takes OpenCL-flavoured SPIR-V.

mod device;
pub mod opencl;
pub mod level_zero;
mod host;
mod launch_shape;
mod pick;
mod phases;
pub mod plan;
mod pool;
pub mod reference;
mod resident;
mod upload;

pub use device::{BufferId, Device, DeviceInfo, EventId, KernelArg, KernelTiming, ProgramId, RuntimeError};
pub use pick::{open, pick_backend, pick_device, probe_all, reference_info, Backend, DeviceReport};
