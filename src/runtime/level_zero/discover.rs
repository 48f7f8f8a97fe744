//! Finding the device: `zeInit`, the first GPU over all drivers, and what `devices` shows of it.
//! Every failure before a device is found is `Unavailable`, with the loader's or driver's words.

use super::check::{unavailable, ze};
use super::{TimerResolution, BACKEND_NAME};
use crate::runtime::{DeviceInfo, RuntimeError};
use level_zero_sys::{self as sys, Loader};
use std::ffi::CStr;
use std::ptr::null_mut;

pub fn open_loader(path: Option<&str>) -> Result<Loader, RuntimeError> {
    match path {
        Some(path) => Loader::open_path(path),
        None => Loader::open(),
    }
    .map_err(|error| unavailable(error.to_string()))
}

/// What discovery learns before anything is created.
pub struct Found {
    pub driver: sys::ze_driver_handle_t,
    pub device: sys::ze_device_handle_t,
    pub info: DeviceInfo,
    pub resolution: TimerResolution,
    pub timestamp_bits: u32,
    pub compute_ordinal: u32,
}

impl Found {
    /// `zeInit(GPU_ONLY)`, then the first device of type GPU over all drivers.
    pub fn discover(ze: &Loader) -> Result<Self, RuntimeError> {
        ze!(ze, zeInit(sys::ZE_INIT_FLAG_GPU_ONLY)).ok_or_unavailable()?;
        let mut count = 0;
        ze!(ze, zeDriverGet(&mut count, null_mut())).ok_or_unavailable()?;
        let mut drivers = vec![null_mut(); count as usize];
        ze!(ze, zeDriverGet(&mut count, drivers.as_mut_ptr())).ok_or_unavailable()?;
        drivers.truncate(count as usize);
        if drivers.is_empty() {
            return Err(unavailable("zeDriverGet found no Level Zero driver".into()));
        }
        for &driver in &drivers {
            let mut count = 0;
            ze!(ze, zeDeviceGet(driver, &mut count, null_mut())).ok_or_unavailable()?;
            let mut devices = vec![null_mut(); count as usize];
            ze!(ze, zeDeviceGet(driver, &mut count, devices.as_mut_ptr())).ok_or_unavailable()?;
            devices.truncate(count as usize);
            for device in devices {
                let properties = device_properties(ze, driver, device)?;
                if properties.r#type == sys::ZE_DEVICE_TYPE_GPU {
                    return Self::describe(ze, driver, device, &properties);
                }
            }
        }
        Err(unavailable(format!(
            "none of the {} Level Zero driver(s) has a GPU device",
            drivers.len()
        )))
    }

    fn describe(
        ze: &Loader,
        driver: sys::ze_driver_handle_t,
        device: sys::ze_device_handle_t,
        properties: &sys::ze_device_properties_t,
    ) -> Result<Self, RuntimeError> {
        let mut driver_properties = sys::ze_driver_properties_t::new();
        ze!(ze, zeDriverGetProperties(driver, &mut driver_properties)).ok()?;
        let mut api = 0;
        ze!(ze, zeDriverGetApiVersion(driver, &mut api)).ok()?;
        let mut compute = sys::ze_device_compute_properties_t::new();
        ze!(ze, zeDeviceGetComputeProperties(device, &mut compute)).ok()?;

        let mut count = 0;
        ze!(
            ze,
            zeDeviceGetMemoryProperties(device, &mut count, null_mut())
        )
        .ok()?;
        let mut memories = vec![sys::ze_device_memory_properties_t::new(); count as usize];
        ze!(
            ze,
            zeDeviceGetMemoryProperties(device, &mut count, memories.as_mut_ptr())
        )
        .ok()?;
        let global_mem_bytes = memories
            .iter()
            .take(count as usize)
            .map(|m| m.totalSize)
            .sum();

        let mut count = 0;
        ze!(
            ze,
            zeDeviceGetCommandQueueGroupProperties(device, &mut count, null_mut())
        )
        .ok()?;
        let mut groups = vec![sys::ze_command_queue_group_properties_t::new(); count as usize];
        ze!(
            ze,
            zeDeviceGetCommandQueueGroupProperties(device, &mut count, groups.as_mut_ptr())
        )
        .ok()?;
        let compute_ordinal = groups
            .iter()
            .take(count as usize)
            .position(|g| g.flags & sys::ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE != 0)
            .unwrap_or(0) as u32;

        let resolution =
            TimerResolution::from_properties(properties.stype, properties.timerResolution);
        if resolution.is_zero() {
            return Err(RuntimeError::Invalid {
                what: "device timer",
                detail: "zeDeviceGetProperties reported a timerResolution of 0".into(),
            });
        }
        // SAFETY: the driver writes a NUL-terminated name into the 256-byte array; the last
        // byte is forced to NUL in case it filled the array.
        let name = unsafe {
            let mut raw = properties.name;
            raw[sys::ZE_MAX_DEVICE_NAME - 1] = 0;
            CStr::from_ptr(raw.as_ptr()).to_string_lossy().into_owned()
        };
        let info = DeviceInfo {
            backend: BACKEND_NAME,
            name,
            vendor: match properties.vendorId {
                0x8086 => "Intel".to_owned(),
                other => format!("vendor {other:#06x}"),
            },
            driver_version: format!(
                "{} (Level Zero API {}.{})",
                driver_properties.driverVersion,
                api >> 16,
                api & 0xffff
            ),
            compute_units: properties.numSlices
                * properties.numSubslicesPerSlice
                * properties.numEUsPerSubslice,
            max_work_group_size: compute.maxTotalGroupSize as usize,
            global_mem_bytes,
            timer_resolution_ns: resolution.ns_per_tick(),
        };
        Ok(Self {
            driver,
            device,
            info,
            resolution,
            timestamp_bits: properties.kernelTimestampValidBits,
            compute_ordinal,
        })
    }
}

/// Device properties with `timerResolution` in cycles per second where the driver implements
/// spec 1.2 (more precise than the older integer nanoseconds per cycle), else the older form.
fn device_properties(
    ze: &Loader,
    driver: sys::ze_driver_handle_t,
    device: sys::ze_device_handle_t,
) -> Result<sys::ze_device_properties_t, RuntimeError> {
    let mut api = 0;
    ze!(ze, zeDriverGetApiVersion(driver, &mut api)).ok()?;
    let mut properties = sys::ze_device_properties_t::new();
    if api >= sys::ZE_API_VERSION_1_2 {
        properties.stype = sys::ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
        if ze!(ze, zeDeviceGetProperties(device, &mut properties))
            .ok()
            .is_ok()
        {
            return Ok(properties);
        }
        properties = sys::ze_device_properties_t::new();
    }
    ze!(ze, zeDeviceGetProperties(device, &mut properties)).ok()?;
    Ok(properties)
}
