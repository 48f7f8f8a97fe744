//! Identical calls of a dynamo graph, as AOT autograd's common-subexpression elimination sees
//! them. A training compile's partitioner runs `fx_graph_cse` on the joint graph
//! (`torch/_functorch/partitioners.py`, `functorch.config.cse`): two nodes with the same target
//! and the same arguments become one. transformers builds twin masks on one source line (T5's
//! encoder and decoder: `q_idx.new_ones(())`, `q_idx >= 0`, `result & mask` twice over the same
//! `arange`s, and `embed_tokens(input_ids)` twice), so the forward graph holds each op once while
//! dynamo's graph holds two calls. Inference graphs are not CSE'd by AOT; this is asked for
//! training compiles only.

use std::collections::HashMap;

use crate::ir::{Graph, NodeId, ValueId};

/// Calls torch never merges: random ones (each draw differs; torch's CSE leaves `rand_ops` alone)
/// and those that write their input.
fn mergeable(target: &str) -> bool {
    const RANDOM: &[&str] = &["dropout", "rand", "bernoulli", "normal", "uniform", "multinomial", "exponential", "poisson", "cauchy", "geometric", "log_normal"];
    let lower = target.to_ascii_lowercase();
    !RANDOM.iter().any(|r| lower.contains(r)) && !super::writes_input(target)
}

/// Every node identical to an earlier one (same target, same arguments, its tensor arguments
/// themselves identical up to earlier merges) → that earlier node. A call that writes its input
/// gives the value a new identity, so reads after it are never merged with reads before.
pub(super) fn duplicates(g: &Graph) -> HashMap<NodeId, NodeId> {
    let mut token: Vec<u64> = (0..g.values.len() as u64).collect();
    let mut next = g.values.len() as u64;
    let mut seen: HashMap<String, NodeId> = HashMap::new();
    let mut out = HashMap::new();
    for n in g.node_ids() {
        let node = g.node(n);
        if !mergeable(&node.target) {
            if super::writes_input(&node.target) {
                for v in node.inputs().collect::<Vec<ValueId>>() {
                    token[v.index()] = next;
                    next += 1;
                }
            }
            continue;
        }
        // The key spells the arguments with every value replaced by its identity.
        let args: Vec<String> = node
            .args
            .iter()
            .map(|a| {
                let canon = a.arg.try_map_values::<()>(|v| Ok(ValueId(token.get(v.index()).copied().unwrap_or(u64::MAX) as u32)));
                format!("{}={:?}", a.name, canon)
            })
            .collect();
        let key = format!("{}({})", node.target, args.join(", "));
        match seen.get(&key) {
            Some(&first) => {
                for (o, f) in node.outputs.iter().zip(&g.node(first).outputs) {
                    token[o.index()] = token[f.index()];
                }
                out.insert(n, first);
            }
            None => {
                seen.insert(key, n);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::trace::parse_graph;

    #[test]
    fn twin_masks_merge_and_random_or_mutated_reads_do_not() {
        let src = r#"class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "i64[4][1]cpu", L_w_: "f32[8, 2][2, 1]cpu"):
        l_x_ = L_x_
        l_w_ = L_w_
        r: "b8[][]cpu" = l_x_.new_ones((), dtype = torch.bool)
        ge: "b8[4][1]cpu" = l_x_ >= 0
        a: "b8[4][1]cpu" = r & ge
        r_1: "b8[][]cpu" = l_x_.new_ones((), dtype = torch.bool)
        ge_1: "b8[4][1]cpu" = l_x_ >= 0
        a_1: "b8[4][1]cpu" = r_1 & ge_1
        e: "f32[4, 2][2, 1]cpu" = torch.nn.functional.embedding(l_x_, l_w_)
        e_1: "f32[4, 2][2, 1]cpu" = torch.nn.functional.embedding(l_x_, l_w_)
        d: "f32[4, 2][2, 1]cpu" = torch.nn.functional.dropout(e, 0.1, True, False)
        d_1: "f32[4, 2][2, 1]cpu" = torch.nn.functional.dropout(e_1, 0.1, True, False)
        ge_2: "b8[4][1]cpu" = l_x_ >= 1
        add_: "i64[4][1]cpu" = l_x_.add_(1)
        ge_3: "b8[4][1]cpu" = l_x_ >= 0
        return (a, a_1, d, d_1, ge_2, ge_3)
"#;
        let (g, _) = parse_graph("0/0:dynamo", src).unwrap();
        let d = duplicates(&g);
        let name = |n: NodeId| g.node(n).name.clone();
        let mut pairs: Vec<(String, String)> = d.iter().map(|(&a, &b)| (name(a), name(b))).collect();
        pairs.sort();
        let want = [("a_1", "a"), ("e_1", "e"), ("ge_1", "ge"), ("r_1", "r")];
        assert_eq!(pairs, want.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>());
    }
}
