//! Seeded random inputs for runs that were given none (`run`, `profile`, the app's profiler).

use super::{user_inputs, Tensor};
use crate::ir::{Arg, DType, Graph, ValueId, ValueKind};
use crate::sym::Bindings;

/// SplitMix64: the next uniform value in [0, 1), seeded, without a dependency.
fn next_unit(seed: &mut u64) -> f64 {
    *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 40) as f64 / (1u64 << 24) as f64
}

/// A tensor of `dtype`: floats uniform in [-1, 1), integers uniform in [0, `int_bound`),
/// booleans either way. The dtype is the graph's: a kernel reads its input buffer as the type
/// the graph declares, so float32 bytes under an int64 input read past the buffer's end.
fn random_tensor(dtype: DType, shape: &[usize], int_bound: i64, seed: &mut u64) -> Result<Tensor, String> {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = match dtype {
        d if d.is_floating() => (0..n).map(|_| (next_unit(seed) * 2.0 - 1.0) as f32 as f64).collect(),
        DType::Bool => (0..n).map(|_| (next_unit(seed) * 2.0).floor()).collect(),
        _ => (0..n).map(|_| (next_unit(seed) * int_bound as f64).floor()).collect(),
    };
    let t = Tensor::from_vec(shape, v).ok_or_else(|| format!("{n} values for shape {shape:?}"))?;
    t.cast(dtype).map_err(|d| format!("random values of {d:?} cannot be generated"))
}

/// The exclusive bound of random integers for input `v`: the row count of the embeddings it
/// indexes (token ids), else 2 — 0 and 1 are legal as a mask, an id or an index of any
/// non-empty dimension of two or more.
fn int_bound(graph: &Graph, v: ValueId) -> i64 {
    let rows = graph.nodes.iter().filter(|n| n.target == "aten.embedding.default" && matches!(n.arg("indices"), Some(Arg::Tensor(i)) if *i == v));
    let rows = rows.filter_map(|n| match n.arg("weight") {
        Some(Arg::Tensor(w)) => graph.value(*w).tensor().and_then(|t| t.sizes.first()).and_then(|e| e.as_int()),
        _ => None,
    });
    rows.min().filter(|r| *r >= 1).unwrap_or(2)
}

/// Random user inputs (seeded) of the dtypes the graph declares and the shapes `b` gives
/// `graph`'s inputs: what `run` and `profile` feed a model when no inputs are given.
pub fn random_inputs(graph: &Graph, b: &Bindings, seed: u64) -> Result<Vec<Tensor>, String> {
    let mut s = seed;
    user_inputs(graph)
        .iter()
        .map(|v| {
            let name = &graph.value(*v).name;
            match &graph.value(*v).kind {
                ValueKind::Tensor(t) => {
                    let shape = t.sizes.iter().map(|e| e.eval_int(b).map(|i| i.max(0) as usize)).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
                    random_tensor(t.dtype, &shape, int_bound(graph, *v), &mut s).map_err(|m| format!("input `{name}`: {m}"))
                }
                ValueKind::SymInt(e) => Ok(Tensor::scalar(e.eval_int(b).map_err(|e| e.to_string())?)),
                other => Err(format!("input `{name}` of kind {other:?} cannot be generated")),
            }
        })
        .collect()
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{InputKind, NamedArg, NodeMeta, TensorMeta};
    use crate::sym::Expr;

    fn meta(dtype: DType, sizes: &[i64]) -> ValueKind {
        ValueKind::Tensor(TensorMeta::contiguous(dtype, sizes.iter().map(|&s| Expr::int(s)).collect()))
    }

    /// `ids: i64[2, 3]` into `embedding(w: f32[10, 4])`, a float input, a bool mask and an
    /// int64 input that indexes nothing.
    fn graph() -> Graph {
        let mut g = Graph::new("inputs");
        let w = g.add_input("w", meta(DType::F32, &[10, 4]), InputKind::Parameter { fqn: "w".into() }).unwrap();
        let ids = g.add_input("ids", meta(DType::I64, &[2, 3]), InputKind::UserInput).unwrap();
        g.add_input("x", meta(DType::F32, &[5]), InputKind::UserInput).unwrap();
        g.add_input("mask", meta(DType::Bool, &[4]), InputKind::UserInput).unwrap();
        g.add_input("pos", meta(DType::I64, &[6]), InputKind::UserInput).unwrap();
        let args = vec![NamedArg { name: "weight".into(), arg: Arg::Tensor(w), kwarg: false }, NamedArg { name: "indices".into(), arg: Arg::Tensor(ids), kwarg: false }];
        g.add_node("embedding", "aten.embedding.default", args, vec![("embedding".into(), meta(DType::F32, &[2, 3, 4]))], NodeMeta::default()).unwrap();
        g
    }

    #[test]
    fn inputs_take_the_graphs_dtypes_and_legal_index_values() {
        let g = graph();
        let inputs = random_inputs(&g, &Bindings::default(), 7).unwrap();
        let dtypes: Vec<DType> = inputs.iter().map(|t| t.dtype()).collect();
        assert_eq!(dtypes, [DType::I64, DType::F32, DType::Bool, DType::I64]);
        let ids = inputs[0].to_i64_vec();
        assert!(ids.iter().all(|i| (0..10).contains(i)), "token ids index the 10 embedding rows: {ids:?}");
        assert!(ids.iter().any(|i| *i >= 2), "ids spread over the rows, not only 0 and 1: {ids:?}");
        assert!(inputs[1].to_f64_vec().iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(inputs[2].to_i64_vec().iter().all(|b| *b == 0 || *b == 1));
        assert!(inputs[3].to_i64_vec().iter().all(|i| *i == 0 || *i == 1), "an int input that indexes no embedding takes 0 and 1");
        assert_eq!(random_inputs(&g, &Bindings::default(), 7).unwrap()[0].to_i64_vec(), ids, "seeded");
    }
}
