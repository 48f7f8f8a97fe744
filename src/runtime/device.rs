use serde::Serialize;

/// A device buffer owned by one [`Device`]; only valid on the device that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferId(pub u32);

/// A built SPIR-V module (an OpenCL program / a Level Zero module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProgramId(pub u32);

/// A launched kernel whose device timestamps can be read once it has finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventId(pub u32);

/// One kernel argument, in the order of the kernel's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KernelArg {
    Buffer(BufferId),
    I32(i32),
    I64(i64),
    F32(f32),
    /// Work-group local memory of this many bytes (a `__local` pointer parameter).
    Local(usize),
}

/// Device start and end of one kernel, in nanoseconds of the device clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct KernelTiming {
    pub start_ns: u64,
    pub end_ns: u64,
}

impl KernelTiming {
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// What `devices --json` and the device picker show about one device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceInfo {
    /// `"level_zero"`, `"opencl"` or `"reference"`.
    pub backend: &'static str,
    pub name: String,
    pub vendor: String,
    pub driver_version: String,
    pub compute_units: u32,
    pub max_work_group_size: usize,
    pub global_mem_bytes: u64,
    /// Nanoseconds per device timer tick (1.0 for OpenCL profiling counters).
    pub timer_resolution_ns: f64,
}

/// Why a device call failed. Every variant says which call, and which kernel when there is one.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("{backend} is not available: {reason}")]
    Unavailable { backend: &'static str, reason: String },
    #[error("{call} failed with {code} ({name})")]
    Call { call: &'static str, code: i64, name: String },
    #[error("building kernel module `{program}` failed:\n{log}")]
    Build { program: String, log: String },
    #[error("kernel `{kernel}`: {call} failed with {code} ({name})")]
    Kernel { kernel: String, call: &'static str, code: i64, name: String },
    #[error("out of device memory allocating {bytes} bytes{}", kernel.as_deref().map(|k| format!(" for kernel `{k}`")).unwrap_or_default())]
    OutOfMemory { bytes: usize, kernel: Option<String> },
    #[error("invalid {what}: {detail}")]
    Invalid { what: &'static str, detail: String },
}

/// A device that builds SPIR-V kernels, moves bytes and launches kernels with device timestamps.
///
/// Calls are ordered: a launch sees the writes issued before it, and a read sees every launch
/// issued before it (an in-order queue). `Send` so a worker thread can own the device.
pub trait Device: Send {
    fn info(&self) -> &DeviceInfo;
    fn alloc(&mut self, bytes: usize) -> Result<BufferId, RuntimeError>;
    fn free(&mut self, buffer: BufferId) -> Result<(), RuntimeError>;
    fn write(&mut self, buffer: BufferId, data: &[u8]) -> Result<(), RuntimeError>;
    fn read(&mut self, buffer: BufferId, out: &mut [u8]) -> Result<(), RuntimeError>;
    /// Builds a SPIR-V module; on failure the error carries the driver's build log.
    fn build(&mut self, name: &str, spirv: &[u32]) -> Result<ProgramId, RuntimeError>;
    /// Releases a built program and its kernels once everything enqueued has finished. A run
    /// that builds its own programs releases them: a long session (OpInfo's thousands of
    /// cases, sweeps that recompile) must not keep every driver binary it ever built.
    fn release(&mut self, program: ProgramId) -> Result<(), RuntimeError>;
    /// Enqueues `kernel` of `program` over `global` work-items (3-D, unused dimensions 1),
    /// in work-groups of `local` (or the driver's choice when `None`).
    fn launch(
        &mut self,
        program: ProgramId,
        kernel: &str,
        args: &[KernelArg],
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> Result<EventId, RuntimeError>;
    /// [`Device::launch`] without device timestamps: a forward whose caller wants only its wall
    /// time (`bench models`), as a user's forward runs. A backend that can skip the profiling
    /// event (and the later read of its timestamps) does; the default launches timed and drops
    /// the event.
    fn launch_untimed(
        &mut self,
        program: ProgramId,
        kernel: &str,
        args: &[KernelArg],
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> Result<(), RuntimeError> {
        self.launch(program, kernel, args, global, local).map(drop)
    }
    /// Waits until every enqueued command has finished.
    fn finish(&mut self) -> Result<(), RuntimeError>;
    /// Device timestamps of a finished launch.
    fn timing(&mut self, event: EventId) -> Result<KernelTiming, RuntimeError>;
}
