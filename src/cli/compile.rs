//! `compile` and `run`: lower a model under a decomposition mode, write its SPIR-V kernels, or
//! run them on a device (reference interpreter, OpenCL, Level Zero) and check the numerics.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value};

use super::{fail, fail_pipeline, CompileArgs, Lowering, RunArgs, EXIT_FAILED, EXIT_USAGE};
use crate::codegen::spirv;
use crate::decomp::Mode;
use crate::exec;
use crate::lower::{self, Plan};
use crate::pipeline::{self, Lowered};
use crate::runtime::plan::compile_plan;
use crate::runtime::Backend;
use crate::shapes::{parse_binding, resolve_bindings};
use crate::sym::Bindings;

/// The model of a lowering subcommand, lowered as its arguments say.
fn lower(a: &Lowering) -> Result<Lowered, ExitCode> {
    lower_file(&a.file, &a.mode, &a.marks)
}

/// `--mode` parsed, then [`pipeline::lower_file`].
pub fn lower_file(file: &Path, mode: &str, marks: &[String]) -> Result<Lowered, ExitCode> {
    let mode = Mode::parse(mode).ok_or_else(|| fail(EXIT_USAGE, &format!("unknown --mode `{mode}`: expected none, core, lite or full")))?;
    pipeline::lower_file(file, mode, marks).map_err(|e| fail_pipeline(&e))
}

fn explicit_bindings(binds: &[String]) -> Result<Vec<(String, i64)>, ExitCode> {
    binds.iter().map(|b| parse_binding(b).map_err(|e| fail(EXIT_USAGE, &e))).collect()
}

fn plan_json(plan: &Plan, b: &Bindings) -> Value {
    let steps: Vec<Value> = plan
        .steps
        .iter()
        .filter_map(|s| {
            let nodes = plan.step_names(s);
            if let lower::Step::Host { node } = s {
                // No kernel and no SPIR-V: the interpreter runs it on the host, in host time.
                let target = &plan.graph.node(*node).target;
                return Some(json!({"kind": s.kind(), "name": nodes.join("+"), "nodes": nodes, "target": target, "runs": s.describe(), "time": "host"}));
            }
            let k = s.kernel()?;
            // Per node expanded for lowering that it computes part of: which of its products.
            let mut expanded: Vec<(&lower::Expanded, Vec<&str>)> = Vec::new();
            for n in s.nodes() {
                let Some(x) = plan.expansion_of(n) else { continue };
                let name = plan.graph.node(n).name.as_str();
                match expanded.iter_mut().find(|(y, _)| std::ptr::eq(*y, x)) {
                    Some((_, computes)) => computes.push(name),
                    None => expanded.push((x, vec![name])),
                }
            }
            let expanded: Vec<Value> = expanded
                .into_iter()
                .map(|(x, computes)| json!({"node": x.node, "target": x.target, "note": lower::EXPANDED_NOTE, "computes": computes}))
                .collect();
            let args: Vec<Value> = k.params.iter().map(|p| json!({"expr": p.to_string(), "value": p.eval_int(b).ok()})).collect();
            let grid: Option<i64> = k.domain_sizes.iter().try_fold(1i64, |acc, d| d.eval_int(b).ok().map(|v| acc * v));
            let mut step = json!({
                "kind": s.kind(),
                "name": k.name,
                "nodes": nodes,
                "buffers": k.buffers,
                "size_args": args,
                // A drawing kernel takes the generator's seed and offset (i64) last.
                "rng_args": if k.draws() { vec!["seed", "offset"] } else { Vec::new() },
                "grid": grid,
                "schedule": k.schedule,
                "launch": crate::runtime::plan::launch_grid(k, b).ok().flatten(),
                "spv": format!("{}.spv", k.name),
                "expanded": expanded,
            });
            if let lower::Step::Sync { values, .. } = s {
                step["runs"] = json!(s.describe());
                step["binds"] = json!(values);
            }
            Some(step)
        })
        .collect();
    let expanded: Vec<Value> = plan
        .expanded
        .iter()
        .map(|x| {
            let into: Vec<&str> = x.products.iter().map(|n| plan.graph.node(*n).target.as_str()).collect();
            json!({"node": x.node, "target": x.target, "note": lower::EXPANDED_NOTE, "into": into})
        })
        .collect();
    json!({
        "mode": plan.mode.name(),
        "guards": plan.guards,
        "bindings": b,
        "kernels": plan.kernel_count(),
        "sync_steps": plan.sync_steps(),
        "host_steps": plan.host_steps(),
        "expanded": expanded,
        "steps": steps,
    })
}

/// "12 kernels, 1 sync step, 2 host fallbacks (interpreter)".
fn plan_summary(plan: &Plan) -> String {
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = vec![plural(plan.kernel_count(), "kernel", "kernels")];
    if plan.sync_steps() > 0 {
        parts.push(plural(plan.sync_steps(), "sync step", "sync steps"));
    }
    if plan.host_steps() > 0 {
        parts.push(format!("{} (interpreter)", plural(plan.host_steps(), "host fallback", "host fallbacks")));
    }
    parts.join(", ")
}

pub fn compile(a: &CompileArgs) -> ExitCode {
    let emit = a.emit.as_path();
    let l = match lower(&a.model) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let b = match explicit_bindings(&a.binds).and_then(|e| resolve_bindings(&l.model, &e).map_err(|e| fail(EXIT_USAGE, &e))) {
        Ok(b) => b,
        Err(c) => return c,
    };
    let modules = match compile_plan(&l.plan) {
        Ok(m) => m,
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    if let Err(e) = std::fs::create_dir_all(emit) {
        return fail(EXIT_USAGE, &format!("{}: cannot create: {e}", emit.display()));
    }
    for m in modules.iter().flatten() {
        let w = std::fs::write(emit.join(format!("{}.spv", m.name)), m.to_bytes())
            .and_then(|_| std::fs::write(emit.join(format!("{}.spvasm", m.name)), spirv::disassemble(m)));
        if let Err(e) = w {
            return fail(EXIT_FAILED, &format!("{}: {e}", emit.display()));
        }
    }
    let doc = plan_json(&l.plan, &b);
    if let Err(e) = std::fs::write(emit.join("plan.json"), serde_json::to_string_pretty(&doc).unwrap_or_default()) {
        return fail(EXIT_FAILED, &format!("{}: {e}", emit.display()));
    }
    println!("{} ({} mode) written to {}", plan_summary(&l.plan), l.plan.mode.name(), emit.display());
    for x in &l.plan.expanded {
        println!("  node `{}` ({}): {}, into {} ops", x.node, x.target, lower::EXPANDED_NOTE, x.products.len());
    }
    ExitCode::SUCCESS
}

pub fn run(a: &RunArgs) -> ExitCode {
    let l = match lower(&a.model) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let graph = &l.model.graphs[0];
    let (inputs, bindings) = if a.inputs.is_empty() {
        let b = match explicit_bindings(&a.binds).and_then(|e| resolve_bindings(&l.model, &e).map_err(|e| fail(EXIT_USAGE, &e))) {
            Ok(b) => b,
            Err(c) => return c,
        };
        match pipeline::random_inputs(&l.model, &b, a.seed) {
            Ok(t) => (t, b),
            Err(e) => return fail_pipeline(&e),
        }
    } else {
        let ts = match pipeline::read_inputs(&a.inputs) {
            Ok(ts) => ts,
            Err(e) => return fail_pipeline(&e),
        };
        match exec::infer_bindings(&l.model, graph, &ts) {
            Ok(b) => (ts, b),
            Err(e) => return fail(EXIT_USAGE, &e),
        }
    };
    let gen = exec::Generator::seeded(a.seed);
    // `auto` follows the app's order (XPU, OpenCL, reference): `runtime::pick_backend`.
    let result = Backend::parse(&a.device).and_then(|wanted| pipeline::run_plan_on(wanted, &l, &inputs, &bindings, &gen).map_err(|e| e.to_string()));
    let (device_name, r) = match result {
        Ok(x) => x,
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    let check = if a.check {
        match pipeline::check_run(&l.model, graph, &inputs, &gen, &r.outputs) {
            Ok(c) => Some(c),
            Err(e) => return fail(EXIT_FAILED, &format!("reference interpreter: {e}")),
        }
    } else {
        None
    };
    if let Some(dir) = a.save_outputs.as_deref() {
        if let Err(e) = pipeline::save_outputs(dir, &r.outputs) {
            return fail_pipeline(&e);
        }
    }
    let ok = check.as_ref().is_none_or(|c| c.ok);
    if a.json {
        super::print_json(&json!({
            "device": device_name,
            "mode": l.plan.mode.name(),
            "bindings": bindings,
            "steps": r.steps,
            "total_device_ns": r.total_device_ns,
            "total_host_ns": r.total_host_ns,
            "wall_ns": r.wall_ns,
            "check": check,
        }));
    } else {
        println!("device: {device_name}\nmode: {}  {}", l.plan.mode.name(), plan_summary(&l.plan));
        for s in &r.steps {
            match s.kind {
                "host" => println!("  {:>10} ns  {:<8} {}  [{}]  host fallback (interpreter), host time", s.host_ns, s.kind, s.name, s.nodes.join(", ")),
                "sync" => println!("  {:>10} ns  {:<8} {}  [{}]  + {} ns host: sizes read back", s.device_ns, s.kind, s.name, s.nodes.join(", "), s.host_ns),
                _ => println!("  {:>10} ns  {:<8} {}  [{}]", s.device_ns, s.kind, s.name, s.nodes.join(", ")),
            }
        }
        println!("total device: {} ns, host steps: {} ns, wall: {} ns", r.total_device_ns, r.total_host_ns, r.wall_ns);
        if let Some(c) = &check {
            // Errors as JSON writes them (`1e-7`, `null` for NaN), the same as `--json`.
            println!("check: max_abs_err {} max_rel_err {} ok {}", Value::from(c.max_abs_err), Value::from(c.max_rel_err), c.ok);
            for p in &c.problems {
                println!("  {p}");
            }
            for r in &c.by_rule {
                let why = r.why.as_deref().map(|w| format!(": {w}")).unwrap_or_default();
                println!("  output {} (random) checked by rule: ok {}{why}", r.output, r.ok);
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    }
}
