//! Which backends exist on this machine, and which one the app and the CLI use.
//!
//! One order for both: an XPU through Level Zero when there is one, then OpenCL, then the
//! reference interpreter, which is always there. [`probe_all`] lists every backend with the
//! probe's own reason when it is unavailable, so `devices` can say *why* there is no XPU.

use serde::Serialize;

use super::{level_zero, opencl, Device, DeviceInfo, RuntimeError};

/// A backend, in preference order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    LevelZero,
    OpenCl,
    Reference,
}

impl Backend {
    /// Preference order of [`pick_device`].
    pub const ALL: [Backend; 3] = [Backend::LevelZero, Backend::OpenCl, Backend::Reference];

    /// The name `devices --json` prints and `DeviceInfo::backend` holds.
    pub fn name(self) -> &'static str {
        match self {
            Backend::LevelZero => level_zero::BACKEND_NAME,
            Backend::OpenCl => "opencl",
            Backend::Reference => "reference",
        }
    }

    /// `--device` spellings: the backend names plus `xpu` (Level Zero) and `ref`; `auto` is `None`.
    pub fn parse(s: &str) -> Result<Option<Backend>, String> {
        match s {
            "auto" => Ok(None),
            "xpu" | "level_zero" | "level-zero" | "l0" => Ok(Some(Backend::LevelZero)),
            "opencl" | "cl" => Ok(Some(Backend::OpenCl)),
            "reference" | "ref" | "cpu" => Ok(Some(Backend::Reference)),
            other => Err(format!(
                "unknown --device `{other}`: expected auto, xpu (level_zero), opencl or reference"
            )),
        }
    }
}

/// One row of `devices`: a backend, and either its device or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceReport {
    pub backend: Backend,
    /// The device's name, or the backend's when there is no device.
    pub name: String,
    pub available: bool,
    /// The probe's own words when unavailable.
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub info: Option<DeviceInfo>,
}

/// The reference interpreter's description: the host CPU, timed by the host clock.
pub fn reference_info() -> DeviceInfo {
    DeviceInfo {
        backend: Backend::Reference.name(),
        name: "reference interpreter (host CPU)".into(),
        vendor: String::new(),
        driver_version: env!("CARGO_PKG_VERSION").into(),
        compute_units: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        max_work_group_size: 1,
        global_mem_bytes: 0,
        timer_resolution_ns: 1.0,
    }
}

fn report(backend: Backend, probed: Result<DeviceInfo, RuntimeError>) -> DeviceReport {
    match probed {
        Ok(info) => DeviceReport { backend, name: info.name.clone(), available: true, reason: None, info: Some(info) },
        Err(error) => DeviceReport {
            backend,
            name: backend.name().into(),
            available: false,
            // `Unavailable` already carries the backend's name; the reason alone reads better in a table.
            reason: Some(match error {
                RuntimeError::Unavailable { reason, .. } => reason,
                other => other.to_string(),
            }),
            info: None,
        },
    }
}

/// Every backend, in preference order, each probed without creating a context.
pub fn probe_all() -> Vec<DeviceReport> {
    Backend::ALL
        .into_iter()
        .map(|backend| {
            let probed = match backend {
                Backend::LevelZero => level_zero::probe(),
                Backend::OpenCl => opencl::probe(),
                Backend::Reference => Ok(reference_info()),
            };
            report(backend, probed)
        })
        .collect()
}

/// The backend to use: `wanted` if given (even if unavailable: the caller asked for it and
/// should hear why it cannot have it), else the first available one in [`Backend::ALL`] order.
pub fn pick_backend(reports: &[DeviceReport], wanted: Option<Backend>) -> Backend {
    wanted.unwrap_or_else(|| {
        reports.iter().find(|r| r.available).map_or(Backend::Reference, |r| r.backend)
    })
}

/// Opens the device of one backend.
pub fn open(backend: Backend) -> Result<Box<dyn Device>, RuntimeError> {
    match backend {
        Backend::LevelZero => Ok(Box::new(level_zero::LevelZero::open()?)),
        Backend::OpenCl => Ok(Box::new(opencl::OpenClDevice::open()?)),
        Backend::Reference => Err(RuntimeError::Unavailable {
            backend: Backend::Reference.name(),
            reason: "the reference device cannot run SPIR-V kernels; it runs plans directly".into(),
        }),
    }
}

/// The device the app and the CLI use: `wanted`, or XPU, then OpenCL (see [`pick_backend`]).
/// The reference backend has no kernel-running [`Device`]; asking for it here is an error
/// that says so.
pub fn pick_device(wanted: Option<Backend>) -> Result<Box<dyn Device>, RuntimeError> {
    let reports = probe_all();
    open(pick_backend(&reports, wanted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(backend: Backend, available: bool) -> DeviceReport {
        DeviceReport { backend, name: String::new(), available, reason: None, info: None }
    }

    #[test]
    fn prefers_xpu_then_opencl_then_reference() {
        let all = |l0, cl| vec![row(Backend::LevelZero, l0), row(Backend::OpenCl, cl), row(Backend::Reference, true)];
        assert_eq!(pick_backend(&all(true, true), None), Backend::LevelZero);
        assert_eq!(pick_backend(&all(false, true), None), Backend::OpenCl);
        assert_eq!(pick_backend(&all(false, false), None), Backend::Reference);
        assert_eq!(pick_backend(&all(true, true), Some(Backend::OpenCl)), Backend::OpenCl);
        assert_eq!(pick_backend(&all(false, true), Some(Backend::LevelZero)), Backend::LevelZero);
    }

    #[test]
    fn device_names_parse() {
        assert_eq!(Backend::parse("xpu"), Ok(Some(Backend::LevelZero)));
        assert_eq!(Backend::parse("auto"), Ok(None));
        assert!(Backend::parse("cuda").unwrap_err().contains("opencl"));
    }
}
