//! The whole Level Zero backend against `tests/fake_ze/fake_ze_loader.c`: a fake loader with one
//! fake GPU (host memory, one host-run kernel `add_one`), compiled at test time against the real
//! `ze_api.h`. It checks what no GPU is needed for: the calls, their arguments, the group
//! geometry, errors, timestamp conversion and that `Drop` releases every object. Skipped, saying
//! why, where the header or a C compiler is absent.

use std::path::{Path, PathBuf};
use std::process::Command;
use xpu_workbench::runtime::level_zero::LevelZero;
use xpu_workbench::runtime::{Device, KernelArg, RuntimeError};

const HEADER: &str = "/usr/include/level_zero/ze_api.h";
const SPIRV_MAGIC: u32 = 0x0723_0203;
/// A module the fake accepts (it only reads the first two words).
const GOOD_MODULE: [u32; 5] = [SPIRV_MAGIC, 0x0001_0000, 0, 1, 0];
/// A module the fake rejects with a build log.
const BAD_MODULE: [u32; 5] = [SPIRV_MAGIC, 0xdead, 0, 1, 0];

/// One built variant of the fake; its directory goes when the test ends (a loaded library may
/// be unlinked on Linux).
struct Fake(PathBuf);

impl std::ops::Deref for Fake {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Builds one variant of the fake as its own library, so tests running in parallel do not
/// share its counters.
fn build_fake(variant: &str, defines: &[&str]) -> Option<Fake> {
    if !Path::new(HEADER).exists() {
        println!("skipped: {HEADER} is absent (scripts/install_level_zero.sh installs libze-dev)");
        return None;
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_ze/fake_ze_loader.c");
    let dir = std::env::temp_dir().join(format!("xpu-fake-ze-{}-{variant}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let library = dir.join(format!("libfake_ze_{variant}.so"));
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let output = match Command::new(&compiler)
        .args([
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o",
        ])
        .arg(&library)
        .arg(&source)
        .args(defines.iter().map(|d| format!("-D{d}")))
        .output()
    {
        Ok(output) => output,
        Err(error) => {
            println!("skipped: C compiler `{compiler}` cannot run: {error}");
            return None;
        }
    };
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(Fake(library))
}

/// The fake's own counters, read through a second handle to the same library.
fn counter(library: &Path, name: &str) -> i32 {
    // SAFETY: the fake's initialisers do nothing, and `name` is an `int (void)` it exports.
    unsafe {
        let lib = libloading::Library::new(library).unwrap();
        let get: libloading::Symbol<unsafe extern "C" fn() -> i32> =
            lib.get(name.as_bytes()).unwrap();
        get()
    }
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// Upload, build, two launches (driver-chosen and explicit group size), read back, time both.
fn round_trip(library: &Path) {
    let mut device = LevelZero::open_library(library.to_str().unwrap()).unwrap();
    let info = device.info().clone();
    println!("{info:?}");
    assert_eq!(
        (info.backend, info.name.as_str(), info.vendor.as_str()),
        ("level_zero", "Fake Level Zero GPU", "Intel")
    );
    assert_eq!(
        (
            info.compute_units,
            info.max_work_group_size,
            info.global_mem_bytes
        ),
        (16, 512, 1 << 30)
    );
    assert_eq!(info.timer_resolution_ns, 80.0);

    let n = 1000usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let bytes: Vec<u8> = input.iter().flat_map(|x| x.to_ne_bytes()).collect();
    let buffer = device.alloc(bytes.len()).unwrap();
    device.write(buffer, &bytes).unwrap();
    let program = device.build("add_one.spv", &GOOD_MODULE).unwrap();
    let args = [KernelArg::Buffer(buffer), KernelArg::I32(n as i32)];
    // 1000 items in suggested groups of 64 need 16 groups; the kernel guards the 24 extra.
    let first = device
        .launch(program, "add_one", &args, [n, 1, 1], None)
        .unwrap();
    let second = device
        .launch(program, "add_one", &args, [n, 1, 1], Some([128, 1, 1]))
        .unwrap();
    // Timing before `finish` must submit what is pending rather than wait forever.
    let first_timing = device.timing(first).unwrap();
    device.finish().unwrap();

    let mut out = vec![0u8; bytes.len()];
    device.read(buffer, &mut out).unwrap();
    let expected: Vec<f32> = input.iter().map(|x| x + 2.0).collect();
    assert_eq!(floats(&out), expected);
    // Level Zero orders commands only across barriers; the trait promises an in-order queue.
    assert_eq!(
        counter(library, "fake_unordered_commands"),
        0,
        "a command was appended while earlier ones could still run, with no barrier between"
    );

    // The fake's kernels take 100 ticks of 80 ns; its 32-bit counter wraps during the first.
    let first = first_timing;
    let second = device.timing(second).unwrap();
    println!("first {first:?}, second {second:?}");
    assert_eq!((first.duration_ns(), second.duration_ns()), (8000, 8000));
    assert_eq!(first.start_ns, 0xFFFF_FFC0 * 80);

    device.free(buffer).unwrap();
    assert!(matches!(
        device.free(buffer),
        Err(RuntimeError::Invalid { .. })
    ));
    drop(device);
    assert_eq!(
        counter(library, "fake_live_objects"),
        0,
        "Drop left Level Zero objects behind"
    );
}

#[test]
fn immediate_list_round_trip() {
    if let Some(library) = build_fake("immediate", &[]) {
        round_trip(&library);
    }
}

#[test]
fn queue_fallback_and_pre_1_2_timer_round_trip() {
    if let Some(library) = build_fake("queued", &["FAKE_NO_IMMEDIATE", "FAKE_API_1_1"]) {
        round_trip(&library);
    }
}

#[test]
fn failures_are_typed_and_named() {
    let Some(library) = build_fake("errors", &[]) else {
        return;
    };
    let mut device = LevelZero::open_library(library.to_str().unwrap()).unwrap();

    match device.build("bad.spv", &BAD_MODULE) {
        Err(RuntimeError::Build { program, log }) => {
            assert_eq!(program, "bad.spv");
            assert!(log.contains("bad module"), "{log}");
        }
        other => panic!("expected a build error, got {other:?}"),
    }
    assert!(matches!(
        device.build("empty.spv", &[]),
        Err(RuntimeError::Invalid { .. })
    ));

    let program = device.build("add_one.spv", &GOOD_MODULE).unwrap();
    let buffer = device.alloc(16).unwrap();
    match device.launch(program, "missing", &[], [1, 1, 1], None) {
        Err(RuntimeError::Kernel {
            kernel, call, name, ..
        }) => {
            assert_eq!((kernel.as_str(), call), ("missing", "zeKernelCreate"));
            assert_eq!(name, "ZE_RESULT_ERROR_INVALID_KERNEL_NAME");
        }
        other => panic!("expected a kernel error, got {other:?}"),
    }
    let wrong = [KernelArg::Buffer(buffer), KernelArg::I64(4)];
    match device.launch(program, "add_one", &wrong, [4, 1, 1], None) {
        Err(RuntimeError::Kernel { call, name, .. }) => {
            assert_eq!(
                (call, name.as_str()),
                (
                    "zeKernelSetArgumentValue",
                    "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE"
                )
            );
        }
        other => panic!("expected an argument error, got {other:?}"),
    }
    let args = [KernelArg::Buffer(buffer), KernelArg::I32(4)];
    assert!(matches!(
        device.launch(program, "add_one", &args, [4, 0, 1], None),
        Err(RuntimeError::Invalid { .. })
    ));
    assert!(matches!(
        device.launch(program, "add_one", &args, [4, 1, 1], Some([1024, 1, 1])),
        Err(RuntimeError::Kernel {
            call: "zeKernelSetGroupSize",
            ..
        })
    ));
    match device.alloc(2 << 30) {
        Err(RuntimeError::OutOfMemory {
            bytes,
            kernel: None,
        }) => assert_eq!(bytes, 2 << 30),
        other => panic!("expected out of memory, got {other:?}"),
    }
    assert!(matches!(
        device.write(buffer, &[0; 17]),
        Err(RuntimeError::Invalid { .. })
    ));
    drop(device);
    assert_eq!(
        counter(&library, "fake_live_objects"),
        0,
        "Drop left Level Zero objects behind"
    );
}

/// Launches without timestamps (what `bench models` times a forward with) make no event, and a
/// kernel's arguments are set only where they differ from its last launch's: a changed buffer
/// or size is set again, and the kernel computes with the new one.
#[test]
fn untimed_launches_make_no_event_and_set_only_changed_arguments() {
    let Some(library) = build_fake("untimed", &[]) else {
        return;
    };
    let mut device = LevelZero::open_library(library.to_str().unwrap()).unwrap();
    let program = device.build("add_one.spv", &GOOD_MODULE).unwrap();
    let upload = |device: &mut LevelZero, values: &[f32]| {
        let bytes: Vec<u8> = values.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let buffer = device.alloc(bytes.len()).unwrap();
        device.write(buffer, &bytes).unwrap();
        buffer
    };
    let read = |device: &mut LevelZero, buffer, n: usize| {
        let mut out = vec![0u8; n * 4];
        device.read(buffer, &mut out).unwrap();
        floats(&out)
    };
    let a = upload(&mut device, &[0.0; 8]);
    let b = upload(&mut device, &[10.0; 8]);
    let (events, set) = (counter(&library, "fake_events_made"), counter(&library, "fake_arguments_set"));
    let on = |buffer, n: i32| [KernelArg::Buffer(buffer), KernelArg::I32(n)];
    device.launch_untimed(program, "add_one", &on(a, 8), [8, 1, 1], Some([8, 1, 1])).unwrap();
    // The same arguments again: nothing to set.
    device.launch_untimed(program, "add_one", &on(a, 8), [8, 1, 1], Some([8, 1, 1])).unwrap();
    assert_eq!(counter(&library, "fake_arguments_set") - set, 2, "the second launch set its unchanged arguments again");
    // Another buffer, and a smaller size (a symbol that changed between forwards): both set.
    device.launch_untimed(program, "add_one", &on(b, 4), [8, 1, 1], Some([8, 1, 1])).unwrap();
    assert_eq!(counter(&library, "fake_arguments_set") - set, 4);
    // Back to the first buffer with the new size: only the buffer changes.
    device.launch_untimed(program, "add_one", &on(a, 4), [8, 1, 1], Some([8, 1, 1])).unwrap();
    assert_eq!(counter(&library, "fake_arguments_set") - set, 5);
    device.finish().unwrap();
    assert_eq!(counter(&library, "fake_events_made"), events, "an untimed launch made an event");
    // `add_one` adds 1 to the first n elements (twice for the first 4 of `a` by the last launch).
    assert_eq!(read(&mut device, a, 8), [3.0, 3.0, 3.0, 3.0, 2.0, 2.0, 2.0, 2.0]);
    assert_eq!(read(&mut device, b, 8), [11.0, 11.0, 11.0, 11.0, 10.0, 10.0, 10.0, 10.0]);
    // A timed launch after untimed ones still makes its event and reads its timestamps.
    let timed = device.launch(program, "add_one", &on(b, 4), [8, 1, 1], Some([8, 1, 1])).unwrap();
    assert_eq!(device.timing(timed).unwrap().duration_ns(), 8000);
    assert_eq!(counter(&library, "fake_events_made"), events + 1);
    assert_eq!(counter(&library, "fake_unordered_commands"), 0);
    drop(device);
    assert_eq!(counter(&library, "fake_live_objects"), 0, "Drop left Level Zero objects behind");
}
