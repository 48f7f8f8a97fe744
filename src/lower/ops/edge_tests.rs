//! Lowering one-op graphs whose inputs are at PyTorch's edges (0-d tensors, legacy empty
//! inputs): each lowers to kernels, or fails with a typed error, never a panic.

use crate::decomp::{Marks, Mode};
use crate::ir::{Arg, DType, Format, Graph, InputKind, Model, NamedArg, NodeMeta, TensorMeta, ValueKind};
use crate::sym::Expr;

fn meta(sizes: &[i64]) -> ValueKind {
    let mut strides = vec![1i64; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * sizes[d + 1].max(1);
    }
    ValueKind::Tensor(TensorMeta {
        dtype: DType::F32,
        sizes: sizes.iter().map(|&s| Expr::int(s)).collect(),
        strides: strides.into_iter().map(Expr::int).collect(),
        storage_offset: Expr::int(0),
        device: "cpu".into(),
        requires_grad: false,
    })
}

/// Lowers (mode `none`) a graph of one `target` node over inputs of `inputs` sizes; `args`
/// builds the node's arguments from the input values.
fn lower_one(target: &str, inputs: &[&[i64]], out: &[i64], args: impl Fn(&[crate::ir::ValueId]) -> Vec<(&'static str, Arg)>) -> Result<(), String> {
    plan_one(target, inputs, out, args).map(|_| ())
}

/// The plan (mode `none`) of a graph of one `target` node, as [`lower_one`] builds it; other
/// lowering tests look at its kernels.
pub(super) fn plan_one(target: &str, inputs: &[&[i64]], out: &[i64], args: impl Fn(&[crate::ir::ValueId]) -> Vec<(&'static str, Arg)>) -> Result<crate::lower::Plan, String> {
    let mut g = Graph::new("g");
    let vs: Vec<_> = inputs.iter().enumerate().map(|(i, s)| g.add_input(&format!("x{i}"), meta(s), InputKind::UserInput).unwrap()).collect();
    let named = args(&vs).into_iter().map(|(name, arg)| NamedArg { name: name.into(), arg, kwarg: false }).collect();
    let n = g.add_node("op", target, named, vec![("op".into(), meta(out))], NodeMeta::default()).unwrap();
    g.outputs = vec![Arg::Tensor(g.node(n).outputs[0])];
    let mut m = Model::new(Format::Pt2, "test");
    m.graphs.push(g.clone());
    crate::lower::lower(&m, &g, Mode::None, &Marks::default()).map_err(|e| e.to_string())
}

#[test]
fn cat_skips_a_legacy_empty_input_beside_higher_rank_ones() {
    // torch.cat([empty(0), x(5, 5)], dim=1) is x: the 1-D empty input has no dim 1.
    let r = lower_one("aten.cat.default", &[&[0], &[5, 5]], &[5, 5], |v| vec![("tensors", Arg::Tensors(v.to_vec())), ("dim", Arg::Int(1))]);
    assert_eq!(r, Ok(()));
    let r = lower_one("aten.cat.default", &[&[5, 5], &[0], &[5, 2]], &[5, 7], |v| vec![("tensors", Arg::Tensors(v.to_vec())), ("dim", Arg::Int(-1))]);
    assert_eq!(r, Ok(()));
    // A non-empty input of another rank is an error naming the node and the field.
    let e = lower_one("aten.cat.default", &[&[3], &[5, 5]], &[5, 5], |v| vec![("tensors", Arg::Tensors(v.to_vec())), ("dim", Arg::Int(1))]).unwrap_err();
    assert!(e.contains("`op`") && e.contains("aten.cat.default") && e.contains("tensors"), "{e}");
}

#[test]
fn softmaxes_of_a_0d_tensor_reduce_over_its_one_element() {
    for target in ["aten.log_softmax.int", "aten._log_softmax.default", "aten._softmax.default"] {
        for dim in [0, -1] {
            let r = lower_one(target, &[&[]], &[], |v| vec![("self", Arg::Tensor(v[0])), ("dim", Arg::Int(dim)), ("half_to_float", Arg::Bool(false))]);
            assert_eq!(r, Ok(()), "{target} dim {dim}");
        }
    }
}
