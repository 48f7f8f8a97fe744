//! OpenCL error codes as `RuntimeError`s that name the call, the code and its OpenCL name.

use opencl3::error_codes as codes;
use opencl3::types::cl_int;

use crate::runtime::RuntimeError;

/// The OpenCL name of an error code (`-5` → `CL_OUT_OF_RESOURCES`).
pub fn error_name(code: cl_int) -> &'static str {
    codes::error_text(code)
}

pub(super) fn call_error(call: &'static str, code: cl_int) -> RuntimeError {
    RuntimeError::Call {
        call,
        code: code.into(),
        name: error_name(code).to_string(),
    }
}

pub(super) fn kernel_error(kernel: &str, call: &'static str, code: cl_int) -> RuntimeError {
    RuntimeError::Kernel {
        kernel: kernel.to_string(),
        call,
        code: code.into(),
        name: error_name(code).to_string(),
    }
}

pub(super) fn is_out_of_memory(code: cl_int) -> bool {
    matches!(
        code,
        codes::CL_OUT_OF_RESOURCES
            | codes::CL_MEM_OBJECT_ALLOCATION_FAILURE
            | codes::CL_OUT_OF_HOST_MEMORY
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_map_to_their_names() {
        assert_eq!(error_name(-5), "CL_OUT_OF_RESOURCES");
        assert_eq!(error_name(-4), "CL_MEM_OBJECT_ALLOCATION_FAILURE");
        assert_eq!(error_name(-46), "CL_INVALID_KERNEL_NAME");
        assert_eq!(error_name(-11), "CL_BUILD_PROGRAM_FAILURE");
    }

    #[test]
    fn call_errors_name_the_call_and_the_code() {
        let err = call_error("clCreateBuffer", codes::CL_INVALID_BUFFER_SIZE);
        assert_eq!(
            err.to_string(),
            "clCreateBuffer failed with -61 (CL_INVALID_BUFFER_SIZE)"
        );
        let err = kernel_error(
            "add",
            "clEnqueueNDRangeKernel",
            codes::CL_INVALID_WORK_GROUP_SIZE,
        );
        assert_eq!(
            err.to_string(),
            "kernel `add`: clEnqueueNDRangeKernel failed with -54 (CL_INVALID_WORK_GROUP_SIZE)"
        );
    }

    #[test]
    fn only_resource_exhaustion_counts_as_out_of_memory() {
        assert!(is_out_of_memory(codes::CL_OUT_OF_RESOURCES));
        assert!(is_out_of_memory(codes::CL_MEM_OBJECT_ALLOCATION_FAILURE));
        assert!(is_out_of_memory(codes::CL_OUT_OF_HOST_MEMORY));
        assert!(!is_out_of_memory(codes::CL_INVALID_KERNEL_ARGS));
    }
}
