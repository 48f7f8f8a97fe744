//! From a `ze_result_t` to a [`RuntimeError`] that names the call and the code.

use crate::runtime::RuntimeError;
use level_zero_sys::{
    describe_result, result_name, ze_result_t, ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
    ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, ZE_RESULT_ERROR_UNINITIALIZED, ZE_RESULT_SUCCESS,
};

/// What one Level Zero call returned; turned into a `Result` by the caller, who knows whether a
/// failure concerns a kernel, an allocation of a known size, or the device as a whole.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub call: &'static str,
    pub code: ze_result_t,
}

/// Calls a [`level_zero_sys::Loader`] entry point and records its name with the result.
///
/// Every use passes handles this backend created and still owns, and pointers to locals that
/// outlive the call; that is the whole safety argument for the `unsafe` inside.
macro_rules! ze {
    ($loader:expr, $call:ident($($arg:expr),* $(,)?)) => {
        $crate::runtime::level_zero::check::Outcome {
            call: stringify!($call),
            code: unsafe { ($loader.$call)($($arg),*) },
        }
    };
}
pub(crate) use ze;

pub fn code_name(code: ze_result_t) -> String {
    result_name(code)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("unknown ze_result_t {code:#010x}"))
}

fn is_out_of_memory(code: ze_result_t) -> bool {
    code == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY || code == ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
}

impl Outcome {
    fn failed(&self) -> bool {
        self.code != ZE_RESULT_SUCCESS
    }

    /// `RuntimeError::Call`, or `OutOfMemory` (of unknown size) for the two OOM codes.
    pub fn ok(self) -> Result<(), RuntimeError> {
        self.ok_alloc(0)
    }

    /// As [`Outcome::ok`], for a call that allocates `bytes`.
    pub fn ok_alloc(self, bytes: usize) -> Result<(), RuntimeError> {
        if !self.failed() {
            return Ok(());
        }
        if is_out_of_memory(self.code) {
            return Err(RuntimeError::OutOfMemory {
                bytes,
                kernel: None,
            });
        }
        Err(RuntimeError::Call {
            call: self.call,
            code: self.code as i64,
            name: code_name(self.code),
        })
    }

    /// `RuntimeError::Kernel` naming `kernel`, or `OutOfMemory` for it.
    pub fn ok_kernel(self, kernel: &str) -> Result<(), RuntimeError> {
        if !self.failed() {
            return Ok(());
        }
        if is_out_of_memory(self.code) {
            return Err(RuntimeError::OutOfMemory {
                bytes: 0,
                kernel: Some(kernel.to_owned()),
            });
        }
        Err(RuntimeError::Kernel {
            kernel: kernel.to_owned(),
            call: self.call,
            code: self.code as i64,
            name: code_name(self.code),
        })
    }

    /// `RuntimeError::Unavailable`, for the calls that decide whether there is a device at all.
    pub fn ok_or_unavailable(self) -> Result<(), RuntimeError> {
        if !self.failed() {
            return Ok(());
        }
        let mut reason = format!("{} failed with {}", self.call, describe_result(self.code));
        if self.code == ZE_RESULT_ERROR_UNINITIALIZED {
            // The loader answers this when no driver it tried accepted `zeInit`.
            reason += ": the Level Zero loader found no usable GPU driver (is \
                       intel-level-zero-gpu or libze-intel-gpu1 installed, and \
                       /dev/dri/renderD* readable by this user?)";
        }
        Err(unavailable(reason))
    }
}

pub fn unavailable(reason: String) -> RuntimeError {
    RuntimeError::Unavailable {
        backend: super::BACKEND_NAME,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use level_zero_sys::{
        ZE_RESULT_ERROR_INVALID_KERNEL_NAME, ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
    };

    #[test]
    fn failures_name_call_and_code() {
        let outcome = Outcome {
            call: "zeModuleCreate",
            code: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
        };
        match outcome.ok().unwrap_err() {
            RuntimeError::Call { call, code, name } => {
                assert_eq!((call, code), ("zeModuleCreate", 0x7000_0004));
                assert_eq!(name, "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE");
            }
            other => panic!("{other:?}"),
        }
        let outcome = Outcome {
            call: "zeKernelCreate",
            code: ZE_RESULT_ERROR_INVALID_KERNEL_NAME,
        };
        let text = outcome.ok_kernel("add").unwrap_err().to_string();
        assert!(
            text.contains("`add`") && text.contains("ZE_RESULT_ERROR_INVALID_KERNEL_NAME"),
            "{text}"
        );
        assert_eq!(code_name(0x1234), "unknown ze_result_t 0x00001234");
        assert!(Outcome {
            call: "zeInit",
            code: ZE_RESULT_SUCCESS
        }
        .ok()
        .is_ok());
    }

    #[test]
    fn out_of_memory_codes_become_out_of_memory() {
        let device = Outcome {
            call: "zeMemAllocDevice",
            code: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
        };
        assert!(
            matches!(device.ok_alloc(1 << 40), Err(RuntimeError::OutOfMemory { bytes, kernel: None }) if bytes == 1 << 40)
        );
        let host = Outcome {
            call: "zeCommandListAppendLaunchKernel",
            code: ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY,
        };
        assert!(
            matches!(host.ok_kernel("mm"), Err(RuntimeError::OutOfMemory { kernel: Some(k), .. }) if k == "mm")
        );
    }

    #[test]
    fn uninitialized_says_what_zeinit_said_first() {
        let outcome = Outcome {
            call: "zeInit",
            code: ZE_RESULT_ERROR_UNINITIALIZED,
        };
        let text = outcome.ok_or_unavailable().unwrap_err().to_string();
        assert!(
            text.contains("zeInit failed with 0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED)"),
            "{text}"
        );
    }
}
