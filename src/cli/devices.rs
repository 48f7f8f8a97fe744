//! `devices`: every backend, its device or the probe's reason why there is none.

use std::process::ExitCode;

use serde_json::{json, Map, Value};

use crate::runtime::{pick_backend, probe_all, DeviceReport};

/// `{"backend", "name", "available", "reason"}` followed by the device's info fields, flat.
pub fn report_json(report: &DeviceReport) -> Value {
    let mut row = Map::new();
    row.insert("backend".into(), json!(report.backend.name()));
    row.insert("name".into(), json!(report.name));
    row.insert("available".into(), json!(report.available));
    row.insert("reason".into(), json!(report.reason));
    if let Some(info) = &report.info {
        if let Ok(Value::Object(fields)) = serde_json::to_value(info) {
            for (k, v) in fields {
                row.entry(k).or_insert(v);
            }
        }
    }
    Value::Object(row)
}

pub fn run(json: bool) -> ExitCode {
    let reports = probe_all();
    if json {
        super::print_json(&Value::Array(reports.iter().map(report_json).collect()));
        return ExitCode::SUCCESS;
    }
    let picked = pick_backend(&reports, None);
    println!("{:<2}{:<11} {:<9} device / reason", "", "backend", "status");
    for r in &reports {
        let mark = if r.backend == picked { "*" } else { "" };
        let (status, detail) = match (&r.info, &r.reason) {
            (Some(info), _) => (
                "ok",
                format!(
                    "{} ({} compute units, {} MiB, timer {} ns/tick)",
                    info.name,
                    info.compute_units,
                    info.global_mem_bytes >> 20,
                    info.timer_resolution_ns
                ),
            ),
            (None, reason) => ("missing", reason.clone().unwrap_or_default()),
        };
        println!("{mark:<2}{:<11} {status:<9} {detail}", r.backend.name());
    }
    println!("\n* = the device `--device auto` uses");
    ExitCode::SUCCESS
}
