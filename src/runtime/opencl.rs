//! The OpenCL backend: any OpenCL device whose `CL_DEVICE_IL_VERSION` lists SPIR-V runs the same
//! modules Level Zero takes. On machines without an Intel GPU that is Intel's OpenCL CPU runtime
//! (`scripts/install_opencl_cpu.sh`), which makes this the backend CI exercises.
//!
//! `libOpenCL.so.1` is opened at run time (opencl3's `dynamic` feature), never linked, so the
//! application starts where no OpenCL exists and [`probe`] says why there is no device.

mod discover;
mod error;

use std::collections::HashMap;
use std::ptr;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::Device as ClDevice;
use opencl3::error_codes::{self as codes, ClError};
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_device_id, CL_BLOCKING};

pub use discover::{list_devices, probe};
pub use error::error_name;

use super::{
    BufferId, Device, DeviceInfo, EventId, KernelArg, KernelTiming, ProgramId, RuntimeError,
};
use discover::best_candidate;
use error::{call_error, is_out_of_memory, kernel_error};

const BACKEND: &str = "opencl";

struct DeviceBuffer {
    mem: Buffer<u8>,
    /// The size asked for; the OpenCL object is at least one byte because zero-sized buffers
    /// are invalid in OpenCL while zero-element tensors are not in PyTorch.
    bytes: usize,
}

struct BuiltProgram {
    name: String,
    program: Program,
    /// One `cl_kernel` per entry point, made on first launch and reused: arguments are captured
    /// at enqueue time, so re-setting them for the next launch on an in-order queue is safe.
    kernels: HashMap<String, MadeKernel>,
}

struct MadeKernel {
    kernel: Kernel,
    /// The argument each parameter holds now (`None`: not set, or unknown after a failed set);
    /// its length is the parameter count, asked of the driver once rather than per launch.
    set: Vec<Option<KernelArg>>,
}

enum Launch {
    Pending(Event),
    /// Timestamps already read; the `cl_event` is released so long sweeps hold no driver objects.
    Timed(KernelTiming),
}

/// A context and an in-order profiling queue on one SPIR-V-taking OpenCL device.
pub struct OpenClDevice {
    info: DeviceInfo,
    max_alloc_bytes: u64,
    // Field order is drop order: driver objects go before the queue and context they live in.
    launches: HashMap<EventId, Launch>,
    programs: HashMap<ProgramId, BuiltProgram>,
    buffers: HashMap<BufferId, DeviceBuffer>,
    queue: CommandQueue,
    context: Context,
    device: ClDevice,
    next_id: u32,
}

impl OpenClDevice {
    /// Opens the best device (see [`list_devices`] for the order).
    pub fn open() -> Result<Self, RuntimeError> {
        let best = best_candidate()?;
        Self::open_id(best.id, best.info)
    }

    fn open_id(id: cl_device_id, info: DeviceInfo) -> Result<Self, RuntimeError> {
        let device = ClDevice::new(id);
        let max_alloc_bytes = device
            .max_mem_alloc_size()
            .map_err(|e| call_error("clGetDeviceInfo", e.0))?;
        let context =
            Context::from_device(&device).map_err(|e| call_error("clCreateContext", e.0))?;
        let queue =
            CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
                .map_err(|e| call_error("clCreateCommandQueueWithProperties", e.0))?;
        Ok(Self {
            info,
            max_alloc_bytes,
            launches: HashMap::new(),
            programs: HashMap::new(),
            buffers: HashMap::new(),
            queue,
            context,
            device,
            next_id: 0,
        })
    }

    fn fresh_id(&mut self) -> u32 {
        self.next_id = self.next_id.wrapping_add(1);
        self.next_id
    }

    fn buffer(&self, id: BufferId) -> Result<&DeviceBuffer, RuntimeError> {
        buffer_of(&self.buffers, id)
    }

    fn check_len(&self, id: BufferId, len: usize) -> Result<&DeviceBuffer, RuntimeError> {
        let buffer = self.buffer(id)?;
        if len > buffer.bytes {
            return Err(RuntimeError::Invalid {
                what: "transfer size",
                detail: format!("{len} bytes do not fit {id:?} of {} bytes", buffer.bytes),
            });
        }
        Ok(buffer)
    }

    /// Sets `args` on `kernel`'s object (only those that differ from its last launch's) and
    /// enqueues it; the event is the caller's to keep or drop.
    fn enqueue(
        &mut self,
        program: ProgramId,
        kernel: &str,
        args: &[KernelArg],
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> Result<Event, RuntimeError> {
        puffin::profile_scope!("launch", kernel);
        let Self { programs, buffers, queue, .. } = self;
        let built = programs.get_mut(&program).ok_or_else(|| RuntimeError::Invalid {
            what: "program",
            detail: format!("{program:?} is not a built program of this OpenCL device"),
        })?;
        let made = made_kernel(built, kernel)?;
        if made.set.len() != args.len() {
            return Err(RuntimeError::Invalid {
                what: "kernel arguments",
                detail: format!("kernel `{kernel}` takes {} arguments, {} were given", made.set.len(), args.len()),
            });
        }
        for (index, (arg, last)) in args.iter().zip(made.set.iter_mut()).enumerate() {
            // A buffer freed since the kernel object took it must not reach the driver, set
            // again or not.
            let mem = match *arg {
                KernelArg::Buffer(id) => buffer_of(buffers, id)?.mem.get(),
                _ => ptr::null_mut(),
            };
            // A kernel object keeps its arguments between enqueues (OpenCL 3.0 §5.9.2, each
            // enqueue captures them), and a forward of the same plan and sizes passes the same
            // buffers and sizes again: only what changed is set.
            if last.as_ref() == Some(arg) {
                continue;
            }
            // Forgotten first: if setting fails, the object's argument is unknown.
            *last = None;
            let index = index as u32;
            // SAFETY: each value has the size of the parameter the SPIR-V declares for it
            // (the driver checks sizes and answers CL_INVALID_ARG_SIZE otherwise).
            let set = unsafe {
                match *arg {
                    KernelArg::Buffer(_) => made.kernel.set_arg(index, &mem),
                    KernelArg::I32(v) => made.kernel.set_arg(index, &v),
                    KernelArg::I64(v) => made.kernel.set_arg(index, &v),
                    KernelArg::F32(v) => made.kernel.set_arg(index, &v),
                    KernelArg::Local(bytes) => made.kernel.set_arg_local_buffer(index, bytes),
                }
            };
            set.map_err(|ClError(code)| kernel_error(kernel, "clSetKernelArg", code))?;
            *last = Some(*arg);
        }
        let global = match local {
            Some(local) => {
                if local.contains(&0) {
                    return Err(RuntimeError::Invalid {
                        what: "work-group size",
                        detail: format!("{local:?} for kernel `{kernel}` has a zero dimension"),
                    });
                }
                // Whole work-groups, as Level Zero launches count them: kernels bounds-check their
                // index (Inductor's masks), and non-uniform work-groups are optional in OpenCL 3.0.
                [0, 1, 2].map(|d| global[d].div_ceil(local[d]) * local[d])
            }
            None => global,
        };
        let local_ptr = local.as_ref().map_or(ptr::null(), |l| l.as_ptr());
        // SAFETY: `global` and `local` are 3-element arrays alive for the call; every argument
        // was set above or by an earlier launch of this kernel object.
        unsafe { queue.enqueue_nd_range_kernel(made.kernel.get(), 3, ptr::null(), global.as_ptr(), local_ptr, &[]) }.map_err(
            |ClError(code)| match is_out_of_memory(code) {
                true => RuntimeError::OutOfMemory { bytes: launch_bytes(buffers, args), kernel: Some(kernel.to_string()) },
                false => kernel_error(kernel, "clEnqueueNDRangeKernel", code),
            },
        )
    }
}

/// The kernel object of entry point `kernel`, made on its first launch.
fn made_kernel<'p>(built: &'p mut BuiltProgram, kernel: &str) -> Result<&'p mut MadeKernel, RuntimeError> {
    if kernel.contains('\0') {
        return Err(RuntimeError::Invalid { what: "kernel name", detail: format!("{kernel:?} contains a NUL byte") });
    }
    if !built.kernels.contains_key(kernel) {
        let made = Kernel::create(&built.program, kernel).map_err(|ClError(code)| {
            let mut err = kernel_error(kernel, "clCreateKernel", code);
            if let RuntimeError::Kernel { name, .. } = &mut err {
                let known = built.program.get_kernel_names().unwrap_or_default();
                name.push_str(&format!("; module `{}` has kernels [{}]", built.name, known.replace(';', ", ")));
            }
            err
        })?;
        let params = made.num_args().map_err(|ClError(code)| kernel_error(kernel, "clGetKernelInfo", code))?;
        built.kernels.insert(kernel.to_string(), MadeKernel { kernel: made, set: vec![None; params as usize] });
    }
    built.kernels.get_mut(kernel).ok_or_else(|| RuntimeError::Invalid {
        what: "kernel",
        detail: format!("kernel `{kernel}` of module `{}` was not made", built.name),
    })
}

fn buffer_of(buffers: &HashMap<BufferId, DeviceBuffer>, id: BufferId) -> Result<&DeviceBuffer, RuntimeError> {
    buffers.get(&id).ok_or_else(|| RuntimeError::Invalid {
        what: "buffer",
        detail: format!("{id:?} is not a live buffer of this OpenCL device"),
    })
}

impl Drop for OpenClDevice {
    fn drop(&mut self) {
        // Nothing may still run on buffers that are about to be released; a failure here has
        // nowhere to go, and the driver reclaims everything with the context anyway.
        let _ = self.queue.finish();
    }
}

impl Device for OpenClDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&mut self, bytes: usize) -> Result<BufferId, RuntimeError> {
        if bytes as u64 > self.max_alloc_bytes {
            // The driver would say CL_INVALID_BUFFER_SIZE; what the user needs to hear is that
            // the tensor does not fit in one device allocation.
            return Err(RuntimeError::OutOfMemory {
                bytes,
                kernel: None,
            });
        }
        // SAFETY: no host pointer is passed, so the driver owns the storage.
        let mem = unsafe {
            Buffer::<u8>::create(
                &self.context,
                CL_MEM_READ_WRITE,
                bytes.max(1),
                ptr::null_mut(),
            )
        }
        .map_err(|ClError(code)| {
            if is_out_of_memory(code) {
                RuntimeError::OutOfMemory {
                    bytes,
                    kernel: None,
                }
            } else {
                call_error("clCreateBuffer", code)
            }
        })?;
        let id = BufferId(self.fresh_id());
        self.buffers.insert(id, DeviceBuffer { mem, bytes });
        Ok(id)
    }

    fn free(&mut self, buffer: BufferId) -> Result<(), RuntimeError> {
        // OpenCL keeps the memory alive until enqueued commands that use it have finished.
        self.buffers
            .remove(&buffer)
            .map(drop)
            .ok_or_else(|| RuntimeError::Invalid {
                what: "buffer",
                detail: format!(
                    "{buffer:?} is not a live buffer of this OpenCL device (freed twice?)"
                ),
            })
    }

    fn write(&mut self, buffer: BufferId, data: &[u8]) -> Result<(), RuntimeError> {
        if data.is_empty() {
            return Ok(());
        }
        self.check_len(buffer, data.len())?;
        let target = &mut self.buffers.get_mut(&buffer).expect("checked above").mem;
        // SAFETY: blocking write, so `data` outlives the copy; the size was checked above.
        unsafe {
            self.queue
                .enqueue_write_buffer(target, CL_BLOCKING, 0, data, &[])
        }
        .map(drop)
        .map_err(|ClError(code)| match is_out_of_memory(code) {
            true => RuntimeError::OutOfMemory {
                bytes: data.len(),
                kernel: None,
            },
            false => call_error("clEnqueueWriteBuffer", code),
        })
    }

    fn read(&mut self, buffer: BufferId, out: &mut [u8]) -> Result<(), RuntimeError> {
        if out.is_empty() {
            return Ok(());
        }
        let source = &self.check_len(buffer, out.len())?.mem;
        // SAFETY: blocking read into a live slice whose size was checked above.
        unsafe {
            self.queue
                .enqueue_read_buffer(source, CL_BLOCKING, 0, out, &[])
        }
        .map(drop)
        .map_err(|ClError(code)| call_error("clEnqueueReadBuffer", code))
    }

    fn build(&mut self, name: &str, spirv: &[u32]) -> Result<ProgramId, RuntimeError> {
        puffin::profile_scope!("module build", name);
        let bytes: Vec<u8> = spirv.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let mut program =
            Program::create_from_il(&self.context, &bytes).map_err(|ClError(code)| {
                // Drivers reject a module they cannot parse here, before any build log exists.
                RuntimeError::Build {
                    program: name.to_string(),
                    log: format!(
                        "clCreateProgramWithIL failed with {code} ({})",
                        error_name(code)
                    ),
                }
            })?;
        if let Err(ClError(code)) = program.build(&[self.device.id()], "") {
            let log = program.get_build_log(self.device.id()).unwrap_or_default();
            return Err(
                if code == codes::CL_BUILD_PROGRAM_FAILURE || !log.trim().is_empty() {
                    RuntimeError::Build {
                        program: name.to_string(),
                        log: format!("{}\n({})", log.trim(), error_name(code)),
                    }
                } else {
                    call_error("clBuildProgram", code)
                },
            );
        }
        let id = ProgramId(self.fresh_id());
        self.programs.insert(
            id,
            BuiltProgram {
                name: name.to_string(),
                program,
                kernels: HashMap::new(),
            },
        );
        Ok(id)
    }

    fn release(&mut self, program: ProgramId) -> Result<(), RuntimeError> {
        // Pending launches keep their kernel objects alive in the driver, but finishing first
        // keeps the release independent of that reference counting.
        self.finish()?;
        self.programs.remove(&program).map(drop).ok_or_else(|| RuntimeError::Invalid {
            what: "program",
            detail: format!("{program:?} is not a live program of this OpenCL device"),
        })
    }

    fn launch(
        &mut self,
        program: ProgramId,
        kernel: &str,
        args: &[KernelArg],
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> Result<EventId, RuntimeError> {
        let event = self.enqueue(program, kernel, args, global, local)?;
        let id = EventId(self.fresh_id());
        self.launches.insert(id, Launch::Pending(event));
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
        // opencl3 always asks for the event; releasing it at once keeps no driver object and
        // no entry in `launches` (scripts/opencl_launch_cost.c: on Intel's CPU runtime an event
        // released at once costs about what none does; reading its timestamps later is what costs).
        self.enqueue(program, kernel, args, global, local).map(drop)
    }

    fn finish(&mut self) -> Result<(), RuntimeError> {
        self.queue
            .finish()
            .map_err(|ClError(code)| call_error("clFinish", code))
    }

    fn timing(&mut self, event: EventId) -> Result<KernelTiming, RuntimeError> {
        let launch = self
            .launches
            .get_mut(&event)
            .ok_or_else(|| RuntimeError::Invalid {
                what: "event",
                detail: format!("{event:?} is not a launch of this OpenCL device"),
            })?;
        let timing = match launch {
            Launch::Timed(timing) => return Ok(*timing),
            Launch::Pending(cl_event) => {
                cl_event
                    .wait()
                    .map_err(|ClError(code)| call_error("clWaitForEvents", code))?;
                let read = |r: opencl3::Result<u64>| {
                    r.map_err(|ClError(code)| call_error("clGetEventProfilingInfo", code))
                };
                KernelTiming {
                    start_ns: read(cl_event.profiling_command_start())?,
                    end_ns: read(cl_event.profiling_command_end())?,
                }
            }
        };
        *launch = Launch::Timed(timing);
        Ok(timing)
    }
}

/// Bytes a launch needs resident: its buffers plus its work-group local memory. Reported when
/// the driver runs out of resources, so the user sees the size of what did not fit.
fn launch_bytes(buffers: &HashMap<BufferId, DeviceBuffer>, args: &[KernelArg]) -> usize {
    args.iter()
        .map(|arg| match arg {
            KernelArg::Buffer(id) => buffers.get(id).map_or(0, |b| b.bytes),
            KernelArg::Local(bytes) => *bytes,
            _ => 0,
        })
        .sum()
}

// `Buffer<u8>` is `Send`, and so are the other opencl3 objects held; OpenCL API calls are
// thread-safe (OpenCL 3.0 §A.2) except `clSetKernelArg` on one kernel, which `&mut self` serialises.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<OpenClDevice>();
};
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_bytes_counts_buffers_and_local_memory_only() {
        let buffers = HashMap::new();
        let args = [
            KernelArg::Local(256),
            KernelArg::I64(1 << 40),
            KernelArg::F32(1.0),
            KernelArg::Buffer(BufferId(9)),
        ];
        // BufferId(9) is unknown here, so only the local memory counts.
        assert_eq!(launch_bytes(&buffers, &args), 256);
    }
}
