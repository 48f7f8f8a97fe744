//! A sweep as JSON (the `sweep --json` document) and as CSV (one row per value and mode).

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::Sweep;

/// `{"dim", "points": [{"value", "mode", "device_us", "bytes", "kernels": [{"name", "median_us"}],
/// "guards": [{"expr", "value"}], "recompiled"}]}`, plus what a reader needs to trust the numbers
/// (device, repetitions, bindings of the other symbols, flips and how they were found, compiles).
pub fn to_json(s: &Sweep) -> Value {
    let compiles: serde_json::Map<String, Value> = s.compiles.iter().map(|(m, n)| (m.to_string(), json!(n))).collect();
    json!({
        "dim": s.dim.symbol,
        "range": [s.dim.lo, s.dim.hi],
        "bindings": s.bindings,
        "backend": s.backend,
        "device": s.device,
        "warmup": s.warmup,
        "repeat": s.repeat,
        "budget_ms": s.budget_ms,
        "flips": s.flips,
        "flip_search": s.flip_search,
        "compiles": compiles,
        "points": s.points,
    })
}

/// Quotes a CSV field when it needs it (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One row per value and mode; a `guard:EXPR` column per guard (1/0, empty when it cannot be
/// evaluated) and a `kernel:NAME` column per kernel of any mode (median µs, empty where that
/// mode has no such kernel).
pub fn to_csv(s: &Sweep) -> String {
    let mut kernels: Vec<&str> = Vec::new();
    for p in &s.points {
        for k in &p.kernels {
            if !kernels.contains(&k.name.as_str()) {
                kernels.push(&k.name);
            }
        }
    }
    let guards: Vec<&str> = s.points.first().map(|p| p.guards.iter().map(|g| g.expr.as_str()).collect()).unwrap_or_default();
    let mut out = String::new();
    let mut header = vec![s.dim.symbol.clone(), "mode".into(), "device_us".into(), "bytes_read".into(), "bytes_written".into()];
    header.extend(["gb_per_s", "kernels_launched", "repetitions", "recompiled", "host_us"].map(String::from));
    header.extend(guards.iter().map(|g| format!("guard:{g}")));
    header.extend(kernels.iter().map(|k| format!("kernel:{k}")));
    let _ = writeln!(out, "{}", header.iter().map(|h| field(h)).collect::<Vec<_>>().join(","));
    for p in &s.points {
        let mut row = vec![
            p.value.to_string(),
            p.mode.to_string(),
            format!("{:.3}", p.device_us),
            p.bytes_read.to_string(),
            p.bytes_written.to_string(),
            format!("{:.3}", p.gb_per_s),
            p.kernels_launched.to_string(),
            p.repetitions.to_string(),
            u8::from(p.recompiled).to_string(),
            format!("{:.3}", p.host_us),
        ];
        row.extend(p.guards.iter().map(|g| g.value.map_or(String::new(), |v| u8::from(v).to_string())));
        for k in &kernels {
            row.push(p.kernels.iter().find(|x| x.name == *k).map_or(String::new(), |x| format!("{:.3}", x.median_us)));
        }
        let _ = writeln!(out, "{}", row.join(","));
    }
    out
}
