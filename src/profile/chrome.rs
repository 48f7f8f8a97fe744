//! Chrome trace-event JSON (the format `chrome://tracing` and Perfetto load): complete events
//! (`ph: "X"`) with `ts`/`dur` in microseconds, one process for the host and one for the device,
//! one thread (track) per host thread and per device queue, named by `M` metadata events.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::trace::Trace;

pub const HOST_PID: u32 = 1;
pub const DEVICE_PID: u32 = 2;
/// The host track that shows each repetition as one span.
pub const FRAMES_TID: u32 = 0;

fn meta(name: &str, pid: u32, tid: Option<u32>, value: Value) -> Value {
    let mut e = json!({"name": name, "ph": "M", "pid": pid, "args": value});
    if let Some(tid) = tid {
        e["tid"] = json!(tid);
    }
    e
}

/// The trace as a `{"traceEvents": [...], "displayTimeUnit": "ns"}` document. Times are relative
/// to the trace's first timestamp, so microsecond floats keep nanosecond precision.
pub fn chrome_json(trace: &Trace) -> Value {
    let origin = trace.origin_ns();
    let us = |ns: i64| (ns - origin) as f64 / 1e3;
    let mut events = vec![
        meta("process_name", HOST_PID, None, json!({"name": "xpu-workbench (host)"})),
        meta("process_sort_index", HOST_PID, None, json!({"sort_index": 0})),
        meta("process_name", DEVICE_PID, None, json!({"name": format!("{}: {}", trace.backend, trace.device)})),
        meta("process_sort_index", DEVICE_PID, None, json!({"sort_index": 1})),
        meta("thread_name", HOST_PID, Some(FRAMES_TID), json!({"name": "repetitions"})),
    ];
    for (q, name) in trace.queues.iter().enumerate() {
        events.push(meta("thread_name", DEVICE_PID, Some(q as u32 + 1), json!({"name": name})));
    }
    let mut threads: HashMap<&str, u32> = HashMap::new();
    for span in &trace.cpu {
        if !threads.contains_key(span.thread.as_str()) {
            let tid = threads.len() as u32 + 1;
            threads.insert(&span.thread, tid);
            let name = if span.thread.is_empty() { format!("thread {tid}") } else { span.thread.clone() };
            events.push(meta("thread_name", HOST_PID, Some(tid), json!({"name": name})));
        }
    }

    let mut spans: Vec<(u32, u32, i64, Value)> = Vec::new();
    for f in &trace.frames {
        let name = if f.warmup { format!("warm-up {}", f.repetition) } else { format!("repetition {}", f.repetition) };
        let e = json!({"name": name, "cat": "frame", "ph": "X", "ts": us(f.start_ns), "dur": (f.end_ns - f.start_ns).max(0) as f64 / 1e3,
            "pid": HOST_PID, "tid": FRAMES_TID, "args": {"repetition": f.repetition, "warmup": f.warmup}});
        spans.push((HOST_PID, FRAMES_TID, f.start_ns, e));
    }
    for s in &trace.cpu {
        let tid = threads[s.thread.as_str()];
        let e = json!({"name": s.name, "cat": "cpu", "ph": "X", "ts": us(s.start_ns), "dur": s.dur_ns.max(0) as f64 / 1e3,
            "pid": HOST_PID, "tid": tid, "args": {"data": s.data, "location": s.location}});
        spans.push((HOST_PID, tid, s.start_ns, e));
    }
    // Sync and host-fallback steps ran on the host: their own host track, named so, with host
    // time; never on a device queue.
    if !trace.host.is_empty() {
        let tid = threads.len() as u32 + 1;
        events.push(meta("thread_name", HOST_PID, Some(tid), json!({"name": "plan steps on the host (sync, host fallback): host time"})));
        for h in &trace.host {
            let cat = if h.kind == super::HostSpan::SYNC { "sync" } else { "host_fallback" };
            let e = json!({"name": h.label(), "cat": cat, "ph": "X", "ts": us(h.start_ns), "dur": h.dur_ns as f64 / 1e3,
                "pid": HOST_PID, "tid": tid, "args": {"node": h.node, "kind": h.kind, "time": "host", "repetition": h.repetition, "dur_ns": h.dur_ns}});
            spans.push((HOST_PID, tid, h.start_ns, e));
        }
    }
    for k in &trace.kernels {
        let tid = k.queue + 1;
        let l = &k.launch;
        let e = json!({"name": l.node, "cat": "kernel", "ph": "X", "ts": us(k.start_ns), "dur": k.dur_ns as f64 / 1e3,
            "pid": DEVICE_PID, "tid": tid, "args": {
                "kernel": l.kernel, "shapes": l.shapes, "bindings": l.bindings, "global": l.global, "local": l.local,
                "repetition": k.repetition, "dur_ns": k.dur_ns, "device_start_ns": k.device_start_ns}});
        spans.push((DEVICE_PID, tid, k.start_ns, e));
    }
    // Per track in time order; enclosing spans before the ones they contain.
    spans.sort_by_key(|a| (a.0, a.1, a.2));
    events.extend(spans.into_iter().map(|s| s.3));
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "backend": trace.backend,
            "device": trace.device,
            "origin_host_ns": origin,
            "clock_alignment": trace.alignment,
        },
    })
}
