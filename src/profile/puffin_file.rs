//! A trace as a `.puffin` recording for `puffin_viewer`: written with puffin's own
//! [`FrameView::write`], one frame per repetition (plus one for what ran before the first and
//! one for what ran after the last), host threads as recorded and each device queue as one more
//! "thread" whose scopes are the kernels, named after their graph nodes.
//!
//! The recording is rebuilt from the [`Trace`] rather than taken from puffin's global profiler,
//! so it is a pure function of the trace (and device scopes can sit in the frame of the
//! repetition that launched them, though their timestamps are known only after it).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use puffin::{FrameData, FrameView, NanoSecond, ScopeDetails, ScopeId, Stream, StreamInfo, ThreadInfo};

use super::trace::Trace;

/// A span to encode: start, end, scope, data.
struct Item {
    start: i64,
    end: i64,
    scope: ScopeId,
    data: String,
}

/// Puffin stores at most 127 bytes of scope data and slices them byte-wise; cut at a character
/// boundary so it never has to split one.
fn short(s: &str) -> String {
    let mut end = s.len().min(127);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Scope descriptions with ids of our choosing. puffin keeps `ScopeDetails::scope_id` private to
/// itself (ids normally come from its global registry); its serde form is the one way to set it,
/// and `tests::recording_reads_back` catches a puffin release that changes that form.
struct Scopes {
    ids: HashMap<(String, String), ScopeId>,
    details: Vec<Arc<ScopeDetails>>,
}

impl Scopes {
    fn id(&mut self, name: &str, location: &str) -> ScopeId {
        let key = (name.to_string(), location.to_string());
        if let Some(id) = self.ids.get(&key) {
            return *id;
        }
        let n = self.details.len() as u32 + 1;
        let (file, line) = location.rsplit_once(':').map_or((location, 0), |(f, l)| (f, l.parse().unwrap_or(0)));
        let details: ScopeDetails = serde_json::from_value(serde_json::json!({
            "scope_id": n, "scope_name": name, "function_name": "", "file_path": file, "line_nr": line,
        }))
        .expect("ScopeDetails' serde form, checked by the tests");
        let id = ScopeId(std::num::NonZeroU32::new(n).expect("n >= 1"));
        self.details.push(Arc::new(details));
        self.ids.insert(key, id);
        id
    }
}

/// Encodes spans of one thread, nesting each inside the open span that contains its start.
fn stream(mut items: Vec<Item>) -> Option<StreamInfo> {
    items.sort_by_key(|i| (i.start, std::cmp::Reverse(i.end)));
    let mut s = Stream::default();
    let mut open: Vec<(usize, NanoSecond)> = Vec::new();
    for item in &items {
        while let Some(&(offset, end)) = open.last() {
            if end > item.start {
                break;
            }
            s.end_scope(offset, end);
            open.pop();
        }
        let end = open.last().map_or(item.end, |&(_, parent_end)| item.end.min(parent_end));
        let (offset, _) = s.begin_scope(|| item.start, item.scope, &item.data);
        open.push((offset, end.max(item.start)));
    }
    while let Some((offset, end)) = open.pop() {
        s.end_scope(offset, end);
    }
    (!s.is_empty()).then(|| StreamInfo::parse(s).ok()).flatten()
}

/// The trace as puffin frames in a [`FrameView`] that keeps all of them.
pub fn frame_view(trace: &Trace) -> FrameView {
    let mut scopes = Scopes { ids: HashMap::new(), details: Vec::new() };
    // Bucket 0: before the first repetition; 1..=n: repetitions; n + 1: after the last.
    let n = trace.frames.len();
    let bucket_of = |t: i64| {
        if let Some(i) = trace.frames.iter().position(|f| t >= f.start_ns && t <= f.end_ns) {
            return i + 1;
        }
        // Between two repetitions counts with the earlier one.
        match trace.frames.iter().rposition(|f| f.end_ns < t) {
            None => 0,
            Some(i) if i + 1 == n => n + 1,
            Some(i) => i + 1,
        }
    };
    let mut buckets: BTreeMap<usize, BTreeMap<String, Vec<Item>>> = BTreeMap::new();
    for s in &trace.cpu {
        let scope = scopes.id(&s.name, &s.location);
        let thread = if s.thread.is_empty() { "host".to_string() } else { s.thread.clone() };
        buckets.entry(bucket_of(s.start_ns)).or_default().entry(thread).or_default().push(Item {
            start: s.start_ns,
            end: s.start_ns + s.dur_ns.max(0),
            scope,
            data: short(&s.data),
        });
    }
    for k in &trace.kernels {
        let scope = scopes.id(&k.launch.node, "");
        let bucket = match trace.frames.iter().position(|f| f.repetition == k.repetition) {
            Some(i) => i + 1,
            None => bucket_of(k.start_ns),
        };
        let queue = trace.queues.get(k.queue as usize).cloned().unwrap_or_else(|| format!("queue {}", k.queue));
        let shapes: Vec<String> = k.launch.shapes.iter().map(|(name, shape)| format!("{name}={shape:?}")).collect();
        buckets.entry(bucket).or_default().entry(format!("device: {queue}")).or_default().push(Item {
            start: k.start_ns,
            end: k.end_ns(),
            scope,
            data: short(&shapes.join(" ")),
        });
    }

    let mut view = FrameView::default();
    view.set_max_recent(usize::MAX);
    view.set_pack_frames(false);
    let mut first = true;
    for (index, threads) in buckets {
        let mut streams = BTreeMap::new();
        for (name, items) in threads {
            let start = items.iter().map(|i| i.start).min();
            if let Some(info) = stream(items) {
                streams.insert(ThreadInfo { start_time_ns: start, name }, info);
            }
        }
        // Every scope is described in the first frame; later frames describe none anew.
        let delta = if first { scopes.details.clone() } else { Vec::new() };
        if let Ok(frame) = FrameData::new(index as u64, streams, delta, false) {
            first = false;
            view.add_frame(Arc::new(frame));
        }
    }
    view
}

/// Writes the trace as a `.puffin` file.
pub fn write_puffin(trace: &Trace, out: &mut impl std::io::Write) -> std::io::Result<()> {
    frame_view(trace).write(out).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{CpuSpan, DeviceSpan, Frame, LaunchInfo};

    fn cpu(name: &str, start: i64, dur: i64, depth: u32) -> CpuSpan {
        CpuSpan { name: name.into(), data: "é".repeat(100), location: "src/x.rs:7".into(), thread: "main".into(), start_ns: start, dur_ns: dur, depth }
    }

    fn kernel(node: &str, repetition: u32, start: i64) -> DeviceSpan {
        let launch = LaunchInfo { node: node.into(), kernel: "k".into(), ..Default::default() };
        DeviceSpan { launch, queue: 0, repetition, start_ns: start, dur_ns: 40, device_start_ns: 0 }
    }

    #[test]
    fn recording_reads_back() {
        let trace = Trace {
            backend: "opencl".into(),
            device: "cpu".into(),
            queues: vec!["opencl cpu queue 0".into()],
            cpu: vec![cpu("build", 10, 50, 0), cpu("repetition", 100, 100, 0), cpu("launch", 110, 10, 1), cpu("repetition", 300, 100, 1)],
            kernels: vec![kernel("add", 0, 130), kernel("add", 1, 330), kernel("relu", 1, 380)],
            host: Vec::new(),
            frames: vec![
                Frame { repetition: 0, warmup: true, start_ns: 100, end_ns: 200 },
                Frame { repetition: 1, warmup: false, start_ns: 300, end_ns: 420 },
            ],
            alignment: None,
        };
        let mut bytes = Vec::new();
        write_puffin(&trace, &mut bytes).unwrap();
        assert_eq!(&bytes[..4], b"PUF0");
        let view = FrameView::read(&mut bytes.as_slice()).expect("puffin reads its own format");
        let frames: Vec<_> = view.all_uniq().cloned().collect();
        assert_eq!(frames.len(), 3, "setup + two repetitions");
        let names: std::collections::BTreeSet<String> =
            view.scope_collection().scopes_by_id().values().map(|d| d.name().to_string()).collect();
        assert_eq!(names, ["add", "build", "launch", "relu", "repetition"].map(String::from).into());
        let last = frames[2].unpacked().unwrap();
        let threads: Vec<&str> = last.thread_streams.keys().map(|t| t.name.as_str()).collect();
        assert_eq!(threads.len(), 2, "{threads:?}");
        assert!(threads.contains(&"device: opencl cpu queue 0"), "{threads:?}");
        let device = last.thread_streams.iter().find(|(t, _)| t.name.starts_with("device")).unwrap().1;
        let top = puffin::Reader::from_start(&device.stream).read_top_scopes().unwrap();
        assert_eq!(top.iter().map(|s| (s.record.start_ns, s.record.duration_ns)).collect::<Vec<_>>(), [(330, 40), (380, 40)]);
        let first = frames[1].unpacked().unwrap();
        let main = first.thread_streams.iter().find(|(t, _)| t.name == "main").unwrap().1;
        assert_eq!((main.num_scopes, main.depth), (2, 2), "launch nests inside repetition");
    }
}
