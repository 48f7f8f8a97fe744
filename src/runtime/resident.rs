//! A model's weights kept across forwards, as torch keeps parameters where its kernels run: read
//! from the model into host tensors once and, for repeated runs, uploaded to the device once.
//! A one-off run ([`Resident::on_host`]) uploads each weight when a kernel first reads it and
//! frees it after; a benchmark or profile ([`Resident::upload`]) pays neither per forward, so
//! its wall time is a forward's, not a model load's.

use std::collections::HashMap;

use super::plan::{load_weights, stored, upload, RunError};
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
}

impl Resident {
    /// The weights on the host only: a run uploads what its kernels read and frees it after.
    pub fn on_host(model: &Model, plan: &Plan) -> Result<Resident, RunError> {
        Ok(Resident { host: load_weights(model, &plan.graph)?, buffers: HashMap::new() })
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

    /// Frees the uploaded buffers (the host copies go with `self`).
    pub fn release(&self, dev: &mut dyn Device) -> Result<(), RunError> {
        self.buffers.values().try_for_each(|b| dev.free(*b)).map_err(RunError::from)
    }

    pub(super) fn host(&self) -> &HashMap<ValueId, Tensor> {
        &self.host
    }

    pub(super) fn buffers(&self) -> &HashMap<String, BufferId> {
        &self.buffers
    }
}
