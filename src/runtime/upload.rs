//! Host tensors into device buffers: a weight uploaded once ([`super::Resident`]), a forward's
//! inputs and host-step results into buffers of its pool, in the layout the kernel reads.

use super::plan::RunError;
use super::pool::BufferPool;
use super::{BufferId, Device, RuntimeError};
use crate::exec::Tensor;
use crate::lower::kernel::Layout;

pub(super) fn upload(dev: &mut dyn Device, t: &Tensor, kernel: &str) -> Result<BufferId, RunError> {
    // Buffers hold the tensor's own dtype; the kernel converts on load.
    let bytes = t.to_le_bytes();
    let b = dev.alloc(bytes.len()).map_err(|e| with_kernel(e, kernel))?;
    if let Err(e) = dev.write(b, &bytes) {
        let _ = dev.free(b);
        return Err(e.into());
    }
    Ok(b)
}

/// Tensor `t` as a buffer of `layout` stores it: itself, or a weight of two or more dims
/// transposed as the matrix `[R, C]` of its first dim by the rest (element `(r, c)` at
/// `c · R + r`; a convolution's `[Cout, Cin, kh, kw]` as `[Cout, Cin·kh·kw]`, `lower::tiny_map`).
pub(super) fn stored(t: &Tensor, layout: Layout) -> Result<std::borrow::Cow<'_, Tensor>, String> {
    match layout {
        Layout::Plain => Ok(std::borrow::Cow::Borrowed(t)),
        Layout::Transposed => {
            let (r, c) = match t.shape() {
                [r, rest @ ..] if !rest.is_empty() => (*r, rest.iter().product()),
                _ => return Err(format!("a transposed layout needs 2 or more dims, not shape {:?}", t.shape())),
            };
            Tensor::from_le_strided(t.dtype(), &[c, r], &[1, c], 0, &t.to_le_bytes()).map(std::borrow::Cow::Owned)
        }
    }
}

/// [`upload`] into a buffer of the run's pool.
pub(super) fn upload_pooled(dev: &mut dyn Device, pool: &mut BufferPool, t: &Tensor, kernel: &str) -> Result<BufferId, RunError> {
    let bytes = t.to_le_bytes();
    let b = pool.take(dev, bytes.len()).map_err(|e| with_kernel(e, kernel))?;
    match dev.write(b, &bytes) {
        Ok(()) => Ok(b),
        Err(e) => {
            let _ = pool.give_back(b);
            Err(e.into())
        }
    }
}

/// Names the kernel in an out-of-memory error raised while preparing its launch.
pub(super) fn with_kernel(e: RuntimeError, kernel: &str) -> RuntimeError {
    match e {
        RuntimeError::OutOfMemory { bytes, kernel: None } => RuntimeError::OutOfMemory { bytes, kernel: Some(kernel.to_string()) },
        e => e,
    }
}
