//! Submission and synchronisation: the command list commands go to, waiting for them, and the
//! events that time each launch.

use super::check::ze;
use super::{LevelZero, EVENTS_PER_POOL};
use crate::runtime::{EventId, RuntimeError};
use level_zero_sys as sys;
use std::ptr::null_mut;

/// Where commands go: an immediate list runs them as they are appended; a regular list (where
/// the driver offers no immediate one) holds them until [`LevelZero::sync`] executes it on `queue`.
pub(super) struct Submit {
    pub list: sys::ze_command_list_handle_t,
    pub queue: Option<sys::ze_command_queue_handle_t>,
    /// Commands were appended since the last [`LevelZero::sync`].
    pub pending: bool,
}

impl LevelZero {
    pub(super) fn create_submit(&mut self, ordinal: u32) -> Result<(), RuntimeError> {
        let ze = &self.ze;
        let queue_desc = sys::ze_command_queue_desc_t {
            ordinal,
            mode: sys::ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            priority: sys::ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
            ..sys::ze_command_queue_desc_t::new()
        };
        let mut list = null_mut();
        if ze!(
            ze,
            zeCommandListCreateImmediate(self.context, self.device, &queue_desc, &mut list)
        )
        .ok()
        .is_ok()
        {
            self.submit = Some(Submit {
                list,
                queue: None,
                pending: false,
            });
            return Ok(());
        }
        let mut queue = null_mut();
        ze!(
            ze,
            zeCommandQueueCreate(self.context, self.device, &queue_desc, &mut queue)
        )
        .ok()?;
        let list_desc = sys::ze_command_list_desc_t {
            commandQueueGroupOrdinal: ordinal,
            ..sys::ze_command_list_desc_t::new()
        };
        let mut list = null_mut();
        let created = ze!(
            ze,
            zeCommandListCreate(self.context, self.device, &list_desc, &mut list)
        )
        .ok();
        // Stored before the check so that `Drop` destroys the queue if the list failed.
        self.submit = Some(Submit {
            list,
            queue: Some(queue),
            pending: false,
        });
        created
    }

    pub(super) fn create_pool(
        &self,
        flags: sys::ze_event_pool_flags_t,
        count: u32,
    ) -> Result<sys::ze_event_pool_handle_t, RuntimeError> {
        let desc = sys::ze_event_pool_desc_t {
            flags,
            count,
            ..sys::ze_event_pool_desc_t::new()
        };
        let mut device = self.device;
        let mut pool = null_mut();
        ze!(
            self.ze,
            zeEventPoolCreate(self.context, &desc, 1, &mut device, &mut pool)
        )
        .ok()?;
        Ok(pool)
    }

    pub(super) fn create_event(
        &self,
        pool: sys::ze_event_pool_handle_t,
        index: u32,
    ) -> Result<sys::ze_event_handle_t, RuntimeError> {
        let desc = sys::ze_event_desc_t {
            index,
            signal: sys::ZE_EVENT_SCOPE_FLAG_HOST,
            wait: sys::ZE_EVENT_SCOPE_FLAG_HOST,
            ..sys::ze_event_desc_t::new()
        };
        let mut event = null_mut();
        ze!(self.ze, zeEventCreate(pool, &desc, &mut event)).ok()?;
        Ok(event)
    }

    /// A fresh kernel-timestamp event, from a new pool when the last one is used up. Events are
    /// kept until `Drop` because an [`EventId`] may be asked for its timing at any later time.
    pub(super) fn next_event(&mut self) -> Result<(EventId, sys::ze_event_handle_t), RuntimeError> {
        let index = self.events.len() as u32 % EVENTS_PER_POOL;
        if index == 0 {
            let flags =
                sys::ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | sys::ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
            let pool = self.create_pool(flags, EVENTS_PER_POOL)?;
            self.timestamp_pools.push(pool);
        }
        let pool = *self.timestamp_pools.last().expect("a pool was just made");
        let event = self.create_event(pool, index)?;
        self.events.push(event);
        Ok((EventId(self.events.len() as u32 - 1), event))
    }

    /// The list to append one command to. Level Zero orders commands only across barriers
    /// (without `RELAXED_ORDERING` it does not reorder them, but one may start before the one
    /// before it ends), so a barrier goes first whenever earlier commands may still run: that
    /// makes this the in-order queue that [`crate::runtime::Device`] promises.
    pub(super) fn append(&mut self) -> Result<sys::ze_command_list_handle_t, RuntimeError> {
        let submit = self
            .submit
            .as_mut()
            .expect("constructed with a command list");
        if submit.pending {
            ze!(
                self.ze,
                zeCommandListAppendBarrier(submit.list, null_mut(), 0, null_mut())
            )
            .ok()?;
        }
        submit.pending = true;
        Ok(submit.list)
    }

    /// Waits for everything appended so far.
    pub(super) fn sync(&mut self) -> Result<(), RuntimeError> {
        let ze = &self.ze;
        let submit = self
            .submit
            .as_mut()
            .expect("constructed with a command list");
        if !submit.pending {
            return Ok(());
        }
        submit.pending = false;
        let list = submit.list;
        let Some(queue) = submit.queue else {
            ze!(
                ze,
                zeCommandListAppendBarrier(list, self.sync_event, 0, null_mut())
            )
            .ok()?;
            ze!(ze, zeEventHostSynchronize(self.sync_event, u64::MAX)).ok()?;
            return ze!(ze, zeEventHostReset(self.sync_event)).ok();
        };
        let ran = ze!(ze, zeCommandListClose(list)).ok().and_then(|()| {
            let mut lists = [list];
            ze!(
                ze,
                zeCommandQueueExecuteCommandLists(queue, 1, lists.as_mut_ptr(), null_mut())
            )
            .ok()?;
            ze!(ze, zeCommandQueueSynchronize(queue, u64::MAX)).ok()
        });
        // Reset even after a failure, so the list can take new commands.
        let reset = ze!(ze, zeCommandListReset(list)).ok();
        ran.and(reset)
    }
}
