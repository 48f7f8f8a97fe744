//! Profiling a lowered plan on one backend: what the `profile` command and the app's profile
//! panel both call, so the two cannot disagree about what was measured.
//!
//! On a kernel-running device the plan's SPIR-V is built and launched through a
//! [`TracingDevice`], and kernel spans come from the device's timestamps. On the reference
//! interpreter there are no kernels: each kernel step is interpreted and its host time stands in
//! for device time, on a queue named so, so that a machine with no runtime still gets a timeline.

use std::collections::{BTreeMap, HashMap};

use super::{profile_captured, CpuCapture, DeviceSpan, Frame, HostSpan, LaunchInfo, ProfileOptions, Trace};
use crate::exec::Tensor;
use crate::ir::{Model, ValueKind};
use crate::lower::Plan;
use crate::runtime::plan::{build_modules, compile_plan, release_modules, run_resident, HostPhases, Resident, RunError, StepRun};
use crate::runtime::reference::run_reference;
use crate::runtime::{open, reference_info, Backend};
use crate::sym::Bindings;

/// A profiled run of a plan.
pub struct PlanProfile {
    pub trace: Trace,
    /// The plan runner's own sum of its kernels' times, per timed repetition: a second account
    /// of the device time that the trace's spans must agree with.
    pub run_device_ns: Vec<u64>,
    /// Wall time of each timed repetition: one whole forward as a user waits for it (uploads,
    /// launches, host steps, syncs, read-back), the driver's build of the modules left out.
    pub run_wall_ns: Vec<u64>,
    /// Where each timed repetition's wall time went on the host ([`HostPhases`]); empty on
    /// the reference interpreter, whose steps are all host time.
    pub run_phases: Vec<HostPhases>,
}

/// What each kernel of the plan is, for its spans: graph nodes, tensor shapes under the
/// bindings (by the graph value each buffer parameter holds), and the bindings.
pub fn launch_labels(plan: &Plan, b: &Bindings) -> HashMap<String, LaunchInfo> {
    let graph = &plan.graph;
    let bindings: BTreeMap<String, i64> = b.iter().map(|(k, v)| (k.to_string(), v)).collect();
    plan.steps
        .iter()
        .filter_map(|step| {
            let k = step.kernel()?;
            // Kernels of an expanded node are its own: the span names the user's node.
            let nodes = plan.step_names(step);
            let shapes = k
                .buffers
                .iter()
                .filter_map(|p| {
                    let ValueKind::Tensor(t) = &graph.value(graph.value_id(&p.value)?).kind else { return None };
                    let shape = t.sizes.iter().map(|e| e.eval_int(b).ok()).collect::<Option<Vec<i64>>>()?;
                    Some((p.value.clone(), shape))
                })
                .collect();
            // A sync step's size kernel is named apart from the node's own kernels, and still
            // charged to the node in the heat overlay.
            let (node, nodes) = match step {
                crate::lower::Step::Sync { .. } => (format!("{} · sizes", nodes.join("+")), nodes),
                _ if nodes.is_empty() => (k.name.clone(), Vec::new()),
                _ if nodes.len() > 1 => (nodes.join("+"), nodes),
                _ => (nodes.join("+"), Vec::new()),
            };
            let info = LaunchInfo { node, nodes, kernel: k.name.clone(), shapes, bindings: bindings.clone(), ..Default::default() };
            Some((k.name.clone(), info))
        })
        .collect()
}

/// Runs `plan` `options.warmup + options.repeat` times on `backend` and returns the trace.
/// `capture` was started by the caller (before import, for the CLI) so that the trace also holds
/// what ran before; `progress` hears what is happening, for a progress line.
#[allow(clippy::too_many_arguments)]
pub fn profile_plan(
    capture: CpuCapture,
    backend: Backend,
    plan: &Plan,
    model: &Model,
    inputs: &[Tensor],
    bindings: &Bindings,
    options: ProfileOptions,
    progress: &mut dyn FnMut(String),
) -> Result<PlanProfile, RunError> {
    let labels = launch_labels(plan, bindings);
    let total = options.warmup + options.repeat;
    if backend == Backend::Reference {
        return profile_reference(capture, plan, model, inputs, bindings, options, &labels, progress);
    }
    progress(format!("generating {} kernels", plan.kernel_count()));
    let modules = compile_plan(plan)?;
    progress(format!("opening the {} device", backend.name()));
    let mut device = open(backend)?;
    let (mut run_device_ns, mut run_wall_ns, mut run_phases) = (Vec::new(), Vec::new(), Vec::new());
    let mut host = Vec::new();
    // Built and uploaded once, in the first (warm-up) repetition: each timed repetition is a
    // forward as a serving loop runs it, modules built and weights resident (as torch's), so
    // its wall time holds launches, input uploads, host steps and read-back, not model loading.
    let mut built: Option<(HashMap<String, crate::runtime::ProgramId>, Resident)> = None;
    let traced = profile_captured::<RunError>(capture, device.as_mut(), options, |dev, repetition| {
        progress(format!("repetition {} of {total}", repetition + 1));
        dev.set_labels(labels.clone());
        if built.is_none() {
            let programs = build_modules(dev, &modules)?;
            match Resident::upload(dev, model, plan) {
                Ok(weights) => built = Some((programs, weights)),
                Err(e) => {
                    let _ = release_modules(dev, &programs);
                    return Err(e);
                }
            }
        }
        let Some((programs, weights)) = &built else { return Err(RunError::Input("the modules were not built".into())) };
        let run = run_resident(dev, plan, programs, weights, inputs, bindings, &crate::exec::Generator::default(), std::time::Instant::now())?;
        host.extend(host_spans(&run.steps, repetition));
        if repetition >= options.warmup {
            run_device_ns.push(run.total_device_ns);
            run_wall_ns.push(run.wall_ns);
            run_phases.push(run.phases);
        }
        Ok(())
    });
    let released = match &built {
        Some((programs, weights)) => release_modules(device.as_mut(), programs).and_then(|()| weights.release(device.as_mut())),
        None => Ok(()),
    };
    let mut trace = traced?;
    released?;
    trace.host = host;
    Ok(PlanProfile { trace, run_device_ns, run_wall_ns, run_phases })
}

/// The host part of a run's sync and host steps, as spans of repetition `repetition`.
fn host_spans(steps: &[StepRun], repetition: u32) -> Vec<HostSpan> {
    steps
        .iter()
        .filter(|s| s.host_ns > 0 || s.kind == "host")
        .map(|s| HostSpan {
            kind: if s.kind == "sync" { HostSpan::SYNC } else { HostSpan::HOST_FALLBACK },
            node: s.nodes.join("+"),
            repetition,
            start_ns: s.host_start_ns,
            dur_ns: s.host_ns,
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn profile_reference(
    capture: CpuCapture,
    plan: &Plan,
    model: &Model,
    inputs: &[Tensor],
    bindings: &Bindings,
    options: ProfileOptions,
    labels: &HashMap<String, LaunchInfo>,
    progress: &mut dyn FnMut(String),
) -> Result<PlanProfile, RunError> {
    capture.new_frame();
    let total = options.warmup + options.repeat;
    let (mut kernels, mut frames, mut run_device_ns, mut host) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut run_wall_ns = Vec::new();
    for repetition in 0..total {
        progress(format!("repetition {} of {total} (reference interpreter)", repetition + 1));
        let start_ns = puffin::now_ns();
        let run = {
            puffin::profile_scope!("repetition", repetition.to_string());
            run_reference(plan, model, inputs, bindings)?
        };
        host.extend(host_spans(&run.steps, repetition));
        for s in run.steps.into_iter().filter(|s| s.kind != "host") {
            let launch = labels.get(&s.name).cloned().unwrap_or_else(|| LaunchInfo {
                node: s.nodes.join("+"),
                kernel: s.name.clone(),
                ..Default::default()
            });
            kernels.push(DeviceSpan {
                launch,
                queue: 0,
                repetition,
                start_ns: s.host_start_ns,
                dur_ns: s.device_ns,
                device_start_ns: s.host_start_ns.max(0) as u64,
            });
        }
        let warmup = repetition < options.warmup;
        if !warmup {
            run_device_ns.push(run.total_device_ns);
            run_wall_ns.push(run.wall_ns);
        }
        frames.push(Frame { repetition, warmup, start_ns, end_ns: puffin::now_ns() });
        capture.new_frame();
    }
    let info = reference_info();
    let trace = Trace {
        backend: info.backend.to_string(),
        device: info.name.clone(),
        queues: vec![format!("{} (host time stands in for device time)", info.name)],
        cpu: capture.stop(),
        kernels,
        host,
        frames,
        alignment: None,
    };
    Ok(PlanProfile { trace, run_device_ns, run_wall_ns, run_phases: Vec::new() })
}
