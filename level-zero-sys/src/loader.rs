//! `libze_loader` opened at run time, so a program using this crate starts (and can say why
//! there is no Level Zero) on machines that have no loader installed.

use crate::result::ze_result_t;
use crate::types::*;
use std::ffi::c_void;
use std::mem::ManuallyDrop;

/// Names tried in order by [`Loader::open`]: the versioned soname that runtime packages
/// (`libze1`) install, then the unversioned one that only development packages provide.
#[cfg(not(windows))]
pub const LOADER_NAMES: &[&str] = &["libze_loader.so.1", "libze_loader.so"];
#[cfg(windows)]
pub const LOADER_NAMES: &[&str] = &["ze_loader.dll"];

/// Why the loader could not be used; the text is the dynamic linker's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// No candidate could be opened: `(name, dlopen's message)` for each one tried.
    Library { tried: Vec<(String, String)> },
    /// The library opened but lacks an entry point (an older loader than the calls need).
    Symbol {
        library: String,
        symbol: &'static str,
        reason: String,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Library { tried } => {
                let reasons: Vec<&str> = tried.iter().map(|(_, reason)| reason.as_str()).collect();
                write!(f, "{}", reasons.join("; "))
            }
            LoadError::Symbol {
                library,
                symbol,
                reason,
            } => {
                write!(f, "{library} has no `{symbol}`: {reason}")
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// The linker's message (`libze_loader.so.1: cannot open shared object file: …`) lives in the
/// `source()` of libloading's error, whose own text is only "dlopen failed".
fn linker_message(error: &libloading::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        message = inner.to_string();
        source = inner.source();
    }
    message
}

macro_rules! loader {
    ($($name:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {
        /// Every entry point the workbench calls, resolved once when the library is opened.
        ///
        /// Fields are the C functions themselves; calling them is `unsafe` exactly as in C.
        #[allow(non_snake_case)]
        pub struct Loader {
            /// Never closed: the loader's drivers keep threads and `atexit` handlers that must
            /// not outlive their code, and `zeInit` state is process-wide anyway.
            _library: ManuallyDrop<libloading::Library>,
            /// The name that opened, e.g. `libze_loader.so.1`.
            pub library: String,
            $(pub $name: unsafe extern "C" fn($($arg: $ty),*) -> ze_result_t,)*
        }

        impl Loader {
            /// Every symbol [`Loader`] resolves, in declaration order.
            pub const SYMBOLS: &'static [&'static str] = &[$(stringify!($name),)*];

            fn resolve(library: libloading::Library, name: &str) -> Result<Self, LoadError> {
                $(
                    // SAFETY: the type is the prototype in ze_api.h of the symbol of that name.
                    let $name = unsafe {
                        library.get::<unsafe extern "C" fn($($ty),*) -> ze_result_t>(
                            concat!(stringify!($name), "\0").as_bytes(),
                        )
                    }
                    .map(|symbol| *symbol)
                    .map_err(|error| LoadError::Symbol {
                        library: name.to_owned(),
                        symbol: stringify!($name),
                        reason: linker_message(&error),
                    })?;
                )*
                Ok(Self { _library: ManuallyDrop::new(library), library: name.to_owned(), $($name,)* })
            }
        }
    };
}

loader! {
    zeInit(flags: ze_init_flags_t);
    zeDriverGet(pCount: *mut u32, phDrivers: *mut ze_driver_handle_t);
    zeDriverGetProperties(hDriver: ze_driver_handle_t, pDriverProperties: *mut ze_driver_properties_t);
    zeDriverGetApiVersion(hDriver: ze_driver_handle_t, version: *mut ze_api_version_t);
    zeDeviceGet(hDriver: ze_driver_handle_t, pCount: *mut u32, phDevices: *mut ze_device_handle_t);
    zeDeviceGetProperties(hDevice: ze_device_handle_t, pDeviceProperties: *mut ze_device_properties_t);
    zeDeviceGetComputeProperties(
        hDevice: ze_device_handle_t,
        pComputeProperties: *mut ze_device_compute_properties_t,
    );
    zeDeviceGetMemoryProperties(
        hDevice: ze_device_handle_t,
        pCount: *mut u32,
        pMemProperties: *mut ze_device_memory_properties_t,
    );
    zeDeviceGetCommandQueueGroupProperties(
        hDevice: ze_device_handle_t,
        pCount: *mut u32,
        pCommandQueueGroupProperties: *mut ze_command_queue_group_properties_t,
    );
    zeDeviceGetGlobalTimestamps(hDevice: ze_device_handle_t, hostTimestamp: *mut u64, deviceTimestamp: *mut u64);
    zeContextCreate(hDriver: ze_driver_handle_t, desc: *const ze_context_desc_t, phContext: *mut ze_context_handle_t);
    zeContextDestroy(hContext: ze_context_handle_t);
    zeCommandQueueCreate(
        hContext: ze_context_handle_t,
        hDevice: ze_device_handle_t,
        desc: *const ze_command_queue_desc_t,
        phCommandQueue: *mut ze_command_queue_handle_t,
    );
    zeCommandQueueDestroy(hCommandQueue: ze_command_queue_handle_t);
    zeCommandQueueExecuteCommandLists(
        hCommandQueue: ze_command_queue_handle_t,
        numCommandLists: u32,
        phCommandLists: *mut ze_command_list_handle_t,
        hFence: ze_fence_handle_t,
    );
    zeCommandQueueSynchronize(hCommandQueue: ze_command_queue_handle_t, timeout: u64);
    zeCommandListCreate(
        hContext: ze_context_handle_t,
        hDevice: ze_device_handle_t,
        desc: *const ze_command_list_desc_t,
        phCommandList: *mut ze_command_list_handle_t,
    );
    zeCommandListCreateImmediate(
        hContext: ze_context_handle_t,
        hDevice: ze_device_handle_t,
        altdesc: *const ze_command_queue_desc_t,
        phCommandList: *mut ze_command_list_handle_t,
    );
    zeCommandListDestroy(hCommandList: ze_command_list_handle_t);
    zeCommandListClose(hCommandList: ze_command_list_handle_t);
    zeCommandListReset(hCommandList: ze_command_list_handle_t);
    zeCommandListAppendLaunchKernel(
        hCommandList: ze_command_list_handle_t,
        hKernel: ze_kernel_handle_t,
        pLaunchFuncArgs: *const ze_group_count_t,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    );
    zeCommandListAppendMemoryCopy(
        hCommandList: ze_command_list_handle_t,
        dstptr: *mut c_void,
        srcptr: *const c_void,
        size: usize,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    );
    zeCommandListAppendBarrier(
        hCommandList: ze_command_list_handle_t,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    );
    zeModuleCreate(
        hContext: ze_context_handle_t,
        hDevice: ze_device_handle_t,
        desc: *const ze_module_desc_t,
        phModule: *mut ze_module_handle_t,
        phBuildLog: *mut ze_module_build_log_handle_t,
    );
    zeModuleDestroy(hModule: ze_module_handle_t);
    zeModuleBuildLogGetString(
        hModuleBuildLog: ze_module_build_log_handle_t,
        pSize: *mut usize,
        pBuildLog: *mut std::ffi::c_char,
    );
    zeModuleBuildLogDestroy(hModuleBuildLog: ze_module_build_log_handle_t);
    zeKernelCreate(hModule: ze_module_handle_t, desc: *const ze_kernel_desc_t, phKernel: *mut ze_kernel_handle_t);
    zeKernelDestroy(hKernel: ze_kernel_handle_t);
    zeKernelSetArgumentValue(hKernel: ze_kernel_handle_t, argIndex: u32, argSize: usize, pArgValue: *const c_void);
    zeKernelSetGroupSize(hKernel: ze_kernel_handle_t, groupSizeX: u32, groupSizeY: u32, groupSizeZ: u32);
    zeKernelSuggestGroupSize(
        hKernel: ze_kernel_handle_t,
        globalSizeX: u32,
        globalSizeY: u32,
        globalSizeZ: u32,
        groupSizeX: *mut u32,
        groupSizeY: *mut u32,
        groupSizeZ: *mut u32,
    );
    zeMemAllocDevice(
        hContext: ze_context_handle_t,
        device_desc: *const ze_device_mem_alloc_desc_t,
        size: usize,
        alignment: usize,
        hDevice: ze_device_handle_t,
        pptr: *mut *mut c_void,
    );
    zeMemAllocHost(
        hContext: ze_context_handle_t,
        host_desc: *const ze_host_mem_alloc_desc_t,
        size: usize,
        alignment: usize,
        pptr: *mut *mut c_void,
    );
    zeMemAllocShared(
        hContext: ze_context_handle_t,
        device_desc: *const ze_device_mem_alloc_desc_t,
        host_desc: *const ze_host_mem_alloc_desc_t,
        size: usize,
        alignment: usize,
        hDevice: ze_device_handle_t,
        pptr: *mut *mut c_void,
    );
    zeMemFree(hContext: ze_context_handle_t, ptr: *mut c_void);
    zeEventPoolCreate(
        hContext: ze_context_handle_t,
        desc: *const ze_event_pool_desc_t,
        numDevices: u32,
        phDevices: *mut ze_device_handle_t,
        phEventPool: *mut ze_event_pool_handle_t,
    );
    zeEventPoolDestroy(hEventPool: ze_event_pool_handle_t);
    zeEventCreate(hEventPool: ze_event_pool_handle_t, desc: *const ze_event_desc_t, phEvent: *mut ze_event_handle_t);
    zeEventDestroy(hEvent: ze_event_handle_t);
    zeEventHostSynchronize(hEvent: ze_event_handle_t, timeout: u64);
    zeEventHostReset(hEvent: ze_event_handle_t);
    zeEventQueryStatus(hEvent: ze_event_handle_t);
    zeEventQueryKernelTimestamp(hEvent: ze_event_handle_t, dstptr: *mut ze_kernel_timestamp_result_t);
}

impl Loader {
    /// Opens the first of [`LOADER_NAMES`] that the dynamic linker finds and resolves every symbol.
    pub fn open() -> Result<Self, LoadError> {
        let mut tried = Vec::new();
        for name in LOADER_NAMES {
            match Self::open_library(name) {
                Ok(library) => return Self::resolve(library, name),
                Err(reason) => tried.push((name.to_string(), reason)),
            }
        }
        Err(LoadError::Library { tried })
    }

    /// Opens one named library or path (a loader outside the linker's search path).
    pub fn open_path(path: &str) -> Result<Self, LoadError> {
        let library = Self::open_library(path).map_err(|reason| LoadError::Library {
            tried: vec![(path.to_owned(), reason)],
        })?;
        Self::resolve(library, path)
    }

    fn open_library(name: &str) -> Result<libloading::Library, String> {
        // SAFETY: the Level Zero loader's initialisers only set up its own state.
        unsafe { libloading::Library::new(name) }.map_err(|error| linker_message(&error))
    }
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loader")
            .field("library", &self.library)
            .finish_non_exhaustive()
    }
}
