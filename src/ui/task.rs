//! The one staleness check for jobs of which only the latest run counts (a file's load, a view's
//! decomposition or layout, the profile, a log's kernels, the comparison). Starting a run bumps the
//! task's generation counter and captures it in a [`Stamp`]; the job's result comes back as a
//! [`Stamped`] value that can only be read against the counter's current value, so a result of a
//! superseded run is dropped here and cannot be used by forgetting a check.
//!
//! The counters stay plain `u64` fields of the state they belong to (`Pane::generation`,
//! `ProfileState::generation`, …): panels and caches key on them too.

/// The generation a job was started in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp(u64);

impl Stamp {
    /// Starts a new run of the task counted by `generation`: every earlier run is stale from now on.
    pub fn next(generation: &mut u64) -> Stamp {
        *generation += 1;
        Stamp(*generation)
    }

    /// The task's current run, for a follow-up job that belongs to it (lowering the decomposition
    /// a run produced) and must not make the run itself stale.
    pub fn current(generation: u64) -> Stamp {
        Stamp(generation)
    }

    /// `value`, as produced by this run.
    pub fn tag<T>(self, value: T) -> Stamped<T> {
        Stamped { stamp: self, value }
    }
}

/// A job's result with the run it belongs to; read it with [`Stamped::if_current`].
#[derive(Debug)]
pub struct Stamped<T> {
    stamp: Stamp,
    value: T,
}

impl<T> Stamped<T> {
    /// The value when no run of the task started since this one (`generation`: the task's
    /// counter now); `None` when it is stale, and the value is dropped.
    pub fn if_current(self, generation: u64) -> Option<T> {
        (self.stamp.0 == generation).then_some(self.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_latest_run_is_read() {
        let mut generation = 0;
        let first = Stamp::next(&mut generation).tag("first");
        let second = Stamp::next(&mut generation).tag("second");
        assert_eq!(first.if_current(generation), None, "a superseded run's result is dropped");
        assert_eq!(second.if_current(generation), Some("second"));
    }

    #[test]
    fn a_follow_up_belongs_to_the_run_it_follows() {
        let mut generation = 0;
        Stamp::next(&mut generation);
        let follow_up = Stamp::current(generation).tag(1);
        assert_eq!(follow_up.if_current(generation), Some(1));
        let stale_follow_up = Stamp::current(generation).tag(2);
        Stamp::next(&mut generation);
        assert_eq!(stale_follow_up.if_current(generation), None);
    }
}
