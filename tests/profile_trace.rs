//! The profiling layer on real OpenCL launches of hand-written SPIR-V (`tests/data/vec_add.spvasm`):
//! the Chrome trace validates against the trace-event format and its kernel spans add up to the
//! device time of the run; the puffin recording reads back with puffin's own reader.

mod common;

use std::collections::BTreeMap;

use xpu_workbench::profile::{profile, LaunchInfo, ProfileOptions, Trace, DEVICE_PID};
use xpu_workbench::runtime::opencl::OpenClDevice;
use xpu_workbench::runtime::{Device, EventId, KernelArg, RuntimeError};

fn open() -> Option<(OpenClDevice, Vec<u32>)> {
    let skip = |reason: String| {
        assert!(!common::opencl_required(), "XPU_WORKBENCH_REQUIRE_OPENCL is set but: {reason}");
        eprintln!("skipping: {reason} (source scripts/env.sh after scripts/install_opencl_cpu.sh)");
        None
    };
    let device = match OpenClDevice::open() {
        Ok(d) => d,
        Err(e) => return skip(e.to_string()),
    };
    match common::assemble_spvasm("vec_add") {
        Ok(spirv) => Some((device, spirv)),
        Err(e) => skip(e),
    }
}

const N: usize = 1 << 18;
const NODES: [&str; 3] = ["add", "add_1", "add_2"];

/// Three chained vector adds per repetition, each labelled as a graph node; returns the trace
/// and every timed launch's event.
/// With `by_kernel` the launches are labelled up front by kernel name (`set_labels`, all three
/// as `fused_add`), as a runner that knows nothing of profiling is.
fn profiled_run(device: &mut OpenClDevice, spirv: &[u32], options: ProfileOptions, by_kernel: bool) -> (Trace, Vec<(u32, EventId)>) {
    let program = device.build("vec_add", spirv).unwrap();
    let bufs: Vec<_> = (0..4).map(|_| device.alloc(N * 4).unwrap()).collect();
    for (i, b) in bufs.iter().enumerate() {
        let data: Vec<u8> = (0..N).flat_map(|j| ((i * j) as f32).to_le_bytes()).collect();
        device.write(*b, &data).unwrap();
    }
    let mut events = Vec::new();
    let trace = profile::<RuntimeError>(device, options, |dev, repetition| {
        if by_kernel {
            dev.set_labels([("add".to_string(), LaunchInfo { node: "fused_add".into(), ..Default::default() })].into());
        }
        for (k, node) in NODES.iter().enumerate() {
            let (a, b, c) = (bufs[k], bufs[k + 1], bufs[(k + 2) % 4]);
            if !by_kernel {
                dev.label_next(LaunchInfo {
                    node: node.to_string(),
                    shapes: BTreeMap::from([("a".into(), vec![N as i64]), ("b".into(), vec![N as i64]), ("c".into(), vec![N as i64])]),
                    bindings: BTreeMap::from([("s0".into(), N as i64)]),
                    ..Default::default()
                });
            }
            let args = [KernelArg::Buffer(a), KernelArg::Buffer(b), KernelArg::Buffer(c), KernelArg::I64(N as i64)];
            let event = dev.launch(program, "add", &args, [N, 1, 1], Some([64, 1, 1]))?;
            if repetition >= options.warmup {
                events.push((repetition, event));
            }
        }
        Ok(())
    })
    .unwrap();
    (trace, events)
}

#[test]
fn chrome_trace_is_valid_and_kernel_spans_sum_to_the_device_time() {
    let Some((mut device, spirv)) = open() else { return };
    let options = ProfileOptions { warmup: 2, repeat: 5 };
    let (trace, events) = profiled_run(&mut device, &spirv, options, false);
    let device_ns: u64 = events.iter().map(|(_, e)| device.timing(*e).unwrap().duration_ns()).sum();
    assert!(device_ns > 0);

    // Through a file, as Perfetto would read it.
    let path = std::env::temp_dir().join(format!("xpu-workbench-trace-{}.json", std::process::id()));
    trace.write_chrome(&path).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(doc["displayTimeUnit"], "ns");
    let tracks = common::trace_format::validate(&doc).unwrap_or_else(|e| panic!("invalid trace: {e}"));

    let kernels: Vec<&serde_json::Value> =
        tracks.iter().filter(|((pid, _), _)| *pid == DEVICE_PID as u64).flat_map(|(_, v)| v).collect();
    assert_eq!(kernels.len(), NODES.len() * (options.warmup + options.repeat) as usize);
    let timed: Vec<_> = kernels.iter().filter(|e| e["args"]["repetition"].as_u64().unwrap() >= options.warmup as u64).collect();
    let sum_ns: f64 = timed.iter().map(|e| e["dur"].as_f64().unwrap() * 1e3).sum();
    let rel = (sum_ns - device_ns as f64).abs() / device_ns as f64;
    assert!(rel < 0.01, "kernel spans sum to {sum_ns} ns, the run's device time is {device_ns} ns");
    assert_eq!(trace.device_total_ns(), device_ns);
    assert_eq!(trace.node_device_ns().values().sum::<u64>(), device_ns);

    for e in &kernels {
        assert!(NODES.contains(&e["name"].as_str().unwrap()), "kernels are named after graph nodes: {e}");
        assert_eq!(e["args"]["kernel"], "add");
        assert_eq!(e["args"]["shapes"]["a"], serde_json::json!([N]));
        assert_eq!(e["args"]["bindings"]["s0"], N);
    }
    // One device queue, one track.
    assert_eq!(tracks.keys().filter(|(pid, _)| *pid == DEVICE_PID as u64).count(), 1);
}

#[test]
fn device_spans_sit_inside_their_repetition_on_the_host_clock() {
    let Some((mut device, spirv)) = open() else { return };
    let options = ProfileOptions { warmup: 1, repeat: 3 };
    let (trace, _) = profiled_run(&mut device, &spirv, options, false);
    let alignment = trace.alignment.expect("launches were aligned");
    eprintln!("alignment: {alignment:?}");
    for k in &trace.kernels {
        let frame = trace.frames.iter().find(|f| f.repetition == k.repetition).unwrap();
        // The frame spans enqueue to sync, so the aligned kernel must lie inside it, up to the
        // alignment's own error when the bounds were inconsistent.
        let slack = alignment.error_ns().map_or((alignment.lower_ns - alignment.upper_ns).abs(), |_| 0);
        assert!(k.start_ns + slack >= frame.start_ns && k.end_ns() <= frame.end_ns + slack, "{k:?} outside {frame:?}");
    }
    // CPU scopes of this thread: one `repetition` per run, `launch` scopes nested in them.
    let me = std::thread::current().name().unwrap().to_string();
    let mine: Vec<_> = trace.cpu.iter().filter(|s| s.thread == me).collect();
    assert_eq!(mine.iter().filter(|s| s.name == "repetition").count(), 4);
    let launches: Vec<_> = mine.iter().filter(|s| s.name == "launch").collect();
    assert_eq!(launches.len(), 12, "{mine:#?}");
    assert!(launches.iter().all(|s| s.depth == 1 && s.data == "add"));
    let medians = trace.node_median_ns();
    assert_eq!(medians.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), NODES);
}

#[test]
fn puffin_recording_reads_back() {
    let Some((mut device, spirv)) = open() else { return };
    let (trace, _) = profiled_run(&mut device, &spirv, ProfileOptions { warmup: 1, repeat: 2 }, true);
    let path = std::env::temp_dir().join(format!("xpu-workbench-{}.puffin", std::process::id()));
    trace.write_puffin(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let view = puffin::FrameView::read(&mut bytes.as_slice()).expect("a .puffin file");
    let frames: Vec<_> = view.all_uniq().collect();
    assert!(frames.len() >= 3, "a frame per repetition");
    let names: Vec<String> = view.scope_collection().scopes_by_id().values().map(|d| d.name().to_string()).collect();
    for want in ["repetition", "launch", "fused_add"] {
        assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
    }
}
