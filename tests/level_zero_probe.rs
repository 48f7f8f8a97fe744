//! `probe()` on this machine, whatever it has: a GPU with a Level Zero driver (it must describe
//! it), the loader without a driver (the error must be the loader's / zeInit's own words), or no
//! loader at all (the error must name the library).

use level_zero_sys::{LoadError, Loader};
use xpu_workbench::runtime::level_zero::{probe, probe_library, LevelZero, BACKEND_NAME};
use xpu_workbench::runtime::{Device, RuntimeError};

fn reason_of(error: &RuntimeError) -> String {
    match error {
        RuntimeError::Unavailable { backend, reason } => {
            assert_eq!(*backend, BACKEND_NAME);
            reason.clone()
        }
        RuntimeError::Call { call, name, .. } => format!("{call}: {name}"),
        other => panic!("probe must fail as Unavailable or Call, not {other:?}"),
    }
}

#[test]
fn probe_describes_the_gpu_or_says_why_there_is_none() {
    let loader = Loader::open();
    match probe() {
        Ok(info) => {
            println!("Level Zero device: {info:?}");
            assert_eq!(info.backend, BACKEND_NAME);
            assert!(
                !info.name.is_empty()
                    && info.max_work_group_size > 0
                    && info.timer_resolution_ns > 0.0
            );
        }
        Err(error) => {
            println!("probe: {error}");
            let reason = reason_of(&error);
            assert!(!reason.trim().is_empty());
            match loader {
                Err(LoadError::Library { .. }) => {
                    assert!(
                        reason.contains("libze_loader"),
                        "the error must name the library: {reason}"
                    )
                }
                Err(LoadError::Symbol { symbol, .. }) => {
                    assert!(reason.contains(symbol), "{reason}")
                }
                // The loader is there, so the reason comes from a Level Zero call.
                Ok(_) => assert!(
                    reason.starts_with("ze"),
                    "not a Level Zero call's answer: {reason}"
                ),
            }
            // Opening the device fails for the same reason.
            let open = LevelZero::open().err().map(|e| e.to_string());
            assert_eq!(open, Some(error.to_string()));
        }
    }
}

#[test]
fn a_missing_loader_is_named() {
    let path = "/nonexistent/libze_loader.so.1";
    let error = probe_library(path).unwrap_err();
    println!("probe_library: {error}");
    let reason = reason_of(&error);
    assert!(
        reason.contains(path) && reason.contains("cannot open shared object file"),
        "{reason}"
    );
}

/// With a GPU, the whole round trip; without one, there is nothing to do here (docs/XPU.md).
#[test]
fn device_round_trip_where_a_gpu_exists() {
    let Ok(mut device) = LevelZero::open() else {
        println!("skipped: no Level Zero GPU here");
        return;
    };
    let data: Vec<u8> = (0..=255).collect();
    let buffer = device.alloc(data.len()).unwrap();
    device.write(buffer, &data).unwrap();
    let mut back = vec![0u8; data.len()];
    device.read(buffer, &mut back).unwrap();
    assert_eq!(back, data);
    device.free(buffer).unwrap();
    device.finish().unwrap();
    println!("{:?}", device.info());
}
