//! The hand-written declarations against the real header: a C program built at test time prints
//! `sizeof`, `_Alignof`, `offsetof` and constant values from `ze_api.h`, and every line must
//! equal what Rust computes for the same name. Skipped, saying why, without header or compiler.

use level_zero_sys::*;
use std::collections::BTreeMap;
use std::mem::{align_of, offset_of, size_of};
use std::path::Path;
use std::process::Command;

const HEADER: &str = "/usr/include/level_zero/ze_api.h";

/// One checked quantity: the C expression that computes it and Rust's value.
struct Check {
    key: String,
    c_expr: String,
    rust: u64,
}

macro_rules! structs {
    ($($ty:ident { $($field:ident),* $(,)? })*) => {{
        let mut checks = Vec::new();
        $(
            let ty = stringify!($ty);
            checks.push(Check { key: format!("sizeof {ty}"), c_expr: format!("sizeof({ty})"), rust: size_of::<$ty>() as u64 });
            checks.push(Check { key: format!("alignof {ty}"), c_expr: format!("_Alignof({ty})"), rust: align_of::<$ty>() as u64 });
            $(
                let field = stringify!($field).trim_start_matches("r#");
                checks.push(Check {
                    key: format!("offsetof {ty}.{field}"),
                    c_expr: format!("offsetof({ty}, {field})"),
                    rust: offset_of!($ty, $field) as u64,
                });
            )*
        )*
        checks
    }};
}

macro_rules! constants {
    ($($name:ident),* $(,)?) => {
        vec![$(Check {
            key: format!("value {}", stringify!($name)),
            c_expr: format!("(unsigned long long)({})", stringify!($name)),
            rust: $name as u64,
        }),*]
    };
}

fn checks() -> Vec<Check> {
    let mut checks = structs! {
        ze_driver_uuid_t { id }
        ze_device_uuid_t { id }
        ze_driver_properties_t { stype, pNext, uuid, driverVersion }
        ze_device_properties_t {
            stype, pNext, r#type, vendorId, deviceId, flags, subdeviceId, coreClockRate,
            maxMemAllocSize, maxHardwareContexts, maxCommandQueuePriority, numThreadsPerEU,
            physicalEUSimdWidth, numEUsPerSubslice, numSubslicesPerSlice, numSlices,
            timerResolution, timestampValidBits, kernelTimestampValidBits, uuid, name,
        }
        ze_device_compute_properties_t {
            stype, pNext, maxTotalGroupSize, maxGroupSizeX, maxGroupSizeY, maxGroupSizeZ,
            maxGroupCountX, maxGroupCountY, maxGroupCountZ, maxSharedLocalMemory,
            numSubGroupSizes, subGroupSizes,
        }
        ze_device_memory_properties_t { stype, pNext, flags, maxClockRate, maxBusWidth, totalSize, name }
        ze_command_queue_group_properties_t { stype, pNext, flags, maxMemoryFillPatternSize, numQueues }
        ze_context_desc_t { stype, pNext, flags }
        ze_command_queue_desc_t { stype, pNext, ordinal, index, flags, mode, priority }
        ze_command_list_desc_t { stype, pNext, commandQueueGroupOrdinal, flags }
        ze_module_constants_t { numConstants, pConstantIds, pConstantValues }
        ze_module_desc_t { stype, pNext, format, inputSize, pInputModule, pBuildFlags, pConstants }
        ze_kernel_desc_t { stype, pNext, flags, pKernelName }
        ze_group_count_t { groupCountX, groupCountY, groupCountZ }
        ze_device_mem_alloc_desc_t { stype, pNext, flags, ordinal }
        ze_host_mem_alloc_desc_t { stype, pNext, flags }
        ze_event_pool_desc_t { stype, pNext, flags, count }
        ze_event_desc_t { stype, pNext, index, signal, wait }
        ze_kernel_timestamp_data_t { kernelStart, kernelEnd }
        ze_kernel_timestamp_result_t { global, context }
    };
    checks.extend(constants![
        ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES,
        ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES,
        ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2,
        ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES,
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES,
        ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES,
        ZE_STRUCTURE_TYPE_CONTEXT_DESC,
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
        ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
        ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
        ZE_STRUCTURE_TYPE_EVENT_DESC,
        ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
        ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC,
        ZE_STRUCTURE_TYPE_MODULE_DESC,
        ZE_STRUCTURE_TYPE_KERNEL_DESC,
        ZE_API_VERSION_1_0,
        ZE_API_VERSION_1_2,
        ZE_INIT_FLAG_GPU_ONLY,
        ZE_INIT_FLAG_VPU_ONLY,
        ZE_DEVICE_TYPE_GPU,
        ZE_DEVICE_TYPE_CPU,
        ZE_DEVICE_TYPE_FPGA,
        ZE_DEVICE_TYPE_MCA,
        ZE_DEVICE_TYPE_VPU,
        ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE,
        ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY,
        ZE_COMMAND_QUEUE_MODE_DEFAULT,
        ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
        ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
        ZE_MODULE_FORMAT_IL_SPIRV,
        ZE_MODULE_FORMAT_NATIVE,
        ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
        ZE_EVENT_POOL_FLAG_IPC,
        ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
        ZE_EVENT_SCOPE_FLAG_SUBDEVICE,
        ZE_EVENT_SCOPE_FLAG_DEVICE,
        ZE_EVENT_SCOPE_FLAG_HOST,
        ZE_MAX_DRIVER_UUID_SIZE,
        ZE_MAX_DEVICE_UUID_SIZE,
        ZE_MAX_DEVICE_NAME,
        ZE_SUBGROUPSIZE_COUNT,
    ]);
    // Handles are pointers to opaque structs; the header's are too.
    for handle in [
        "ze_driver_handle_t",
        "ze_event_handle_t",
        "ze_kernel_handle_t",
    ] {
        let key = format!("sizeof {handle}");
        checks.push(Check {
            key,
            c_expr: format!("sizeof({handle})"),
            rust: size_of::<ze_kernel_handle_t>() as u64,
        });
    }
    for &(name, value) in ALL_RESULTS {
        checks.push(Check {
            key: format!("value {name}"),
            c_expr: format!("(unsigned long long)({name})"),
            rust: value as u64,
        });
    }
    // Enumerations must be 32 bits wide for `u32` to stand in for them.
    for c_enum in [
        "ze_result_t",
        "ze_structure_type_t",
        "ze_device_type_t",
        "ze_module_format_t",
    ] {
        checks.push(Check {
            key: format!("sizeof {c_enum}"),
            c_expr: format!("sizeof({c_enum})"),
            rust: 4,
        });
    }
    checks
}

fn c_program(checks: &[Check]) -> String {
    let mut program = String::from("#include <stddef.h>\n#include <stdio.h>\n#include <level_zero/ze_api.h>\nint main(void) {\n");
    for check in checks {
        program += &format!(
            "    printf(\"%s=%llu\\n\", \"{}\", (unsigned long long)({}));\n",
            check.key, check.c_expr
        );
    }
    program + "    return 0;\n}\n"
}

/// Runs the C program, or says why it cannot (the caller prints that and skips).
fn header_values(checks: &[Check]) -> Result<BTreeMap<String, u64>, String> {
    if !Path::new(HEADER).exists() {
        return Err(format!(
            "{HEADER} is absent (install libze-dev: scripts/install_level_zero.sh)"
        ));
    }
    let dir = std::env::temp_dir().join(format!("level-zero-sys-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let source = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&source, c_program(checks))
        .map_err(|e| format!("writing {}: {e}", source.display()))?;
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let compiled = Command::new(&compiler)
        .args(["-std=c11", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .map_err(|e| format!("running C compiler `{compiler}`: {e}"))?;
    // A compiler that runs but rejects the program is a failure, not a skip: it means a name
    // or field in this crate does not exist in the header.
    assert!(
        compiled.status.success(),
        "{compiler} failed:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let run = Command::new(&exe)
        .output()
        .expect("running the compiled layout program");
    assert!(run.status.success());
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8(run.stdout).expect("layout program prints ASCII");
    Ok(text
        .lines()
        .map(|line| {
            let (key, value) = line.split_once('=').expect("key=value");
            (key.to_owned(), value.parse().expect("a number"))
        })
        .collect())
}

#[test]
fn declarations_match_ze_api_h() {
    let checks = checks();
    let values = match header_values(&checks) {
        Ok(values) => values,
        Err(reason) => {
            println!("skipped: {reason}");
            return;
        }
    };
    let mismatches: Vec<String> = checks
        .iter()
        .filter(|check| values[&check.key] != check.rust)
        .map(|check| {
            format!(
                "{}: C {} vs Rust {}",
                check.key, values[&check.key], check.rust
            )
        })
        .collect();
    assert!(
        mismatches.is_empty(),
        "layout differs from {HEADER}:\n{}",
        mismatches.join("\n")
    );
    println!(
        "{} sizes, offsets and constants agree with {HEADER}",
        checks.len()
    );
}
