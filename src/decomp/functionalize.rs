//! Functionalization: in-place ops become their functional overloads before decomposition, as
//! PyTorch's functionalization does inside `run_decompositions()` and AOT autograd
//! (`relu_` → `relu`, `add_.Tensor` → `add.Tensor`, `hardswish_` → `hardswish`, then decomposed
//! like any other node). Readers of the mutated tensor after the op read the functional result.
//!
//! What is not functionalized is refused with the node named, never silently run with the
//! mutation lost: a write through a view (`x[:, 1:3].fill_(v)`), which PyTorch turns into a
//! `slice_scatter` / `select_scatter` into the base tensor.

use crate::ir::{Arg, Graph, Node};

/// The functional overload of an in-place ATen op: `aten.relu_.default` → `aten.relu.default`,
/// `aten.add_.Tensor` → `aten.add.Tensor`. `None` for functional ops and dunders (`__and__`).
pub fn functional_target(target: &str) -> Option<String> {
    let mut parts = target.splitn(3, '.');
    let (ns, name, overload) = (parts.next()?, parts.next()?, parts.next()?);
    if ns != "aten" || name.ends_with("__") {
        return None;
    }
    let base = name.strip_suffix('_').filter(|b| !b.is_empty())?;
    Some(format!("{ns}.{base}.{overload}"))
}

/// The functional node of an in-place one: its target, and its first argument renamed where the
/// functional schema spells it differently (`dropout_(Tensor(a!) self, ...)` but
/// `dropout(Tensor input, ...)`, the whole dropout family), so kept nodes read as PyTorch's do.
pub fn functional_node(node: &Node) -> Option<Node> {
    let target = functional_target(&node.target)?;
    let mut args = node.args.clone();
    if target.contains("dropout") {
        if let Some(first) = args.first_mut().filter(|a| a.name == "self") {
            first.name = "input".into();
        }
    }
    Some(Node { target, args, ..node.clone() })
}

/// The ATen ops whose output aliases their first input (schema `Tensor(a) self -> Tensor(a)`):
/// a write into their output is a write into the input.
fn aliases_input(target: &str) -> bool {
    let name = target.split('.').nth(1).unwrap_or("");
    matches!(
        name,
        "view" | "slice" | "select" | "narrow" | "expand" | "permute" | "transpose" | "t" | "squeeze" | "unsqueeze"
            | "unflatten" | "alias" | "as_strided" | "diagonal" | "unfold" | "view_as" | "detach" | "split"
            | "split_with_sizes" | "chunk" | "unbind" | "movedim" | "swapaxes"
    )
}

/// Why an in-place node cannot be functionalized here, if it cannot.
pub fn refusal(graph: &Graph, node: &Node) -> Option<String> {
    let self_value = match node.args.first().map(|a| &a.arg) {
        Some(Arg::Tensor(v)) => *v,
        _ => return Some("its first argument is not a tensor".into()),
    };
    let producer = graph.value(self_value).producer?;
    let p = graph.node(producer);
    aliases_input(&p.target).then(|| {
        format!(
            "it writes through `{}` ({}), a view of another tensor; PyTorch functionalizes that into a \
             *_scatter of the base, which is not implemented",
            p.name, p.target
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_place_overloads_map_to_functional_ones() {
        assert_eq!(functional_target("aten.relu_.default").as_deref(), Some("aten.relu.default"));
        assert_eq!(functional_target("aten.add_.Tensor").as_deref(), Some("aten.add.Tensor"));
        assert_eq!(functional_target("aten.hardswish_.default").as_deref(), Some("aten.hardswish.default"));
        assert_eq!(functional_target("aten.fill_.Scalar").as_deref(), Some("aten.fill.Scalar"));
        assert_eq!(functional_target("aten.relu.default"), None);
        assert_eq!(functional_target("aten.__and__.Tensor"), None);
        assert_eq!(functional_target("aten._assert_tensor_metadata.default"), None);
        assert_eq!(functional_target("_operator.mul"), None);
    }
}
