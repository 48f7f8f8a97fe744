//! `torch.profiler` traces (`prof.export_chrome_trace(path)`: Kineto's Chrome trace-event JSON,
//! plain or gzipped) → host ops, runtime calls and device ops, and from them a [`Trace`].
//!
//! Both flavours are complete events (`ph: "X"`, `ts`/`dur` in µs) linked by a correlation id
//! (`args.correlation`) from the runtime call that enqueued a device op to the op:
//!
//! | | CUDA | XPU (Kineto's XPUPTI plugin) |
//! |---|---|---|
//! | runtime calls | `cat: "cuda_runtime"` (`cudaLaunchKernel`, `cuLaunchKernel`), `"cuda_driver"` | `cat: "xpu_runtime"` (`urEnqueueKernelLaunch`, `zeCommandListAppendLaunchKernel`, older `piEnqueueKernelLaunch`) |
//! | device ops | `cat: "kernel"`, `"gpu_memcpy"`, `"gpu_memset"`; `tid` = stream | the same categories; `tid` = Kineto's index of the SYCL queue |
//! | kernel args | `device`, `stream`, `correlation`, `grid`, `block`, `registers per thread`, ... | `device`, `correlation`, `appended`, `submitted`, `sycl queue`, `l0 queue`, `context`, `kernel_id`; no grid/block |
//! | memcpy names | `Memcpy HtoD (Pageable -> Device)` | `Memcpy M2D (Memory -> Device)` (PTI's type names) |
//!
//! Host ops (`cat: "cpu_op"`, `"user_annotation"`) are the same in both: ATen ops (`aten::mm`),
//! `record_function` ranges such as dynamo's `Torch-Compiled Region: 0/1`, Inductor's
//! `## Call CompiledFxGraph <hash> ##` and the record function of each Triton launch, named after
//! the kernel.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use serde_json::Value as Json;

use super::trace::{CpuSpan, DeviceSpan, LaunchInfo, Trace};

/// Which runtime recorded the device side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flavour {
    Cuda,
    Xpu,
    /// No device ops and no runtime calls: a CPU-only profile.
    Cpu,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceOpKind {
    Kernel,
    Memcpy,
    Memset,
}

/// One op on a device queue.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceOp {
    pub name: String,
    pub kind: DeviceOpKind,
    pub device: i64,
    /// CUDA stream or XPU queue index (the event's `tid`).
    pub queue: i64,
    pub start_ns: i64,
    pub dur_ns: i64,
    pub correlation: Option<i64>,
}

/// What a host event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostKind {
    /// `cpu_op`: an ATen op or another operator.
    Op,
    /// `user_annotation`: a `record_function` range.
    Annotation,
    /// A runtime call (`cudaLaunchKernel`, `urEnqueueKernelLaunch`).
    Runtime,
}

/// One host event on one thread.
#[derive(Clone, Debug, PartialEq)]
pub struct HostOp {
    pub name: String,
    pub kind: HostKind,
    pub pid: i64,
    pub tid: i64,
    pub start_ns: i64,
    pub dur_ns: i64,
    pub correlation: Option<i64>,
}

impl HostOp {
    pub fn end_ns(&self) -> i64 {
        self.start_ns.saturating_add(self.dur_ns)
    }
}

/// A whole profiler trace.
#[derive(Clone, Debug)]
pub struct KinetoTrace {
    pub file: String,
    pub flavour: Flavour,
    /// `deviceProperties[0].name` when present.
    pub device_name: Option<String>,
    pub host: Vec<HostOp>,
    pub device: Vec<DeviceOp>,
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum KinetoError {
    #[error("{file}: cannot read: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: not a Chrome trace: {why}")]
    Format { file: String, why: String },
}

/// The largest (decompressed) trace read.
const MAX_BYTES: u64 = 2 << 30;

/// Reads a trace file, gzipped or not (told apart by content).
pub fn load(path: &Path) -> Result<KinetoTrace, KinetoError> {
    let file = path.display().to_string();
    let io = |source| KinetoError::Io { file: file.clone(), source };
    let raw = std::fs::read(path).map_err(io)?;
    let mut text = Vec::new();
    if raw.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(&raw[..]).take(MAX_BYTES).read_to_end(&mut text).map_err(io)?;
    } else {
        text = raw;
    }
    parse(&file, &text)
}

/// Parses trace JSON held in memory; `file` names it in messages.
pub fn parse(file: &str, bytes: &[u8]) -> Result<KinetoTrace, KinetoError> {
    let format = |why: String| KinetoError::Format { file: file.to_string(), why };
    let doc: Json = serde_json::from_slice(bytes).map_err(|e| format(format!("invalid JSON ({e})")))?;
    let events = match &doc {
        Json::Object(o) => o.get("traceEvents").and_then(Json::as_array).ok_or_else(|| format("no `traceEvents` array".into()))?,
        Json::Array(a) => a,
        _ => return Err(format("expected an object with `traceEvents` or an array of events".into())),
    };
    let mut t = KinetoTrace {
        file: file.to_string(),
        flavour: Flavour::Cpu,
        device_name: doc.pointer("/deviceProperties/0/name").and_then(Json::as_str).map(str::to_string),
        host: Vec::new(),
        device: Vec::new(),
        warnings: Vec::new(),
    };
    let (mut cuda, mut xpu, mut bad) = (false, false, 0usize);
    for e in events {
        if e.get("ph").and_then(Json::as_str) != Some("X") {
            continue;
        }
        let cat = e.get("cat").and_then(Json::as_str).unwrap_or("");
        let name = e.get("name").and_then(Json::as_str).unwrap_or("").to_string();
        let (Some(ts), Some(dur)) = (e.get("ts").and_then(Json::as_f64), e.get("dur").and_then(Json::as_f64)) else {
            bad += 1;
            continue;
        };
        let (start_ns, dur_ns) = ((ts * 1e3).round() as i64, (dur * 1e3).round().max(0.0) as i64);
        let int = |v: Option<&Json>| v.and_then(|v| v.as_i64().or_else(|| v.as_str().and_then(|s| s.parse().ok())));
        let correlation = int(e.pointer("/args/correlation"));
        let (pid, tid) = (int(e.get("pid")).unwrap_or(0), int(e.get("tid")).unwrap_or(0));
        let device_kind = match cat {
            "kernel" => Some(DeviceOpKind::Kernel),
            "gpu_memcpy" => Some(DeviceOpKind::Memcpy),
            "gpu_memset" => Some(DeviceOpKind::Memset),
            _ => None,
        };
        if let Some(kind) = device_kind {
            if e.pointer("/args/sycl queue").is_some() {
                xpu = true;
            }
            let device = int(e.pointer("/args/device")).unwrap_or(pid);
            t.device.push(DeviceOp { name, kind, device, queue: tid, start_ns, dur_ns, correlation });
            continue;
        }
        let kind = match cat {
            "cpu_op" => HostKind::Op,
            "user_annotation" => HostKind::Annotation,
            "cuda_runtime" | "cuda_driver" => {
                cuda = true;
                HostKind::Runtime
            }
            "xpu_runtime" | "xpu_driver" => {
                xpu = true;
                HostKind::Runtime
            }
            c if c.ends_with("_runtime") || c.ends_with("_driver") => HostKind::Runtime,
            _ => continue,
        };
        t.host.push(HostOp { name, kind, pid, tid, start_ns, dur_ns, correlation });
    }
    t.flavour = if xpu {
        Flavour::Xpu
    } else if cuda || !t.device.is_empty() {
        Flavour::Cuda
    } else {
        Flavour::Cpu
    };
    if bad > 0 {
        t.warnings.push(format!("{file}: {bad} complete event(s) without a numeric `ts`/`dur`; skipped"));
    }
    t.host.sort_by_key(|o| (o.pid, o.tid, o.start_ns, std::cmp::Reverse(o.dur_ns)));
    t.device.sort_by_key(|o| (o.start_ns, o.device, o.queue));
    Ok(t)
}

impl KinetoTrace {
    /// For each host op, the index of the host op on the same thread that encloses it most
    /// tightly (`None` at the top). Host ops are sorted by thread, start, and longest first.
    pub fn parents(&self) -> Vec<Option<usize>> {
        let mut parents = vec![None; self.host.len()];
        let mut stack: Vec<usize> = Vec::new();
        for (i, op) in self.host.iter().enumerate() {
            while let Some(&top) = stack.last() {
                let t = &self.host[top];
                if (t.pid, t.tid) == (op.pid, op.tid) && op.start_ns < t.end_ns() {
                    break;
                }
                stack.pop();
            }
            parents[i] = stack.last().copied();
            stack.push(i);
        }
        parents
    }

    /// Runtime call index by correlation id.
    pub fn launches_by_correlation(&self) -> BTreeMap<i64, usize> {
        self.host
            .iter()
            .enumerate()
            .filter(|(_, o)| o.kind == HostKind::Runtime)
            .filter_map(|(i, o)| Some((o.correlation?, i)))
            .collect()
    }

    /// The trace as the app's timeline: host ops as CPU spans (depth by nesting), device ops as
    /// device spans on one track per (device, queue). `label(i)` names device op `i`'s graph
    /// nodes (empty: not attributed), for the overlay.
    pub fn to_trace(&self, label: impl Fn(usize) -> Vec<String>) -> Trace {
        let parents = self.parents();
        // Parents come before their children in `host`'s order.
        let mut depth: Vec<u32> = Vec::with_capacity(self.host.len());
        for p in &parents {
            let d = p.map_or(0, |p| depth[p] + 1);
            depth.push(d);
        }
        let cpu = self
            .host
            .iter()
            .enumerate()
            .map(|(i, o)| CpuSpan {
                name: o.name.clone(),
                data: o.correlation.map(|c| format!("correlation {c}")).unwrap_or_default(),
                location: String::new(),
                thread: format!("{} / {}", o.pid, o.tid),
                start_ns: o.start_ns,
                dur_ns: o.dur_ns,
                depth: depth[i],
            })
            .collect();
        let mut queues: Vec<(i64, i64)> = self.device.iter().map(|d| (d.device, d.queue)).collect();
        queues.sort_unstable();
        queues.dedup();
        let backend = match self.flavour {
            Flavour::Cuda => "cuda",
            Flavour::Xpu => "xpu",
            Flavour::Cpu => "cpu",
        };
        let kernels = self
            .device
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let nodes = label(i);
                let node = if nodes.is_empty() { d.name.clone() } else { nodes.join("+") };
                DeviceSpan {
                    launch: LaunchInfo {
                        node,
                        nodes: if nodes.len() > 1 { nodes } else { Vec::new() },
                        kernel: d.name.clone(),
                        ..LaunchInfo::default()
                    },
                    queue: queues.binary_search(&(d.device, d.queue)).unwrap_or(0) as u32,
                    repetition: 0,
                    start_ns: d.start_ns,
                    dur_ns: d.dur_ns as u64,
                    device_start_ns: d.start_ns.max(0) as u64,
                }
            })
            .collect();
        Trace {
            backend: backend.into(),
            device: self.device_name.clone().unwrap_or_default(),
            queues: queues.iter().map(|(d, q)| format!("{backend} device {d} queue {q}")).collect(),
            cpu,
            kernels,
            host: Vec::new(),
            frames: Vec::new(),
            alignment: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUDA: &str = r#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}], "traceEvents": [
      {"ph": "X", "cat": "user_annotation", "name": "Torch-Compiled Region: 0/0", "pid": 1, "tid": 1, "ts": 100.0, "dur": 50.0},
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 110.0, "dur": 10.0, "args": {"External id": 5}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 112.0, "dur": 3.0, "args": {"correlation": 77}},
      {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 130.5, "dur": 4.25, "args": {"correlation": 77, "device": 0, "stream": 7}},
      {"ph": "s", "cat": "ac2g", "id": 77, "pid": 1, "tid": 1, "ts": 112.0},
      {"ph": "X", "cat": "cpu_op", "name": "broken", "pid": 1, "tid": 1, "ts": "x"}
    ]}"#;

    #[test]
    fn reads_host_runtime_and_device_events_with_their_links() {
        let t = parse("t.json", CUDA.as_bytes()).unwrap();
        assert_eq!(t.flavour, Flavour::Cuda);
        assert_eq!(t.device_name.as_deref(), Some("NVIDIA H100"));
        assert_eq!(t.host.len(), 3);
        assert_eq!(t.device.len(), 1);
        let k = &t.device[0];
        assert_eq!((k.name.as_str(), k.start_ns, k.dur_ns, k.correlation, k.queue), ("sm90_gemm", 130_500, 4_250, Some(77), 7));
        let parents = t.parents();
        let launch = t.launches_by_correlation()[&77];
        let mm = parents[launch].unwrap();
        assert_eq!(t.host[mm].name, "aten::mm");
        assert_eq!(t.host[parents[mm].unwrap()].name, "Torch-Compiled Region: 0/0");
        assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
        let trace = t.to_trace(|_| vec!["linear".into()]);
        assert_eq!(trace.kernels[0].launch.node, "linear");
        assert_eq!(trace.kernels[0].launch.kernel, "sm90_gemm");
        assert_eq!(trace.cpu.iter().map(|s| s.depth).collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn rejects_what_is_not_a_trace() {
        assert!(parse("t.json", b"{}").is_err());
        assert!(parse("t.json", b"not json").is_err());
        assert!(parse("t.json", br#"{"traceEvents": []}"#).unwrap().device.is_empty());
    }
}
