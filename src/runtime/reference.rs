//! The `reference` device: runs a plan's steps on the CPU interpreter, for machines with no
//! OpenCL or Level Zero runtime, and as the oracle a device run is checked against.

use std::time::Instant;

use super::plan::{load_weights, step_nodes, PlanRun, RunError, StepRun};
use crate::exec::{self, ExecError, Generator, NodeStream, RtValue, Tensor, Values};
use crate::ir::Model;
use crate::lower::Plan;
use crate::sym::Bindings;

/// Runs `plan` on the reference interpreter, step by step: each step's nodes are interpreted
/// (a node inlined into several kernels is computed once), and the step's host time stands in
/// for device time.
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
    let mut steps = Vec::new();
    let mut total = 0;
    for step in &plan.steps {
        let s0 = Instant::now();
        let host_start_ns = puffin::now_ns();
        for n in step.nodes() {
            let node = graph.node(n);
            if node.outputs.iter().all(|o| values.get(*o).is_some()) {
                continue;
            }
            let op = crate::ops::run_fn(&node.target)
                .ok_or_else(|| ExecError::UnsupportedOp { node: node.name.clone(), target: node.target.clone() })?;
            let rng = NodeStream { seed: gen.seed, stream: gen.offset.wrapping_add(streams[n.index()].unwrap_or(0)) };
            let cx = exec::ops::OpCx { node, values: &values, bindings, rng };
            let results = op(&cx).map_err(|e| ExecError::Unsupported { node: node.name.clone(), target: node.target.clone(), message: format!("{e:?}") })?;
            for (o, r) in node.outputs.iter().zip(results) {
                values.set(*o, r);
            }
        }
        if let Some(k) = step.kernel() {
            let ns = s0.elapsed().as_nanos() as u64;
            total += ns;
            steps.push(StepRun { kind: step.kind(), name: k.name.clone(), nodes: step_nodes(plan, step), device_ns: ns, host_start_ns });
        }
    }
    let outputs = exec::outputs(graph, &values)?;
    Ok(PlanRun { outputs, steps, total_device_ns: total, wall_ns: t0.elapsed().as_nanos() as u64 })
}
