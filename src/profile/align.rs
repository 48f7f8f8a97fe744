//! Putting device timestamps on the host clock (see [`ClockAlignment`] for the reasoning).

use super::trace::ClockAlignment;
use crate::runtime::KernelTiming;

/// What the host knows about one launch's place in time.
#[derive(Clone, Copy, Debug)]
pub struct LaunchTimes {
    /// Host time taken just before the launch was enqueued.
    pub host_enqueue_ns: i64,
    /// Host time taken just after the first sync point (`finish`, `read`) that followed it;
    /// `None` when its timing was read without one.
    pub host_synced_ns: Option<i64>,
    pub device: KernelTiming,
}

/// The offset that puts every launch after its enqueue and before its sync point, or `None`
/// when there is nothing to align.
pub fn align(launches: &[LaunchTimes]) -> Option<ClockAlignment> {
    let lower = launches.iter().map(|l| l.host_enqueue_ns.saturating_sub(l.device.start_ns as i64)).max()?;
    let upper = launches
        .iter()
        .filter_map(|l| l.host_synced_ns.map(|h| h.saturating_sub(l.device.end_ns as i64)))
        .min();
    let (upper, offset) = match upper {
        Some(upper) if lower <= upper => (upper, lower + (upper - lower) / 2),
        // Inconsistent bounds (drifting clocks): the sync point at least keeps kernels before the
        // moment the host saw them done.
        Some(upper) => (upper, upper),
        // No sync point: kernels start no earlier than enqueued, so align on that bound.
        None => (i64::MAX, lower),
    };
    Some(ClockAlignment { offset_ns: offset, lower_ns: lower, upper_ns: upper })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(enqueue: i64, synced: Option<i64>, start: u64, end: u64) -> LaunchTimes {
        LaunchTimes { host_enqueue_ns: enqueue, host_synced_ns: synced, device: KernelTiming { start_ns: start, end_ns: end } }
    }

    #[test]
    fn takes_the_middle_of_the_feasible_offsets() {
        // Device clock = host clock - 1000, with 10 ns of slack on each side.
        let l = [launch(1000, Some(1200), 10, 100), launch(1100, Some(1200), 100, 190)];
        let a = align(&l).unwrap();
        assert_eq!((a.lower_ns, a.upper_ns), (1000, 1010));
        assert_eq!(a.offset_ns, 1005);
        assert_eq!(a.error_ns(), Some(5));
        for x in &l {
            let start = x.device.start_ns as i64 + a.offset_ns;
            assert!(start >= x.host_enqueue_ns && x.device.end_ns as i64 + a.offset_ns <= 1200);
        }
    }

    #[test]
    fn inconsistent_bounds_fall_back_to_the_sync_point() {
        let a = align(&[launch(1000, Some(1050), 0, 100)]).unwrap();
        assert_eq!(a.offset_ns, 950);
        assert_eq!(a.error_ns(), None);
        assert!(align(&[]).is_none());
        assert_eq!(align(&[launch(500, None, 100, 200)]).unwrap().offset_ns, 400);
    }
}
