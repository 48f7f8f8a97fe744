//! A validator for the Chrome trace-event JSON format ("Trace Event Format", the JSON object
//! form), checking what Perfetto and chrome://tracing rely on for the events we write.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

fn num(e: &Value, key: &str) -> Result<f64, String> {
    e[key].as_f64().ok_or_else(|| format!("`{key}` must be a number in {e}"))
}

fn id(e: &Value, key: &str) -> Result<u64, String> {
    e[key].as_u64().ok_or_else(|| format!("`{key}` must be a non-negative integer in {e}"))
}

/// Checks the document and returns the complete (`X`) events, grouped by (pid, tid) in file order.
pub fn validate(doc: &Value) -> Result<BTreeMap<(u64, u64), Vec<Value>>, String> {
    let obj = doc.as_object().ok_or("the document must be a JSON object")?;
    let events = obj.get("traceEvents").and_then(Value::as_array).ok_or("`traceEvents` must be an array")?;
    if let Some(unit) = obj.get("displayTimeUnit") {
        if !matches!(unit.as_str(), Some("ns" | "ms")) {
            return Err(format!("`displayTimeUnit` must be \"ns\" or \"ms\", not {unit}"));
        }
    }
    let mut tracks: BTreeMap<(u64, u64), Vec<Value>> = BTreeMap::new();
    let mut process_names = BTreeSet::new();
    let mut thread_names = BTreeSet::new();
    for e in events {
        let ph = e["ph"].as_str().ok_or_else(|| format!("`ph` must be a string in {e}"))?;
        if !e["name"].is_string() {
            return Err(format!("`name` must be a string in {e}"));
        }
        let pid = id(e, "pid")?;
        if !e.get("args").is_none_or(Value::is_object) {
            return Err(format!("`args` must be an object in {e}"));
        }
        match ph {
            "X" => {
                let tid = id(e, "tid")?;
                let (ts, dur) = (num(e, "ts")?, num(e, "dur")?);
                if !(ts.is_finite() && dur.is_finite()) || dur < 0.0 {
                    return Err(format!("`ts` must be finite and `dur` finite and non-negative in {e}"));
                }
                if !e.get("cat").is_none_or(Value::is_string) {
                    return Err(format!("`cat` must be a string in {e}"));
                }
                let track = tracks.entry((pid, tid)).or_default();
                if let Some(prev) = track.last() {
                    if ts < prev["ts"].as_f64().unwrap() {
                        return Err(format!("`ts` goes backwards on track ({pid}, {tid}): {prev} then {e}"));
                    }
                }
                track.push(e.clone());
            }
            "M" => {
                let args = e["args"].as_object().ok_or_else(|| format!("metadata without `args`: {e}"))?;
                match e["name"].as_str().unwrap() {
                    "process_name" => {
                        args.get("name").and_then(Value::as_str).ok_or_else(|| format!("no args.name in {e}"))?;
                        process_names.insert(pid);
                    }
                    "thread_name" => {
                        args.get("name").and_then(Value::as_str).ok_or_else(|| format!("no args.name in {e}"))?;
                        thread_names.insert((pid, id(e, "tid")?));
                    }
                    "process_sort_index" | "thread_sort_index" => {
                        args.get("sort_index").and_then(Value::as_i64).ok_or_else(|| format!("no args.sort_index in {e}"))?;
                    }
                    "process_labels" => {}
                    other => return Err(format!("unknown metadata event `{other}`")),
                }
            }
            other => return Err(format!("this validator knows phases X and M, not `{other}`: {e}")),
        }
    }
    for (pid, tid) in tracks.keys() {
        if !process_names.contains(pid) {
            return Err(format!("process {pid} has events but no process_name"));
        }
        if !thread_names.contains(&(*pid, *tid)) {
            return Err(format!("track ({pid}, {tid}) has events but no thread_name"));
        }
    }
    // Slices on one track must nest: a slice that starts inside another ends inside it.
    for (track, spans) in &tracks {
        let mut open: Vec<f64> = Vec::new();
        for e in spans {
            let (ts, end) = (e["ts"].as_f64().unwrap(), e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap());
            while open.last().is_some_and(|&parent_end| parent_end <= ts) {
                open.pop();
            }
            if let Some(&parent_end) = open.last() {
                if end > parent_end + 1e-3 {
                    return Err(format!("on track {track:?}, {e} overlaps the slice it starts in (ending {parent_end})"));
                }
            }
            open.push(end);
        }
    }
    Ok(tracks)
}
