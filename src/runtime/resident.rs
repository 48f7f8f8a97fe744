//! A model's weights kept across forwards, as torch keeps parameters where its kernels run: read
//! from the model into host tensors once and, for repeated runs, uploaded to the device once.
//! A one-off run ([`Resident::on_host`]) uploads each weight when a kernel first reads it and
//! frees it after; a benchmark or profile ([`Resident::upload`]) pays neither per forward, so
//! its wall time is a forward's, not a model load's. Either way the plan's intermediates come
//! from a [`BufferPool`] that lives as long as the weights: a benchmark's forwards reuse one
//! forward's buffers instead of allocating and freeing them each time.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use super::plan::{load_weights, RunError};
use super::upload::{stored, upload};
use super::launch_shape::LaunchCache;
use super::pool::BufferPool;
use super::{BufferId, Device};
use crate::exec::Tensor;
use crate::ir::{Model, ValueId};
use crate::lower::kernel::Layout;
use crate::lower::Plan;

/// The weights of one plan's graph: host copies (host steps read them) and the device buffers
/// already holding them, by graph value name (how kernels name their buffers).
pub struct Resident {
    host: HashMap<ValueId, Tensor>,
    buffers: HashMap<String, BufferId>,
    /// Behind a lock so that runs take `&Resident` (callers hold the weights shared across
    /// the plans they alternate); one forward at a time holds it.
    pool: Mutex<BufferPool>,
    /// The plan's launches as the last forward evaluated them, reused at the same bindings.
    launches: Mutex<LaunchCache>,
}

impl Resident {
    /// The weights on the host only: a run uploads what its kernels read and frees it after.
    pub fn on_host(model: &Model, plan: &Plan) -> Result<Resident, RunError> {
        Ok(Resident { host: load_weights(model, &plan.graph)?, buffers: HashMap::new(), pool: Mutex::default(), launches: Mutex::default() })
    }

    /// The weights on the host and uploaded to `dev`, for runs that reuse them; give them back
    /// with [`Resident::release`].
    pub fn upload(dev: &mut dyn Device, model: &Model, plan: &Plan) -> Result<Resident, RunError> {
        let mut r = Resident::on_host(model, plan)?;
        // Each weight in every layout the kernels read it in (a product's weight transposed
        // once here, `lower::gemm`), under the key launches look it up by; a weight only host
        // steps read stays on the host.
        let mut wanted: Vec<(String, ValueId, Layout)> = Vec::new();
        for buf in plan.kernels().flat_map(|k| &k.buffers) {
            let Some(v) = plan.graph.value_id(&buf.value).filter(|v| r.host.contains_key(v)) else { continue };
            if !wanted.iter().any(|(key, _, _)| *key == buf.key()) {
                wanted.push((buf.key(), v, buf.layout));
            }
        }
        for (key, v, layout) in wanted {
            let name = &plan.graph.value(v).name;
            let bytes = stored(&r.host[&v], layout).map_err(|m| RunError::Input(format!("weight `{name}`: {m}")));
            match bytes.and_then(|t| upload(dev, &t, &format!("weight `{name}`"))) {
                Ok(b) => {
                    r.buffers.insert(key, b);
                }
                Err(e) => {
                    let _ = r.release(dev);
                    return Err(e);
                }
            }
        }
        Ok(r)
    }

    /// Frees the uploaded buffers and the pool's (the host copies go with `self`).
    pub fn release(&self, dev: &mut dyn Device) -> Result<(), RunError> {
        let pooled = self.pool().release(dev);
        self.buffers.values().try_for_each(|b| dev.free(*b))?;
        pooled.map_err(RunError::from)
    }

    /// The pool of the plan's run buffers. A poisoned lock (a forward that panicked) still
    /// holds a consistent pool: every change to it is a single insert or remove.
    pub(super) fn pool(&self) -> MutexGuard<'_, BufferPool> {
        self.pool.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The plan's cached launches; like the pool's, a poisoned lock still holds consistent
    /// entries (each is replaced whole).
    pub(super) fn launches(&self) -> MutexGuard<'_, LaunchCache> {
        self.launches.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn host(&self) -> &HashMap<ValueId, Tensor> {
        &self.host
    }

    pub(super) fn buffers(&self) -> &HashMap<String, BufferId> {
        &self.buffers
    }
}
