//! Profiling: CPU scopes recorded with puffin, kernel timestamps read from the device, both on
//! the host clock in one [`Trace`], exported as Chrome trace-event JSON (Perfetto) and as a
//! `.puffin` recording (`puffin_viewer`).
//!
//! Scopes (`puffin::profile_scope!`) sit at import, decomposition, lowering, code generation,
//! module build and each launch. They cost one atomic load while off, which is the default;
//! [`profile`] turns them on for its run (`xpu-workbench bench puffin` measures both costs).

pub mod against_inductor;
mod align;
pub mod attribute;
mod capture;
mod chrome;
pub mod compare;
pub mod host_time;
pub mod inductor_run;
pub mod kernel_time;
pub mod kineto;
pub mod torch_cpu;
mod puffin_file;
mod run;
mod trace;
mod tracing_device;

pub use align::{align, LaunchTimes};
pub use capture::CpuCapture;
pub use chrome::{chrome_json, DEVICE_PID, FRAMES_TID, HOST_PID};
pub use puffin_file::{frame_view, write_puffin};
pub use run::{launch_labels, profile_plan, PlanProfile};
pub use trace::{ClockAlignment, CpuSpan, DeviceSpan, Frame, HostSpan, LaunchInfo, Trace};
pub use tracing_device::TracingDevice;

use crate::runtime::{Device, RuntimeError};

/// Repetitions of a profiled run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProfileOptions {
    /// Untimed runs first (module builds, caches, first-touch page faults).
    pub warmup: u32,
    /// Timed runs.
    pub repeat: u32,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        Self { warmup: 1, repeat: 10 }
    }
}

/// Runs `workload` `warmup + repeat` times on `device` with puffin on, waiting for the device
/// after each run, and returns everything recorded. `workload` gets the repetition index and a
/// device that records its launches; it names them with [`TracingDevice::label_next`].
pub fn profile<E: From<RuntimeError>>(
    device: &mut dyn Device,
    options: ProfileOptions,
    workload: impl FnMut(&mut TracingDevice<'_>, u32) -> Result<(), E>,
) -> Result<Trace, E> {
    profile_captured(CpuCapture::start(), device, options, workload)
}

/// As [`profile`], with a capture started earlier, so the trace also holds what ran before the
/// repetitions (import, lowering, code generation).
pub fn profile_captured<E: From<RuntimeError>>(
    capture: CpuCapture,
    device: &mut dyn Device,
    options: ProfileOptions,
    mut workload: impl FnMut(&mut TracingDevice<'_>, u32) -> Result<(), E>,
) -> Result<Trace, E> {
    capture.new_frame();
    let info = device.info().clone();
    let mut traced = TracingDevice::new(device);
    let mut frames = Vec::new();
    for repetition in 0..options.warmup + options.repeat {
        let start_ns = puffin::now_ns();
        traced.set_repetition(repetition);
        {
            puffin::profile_scope!("repetition", repetition.to_string());
            workload(&mut traced, repetition)?;
            traced.finish()?;
        }
        frames.push(Frame { repetition, warmup: repetition < options.warmup, start_ns, end_ns: puffin::now_ns() });
        capture.new_frame();
    }
    let (kernels, alignment) = traced.device_spans()?;
    let cpu = capture.stop();
    Ok(Trace {
        backend: info.backend.to_string(),
        device: info.name.clone(),
        queues: vec![format!("{} {} queue 0", info.backend, info.name)],
        cpu,
        kernels,
        host: Vec::new(),
        frames,
        alignment,
    })
}

impl Trace {
    /// See [`chrome_json`].
    pub fn to_chrome_json(&self) -> serde_json::Value {
        chrome_json(self)
    }

    pub fn write_chrome(&self, path: &std::path::Path) -> std::io::Result<()> {
        let file = std::io::BufWriter::new(std::fs::File::create(path)?);
        serde_json::to_writer(file, &self.to_chrome_json()).map_err(std::io::Error::other)
    }

    pub fn write_puffin(&self, path: &std::path::Path) -> std::io::Result<()> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
        write_puffin(self, &mut file)?;
        std::io::Write::flush(&mut file)
    }
}
