//! The verdict on one dynamo node: kept, composite, marked, elided, or which violation.

use std::collections::BTreeSet;

use super::expect::{is_shape_only, Alt};
use super::graph::{is_identity, names_same_op, node_device, Buckets};
use super::{NotChecked, Verdict};
use crate::import::trace::node_location;
use crate::ir::{Graph, NodeId};
use crate::ops::backend::{self, functional_name, Backend, BackendTable, OpFacts};

pub(super) fn check_node(
    table: &BackendTable,
    dynamo: &Graph,
    n: NodeId,
    alts: Result<&[Alt], String>,
    buckets: &Buckets,
    graph_backend: Option<Backend>,
    claimed: &BTreeSet<String>,
) -> Result<Verdict, NotChecked> {
    let node = dynamo.node(n);
    let loc = node_location(dynamo, n);
    let here = buckets.at(loc.as_ref());
    let present: BTreeSet<&str> = here.iter().map(|(op, _)| op.as_str()).collect();
    let alts = alts.map_err(NotChecked::untraced)?;
    // The call's own op name: `aten._fused_rms_norm` → `_fused_rms_norm`, `_operator.add` → `add`.
    let own = functional_name(backend::aten_name(&node.target).map(|(n, _)| n).unwrap_or_else(|| node.target.rsplit('.').next().unwrap_or(&node.target))).to_string();
    let fits = |a: &Alt| a.ops.iter().all(|op| present.contains(op.as_str()));
    let kept = |a: &Alt| {
        if a.ops.is_empty() || (a.ops.len() == 1 && a.ops[0] == own) {
            Verdict::Kept
        } else {
            Verdict::Composite { into: a.ops.clone() }
        }
    };
    if let Some(alt) = alts.iter().find(|a| a.kernel_level && fits(a)) {
        return Ok(kept(alt));
    }
    let Some(backend) = node_device(dynamo, n).or(graph_backend) else {
        return match alts.iter().find(|a| fits(a)) {
            Some(alt) => Ok(kept(alt)),
            None => Err(NotChecked { reason: "no tensor of the node or graph names a device, so no backend's kernels apply".into(), untraced: false }),
        };
    };
    // What the call becomes at kernel level holds an op this backend has no kernel for (but
    // another has, and a composite body): whatever CPU's trace shows, tracing expanded it here
    // (`F.rms_norm` → `_fused_rms_norm` → pow, mean, ... on CPU).
    let forced = alts.iter().filter(|a| a.kernel_level).flat_map(|a| &a.ops).find_map(|op| {
        let f = table.op_by_name(op)?;
        (!f.has_kernel(backend) && f.composite && !f.inductor_backends().is_empty()).then(|| (op.clone(), f))
    });
    if let Some((op, f)) = &forced {
        if node.meta.compile_with_inductor() || here.iter().any(|(_, marked)| *marked) {
            return Ok(Verdict::Marked);
        }
        return Ok(Verdict::NoKernel { backend, op: op.clone(), elsewhere: f.kernels.clone() });
    }
    if let Some(alt) = alts.iter().find(|a| fits(a)) {
        return Ok(kept(alt));
    }
    // The backend's own kernel under another name (`layer_norm` → `native_layer_norm`,
    // `scaled_dot_product_attention` → `_scaled_dot_product_flash_attention`): kept.
    let stem = node.target.rsplit('.').next().unwrap_or(&node.target);
    if stem.trim_start_matches('_').len() >= 4 {
        if let Some(op) = present.iter().find(|op| names_same_op(op, stem) && table.op_by_name(op).is_some_and(|f| f.has_kernel(backend))) {
            return Ok(Verdict::Composite { into: vec![op.to_string()] });
        }
    }
    if node.meta.compile_with_inductor() || here.iter().any(|(_, marked)| *marked) {
        return Ok(Verdict::Marked);
    }
    // Nothing at its location is left unexplained by the calls kept there, and its output is its
    // input: a no-op that tracing returned as is, not a decomposition (which leaves its products).
    if is_identity(dynamo, n) && present.iter().all(|op| claimed.contains(*op) || is_shape_only(table, op)) {
        return Ok(Verdict::Elided);
    }
    // The alternative closest to what is there names what went missing.
    // A trace on this very device (the user's torch, at the log's arguments) says what went missing;
    // other devices' traces only where there is none.
    let here_traced: Vec<&Alt> = alts.iter().filter(|a| a.traced_on.as_deref().and_then(Backend::parse) == Some(backend)).collect();
    let pool: Vec<&Alt> = if here_traced.is_empty() { alts.iter().collect() } else { here_traced };
    let best = pool
        .into_iter()
        .max_by_key(|a| (a.ops.iter().filter(|op| present.contains(op.as_str())).count(), usize::MAX - a.ops.len()))
        .map(|a| a.ops.clone())
        .unwrap_or_default();
    let missing: Vec<(String, Option<OpFacts>)> =
        best.into_iter().filter(|op| !present.contains(op.as_str())).map(|op| {
            let f = table.op_by_name(&op);
            (op, f)
        }).collect();
    for (op, f) in &missing {
        if let Some(f) = f {
            if !f.has_kernel(backend) && f.composite && !f.inductor_backends().is_empty() {
                return Ok(Verdict::NoKernel { backend, op: op.clone(), elsewhere: f.kernels.clone() });
            }
        }
    }
    for (op, f) in &missing {
        if let Some(f) = f {
            // Only a table decomposes an op that has a kernel: Inductor's, or a composite body.
            if f.has_kernel(backend) && (f.inductor || f.composite) {
                return Ok(Verdict::Decomposed { op: op.clone(), inductor_table: f.inductor });
            }
        }
    }
    // What went missing has a kernel here and no table decomposes it: the call's composite body
    // took a path the traces do not show (`adaptive_avg_pool2d` to size 1 is a `mean`).
    if missing.iter().all(|(_, f)| f.as_ref().is_some_and(|f| f.has_kernel(backend) && !f.inductor && !f.composite)) {
        let into: Vec<String> = present.iter().filter(|op| !claimed.contains(**op)).map(|op| op.to_string()).collect();
        return Ok(Verdict::Composite { into });
    }
    let names: Vec<&str> = missing.iter().map(|(op, _)| op.as_str()).collect();
    Err(NotChecked::untraced(format!(
        "expected {} at its location, and they are kernels of other backends only: the table (torch {}) has no trace of this call on {backend}",
        names.join(", "),
        table.torch
    )))
}
