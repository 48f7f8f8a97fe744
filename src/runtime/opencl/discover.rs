//! Finding the OpenCL devices that take SPIR-V, and saying why there is none.

use opencl3::device::{
    Device as ClDevice, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
};
use opencl3::error_codes::{self as codes, ClError};
use opencl3::types::cl_device_id;

use super::error::call_error;
use super::BACKEND;
use crate::runtime::{DeviceInfo, RuntimeError};

const INTEL_VENDOR_ID: u32 = 0x8086;

/// Every SPIR-V-taking OpenCL device, best first (Intel GPU, other GPU, CPU, anything else).
///
/// Errors with [`RuntimeError::Unavailable`] and the reason when there is none: no loader, no
/// platform, no device, or no device that takes SPIR-V IL.
pub fn list_devices() -> Result<Vec<DeviceInfo>, RuntimeError> {
    Ok(candidates()?.into_iter().map(|c| c.info).collect())
}

/// The device [`OpenClDevice::open`](super::OpenClDevice::open) would pick, without creating a context on it.
pub fn probe() -> Result<DeviceInfo, RuntimeError> {
    Ok(best_candidate()?.info)
}

pub(super) struct Candidate {
    pub(super) id: cl_device_id,
    rank: u8,
    pub(super) info: DeviceInfo,
}

fn unavailable(reason: impl Into<String>) -> RuntimeError {
    RuntimeError::Unavailable {
        backend: BACKEND,
        reason: reason.into(),
    }
}

fn candidates() -> Result<Vec<Candidate>, RuntimeError> {
    if let Err(err) = cl3::load_library() {
        return Err(unavailable(format!(
            "libOpenCL.so.1 not found ({err}); install an OpenCL ICD loader (Debian: ocl-icd-libopencl1)"
        )));
    }
    let platforms = match opencl3::platform::get_platforms() {
        Ok(platforms) => platforms,
        Err(ClError(codes::CL_PLATFORM_NOT_FOUND_KHR)) => Vec::new(),
        Err(ClError(code)) => return Err(call_error("clGetPlatformIDs", code)),
    };
    if platforms.is_empty() {
        let vendors =
            std::env::var("OCL_ICD_VENDORS").unwrap_or_else(|_| "/etc/OpenCL/vendors".into());
        return Err(unavailable(format!(
            "no platform: the OpenCL ICD loader found no driver in {vendors} (see docs/OPENCL.md)"
        )));
    }
    let mut found = Vec::new();
    let mut rejected = Vec::new();
    for platform in &platforms {
        let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(ClError(codes::CL_DEVICE_NOT_FOUND)) => continue,
            Err(ClError(code)) => return Err(call_error("clGetDeviceIDs", code)),
        };
        for id in ids {
            let device = ClDevice::new(id);
            // A device too old to answer CL_DEVICE_IL_VERSION (OpenCL < 2.1) takes no SPIR-V.
            let il = device.il_version().unwrap_or_default();
            let name = device.name().unwrap_or_default();
            if !il.contains("SPIR-V") {
                rejected.push(format!("{} (IL: {:?})", name.trim(), il.trim()));
                continue;
            }
            let gpu = device
                .dev_type()
                .map(|t| t & CL_DEVICE_TYPE_GPU != 0)
                .unwrap_or(false);
            let cpu = device
                .dev_type()
                .map(|t| t & CL_DEVICE_TYPE_CPU != 0)
                .unwrap_or(false);
            let intel = device
                .vendor_id()
                .map(|v| v == INTEL_VENDOR_ID)
                .unwrap_or(false);
            let rank = match (gpu, intel, cpu) {
                (true, true, _) => 0,
                (true, false, _) => 1,
                (false, _, true) => 2,
                _ => 3,
            };
            found.push(Candidate {
                id,
                rank,
                info: device_info(&device)?,
            });
        }
    }
    if found.is_empty() {
        return Err(unavailable(if rejected.is_empty() {
            "no OpenCL device on any platform".to_string()
        } else {
            format!("no device takes SPIR-V IL (found {})", rejected.join(", "))
        }));
    }
    found.sort_by_key(|c| c.rank);
    Ok(found)
}

pub(super) fn best_candidate() -> Result<Candidate, RuntimeError> {
    let mut all = candidates()?;
    Ok(all.remove(0))
}

fn device_info(device: &ClDevice) -> Result<DeviceInfo, RuntimeError> {
    let q = |code: ClError| call_error("clGetDeviceInfo", code.0);
    Ok(DeviceInfo {
        backend: BACKEND,
        name: device.name().map_err(q)?.trim().to_string(),
        vendor: device.vendor().map_err(q)?.trim().to_string(),
        driver_version: device.driver_version().map_err(q)?.trim().to_string(),
        compute_units: device.max_compute_units().map_err(q)?,
        max_work_group_size: device.max_work_group_size().map_err(q)?,
        global_mem_bytes: device.global_mem_size().map_err(q)?,
        // CL_PROFILING_COMMAND_* are in nanoseconds whatever the device's tick is.
        timer_resolution_ns: 1.0,
    })
}
