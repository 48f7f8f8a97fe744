//! Ops given complex operands ([`RtValue::Complex`], see [`crate::exec::complex`]). A node that
//! reads a complex value runs its registry entry's `.complex(..)` implementation instead of
//! `.run(..)` (see [`crate::exec::run_node`]); ops without one refuse the dtype as before.
//!
//! Rotary embeddings written with complex numbers (Llama 4: `view_as_complex` of the query,
//! `polar(ones, freqs)`, a slice and `unsqueeze` of it, a complex `mul`, `view_as_real`) move
//! and multiply complex tensors between the ops that make and unmake them; these are the ops here.

use super::fvec::{broadcast_all, round_to};
use super::{OpCx, OpError, OpResult};
use crate::exec::complex::ComplexTensor;
use crate::exec::tensor::Tensor;
use crate::exec::value::{RtValue, Values};
use crate::ir::{Arg, DType};

/// A complex tensor's real and imaginary parts as tensors of its part dtype (`float32` for
/// `complex64`). The stored parts are already rounded to it, so the cast is exact.
fn parts(c: &ComplexTensor) -> OpResult<(Tensor, Tensor)> {
    let part = c.part_dtype();
    let make = |v: &[f64]| -> OpResult<Tensor> {
        let t = Tensor::from_vec(&c.shape, v.to_vec())
            .ok_or_else(|| OpError::Shape(format!("complex value: {} parts for shape {:?}", v.len(), c.shape)))?;
        t.cast(part).map_err(OpError::DType)
    };
    Ok((make(&c.re)?, make(&c.im)?))
}

/// Zeros of `t`'s shape and dtype: the imaginary part of a real operand.
fn zeros_like(t: &Tensor) -> OpResult<Tensor> {
    let z = Tensor::from_vec(t.shape(), vec![0.0f64; t.numel()])
        .ok_or_else(|| OpError::Shape(format!("no zeros for shape {:?}", t.shape())))?;
    z.cast(t.dtype()).map_err(OpError::DType)
}

/// The complex dtype of result `i`: the graph's metadata when it records a complex one, else the
/// widest complex operand's (an op run on its own, without a graph).
fn result_dtype(cx: &OpCx, i: usize, operands: DType) -> DType {
    cx.out_dtype(i).filter(|d| d.is_complex()).unwrap_or(operands)
}

/// The wider of two complex dtypes (`complex64` and `complex128` give `complex128`).
fn wider(a: Option<DType>, b: DType) -> DType {
    let rank = |d: DType| match d {
        DType::Complex32 => 0,
        DType::Complex64 => 1,
        _ => 2,
    };
    match a {
        Some(a) if rank(a) >= rank(b) => a,
        _ => b,
    }
}

/// Ops that only move, copy or negate values (views, slices, `unsqueeze`, `expand`, `clone`,
/// `cat`): they act on the real and imaginary parts independently, so the op's real
/// implementation, run once with every complex operand replaced by its real parts and once by its
/// imaginary parts, gives the complex result. A real floating tensor beside a complex one (a `cat`
/// of both) contributes zero imaginary parts; integer and bool tensors (indices, masks) and
/// scalars go to both runs unchanged.
pub fn partwise(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let target = &cx.node.target;
    let run = crate::ops::run_fn(target)
        .ok_or_else(|| OpError::Unsupported(format!("`{target}` has no real implementation to run on complex parts")))?;
    let len = cx.node.inputs().map(|v| v.index() + 1).max().unwrap_or(0);
    let (mut re, mut im) = (Values::with_len(len), Values::with_len(len));
    let mut dtype = None;
    for v in cx.node.inputs() {
        match cx.values.get(v) {
            Some(RtValue::Complex(c)) => {
                dtype = Some(wider(dtype, c.dtype));
                let (r, i) = parts(c)?;
                re.set(v, RtValue::Tensor(r));
                im.set(v, RtValue::Tensor(i));
            }
            Some(RtValue::Tensor(t)) if t.dtype().is_floating() => {
                re.set(v, RtValue::Tensor(t.clone()));
                im.set(v, RtValue::Tensor(zeros_like(t)?));
            }
            Some(other) => {
                re.set(v, other.clone());
                im.set(v, other.clone());
            }
            // Left unset: the op's own argument access names the missing value.
            None => {}
        }
    }
    // Called only for nodes that read a complex value; guard anyway so a direct call on real
    // operands computes the real op rather than inventing a complex result.
    let Some(dtype) = dtype else { return run(cx) };
    let with = |values: &Values| run(&OpCx { node: cx.node, values, bindings: cx.bindings, rng: cx.rng, graph: cx.graph });
    let (re_out, im_out) = (with(&re)?, with(&im)?);
    if re_out.len() != im_out.len() {
        return Err(OpError::Unsupported(format!("`{target}` gave {} real and {} imaginary results", re_out.len(), im_out.len())));
    }
    re_out
        .into_iter()
        .zip(im_out)
        .enumerate()
        .map(|(i, pair)| match pair {
            (RtValue::Tensor(r), RtValue::Tensor(m)) if r.shape() == m.shape() => Ok(RtValue::Complex(ComplexTensor {
                dtype: result_dtype(cx, i, dtype),
                shape: r.shape().to_vec(),
                re: r.to_f64_vec(),
                im: m.to_f64_vec(),
            })),
            (RtValue::Tensor(r), RtValue::Tensor(m)) => Err(OpError::Shape(format!(
                "result {i}: real parts {:?} and imaginary parts {:?} differ in shape",
                r.shape(),
                m.shape()
            ))),
            // A size or other non-tensor result does not depend on the values.
            (other, _) => Ok(other),
        })
        .collect()
}

/// One operand of a complex arithmetic op as `f64` real and imaginary parts (real tensors and
/// scalars have zero imaginary parts), with its complex dtype if it is complex.
fn operand(cx: &OpCx, name: &str) -> OpResult<(Tensor, Tensor, Option<DType>)> {
    let f64s = |t: &Tensor| t.cast(DType::F64).map_err(OpError::DType);
    match cx.arg(name) {
        Some(Arg::Tensor(_)) => match cx.complex_or_real(name)? {
            Ok(c) => {
                let (r, i) = parts(c)?;
                Ok((f64s(&r)?, f64s(&i)?, Some(c.dtype)))
            }
            Err(t) => Ok((f64s(t)?, f64s(&zeros_like(t)?)?, None)),
        },
        _ => {
            let s = cx.opt_scalar(name)?.ok_or_else(|| OpError::Arg { arg: name.into(), message: "missing".into() })?;
            Ok((Tensor::scalar(s.to_f64()), Tensor::scalar(0.0f64), None))
        }
    }
}

#[derive(Clone, Copy)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

/// `self (op) alpha * other` on complex (or complex and real) operands, broadcast, computed in
/// `f64` and rounded once to the result's part dtype.
fn arith(cx: &OpCx, op: Arith) -> OpResult<Vec<RtValue>> {
    let (ar, ai, ad) = operand(cx, "self")?;
    let (br, bi, bd) = operand(cx, "other")?;
    let operands = match (ad, bd) {
        (Some(a), b) => wider(b, a),
        (None, Some(b)) => b,
        (None, None) => return Err(OpError::Unsupported("complex arithmetic without a complex operand".into())),
    };
    let alpha = match op {
        Arith::Add | Arith::Sub => cx.float_or("alpha", 1.0)?,
        Arith::Mul | Arith::Div => 1.0,
    };
    let fs = broadcast_all(&[&ar, &ai, &br, &bi])?;
    let [ar, ai, br, bi] = [&fs[0].v, &fs[1].v, &fs[2].v, &fs[3].v];
    let dtype = result_dtype(cx, 0, operands);
    let probe = ComplexTensor { dtype, shape: Vec::new(), re: Vec::new(), im: Vec::new() };
    let round = round_to(probe.part_dtype());
    let n = fs[0].v.len();
    let (mut re, mut im) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for k in 0..n {
        let (a, b, c, d) = (ar[k], ai[k], br[k] * alpha, bi[k] * alpha);
        let (x, y) = match op {
            Arith::Add => (a + c, b + d),
            Arith::Sub => (a - c, b - d),
            Arith::Mul => (a * c - b * d, a * d + b * c),
            Arith::Div => {
                let den = c * c + d * d;
                ((a * c + b * d) / den, (b * c - a * d) / den)
            }
        };
        re.push(round(x));
        im.push(round(y));
    }
    Ok(vec![RtValue::Complex(ComplexTensor { dtype, shape: fs[0].shape.clone(), re, im })])
}

pub fn add(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    arith(cx, Arith::Add)
}

pub fn sub(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    arith(cx, Arith::Sub)
}

pub fn mul(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    arith(cx, Arith::Mul)
}

pub fn div(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    arith(cx, Arith::Div)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Graph, InputKind, NamedArg, Node, NodeMeta, ValueKind};
    use crate::sym::Bindings;

    /// Runs `f` as node `target` on `args` (values fed as graph inputs, or literal arguments).
    fn call(f: fn(&OpCx) -> OpResult<Vec<RtValue>>, target: &str, args: Vec<(&str, Result<RtValue, Arg>)>) -> OpResult<Vec<RtValue>> {
        let mut g = Graph::new("test");
        let mut feed = Vec::new();
        let mut named = Vec::new();
        for (i, (name, a)) in args.into_iter().enumerate() {
            let arg = match a {
                Ok(v) => {
                    let id = g.add_input(&format!("in{i}"), ValueKind::Other("test".into()), InputKind::UserInput).unwrap();
                    feed.push((id, v));
                    Arg::Tensor(id)
                }
                Err(l) => l,
            };
            named.push(NamedArg { name: name.to_string(), arg, kwarg: false });
        }
        let mut values = Values::new(&g);
        for (id, v) in feed {
            values.set(id, v);
        }
        let node = Node { name: "n".into(), target: target.into(), args: named, outputs: vec![], meta: NodeMeta::default() };
        f(&OpCx { node: &node, values: &values, bindings: &Bindings::new(), rng: Default::default(), graph: None })
    }

    fn c64(shape: &[usize], re: &[f64], im: &[f64]) -> RtValue {
        RtValue::Complex(ComplexTensor { dtype: DType::Complex64, shape: shape.to_vec(), re: re.to_vec(), im: im.to_vec() })
    }

    fn complex(out: &[RtValue]) -> &ComplexTensor {
        match &out[0] {
            RtValue::Complex(c) => c,
            other => panic!("expected a complex result, got {other:?}"),
        }
    }

    #[test]
    fn multiplies_complex_by_complex_broadcast_and_by_a_real_scalar() {
        // (1+2i)(3+4i) = -5+10i; (1+2i)·i = -2+i, broadcast over a [2,1] × [2] product.
        let a = c64(&[2, 1], &[1.0, 0.5], &[2.0, 0.0]);
        let b = c64(&[2], &[3.0, 0.0], &[4.0, 1.0]);
        let out = call(mul, "aten.mul.Tensor", vec![("self", Ok(a.clone())), ("other", Ok(b))]).unwrap();
        let c = complex(&out);
        assert_eq!((c.dtype, c.shape.clone()), (DType::Complex64, vec![2, 2]));
        assert_eq!(c.re, vec![-5.0, -2.0, 1.5, 0.0]);
        assert_eq!(c.im, vec![10.0, 1.0, 2.0, 0.5]);
        let out = call(mul, "aten.mul.Tensor", vec![("self", Ok(a)), ("other", Err(Arg::Float(0.5)))]).unwrap();
        assert_eq!((complex(&out).re.clone(), complex(&out).im.clone()), (vec![0.5, 0.25], vec![1.0, 0.0]));
    }

    #[test]
    fn adds_subtracts_and_divides_with_real_operands_as_zero_imaginary_parts() {
        let a = c64(&[1], &[1.0], &[2.0]);
        let r = RtValue::Tensor(Tensor::from_vec(&[1], vec![2.0f32]).unwrap());
        let out = call(sub, "aten.sub.Tensor", vec![("self", Ok(a.clone())), ("other", Ok(r.clone())), ("alpha", Err(Arg::Int(2)))]).unwrap();
        assert_eq!((complex(&out).re.clone(), complex(&out).im.clone()), (vec![-3.0], vec![2.0]));
        let out = call(add, "aten.add.Tensor", vec![("self", Ok(r)), ("other", Ok(a.clone()))]).unwrap();
        assert_eq!((complex(&out).re.clone(), complex(&out).im.clone()), (vec![3.0], vec![2.0]));
        // (1+2i)/(1+1i) = 1.5+0.5i.
        let out = call(div, "aten.div.Tensor", vec![("self", Ok(a)), ("other", Ok(c64(&[1], &[1.0], &[1.0])))]).unwrap();
        assert_eq!((complex(&out).re.clone(), complex(&out).im.clone()), (vec![1.5], vec![0.5]));
    }

    #[test]
    fn moves_real_and_imaginary_parts_together() {
        // unsqueeze then slice of a complex [3]: the parts follow the same indices.
        let a = c64(&[3], &[1.0, 2.0, 3.0], &[-1.0, -2.0, -3.0]);
        let out = call(partwise, "aten.unsqueeze.default", vec![("self", Ok(a)), ("dim", Err(Arg::Int(0)))]).unwrap();
        let c = complex(&out);
        assert_eq!((c.shape.clone(), c.re.clone(), c.im.clone()), (vec![1, 3], vec![1.0, 2.0, 3.0], vec![-1.0, -2.0, -3.0]));
        let args = vec![("self", Ok(out[0].clone())), ("dim", Err(Arg::Int(1))), ("start", Err(Arg::Int(1))), ("end", Err(Arg::Int(3)))];
        let out = call(partwise, "aten.slice.Tensor", args).unwrap();
        let c = complex(&out);
        assert_eq!((c.dtype, c.shape.clone(), c.re.clone(), c.im.clone()), (DType::Complex64, vec![1, 2], vec![2.0, 3.0], vec![-2.0, -3.0]));
    }
}
