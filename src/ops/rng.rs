//! The generator random ops draw from, the same in the reference interpreter and in kernels.
//!
//! A run draws from a [`Generator`] — a seed and an offset, as `torch.Generator`'s Philox
//! state is. The seed keys Philox4x32-10 ([`super::philox`]); every node that draws (an op the
//! registry marks `.random()`, or `.random_if(arg, default)` with that argument true) owns one
//! *stream*: the generator's offset plus the node's ordinal among the graph's drawing nodes
//! ([`streams`]). A draw is `philox(counter(index, stream), key(seed))`, where the index says
//! which of the node's draws it is:
//!
//! - elementwise samplers (`rand`, `randn`, `randint`, `bernoulli`, `normal`, `uniform`,
//!   `exponential`, `cauchy`, `log_normal`, `geometric`, `rrelu`, `native_dropout`): the
//!   output element's row-major index, one Philox call per element;
//! - `multinomial` with replacement: the output element's index (one uniform, inverted through
//!   the row's cumulative weights); without replacement: `row · categories + category` (one key
//!   per category, `weight / Exp(1)`; the samples are the categories by descending key);
//! - `randperm(n)`: the position `j` (a 63-bit key; output `j` is the rank of key `j`, a
//!   uniformly random permutation's inverse, itself uniformly random).
//!
//! So a node's values are a pure function of (seed, stream, index): a kernel may recompute a
//! random producer inline, in any schedule, and read the same values; two nodes never share a
//! stream. The interpreter numbers the graph it runs and the kernels the graph they were
//! lowered from, so a mode-`none` plan draws the interpreter's very bits (kernels convert them
//! to floats in float32 where the interpreter uses f64, so floats agree to rounding). Other
//! modes decompose and renumber: there, and against PyTorch, random values are compared by
//! rule (shape, dtype, support, distribution), never by value.

use std::collections::HashSet;

use super::Random;
use crate::ir::{Arg, DType, Graph, Node, ValueId};

/// The state a run draws from: Philox's key and the first stream of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Generator {
    pub seed: u64,
    pub offset: u64,
}

impl Generator {
    pub fn seeded(seed: u64) -> Generator {
        Generator { seed, offset: 0 }
    }

    /// What a node with `ordinal` among the drawing nodes ([`streams`]) draws from; a node that
    /// does not draw gets the first stream, which it never reads.
    pub fn stream(&self, ordinal: Option<u64>) -> NodeStream {
        NodeStream { seed: self.seed, stream: self.offset.wrapping_add(ordinal.unwrap_or(0)) }
    }
}

/// What one node draws from: the key and its stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeStream {
    pub seed: u64,
    pub stream: u64,
}

impl NodeStream {
    /// The four words of draw `index`.
    pub fn bits(&self, index: u64) -> [u32; 4] {
        super::philox::philox4x32_10(super::philox::counter(index, self.stream), super::philox::key(self.seed))
    }
}

/// Whether `node` draws random numbers, as its registry entry says (evaluation-mode dropout and
/// `rrelu` are deterministic).
pub fn draws(node: &Node) -> bool {
    match super::get(&node.target).map(|d| d.random) {
        Some(Random::Always) => true,
        Some(Random::When { arg, default }) => match node.arg(arg) {
            Some(Arg::Bool(b)) => *b,
            _ => default,
        },
        Some(Random::Never) | None => false,
    }
}

/// Each node's ordinal among the nodes of `graph` that draw (graph order), `None` for the rest.
pub fn streams(graph: &Graph) -> Vec<Option<u64>> {
    let mut next = 0;
    graph
        .nodes
        .iter()
        .map(|n| {
            draws(n).then(|| {
                next += 1;
                next - 1
            })
        })
        .collect()
}

/// The stream ordinal of `node` (a node of `graph`), `None` when it does not draw.
pub fn stream_of(graph: &Graph, node: &Node) -> Option<u64> {
    let at = graph.nodes.iter().position(|n| std::ptr::eq(n, node))?;
    draws(node).then(|| graph.nodes[..at].iter().filter(|n| draws(n)).count() as u64)
}

/// Whether each graph output depends on a drawing node (so it can be compared by rule only).
pub fn random_outputs(graph: &Graph) -> Vec<bool> {
    let mut random: HashSet<ValueId> = HashSet::new();
    for n in &graph.nodes {
        if draws(n) || n.inputs().any(|v| random.contains(&v)) {
            random.extend(n.outputs.iter().copied());
        }
    }
    graph.outputs.iter().map(|a| a.values().iter().any(|v| random.contains(v))).collect()
}

/// The largest value of float `dtype` strictly below `x`: where a sampler of `[from, to)`
/// clamps, so that rounding to the dtype never reaches the open end (`1 - 2⁻²⁴` rounds to 1
/// in float16). `x` itself when `dtype` is not a float type.
pub fn largest_below(dtype: DType, x: f64) -> f64 {
    use crate::exec::tensor::{BF16, F16};
    // IEEE formats order like sign-magnitude integers: one step of the bits is one value.
    fn down(bits: u64, sign: u64) -> u64 {
        if bits & !sign == 0 {
            sign | 1
        } else if bits & sign != 0 {
            bits + 1
        } else {
            bits - 1
        }
    }
    match dtype {
        DType::F64 => {
            let r = x;
            f64::from_bits(down(r.to_bits(), 1 << 63))
        }
        DType::F32 => {
            let r = x as f32;
            let r = if (r as f64) < x { r } else { f32::from_bits(down(u64::from(r.to_bits()), 1 << 31) as u32) };
            r as f64
        }
        DType::F16 => {
            let r = F16::from_f64(x);
            if r.to_f64() < x { r.to_f64() } else { F16(down(u64::from(r.0), 1 << 15) as u16).to_f64() }
        }
        DType::BF16 => {
            let r = BF16::from_f64(x);
            if r.to_f64() < x { r.to_f64() } else { BF16(down(u64::from(r.0), 1 << 15) as u16).to_f64() }
        }
        _ => x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_value_below_an_end_rounds_below_it() {
        assert_eq!(largest_below(DType::F16, 1.0), 1.0 - 2f64.powi(-11));
        assert_eq!(largest_below(DType::BF16, 1.0), 1.0 - 2f64.powi(-8));
        assert_eq!(largest_below(DType::F32, 1.0), 1.0 - 2f64.powi(-24));
        assert_eq!(largest_below(DType::F64, 1.0), 1.0 - 2f64.powi(-53));
        assert_eq!(largest_below(DType::F32, -100.0), -100.0 - 2f64.powi(-17));
        assert!(largest_below(DType::F16, 0.0) < 0.0);
        // An end between two float16 values: the one below it.
        let x = 1.0 + 2f64.powi(-12);
        assert_eq!(largest_below(DType::F16, x), 1.0);
        assert_eq!(largest_below(DType::I64, 7.0), 7.0);
    }

    #[test]
    fn a_stream_is_the_ordinal_among_drawing_nodes() {
        use crate::ir::{InputKind, NamedArg, NodeMeta, TensorMeta, ValueKind};
        use crate::sym::Expr;
        let meta = || {
            ValueKind::Tensor(TensorMeta {
                dtype: DType::F32,
                sizes: vec![Expr::int(4)],
                strides: vec![Expr::int(1)],
                storage_offset: Expr::int(0),
                device: "cpu".into(),
                requires_grad: false,
            })
        };
        let mut g = Graph::new("g");
        let x = g.add_input("x", meta(), InputKind::UserInput).unwrap();
        let arg = |n: &str, a: Arg| NamedArg { name: n.into(), arg: a, kwarg: false };
        let add = |g: &mut Graph, name: &str, target: &str, args: Vec<NamedArg>| g.add_node(name, target, args, vec![(name.to_string(), meta())], NodeMeta::default()).unwrap();
        add(&mut g, "a", "aten.rand_like.default", vec![arg("self", Arg::Tensor(x))]);
        add(&mut g, "b", "aten.relu.default", vec![arg("self", Arg::Tensor(x))]);
        add(&mut g, "c", "aten.rrelu.default", vec![arg("self", Arg::Tensor(x))]);
        let d = add(&mut g, "d", "aten.bernoulli.p", vec![arg("self", Arg::Tensor(x)), arg("p", Arg::Float(0.5))]);
        let b = g.node(g.node_by_name("b").unwrap()).outputs[0];
        let dv = g.node(d).outputs[0];
        g.outputs = vec![Arg::Tensor(b), Arg::Tensor(dv)];
        add(&mut g, "e", "aten.rrelu.default", vec![arg("self", Arg::Tensor(x)), arg("training", Arg::Bool(true))]);
        add(&mut g, "f", "aten.native_dropout.default", vec![arg("input", Arg::Tensor(x)), arg("p", Arg::Float(0.5)), arg("train", Arg::None)]);
        add(&mut g, "h", "aten.native_dropout.default", vec![arg("input", Arg::Tensor(x)), arg("p", Arg::Float(0.5)), arg("train", Arg::Bool(false))]);
        // `rrelu` leaves `training` out at its default (false); `train: bool?` None is training.
        assert_eq!(streams(&g), vec![Some(0), None, None, Some(1), Some(2), Some(3), None]);
        assert_eq!(stream_of(&g, g.node(d)), Some(1));
        assert_eq!(random_outputs(&g), vec![false, true]);
        let s = NodeStream { seed: 7, stream: 1 };
        assert_eq!(s.bits(3), crate::ops::philox::philox4x32_10([3, 0, 1, 0], [7, 0]));
    }
}
