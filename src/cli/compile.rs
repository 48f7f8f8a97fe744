//! `compile` and `run`: lower a model under a decomposition mode, write its SPIR-V kernels, or
//! run them on a device (reference interpreter, OpenCL, Level Zero) and check the numerics.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value};

use super::{fail, CompileArgs, Lowering, RunArgs, EXIT_FAILED, EXIT_USAGE};
use crate::codegen::spirv;
use crate::decomp::{Marks, Mode};
use crate::exec::{self, Tensor};
use crate::ir::Model;
use crate::lower::{self, Plan};
use crate::npy;
use crate::runtime::plan::{compile_plan, run_on_device_with, PlanRun};
use crate::runtime::{open, pick_backend, probe_all, reference, Backend, Device};
use crate::shapes::{parse_binding, resolve_bindings};
use crate::sym::Bindings;

/// What `compile` and `run` share: the model, its graph lowered under a mode.
pub struct Lowered {
    pub model: Model,
    pub plan: Plan,
}

/// The model of a lowering subcommand, lowered as its arguments say.
fn lower(a: &Lowering) -> Result<Lowered, ExitCode> {
    lower_file(&a.file, &a.mode, &a.marks)
}

pub fn lower_file(file: &Path, mode: &str, marks: &[String]) -> Result<Lowered, ExitCode> {
    let mode = Mode::parse(mode).ok_or_else(|| fail(EXIT_USAGE, &format!("unknown --mode `{mode}`: expected none, core, lite or full")))?;
    let model = super::load(file)?;
    let graph = model.graphs.first().ok_or_else(|| fail(EXIT_USAGE, &format!("{}: the model has no graph", file.display())))?;
    let marks = Marks::parse(marks).map_err(|e| fail(EXIT_USAGE, &e))?;
    marks.check_against(graph).map_err(|e| fail(EXIT_USAGE, &e))?;
    let plan = lower::lower(&model, graph, mode, &marks).map_err(|e| fail(EXIT_FAILED, &e))?;
    Ok(Lowered { model, plan })
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

/// Random user inputs of the shapes `b` gives the model's first graph's inputs.
pub fn random_inputs(model: &Model, b: &Bindings, seed: u64) -> Result<Vec<Tensor>, String> {
    let graph = model.graphs.first().ok_or("the model has no graph")?;
    exec::random_inputs(graph, b, seed)
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
        match random_inputs(&l.model, &b, a.seed) {
            Ok(t) => (t, b),
            Err(e) => return fail(EXIT_USAGE, &e),
        }
    } else {
        let mut ts = Vec::new();
        for p in &a.inputs {
            match npy::read(p).and_then(|x| {
                Tensor::from_le_bytes(x.dtype, &x.shape, &x.data).map_err(|message| npy::NpyError::Format { file: p.display().to_string(), message })
            }) {
                Ok(t) => ts.push(t),
                Err(e) => return fail(EXIT_USAGE, &e),
            }
        }
        match exec::infer_bindings(&l.model, graph, &ts) {
            Ok(b) => (ts, b),
            Err(e) => return fail(EXIT_USAGE, &e),
        }
    };
    let gen = exec::Generator::seeded(a.seed);
    let result = run_plan_on(&a.device, &l, &inputs, &bindings, &gen);
    let (device_name, r) = match result {
        Ok(x) => x,
        Err(e) => return fail(EXIT_FAILED, &e),
    };
    let check = if a.check {
        match exec::run_seeded(&l.model, graph, &inputs, &gen) {
            Ok(want) => Some(super::check::check(graph, &r.outputs, &want)),
            Err(e) => return fail(EXIT_FAILED, &format!("reference interpreter: {e}")),
        }
    } else {
        None
    };
    if let Some(dir) = a.save_outputs.as_deref() {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return fail(EXIT_USAGE, &format!("{}: cannot create: {e}", dir.display()));
        }
        for (i, t) in r.outputs.iter().enumerate() {
            let arr = npy::NpyArray { dtype: t.dtype(), shape: t.shape().to_vec(), data: t.to_le_bytes() };
            if let Err(e) = npy::write(&dir.join(format!("out{i}.npy")), &arr) {
                return fail(EXIT_FAILED, &e);
            }
        }
    }
    let ok = check.as_ref().is_none_or(|c| c["ok"] == json!(true));
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
            println!("check: max_abs_err {} max_rel_err {} ok {}", c["max_abs_err"], c["max_rel_err"], c["ok"]);
            for p in c["problems"].as_array().into_iter().flatten().filter_map(|p| p.as_str()) {
                println!("  {p}");
            }
            for r in c["by_rule"].as_array().into_iter().flatten() {
                let why = r["why"].as_str().map(|w| format!(": {w}")).unwrap_or_default();
                println!("  output {} (random) checked by rule: ok {}{why}", r["output"], r["ok"]);
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    }
}

/// Runs the lowered plan on the named device, random ops drawing from `gen`; the device's name
/// comes back with the run.
pub fn run_plan_on(device: &str, l: &Lowered, inputs: &[Tensor], b: &Bindings, gen: &exec::Generator) -> Result<(String, PlanRun), String> {
    // `auto` follows the app's order (XPU, OpenCL, reference): `runtime::pick_backend`.
    let backend = pick_backend(&probe_all(), Backend::parse(device)?);
    if backend == Backend::Reference {
        let r = reference::run_reference_with(&l.plan, &l.model, inputs, b, gen).map_err(|e| e.to_string())?;
        return Ok(("reference (CPU interpreter)".into(), r));
    }
    let mut dev: Box<dyn Device> = open(backend).map_err(|e| e.to_string())?;
    let modules = compile_plan(&l.plan).map_err(|e| e.to_string())?;
    let name = format!("{} ({})", dev.info().name, dev.info().backend);
    let r = run_on_device_with(dev.as_mut(), &l.plan, &modules, &l.model, inputs, b, gen).map_err(|e| e.to_string())?;
    Ok((name, r))
}
