//! The recorded timeline: CPU spans (puffin scopes) and device spans (kernel timestamps) on one
//! clock, the host's, in nanoseconds as [`puffin::now_ns`] counts them.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

/// One puffin scope on one host thread.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CpuSpan {
    /// The scope's name (`profile_scope!("name")`) or its function's.
    pub name: String,
    /// The scope's dynamic data, e.g. the kernel a `launch` scope enqueued.
    pub data: String,
    /// `file:line` of the scope.
    pub location: String,
    pub thread: String,
    pub start_ns: i64,
    pub dur_ns: i64,
    /// 0 for a top-level scope.
    pub depth: u32,
}

/// What a launch was: the graph node it computes and the arguments it saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LaunchInfo {
    /// The span's name: the graph node the kernel computes, or its nodes joined by `+` when
    /// it fuses several.
    pub node: String,
    /// The graph nodes the kernel computes, when it fuses several (empty: just `node`).
    pub nodes: Vec<String>,
    /// The SPIR-V entry point.
    pub kernel: String,
    /// Kernel parameter (binding) → the shape of the tensor bound to it.
    pub shapes: BTreeMap<String, Vec<i64>>,
    /// Symbol → the value it was bound to for this run.
    pub bindings: BTreeMap<String, i64>,
    pub global: [usize; 3],
    pub local: Option<[usize; 3]>,
}

/// One kernel on one device queue.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceSpan {
    pub launch: LaunchInfo,
    /// Index into [`Trace::queues`].
    pub queue: u32,
    /// Which repetition of the workload launched it (warm-up ones included; see [`Trace::frames`]).
    pub repetition: u32,
    /// Start on the host clock, after [`ClockAlignment`].
    pub start_ns: i64,
    pub dur_ns: u64,
    /// The device's own start timestamp, before alignment.
    pub device_start_ns: u64,
}

impl DeviceSpan {
    pub fn end_ns(&self) -> i64 {
        self.start_ns.saturating_add(self.dur_ns as i64)
    }
}

/// A step of a plan that ran on the host between launches: a sync step's wait for the queue
/// and read-back of data-dependent sizes, or a host fallback (an eager-only op run through the
/// interpreter). Host time, never device time, and never a generated kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostSpan {
    /// [`HostSpan::SYNC`] or [`HostSpan::HOST_FALLBACK`].
    pub kind: &'static str,
    /// The graph node.
    pub node: String,
    pub repetition: u32,
    /// Start on the host clock.
    pub start_ns: i64,
    pub dur_ns: u64,
}

impl HostSpan {
    pub const SYNC: &'static str = "sync";
    pub const HOST_FALLBACK: &'static str = "host fallback";

    /// What the span is, for labels: "host fallback (interpreter) · host time".
    pub fn label(&self) -> String {
        match self.kind {
            HostSpan::SYNC => format!("sync {}: sizes read back · host time", self.node),
            _ => format!("{} · host fallback (interpreter) · host time", self.node),
        }
    }
}

/// How device timestamps were put on the host clock: `host = device + offset_ns`.
///
/// A kernel cannot start before the host enqueued it, and cannot end after the host saw the
/// queue drained (a host timestamp taken right after `finish`/`read`, the sync point). Every
/// offset in `[lower_ns, upper_ns]` satisfies both for every launch; the midpoint is taken, so it
/// is off by at most `(upper_ns - lower_ns) / 2`. `lower_ns > upper_ns` means the two clocks
/// drifted apart during the run; the sync-point bound `upper_ns` is used then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ClockAlignment {
    pub offset_ns: i64,
    pub lower_ns: i64,
    pub upper_ns: i64,
}

impl ClockAlignment {
    /// The largest error of `offset_ns`, when the bounds are consistent.
    pub fn error_ns(&self) -> Option<u64> {
        (self.lower_ns <= self.upper_ns).then(|| (self.upper_ns - self.lower_ns) as u64 / 2)
    }
}

/// One repetition of the workload on the host clock; puffin shows each as a frame.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Frame {
    pub repetition: u32,
    pub warmup: bool,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// A profiled run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Trace {
    /// `DeviceInfo::backend` and `DeviceInfo::name` of the device the kernels ran on.
    pub backend: String,
    pub device: String,
    /// Track names, one per device queue.
    pub queues: Vec<String>,
    pub cpu: Vec<CpuSpan>,
    pub kernels: Vec<DeviceSpan>,
    /// Sync and host-fallback steps, on the host clock (not on any device queue).
    pub host: Vec<HostSpan>,
    pub frames: Vec<Frame>,
    pub alignment: Option<ClockAlignment>,
}

impl Trace {
    fn is_timed(&self, span: &DeviceSpan) -> bool {
        !self.frames.iter().any(|f| f.warmup && f.repetition == span.repetition)
    }

    /// Kernel spans of the timed repetitions (warm-up ones left out).
    pub fn timed_kernels(&self) -> impl Iterator<Item = &DeviceSpan> {
        self.kernels.iter().filter(|k| self.is_timed(k))
    }

    /// Total device time per graph node over the timed repetitions, for the graph overlay.
    /// Every node of a fused kernel is charged the kernel's whole time (a kernel's time cannot
    /// be split between the nodes it fuses), so the values add up to more than
    /// [`Self::device_total_ns`] when kernels fuse.
    pub fn node_device_ns(&self) -> HashMap<String, u64> {
        let mut total = HashMap::new();
        for k in self.timed_kernels() {
            if k.launch.nodes.is_empty() {
                *total.entry(k.launch.node.clone()).or_insert(0) += k.dur_ns;
            }
            for node in &k.launch.nodes {
                *total.entry(node.clone()).or_insert(0) += k.dur_ns;
            }
        }
        total
    }

    /// Device time of all timed kernels.
    pub fn device_total_ns(&self) -> u64 {
        self.timed_kernels().map(|k| k.dur_ns).sum()
    }

    /// Host spans (sync and host-fallback steps) of the timed repetitions.
    pub fn timed_host(&self) -> impl Iterator<Item = &HostSpan> {
        self.host.iter().filter(|h| !self.frames.iter().any(|f| f.warmup && f.repetition == h.repetition))
    }

    /// Host time of the timed sync and host-fallback steps.
    pub fn host_total_ns(&self) -> u64 {
        self.timed_host().map(|h| h.dur_ns).sum()
    }

    /// Per host step (kind, node), the median over timed repetitions of its host time, in the
    /// order they first ran.
    pub fn host_median_ns(&self) -> Vec<(&'static str, String, u64)> {
        let mut order: Vec<(&'static str, String)> = Vec::new();
        let mut per_rep: HashMap<(&'static str, String), BTreeMap<u32, u64>> = HashMap::new();
        for h in self.timed_host() {
            let key = (h.kind, h.node.clone());
            if !per_rep.contains_key(&key) {
                order.push(key.clone());
            }
            *per_rep.entry(key).or_default().entry(h.repetition).or_insert(0) += h.dur_ns;
        }
        order
            .into_iter()
            .map(|key| {
                let mut v: Vec<u64> = per_rep[&key].values().copied().collect();
                v.sort_unstable();
                let median = v[v.len() / 2];
                (key.0, key.1, median)
            })
            .collect()
    }

    /// Per span name (node, or fused nodes), the median over timed repetitions of its device
    /// time in one repetition, in the order they first ran.
    pub fn node_median_ns(&self) -> Vec<(String, u64)> {
        let mut order: Vec<String> = Vec::new();
        let mut per_rep: HashMap<&str, BTreeMap<u32, u64>> = HashMap::new();
        for k in self.timed_kernels() {
            let node = k.launch.node.as_str();
            if !per_rep.contains_key(node) {
                order.push(node.to_string());
            }
            *per_rep.entry(node).or_default().entry(k.repetition).or_insert(0) += k.dur_ns;
        }
        order
            .into_iter()
            .map(|node| {
                let mut v: Vec<u64> = per_rep[node.as_str()].values().copied().collect();
                v.sort_unstable();
                let median = v[v.len() / 2];
                (node, median)
            })
            .collect()
    }

    /// The earliest host timestamp in the trace (the zero of exported timelines).
    pub fn origin_ns(&self) -> i64 {
        let cpu = self.cpu.iter().map(|s| s.start_ns);
        let dev = self.kernels.iter().map(|s| s.start_ns);
        let host = self.host.iter().map(|s| s.start_ns);
        let frames = self.frames.iter().map(|f| f.start_ns);
        cpu.chain(dev).chain(host).chain(frames).min().unwrap_or(0)
    }
}
