//! Where a forward's wall time goes on the host, phase by phase: the plan runner adds each
//! phase's host-clock time as it runs, so `profile` can say how much of a forward is waiting
//! for the device and how much is our own work between kernels (issue 28).

use std::time::Instant;

use serde::Serialize;

/// Host-clock nanoseconds a forward spent in each phase. The phases do not overlap; what the
/// wall time holds beyond their sum is the runner's own bookkeeping between them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HostPhases {
    /// Buffers for values kernels write: taken from the pool or allocated on the device.
    pub alloc_ns: u64,
    /// Host tensors (inputs, host steps' results, weights not resident) given a buffer and
    /// written to the device.
    pub upload_ns: u64,
    /// Kernel launches: arguments and grid evaluated under the bindings, and the enqueue.
    pub launch_ns: u64,
    /// Of `launch_ns`, the time inside the device's launch call (arguments set, kernel
    /// enqueued); the rest is the runner's own work per launch. Not a phase of its own.
    pub enqueue_ns: u64,
    /// Host steps: the wait for the queue, read-back, interpreter and hand-over.
    pub host_steps_ns: u64,
    /// Sync steps: the wait for the queue and the read-back of the sizes.
    pub syncs_ns: u64,
    /// The wait at the end for every kernel still queued: device time the host did not hide.
    pub finish_ns: u64,
    /// Outputs read back to the host.
    pub read_back_ns: u64,
    /// The run's buffers given back to the pool (and what it no longer needs freed).
    pub release_ns: u64,
    /// Launches (kernel steps that had work; empty outputs launch nothing).
    pub launches: u32,
    /// Buffers taken from the pool without a device allocation, and allocated on the device.
    pub buffers_reused: u32,
    pub buffers_allocated: u32,
}

impl HostPhases {
    /// The sum of the timed phases.
    pub fn total_ns(&self) -> u64 {
        self.alloc_ns + self.upload_ns + self.launch_ns + self.host_steps_ns + self.syncs_ns + self.finish_ns + self.read_back_ns + self.release_ns
    }

    /// Every phase but the final wait for the queue. Host and sync steps count whole: their
    /// own waits for the queue are not split out.
    pub fn host_work_ns(&self) -> u64 {
        self.total_ns() - self.finish_ns
    }

    /// The nanoseconds since `since`, added to the phase `field` picks.
    pub fn add(&mut self, field: fn(&mut HostPhases) -> &mut u64, since: Instant) {
        *field(self) += since.elapsed().as_nanos() as u64;
    }

    /// Per field, the median over runs (the upper one of an even count); counts too.
    pub fn median(runs: &[HostPhases]) -> HostPhases {
        fn med<T: Copy + Ord + Default>(runs: &[HostPhases], f: impl Fn(&HostPhases) -> T) -> T {
            let mut v: Vec<T> = runs.iter().map(f).collect();
            v.sort_unstable();
            v.get(v.len() / 2).copied().unwrap_or_default()
        }
        HostPhases {
            alloc_ns: med(runs, |p| p.alloc_ns),
            upload_ns: med(runs, |p| p.upload_ns),
            launch_ns: med(runs, |p| p.launch_ns),
            enqueue_ns: med(runs, |p| p.enqueue_ns),
            host_steps_ns: med(runs, |p| p.host_steps_ns),
            syncs_ns: med(runs, |p| p.syncs_ns),
            finish_ns: med(runs, |p| p.finish_ns),
            read_back_ns: med(runs, |p| p.read_back_ns),
            release_ns: med(runs, |p| p.release_ns),
            launches: med(runs, |p| p.launches),
            buffers_reused: med(runs, |p| p.buffers_reused),
            buffers_allocated: med(runs, |p| p.buffers_allocated),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_are_per_field_and_host_work_leaves_out_the_final_wait() {
        let run = |launch_ns, finish_ns| HostPhases { launch_ns, finish_ns, alloc_ns: 5, launches: 3, ..HostPhases::default() };
        let m = HostPhases::median(&[run(10, 300), run(30, 100), run(20, 200)]);
        assert_eq!((m.launch_ns, m.finish_ns, m.alloc_ns, m.launches), (20, 200, 5, 3));
        assert_eq!((m.total_ns(), m.host_work_ns()), (225, 25));
        assert_eq!(HostPhases::median(&[]), HostPhases::default());
    }
}
