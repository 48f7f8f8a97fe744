//! Seeded random inputs for runs that were given none (`run`, `profile`, the app's profiler).

use super::{user_inputs, Tensor};
use crate::ir::{Graph, ValueKind};
use crate::sym::Bindings;

/// SplitMix64: seeded inputs without a dependency; uniform in [-1, 1).
fn random_tensor(shape: &[usize], seed: &mut u64) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|_| {
            *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = *seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect();
    Tensor::from_vec(shape, v).expect("length matches shape")
}

/// Random user inputs (uniform in [-1, 1), seeded) of the shapes `b` gives `graph`'s inputs:
/// what `run` and `profile` feed a model when no inputs are given.
pub fn random_inputs(graph: &Graph, b: &Bindings, seed: u64) -> Result<Vec<Tensor>, String> {
    let mut s = seed;
    user_inputs(graph)
        .iter()
        .map(|v| match &graph.value(*v).kind {
            ValueKind::Tensor(t) => {
                let shape = t.sizes.iter().map(|e| e.eval_int(b).map(|i| i.max(0) as usize)).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
                Ok(random_tensor(&shape, &mut s))
            }
            ValueKind::SymInt(e) => Ok(Tensor::scalar(e.eval_int(b).map_err(|e| e.to_string())?)),
            other => Err(format!("input `{}` of kind {other:?} cannot be generated", graph.value(*v).name)),
        })
        .collect()
}

