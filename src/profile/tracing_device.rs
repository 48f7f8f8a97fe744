//! A [`Device`] that records every launch for the trace: host time at enqueue, host time at the
//! next sync point, and what the launch was ([`LaunchInfo`]). Anything that runs kernels on a
//! `&mut dyn Device` (the plan runner, a test) is profiled by handing it this instead.

use std::collections::HashMap;

use super::align::{align, LaunchTimes};
use super::trace::{DeviceSpan, LaunchInfo};
use crate::runtime::{BufferId, Device, DeviceInfo, EventId, KernelArg, KernelTiming, ProgramId, RuntimeError};

struct Pending {
    event: EventId,
    info: LaunchInfo,
    repetition: u32,
    host_enqueue_ns: i64,
    host_synced_ns: Option<i64>,
}

pub struct TracingDevice<'d> {
    inner: &'d mut dyn Device,
    launches: Vec<Pending>,
    /// Launches before this index have seen a sync point.
    synced: usize,
    next_label: Option<LaunchInfo>,
    /// Labels by kernel name, for runners that launch without calling [`Self::label_next`].
    labels: HashMap<String, LaunchInfo>,
    repetition: u32,
}

impl<'d> TracingDevice<'d> {
    pub fn new(inner: &'d mut dyn Device) -> Self {
        Self { inner, launches: Vec::new(), synced: 0, next_label: None, labels: HashMap::new(), repetition: 0 }
    }

    /// Names the next launch (its graph node, shapes, bindings). Unlabelled launches are named
    /// after their kernel.
    pub fn label_next(&mut self, info: LaunchInfo) {
        self.next_label = Some(info);
    }

    /// Labels every later launch of a kernel named like a key (unless [`Self::label_next`] was
    /// called for it): a plan's kernels are known before it runs, so a runner that knows
    /// nothing of profiling still yields spans named after graph nodes.
    pub fn set_labels(&mut self, labels: HashMap<String, LaunchInfo>) {
        self.labels = labels;
    }

    /// Launches from now on belong to repetition `r`.
    pub fn set_repetition(&mut self, r: u32) {
        self.repetition = r;
    }

    pub fn launches(&self) -> usize {
        self.launches.len()
    }

    fn synced_now(&mut self) {
        let now = puffin::now_ns();
        for l in &mut self.launches[self.synced..] {
            l.host_synced_ns = Some(now);
        }
        self.synced = self.launches.len();
    }

    /// Reads every launch's timestamps and puts them on the host clock; queue 0 is the device's
    /// one in-order queue. Returns the spans and the alignment used.
    pub fn device_spans(&mut self) -> Result<(Vec<DeviceSpan>, Option<super::ClockAlignment>), RuntimeError> {
        puffin::profile_scope!("read timestamps");
        if self.synced < self.launches.len() {
            self.finish()?;
        }
        let mut timings = Vec::with_capacity(self.launches.len());
        for l in &self.launches {
            timings.push(self.inner.timing(l.event)?);
        }
        let times: Vec<LaunchTimes> = self
            .launches
            .iter()
            .zip(&timings)
            .map(|(l, t)| LaunchTimes { host_enqueue_ns: l.host_enqueue_ns, host_synced_ns: l.host_synced_ns, device: *t })
            .collect();
        let alignment = align(&times);
        let offset = alignment.map_or(0, |a| a.offset_ns);
        let spans = self
            .launches
            .iter()
            .zip(&timings)
            .map(|(l, t)| DeviceSpan {
                launch: l.info.clone(),
                queue: 0,
                repetition: l.repetition,
                start_ns: (t.start_ns as i64).saturating_add(offset),
                dur_ns: t.duration_ns(),
                device_start_ns: t.start_ns,
            })
            .collect();
        Ok((spans, alignment))
    }
}

impl Device for TracingDevice<'_> {
    fn info(&self) -> &DeviceInfo {
        self.inner.info()
    }
    fn alloc(&mut self, bytes: usize) -> Result<BufferId, RuntimeError> {
        self.inner.alloc(bytes)
    }
    fn free(&mut self, buffer: BufferId) -> Result<(), RuntimeError> {
        self.inner.free(buffer)
    }
    fn write(&mut self, buffer: BufferId, data: &[u8]) -> Result<(), RuntimeError> {
        puffin::profile_scope!("write");
        self.inner.write(buffer, data)
    }
    fn read(&mut self, buffer: BufferId, out: &mut [u8]) -> Result<(), RuntimeError> {
        puffin::profile_scope!("read");
        // A read waits for every launch before it: a sync point.
        self.inner.read(buffer, out)?;
        self.synced_now();
        Ok(())
    }
    fn build(&mut self, name: &str, spirv: &[u32]) -> Result<ProgramId, RuntimeError> {
        self.inner.build(name, spirv)
    }
    fn release(&mut self, program: ProgramId) -> Result<(), RuntimeError> {
        self.inner.release(program)
    }
    fn launch(
        &mut self,
        program: ProgramId,
        kernel: &str,
        args: &[KernelArg],
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> Result<EventId, RuntimeError> {
        let mut info = self.next_label.take().or_else(|| self.labels.get(kernel).cloned()).unwrap_or_default();
        if info.node.is_empty() {
            info.node = kernel.to_string();
        }
        info.kernel = kernel.to_string();
        info.global = global;
        info.local = local;
        let host_enqueue_ns = puffin::now_ns();
        let event = self.inner.launch(program, kernel, args, global, local)?;
        self.launches.push(Pending { event, info, repetition: self.repetition, host_enqueue_ns, host_synced_ns: None });
        Ok(event)
    }
    fn finish(&mut self) -> Result<(), RuntimeError> {
        self.inner.finish()?;
        self.synced_now();
        Ok(())
    }
    fn timing(&mut self, event: EventId) -> Result<KernelTiming, RuntimeError> {
        self.inner.timing(event)
    }
}
