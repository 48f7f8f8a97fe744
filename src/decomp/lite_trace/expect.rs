//! What a dynamo-graph call is expected to become in ATen ops, from the op registry's traced
//! expansions and kernel tables.

use std::collections::BTreeSet;

use crate::ops::backend::{self, functional_name, BackendTable};
use crate::ops::traced::TracedCalls;

/// One way a call can come out of tracing: its ATen ops (views left out), and whether the trace
/// stopped at kernel level (the op itself, or CUDA's trace, which has a kernel for nearly
/// everything) or went on through ops another backend lacks (a CPU trace).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Alt {
    pub(super) ops: Vec<String>,
    pub(super) kernel_level: bool,
    /// Traced by the user's torch on this device kind (`cpu`): what tracing does there, so it names
    /// what went missing before any other device's trace does.
    pub(super) traced_on: Option<String>,
}

/// What a dynamo-graph call is expected to become, as alternative sets of ATen op names (shape-only
/// ops left out): from what the user's torch traced of it, the traced expansions of every embedded
/// table (this version's first), or for an ATen op with a kernel somewhere, the op itself. The error
/// is a call no table has a trace of: what `--python` can supply.
pub(super) fn alternatives(table: &BackendTable, traced: &TracedCalls, target: &str) -> Result<Vec<Alt>, String> {
    let keys = expansion_keys(target);
    let mut alts: Vec<(Vec<String>, bool, Option<String>)> = Vec::new();
    let own = backend::aten_name(target).and_then(|(n, _)| table.op_by_name(n).map(|f| (n, f)));
    if let Some((name, facts)) = &own {
        if facts.has_any_kernel() {
            alts.push((vec![functional_name(name).to_string()], true, None));
        }
    }
    for k in &keys {
        // What the user's torch traced at the log's arguments on the log's device (a CPU trace may go
        // on through ops other backends lack; any other device's stops where its kernels are, as a
        // CUDA trace does).
        for (dev, found) in traced.get(k).into_iter().flatten() {
            alts.extend(found.iter().map(|a| (a.clone(), dev != "cpu", Some(dev.clone()))));
        }
    }
    for t in backend::this_then_others(table) {
        for k in &keys {
            if let Some(exp) = t.expansions.get(k) {
                for dev in ["cuda", "cpu"] {
                    alts.extend(exp.get(dev).into_iter().flatten().map(|a| (a.clone(), dev == "cuda", None)));
                }
            }
        }
    }
    if alts.is_empty() {
        // A call the traces do not cover: by name, if that names an ATen op with a kernel.
        let name = keys.last().and_then(|k| k.rsplit('.').next()).unwrap_or(target);
        return match table.op_by_name(name) {
            Some(f) if f.has_any_kernel() => Ok(vec![Alt { ops: vec![functional_name(name).to_string()], kernel_level: true, traced_on: None }]),
            Some(_) => Err(format!("aten.{name} is composite and no traced expansion of `{target}` is in the table (torch {})", table.torch)),
            None => Err(format!("`{target}` is neither an ATen op nor a call whose expansion the table holds (torch {})", table.torch)),
        };
    }
    let mut seen = BTreeSet::new();
    Ok(alts
        .into_iter()
        .map(|(a, kernel_level, traced_on)| {
            let mut ops: Vec<String> = a.into_iter().filter(|op| !is_shape_only(table, op)).collect();
            ops.sort();
            ops.dedup();
            Alt { ops, kernel_level, traced_on }
        })
        .filter(|a| seen.insert(a.clone()))
        .collect())
}

/// An op that only reshapes: a view by its schema, or `_unsafe_view` (a view the schema does not
/// mark as aliasing). Never a sign of a decomposition, and torch picks among them by shape.
pub(super) fn is_shape_only(table: &BackendTable, op: &str) -> bool {
    op.ends_with("view") || table.op_by_name(op).is_some_and(|f| f.view)
}

/// The spellings a target may have in the expansion table: dynamo writes `torch.softmax`,
/// `Tensor.softmax`, `_operator.add`, `torch.nn.functional.layer_norm`, `aten._fused_rms_norm`.
pub(super) fn expansion_keys(target: &str) -> Vec<String> {
    let mut keys = vec![target.to_string()];
    if let Some((name, ov)) = backend::aten_name(target) {
        keys.push(format!("torch.ops.aten.{name}"));
        if let Some(o) = ov {
            keys.push(format!("torch.ops.aten.{name}.{o}"));
        }
    }
    if let Some(rest) = target.strip_prefix("operator.") {
        keys.push(format!("_operator.{rest}"));
    }
    // `F.pad` and friends are their C bindings in dynamo's graph; OpInfo traces the Python names.
    if let Some(rest) = target.strip_prefix("torch._C._nn.") {
        keys.push(format!("torch.nn.functional.{rest}"));
    }
    // OpInfo traces `/` and `//` under the methods' names only (T5's `float_1 / 8`).
    for (op, method) in [("truediv", "true_divide"), ("floordiv", "floor_divide")] {
        if keys.iter().any(|k| k == &format!("_operator.{op}")) {
            keys.push(format!("Tensor.{method}"));
        }
    }
    // Dunder methods (`Tensor.__eq__`, `Tensor.__radd__`) are the operator's call.
    if let Some(d) = target.strip_prefix("Tensor.__").and_then(|m| m.strip_suffix("__")) {
        let plain = d.strip_prefix('r').filter(|p| !p.is_empty() && d != "rshift" && d != "round");
        for name in std::iter::once(d).chain(plain) {
            keys.push(format!("_operator.{name}"));
            keys.push(format!("Tensor.{name}"));
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::expansion_keys;

    #[test]
    fn c_bindings_and_division_operators_reach_the_names_opinfo_traced() {
        assert!(expansion_keys("torch._C._nn.pad").contains(&"torch.nn.functional.pad".to_string()));
        assert!(expansion_keys("_operator.truediv").contains(&"Tensor.true_divide".to_string()));
        assert!(expansion_keys("operator.floordiv").contains(&"Tensor.floor_divide".to_string()));
        assert!(!expansion_keys("_operator.add").iter().any(|k| k.contains("divide")));
    }
}
