//! The XPU backend: Intel GPUs through Level Zero, with `libze_loader` opened at run time
//! (`level-zero-sys`), so the workbench starts without it and [`probe`] says why.
//!
//! One device, one context and one in-order immediate command list (or, where the driver has
//! none, a command queue fed by one regular list). Each launch signals its own event from a
//! kernel-timestamp event pool; [`Device::timing`] converts those ticks with [`timestamp_ns`].

pub(crate) mod check;
mod discover;
mod launch;
mod submit;
mod timestamp;

pub use timestamp::{timestamp_ns, TimerResolution};

use crate::runtime::{
    BufferId, Device, DeviceInfo, EventId, KernelArg, KernelTiming, ProgramId, RuntimeError,
};
use check::ze;
use discover::{open_loader, Found};
use launch::{dims_u32, group_count};
use level_zero_sys::{self as sys, Loader};
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};
use submit::Submit;

/// `DeviceInfo::backend` of this backend.
pub const BACKEND_NAME: &str = "level_zero";
/// Events per kernel-timestamp pool; another pool is made when one is used up.
const EVENTS_PER_POOL: u32 = 256;
/// Device allocations are aligned for the widest vector load a kernel may issue.
const ALLOC_ALIGNMENT: usize = 64;
const SPIRV_MAGIC: u32 = 0x0723_0203;

/// The first Level Zero GPU, or the loader's / driver's reason why there is none.
pub fn probe() -> Result<DeviceInfo, RuntimeError> {
    Ok(Found::discover(&open_loader(None)?)?.info)
}

/// As [`probe`], with the loader at `path` instead of the linker's search path.
pub fn probe_library(path: &str) -> Result<DeviceInfo, RuntimeError> {
    Ok(Found::discover(&open_loader(Some(path))?)?.info)
}

#[derive(Clone, Copy)]
struct Buffer {
    ptr: *mut c_void,
    bytes: usize,
}

struct Kernel {
    handle: sys::ze_kernel_handle_t,
    /// The group size last set, so an unchanged one is not set again.
    group: Option<[u32; 3]>,
    /// The argument each parameter holds now (`None`: not set yet, or a set that failed), so
    /// an unchanged one is not set again.
    args: Vec<Option<KernelArg>>,
}

/// A Level Zero GPU. Every handle below is owned here and released by `Drop`.
pub struct LevelZero {
    ze: Loader,
    info: DeviceInfo,
    device: sys::ze_device_handle_t,
    context: sys::ze_context_handle_t,
    submit: Option<Submit>,
    resolution: TimerResolution,
    timestamp_bits: u32,
    /// Host-visible event that a barrier signals when everything before it is done.
    sync_pool: sys::ze_event_pool_handle_t,
    sync_event: sys::ze_event_handle_t,
    /// Host USM that writes and reads go through: copies from ordinary host memory are not
    /// guaranteed by the spec, and the caller's slice may not outlive an asynchronous copy.
    staging: Buffer,
    buffers: HashMap<BufferId, Buffer>,
    next_buffer: u32,
    programs: Vec<(String, sys::ze_module_handle_t)>,
    kernels: HashMap<(ProgramId, String), Kernel>,
    timestamp_pools: Vec<sys::ze_event_pool_handle_t>,
    events: Vec<sys::ze_event_handle_t>,
}

// SAFETY: Level Zero handles are pointers that are not tied to the thread that made them; the
// application must keep two threads from using one command list at once, and `LevelZero` is not
// `Sync` and appends only through `&mut self`.
unsafe impl Send for LevelZero {}

impl LevelZero {
    /// The first Level Zero GPU, with the loader found by the dynamic linker.
    pub fn open() -> Result<Self, RuntimeError> {
        Self::with_loader(open_loader(None)?)
    }

    /// The first Level Zero GPU, with the loader at `path`.
    pub fn open_library(path: &str) -> Result<Self, RuntimeError> {
        Self::with_loader(open_loader(Some(path))?)
    }

    fn with_loader(ze: Loader) -> Result<Self, RuntimeError> {
        let found = Found::discover(&ze)?;
        let mut context = null_mut();
        let desc = sys::ze_context_desc_t::new();
        ze!(ze, zeContextCreate(found.driver, &desc, &mut context)).ok()?;
        // From here on `Drop` releases whatever the remaining steps managed to create.
        let mut this = Self {
            ze,
            info: found.info,
            device: found.device,
            context,
            submit: None,
            resolution: found.resolution,
            timestamp_bits: found.timestamp_bits,
            sync_pool: null_mut(),
            sync_event: null_mut(),
            staging: Buffer {
                ptr: null_mut(),
                bytes: 0,
            },
            buffers: HashMap::new(),
            next_buffer: 0,
            programs: Vec::new(),
            kernels: HashMap::new(),
            timestamp_pools: Vec::new(),
            events: Vec::new(),
        };
        this.create_submit(found.compute_ordinal)?;
        this.sync_pool = this.create_pool(sys::ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1)?;
        this.sync_event = this.create_event(this.sync_pool, 0)?;
        Ok(this)
    }

    fn buffer(&self, id: BufferId) -> Result<&Buffer, RuntimeError> {
        self.buffers.get(&id).ok_or_else(|| RuntimeError::Invalid {
            what: "buffer",
            detail: format!("{id:?} is not allocated on this device"),
        })
    }

    /// Host staging memory of at least `bytes`; only called when no copy is in flight.
    fn staging(&mut self, bytes: usize) -> Result<*mut c_void, RuntimeError> {
        if self.staging.bytes < bytes {
            if !self.staging.ptr.is_null() {
                ze!(self.ze, zeMemFree(self.context, self.staging.ptr)).ok()?;
                self.staging = Buffer {
                    ptr: null_mut(),
                    bytes: 0,
                };
            }
            let size = bytes.next_power_of_two();
            let desc = sys::ze_host_mem_alloc_desc_t::new();
            let mut ptr = null_mut();
            ze!(
                self.ze,
                zeMemAllocHost(self.context, &desc, size, ALLOC_ALIGNMENT, &mut ptr)
            )
            .ok_alloc(size)?;
            self.staging = Buffer { ptr, bytes: size };
        }
        Ok(self.staging.ptr)
    }

    fn kernel(&mut self, program: ProgramId, name: &str) -> Result<&mut Kernel, RuntimeError> {
        let key = (program, name.to_owned());
        if !self.kernels.contains_key(&key) {
            let module = self
                .programs
                .get(program.0 as usize)
                .ok_or_else(|| RuntimeError::Invalid {
                    what: "program",
                    detail: format!("{program:?} was not built on this device"),
                })?
                .1;
            let c_name = CString::new(name).map_err(|_| RuntimeError::Invalid {
                what: "kernel name",
                detail: format!("{name:?} contains a NUL byte"),
            })?;
            let desc = sys::ze_kernel_desc_t {
                pKernelName: c_name.as_ptr(),
                ..sys::ze_kernel_desc_t::new()
            };
            let mut handle = null_mut();
            ze!(self.ze, zeKernelCreate(module, &desc, &mut handle)).ok_kernel(name)?;
            self.kernels.insert(
                key.clone(),
                Kernel {
                    handle,
                    group: None,
                    args: Vec::new(),
                },
            );
        }
        Ok(self.kernels.get_mut(&key).expect("inserted above"))
    }

    /// The build log of a `zeModuleCreate`, which also destroys it.
    fn take_build_log(
        &self,
        log: sys::ze_module_build_log_handle_t,
    ) -> Result<String, RuntimeError> {
        if log.is_null() {
            return Ok(String::new());
        }
        let mut size = 0;
        let text = ze!(
            self.ze,
            zeModuleBuildLogGetString(log, &mut size, null_mut())
        )
        .ok()
        .and_then(|()| {
            let mut bytes = vec![0u8; size];
            ze!(
                self.ze,
                zeModuleBuildLogGetString(log, &mut size, bytes.as_mut_ptr().cast())
            )
            .ok()?;
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            Ok(String::from_utf8_lossy(&bytes[..end]).trim_end().to_owned())
        });
        ze!(self.ze, zeModuleBuildLogDestroy(log)).ok()?;
        text
    }

    /// Global (device clock) and context (counting only while this context ran) times of a
    /// finished launch; [`Device::timing`] returns the global one, the clock all kernels share.
    pub fn kernel_timestamps(&mut self, event: EventId) -> Result<[KernelTiming; 2], RuntimeError> {
        let handle = *self
            .events
            .get(event.0 as usize)
            .ok_or_else(|| RuntimeError::Invalid {
                what: "event",
                detail: format!("{event:?} was not returned by a launch on this device"),
            })?;
        if matches!(&self.submit, Some(Submit { queue: Some(_), .. })) {
            // A regular list runs only when executed.
            self.sync()?;
        }
        ze!(self.ze, zeEventHostSynchronize(handle, u64::MAX)).ok()?;
        let mut result = sys::ze_kernel_timestamp_result_t::default();
        ze!(self.ze, zeEventQueryKernelTimestamp(handle, &mut result)).ok()?;
        Ok([
            timestamp_ns(result.global, self.resolution, self.timestamp_bits),
            timestamp_ns(result.context, self.resolution, self.timestamp_bits),
        ])
    }

    /// Sets the arguments and group size that differ from the kernel's last launch and
    /// appends the launch, signalling `event` (null: none) when it ends.
    fn append_launch(
        &mut self,
        program: ProgramId,
        kernel: &str,
        args: &[KernelArg],
        global: [usize; 3],
        local: Option<[usize; 3]>,
        event: sys::ze_event_handle_t,
    ) -> Result<(), RuntimeError> {
        puffin::profile_scope!("launch", kernel);
        let global = dims_u32("global size", global)?;
        let local = local.map(|local| dims_u32("work-group size", local)).transpose()?;
        let pointers: Vec<Option<*mut c_void>> = args
            .iter()
            .map(|arg| match arg {
                KernelArg::Buffer(id) => self.buffer(*id).map(|b| Some(b.ptr)),
                _ => Ok(None),
            })
            .collect::<Result<_, _>>()?;
        self.kernel(program, kernel)?;
        let ze = &self.ze;
        let cached = self.kernels.get_mut(&(program, kernel.to_owned())).expect("created above");
        let handle = cached.handle;
        cached.args.resize(args.len(), None);
        for (index, ((arg, pointer), last)) in args.iter().zip(&pointers).zip(cached.args.iter_mut()).enumerate() {
            // A kernel keeps its arguments between appends (the launch captures them), and a
            // forward of the same plan and sizes passes the same ones again.
            if last.as_ref() == Some(arg) {
                continue;
            }
            *last = None;
            let (size, value): (usize, *const c_void) = match (arg, pointer) {
                (KernelArg::Buffer(_), Some(ptr)) => (size_of_ptr(), (ptr as *const *mut c_void).cast()),
                (KernelArg::I32(v), _) => (4, (v as *const i32).cast()),
                (KernelArg::I64(v), _) => (8, (v as *const i64).cast()),
                (KernelArg::F32(v), _) => (4, (v as *const f32).cast()),
                // Local memory: the size to reserve, and no value.
                (KernelArg::Local(bytes), _) => (*bytes, null()),
                (KernelArg::Buffer(_), None) => unreachable!("every buffer was looked up above"),
            };
            ze!(ze, zeKernelSetArgumentValue(handle, index as u32, size, value)).ok_kernel(kernel)?;
            *last = Some(*arg);
        }
        let local = match local {
            Some(local) => local,
            None => {
                let mut group = [0u32; 3];
                let [x, y, z] = &mut group;
                ze!(ze, zeKernelSuggestGroupSize(handle, global[0], global[1], global[2], x, y, z)).ok_kernel(kernel)?;
                group
            }
        };
        if cached.group != Some(local) {
            ze!(ze, zeKernelSetGroupSize(handle, local[0], local[1], local[2])).ok_kernel(kernel)?;
            cached.group = Some(local);
        }
        let groups = group_count(global, local);
        let list = self.append()?;
        ze!(self.ze, zeCommandListAppendLaunchKernel(list, handle, &groups, event, 0, null_mut())).ok_kernel(kernel)
    }
}

impl Device for LevelZero {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&mut self, bytes: usize) -> Result<BufferId, RuntimeError> {
        // Zero-sized tensors still need a distinct, valid pointer to pass as an argument.
        let size = bytes.max(1);
        let desc = sys::ze_device_mem_alloc_desc_t::new();
        let mut ptr = null_mut();
        ze!(
            self.ze,
            zeMemAllocDevice(
                self.context,
                &desc,
                size,
                ALLOC_ALIGNMENT,
                self.device,
                &mut ptr
            )
        )
        .ok_alloc(bytes)?;
        let id = BufferId(self.next_buffer);
        self.next_buffer += 1;
        self.buffers.insert(id, Buffer { ptr, bytes });
        Ok(id)
    }

    fn free(&mut self, buffer: BufferId) -> Result<(), RuntimeError> {
        self.buffer(buffer)?;
        // A launch still in flight may use it.
        self.sync()?;
        let Buffer { ptr, .. } = self.buffers.remove(&buffer).expect("checked above");
        ze!(self.ze, zeMemFree(self.context, ptr)).ok()
    }

    fn write(&mut self, buffer: BufferId, data: &[u8]) -> Result<(), RuntimeError> {
        let Buffer { ptr, bytes } = *self.buffer(buffer)?;
        if data.len() > bytes {
            return Err(RuntimeError::Invalid {
                what: "write",
                detail: format!("{} bytes into {buffer:?} of {bytes} bytes", data.len()),
            });
        }
        if data.is_empty() {
            return Ok(());
        }
        let staging = self.staging(data.len())?;
        // SAFETY: `staging` holds at least `data.len()` bytes and no copy is using it.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), staging.cast::<u8>(), data.len()) };
        let list = self.append()?;
        ze!(
            self.ze,
            zeCommandListAppendMemoryCopy(
                list,
                ptr,
                staging,
                data.len(),
                null_mut(),
                0,
                null_mut()
            )
        )
        .ok()?;
        self.sync()
    }

    fn read(&mut self, buffer: BufferId, out: &mut [u8]) -> Result<(), RuntimeError> {
        let Buffer { ptr, bytes } = *self.buffer(buffer)?;
        if out.len() > bytes {
            return Err(RuntimeError::Invalid {
                what: "read",
                detail: format!("{} bytes from {buffer:?} of {bytes} bytes", out.len()),
            });
        }
        if out.is_empty() {
            return Ok(());
        }
        let staging = self.staging(out.len())?;
        let list = self.append()?;
        ze!(
            self.ze,
            zeCommandListAppendMemoryCopy(list, staging, ptr, out.len(), null_mut(), 0, null_mut())
        )
        .ok()?;
        self.sync()?;
        // SAFETY: the copy into `staging` has completed (`sync`), and it holds `out.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(staging.cast::<u8>(), out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    fn build(&mut self, name: &str, spirv: &[u32]) -> Result<ProgramId, RuntimeError> {
        puffin::profile_scope!("module build", name);
        if spirv.first() != Some(&SPIRV_MAGIC) {
            return Err(RuntimeError::Invalid {
                what: "SPIR-V module",
                detail: format!("`{name}` does not start with the SPIR-V magic number"),
            });
        }
        let desc = sys::ze_module_desc_t {
            format: sys::ZE_MODULE_FORMAT_IL_SPIRV,
            inputSize: std::mem::size_of_val(spirv),
            pInputModule: spirv.as_ptr().cast(),
            pBuildFlags: c"".as_ptr(),
            ..sys::ze_module_desc_t::new()
        };
        let mut module = null_mut();
        let mut log = null_mut();
        let created = ze!(
            self.ze,
            zeModuleCreate(self.context, self.device, &desc, &mut module, &mut log)
        );
        let log = self.take_build_log(log)?;
        if let Err(error) = created.ok() {
            let build_failed = matches!(
                created.code,
                sys::ZE_RESULT_ERROR_MODULE_BUILD_FAILURE
                    | sys::ZE_RESULT_ERROR_MODULE_LINK_FAILURE
            );
            if !log.is_empty() || build_failed {
                let log = if log.is_empty() {
                    format!("(the driver left no build log; {error})")
                } else {
                    log
                };
                return Err(RuntimeError::Build {
                    program: name.to_owned(),
                    log,
                });
            }
            return Err(error);
        }
        self.programs.push((name.to_owned(), module));
        Ok(ProgramId(self.programs.len() as u32 - 1))
    }

    fn launch(
        &mut self,
        program: ProgramId,
        kernel: &str,
        args: &[KernelArg],
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> Result<EventId, RuntimeError> {
        let (id, event) = self.next_event()?;
        self.append_launch(program, kernel, args, global, local, event)?;
        Ok(id)
    }

    fn launch_untimed(
        &mut self,
        program: ProgramId,
        kernel: &str,
        args: &[KernelArg],
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> Result<(), RuntimeError> {
        // No signal event: no kernel-timestamp event is made (and kept until `Drop`) per launch.
        self.append_launch(program, kernel, args, global, local, null_mut())
    }

    fn finish(&mut self) -> Result<(), RuntimeError> {
        self.sync()
    }

    /// Destroys the program's kernels, then its module; the slot stays (null) so other
    /// programs keep their ids.
    fn release(&mut self, program: ProgramId) -> Result<(), RuntimeError> {
        self.sync()?;
        let slot = self.programs.get_mut(program.0 as usize).filter(|(_, m)| !m.is_null()).ok_or_else(|| RuntimeError::Invalid {
            what: "program",
            detail: format!("{program:?} is not a live program of this device"),
        })?;
        let module = std::mem::replace(&mut slot.1, null_mut());
        let ze = &self.ze;
        let kernels: Vec<_> = self.kernels.keys().filter(|(p, _)| *p == program).cloned().collect();
        for key in kernels {
            if let Some(kernel) = self.kernels.remove(&key) {
                ze!(ze, zeKernelDestroy(kernel.handle)).ok()?;
            }
        }
        ze!(ze, zeModuleDestroy(module)).ok()
    }

    fn timing(&mut self, event: EventId) -> Result<KernelTiming, RuntimeError> {
        Ok(self.kernel_timestamps(event)?[0])
    }
}

const fn size_of_ptr() -> usize {
    std::mem::size_of::<*mut c_void>()
}

impl Drop for LevelZero {
    /// Waits for the device, then children before parents: the command list (which refers to
    /// kernels and events) first, kernels before their modules, events before their pools, and
    /// everything before the context. Failures are ignored: there is no one left to tell.
    fn drop(&mut self) {
        if self.submit.is_some() {
            let _ = self.sync();
        }
        let ze = &self.ze;
        if let Some(Submit { list, queue, .. }) = self.submit.take() {
            if !list.is_null() {
                let _ = ze!(ze, zeCommandListDestroy(list));
            }
            if let Some(queue) = queue {
                let _ = ze!(ze, zeCommandQueueDestroy(queue));
            }
        }
        for (_, kernel) in self.kernels.drain() {
            let _ = ze!(ze, zeKernelDestroy(kernel.handle));
        }
        for (_, module) in self.programs.drain(..).filter(|(_, m)| !m.is_null()) {
            let _ = ze!(ze, zeModuleDestroy(module));
        }
        for event in self
            .events
            .drain(..)
            .chain([self.sync_event])
            .filter(|e| !e.is_null())
        {
            let _ = ze!(ze, zeEventDestroy(event));
        }
        for pool in self
            .timestamp_pools
            .drain(..)
            .chain([self.sync_pool])
            .filter(|p| !p.is_null())
        {
            let _ = ze!(ze, zeEventPoolDestroy(pool));
        }
        for (_, buffer) in self.buffers.drain() {
            let _ = ze!(ze, zeMemFree(self.context, buffer.ptr));
        }
        if !self.staging.ptr.is_null() {
            let _ = ze!(ze, zeMemFree(self.context, self.staging.ptr));
        }
        let _ = ze!(ze, zeContextDestroy(self.context));
    }
}
