//! Runs one op on literal arguments, for the per-family unit tests.

use super::{OpCx, OpResult};
use crate::ops::rng::NodeStream;
use crate::ops::run_fn as lookup;
use crate::exec::tensor::Tensor;
use crate::exec::value::{RtValue, Values};
use crate::ir::{Arg, Graph, InputKind, NamedArg, Node, NodeMeta, ValueKind};
use crate::sym::Bindings;

/// An argument of a test call: a tensor (fed through a graph input) or a literal [`Arg`].
pub enum A {
    T(Tensor),
    L(Arg),
}

/// Calls `target` with named arguments; panics if the target is not registered.
pub fn call(target: &str, args: Vec<(&str, A)>) -> OpResult<Vec<RtValue>> {
    call_drawing(target, args, NodeStream::default())
}

/// [`call`], a random op drawing from `rng`.
pub fn call_drawing(target: &str, args: Vec<(&str, A)>, rng: NodeStream) -> OpResult<Vec<RtValue>> {
    let mut g = Graph::new("test");
    let mut values_in = Vec::new();
    let mut named = Vec::new();
    for (i, (name, a)) in args.into_iter().enumerate() {
        let arg = match a {
            A::T(t) => {
                let v = g.add_input(&format!("in{i}"), ValueKind::Other("test".into()), InputKind::UserInput).unwrap();
                values_in.push((v, t));
                Arg::Tensor(v)
            }
            A::L(l) => l,
        };
        named.push(NamedArg { name: name.to_string(), arg, kwarg: false });
    }
    let mut values = Values::new(&g);
    for (v, t) in values_in {
        values.set(v, RtValue::Tensor(t));
    }
    let node = Node { name: "n".into(), target: target.into(), args: named, outputs: vec![], meta: NodeMeta::default() };
    let op = lookup(target).unwrap_or_else(|| panic!("{target} is not registered"));
    let b = Bindings::new();
    op(&OpCx { node: &node, values: &values, bindings: &b, rng, graph: None })
}

/// Feeds several tensors as one `Tensor[]` argument.
pub fn call_list(target: &str, list: Vec<Tensor>, rest: Vec<(&str, A)>) -> OpResult<Vec<RtValue>> {
    let mut g = Graph::new("test");
    let mut values = Vec::new();
    for (i, t) in list.into_iter().enumerate() {
        let v = g.add_input(&format!("l{i}"), ValueKind::Other("test".into()), InputKind::UserInput).unwrap();
        values.push((v, t));
    }
    let mut named = vec![NamedArg { name: "tensors".into(), arg: Arg::Tensors(values.iter().map(|(v, _)| *v).collect()), kwarg: false }];
    let mut vals = Values::new(&g);
    for (v, t) in values {
        vals.set(v, RtValue::Tensor(t));
    }
    for (name, a) in rest {
        match a {
            A::L(l) => named.push(NamedArg { name: name.into(), arg: l, kwarg: false }),
            A::T(_) => panic!("call_list takes literal extra arguments"),
        }
    }
    let node = Node { name: "n".into(), target: target.into(), args: named, outputs: vec![], meta: NodeMeta::default() };
    let b = Bindings::new();
    lookup(target).expect("registered")(&OpCx { node: &node, values: &vals, bindings: &b, rng: NodeStream::default(), graph: None })
}

/// The single tensor result of [`call`].
pub fn call1(target: &str, args: Vec<(&str, A)>) -> Tensor {
    match call(target, args).unwrap_or_else(|e| panic!("{target}: {e:?}")).remove(0) {
        RtValue::Tensor(t) => t,
        other => panic!("{target} returned {other:?}"),
    }
}

pub fn t32(shape: &[usize], v: &[f32]) -> A {
    A::T(Tensor::from_vec(shape, v.to_vec()).expect("shape matches"))
}

pub fn t64(shape: &[usize], v: &[f64]) -> A {
    A::T(Tensor::from_vec(shape, v.to_vec()).expect("shape matches"))
}

pub fn ti(shape: &[usize], v: &[i64]) -> A {
    A::T(Tensor::from_vec(shape, v.to_vec()).expect("shape matches"))
}

pub fn int(i: i64) -> A {
    A::L(Arg::Int(i))
}

pub fn ints(v: &[i64]) -> A {
    A::L(Arg::Ints(v.to_vec()))
}

pub fn float(f: f64) -> A {
    A::L(Arg::Float(f))
}

pub fn boolean(b: bool) -> A {
    A::L(Arg::Bool(b))
}

/// Deterministic pseudo-random floats in [-1, 1).
pub fn noise(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

pub fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()) || (x.is_nan() && y.is_nan()))
}
