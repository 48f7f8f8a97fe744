//! Device buffers kept across forwards, as torch's caching allocator keeps them: a forward's
//! intermediates, inputs and re-uploaded host results are handed back at its end and taken
//! again by the next forward of the same plan, instead of a `clCreateBuffer` /
//! `clReleaseMemObject` pair per value per forward.
//!
//! A buffer is taken only from the idle set and only by exact size, so no two live values ever
//! share one; what a forward did not take again is freed at its end ([`BufferPool::trim`]), so
//! the pool never holds more than one forward's buffers (a slider moved to other sizes does not
//! leave the old sizes' buffers behind). Kernels never read what they have not written (nothing
//! relies on fresh memory: OpenCL does not promise zeroed buffers either), so a reused buffer
//! gives the same results as a new one.

use std::collections::{HashMap, HashSet};

use super::{BufferId, Device, RuntimeError};

/// Buffers of one plan's forwards: idle ones by size, and the ones a forward holds now.
#[derive(Debug, Default)]
pub struct BufferPool {
    /// Idle buffers by size in bytes, each with whether it was handed back since the last
    /// [`BufferPool::trim`] (an idle buffer that was not is one the last forward did not need).
    idle: HashMap<usize, Vec<(BufferId, bool)>>,
    /// Buffers handed out and not yet given back, with their sizes.
    live: HashMap<BufferId, usize>,
    /// Takes served from the idle set and by a new device allocation, since the pool was made.
    pub reused: u64,
    pub allocated: u64,
}

impl BufferPool {
    /// A buffer of `bytes` for a live value: an idle one of that size, else a new allocation.
    /// When the device is out of memory, the idle buffers are freed and the allocation tried
    /// once more.
    pub fn take(&mut self, dev: &mut dyn Device, bytes: usize) -> Result<BufferId, RuntimeError> {
        if let Some((id, _)) = self.idle.get_mut(&bytes).and_then(Vec::pop) {
            self.reused += 1;
            self.live.insert(id, bytes);
            return Ok(id);
        }
        let id = match dev.alloc(bytes) {
            Err(RuntimeError::OutOfMemory { .. }) if self.idle_count() > 0 => {
                self.free_idle(dev, |_| true)?;
                dev.alloc(bytes)?
            }
            r => r?,
        };
        self.allocated += 1;
        self.live.insert(id, bytes);
        Ok(id)
    }

    /// Hands back a buffer [`BufferPool::take`] gave out: it becomes idle, for a later take.
    /// Its last user must be enqueued already (an in-order queue runs the next user after it).
    pub fn give_back(&mut self, buffer: BufferId) -> Result<(), RuntimeError> {
        let bytes = self.live.remove(&buffer).ok_or_else(|| RuntimeError::Invalid {
            what: "pooled buffer",
            detail: format!("{buffer:?} was not taken from this pool, or was given back twice"),
        })?;
        self.idle.entry(bytes).or_default().push((buffer, true));
        Ok(())
    }

    /// Ends a forward: frees the idle buffers it did not take again, keeps the rest for the next.
    pub fn trim(&mut self, dev: &mut dyn Device) -> Result<(), RuntimeError> {
        self.free_idle(dev, |handed_back| !handed_back)?;
        self.idle.values_mut().flatten().for_each(|(_, handed_back)| *handed_back = false);
        Ok(())
    }

    /// Frees every buffer of the pool, idle and live (a forward that failed may not have
    /// given its buffers back); every one is tried, the first error is returned.
    pub fn release(&mut self, dev: &mut dyn Device) -> Result<(), RuntimeError> {
        let live: HashSet<BufferId> = self.live.drain().map(|(b, _)| b).collect();
        let idle = self.free_idle(dev, |_| true);
        let mut first = idle.err();
        for b in live {
            if let Err(e) = dev.free(b) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Idle buffers now.
    pub fn idle_count(&self) -> usize {
        self.idle.values().map(Vec::len).sum()
    }

    /// Buffers handed out and not given back.
    #[cfg(test)]
    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    fn free_idle(&mut self, dev: &mut dyn Device, doomed: impl Fn(bool) -> bool) -> Result<(), RuntimeError> {
        let mut first = None;
        for list in self.idle.values_mut() {
            list.retain(|&(b, handed_back)| {
                if !doomed(handed_back) {
                    return true;
                }
                if let Err(e) = dev.free(b) {
                    first.get_or_insert(e);
                }
                false
            });
        }
        self.idle.retain(|_, list| !list.is_empty());
        first.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{DeviceInfo, EventId, KernelArg, KernelTiming, ProgramId};

    /// Counts allocations and frees; allocations past `limit` live buffers are out of memory.
    struct Counting {
        info: DeviceInfo,
        live: HashSet<BufferId>,
        next: u32,
        limit: usize,
        freed: Vec<BufferId>,
    }

    impl Counting {
        fn new(limit: usize) -> Counting {
            let info = crate::runtime::reference_info();
            Counting { info, live: HashSet::new(), next: 0, limit, freed: Vec::new() }
        }
    }

    impl Device for Counting {
        fn info(&self) -> &DeviceInfo {
            &self.info
        }
        fn alloc(&mut self, bytes: usize) -> Result<BufferId, RuntimeError> {
            if self.live.len() >= self.limit {
                return Err(RuntimeError::OutOfMemory { bytes, kernel: None });
            }
            self.next += 1;
            self.live.insert(BufferId(self.next));
            Ok(BufferId(self.next))
        }
        fn free(&mut self, b: BufferId) -> Result<(), RuntimeError> {
            self.freed.push(b);
            match self.live.remove(&b) {
                true => Ok(()),
                false => Err(RuntimeError::Invalid { what: "buffer", detail: format!("{b:?} freed twice") }),
            }
        }
        fn write(&mut self, _: BufferId, _: &[u8]) -> Result<(), RuntimeError> {
            Ok(())
        }
        fn read(&mut self, _: BufferId, _: &mut [u8]) -> Result<(), RuntimeError> {
            Ok(())
        }
        fn build(&mut self, _: &str, _: &[u32]) -> Result<ProgramId, RuntimeError> {
            Ok(ProgramId(0))
        }
        fn release(&mut self, _: ProgramId) -> Result<(), RuntimeError> {
            Ok(())
        }
        fn launch(&mut self, _: ProgramId, _: &str, _: &[KernelArg], _: [usize; 3], _: Option<[usize; 3]>) -> Result<EventId, RuntimeError> {
            Ok(EventId(0))
        }
        fn finish(&mut self) -> Result<(), RuntimeError> {
            Ok(())
        }
        fn timing(&mut self, _: EventId) -> Result<KernelTiming, RuntimeError> {
            Ok(KernelTiming { start_ns: 0, end_ns: 0 })
        }
    }

    /// One forward taking `sizes`, all live at once, then handing them back and trimming.
    fn forward(pool: &mut BufferPool, dev: &mut Counting, sizes: &[usize]) -> Vec<BufferId> {
        let taken: Vec<BufferId> = sizes.iter().map(|&s| pool.take(dev, s).unwrap()).collect();
        let distinct: HashSet<_> = taken.iter().collect();
        assert_eq!(distinct.len(), taken.len(), "one buffer handed to two live values: {taken:?}");
        taken.iter().for_each(|&b| pool.give_back(b).unwrap());
        pool.trim(dev).unwrap();
        taken
    }

    #[test]
    fn a_second_forward_reuses_every_buffer_and_allocates_none() {
        let (mut pool, mut dev) = (BufferPool::default(), Counting::new(64));
        // Two values of one size live together: each gets its own buffer.
        let sizes = [1024, 1024, 16, 0, 4096];
        let first = forward(&mut pool, &mut dev, &sizes);
        let second = forward(&mut pool, &mut dev, &sizes);
        assert_eq!((pool.allocated, pool.reused), (5, 5));
        let (mut a, mut b) = (first.clone(), second);
        a.sort_by_key(|b| b.0);
        b.sort_by_key(|b| b.0);
        assert_eq!(a, b);
        assert!(dev.freed.is_empty());
        assert_eq!((pool.idle_count(), pool.live_count()), (5, 0));
        pool.release(&mut dev).unwrap();
        assert!(dev.live.is_empty(), "release frees everything: {:?}", dev.live);
    }

    #[test]
    fn a_buffer_is_never_handed_out_twice_while_live() {
        let (mut pool, mut dev) = (BufferPool::default(), Counting::new(64));
        let a = pool.take(&mut dev, 64).unwrap();
        pool.give_back(a).unwrap();
        let b = pool.take(&mut dev, 64).unwrap();
        assert_eq!(a, b, "an idle buffer of the size is taken again");
        let c = pool.take(&mut dev, 64).unwrap();
        assert_ne!(b, c, "a live buffer is not handed out again");
        // Given back twice: an error, not a second idle entry another value could take.
        pool.give_back(b).unwrap();
        assert!(pool.give_back(b).is_err());
        assert!(pool.give_back(BufferId(999)).is_err());
        assert_eq!(pool.idle_count(), 1);
    }

    #[test]
    fn sizes_a_forward_no_longer_takes_are_freed_at_its_end() {
        let (mut pool, mut dev) = (BufferPool::default(), Counting::new(64));
        forward(&mut pool, &mut dev, &[100, 200]);
        // Other bindings: 300 is new, 200 is not taken, 100 is reused.
        forward(&mut pool, &mut dev, &[100, 300]);
        assert_eq!(dev.freed.len(), 1);
        assert_eq!(pool.idle_count(), 2);
        assert_eq!(dev.live.len(), 2);
    }

    #[test]
    fn out_of_memory_frees_the_idle_buffers_and_tries_again() {
        let (mut pool, mut dev) = (BufferPool::default(), Counting::new(2));
        forward(&mut pool, &mut dev, &[8, 16]);
        // The device holds two buffers, both idle in the pool: a third size fits only once
        // they are freed.
        let b = pool.take(&mut dev, 32).unwrap();
        assert_eq!((dev.live.len(), pool.idle_count()), (1, 0));
        // Nothing idle to free: the device's error comes back.
        pool.take(&mut dev, 64).unwrap();
        assert!(matches!(pool.take(&mut dev, 128), Err(RuntimeError::OutOfMemory { .. })));
        pool.give_back(b).unwrap();
        pool.release(&mut dev).unwrap();
        assert!(dev.live.is_empty());
    }
}
