//! The OpenCL backend on a real device (Intel's OpenCL CPU runtime in CI) with hand-written
//! SPIR-V from `tests/data/*.spvasm`, assembled and validated by SPIRV-Tools.
//!
//! Without an OpenCL runtime or SPIRV-Tools these tests print why and pass, unless
//! `XPU_WORKBENCH_REQUIRE_OPENCL` is set (CI sets it after `scripts/install_opencl_cpu.sh`),
//! in which case a missing runtime is a failure.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use xpu_workbench::runtime::opencl::{self, OpenClDevice};
use xpu_workbench::runtime::{Device, KernelArg, RuntimeError};

use common::skip_opencl as skip;

fn open_device() -> Option<OpenClDevice> {
    common::opencl_device()
}

/// Assembles `tests/data/<name>.spvasm` for OpenCL and validates it, as every generated module
/// will be.
fn assemble(name: &str) -> Option<Vec<u32>> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(format!("{name}.spvasm"));
    // Tests run in parallel threads and assemble the same module: one file each.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let unique = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let binary: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{name}-{}-{unique}.spv", std::process::id()));
    let run = |tool: &str, args: &[&std::ffi::OsStr]| -> Result<(), String> {
        let out = Command::new(tool)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run {tool}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{tool} failed on {}: {}",
                source.display(),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    let assembled = run(
        "spirv-as",
        &[
            "--target-env".as_ref(),
            "opencl1.2".as_ref(),
            source.as_os_str(),
            "-o".as_ref(),
            binary.as_os_str(),
        ],
    )
    .and_then(|()| {
        run(
            "spirv-val",
            &[
                "--target-env".as_ref(),
                "opencl1.2".as_ref(),
                binary.as_os_str(),
            ],
        )
    });
    if let Err(reason) = assembled {
        // A module that does not assemble or validate is a bug in the test data, not a skip.
        if reason.starts_with("cannot run") {
            return skip(reason);
        }
        panic!("{reason}");
    }
    let bytes = std::fs::read(&binary).expect("spirv-as wrote its output");
    let _ = std::fs::remove_file(&binary);
    assert_eq!(bytes.len() % 4, 0, "SPIR-V is a stream of 32-bit words");
    Some(
        bytes
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect(),
    )
}

fn floats_to_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn bytes_to_floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Runs `add` over `n` elements; `c` has 16 guard elements past `n` that must stay untouched.
fn run_vec_add(device: &mut OpenClDevice, n: usize, local: Option<usize>) -> Vec<f32> {
    let spirv = assemble("vec_add").expect("checked by the caller");
    let program = device.build("vec_add", &spirv).expect("vec_add builds");
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
    let guard = vec![-7.25f32; n + 16];
    let (ba, bb, bc) = (
        device.alloc(n * 4).unwrap(),
        device.alloc(n * 4).unwrap(),
        device.alloc((n + 16) * 4).unwrap(),
    );
    device.write(ba, &floats_to_bytes(&a)).unwrap();
    device.write(bb, &floats_to_bytes(&b)).unwrap();
    device.write(bc, &floats_to_bytes(&guard)).unwrap();
    let args = [
        KernelArg::Buffer(ba),
        KernelArg::Buffer(bb),
        KernelArg::Buffer(bc),
        KernelArg::I64(n as i64),
    ];
    device
        .launch(program, "add", &args, [n, 1, 1], local.map(|l| [l, 1, 1]))
        .unwrap();
    device.finish().unwrap();
    let mut out = vec![0u8; (n + 16) * 4];
    device.read(bc, &mut out).unwrap();
    let c = bytes_to_floats(&out);
    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(&c[..n], &expected[..], "n = {n}, local = {local:?}");
    assert!(
        c[n..].iter().all(|&v| v == -7.25),
        "the bounds check kept the guard elements (n = {n}, local = {local:?})"
    );
    for buffer in [ba, bb, bc] {
        device.free(buffer).unwrap();
    }
    c
}

#[test]
fn vec_add_matches_the_cpu_for_sizes_that_are_not_whole_work_groups() {
    let Some(mut device) = open_device() else {
        return;
    };
    if assemble("vec_add").is_none() {
        return;
    }
    eprintln!("device: {:?}", device.info());
    for (n, local) in [
        (1000, Some(64)),
        (1001, None),
        (1, Some(128)),
        (4099, Some(256)),
    ] {
        run_vec_add(&mut device, n, local);
    }
}

/// A released program is gone: launching it or releasing it again is an error naming it, and
/// building the same module again works (a session that runs thousands of plans, like the
/// OpInfo test, releases each one's programs instead of holding every driver binary).
#[test]
fn a_released_program_cannot_be_launched_or_released_twice() {
    let Some(mut device) = open_device() else {
        return;
    };
    let Some(spirv) = assemble("vec_add") else {
        return;
    };
    let program = device.build("vec_add", &spirv).expect("vec_add builds");
    device.release(program).expect("release");
    let again = device.release(program).unwrap_err().to_string();
    assert!(again.contains("not a live program"), "{again}");
    let buffer = device.alloc(16).unwrap();
    let args = [KernelArg::Buffer(buffer), KernelArg::Buffer(buffer), KernelArg::Buffer(buffer), KernelArg::I64(4)];
    assert!(device.launch(program, "add", &args, [4, 1, 1], None).is_err());
    device.free(buffer).unwrap();
    run_vec_add(&mut device, 100, None);
}

#[test]
fn launches_carry_ordered_non_zero_device_timestamps() {
    let Some(mut device) = open_device() else {
        return;
    };
    let Some(spirv) = assemble("vec_add") else {
        return;
    };
    let program = device.build("vec_add", &spirv).unwrap();
    let n = 1 << 20;
    let buffers: Vec<_> = (0..3).map(|_| device.alloc(n * 4).unwrap()).collect();
    for &buffer in &buffers {
        device.write(buffer, &vec![0u8; n * 4]).unwrap();
    }
    let args = [
        KernelArg::Buffer(buffers[0]),
        KernelArg::Buffer(buffers[1]),
        KernelArg::Buffer(buffers[2]),
        KernelArg::I64(n as i64),
    ];
    let first = device
        .launch(program, "add", &args, [n, 1, 1], Some([64, 1, 1]))
        .unwrap();
    let second = device
        .launch(program, "add", &args, [n, 1, 1], None)
        .unwrap();
    device.finish().unwrap();
    let (t1, t2) = (
        device.timing(first).unwrap(),
        device.timing(second).unwrap(),
    );
    eprintln!(
        "first {t1:?} ({} ns), second {t2:?} ({} ns)",
        t1.duration_ns(),
        t2.duration_ns()
    );
    assert!(t1.start_ns > 0 && t1.end_ns > t1.start_ns, "{t1:?}");
    assert!(t2.start_ns > 0 && t2.end_ns > t2.start_ns, "{t2:?}");
    assert!(
        t2.start_ns >= t1.end_ns,
        "an in-order queue runs the second launch after the first: {t1:?} {t2:?}"
    );
    assert_eq!(
        device.timing(first).unwrap(),
        t1,
        "timestamps can be read again"
    );
}

#[test]
fn garbage_is_rejected_with_an_error_that_names_the_call() {
    let Some(mut device) = open_device() else {
        return;
    };
    for (what, words) in [
        ("not SPIR-V at all", vec![0xdead_beef_u32, 1, 2, 3, 4, 5]),
        (
            "a SPIR-V header and nothing else",
            vec![0x0723_0203, 0x0001_0000, 0, 8, 0],
        ),
        ("empty", vec![]),
    ] {
        match device.build("garbage", &words) {
            Err(RuntimeError::Build { program, log }) => {
                assert_eq!(program, "garbage");
                assert!(
                    log.contains("clCreateProgramWithIL") || log.contains("CL_"),
                    "{what}: {log}"
                );
                eprintln!("{what}: {log}");
            }
            Err(RuntimeError::Call { call, .. }) => {
                assert!(call.starts_with("cl"), "{what}: {call}")
            }
            other => panic!("{what}: expected a build error, got {other:?}"),
        }
    }
}

#[test]
fn a_module_that_fails_to_link_returns_the_build_log() {
    let Some(mut device) = open_device() else {
        return;
    };
    let Some(spirv) = assemble("undefined_import") else {
        return;
    };
    match device.build("undefined_import", &spirv) {
        Err(err @ RuntimeError::Build { .. }) => {
            let text = err.to_string();
            eprintln!("{text}");
            assert!(text.contains("undefined_import"), "{text}");
            assert!(
                text.contains("missing"),
                "the log names the unresolved function: {text}"
            );
        }
        other => panic!("expected RuntimeError::Build, got {other:?}"),
    }
}

#[test]
fn an_absurd_allocation_is_an_error_not_a_crash() {
    let Some(mut device) = open_device() else {
        return;
    };
    match device.alloc(1 << 62) {
        Err(RuntimeError::OutOfMemory {
            bytes,
            kernel: None,
        }) => assert_eq!(bytes, 1 << 62),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    // The device still works afterwards.
    let buffer = device.alloc(16).unwrap();
    device.write(buffer, &[1; 16]).unwrap();
    let mut back = [0; 16];
    device.read(buffer, &mut back).unwrap();
    assert_eq!(back, [1; 16]);
}

#[test]
fn misuse_is_reported_with_the_kernel_and_call() {
    let Some(mut device) = open_device() else {
        return;
    };
    let Some(spirv) = assemble("vec_add") else {
        return;
    };
    let program = device.build("vec_add", &spirv).unwrap();
    let buffer = device.alloc(64).unwrap();

    let err = device
        .launch(program, "sub", &[], [1, 1, 1], None)
        .unwrap_err();
    match &err {
        RuntimeError::Kernel {
            kernel, call, name, ..
        } => {
            assert_eq!((kernel.as_str(), *call), ("sub", "clCreateKernel"));
            assert!(
                name.starts_with("CL_INVALID_KERNEL_NAME") && name.contains("add"),
                "{name}"
            );
        }
        other => panic!("expected a kernel error, got {other:?}"),
    }

    let err = device
        .launch(
            program,
            "add",
            &[KernelArg::Buffer(buffer)],
            [1, 1, 1],
            None,
        )
        .unwrap_err();
    assert!(matches!(err, RuntimeError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("takes 4 arguments"), "{err}");

    let err = device.write(buffer, &[0; 65]).unwrap_err();
    assert!(matches!(err, RuntimeError::Invalid { .. }), "{err}");

    device.free(buffer).unwrap();
    assert!(matches!(
        device.free(buffer),
        Err(RuntimeError::Invalid { .. })
    ));
}

#[test]
fn probe_and_list_agree_with_the_opened_device() {
    let probed = match opencl::probe() {
        Ok(info) => info,
        Err(err) => return skip(err.to_string()).unwrap_or(()),
    };
    let listed = opencl::list_devices().unwrap();
    assert_eq!(listed.first(), Some(&probed));
    assert_eq!(probed.backend, "opencl");
    assert!(
        probed.compute_units > 0 && probed.max_work_group_size > 0 && probed.global_mem_bytes > 0
    );
    let device = OpenClDevice::open().unwrap();
    assert_eq!(device.info(), &probed);
}

/// The app must start where there is no libOpenCL, so the loader is opened at run time.
#[test]
fn the_binary_does_not_link_libopencl() {
    let exe = std::env::current_exe().unwrap();
    let Ok(out) = Command::new("readelf").arg("-d").arg(&exe).output() else {
        eprintln!("skipping: readelf not found");
        return;
    };
    let dynamic = String::from_utf8_lossy(&out.stdout);
    assert!(
        !dynamic.contains("libOpenCL"),
        "{} links libOpenCL:\n{dynamic}",
        exe.display()
    );
}

/// Launches without timestamps compute what timed ones do. A kernel object keeps its arguments
/// between launches and only changed ones are set again, so each launch below must still see
/// its own buffers; and a buffer freed since the object took it is refused, not handed to the
/// driver, though the arguments "did not change".
#[test]
fn untimed_launches_set_only_changed_arguments_and_refuse_a_freed_buffer() {
    let Some(mut device) = open_device() else {
        return;
    };
    let Some(spirv) = assemble("vec_add") else {
        return;
    };
    let program = device.build("vec_add", &spirv).unwrap();
    let n = 300;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32 + 3.0).collect();
    let [ba, bb, c1, c2] = [0; 4].map(|_| device.alloc(n * 4).unwrap());
    device.write(ba, &floats_to_bytes(&a)).unwrap();
    device.write(bb, &floats_to_bytes(&b)).unwrap();
    let add = |device: &mut OpenClDevice, x, y, out, len: usize| {
        let args = [KernelArg::Buffer(x), KernelArg::Buffer(y), KernelArg::Buffer(out), KernelArg::I64(len as i64)];
        device.launch_untimed(program, "add", &args, [n, 1, 1], Some([64, 1, 1]))
    };
    add(&mut device, ba, bb, c1, n).unwrap();
    // Only the output changes, then the inputs, then the size (a symbol between forwards).
    add(&mut device, ba, bb, c2, n).unwrap();
    add(&mut device, bb, bb, c1, n).unwrap();
    add(&mut device, ba, ba, c2, n / 2).unwrap();
    device.finish().unwrap();
    let read = |device: &mut OpenClDevice, buffer| {
        let mut out = vec![0u8; n * 4];
        device.read(buffer, &mut out).unwrap();
        bytes_to_floats(&out)
    };
    let sum = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p + q).collect::<Vec<f32>>();
    assert_eq!(read(&mut device, c1), sum(&b, &b));
    let mut second = sum(&a, &b);
    second[..n / 2].copy_from_slice(&sum(&a[..n / 2], &a[..n / 2]));
    assert_eq!(read(&mut device, c2), second);

    device.free(c2).unwrap();
    let err = add(&mut device, ba, ba, c2, n / 2).unwrap_err();
    assert!(matches!(err, RuntimeError::Invalid { .. }) && err.to_string().contains("not a live buffer"), "{err}");
    for buffer in [ba, bb, c1] {
        device.free(buffer).unwrap();
    }
}
