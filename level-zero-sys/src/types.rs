//! Handles, enumerations, flags and structures of `ze_api.h` (spec 1.4, loader 1.8) that the
//! workbench's backend uses. Field names are the header's, so `tests/layout.rs` can ask the C
//! compiler for the same `offsetof` by name.

use std::ffi::{c_char, c_void};

macro_rules! handles {
    ($($handle:ident => $opaque:ident,)*) => {$(
        /// Opaque object behind a handle; never constructed on the Rust side.
        #[repr(C)]
        pub struct $opaque {
            _private: [u8; 0],
        }
        pub type $handle = *mut $opaque;
    )*};
}

handles! {
    ze_driver_handle_t => _ze_driver_handle_t,
    ze_device_handle_t => _ze_device_handle_t,
    ze_context_handle_t => _ze_context_handle_t,
    ze_command_queue_handle_t => _ze_command_queue_handle_t,
    ze_command_list_handle_t => _ze_command_list_handle_t,
    ze_fence_handle_t => _ze_fence_handle_t,
    ze_event_pool_handle_t => _ze_event_pool_handle_t,
    ze_event_handle_t => _ze_event_handle_t,
    ze_module_handle_t => _ze_module_handle_t,
    ze_module_build_log_handle_t => _ze_module_build_log_handle_t,
    ze_kernel_handle_t => _ze_kernel_handle_t,
}

pub type ze_bool_t = u8;

// C enumerations are `int`-sized; the header forces 32 bits with `*_FORCE_UINT32 = 0x7fffffff`.
pub type ze_structure_type_t = u32;
pub type ze_api_version_t = u32;
pub type ze_device_type_t = u32;
pub type ze_command_queue_mode_t = u32;
pub type ze_command_queue_priority_t = u32;
pub type ze_module_format_t = u32;

// Flag sets are `uint32_t` bit fields.
pub type ze_init_flags_t = u32;
pub type ze_device_property_flags_t = u32;
pub type ze_device_memory_property_flags_t = u32;
pub type ze_command_queue_group_property_flags_t = u32;
pub type ze_context_flags_t = u32;
pub type ze_command_queue_flags_t = u32;
pub type ze_command_list_flags_t = u32;
pub type ze_kernel_flags_t = u32;
pub type ze_device_mem_alloc_flags_t = u32;
pub type ze_host_mem_alloc_flags_t = u32;
pub type ze_event_pool_flags_t = u32;
pub type ze_event_scope_flags_t = u32;

pub const ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES: ze_structure_type_t = 0x1;
pub const ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES: ze_structure_type_t = 0x3;
pub const ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES: ze_structure_type_t = 0x4;
pub const ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES: ze_structure_type_t = 0x6;
pub const ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES: ze_structure_type_t = 0x7;
pub const ZE_STRUCTURE_TYPE_CONTEXT_DESC: ze_structure_type_t = 0xd;
pub const ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC: ze_structure_type_t = 0xe;
pub const ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC: ze_structure_type_t = 0xf;
pub const ZE_STRUCTURE_TYPE_EVENT_POOL_DESC: ze_structure_type_t = 0x10;
pub const ZE_STRUCTURE_TYPE_EVENT_DESC: ze_structure_type_t = 0x11;
pub const ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC: ze_structure_type_t = 0x15;
pub const ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC: ze_structure_type_t = 0x16;
pub const ZE_STRUCTURE_TYPE_MODULE_DESC: ze_structure_type_t = 0x1b;
pub const ZE_STRUCTURE_TYPE_KERNEL_DESC: ze_structure_type_t = 0x1d;
/// `ze_device_properties_t` with spec-1.2 meaning: `timerResolution` in cycles per second
/// (with [`ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES`] it is nanoseconds per cycle).
pub const ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2: ze_structure_type_t = 0x0002_0006;

pub const fn ze_make_version(major: u32, minor: u32) -> ze_api_version_t {
    (major << 16) | (minor & 0xffff)
}
pub const ZE_API_VERSION_1_0: ze_api_version_t = ze_make_version(1, 0);
pub const ZE_API_VERSION_1_2: ze_api_version_t = ze_make_version(1, 2);

pub const ZE_INIT_FLAG_GPU_ONLY: ze_init_flags_t = 1 << 0;
pub const ZE_INIT_FLAG_VPU_ONLY: ze_init_flags_t = 1 << 1;

pub const ZE_DEVICE_TYPE_GPU: ze_device_type_t = 1;
pub const ZE_DEVICE_TYPE_CPU: ze_device_type_t = 2;
pub const ZE_DEVICE_TYPE_FPGA: ze_device_type_t = 3;
pub const ZE_DEVICE_TYPE_MCA: ze_device_type_t = 4;
pub const ZE_DEVICE_TYPE_VPU: ze_device_type_t = 5;

pub const ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE: ze_command_queue_group_property_flags_t =
    1 << 0;
pub const ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY: ze_command_queue_group_property_flags_t =
    1 << 1;

pub const ZE_COMMAND_QUEUE_MODE_DEFAULT: ze_command_queue_mode_t = 0;
pub const ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS: ze_command_queue_mode_t = 1;
pub const ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS: ze_command_queue_mode_t = 2;
pub const ZE_COMMAND_QUEUE_PRIORITY_NORMAL: ze_command_queue_priority_t = 0;

pub const ZE_MODULE_FORMAT_IL_SPIRV: ze_module_format_t = 0;
pub const ZE_MODULE_FORMAT_NATIVE: ze_module_format_t = 1;

pub const ZE_EVENT_POOL_FLAG_HOST_VISIBLE: ze_event_pool_flags_t = 1 << 0;
pub const ZE_EVENT_POOL_FLAG_IPC: ze_event_pool_flags_t = 1 << 1;
pub const ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP: ze_event_pool_flags_t = 1 << 2;

pub const ZE_EVENT_SCOPE_FLAG_SUBDEVICE: ze_event_scope_flags_t = 1 << 0;
pub const ZE_EVENT_SCOPE_FLAG_DEVICE: ze_event_scope_flags_t = 1 << 1;
pub const ZE_EVENT_SCOPE_FLAG_HOST: ze_event_scope_flags_t = 1 << 2;

pub const ZE_MAX_DRIVER_UUID_SIZE: usize = 16;
pub const ZE_MAX_DEVICE_UUID_SIZE: usize = 16;
pub const ZE_MAX_DEVICE_NAME: usize = 256;
pub const ZE_SUBGROUPSIZE_COUNT: usize = 8;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ze_driver_uuid_t {
    pub id: [u8; ZE_MAX_DRIVER_UUID_SIZE],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ze_device_uuid_t {
    pub id: [u8; ZE_MAX_DEVICE_UUID_SIZE],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_driver_properties_t {
    pub stype: ze_structure_type_t,
    pub pNext: *mut c_void,
    pub uuid: ze_driver_uuid_t,
    pub driverVersion: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_device_properties_t {
    pub stype: ze_structure_type_t,
    pub pNext: *mut c_void,
    pub r#type: ze_device_type_t,
    pub vendorId: u32,
    pub deviceId: u32,
    pub flags: ze_device_property_flags_t,
    pub subdeviceId: u32,
    pub coreClockRate: u32,
    pub maxMemAllocSize: u64,
    pub maxHardwareContexts: u32,
    pub maxCommandQueuePriority: u32,
    pub numThreadsPerEU: u32,
    pub physicalEUSimdWidth: u32,
    pub numEUsPerSubslice: u32,
    pub numSubslicesPerSlice: u32,
    pub numSlices: u32,
    /// Nanoseconds per cycle, or cycles per second when `stype` is
    /// [`ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2`].
    pub timerResolution: u64,
    pub timestampValidBits: u32,
    pub kernelTimestampValidBits: u32,
    pub uuid: ze_device_uuid_t,
    pub name: [c_char; ZE_MAX_DEVICE_NAME],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_device_compute_properties_t {
    pub stype: ze_structure_type_t,
    pub pNext: *mut c_void,
    pub maxTotalGroupSize: u32,
    pub maxGroupSizeX: u32,
    pub maxGroupSizeY: u32,
    pub maxGroupSizeZ: u32,
    pub maxGroupCountX: u32,
    pub maxGroupCountY: u32,
    pub maxGroupCountZ: u32,
    pub maxSharedLocalMemory: u32,
    pub numSubGroupSizes: u32,
    pub subGroupSizes: [u32; ZE_SUBGROUPSIZE_COUNT],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_device_memory_properties_t {
    pub stype: ze_structure_type_t,
    pub pNext: *mut c_void,
    pub flags: ze_device_memory_property_flags_t,
    pub maxClockRate: u32,
    pub maxBusWidth: u32,
    pub totalSize: u64,
    pub name: [c_char; ZE_MAX_DEVICE_NAME],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_command_queue_group_properties_t {
    pub stype: ze_structure_type_t,
    pub pNext: *mut c_void,
    pub flags: ze_command_queue_group_property_flags_t,
    pub maxMemoryFillPatternSize: usize,
    pub numQueues: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_context_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: ze_context_flags_t,
}

/// Also the descriptor of an immediate command list (`zeCommandListCreateImmediate`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_command_queue_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub ordinal: u32,
    pub index: u32,
    pub flags: ze_command_queue_flags_t,
    pub mode: ze_command_queue_mode_t,
    pub priority: ze_command_queue_priority_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_command_list_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub commandQueueGroupOrdinal: u32,
    pub flags: ze_command_list_flags_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_module_constants_t {
    pub numConstants: u32,
    pub pConstantIds: *const u32,
    pub pConstantValues: *mut *const c_void,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_module_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub format: ze_module_format_t,
    pub inputSize: usize,
    pub pInputModule: *const u8,
    pub pBuildFlags: *const c_char,
    pub pConstants: *const ze_module_constants_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_kernel_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: ze_kernel_flags_t,
    pub pKernelName: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ze_group_count_t {
    pub groupCountX: u32,
    pub groupCountY: u32,
    pub groupCountZ: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_device_mem_alloc_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: ze_device_mem_alloc_flags_t,
    pub ordinal: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_host_mem_alloc_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: ze_host_mem_alloc_flags_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_event_pool_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: ze_event_pool_flags_t,
    pub count: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_event_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub index: u32,
    pub signal: ze_event_scope_flags_t,
    pub wait: ze_event_scope_flags_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ze_kernel_timestamp_data_t {
    pub kernelStart: u64,
    pub kernelEnd: u64,
}

/// Ticks of the device's global timer and of the context's (counting only while it is active).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ze_kernel_timestamp_result_t {
    pub global: ze_kernel_timestamp_data_t,
    pub context: ze_kernel_timestamp_data_t,
}

/// Zeroed output structures with `stype` set, ready to pass to a `zeXxxGetProperties` call.
macro_rules! zeroed_with_stype {
    ($($ty:ident = $stype:ident,)*) => {$(
        impl $ty {
            pub fn new() -> Self {
                // SAFETY: plain C data: integers, arrays and nullable raw pointers; zero is valid.
                let mut value: Self = unsafe { std::mem::zeroed() };
                value.stype = $stype;
                value
            }
        }
        impl Default for $ty {
            fn default() -> Self {
                Self::new()
            }
        }
    )*};
}

zeroed_with_stype! {
    ze_driver_properties_t = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES,
    ze_device_properties_t = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES,
    ze_device_compute_properties_t = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES,
    ze_device_memory_properties_t = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES,
    ze_command_queue_group_properties_t = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES,
    ze_context_desc_t = ZE_STRUCTURE_TYPE_CONTEXT_DESC,
    ze_command_queue_desc_t = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
    ze_command_list_desc_t = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
    ze_module_desc_t = ZE_STRUCTURE_TYPE_MODULE_DESC,
    ze_kernel_desc_t = ZE_STRUCTURE_TYPE_KERNEL_DESC,
    ze_device_mem_alloc_desc_t = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
    ze_host_mem_alloc_desc_t = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC,
    ze_event_pool_desc_t = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
    ze_event_desc_t = ZE_STRUCTURE_TYPE_EVENT_DESC,
}
