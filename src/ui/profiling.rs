//! The profiler's part of the store: which devices exist, which one is picked, the run in
//! progress and the last result. The run itself is `profile::profile_plan` on a worker.

use std::collections::HashMap;

use egui::Color32;

use super::state::View;
use crate::profile::{LaunchInfo, Trace};
use crate::runtime::{pick_backend, Backend, DeviceReport};

/// Repetitions of an app profile: fewer than the CLI's default, so the reference interpreter
/// answers while the user waits.
pub const OPTIONS: crate::profile::ProfileOptions = crate::profile::ProfileOptions { warmup: 1, repeat: 5 };

/// One row of the per-kernel table.
#[derive(Clone, Debug)]
pub struct KernelRow {
    /// The span's name: the graph node, or fused nodes joined by `+`.
    pub node: String,
    pub median_ns: u64,
    /// Share of the summed medians, in percent.
    pub share: f64,
    pub launch: LaunchInfo,
}

/// One sync or host-fallback step of the plan: host time, not device time.
#[derive(Clone, Debug)]
pub struct HostRow {
    /// `HostSpan::SYNC` or `HostSpan::HOST_FALLBACK`.
    pub kind: &'static str,
    pub node: String,
    pub median_ns: u64,
}

/// A finished profile of one view's graph.
pub struct ProfileResult {
    pub view: View,
    pub trace: Trace,
    /// Sorted by median device time, slowest first.
    pub rows: Vec<KernelRow>,
    /// Steps that ran on the host (sync read-backs, host fallbacks), in run order.
    pub host_rows: Vec<HostRow>,
    /// Mean device time per timed repetition of each graph node (fused kernels charge each node).
    pub node_ns: HashMap<String, u64>,
    pub max_node_ns: u64,
    /// The sum of `node_ns`: what a folded module's share is of.
    pub total_node_ns: u64,
    /// Imported from a torch.profiler trace of a TORCH_TRACE log's run: its node names are those
    /// of the log's dynamo graphs, so the overlay applies to the original and dynamo views.
    pub imported: bool,
    /// The torch.profiler trace it was imported from.
    pub imported_from: Option<std::path::PathBuf>,
    /// Our run's kernels with the original nodes each computes (not for an imported trace).
    pub ours: Option<std::sync::Arc<super::against_inductor::OurRun>>,
}

impl ProfileResult {
    pub fn new(view: View, trace: Trace) -> ProfileResult {
        let medians = trace.node_median_ns();
        let total: u64 = medians.iter().map(|(_, ns)| ns).sum();
        let mut rows: Vec<KernelRow> = medians
            .into_iter()
            .map(|(node, median_ns)| {
                let launch = trace.kernels.iter().find(|k| k.launch.node == node).map(|k| k.launch.clone()).unwrap_or_default();
                let share = if total > 0 { 100.0 * median_ns as f64 / total as f64 } else { 0.0 };
                KernelRow { node, median_ns, share, launch }
            })
            .collect();
        rows.sort_by(|a, b| b.median_ns.cmp(&a.median_ns).then_with(|| a.node.cmp(&b.node)));
        let timed = trace.frames.iter().filter(|f| !f.warmup).count().max(1) as u64;
        let node_ns: HashMap<String, u64> = trace.node_device_ns().into_iter().map(|(n, ns)| (n, ns / timed)).collect();
        let max_node_ns = node_ns.values().copied().max().unwrap_or(0);
        let total_node_ns = node_ns.values().sum();
        let host_rows = trace.host_median_ns().into_iter().map(|(kind, node, median_ns)| HostRow { kind, node, median_ns }).collect();
        ProfileResult { view, trace, rows, host_rows, node_ns, max_node_ns, total_node_ns, imported: false, imported_from: None, ours: None }
    }
}

#[derive(Default)]
pub struct ProfileState {
    /// Every backend with its probe's verdict; empty until the probe (a worker) answers.
    pub devices: Vec<DeviceReport>,
    /// The picked backend; `None` until the probe answers.
    pub device: Option<Backend>,
    /// What the running profile is doing, while one runs.
    pub running: Option<String>,
    /// Bumped per run, so progress and results of a superseded run are dropped.
    pub generation: u64,
    pub result: Option<std::sync::Arc<ProfileResult>>,
    pub error: Option<String>,
    /// Whether the graph views colour nodes by device time.
    pub heat: bool,
    /// Whether the profile panel is shown.
    pub open: bool,
}

impl ProfileState {
    /// Takes the probe's answer and picks the preferred available backend (XPU, OpenCL, reference).
    pub fn set_devices(&mut self, devices: Vec<DeviceReport>) {
        if self.device.is_none() {
            self.device = Some(pick_backend(&devices, None));
        }
        self.devices = devices;
    }

    pub fn device_report(&self) -> Option<&DeviceReport> {
        self.devices.iter().find(|d| Some(d.backend) == self.device)
    }

    /// The heat of `node` of `view` in [0, 1] (`Some(None)`: the profile ran no kernel for it),
    /// or `None` when the overlay is off or the profile is of another view.
    pub fn heat_of(&self, view: View, node: &str) -> Option<Option<f32>> {
        let r = self.result.as_ref().filter(|r| self.heat && (r.view == view || (r.imported && view == View::Dynamo)))?;
        Some(r.node_ns.get(node).map(|ns| if r.max_node_ns == 0 { 0.0 } else { *ns as f32 / r.max_node_ns as f32 }))
    }

    /// A folded module's device time: the sum over its member nodes (`names`) and its share of
    /// the whole run, when the overlay shows `view` and the profile ran a kernel for any of them
    /// (issue 28: a profiled model opens folded, and its boxes must carry the time inside them).
    pub fn group_time<'n>(&self, view: View, names: impl IntoIterator<Item = &'n str>) -> Option<GroupTime> {
        let r = self.result.as_ref().filter(|r| self.heat && (r.view == view || (r.imported && view == View::Dynamo)))?;
        group_time(&r.node_ns, r.total_node_ns, names)
    }

    /// Mean device time of `node` in `view`'s profile, when the overlay shows it.
    pub fn node_ns(&self, view: View, node: &str) -> Option<u64> {
        let r = self.result.as_ref().filter(|r| self.heat && r.view == view)?;
        r.node_ns.get(node).copied()
    }
}

/// What a folded module's box says of the profile: its nodes' summed device time and that sum's
/// share of every node's, in percent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupTime {
    pub ns: u64,
    pub share: f64,
}

impl GroupTime {
    /// "12.345 µs · 40.0 % of device time"
    pub fn text(&self) -> String {
        format!("{} · {:.1} % of device time", micros(self.ns), self.share)
    }
}

/// [`GroupTime`] of the nodes `names` under `node_ns` (mean device time per node, a fused kernel
/// charged to each of its nodes as the per-node overlay does); `None` when none of them ran one.
pub fn group_time<'n>(node_ns: &HashMap<String, u64>, total_ns: u64, names: impl IntoIterator<Item = &'n str>) -> Option<GroupTime> {
    let mut ran = false;
    let mut ns = 0u64;
    for n in names {
        if let Some(t) = node_ns.get(n) {
            ran = true;
            ns = ns.saturating_add(*t);
        }
    }
    ran.then(|| GroupTime { ns, share: if total_ns == 0 { 0.0 } else { 100.0 * ns as f64 / total_ns as f64 } })
}

/// The overlay's colour ramp: muted green (cold) through yellow to red (the slowest node). Its cold
/// end is unlike every class colour, so an overlaid graph is not read as "decomposed".
pub fn heat_color(t: f32) -> Color32 {
    let stops: [(f32, [f32; 3]); 4] =
        [(0.0, [60.0, 100.0, 70.0]), (0.4, [120.0, 160.0, 50.0]), (0.7, [225.0, 190.0, 40.0]), (1.0, [220.0, 40.0, 30.0])];
    let t = t.clamp(0.0, 1.0);
    let i = stops.iter().rposition(|(s, _)| *s <= t).unwrap_or(0).min(stops.len() - 2);
    let ((s0, c0), (s1, c1)) = (stops[i], stops[i + 1]);
    let f = ((t - s0) / (s1 - s0)).clamp(0.0, 1.0);
    let mix = |k: usize| (c0[k] + (c1[k] - c0[k]) * f) as u8;
    Color32::from_rgb(mix(0), mix(1), mix(2))
}

/// Fill of a node the profile ran no kernel for (a view, a fallback, a meta op).
pub const NO_KERNEL_FILL: Color32 = Color32::from_rgb(70, 70, 76);

/// `12.345 µs`
pub fn micros(ns: u64) -> String {
    format!("{:.3} µs", ns as f64 / 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_ramp_runs_cold_to_hot() {
        assert_eq!(heat_color(0.0), Color32::from_rgb(60, 100, 70));
        assert_eq!(heat_color(1.0), Color32::from_rgb(220, 40, 30));
        assert_eq!(heat_color(2.0), heat_color(1.0));
    }

    #[test]
    fn a_modules_time_sums_its_nodes_and_says_its_share() {
        let ns: HashMap<String, u64> = [("a", 3_000), ("b", 1_000), ("c", 4_000)].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let t = group_time(&ns, 8_000, ["a", "b", "view_without_kernel"]).unwrap();
        assert_eq!(t, GroupTime { ns: 4_000, share: 50.0 });
        assert_eq!(t.text(), "4.000 µs · 50.0 % of device time");
        assert_eq!(group_time(&ns, 8_000, ["view_without_kernel"]), None, "no kernel ran: no time, not zero");
        assert_eq!(group_time(&ns, 0, ["a"]).unwrap().share, 0.0);
    }
}
