//! `ze_result_t`: every code of `ze_api.h` with its name, so an error can say which one it was.

/// The return type of every Level Zero call (a C enum, 32 bits).
pub type ze_result_t = u32;

macro_rules! results {
    ($($name:ident = $value:expr,)*) => {
        $(pub const $name: ze_result_t = $value;)*

        /// Every result code of the header, as `(name, value)`, in header order.
        pub const ALL_RESULTS: &[(&str, ze_result_t)] = &[$((stringify!($name), $value),)*];

        /// The header's name for `code`, e.g. `"ZE_RESULT_ERROR_UNINITIALIZED"`.
        pub fn result_name(code: ze_result_t) -> Option<&'static str> {
            match code {
                $($value => Some(stringify!($name)),)*
                _ => None,
            }
        }
    };
}

results! {
    ZE_RESULT_SUCCESS = 0,
    ZE_RESULT_NOT_READY = 1,
    ZE_RESULT_ERROR_DEVICE_LOST = 0x7000_0001,
    ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY = 0x7000_0002,
    ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY = 0x7000_0003,
    ZE_RESULT_ERROR_MODULE_BUILD_FAILURE = 0x7000_0004,
    ZE_RESULT_ERROR_MODULE_LINK_FAILURE = 0x7000_0005,
    ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET = 0x7000_0006,
    ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE = 0x7000_0007,
    ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX = 0x7ff0_0001,
    ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE = 0x7ff0_0002,
    ZE_RESULT_EXP_ERROR_REMOTE_DEVICE = 0x7ff0_0003,
    ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS = 0x7001_0000,
    ZE_RESULT_ERROR_NOT_AVAILABLE = 0x7001_0001,
    ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE = 0x7002_0000,
    ZE_RESULT_WARNING_DROPPED_DATA = 0x7002_0001,
    ZE_RESULT_ERROR_UNINITIALIZED = 0x7800_0001,
    ZE_RESULT_ERROR_UNSUPPORTED_VERSION = 0x7800_0002,
    ZE_RESULT_ERROR_UNSUPPORTED_FEATURE = 0x7800_0003,
    ZE_RESULT_ERROR_INVALID_ARGUMENT = 0x7800_0004,
    ZE_RESULT_ERROR_INVALID_NULL_HANDLE = 0x7800_0005,
    ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE = 0x7800_0006,
    ZE_RESULT_ERROR_INVALID_NULL_POINTER = 0x7800_0007,
    ZE_RESULT_ERROR_INVALID_SIZE = 0x7800_0008,
    ZE_RESULT_ERROR_UNSUPPORTED_SIZE = 0x7800_0009,
    ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT = 0x7800_000a,
    ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT = 0x7800_000b,
    ZE_RESULT_ERROR_INVALID_ENUMERATION = 0x7800_000c,
    ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION = 0x7800_000d,
    ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT = 0x7800_000e,
    ZE_RESULT_ERROR_INVALID_NATIVE_BINARY = 0x7800_000f,
    ZE_RESULT_ERROR_INVALID_GLOBAL_NAME = 0x7800_0010,
    ZE_RESULT_ERROR_INVALID_KERNEL_NAME = 0x7800_0011,
    ZE_RESULT_ERROR_INVALID_FUNCTION_NAME = 0x7800_0012,
    ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION = 0x7800_0013,
    ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION = 0x7800_0014,
    ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX = 0x7800_0015,
    ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE = 0x7800_0016,
    ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE = 0x7800_0017,
    ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED = 0x7800_0018,
    ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE = 0x7800_0019,
    ZE_RESULT_ERROR_OVERLAPPING_REGIONS = 0x7800_001a,
    ZE_RESULT_WARNING_ACTION_REQUIRED = 0x7800_001b,
    ZE_RESULT_ERROR_UNKNOWN = 0x7fff_fffe,
}

/// `0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED)`: the code in hex, as the spec writes it, and its name.
pub fn describe_result(code: ze_result_t) -> String {
    match result_name(code) {
        Some(name) => format!("{code:#010x} ({name})"),
        None => format!("{code:#010x} (unknown ze_result_t)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_names_itself() {
        for &(name, value) in ALL_RESULTS {
            assert_eq!(result_name(value), Some(name));
        }
        let mut values: Vec<_> = ALL_RESULTS.iter().map(|r| r.1).collect();
        values.sort_unstable();
        values.dedup();
        assert_eq!(values.len(), ALL_RESULTS.len(), "two names share a value");
    }

    #[test]
    fn describes_known_and_unknown_codes() {
        assert_eq!(
            describe_result(0x7800_0001),
            "0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED)"
        );
        assert_eq!(
            describe_result(ZE_RESULT_SUCCESS),
            "0x00000000 (ZE_RESULT_SUCCESS)"
        );
        assert_eq!(describe_result(0x1234), "0x00001234 (unknown ze_result_t)");
    }
}
