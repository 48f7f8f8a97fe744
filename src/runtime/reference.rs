//! The `reference` device: runs a plan's steps on the CPU interpreter, for machines with no
//! OpenCL or Level Zero runtime, and as the oracle a device run is checked against.

use std::time::Instant;

use super::host::RunScalars;
use super::plan::{load_weights, step_nodes, PlanRun, RunError, StepRun};
use crate::exec::{self, Generator, RtValue, Tensor, Values};
use crate::ir::Model;
use crate::lower::{Plan, Step};
use crate::sym::Bindings;

/// Runs `plan` on the reference interpreter, step by step: each step's nodes are interpreted
/// (a node inlined into several kernels is computed once), and the step's host time stands in
/// for device time. A host step's time is reported as host time, as on a device; a sync step
/// computes its node and binds the unbacked symbols the outputs reveal, so the run ends with
/// the same bindings a device run would.
pub fn run_reference(plan: &Plan, model: &Model, inputs: &[Tensor], bindings: &Bindings) -> Result<PlanRun, RunError> {
    run_reference_with(plan, model, inputs, bindings, &Generator::default())
}

/// [`run_reference`], random ops drawing from `gen` with the streams the plan's kernels use.
pub fn run_reference_with(plan: &Plan, model: &Model, inputs: &[Tensor], bindings: &Bindings, gen: &Generator) -> Result<PlanRun, RunError> {
    let t0 = Instant::now();
    let graph = &plan.graph;
    let mut values = Values::new(graph);
    for (v, t) in load_weights(model, graph)? {
        values.set(v, RtValue::Tensor(t));
    }
    for (v, t) in exec::user_inputs(graph).into_iter().zip(inputs) {
        values.set(v, RtValue::Tensor(t.clone()));
    }
    let streams = crate::ops::rng::streams(graph);
    let mut scalars = RunScalars::new(bindings);
    let mut steps = Vec::new();
    for step in &plan.steps {
        let s0 = Instant::now();
        let host_start_ns = puffin::now_ns();
        for n in step.nodes() {
            let node = graph.node(n);
            if node.outputs.iter().all(|o| values.get(*o).is_some()) && !node.outputs.is_empty() {
                continue;
            }
            let results = exec::run_node(graph, node, &values, &scalars.bindings, gen.stream(streams[n.index()]))?;
            scalars.bind_outputs(graph, node, &results)?;
            for (o, r) in node.outputs.iter().zip(results) {
                values.set(*o, r);
            }
        }
        let ns = s0.elapsed().as_nanos() as u64;
        let (device_ns, host_ns) = if matches!(step, Step::Host { .. }) { (0, ns) } else { (ns, 0) };
        let name = match step.kernel() {
            Some(k) => k.name.clone(),
            None if matches!(step, Step::Host { .. }) => step_nodes(plan, step).join("+"),
            None => continue,
        };
        steps.push(StepRun { kind: step.kind(), name, nodes: step_nodes(plan, step), device_ns, host_ns, host_start_ns });
    }
    let outputs = exec::outputs(graph, &values)?;
    Ok(PlanRun {
        outputs,
        total_device_ns: steps.iter().map(|s| s.device_ns).sum(),
        total_host_ns: steps.iter().map(|s| s.host_ns).sum(),
        steps,
        wall_ns: t0.elapsed().as_nanos() as u64,
        // No device: the interpreter's time is all host time, reported per step above.
        phases: super::plan::HostPhases::default(),
        bindings: scalars.bindings,
    })
}
